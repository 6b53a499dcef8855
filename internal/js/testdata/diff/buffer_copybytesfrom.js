'use strict';
// Buffer.copyBytesFrom: a copy of a TypedArray's elements, its offset and
// length checked as Node does.
const show = (f) => {
  try { const b = f(); return `${b.constructor.name} ${b.toString('hex')}`; } catch (e) { return `${e.name} ${e.code} ${e.message}`; }
};
const u16 = new Uint16Array([0xffff, 0x0102, 0x0304, 0x0506]);
const cases = [
  () => Buffer.copyBytesFrom(u16), () => Buffer.copyBytesFrom(u16, 1), () => Buffer.copyBytesFrom(u16, 1, 2),
  () => Buffer.copyBytesFrom(u16, 10), () => Buffer.copyBytesFrom(u16, 0, 0), () => Buffer.copyBytesFrom(u16, 3, 9),
  () => Buffer.copyBytesFrom(new Float64Array([1.5])), () => Buffer.copyBytesFrom(new Uint8Array(0), 1),
  () => Buffer.copyBytesFrom(), () => Buffer.copyBytesFrom('nope'), () => Buffer.copyBytesFrom(Buffer.from('ab').buffer),
  () => Buffer.copyBytesFrom(u16, '1'), () => Buffer.copyBytesFrom(u16, -1), () => Buffer.copyBytesFrom(u16, 1.5),
  () => Buffer.copyBytesFrom(u16, 0, {}), () => Buffer.copyBytesFrom(u16, 0, -1), () => Buffer.copyBytesFrom(u16, 0, 2 ** 53),
];
for (const c of cases) console.log(show(c));
const copy = Buffer.copyBytesFrom(u16);
u16[0] = 0;
console.log(copy[0], copy.length);
