'use strict';
// The process object. It is built at bootstrap (before the process is
// known, so a warm isolate can be parked) and filled in by start().
const EventEmitter = require('events');
const { B, scratchF64 } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const { codedError, accessDenied, fromBridge, errnoOf } = require('./internal/errors.js');
const constants = require('./internal/constants.js');

const NODE_VERSION = '22.12.0';
// process is an instance of a function named process whose prototype
// inherits EventEmitter's, as in Node.
const process = (() => {
  const Process = function process() {};
  Object.setPrototypeOf(Process.prototype, EventEmitter.prototype);
  const p = new Process();
  EventEmitter.call(p);
  return p;
})();
let exitCode;
let exiting = false;
let info = null;
let startNs = 0;
let closeChannel = null; // a forked child's IPC channel, closed at exit

Object.defineProperty(process, Symbol.toStringTag, { value: 'process', configurable: true });
process.title = 'node';
process.version = 'v' + NODE_VERSION;
process.versions = {
  node: NODE_VERSION, acorn: '8.14.0', ada: '2.9.2', ares: '1.34.3', brotli: '1.1.0', cjs_module_lexer: '1.4.1',
  icu: '76.1', llhttp: '9.2.1', modules: '127', napi: '9', nghttp2: '1.64.0', openssl: '3.0.15+quic',
  simdjson: '3.10.1', simdutf: '5.6.1', tz: '2024b', undici: '6.21.0', unicode: '16.0', uv: '1.49.1',
  uvwasi: '0.0.21', v8: '12.4.254.21-node.21', zlib: '1.3.0.1-motley-82a5fec',
};
process.arch = 'x64';
process.platform = 'linux';
process.release = { name: 'node', lts: 'Jod' };
process.execPath = '/usr/bin/node';
process.argv = ['/usr/bin/node'];
process.argv0 = 'node';
process.execArgv = [];
process.env = {};
process.pid = 0;
process.ppid = 0;
// process.config is frozen, as Node's is.
process.config = Object.freeze({ __proto__: null, target_defaults: Object.freeze({}), variables: Object.freeze({}) });
process.features = { inspector: false, debug: false, uv: true, ipv6: true, tls_alpn: false, tls_sni: false, tls_ocsp: false, tls: false, cached_builtins: true, require_module: true, typescript: 'strip' };
process.exitCode = undefined;
Object.defineProperty(process, 'exitCode', {
  get() { return exitCode; },
  set(v) {
    if (v !== undefined && v !== null) {
      const n = typeof v === 'string' && v !== '' && Number.isInteger(+v) ? +v : v;
      require('./internal/validators.js').validateInteger(n, 'code');
      v = n;
    }
    exitCode = v;
  },
  enumerable: true, configurable: false,
});

process.cwd = function cwd() { return B.cwd(); };
process.chdir = function chdir(dir) {
  if (typeof dir !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'directory', 'of type string', dir);
  try { B.chdir(dir); } catch (e) {
    const err = fromBridge(e, 'chdir', process.cwd(), dir);
    if (typeof e === 'string') err.message = `${e}: ${require('./internal/errors.js').uv[e]?.[1] || 'error'}, chdir ${process.cwd()} -> '${dir}'`;
    throw err;
  }
};
process.umask = function umask(mask) {
  if (mask === undefined) return B.umask(-1);
  mask = require('./internal/validators.js').parseFileMode(mask, 'mask');
  return B.umask(mask & 0o777);
};
process.getuid = () => info ? info.uid : 1000;
process.geteuid = () => info ? info.uid : 1000;
process.getgid = () => info ? info.gid : 1000;
process.getegid = () => info ? info.gid : 1000;
process.getgroups = () => [info ? info.gid : 1000];
Object.assign(process, require('./internal/process_credentials.js'));
// process.assert is deprecated (DEP0100); util.deprecate is made at the
// first call, as util loads after process.
let deprecatedAssert;
process.assert = function assert(x, msg) {
  deprecatedAssert ??= require('./util.js').deprecate((v, m) => {
    if (!v) throw codedError('ERR_ASSERTION', m || 'assertion error');
  }, 'process.assert() is deprecated. Please use the `assert` module instead.', 'DEP0100');
  return deprecatedAssert(x, msg);
};

