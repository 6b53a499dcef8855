export interface User {
  name: string;
  age: number;
}

export function greet(user: User): string {
  return `hello ${user.name}`;
}
