// util.types on V8's predicates, against Node's for values of every kind,
// including ones that lie through Symbol.toStringTag.
const util = require('util');
const { types } = util;
function* gen() {}
async function af() {}
const values = {
  args: (function () { return arguments; })(1), ab: new ArrayBuffer(2), af, bi64: new BigInt64Array(1), biObj: Object(1n),
  bu64: new BigUint64Array(1), dv: new DataView(new ArrayBuffer(1)), date: new Date(0), f32: new Float32Array(1),
  f64: new Float64Array(1), gen, genObj: gen(), i8: new Int8Array(1), i16: new Int16Array(1), i32: new Int32Array(1),
  map: new Map(), mapIt: new Map().keys(), err: new TypeError('x'), numObj: Object(1), promise: Promise.resolve(),
  proxy: new Proxy({}, {}), re: /a/, set: new Set(), setIt: new Set().values(), strObj: Object('s'), symObj: Object(Symbol('s')),
  u8: new Uint8Array(1), u8c: new Uint8ClampedArray(1), u16: new Uint16Array(1), u32: new Uint32Array(1),
  wm: new WeakMap(), ws: new WeakSet(), boolObj: Object(true), buf: Buffer.from('x'),
  fakeDate: { [Symbol.toStringTag]: 'Date' }, fakePromise: { then() {} }, fakeErr: Object.create(Error.prototype),
  prim: 1, str: 's', nul: null, undef: undefined, fn() {},
};
const names = Object.keys(types).filter((k) => typeof types[k] === 'function' && k !== 'isKeyObject' && k !== 'isCryptoKey' && k !== 'isExternal').sort();
for (const [k, v] of Object.entries(values)) {
  console.log(k, names.filter((n) => types[n](v)).join(','));
}
console.log(names.join(' '));
function A() {}
function B() {}
util.inherits(A, B);
console.log(A.super_ === B, new A() instanceof B);
util.callbackify(async (x) => x * 2)(21, (err, v) => console.log('callbackify', err, v));
util.callbackify(async () => { throw null; })((err) => console.log('falsy', err.code, err.reason));
