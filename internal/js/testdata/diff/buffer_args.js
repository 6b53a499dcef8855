// Buffer: Node's argument checks and results for the number read/write
// methods, compare, equals, concat and byteLength.
const show = (f) => {
  try { console.log('ok', f()); } catch (e) { console.log('throws', e.name, e.code, e.message); }
};
const b = Buffer.from([1, 2, 3, 4, 5, 6, 7, 0xf8, 0x80, 0xff]);
for (const m of ['readUInt8', 'readInt16LE', 'readUint16BE', 'readInt32BE', 'readUInt32LE', 'readFloatLE', 'readDoubleBE', 'readBigInt64LE', 'readBigUint64BE']) {
  for (const off of [undefined, 0, 2, 3, 9, 10, -1, 1.5, NaN, Infinity, '1', null, -4294967297]) show(() => [m, off, b[m](off)]);
}
for (const [m, n] of [['readUIntLE', 3], ['readIntBE', 6], ['readIntLE', 5], ['readUIntBE', 7], ['readUIntLE', 0], ['readIntLE', 2.5], ['readUIntBE', '2']]) {
  show(() => [m, n, b[m](1, n)]);
  show(() => [m, n, b[m](undefined, n)]);
}
const w = Buffer.alloc(10);
const writes = [
  ['writeUInt8', 255], ['writeUInt8', 256], ['writeInt8', -129], ['writeInt8', -1.5], ['writeUInt16LE', 65535], ['writeInt16BE', -32769],
  ['writeUInt32BE', 2 ** 32], ['writeInt32LE', -(2 ** 31)], ['writeFloatBE', 1.5], ['writeDoubleLE', -0.1], ['writeUInt16LE', NaN],
  ['writeBigInt64LE', 2n ** 63n], ['writeBigUInt64BE', 2n ** 64n], ['writeBigInt64BE', -1n], ['writeBigUInt64LE', 'bad'], ['writeBigInt64LE', 5],
];
for (const [m, v] of writes) {
  for (const off of [0, 2, 8, -1, 1.5, '0']) show(() => [m, v, off, w[m](v, off), w.toString('hex')]);
}
for (const [m, v, n] of [['writeUIntLE', 2 ** 40, 5], ['writeUIntBE', 2 ** 40 - 1, 5], ['writeIntLE', -(2 ** 47), 6], ['writeIntBE', 2 ** 47, 6], ['writeUIntLE', 1, 7], ['writeIntBE', -3, 3]]) {
  show(() => [m, v, n, w[m](v, 1, n), w.toString('hex')]);
}
const x = Buffer.from('abcdef');
show(() => [x.compare(Buffer.from('abd')), x.compare(new Uint8Array([97])), Buffer.compare(x, Buffer.from('abcdef'))]);
show(() => x.compare('abc'));
show(() => Buffer.compare(x, 'abc'));
show(() => Buffer.compare(1, x));
show(() => [x.compare(Buffer.from('cd'), 0, 2, 2, 4), x.compare(Buffer.from('cd'), 0, 2, 4, 4), x.compare(Buffer.from('cd'), 2, 2, 0, 1)]);
show(() => x.compare(Buffer.from('cd'), 0, -1));
show(() => x.compare(Buffer.from('cd'), 0, 3));
show(() => x.compare(Buffer.from('cd'), 0, 2, 0, 7));
show(() => x.compare(Buffer.from('cd'), '0'));
show(() => x.compare(Buffer.from('cd'), 3, 2, 7 - 2, 6));
show(() => [x.equals(new Uint8Array([97, 98, 99, 100, 101, 102])), x.equals(Buffer.from('abc'))]);
show(() => x.equals('abcdef'));
show(() => Buffer.concat([x, new Uint8Array([1, 2])]).toString('hex'));
show(() => Buffer.concat([x, new Uint8Array([1, 2])], 3).toString('hex'));
show(() => Buffer.concat([x, 'abc']));
show(() => Buffer.concat());
show(() => Buffer.concat([x], 1.5));
show(() => Buffer.concat([x], '3'));
show(() => [Buffer.byteLength('héllo'), Buffer.byteLength(x), Buffer.byteLength(new ArrayBuffer(7)), Buffer.byteLength(new DataView(new ArrayBuffer(3)))]);
show(() => Buffer.byteLength(32));
show(() => Buffer.byteLength({}));
for (const v of [{}, 5, null, undefined, Symbol('s'), () => {}, { length: '2' }, { valueOf: () => 'ab' }, new String('cd'), { [Symbol.toPrimitive]: () => 'ef' }, { type: 'Buffer', data: [7, 8] }, new Uint16Array([258, 3]), [1, 2, 300], Object.create(ArrayBuffer.prototype)]) {
  show(() => Buffer.from(v));
}
for (const name of ['alloc', 'allocUnsafe', 'allocUnsafeSlow']) {
  show(() => Buffer[name]('5'));
  show(() => Buffer[name](null));
  show(() => Buffer[name](3).length);
}
const buffer = require('buffer');
const util = require('util');
for (const v of [undefined, 'x', 5n, {}, null, new DataView(new ArrayBuffer(1))]) {
  show(() => buffer.isAscii(v));
  show(() => buffer.isUtf8(v));
}
show(() => [buffer.isAscii(new ArrayBuffer(2)), buffer.isAscii(new Uint16Array([0x80])), buffer.isUtf8(Buffer.from([0xe2, 0x82])), buffer.isUtf8(new Uint8Array([0x41]).buffer)]);
for (const v of [-1, NaN, '2', null]) show(() => { buffer.INSPECT_MAX_BYTES = v; });
const ib = Buffer.from('123456');
ib.prop = 1;
Object.defineProperty(ib, 'hidden', { value: 3, enumerable: false });
show(() => [util.inspect(ib), util.inspect(ib, { showHidden: true }), util.inspect(Buffer.alloc(60)), util.inspect({ b: Buffer.from('ab') }, { depth: -1 })]);
buffer.INSPECT_MAX_BYTES = 2;
show(() => [util.inspect(ib), util.inspect(Buffer.from('123')), util.inspect(Buffer.from('12')), util.inspect(Buffer.alloc(0)), buffer.INSPECT_MAX_BYTES]);
buffer.INSPECT_MAX_BYTES = 50;
const tb = Buffer.from('héllo wörld');
for (const [e, s, n] of [[undefined, 1, 4], ['UTF8', 0, 3], ['Hex', -5, 2.7], ['latin1', '1', '3'], ['ucs2', 0, 5], ['base64URL', 1, undefined], ['binary', 3, 1], [0, 1, 2], [null, 1, 2], ['nope', 0, 0], ['nope', 0, 2], [1, 20, 30], ['ascii', NaN, 4]]) {
  show(() => tb.toString(e, s, n));
}
show(() => tb.toString(Symbol('x'), 0, 1));
const src = Buffer.from('abcdefgh');
for (const args of [[], [2], [0, 3], [0, 3, 5], [6, 0, 8], [0, -1], [0, 9], [-1], [0, 0, -1], ['2', '1', '4.7'], [NaN, NaN, NaN], [0, 8], [20]]) {
  const dst = Buffer.alloc(7, '.');
  show(() => [src.copy(dst, ...args), dst.toString()]);
}
show(() => src.copy('x'));
show(() => src.copy(new Uint8Array(3)));
show(() => Buffer.prototype.copy.call(new Uint8Array(2), Buffer.alloc(2)));
show(() => Buffer.prototype.copy.call('ab', Buffer.alloc(2)));
