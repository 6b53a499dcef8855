'use strict';
// Every method of every built-in a guest can reach is replaced by a spy
// that records its receiver and arguments; then the runtime's modules do
// their work (files, streams, sockets, http, child processes, crypto,
// zlib, timers). A guest that can replace a built-in sees whatever the
// runtime passes through it, so none of what the spies saw may be the
// bridge or its scratch buffer: the bootstrap reaches those through the
// primordials it captured before guest code ran (internal/primordials.js).
// Prints "ok <spied methods> <calls seen>" or the offending methods.
const seen = [];
const origApply = Reflect.apply;
const origPush = Array.prototype.push;
const origToString = Object.prototype.toString;
const origIsView = ArrayBuffer.isView;
const origHas = Reflect.has;
const origGetOwn = Object.getOwnPropertyDescriptor;
const origKeys = Reflect.ownKeys;
const origDefine = Reflect.defineProperty;
const origGetProto = Reflect.getPrototypeOf;
const origConstruct = Reflect.construct;
let recording = false;

const intrinsics = [
  Object, Function, Array, String, Number, Boolean, Symbol, BigInt, Date, RegExp,
  Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError,
  Map, Set, WeakMap, WeakSet, WeakRef, FinalizationRegistry, Promise, Reflect, JSON, Math,
  ArrayBuffer, DataView, Uint8Array, Int8Array, Uint16Array, Int16Array, Uint32Array, Int32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array, Uint8ClampedArray,
  origGetProto(Uint8Array), Atomics, Intl,
  origGetProto([][Symbol.iterator]()),
  origGetProto(origGetProto([][Symbol.iterator]())),
  origGetProto(new Map()[Symbol.iterator]()),
  origGetProto(new Set()[Symbol.iterator]()),
  origGetProto(''[Symbol.iterator]()),
  origGetProto(/x/[Symbol.matchAll]('x')),
  origGetProto(function* () {}),
  origGetProto(async function* () {}),
  origGetProto(async function () {}),
  TextEncoder, TextDecoder, URL, URLSearchParams, EventTarget, Event, AbortController, AbortSignal,
  queueMicrotask, structuredClone, Buffer,
];

const spied = new Map();
function spyOn(obj, key, where) {
  const d = origGetOwn(obj, key);
  if (!d || typeof d.value !== 'function' || !d.writable || !d.configurable || key === 'constructor') return;
  const orig = d.value;
  const name = where + '.' + String(key);
  const spy = function (...args) {
    if (recording) origApply(origPush, seen, [[name, this, args]]);
    return new.target ? origConstruct(orig, args, new.target) : origApply(orig, this, args);
  };
  // The runtime may look at a method's length and name (Node's makeSafe
  // calls zero-length methods to find iterators): keep them.
  origDefine(spy, 'length', { value: orig.length, configurable: true });
  origDefine(spy, 'name', { value: orig.name, configurable: true });
  if (origDefine(obj, key, { value: spy, writable: true, enumerable: d.enumerable, configurable: true })) spied.set(name, true);
}
for (const I of intrinsics) {
  if (I === null || (typeof I !== 'object' && typeof I !== 'function')) continue;
  const where = (typeof I === 'function' && I.name) || origApply(origToString, I, []);
  for (const key of origKeys(I)) spyOn(I, key, where);
  const proto = typeof I === 'function' ? I.prototype : null;
  if (proto && (typeof proto === 'object' || typeof proto === 'function')) for (const key of origKeys(proto)) spyOn(proto, key, where + '.prototype');
}

// Species: typed arrays made from one another (subarray, slice, map,
// filter) are constructed through constructor[Symbol.species], which a
// guest can point at its own subclass to receive their arguments.
for (const C of [ArrayBuffer, Uint8Array, Int8Array, Uint16Array, Int16Array, Uint32Array, Int32Array, Float32Array,
  Float64Array, BigInt64Array, BigUint64Array, Uint8ClampedArray, Array, Promise, Map, Set, RegExp]) {
  const name = C.name + '[Symbol.species]';
  const Rec = class extends C {
    constructor(...args) {
      if (recording) origApply(origPush, seen, [[name, undefined, args]]);
      super(...args);
    }
  };
  // As the built-in getter, a subclass (Buffer) keeps its own species.
  if (origDefine(C, Symbol.species, { get() { return this === C ? Rec : this; }, configurable: true })) spied.set(name, true);
}

