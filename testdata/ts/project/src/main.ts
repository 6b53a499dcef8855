import { greet, type User } from "./util.js";

const alice: User = { name: "alice", age: "thirty" };
const n: number = greet(alice);
console.log(n.toFixed(2), alice.email);