// nowNs is the VM's monotonic clock (kernel/clock, under the VM's clock
// policy: coarse steps, real, or frozen).
function nowNs() {
  return B.hrtime();
}
function hrtime(prev) {
  if (prev !== undefined) {
    if (!Array.isArray(prev)) throw codedError('ERR_INVALID_ARG_TYPE', 'time', 'an instance of Array', prev);
    if (prev.length !== 2) throw codedError('ERR_OUT_OF_RANGE', 'time', 2, prev.length);
  }
  const t = nowNs();
  let sec = Math.floor(t / 1e9);
  let ns = t - sec * 1e9;
  if (prev) {
    sec -= prev[0];
    ns -= prev[1];
    if (ns < 0) { sec--; ns += 1e9; }
  }
  return [sec, ns];
}
hrtime.bigint = () => BigInt(nowNs());
process.hrtime = hrtime;
process.uptime = () => (nowNs() - startNs) / 1e9;
process.memoryUsage = function memoryUsage() {
  B.memoryUsage();
  const [rss, heapTotal, heapUsed, external] = [scratchF64[0], scratchF64[1], scratchF64[2], scratchF64[3]];
  return { rss, heapTotal, heapUsed, external, arrayBuffers: external };
};
process.memoryUsage.rss = () => process.memoryUsage().rss;
// cpuPrevValid is Node's check of a cpuUsage() baseline value.
function cpuPrevValid(v, name) {
  if (typeof v === 'number' && v <= Number.MAX_SAFE_INTEGER && v >= 0) return;
  if (typeof v !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', v);
  const err = new RangeError(codedError('ERR_INVALID_ARG_VALUE', name, v).message);
  err.code = 'ERR_INVALID_ARG_VALUE';
  throw err;
}
process.cpuUsage = function cpuUsage(prev) {
  if (prev) {
    if (typeof prev !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'prevValue', 'of type object', prev);
    cpuPrevValid(prev.user, 'prevValue.user');
    cpuPrevValid(prev.system, 'prevValue.system');
  }
  const us = Math.floor(process.uptime() * 1e6);
  const r = { user: us, system: 0 };
  if (prev) { r.user -= prev.user; r.system -= prev.system; }
  return r;
};
process.resourceUsage = () => ({ userCPUTime: process.cpuUsage().user, systemCPUTime: 0, maxRSS: Math.floor(process.memoryUsage().rss / 1024), sharedMemorySize: 0, unsharedDataSize: 0, unsharedStackSize: 0, minorPageFault: 0, majorPageFault: 0, swappedOut: 0, fsRead: 0, fsWrite: 0, ipcSent: 0, ipcReceived: 0, signalsCount: 0, voluntaryContextSwitches: 0, involuntaryContextSwitches: 0 });
process.nextTick = loop.nextTick;
// emitWarning takes Node's argument forms: (warning, type, code, ctor)
// or (warning, { type, code, detail, ctor }).
process.emitWarning = function emitWarning(warning, type, code, ctor) {
  let detail;
  if (type !== null && typeof type === 'object' && !Array.isArray(type)) {
    ctor = type.ctor;
    code = type.code;
    if (typeof type.detail === 'string') detail = type.detail;
    type = type.type || 'Warning';
  } else if (typeof type === 'function') {
    ctor = type;
    code = undefined;
    type = 'Warning';
  }
  if (type !== undefined && typeof type !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'type', 'of type string', type);
  if (typeof code === 'function') {
    ctor = code;
    code = undefined;
  } else if (code !== undefined && typeof code !== 'string') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'code', 'of type string', code);
  }
  let w = warning;
  if (typeof warning === 'string') {
    w = new Error(warning);
    w.name = String(type || 'Warning');
    if (code !== undefined) w.code = code;
    if (detail !== undefined) w.detail = detail;
    Error.captureStackTrace(w, ctor || process.emitWarning);
  } else if (!(warning instanceof Error)) {
    throw codedError('ERR_INVALID_ARG_TYPE', 'warning', ['Error', 'string'], warning);
  }
  if (w.name === 'DeprecationWarning') {
    if (process.noDeprecation) return;
    if (process.throwDeprecation) throw w;
  }
  // Node's default 'warning' handler, added at start-up, prints before
  // the program's own listeners run (through a replaced
  // process.stderr.write too).
  loop.nextTick(() => {
    if (!(info && info.noWarnings)) {
      const c = w.code !== undefined ? `[${w.code}] ` : '';
      const line = `(node:${process.pid}) ${c}${w.name}: ${w.message}${typeof w.detail === 'string' ? `\n${w.detail}` : ''}\n`;
      if (!writeWarningFile(line)) {
        const hooked = hookedStdio(2);
        if (hooked) hooked.write(line);
        else writeStderr(line);
      }
    }
    process.emit('warning', w);
  });
};
// getActiveResourcesInfo lists what keeps the loop alive that the
// runtime tracks: referenced timers and immediates.
process.getActiveResourcesInfo = function getActiveResourcesInfo() {
  return require('./timers.js')._activeInfo();
};
process.binding = function binding(name) { throw accessDenied(`process.binding('${name}')`); };
process._linkedBinding = process.binding;
// A refused native addon is often swallowed by a loader that then fails
// with an unrelated message (jest 30: "runner.js ... was not found" after
// its resolver's binding was refused), so a process that ends with a
// failure after a refusal names it on one line of stderr; a process that
// recovers (an optional native speed-up with a JavaScript fallback) stays
// quiet.
let refusedAddon = null;
process.dlopen = function dlopen(module, filename) {
  const file = typeof filename === 'string' ? filename : undefined;
  if (refusedAddon === null) refusedAddon = file === undefined ? 'a native addon' : file;
  throw codedError('ERR_DLOPEN_DISABLED', file);
};
function noteRefusedAddon(code) {
  if (code !== 0 && refusedAddon !== null && workerFatal === null) {
    writeStderr(`node: this process tried to load native addon ${refusedAddon}, which cannot run in the sandbox ` +
      '(it runs JavaScript and WebAssembly): install a WebAssembly or JavaScript build of the package\n');
    refusedAddon = null;
  }
}
process.abort = function abort() { writeStderr('Aborted\n'); B.exit(134); };
// process.kill is Node's: it signals through process._kill (which returns
// an errno, 0 for success), so a program may watch or replace it.
process.kill = function kill(pid, sig) {
  if (pid != (pid | 0)) throw codedError('ERR_INVALID_ARG_TYPE', 'pid', 'of type number', pid);
  let err;
  if (sig === (sig | 0)) {
    err = process._kill(pid, sig);
  } else {
    sig = sig || 'SIGTERM';
    if (!Object.hasOwn(constants.signals, sig)) throw codedError('ERR_UNKNOWN_SIGNAL', sig);
    err = process._kill(pid, constants.signals[sig]);
  }
  if (err) {
    const code = require('./util.js').getSystemErrorName(err);
    const e = fromBridge(code, 'kill');
    e.message = `kill ${code}`;
    throw e;
  }
  return true;
};
process._kill = function _kill(pid, sig) {
  try {
    B.kill(pid | 0, sig | 0);
    return 0;
  } catch (e) {
    return typeof e === 'string' ? errnoOf(e) : -5;
  }
};
// writeWarningFile appends a warning to the file of --redirect-warnings
// (or NODE_REDIRECT_WARNINGS), opened once, as Node's writeToFile; it
// reports false when there is no such file or it cannot be opened, and
// the warning goes to stderr.
let warningFd;
function writeWarningFile(line) {
  if (warningFd === undefined) {
    warningFd = null;
    let file = process.env.NODE_REDIRECT_WARNINGS;
    const argv = process.execArgv;
    for (let i = 0; i < argv.length; i++) {
      if (argv[i].startsWith('--redirect-warnings=')) file = argv[i].slice(20);
      else if (argv[i] === '--redirect-warnings') file = argv[++i];
    }
    const fs = require('./fs.js');
    if (file) {
      try {
        warningFd = fs.openSync(file, 'a');
      } catch {
        warningFd = null;
      }
    }
  }
  if (warningFd === null) return false;
  try {
    require('./fs.js').writeSync(warningFd, line);
  } catch {
    return false;
  }
  return true;
}
// _rawDebug writes straight to fd 2, past process.stderr.
process._rawDebug = function _rawDebug(...args) {
  writeStderr(`${require('./util.js').format(...args)}\n`);
};
function endProcess(code) {
  if (closeChannel) { const close = closeChannel; closeChannel = null; close(); }
  noteRefusedAddon(code | 0);
  B.exit(code | 0);
}
process.reallyExit = function reallyExit(code) { endProcess(code); };
process.exit = function exit(code) {
  exitWith(code, (c) => process.reallyExit(c));
};
// naturalExit ends a process whose loop ran dry: 'exit' is emitted, and
// the process ends without process.reallyExit, as Node's does.
function naturalExit() {
  exitWith(undefined, endProcess);
}
function exitWith(code, end) {
  if (code !== undefined) process.exitCode = code;
  const c = exitCode === undefined || exitCode === null ? 0 : exitCode | 0;
  if (!exiting) {
    exiting = true;
    process._exiting = true;
    try { process.emit('exit', c); } catch (e) { writeStderr(String(e && e.stack || e) + '\n'); }
  }
  // process.exit ends through process.reallyExit, looked up now: a
  // program may replace it.
  end(exitCode === undefined || exitCode === null ? c : exitCode | 0);
}
process._exiting = false;
// process.report: Node's diagnostic report, with what the sandbox can
// say. Its header is how npm and the napi-rs loaders tell glibc from musl
// (npm refused glibc-only packages with "Actual libc: null"): the runtime
// presents itself as Node's official Linux build, which names glibc; the
// version is fixed (Debian 12's), never read from the host. Native
// packages then install and their addons are refused when loaded, with
// the message of process.dlopen instead of a missing-package error.
process.report = {
  directory: '', filename: '', compact: false, excludeNetwork: false, signal: 'SIGUSR2',
  reportOnFatalError: false, reportOnSignal: false, reportOnUncaughtException: false,
  getReport(err) {
    if (err !== undefined && (err === null || typeof err !== 'object')) throw codedError('ERR_INVALID_ARG_TYPE', 'err', 'of type object', err);
    return diagnosticReport(err);
  },
  writeReport() { return ''; },
};
function diagnosticReport(err) {
  const os = require('./os.js');
  const now = Date.now();
  return {
    header: {
      reportVersion: 4, event: 'JavaScript API', trigger: 'GetReport', filename: null,
      dumpEventTime: new Date(now).toISOString().replace(/\.\d+Z$/, 'Z'), dumpEventTimeStamp: String(now),
      processId: process.pid, threadId: 0, cwd: process.cwd(), commandLine: process.argv.slice(),
      nodejsVersion: process.version, glibcVersionRuntime: '2.36', glibcVersionCompiler: '2.28', wordSize: 64,
      arch: process.arch, platform: process.platform, componentVersions: { ...process.versions },
      release: { ...process.release }, osName: 'Linux', osRelease: os.release(), osVersion: os.version(),
      osMachine: os.machine(), cpus: [], networkInterfaces: [], host: os.hostname(),
    },
    javascriptStack: { message: err ? String(err) : 'No stack.', stack: err && typeof err.stack === 'string' ? err.stack.split('\n').slice(1).map((l) => l.trim()) : ['Unavailable.'] },
    javascriptHeap: {}, nativeStack: [], resourceUsage: {}, uvthreadResourceUsage: {}, libuv: [], workers: [],
    environmentVariables: { ...process.env }, userLimits: {}, sharedObjects: [],
  };
}
process.allowedNodeEnvironmentFlags = new Set();
process.setUncaughtExceptionCaptureCallback = function setUncaughtExceptionCaptureCallback(fn) {
  if (fn === null) { captureFn = null; return; }
  if (typeof fn !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'fn', 'of type function or null', fn);
  if (captureFn !== null) throw codedError('ERR_UNCAUGHT_EXCEPTION_CAPTURE_ALREADY_SET');
  captureFn = fn;
};
process.hasUncaughtExceptionCaptureCallback = () => captureFn !== null;
// The domain module's own way to the capture slot, after it has taken
// process.setUncaughtExceptionCaptureCallback away from the guest.
const domainCapture = { set(fn) { captureFn = fn; } };
process.domain = null;
process.setSourceMapsEnabled = () => {};
process.constrainedMemory = () => 0;
process.availableMemory = () => 0;
let captureFn = null;
let abortOnUncaught = false;