function isCapability(x) {
  if (x === null || (typeof x !== 'object' && typeof x !== 'function')) return false;
  try {
    const tag = origApply(origToString, x, []);
    if (tag === '[object SharedArrayBuffer]') return true;
    if (origApply(origIsView, ArrayBuffer, [x]) && origApply(origToString, x.buffer, []) === '[object SharedArrayBuffer]') return true;
    return origHas(x, 'setScratch') || origHas(x, 'blobRead') || origHas(x, 'compileModule');
  } catch {
    return false;
  }
}

async function work() {
  const fs = require('fs');
  const path = require('path');
  const big = Buffer.alloc(600 * 1024, 7); // larger than the scratch buffer: the blob path
  fs.writeFileSync('/tmp/spy-a', big);
  if (fs.readFileSync('/tmp/spy-a').length !== big.length) throw new Error('readFileSync');
  await fs.promises.writeFile('/tmp/spy-b', 'hello');
  await fs.promises.readFile('/tmp/spy-b', 'utf8');
  await new Promise((res, rej) => fs.readFile('/tmp/spy-a', (e, b) => (e ? rej(e) : res(b))));
  fs.readdirSync('/tmp', { withFileTypes: true });
  // Callback forms called without their callback: Node reports the
  // other arguments first (a dry run of the synchronous form).
  for (const f of ['stat', 'open', 'readdir', 'mkdir', 'readFile', 'writeFile', 'access', 'rm', 'chmod', 'utimes']) {
    try { fs[f]('/tmp/spy-a'); } catch {}
  }
  fs.statSync('/tmp/spy-a');
  await new Promise((res, rej) => {
    const { pipeline } = require('stream');
    pipeline(fs.createReadStream('/tmp/spy-a'), require('zlib').createGzip(), fs.createWriteStream('/tmp/spy-a.gz'), (e) => (e ? rej(e) : res()));
  });
  require('zlib').gunzipSync(fs.readFileSync('/tmp/spy-a.gz'));
  require('zlib').brotliCompressSync(big);
  const crypto = require('crypto');
  crypto.createHash('sha256').update(big).digest('hex');
  crypto.randomBytes(32);
  const key = crypto.randomBytes(32), iv = crypto.randomBytes(16);
  const c = crypto.createCipheriv('aes-256-cbc', key, iv);
  Buffer.concat([c.update(big), c.final()]);
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  crypto.verify('sha256', Buffer.from('x'), publicKey, crypto.sign('sha256', Buffer.from('x'), privateKey));
  await crypto.subtle.digest('SHA-256', new Uint8Array(8));
  // A socket pair and an http exchange on loopback.
  const net = require('net');
  await new Promise((res, rej) => {
    const srv = net.createServer((s) => s.pipe(s));
    srv.listen(0, '127.0.0.1', () => {
      const cl = net.connect(srv.address().port, '127.0.0.1', () => cl.end(big));
      let n = 0;
      cl.on('data', (d) => { n += d.length; });
      cl.on('error', rej);
      cl.on('close', () => { srv.close(); n === big.length ? res() : rej(new Error('echo ' + n)); });
    });
  });
  const http = require('http');
  await new Promise((res, rej) => {
    const srv = http.createServer((req, resp) => { req.resume(); req.on('end', () => resp.end('pong')); });
    srv.listen(0, '127.0.0.1', () => {
      const req = http.request({ port: srv.address().port, host: '127.0.0.1', method: 'POST' }, (resp) => {
        let body = '';
        resp.setEncoding('utf8');
        resp.on('data', (d) => { body += d; });
        resp.on('end', () => { srv.close(); body === 'pong' ? res() : rej(new Error(body)); });
      });
      req.on('error', rej);
      req.end('ping');
    });
  });
  // fetch (undici, loaded on first use, after the spies) against the same
  // kind of server, and a datagram round trip.
  await new Promise((res, rej) => {
    const srv = http.createServer((req, resp) => resp.end('fetched'));
    srv.listen(0, '127.0.0.1', () => {
      fetch('http://127.0.0.1:' + srv.address().port + '/').then((r) => r.text()).then((t) => {
        srv.close();
        t === 'fetched' ? res() : rej(new Error(t));
      }, rej);
    });
  });
  // HTTP/2: a server and a client in the same process.
  await new Promise((res, rej) => {
    const http2 = require('http2');
    const srv = http2.createServer();
    srv.on('stream', (stream) => { stream.respond({ ':status': 200 }); stream.end('h2'); });
    srv.listen(0, '127.0.0.1', () => {
      const client = http2.connect('http://127.0.0.1:' + srv.address().port);
      client.on('error', rej);
      const req = client.request({ ':path': '/' });
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d) => { body += d; });
      req.on('end', () => { client.close(); srv.close(); body === 'h2' ? res() : rej(new Error(body)); });
      req.end();
    });
  });
  const dgram = require('dgram');
  await new Promise((res, rej) => {
    const a = dgram.createSocket('udp4');
    a.on('message', (m) => { a.close(); m.length === 5 ? res() : rej(new Error('dgram')); });
    a.bind(0, '127.0.0.1', () => {
      const b = dgram.createSocket('udp4');
      b.send(Buffer.from('hello'), a.address().port, '127.0.0.1', () => b.close());
    });
  });
  // A worker (its own isolate, messages through Go) and a port pair.
  await new Promise((res, rej) => {
    const { Worker, MessageChannel } = require('worker_threads');
    const w = new Worker('const { parentPort } = require("worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m, [m.buf]))', { eval: true });
    const ab = new ArrayBuffer(1024);
    w.on('message', (m) => { w.terminate(); m.buf.byteLength === 1024 ? res() : rej(new Error('worker')); });
    w.on('error', rej);
    w.postMessage({ buf: ab }, [ab]);
    const { port1, port2 } = new MessageChannel();
    port2.on('message', () => port2.close());
    port1.postMessage({ x: new Uint8Array(8) });
  });
  require('vm').runInNewContext('a + 1', { a: 1 });
  require('readline').createInterface({ input: require('stream').Readable.from(['x\n']) }).close();
  const cp = require('child_process');
  cp.spawnSync(process.execPath, ['-e', 'process.stdout.write("x")']);
  await new Promise((res, rej) => cp.execFile(process.execPath, ['-e', 'console.log(1)'], (e) => (e ? rej(e) : res())));
  await new Promise((res) => setTimeout(res, 1));
  await new Promise((res) => setImmediate(res));
  await new Promise((res) => process.nextTick(res));
  new TextDecoder().decode(new TextEncoder().encode('x'.repeat(1000)));
  path.resolve('a', '..', 'b');
  require('util').inspect({ a: [1, 2, { b: new Map([[1, 2]]) }] });
  structuredClone({ a: new Uint8Array(4) });
}

recording = true;
work().then(() => {
  recording = false;
  // Plain loops only: the spies' own methods must not run here.
  let bad = '';
  for (let i = 0; i < seen.length; i++) {
    const [name, self, args] = [seen[i][0], seen[i][1], seen[i][2]];
    let hit = isCapability(self);
    for (let j = 0; !hit && j < args.length; j++) hit = isCapability(args[j]);
    if (hit && bad.indexOf(' ' + name + ' ') < 0) bad += ' ' + name + ' ';
  }
  if (bad) process.stdout.write('leaked through:' + bad + '\n');
  else process.stdout.write('ok ' + spied.size + ' ' + seen.length + '\n');
}, (e) => { recording = false; process.stdout.write('work failed: ' + (e && e.stack) + '\n'); });
