// v8.serialize/deserialize in V8's wire format: jest keeps its haste map
// and caches in it, and processes exchange it. Bytes must equal V8's.
const v8 = require('v8');
const { inspect } = require('util');
const hex = (v) => v8.serialize(v).toString('hex');
const shared = { s: 1 };
const values = {
  int: 1, neg: -1, big31: 2 ** 31, smiEdge: 2 ** 30, float: 1.5, negZero: -0, nan: NaN, inf: -Infinity,
  t: true, f: false, nul: null, undef: undefined,
  latin1: 'aé', twoByte: '日本', astral: '😀', empty: '', longStr: 'x'.repeat(300),
  bigint: 10n, negBig: -(2n ** 70n), zeroBig: 0n,
  obj: { a: 1, b: 'two', 3: 'three', nested: { deep: [1, { x: null }] } }, twoByteKey: { '日': 1 },
  dense: [1, 'a', [], {}], holey: [1, , 3], withProps: Object.assign([1, 2], { extra: true }),
  date: new Date(86400000), regexp: /a[b]c/gimsuy, map: new Map([['k', { v: 1 }], [1, 2]]), set: new Set([1, 'x', null]),
  buffer: Buffer.from('hello'), subBuffer: Buffer.from('abcdef').subarray(2, 4), u8: new Uint8Array([1, 2, 3]),
  i16: new Int16Array([-1, 2]), f64: new Float64Array([0.5]), big64: new BigInt64Array([-1n]), dv: new DataView(new ArrayBuffer(3)),
  ab: new ArrayBuffer(4), refs: [shared, shared, { shared }], boxed: [Object(1), Object('s'), Object(true), Object(false), Object(5n)],
  errors: [new TypeError('bad'), new RangeError('range'), new Error('plain')],
};
for (const [k, v] of Object.entries(values)) {
  let h = hex(v);
  if (k === 'errors') h = h.length; // stacks differ between runtimes
  const back = v8.deserialize(v8.serialize(v));
  let shown = inspect(back, { depth: 5 });
  if (back instanceof DataView || back instanceof ArrayBuffer) shown = `${back.constructor.name} ${back.byteLength} ${back.byteOffset}`;
  if (k === 'errors') shown = back.map((e) => `${e.constructor.name}: ${e.message} ${typeof e.stack}`).join(', ');
  console.log(k, k === 'errors' ? '' : h, shown);
}
const r = v8.deserialize(v8.serialize(values.refs));
console.log('refs kept', r[0] === r[1], r[2].shared === r[0]);
const cyc = { name: 'cycle' };
cyc.self = cyc;
const c = v8.deserialize(v8.serialize(cyc));
console.log('cycle', c.self === c, hex(cyc));
const m = v8.deserialize(v8.serialize({ files: new Map([['a.js', ['id', 1, 0, 2]]]) }));
console.log('jest-like', m.files instanceof Map, [...new Map(m.files)]);

// Bytes made by V8 itself decode here.
for (const h of ['ff0f6f2201614902220162220374776f7b02', 'ff0f3b2201614904490249043a04', 'ff0f6304e5652c67',
  'ff0f5a110a00000000000000', 'ff0f5c0a026869', 'ff0f4204010002005657020200', 'ff0d6f22016149027b01']) {
  console.log('decode', h, inspect(v8.deserialize(Buffer.from(h, 'hex'))));
}
for (const h of ['ff0f99', 'ff0f22', '00', 'ff0f6f', 'ff0f41ffffffff0f', '']) {
  try { v8.deserialize(Buffer.from(h, 'hex')); console.log('accepted', h); } catch (e) { console.log('reject', h, e.message); }
}
for (const v of [() => 1, Symbol('s'), new WeakMap(), Promise.resolve(), { f() {} }]) {
  try { v8.serialize(v); console.log('serialized?'); } catch (e) { console.log('clone error', e.name, e.message); }
}

// The Serializer API, as jest-worker and others use it.
const s = new v8.Serializer();
s.writeHeader();
s.writeUint32(300);
s.writeUint64(1, 2);
s.writeDouble(2.5);
s.writeRawBytes(Buffer.from([9, 8]));
s.writeValue({ after: 'raw' });
const out = s.releaseBuffer();
console.log('serializer', out.toString('hex'));
const d = new v8.Deserializer(out);
d.readHeader();
console.log('deserializer', d.getWireFormatVersion(), d.readUint32(), d.readUint64(), d.readDouble(), [...d.readRawBytes(2)], d.readValue());
const plain = new v8.Serializer();
plain.writeHeader();
plain.writeValue(new Uint16Array([1, 2, 3]).subarray(1));
const pb = plain.releaseBuffer();
const pd = new v8.Deserializer(pb);
pd.readHeader();
console.log('plain view', pb.toString('hex'), inspect(pd.readValue()));
class Custom extends v8.DefaultSerializer {}
const cs = new Custom();
cs.writeHeader();
cs.writeValue([Buffer.from('z')]);
console.log('subclass', cs.releaseBuffer().toString('hex'));