function writeStderr(s) { try { B.write(2, s); } catch { /* stderr closed */ } }

// Lazily created stdio streams: most scripts never touch them, and
// building them loads the stream polyfill.
let stdout, stderr, stdin;
Object.defineProperty(process, 'stdout', { configurable: true, enumerable: true, get() { return stdout || (stdout = require('./internal/stdio.js').createWritable(1)); } });
Object.defineProperty(process, 'stderr', { configurable: true, enumerable: true, get() { return stderr || (stderr = require('./internal/stdio.js').createWritable(2)); } });
Object.defineProperty(process, 'stdin', { configurable: true, enumerable: true, get() { return stdin || (stdin = require('./internal/stdio.js').createReadable(0)); } });
// hookedStdio is process.stdout (fd 1) or process.stderr (2) when a
// program replaced its write method (test harnesses and loggers capture
// console output that way): the console then writes through it, as
// Node's global console writes to those streams. Otherwise null, and the
// console writes to the fd directly without building the stream.
// A write that is not a function (a harness that nulled it) is no hook:
// the console keeps writing to the fd rather than throwing from every
// console.log (TestJSExecuteAndEvaluate).
function hookedStdio(fd) {
  const s = fd === 1 ? stdout : stderr;
  return s && Object.prototype.hasOwnProperty.call(s, 'write') && typeof s.write === 'function' ? s : null;
}

