'use strict';
// Bootstrap of secexec's node runtime.
//
// Protocol with Go (internal/js/runtime.go): Go defines the bridge object
// globalThis.__secexec_bridge, evaluates this script, then takes
// globalThis.__secexec_start and globalThis.__secexec_dispatch and deletes
// them. Nothing here depends on the process: a warm isolate evaluates
// this script before it knows which process it will serve, and start()
// receives the process's facts (argv, env, cwd, pid, what to run).
const P = require('./internal/primordials.js');
const bridge = require('./internal/bridge.js');
const { B } = bridge;
const loop = require('./internal/loop.js');
const AC = require('./internal/async_context.js');
const { process, configure, fatal, naturalExit } = require('./process.js');
const { codedError } = require('./internal/errors.js');
const builtins = require('./internal/builtins.js');

const g = globalThis;

function defineValue(name, value) {
  P.ObjectDefineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
}

// lazyGlobal defines a global computed on first use (Buffer, URL, ...),
// so that scripts that never touch it do not pay for loading it.
function lazyGlobal(name, get) {
  P.ObjectDefineProperty(g, name, {
    configurable: true,
    enumerable: false,
    get() {
      const v = get();
      // A module still loading (a circular require) yields undefined:
      // keep the getter so a later use finds the finished module.
      if (v !== undefined) defineValue(name, v);
      return v;
    },
    set(v) { defineValue(name, v); },
  });
}

// No SharedArrayBuffer for guests (the runtime keeps its own reference),
// and no shared WebAssembly memories, which would hand one out.
delete g.SharedArrayBuffer;
if (typeof WebAssembly === 'object') {
  const RealMemory = WebAssembly.Memory;
  const Memory = function Memory(desc) {
    if (!new.target) throw new TypeError("Constructor WebAssembly.Memory requires 'new'");
    if (desc && desc.shared) throw new TypeError('WebAssembly.Memory(): shared memories are not available');
    return Reflect.construct(RealMemory, [desc], new.target);
  };
  Memory.prototype = RealMemory.prototype;
  P.ObjectDefineProperty(RealMemory.prototype, 'constructor', { value: Memory, writable: true, configurable: true });
  WebAssembly.Memory = Memory;

  // Asynchronous WebAssembly compilation posts its result to V8's
  // foreground task queue, which v8go never pumps: WebAssembly.compile
  // and instantiate would never settle. They compile synchronously (as
  // new WebAssembly.Module does, under the same limits) and settle their
  // promise as the real ones do.
  const RealModule = WebAssembly.Module;
  const RealInstance = WebAssembly.Instance;
  const RealPromise = Promise;
  const settle = (fn) => new RealPromise((resolve, reject) => {
    try { resolve(fn()); } catch (e) { reject(e); }
  });
  const wasmAsync = {
    compile(bytes) { return settle(() => new RealModule(bytes)); },
    instantiate(source, imports) {
      return settle(() => {
        if (source instanceof RealModule) return new RealInstance(source, imports);
        const module = new RealModule(source);
        return { module, instance: new RealInstance(module, imports) };
      });
    },
  };
  for (const k of ['compile', 'instantiate']) {
    P.ObjectDefineProperty(WebAssembly, k, { value: wasmAsync[k], writable: true, configurable: true });
  }
}

require('./internal/extmem.js').install();

