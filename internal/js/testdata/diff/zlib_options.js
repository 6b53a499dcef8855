'use strict';
// zlib's stream classes and option checks, as Node's: instanceof, calls
// without new, subclasses through .call, ranges and types of options,
// the one-shot input check, frozen constants and codes, and kMaxLength
// read when zlib loads (reading the fetch and EventSource globals, as
// Node's test harness does, must not load zlib early).
void globalThis.fetch;
void globalThis.EventSource;
console.log('EventSource' in globalThis, typeof fetch);
const buffer = require('buffer');
const saved = buffer.kMaxLength;
buffer.kMaxLength = 64;
const zlib = require('zlib');
buffer.kMaxLength = saved;
const show = (f) => {
  try { const r = f(); return r === undefined ? 'ok' : String(r); } catch (e) { return `${e.name} ${e.code} ${e.message}`; }
};
const big = zlib.gzipSync(Buffer.alloc(200));
console.log(show(() => zlib.gunzipSync(big).length));

for (const name of ['Deflate', 'Inflate', 'Gzip', 'Gunzip', 'DeflateRaw', 'InflateRaw', 'Unzip', 'BrotliCompress', 'BrotliDecompress']) {
  const C = zlib[name];
  console.log(name, C() instanceof C, new C() instanceof C, zlib[`create${name}`]() instanceof C, C.name);
}

const cases = [
  () => new zlib.Deflate({ chunkSize: 'x' }), () => new zlib.Deflate({ chunkSize: -Infinity }),
  () => new zlib.Deflate({ chunkSize: 0 }), () => new zlib.Deflate({ windowBits: 0 }),
  () => zlib.createGzip({ windowBits: 8 }), () => new zlib.Deflate({ level: -2 }),
  () => new zlib.Deflate({ level: Infinity }), () => new zlib.Deflate({ memLevel: 10 }),
  () => new zlib.Deflate({ strategy: 5 }), () => new zlib.Deflate({ dictionary: 'x' }),
  () => zlib.createGzip({ flush: 'x' }), () => zlib.createGzip({ finishFlush: 6 }),
  () => new zlib.Deflate().params('x'), () => new zlib.Deflate().params(0, -1),
  () => zlib.createGzip({ level: NaN })._level, () => zlib.createGzip({ strategy: NaN })._strategy,
  () => zlib.createInflate({ windowBits: 0 }) instanceof zlib.Inflate,
  () => zlib.createDeflateRaw({ windowBits: 8 }) instanceof zlib.DeflateRaw,
  () => zlib.createBrotliCompress({ params: { 10000: 0 } }),
  () => zlib.createBrotliCompress({ params: { 0: 0, '00': 0 } }),
  () => zlib.createBrotliCompress({ params: { 4: 42 } }),
  () => zlib.BrotliCompress({ params: { 0: 'x' } }),
  () => zlib.brotliCompressSync('', { flush: 4 }),
  () => zlib.gzipSync(Buffer.alloc(0), { windowBits: 8 }),
  () => zlib.deflateSync(undefined), () => zlib.deflateSync([1, 2]), () => zlib.deflateSync(1),
  () => zlib.inflateSync(zlib.deflateSync('dict data', { dictionary: Buffer.from('dict') }), { dictionary: Buffer.from('dict') }),
  () => zlib.deflate('x', 'not a function'),
  () => { try { zlib.constants.Z_OK = 1; } catch (e) { return e.name; } },
  () => { try { zlib.codes.Z_OK = 1; } catch (e) { return e.name; } },
  () => { try { zlib.codes = {}; } catch (e) { return e.name; } },
  () => Object.isFrozen(zlib.codes), () => zlib.codes[-3],
  () => { try { new zlib.Gunzip({ objectMode: true }).write({}); } catch (e) { return e.code; } },
];
for (const c of cases) console.log(show(c));
function Sub(o) { zlib.DeflateRaw.call(this, o); this.prop = true; }
Object.setPrototypeOf(Sub.prototype, zlib.DeflateRaw.prototype);
Object.setPrototypeOf(Sub, zlib.DeflateRaw);
const s = new Sub();
s.on('data', (d) => console.log('sub data', zlib.inflateRawSync(d).toString()));
s.end('through a subclass');