// Signals a guest may listen for. Handlers make the Go side catch the
// signal instead of dying of it.
const signalNames = new Set(Object.keys(constants.signals));
process.on('newListener', (ev) => { if (signalNames.has(ev) && process.listenerCount(ev) === 0) B.signalWatch(constants.signals[ev], true); });
process.on('removeListener', (ev) => { if (signalNames.has(ev) && process.listenerCount(ev) === 0) B.signalWatch(constants.signals[ev], false); });
loop.onEvent('signal', (num) => {
  const name = constants.signalNames[num];
  if (name && process.listenerCount(name) > 0) process.emit(name, name, num);
});

// fatal reports an uncaught exception as Node does and exits with 1,
// unless an 'uncaughtException' listener takes it.
function fatal(err, origin = 'uncaughtException') {
  if (exiting) return;
  if (typeof process._fatalException !== 'function') {
    // Node's kInvalidFatalExceptionMonkeyPatching: a program that replaced
    // process._fatalException with what is not a function ends with 6,
    // its error printed, no handler run.
    writeStderr(formatFatal(err));
    exiting = true;
    endProcess(6);
    return;
  }
  // An error thrown by the handler itself ends the process with 7, as
  // Node's "internal exception handler run-time failure".
  let code = 1;
  if (captureFn === null && abortOnUncaught) {
    // --abort-on-uncaught-exception: no listener runs; the error and where
    // it was thrown are printed and the process dies as by abort().
    writeStderr(formatAbort(err));
    B.exit(134);
    return;
  }
  try {
    if (captureFn) { captureFn(err); return; }
    if (process.listenerCount('uncaughtException') > 0) {
      process.emit('uncaughtException', err, origin);
      return;
    }
  } catch (e) {
    err = e;
    code = 7;
    // Under --abort-on-uncaught-exception nothing catches what the
    // handler threw: V8 would abort at the throw.
    if (abortOnUncaught) {
      writeStderr(formatAbort(err));
      B.exit(134);
      return;
    }
  }
  if (workerFatal !== null) {
    // A worker's uncaught exception goes to its parent ('error' on the
    // Worker), not to stderr; it ends the worker with 1.
    workerFatal(err);
    code = 1;
  } else {
    writeStderr(formatFatal(err));
  }
  process.exitCode = code;
  // Node ends here without process.reallyExit.
  exitWith(code, endProcess);
}
// _fatalException is where Node sends an uncaught exception; it returns
// whether the exception was handled.
process._fatalException = function _fatalException(err) {
  fatal(err);
  return exiting === false;
};
let workerFatal = null;
function setWorkerFatal(fn) { workerFatal = fn; }
loop.setFatalHandler(fatal);