defineValue('global', g);
defineValue('process', process);
lazyGlobal('console', () => require('./console.js'));
const timers = require('./timers.js');
for (const k of ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate']) defineValue(k, timers[k]);
defineValue('queueMicrotask', function queueMicrotask(cb) {
  if (typeof cb !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', cb);
  AC.microtask(cb, fatal);
});
lazyGlobal('Buffer', () => require('./buffer.js').Buffer);
lazyGlobal('TextEncoder', () => require('./internal/encoding.js').TextEncoder);
lazyGlobal('TextDecoder', () => require('./internal/encoding.js').TextDecoder);
lazyGlobal('URL', () => require('./url.js').URL);
lazyGlobal('URLSearchParams', () => require('./url.js').URLSearchParams);
lazyGlobal('AbortController', () => require('./internal/web.js').AbortController);
lazyGlobal('AbortSignal', () => require('./internal/web.js').AbortSignal);
lazyGlobal('EventTarget', () => require('./internal/web.js').EventTarget);
lazyGlobal('Event', () => require('./internal/web.js').Event);
lazyGlobal('CustomEvent', () => require('./internal/web.js').CustomEvent);
lazyGlobal('DOMException', () => require('./internal/web.js').DOMException);
for (const name of ['MessageChannel', 'MessagePort', 'BroadcastChannel']) {
  lazyGlobal(name, () => require('./worker_threads.js')[name]);
}
lazyGlobal('structuredClone', () => require('./internal/web.js').structuredClone);
lazyGlobal('performance', () => require('./perf_hooks.js').performance);
lazyGlobal('crypto', () => require('./crypto.js').webcrypto);
lazyGlobal('Crypto', () => require('./internal/webcrypto_api.js').Crypto);
lazyGlobal('SubtleCrypto', () => require('./internal/webcrypto_api.js').SubtleCrypto);
lazyGlobal('CryptoKey', () => require('./internal/webcrypto_api.js').CryptoKey());
lazyGlobal('Blob', () => require('./internal/web.js').Blob);
defineValue('atob', function atob(s) { return require('./internal/web.js').atob(s); });
defineValue('btoa', function btoa(s) { return require('./internal/web.js').btoa(s); });
// WHATWG streams: the web-streams-polyfill package, loaded on first use.
for (const name of ['ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest',
  'ReadableByteStreamController', 'ReadableStreamDefaultController', 'WritableStream', 'WritableStreamDefaultWriter',
  'WritableStreamDefaultController', 'TransformStream', 'TransformStreamDefaultController', 'ByteLengthQueuingStrategy',
  'CountQueuingStrategy']) {
  lazyGlobal(name, () => require('./internal/lazy.js').lazy('web-streams-polyfill')[name]);
}

// fetch and its classes are undici's (Node's own implementation), loaded
// on first use over the runtime's net and tls.
// fetch itself is a plain function, as Node's: reading the global (as
// Node's test harness does) loads nothing, and zlib, which undici
// requires, is not loaded early. EventSource is not a global in Node 22
// (it needs --experimental-eventsource).
for (const name of ['Request', 'Response', 'Headers', 'FormData', 'WebSocket', 'MessageEvent', 'CloseEvent']) {
  lazyGlobal(name, () => require('./internal/lazy.js').lazy('undici')[name]);
}
defineValue('fetch', function fetch(input, init = undefined) {
  return require('./internal/lazy.js').lazy('undici').fetch(input, init);
});

// The clock: unless the VM's policy is "real", Date reads the kernel's
// clock (kernel/clock), the one every guest of the VM reads: its wall
// time is a fixed offset plus the monotonic clock that process.hrtime
// reads, so Date, performance and hrtime move together, in the same
// coarse steps (or not at all when frozen). Intl's formatters default to
// the same clock instead of V8's own.
const RealDate = Date;
const ReflectConstruct = Reflect.construct;
function installClockDate(offsetMs) {
  const now = () => offsetMs + B.hrtime() / 1e6;
  function Date(...args) {
    if (!new.target) return new RealDate(now()).toString();
    if (args.length === 0) return ReflectConstruct(RealDate, [now()], new.target);
    return ReflectConstruct(RealDate, args, new.target);
  }
  Object.defineProperties(Date, {
    now: { value: function now_() { return now(); }, writable: true, configurable: true },
    parse: { value: RealDate.parse, writable: true, configurable: true },
    UTC: { value: RealDate.UTC, writable: true, configurable: true },
    prototype: { value: RealDate.prototype },
  });
  P.ObjectDefineProperty(Date.now, 'name', { value: 'now' });
  P.ObjectDefineProperty(RealDate.prototype, 'constructor', { value: Date, writable: true, configurable: true });
  defineValue('Date', Date);
  if (typeof Intl === 'object' && Intl.DateTimeFormat) {
    const DTF = Intl.DateTimeFormat.prototype;
    const formatGet = Object.getOwnPropertyDescriptor(DTF, 'format').get;
    const formatToParts = DTF.formatToParts;
    const formatCall = P.uncurry(formatToParts);
    P.ObjectDefineProperty(DTF, 'format', {
      get() {
        const f = P.FunctionPrototypeCall(formatGet, this);
        return (d) => f(d === undefined ? now() : d);
      },
      configurable: true,
    });
    P.ObjectDefineProperty(DTF, 'formatToParts', {
      value: function formatToParts(d) { return formatCall(this, d === undefined ? now() : d); },
      writable: true, configurable: true,
    });
  }
}

// Warm-up: load and exercise what every process start needs, while the
// isolate is still parked in the warm pool (nothing here depends on the
// process). This moves first-call compilation off the exec path.
const runMainModule = require('./internal/run_main.js');
{
  const Module = require('./module.js');
  const m = new Module('/warmup', null);
  m.paths = Module._nodeModulePaths('/warmup/x');
  Module.createRequire('/warmup/x.js');
  P.indirectEval('void 0\n//# sourceURL=[warmup]');
  require('./perf_hooks.js');
  process.emit('secexec-warmup');
}

let mainStarted = false;

// start runs the process: it is called once, with the JSON of the facts
// Go collected (see startInfo in runtime.go).
function start(json) {
  if (mainStarted) throw new Error('already started');
  mainStarted = true;
  const info = P.JSONParse(json);
  configure(info);
  if (info.clock !== 'real') installClockDate(info.wallBaseMs);
  require('./perf_hooks.js').setOrigin(info.nowMs);
  loop.macrotask(() => {
    if (info.worker) {
      // A worker_threads Worker: its thread's view, then its script.
      const init = require('./worker_threads.js')._setupWorker(info.worker);
      if (info.mode === 'eval') {
        info.mode = 'worker-eval';
        if (init.module) info.inputType = 'module';
      }
    }
    runMainModule.runMain(info);
  });
}

P.ObjectDefineProperty(g, '__secexec_start', { value: start, configurable: true });
P.ObjectDefineProperty(g, '__secexec_dispatch', { value: loop.dispatch, configurable: true });
P.ObjectDefineProperty(g, '__secexec_beforeExit', {
  value: function beforeExit() {
    loop.macrotask(() => process.emit('beforeExit', process.exitCode | 0));
  },
  configurable: true,
});
P.ObjectDefineProperty(g, '__secexec_exit', {
  value: function exit() {
    // The loop ran dry: emit 'exit' and report the code.
    loop.macrotask(naturalExit);
  },
  configurable: true,
});
// ctxSettle answers evaluation id of a persistent context (context.go)
// with the JSON of v, awaited if it is a promise, or the text of what it
// threw. Guest code runs here (then, toJSON, stack getters), under the
// evaluation's deadline.
// A value's JSON longer than maxValue code units is over the host's byte
// bound too (vmhost.MaxEvalValue): it is refused here, not copied out.
const maxValue = 4 * 1024 * 1024;
const maxStack = 64 * 1024;
function ctxSettle(id, v) {
  const fail = (e) => {
    let s;
    try { s = String((e && e.stack) || e); } catch { s = 'Error: the thrown value cannot be printed'; }
    B.ctxReply(id, 0, P.StringPrototypeSlice(s, 0, maxStack));
  };
  const done = (val) => {
    let s;
    try { s = P.JSONStringify(val); } catch (e) { fail(e); return; }
    if (s === undefined) s = 'null';
    if (s.length > maxValue) B.ctxReply(id, 2, String(s.length));
    else B.ctxReply(id, 1, s);
  };
  try {
    if (v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function') {
      P.PromiseResolve(v).then(done, fail);
    } else {
      done(v);
    }
  } catch (e) {
    fail(e);
  }
}
P.ObjectDefineProperty(g, '__secexec_ctxSettle', { value: ctxSettle, configurable: true });
const rejections = require('./internal/rejections.js');
rejections.init(process, fatal);
P.ObjectDefineProperty(g, '__secexec_rejections', { value: rejections.settle, configurable: true });
// import() in eval, new Function and vm scripts (runtime.go arms V8's
// callback with this function before any guest code runs).
P.ObjectDefineProperty(g, '__secexec_dynamicImport', {
  value: function dynamicImport(specifier, script) {
    return require('./internal/module_esm.js').importFromScript(specifier, script);
  },
  configurable: true,
});
void builtins;
