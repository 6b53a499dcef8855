'use strict';
// Accounting of memory outside the JavaScript heap. V8's heap limit does
// not count ArrayBuffer contents, so the constructors and methods that
// allocate them report their sizes here; past 1 MiB (at once or summed)
// the Go side compares the isolate's external memory with its limit and
// the allocation fails with the RangeError a failed allocation raises in
// Node. The Go side also checks at every bridge call and loop turn, and
// terminates an isolate found past the limit.
// It runs inside every typed array and ArrayBuffer construction, so it
// uses only primordials captured before guest code: a guest that replaces
// ArrayBuffer.isView or Reflect.construct must not see what the runtime
// allocates.
const { B } = require('./bridge.js');
const P = require('./primordials.js');

const THRESHOLD = 1 << 20;
let pending = 0;

function account(n) {
  if (!(n > 0)) return;
  pending += n;
  if (n < THRESHOLD && pending < THRESHOLD) return;
  pending = 0;
  try {
    B.extCheck(n >= THRESHOLD ? n : 1);
  } catch {
    throw new RangeError('Array buffer allocation failed');
  }
}

function sizeOf(arg, bpe) {
  if (typeof arg === 'number') return arg * bpe;
  if (arg !== null && typeof arg === 'object') {
    if (P.ArrayBufferIsView(arg)) {
      try { return P.TypedArrayPrototypeGetLength(arg) * bpe; } catch { return 0; } // a DataView
    }
    if (arg instanceof RealArrayBuffer) return 0;
    const len = arg.length;
    if (typeof len === 'number') return len * bpe;
  }
  return 0;
}

const RealArrayBuffer = ArrayBuffer;

function wrapCtor(name, size) {
  const Real = globalThis[name];
  if (typeof Real !== 'function') return;
  const proxy = new Proxy(Real, {
    construct(target, args, newTarget) {
      account(size(args));
      return P.ReflectConstruct(target, args, newTarget === proxy ? target : newTarget);
    },
  });
  Object.defineProperty(Real.prototype, 'constructor', { value: proxy, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(globalThis, name, { value: proxy, writable: true, configurable: true, enumerable: false });
}

function wrapMethod(proto, name, size) {
  const real = proto && proto[name];
  if (typeof real !== 'function') return;
  const wrapped = {
    [name](...args) {
      account(size(this, args));
      return P.ReflectApply(real, this, args);
    },
  }[name];
  Object.defineProperty(proto, name, { value: wrapped, writable: true, configurable: true, enumerable: false });
}

function install() {
  wrapCtor('ArrayBuffer', (a) => (typeof a[0] === 'number' ? a[0] : 0));
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
    'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
    const Real = globalThis[name];
    if (typeof Real !== 'function') continue;
    const bpe = Real.BYTES_PER_ELEMENT;
    wrapCtor(name, (a) => sizeOf(a[0], bpe));
  }
  const ABP = RealArrayBuffer.prototype;
  const byteLength = (b) => { try { return P.ArrayBufferPrototypeGetByteLength(b); } catch { return 0; } };
  wrapMethod(ABP, 'resize', (b, a) => (typeof a[0] === 'number' ? a[0] - byteLength(b) : 0));
  wrapMethod(ABP, 'transfer', (b, a) => (typeof a[0] === 'number' ? a[0] : byteLength(b)));
  wrapMethod(ABP, 'transferToFixedLength', (b, a) => (typeof a[0] === 'number' ? a[0] : byteLength(b)));
  wrapMethod(ABP, 'slice', (b) => byteLength(b));
  const TAP = Object.getPrototypeOf(Uint8Array.prototype);
  const taBytes = (t) => { try { return P.TypedArrayPrototypeGetByteLength(t); } catch { return 0; } };
  for (const m of ['slice', 'map', 'filter', 'with', 'toReversed', 'toSorted']) wrapMethod(TAP, m, (t) => taBytes(t));
  if (typeof WebAssembly === 'object' && WebAssembly.Memory) {
    wrapMethod(WebAssembly.Memory.prototype, 'grow', (m, a) => (typeof a[0] === 'number' ? a[0] * 65536 : 0));
  }
}

module.exports = { install, account };