// formatAbort is what V8 prints before it aborts on an uncaught
// exception: the error, then its frames under FROM.
function formatAbort(err) {
  let head, frames = '';
  try {
    head = err instanceof Error ? `${err.name}: ${err.message}` : require('./util.js').inspect(err);
    const stack = err && typeof err.stack === 'string' ? err.stack : '';
    const lines = stack.split('\n').filter((l) => l.startsWith('    at ')).map((l) => l.slice(7));
    if (lines.length) frames = `\nFROM\n${lines.join('\n')}\n`;
  } catch {
    head = 'exception';
  }
  return `Uncaught ${head}\n${frames}`;
}

function formatFatal(err) {
  let body;
  if (err && err[Symbol.for('secexec.sourceShown')]) {
    // A syntax error whose stack already shows the offending source.
    return `${err.stack}\n\nNode.js ${process.version}\n`;
  }
  try {
    const { inspect } = require('./util.js');
    if (err instanceof Error || (err && typeof err.stack === 'string')) {
      body = inspect(err);
    } else {
      body = `Uncaught ${inspect(err)}`;
    }
  } catch {
    body = String(err && err.stack || err);
  }
  let header = '';
  try { header = require('./internal/source.js').errorSourceLine(err); } catch { /* no source */ }
  return `${header}${body}\n\nNode.js ${process.version}\n`;
}

// exposeGC installs V8's gc() global as node --expose-gc does (writable,
// enumerable, not configurable). Only this process's isolate is collected:
// see bridge_gc.go. What the collection finds (FinalizationRegistry
// callbacks) runs in a later macrotask, as on Node's platform; one pending
// run at a time however often gc() is called, and unref'd so it does not
// keep the process alive. gc({ execution: 'async' }) collects in a later
// task and returns a promise, as V8's extension does.
function exposeGC() {
  let tasksPending = false;
  const schedule = () => {
    if (!tasksPending) {
      tasksPending = true;
      globalThis.setImmediate(runTasks).unref();
    }
  };
  // A run that stopped at its bound continues in the next macrotask.
  function runTasks() {
    tasksPending = false;
    if (B.gcTasks()) schedule();
  }
  const collect = () => {
    B.gc();
    schedule();
  };
  function gc() {
    const options = arguments[0]; // gc.length is 0, as V8's
    if (options !== null && typeof options === 'object' && options.execution === 'async') {
      return new Promise((resolve) => { globalThis.setImmediate(() => { collect(); resolve(); }); });
    }
    collect();
    return undefined;
  }
  Object.defineProperty(globalThis, 'gc', { value: gc, writable: true, enumerable: true, configurable: false });
}

// configure fills the process in from what the kernel knows.
function configure(i) {
  info = i;
  process.argv = i.argv;
  process.argv0 = i.argv0;
  process.execArgv = i.execArgv;
  // --title sets process.title, as in Node.
  const ea = i.execArgv || [];
  for (let k = 0; k < ea.length; k++) {
    if (ea[k].startsWith('--title=')) process.title = ea[k].slice(8);
    else if (ea[k] === '--title' && k + 1 < ea.length) process.title = ea[++k];
  }
  abortOnUncaught = (i.execArgv || []).some((a) => a === '--abort-on-uncaught-exception' || a === '--abort_on_uncaught_exception');
  if ((i.execArgv || []).some((a) => a === '--expose-gc' || a === '--expose_gc')) exposeGC();
  // EventSource (undici's, as Node's) is a global only under this flag.
  if (ea.includes('--experimental-eventsource')) {
    const set = (v) => Object.defineProperty(globalThis, 'EventSource', { value: v, writable: true, configurable: true, enumerable: false });
    Object.defineProperty(globalThis, 'EventSource', {
      configurable: true, enumerable: false, set,
      get() { const v = require('./internal/lazy.js').lazy('undici').EventSource; set(v); return v; },
    });
  }
  process.env = require('./internal/process_env.js').envProxy(i.env);
  process.pid = i.pid;
  process.ppid = i.ppid;
  startNs = B.hrtime();
  // A forked child: process.send, 'message' and disconnect() over the
  // channel its parent gave it, as Node's setupChildProcessIpcChannel.
  if (process.env.NODE_CHANNEL_FD !== undefined) {
    const fd = parseInt(process.env.NODE_CHANNEL_FD, 10);
    const mode = process.env.NODE_CHANNEL_SERIALIZATION_MODE || 'json';
    delete process.env.NODE_CHANNEL_FD;
    delete process.env.NODE_CHANNEL_SERIALIZATION_MODE;
    if (fd >= 0) closeChannel = require('./child_process.js')._forkChild(fd, mode);
  }
  // A cluster worker (forked by cluster.fork): as Node's
  // initializeClusterPrimary, set up before the main module runs, and the
  // id is not inherited by the worker's own children.
  if (closeChannel && process.argv[1] && process.env.NODE_UNIQUE_ID !== undefined) {
    require('./cluster.js')._setupWorker();
    delete process.env.NODE_UNIQUE_ID;
  }
}

module.exports = { process, naturalExit, domainCapture, fatal, setWorkerFatal, configure, nowNs, writeStderr, hookedStdio, NODE_VERSION, isExiting: () => exiting };
