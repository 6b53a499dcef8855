'use strict';
// child_process: processes of the same VM, spawned through the kernel.
const EventEmitter = require('./events.js');
const { B, takeBytes, giveBytes, asU8 } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const reader = require('./internal/reader.js');
const { fromBridge, codedError, accessDenied, errnoOf } = require('./internal/errors.js');
const constants = require('./internal/constants.js');
const { validateString, validateObject, validateBoolean, validateAbortSignal, validateFunction, validateArray } = require('./internal/validators.js');
const P = require('./internal/primordials.js');

function lazyBuffer() { return require('./buffer.js').Buffer; }

// noNullBytes refuses a string with a NUL, which would cut it short in
// the child's argv or environment.
function noNullBytes(arg, name) {
  if (typeof arg === 'string' && arg.includes('\u0000')) throw codedError('ERR_INVALID_ARG_VALUE', name, arg, 'must be a string without null bytes');
}

// normalizeArgs checks spawn's arguments and options in Node's order
// (normalizeSpawnArguments), with Node's errors.
function normalizeArgs(file, args, options) {
  validateString(file, 'file');
  noNullBytes(file, 'file');
  if (file === '') throw codedError('ERR_INVALID_ARG_VALUE', 'file', file, 'cannot be empty');
  if (Array.isArray(args)) args = args.slice();
  else if (args == null) args = [];
  else if (typeof args === 'object') { options = args; args = []; }
  else throw codedError('ERR_INVALID_ARG_TYPE', 'args', 'of type object', args);
  args.forEach((a, i) => noNullBytes(a, `args[${i}]`));
  if (options !== undefined) validateObject(options, 'options');
  options = { ...(options || {}) };
  if (options.cwd != null) require('./fs.js')._toPath(options.cwd, 'options.cwd');
  if (options.detached != null) validateBoolean(options.detached, 'options.detached');
  for (const id of ['uid', 'gid']) {
    if (options[id] != null && !(Number.isInteger(options[id]) && options[id] >= -(2 ** 31) && options[id] < 2 ** 31)) {
      throw codedError('ERR_INVALID_ARG_TYPE', `options.${id}`, 'int32', options[id]);
    }
  }
  if (options.shell != null && typeof options.shell !== 'boolean' && typeof options.shell !== 'string') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'options.shell', ['boolean', 'string'], options.shell);
  }
  if (options.argv0 != null) {
    validateString(options.argv0, 'options.argv0');
    noNullBytes(options.argv0, 'options.argv0');
  }
  for (const b of ['windowsHide', 'windowsVerbatimArguments']) {
    if (options[b] != null) validateBoolean(options[b], `options.${b}`);
  }
  noNullBytes(options.shell, 'options.shell');
  if (options.env != null && typeof options.env === 'object') {
    for (const k in options.env) {
      noNullBytes(k, `options.env['${k}']`);
      noNullBytes(options.env[k], `options.env['${k}']`);
    }
  }
  let argv = [file, ...args.map(String)];
  if (options.shell) {
    const cmd = [file, ...args].join(' ');
    const sh = typeof options.shell === 'string' ? options.shell : '/bin/sh';
    argv = [sh, '-c', cmd];
    file = sh;
  }
  if (options.argv0) argv[0] = options.argv0;
  return { file, args, argv, options };
}

function envList(env) {
  env = env || process.env;
  const out = [];
  // Inherited keys count too, as in Node.
  for (const k in env) if (env[k] !== undefined) out.push(`${k}=${env[k]}`);
  return out;
}

function stdioList(stdio, def) {
  return stdioPlan(stdio, def).plan.slice(0, 3).map((s) => (s === 'ipc' ? 'pipe' : s));
}

// stdioPlan reads options.stdio: for each descriptor 'pipe', 'ignore',
// 'ipc' or the parent's descriptor number to give the child, and where
// the IPC channel goes (-1 for none).
function stdioPlan(stdio, def) {
  if (stdio === undefined || stdio === null) stdio = def;
  if (typeof stdio === 'string') {
    if (!['pipe', 'overlapped', 'ignore', 'inherit'].includes(stdio)) throw codedError('ERR_INVALID_ARG_VALUE', 'stdio', stdio);
    stdio = [stdio, stdio, stdio];
  }
  if (!Array.isArray(stdio)) throw codedError('ERR_INVALID_ARG_VALUE', 'stdio', stdio);
  if (stdio.length > 3 + kMaxExtraStdio) throw codedError('ERR_INVALID_ARG_VALUE', 'stdio', stdio, `can have at most ${3 + kMaxExtraStdio} entries`);
  const plan = [];
  let ipc = -1;
  for (let i = 0; i < Math.max(3, stdio.length); i++) {
    let s = stdio[i];
    if (s === undefined || s === null) s = i < 3 ? (def[i] ?? 'pipe') : 'ignore';
    if (s === 'pipe' || s === 'overlapped') plan.push('pipe');
    else if (s === 'inherit') plan.push(i);
    else if (s === 'ignore') plan.push('ignore');
    else if (s === 'ipc') {
      if (ipc >= 0) throw ipcError('ERR_IPC_ONE_PIPE', 'Child process can have only one IPC pipe');
      ipc = i;
      plan.push('ipc');
    } else if (typeof s === 'number') plan.push(s);
    else if (s && typeof s === 'object' && typeof s.fd === 'number') plan.push(s.fd);
    else plan.push('pipe');
  }
  return { plan, ipc };
}

function spawnError(code, file, argv) {
  const err = new Error(`spawn ${file} ${code}`);
  err.errno = errnoOf(code);
  err.code = code;
  err.syscall = `spawn ${file}`;
  err.path = file;
  err.spawnargs = argv.slice(1);
  return err;
}

const children = new Map();

class ChildProcess extends EventEmitter {
  constructor() {
    super();
    this.pid = undefined;
    this.exitCode = null;
    this.signalCode = null;
    this.killed = false;
    this.connected = false;
    this.stdin = null;
    this.stdout = null;
    this.stderr = null;
    this.stdio = [null, null, null];
    this._closesNeeded = 1;
    this._closesGot = 0;
    this.spawnfile = undefined;
    this.spawnargs = [];
  }
  _maybeClose() {
    this._closesGot++;
    if (this._closesGot === this._closesNeeded) this.emit('close', this.exitCode, this.signalCode);
  }
  kill(sig = 'SIGTERM') {
    const num = typeof sig === 'number' ? sig : constants.signals[sig];
    if (num === undefined) throw codedError('ERR_UNKNOWN_SIGNAL', sig);
    if (this.pid === undefined || this.exitCode !== null || this.signalCode !== null) return false;
    try { B.kill(this.pid, num); } catch { return false; }
    this.killed = true;
    return true;
  }
  ref() { if (this.pid !== undefined) B.childRef(this.pid, true); }
  unref() { if (this.pid !== undefined) B.childRef(this.pid, false); }
  get [Symbol.toStringTag]() { return 'ChildProcess'; }
}

function pipeReadable(fd, child) {
  const { Readable } = require('./stream.js');
  let handle = null;
  let refd = true;
  const r = new Readable({
    read() {
      if (handle === null) {
        handle = reader.start(fd, (chunk) => {
          if (chunk === null) { handle = -1; B.close(fd); r.push(null); return; }
          if (!r.push(chunk)) reader.pause(handle);
        }, (err) => r.destroy(err));
        if (!refd) reader.ref(handle, false);
      } else if (handle !== -1) reader.resume(handle);
    },
    destroy(err, cb) {
      if (handle !== null && handle !== -1) { reader.stop(handle); try { B.close(fd); } catch { /* */ } }
      else if (handle === null) { try { B.close(fd); } catch { /* */ } }
      handle = -1;
      cb(err);
    },
  });
  r.on('close', () => child._maybeClose());
  // A child's output is a socket Node only reads from.
  r.writable = false;
  addRef(r, (on) => { refd = on; if (handle !== null && handle !== -1) reader.ref(handle, on); });
  return r;
}

// addRef gives a child's stdio stream a socket's ref() and unref(): an
// unreferenced pipe does not keep the process alive (esbuild unrefs its
// service's pipes and child, and the parent exits while it idles).
function addRef(stream, setRef) {
  stream.ref = function ref() { setRef(true); return this; };
  stream.unref = function unref() { setRef(false); return this; };
}

const writer = require('./internal/writer.js');

// --- IPC channels ---
//
// A channel is a kernel duplex descriptor (bridge_ipc.go) carrying one
// JSON text per line, Node's 'json' serialization ('advanced' carries
// @ungap/structured-clone's records the same way: both ends are ours).
// The same code serves ChildProcess (parent side) and process (child
// side, set up by _forkChild from NODE_CHANNEL_FD).
const kMaxMessage = 64 * 1024 * 1024;
const kMaxExtraStdio = 64;

function ipcError(code, message, Kind = Error) {
  const err = new Kind(message);
  Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  if (typeof err.stack === 'string') err.stack = err.stack.replace(Kind.name, `${Kind.name} [${code}]`);
  return err;
}

function isInternal(m) {
  return m !== null && typeof m === 'object' && typeof m.cmd === 'string' && m.cmd.length > 4 && m.cmd.startsWith('NODE_');
}

function encodeMessage(message, serialization) {
  if (serialization === 'advanced') {
    const { serialize } = require('@ungap/structured-clone');
    return JSON.stringify(serialize(message, { lossy: false })) + '\n';
  }
  return JSON.stringify(message) + '\n';
}

function decodeMessage(text, serialization) {
  const v = JSON.parse(text);
  if (serialization === 'advanced') return require('@ungap/structured-clone').deserialize(v);
  return v;
}

class Control extends EventEmitter {
  constructor(ch) { super(); this._ch = ch; }
  ref() { this._ch.explicit = true; this._ch.setRef(true); return this; }
  unref() { this._ch.explicit = true; this._ch.setRef(false); return this; }
  get fd() { return this._ch.fd; }
  // refCounted/unrefCounted: a listening child keeps its loop alive.
  refCounted() { if (++this._ch.listeners === 1 && !this._ch.explicit) this._ch.setRef(true); }
  unrefCounted() { if (this._ch.listeners > 0 && --this._ch.listeners === 0 && !this._ch.explicit) this._ch.setRef(false); }
}

function setupChannel(target, fd, serialization, isChild) {
  const Buffer = lazyBuffer();
  const ch = {
    fd, h: 0, ref: true, explicit: false, listeners: 0,
    queue: [], queuedBytes: 0, writing: false, closing: false, closed: false,
    line: [], lineLen: 0, endWaiters: [],
    setRef(on) { this.ref = on; if (this.h) reader.ref(this.h, on); },
  };
  const control = new Control(ch);
  target.channel = control;
  target._channel = control;
  target.connected = true;

  const emitMessage = (m) => {
    const ev = isInternal(m) ? 'internalMessage' : 'message';
    process.nextTick(() => target.emit(ev, m, undefined));
  };
  const fail = (err) => {
    // A broken stream: the channel is over.
    process.nextTick(() => target.emit('error', err));
    onEnd();
  };
  const onData = (chunk) => {
    if (chunk === null) { onEnd(); return; }
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      let bytes = chunk.subarray(start, nl);
      start = nl + 1;
      if (ch.lineLen > 0) {
        ch.line.push(bytes);
        bytes = Buffer.concat(ch.line, ch.lineLen + bytes.length);
        ch.line = [];
        ch.lineLen = 0;
      }
      let m;
      try {
        m = decodeMessage(bytes.toString('utf8'), serialization);
      } catch (e) {
        fail(e);
        return;
      }
      emitMessage(m);
    }
    if (start < chunk.length) {
      ch.lineLen += chunk.length - start;
      if (ch.lineLen > kMaxMessage) {
        fail(ipcError('ERR_IPC_MESSAGE_TOO_LARGE', `IPC message larger than ${kMaxMessage} bytes`, RangeError));
        return;
      }
      ch.line.push(Buffer.from(chunk.subarray(start)));
    }
  };
  ch.h = reader.start(fd, onData, (err) => fail(err));
  if (isChild) ch.setRef(false);

  function close() {
    if (ch.closed) return;
    ch.closed = true;
    if (ch.h) { reader.stop(ch.h); ch.h = 0; }
    try { B.duplexShutdown(fd); } catch { /* not a channel any more */ }
    try { B.close(fd); } catch { /* closed already */ }
    target.channel = null;
    target._channel = null;
  }
  // onEnd: the peer closed its end (or the stream broke). 'disconnect'
  // comes first, then whatever waited for the end ('exit', 'close').
  function onEnd() {
    if (ch.closed) return;
    const was = target.connected;
    target.connected = false;
    close();
    process.nextTick(() => {
      if (was) target.emit('disconnect');
      if (!isChild && typeof target._maybeClose === 'function') target._maybeClose();
      const waiters = ch.endWaiters;
      ch.endWaiters = [];
      for (const fn of waiters) fn();
    });
  }
  // _whenChannelEnds runs fn once the peer's end is closed, if the
  // channel is still open (see the 'exit' handler).
  target._whenChannelEnds = (fn) => {
    if (ch.closed) return false;
    ch.endWaiters.push(fn);
    return true;
  };
  function pump() {
    if (ch.writing || ch.closed) return;
    if (ch.queue.length === 0) {
      if (ch.closing) { ch.closing = false; target._disconnect(); }
      return;
    }
    const m = ch.queue.shift();
    ch.writing = true;
    const done = (err) => {
      ch.writing = false;
      ch.queuedBytes -= m.bytes.length;
      if (err) {
        if (typeof m.cb === 'function') process.nextTick(m.cb, err);
        else process.nextTick(() => target.emit('error', err));
      } else if (typeof m.cb === 'function') process.nextTick(m.cb, null);
      pump();
    };
    try {
      writer.write(fd, m.bytes, done);
    } catch (e) {
      done(fromBridge(e, 'write'));
    }
  }

  target.send = function send(message, handle, options, callback) {
    if (typeof handle === 'function') { callback = handle; handle = undefined; options = undefined; }
    else if (typeof options === 'function') { callback = options; options = undefined; }
    else if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
    }
    if (!this.connected) {
      const ex = ipcError('ERR_IPC_CHANNEL_CLOSED', 'Channel closed');
      if (typeof callback === 'function') process.nextTick(callback, ex);
      else process.nextTick(() => this.emit('error', ex));
      return false;
    }
    if (message === undefined) throw ipcError('ERR_MISSING_ARGS', 'The "message" argument must be specified', TypeError);
    if (!['string', 'object', 'number', 'boolean'].includes(typeof message)) {
      throw codedError('ERR_INVALID_ARG_TYPE', 'message', 'one of type string, object, number, or boolean', message);
    }
    if (handle !== undefined && handle !== null) {
      throw accessDenied('sending handles over IPC (child_process send with a handle)');
    }
    const text = encodeMessage(message, serialization);
    // A UTF-16 unit is at least one byte of UTF-8: long texts are refused
    // before they are encoded.
    const bytes = text.length > kMaxMessage ? null : require('./internal/encoding.js').utf8Encode(text);
    if (bytes === null || bytes.length > kMaxMessage) {
      const ex = ipcError('ERR_IPC_MESSAGE_TOO_LARGE', `IPC message larger than ${kMaxMessage} bytes`, RangeError);
      if (typeof callback === 'function') process.nextTick(callback, ex);
      else process.nextTick(() => this.emit('error', ex));
      return false;
    }
    ch.queue.push({ bytes, cb: callback });
    ch.queuedBytes += bytes.length;
    pump();
    return ch.queuedBytes < 65536 * 2;
  };
  // _sendFirst writes a small message at once when nothing is queued: a
  // cluster worker's 'online', which Node's synchronous pipe write
  // delivers even when the worker exits straight away. The channel is new
  // and empty then, so the write cannot block.
  target._sendFirst = function _sendFirst(message) {
    if (ch.writing || ch.queue.length || ch.closed || !this.connected) return this.send(message);
    try {
      B.write(fd, encodeMessage(message, serialization));
      return true;
    } catch {
      return this.send(message);
    }
  };
  target.disconnect = function disconnect() {
    if (!this.connected) {
      this.emit('error', ipcError('ERR_IPC_DISCONNECTED', 'IPC channel is already disconnected'));
      return;
    }
    this.connected = false;
    // Messages already queued are written first.
    if (ch.writing || ch.queue.length) ch.closing = true;
    else this._disconnect();
  };
  target._disconnect = function _disconnect() {
    if (ch.closed) return;
    close();
    process.nextTick(() => target.emit('disconnect'));
  };
  control._shutdown = close;
  return control;
}

// _forkChild sets up process.send and friends in a forked child. It
// returns what closes the channel as the process exits, so the parent
// hears of it before it hears of the exit.
function _forkChild(fd, serialization) {
  try { B.ipcCloexec(fd, true); } catch { /* not open: no channel */ return null; }
  const control = setupChannel(process, fd, serialization === 'advanced' ? 'advanced' : 'json', true);
  process.on('newListener', (name) => { if (name === 'message' || name === 'disconnect') control.refCounted(); });
  process.on('removeListener', (name) => { if (name === 'message' || name === 'disconnect') control.unrefCounted(); });
  return control._shutdown;
}

// duplexStream wraps the parent's end of an extra 'pipe' descriptor.
function duplexStream(fd, child) {
  const { Duplex } = require('./stream.js');
  let handle = null;
  let closed = false;
  const closeFd = () => { if (!closed) { closed = true; try { B.close(fd); } catch { /* */ } } };
  let refd = true;
  const d = new Duplex({
    allowHalfOpen: false,
    read() {
      if (handle === null) {
        handle = reader.start(fd, (chunk) => {
          if (chunk === null) { handle = -1; d.push(null); return; }
          if (!d.push(chunk)) reader.pause(handle);
        }, (err) => d.destroy(err));
        if (!refd) reader.ref(handle, false);
      } else if (handle !== -1) reader.resume(handle);
    },
    write(chunk, enc, cb) {
      writer.write(fd, asU8(chunk), (err) => (err && err.code === 'EPIPE' ? cb() : cb(err)));
    },
    final(cb) {
      // end(): the child reads EOF; we still read what it writes.
      try { B.duplexShutdown(fd, true); } catch { /* closed already */ }
      cb();
    },
    destroy(err, cb) {
      if (handle !== null && handle !== -1) reader.stop(handle);
      handle = -1;
      closeFd();
      cb(err);
    },
  });
  d.on('finish', () => { if (d.readableEnded) d.destroy(); });
  d.on('end', () => { if (d.writableFinished) d.destroy(); });
  d.on('close', () => child._maybeClose());
  addRef(d, (on) => { refd = on; if (handle !== null && handle !== -1) reader.ref(handle, on); });
  return d;
}

function pipeWritable(fd) {
  const { Writable } = require('./stream.js');
  let closed = false;
  const w = new Writable({
    write(chunk, enc, cb) {
      writer.write(fd, asU8(chunk), (err) => (err && err.code === 'EPIPE' ? cb() : cb(err)));
    },
    final(cb) { if (!closed) { closed = true; try { B.close(fd); } catch { /* */ } } cb(); },
    destroy(err, cb) { if (!closed) { closed = true; try { B.close(fd); } catch { /* */ } } cb(err); },
  });
  // Only writes in flight hold the loop, as a socket's do.
  addRef(w, () => {});
  // A child's stdin is a socket Node only writes to.
  w.readable = false;
  return w;
}

loop.onEvent('exit', (pid, code, signal) => {
  const child = children.get(pid);
  if (!child) return;
  children.delete(pid);
  const sigName = signal ? constants.signalNames[signal] || null : null;
  child.exitCode = sigName ? null : code;
  child.signalCode = sigName;
  const finish = () => {
    child.emit('exit', child.exitCode, child.signalCode);
    // As Node's flushStdio: output nobody consumes is drained, so that the
    // streams end and 'close' follows.
    process.nextTick(() => {
      for (const s of [child.stdout, child.stderr]) if (s && s.readable && !s.destroyed) s.resume();
    });
    child._maybeClose();
  };
  // Output being consumed is delivered before 'exit', so listeners see
  // every byte the child wrote before they hear that it ended.
  const flowing = [child.stdout, child.stderr].filter((s) => s && s.readableFlowing && !s.readableEnded && !s.destroyed);
  let left = flowing.length + 1;
  const one = () => { if (--left === 0) finish(); };
  for (const s of flowing) {
    let done = false;
    const once = () => { if (!done) { done = true; one(); } };
    s.once('end', once);
    s.once('close', once);
    s.once('error', once);
  }
  // Messages the child sent, and the end of its channel, come before
  // 'exit' too: a child's channel closes as it exits.
  if (!(child.connected && child._whenChannelEnds && child._whenChannelEnds(one))) one();
});

// deadStdio gives a child whose spawn failed at run time (no such program
// or directory, no access, no process left) the pipes Node has made by
// then: their other ends are closed, so output ends at once and input
// fails with EPIPE.
function deadStdio(child, plan) {
  const end = () => {
    const [a, b] = B.duplexPair().split(',').map(Number);
    B.close(b);
    return a;
  };
  try {
    if (plan[0] === 'pipe') child.stdin = pipeWritable(end());
    if (plan[1] === 'pipe') { child.stdout = pipeReadable(end(), child); child._closesNeeded++; }
    if (plan[2] === 'pipe') { child.stderr = pipeReadable(end(), child); child._closesNeeded++; }
  } catch {
    // No descriptors left: the child has no stdio, as before.
  }
  child.stdio = [child.stdin, child.stdout, child.stderr];
}

// spawn is Node's ChildProcess.prototype.spawn: it starts the process of
// options (file, args with argv[0], envPairs, cwd, stdio, detached,
// serialization) for a ChildProcess made by the caller.
ChildProcess.prototype.spawn = function spawn(options) {
  const child = this;
  validateObject(options, 'options');
  const serialization = options.serialization === undefined ? 'json' : options.serialization;
  if (serialization !== 'json' && serialization !== 'advanced') {
    throw codedError('ERR_INVALID_ARG_VALUE', 'options.serialization', serialization, "must be one of: 'json', 'advanced'");
  }
  const { plan, ipc } = stdioPlan(options.stdio, ['pipe', 'pipe', 'pipe']);
  let env = options.envPairs;
  if (ipc >= 0) {
    if (env === undefined) env = [];
    else validateArray(env, 'options.envPairs');
  }
  validateString(options.file, 'options.file');
  child.spawnfile = options.file;
  if (options.args === undefined) child.spawnargs = [];
  else {
    validateArray(options.args, 'options.args');
    child.spawnargs = options.args;
  }
  // Without envPairs the child has this process's environment, as a
  // spawn with a null environment inherits it.
  env = env === undefined ? envList(undefined) : P.ArrayPrototypeMap(env, String);
  const argv = child.spawnargs.length ? P.ArrayPrototypeMap(child.spawnargs, String) : [options.file];
  const req = {
    argv, path: options.file, env, cwd: options.cwd ? require('./fs.js')._toPath(options.cwd, 'options.cwd') : '',
    stdio: plan.slice(0, 3), detached: !!options.detached, extra: [], close: [],
  };
  // Channels for 'ipc' and for 'pipe' beyond stdio: the child's ends are
  // given to it, ours stay.
  const childEnds = [];
  const ours = new Map();
  let res;
  try {
    for (let i = 0; i < plan.length; i++) {
      const s = plan[i];
      if (s === 'ipc' || (s === 'pipe' && i > 2)) {
        const [a, b] = B.duplexPair().split(',').map(Number);
        ours.set(i, a);
        childEnds.push(b);
        if (i < 3) req.stdio[i] = b;
        else req.extra.push([i, b]);
      } else if (i > 2) {
        if (s === 'ignore') req.close.push(i);
        else req.extra.push([i, s]);
      }
    }
    if (ipc >= 0) req.env.push(`NODE_CHANNEL_FD=${ipc}`, `NODE_CHANNEL_SERIALIZATION_MODE=${serialization}`);
    const extended = plan.length > 3 || ipc >= 0;
    res = JSON.parse(extended ? B.spawnExtra(JSON.stringify(req)) : B.spawn(JSON.stringify(req)));
  } catch (e) {
    for (const fd of ours.values()) { try { B.close(fd); } catch { /* */ } }
    const code = typeof e === 'string' ? e : 'EIO';
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EAGAIN') deadStdio(child, plan);
    process.nextTick(() => {
      child.emit('error', spawnError(code, child.spawnfile, child.spawnargs));
      // Node's flushStdio: output nobody reads is drained, so it ends.
      for (const r of [child.stdout, child.stderr]) if (r && r.readableFlowing === null) r.resume();
      child._maybeClose();
    });
    return undefined;
  } finally {
    for (const fd of childEnds) { try { B.close(fd); } catch { /* */ } }
  }
  child.pid = res.pid;
  children.set(res.pid, child);
  if (res.fds[0] >= 0) child.stdin = pipeWritable(res.fds[0]);
  if (res.fds[1] >= 0) { child.stdout = pipeReadable(res.fds[1], child); child._closesNeeded++; }
  if (res.fds[2] >= 0) { child.stderr = pipeReadable(res.fds[2], child); child._closesNeeded++; }
  child.stdio = [child.stdin, child.stdout, child.stderr];
  for (let i = 0; i < plan.length; i++) {
    if (!ours.has(i)) { if (i > 2) child.stdio[i] = null; continue; }
    if (i === ipc) {
      child.stdio[i] = null;
      child._closesNeeded++;
      setupChannel(child, ours.get(i), serialization, false);
    } else {
      child.stdio[i] = duplexStream(ours.get(i), child);
      child._closesNeeded++;
    }
  }
  process.nextTick(() => child.emit('spawn'));
  return undefined;
};

function spawn(file, args, options) {
  const n = normalizeArgs(file, args, options);
  const o = n.options;
  checkTimeAndSignal(o);
  validateAbortSignal(o.signal, 'options.signal');
  const child = new ChildProcess();
  child.spawn({
    file: n.file, args: n.argv, envPairs: envList(o.env), cwd: o.cwd, stdio: o.stdio, detached: !!o.detached,
    serialization: o.serialization,
  });
  if (o.signal) {
    // Node's abortChildProcess: the error follows a kill that was sent,
    // with the signal's reason as its cause.
    const onAbort = () => {
      try {
        if (child.kill(o.killSignal || 'SIGTERM')) child.emit('error', require('./timers.js').abortError(o.signal));
      } catch (e) {
        child.emit('error', e);
      }
    };
    if (o.signal.aborted) process.nextTick(onAbort);
    else { o.signal.addEventListener('abort', onAbort, { once: true }); child.once('exit', () => o.signal.removeEventListener('abort', onAbort)); }
  }
  if (o.timeout > 0) {
    const t = setTimeout(() => child.kill(o.killSignal || 'SIGTERM'), o.timeout);
    child.once('exit', () => clearTimeout(t));
  }
  return child;
}

// normalizeExecFileArgs is Node's: args may be left out (options or the
// callback in its place), options must be an object, the callback a
// function.
function normalizeExecFileArgs(file, args, options, callback) {
  if (Array.isArray(args)) args = args.slice();
  else if (args != null && typeof args === 'object') { callback = options; options = args; args = null; }
  else if (typeof args === 'function') { callback = args; options = null; args = null; }
  if (args == null) args = [];
  if (typeof options === 'function') callback = options;
  else if (options != null) validateObject(options, 'options');
  if (options == null) options = {};
  if (callback != null) validateFunction(callback, 'callback');
  if (options.argv0 != null) {
    validateString(options.argv0, 'options.argv0');
    noNullBytes(options.argv0, 'options.argv0');
  }
  return { file, args, options, callback };
}

// normalizeExecArgs is Node's: exec runs the command line in a shell.
function normalizeExecArgs(command, options, callback) {
  validateString(command, 'command');
  noNullBytes(command, 'command');
  if (typeof options === 'function') { callback = options; options = undefined; }
  options = { ...options };
  options.shell = typeof options.shell === 'string' ? options.shell : true;
  return { file: command, options, callback };
}

function execFile(file, args, options, callback) {
  ({ file, args, options, callback } = normalizeExecFileArgs(file, args, options, callback));
  options = { encoding: 'utf8', timeout: 0, maxBuffer: 1024 * 1024, killSignal: 'SIGTERM', cwd: null, env: null, shell: false, ...options };
  checkTimeAndSignal(options);
  const child = spawn(file, args, {
    cwd: options.cwd, env: options.env, gid: options.gid, shell: options.shell, signal: options.signal, uid: options.uid,
    windowsHide: !!options.windowsHide, windowsVerbatimArguments: !!options.windowsVerbatimArguments,
  });
  const out = [], err = [];
  let outLen = 0, errLen = 0, killed = false, exited = false, timeoutId = null, ex = null;
  const Buffer = lazyBuffer();
  // An encoding Buffer does not know gives Buffers, as in Node.
  const enc = options.encoding !== 'buffer' && Buffer.isEncoding(options.encoding) ? options.encoding : null;
  const joined = (arr, stream) => (enc || (stream && stream.readableEncoding) ? arr.join('') : Buffer.concat(arr));
  const exithandler = (code, signal) => {
    if (exited) return;
    exited = true;
    if (timeoutId) { clearTimeout(timeoutId); timeoutId = null; }
    if (!callback) return;
    const stdout = joined(out, child.stdout), stderr = joined(err, child.stderr);
    if (!ex && code === 0 && signal === null) { callback(null, stdout, stderr); return; }
    let cmd = file;
    if (args.length) cmd += ` ${args.join(' ')}`;
    if (!ex) {
      ex = new Error(`Command failed: ${cmd}\n${stderr}`);
      ex.code = code < 0 ? require('./util.js').getSystemErrorName(code) : code;
      ex.killed = child.killed || killed;
      ex.signal = signal;
    }
    ex.cmd = cmd;
    callback(ex, stdout, stderr);
  };
  const destroyOutput = () => {
    if (child.stdout) child.stdout.destroy();
    if (child.stderr) child.stderr.destroy();
  };
  const kill = () => {
    destroyOutput();
    killed = true;
    try {
      child.kill(options.killSignal);
    } catch (e) {
      ex = e;
      exithandler();
    }
  };
  if (options.timeout > 0) timeoutId = setTimeout(() => { kill(); timeoutId = null; }, options.timeout);
  // collect counts bytes against maxBuffer and keeps what fits of the
  // chunk that passes it; the stream may give strings.
  const collect = (arr, name, stream) => (chunk) => {
    if (options.maxBuffer === Infinity) { arr.push(chunk); return; }
    const encoding = stream.readableEncoding;
    const length = encoding ? Buffer.byteLength(chunk, encoding) : chunk.length;
    const total = (name === 'stdout' ? (outLen += length) : (errLen += length));
    if (total > options.maxBuffer) {
      arr.push(chunk.slice(0, options.maxBuffer - (total - length)));
      ex = codedError('ERR_CHILD_PROCESS_STDIO_MAXBUFFER', name);
      kill();
    } else {
      arr.push(chunk);
    }
  };
  if (child.stdout) {
    if (enc) child.stdout.setEncoding(enc);
    child.stdout.on('data', collect(out, 'stdout', child.stdout));
  }
  if (child.stderr) {
    if (enc) child.stderr.setEncoding(enc);
    child.stderr.on('data', collect(err, 'stderr', child.stderr));
  }
  child.addListener('close', exithandler);
  child.addListener('error', (e) => { ex = e; destroyOutput(); exithandler(); });
  return child;
}

function exec(command, options, callback) {
  const opts = normalizeExecArgs(command, options, callback);
  return module.exports.execFile(opts.file, opts.options, opts.callback);
}

// checkTimeAndSignal is Node's check of timeout, maxBuffer and
// killSignal.
function checkTimeAndSignal(o) {
  if (o.timeout != null && !(Number.isInteger(o.timeout) && o.timeout >= 0)) {
    throw codedError('ERR_OUT_OF_RANGE', 'timeout', 'an unsigned integer', o.timeout);
  }
  if (o.maxBuffer != null && !(typeof o.maxBuffer === 'number' && o.maxBuffer >= 0)) {
    throw codedError('ERR_OUT_OF_RANGE', 'options.maxBuffer', 'a positive number', o.maxBuffer);
  }
  if (o.killSignal != null) {
    if (typeof o.killSignal !== 'string' && typeof o.killSignal !== 'number') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.killSignal', ['string', 'number'], o.killSignal);
    }
    const known = typeof o.killSignal === 'string' ? constants.signals[o.killSignal] !== undefined : Object.values(constants.signals).includes(o.killSignal);
    if (!known) throw codedError('ERR_UNKNOWN_SIGNAL', o.killSignal);
  }
}

function spawnSync(file, args, options) {
  const n = normalizeArgs(file, args, options);
  const o = n.options;
  checkTimeAndSignal(o);
  const sp = stdioPlan(o.stdio, ['pipe', 'pipe', 'pipe']);
  if (sp.ipc >= 0) throw ipcError('ERR_IPC_SYNC_FORK', 'IPC cannot be used with synchronous forks');
  const stdio = stdioList(o.stdio, ['pipe', 'pipe', 'pipe']);
  let inputN = 0;
  if (o.input !== undefined && o.input !== null) {
    const Buffer = lazyBuffer();
    const u8 = typeof o.input === 'string' ? Buffer.from(o.input, o.encoding && o.encoding !== 'buffer' ? o.encoding : 'utf8') : asU8(o.input);
    inputN = giveBytes(u8);
  }
  let res;
  try {
    res = JSON.parse(B.spawnSync(JSON.stringify({
      argv: n.argv, path: o.shell || o.argv0 ? n.file : undefined, env: envList(o.env), cwd: o.cwd ? require('./fs.js')._toPath(o.cwd, 'options.cwd') : '', stdio,
      timeout: o.timeout || 0, killSignal: typeof o.killSignal === 'number' ? o.killSignal : constants.signals[o.killSignal || 'SIGTERM'],
      maxBuffer: o.maxBuffer === undefined ? 1024 * 1024 : (o.maxBuffer === Infinity ? -1 : o.maxBuffer), inputN, hasInput: o.input !== undefined && o.input !== null,
    }), inputN));
  } catch (e) {
    const code = typeof e === 'string' ? e : 'EIO';
    const err = spawnError(code, n.file, n.argv);
    err.syscall = `spawnSync ${n.file}`;
    err.message = `spawnSync ${n.file} ${code}`;
    return { error: err, status: null, signal: null, output: null, pid: 0, stdout: null, stderr: null };
  }
  const Buffer = lazyBuffer();
  const take = (id) => (id === 0 ? null : takeBytes(-id, (k) => Buffer.allocUnsafe(k)));
  let stdout = take(res.stdout), stderr = take(res.stderr);
  if (o.encoding && o.encoding !== 'buffer') {
    if (stdout) stdout = stdout.toString(o.encoding);
    if (stderr) stderr = stderr.toString(o.encoding);
  }
  const signal = res.signal ? constants.signalNames[res.signal] : null;
  const out = { pid: res.pid, output: [null, stdout, stderr], stdout, stderr, status: signal ? null : res.status, signal };
  if (res.error) {
    const err = res.error === 'ETIMEDOUT' ? spawnError('ETIMEDOUT', n.file, n.argv) : res.error === 'ENOBUFS' ? spawnError('ENOBUFS', n.file, n.argv) : spawnError(res.error, n.file, n.argv);
    err.syscall = `spawnSync ${n.file}`;
    err.message = `spawnSync ${n.file} ${res.error}`;
    out.error = err;
  }
  return out;
}

// checkExecSyncError is Node's: the spawn error, or an error for a
// status other than 0 carrying the whole result.
function checkExecSyncError(ret, args, cmd) {
  let err;
  if (ret.error) {
    err = ret.error;
    Object.assign(err, ret);
  } else if (ret.status !== 0) {
    let msg = `Command failed: ${cmd || args.join(' ')}`;
    if (ret.stderr && ret.stderr.length > 0) msg += `\n${ret.stderr.toString()}`;
    err = Object.assign(new Error(msg), ret);
  }
  return err;
}

function execFileSync(file, args, options) {
  ({ file, args, options } = normalizeExecFileArgs(file, args, options));
  // Without stdio, stderr is collected and then written to ours, so the
  // error carries it too (Node's order).
  const inheritStderr = !options.stdio;
  const ret = spawnSync(file, args, options);
  if (inheritStderr && ret.stderr) process.stderr.write(ret.stderr);
  const err = checkExecSyncError(ret, [options.argv0 || file, ...args]);
  if (err) throw err;
  return ret.stdout;
}

function execSync(command, options) {
  const opts = normalizeExecArgs(command, options, null);
  const inheritStderr = !opts.options.stdio;
  const ret = spawnSync(opts.file, opts.options);
  if (inheritStderr && ret.stderr) process.stderr.write(ret.stderr);
  const err = checkExecSyncError(ret, undefined, command);
  if (err) throw err;
  return ret.stdout;
}

// fork runs a Node module in a new node process with an IPC channel
// (descriptor 3 unless options.stdio places 'ipc' elsewhere).
function fork(modulePath, args, options) {
  if (modulePath && typeof modulePath === 'object' && typeof modulePath.href === 'string') modulePath = require('./url.js').fileURLToPath(modulePath);
  if (typeof modulePath !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'modulePath', 'of type string or an instance of URL', modulePath);
  if (args == null) args = [];
  else if (typeof args === 'object' && !Array.isArray(args)) { options = args; args = []; }
  else if (!Array.isArray(args)) throw codedError('ERR_INVALID_ARG_TYPE', 'args', 'an instance of Array', args);
  if (options != null) validateObject(options, 'options');
  options = { ...options, shell: false };
  const execPath = options.execPath || process.execPath;
  let execArgv = options.execArgv || process.execArgv;
  if (execArgv === process.execArgv) {
    // Drop -e/-p and their code: the child runs the module, not ours.
    const kept = [];
    for (let i = 0; i < execArgv.length; i++) {
      if (['-e', '--eval', '-p', '--print'].includes(execArgv[i])) { i++; continue; }
      if (/^--(eval|print)=/.test(execArgv[i])) continue;
      kept.push(execArgv[i]);
    }
    execArgv = kept;
  }
  args = [...execArgv, modulePath, ...args];
  if (typeof options.stdio === 'string') {
    const s = options.stdio;
    if (!['ignore', 'pipe', 'inherit'].includes(s)) throw codedError('ERR_INVALID_ARG_VALUE', 'stdio', s);
    options.stdio = [s, s, s, 'ipc'];
  } else if (!Array.isArray(options.stdio)) {
    const s = options.silent ? 'pipe' : 'inherit';
    options.stdio = [s, s, s, 'ipc'];
  } else if (!options.stdio.includes('ipc')) {
    throw ipcError('ERR_CHILD_PROCESS_IPC_REQUIRED', "Forked processes must have an IPC channel, missing value 'ipc' in options.stdio");
  }
  return spawn(execPath, args, options);
}

// The promisified exec and execFile resolve to { stdout, stderr } and
// carry the child as promise.child, as Node's do.
const kCustom = Symbol.for('nodejs.util.promisify.custom');
const promiseExec = (orig) => (...args) => {
  let resolve, reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  promise.child = orig(...args, (err, stdout, stderr) => {
    if (err !== null) {
      err.stdout = stdout;
      err.stderr = stderr;
      reject(err);
    } else {
      resolve({ stdout, stderr });
    }
  });
  return promise;
};
Object.defineProperty(exec, kCustom, { enumerable: false, value: promiseExec(exec) });
Object.defineProperty(execFile, kCustom, { enumerable: false, value: promiseExec(execFile) });

module.exports = { ChildProcess, spawn, spawnSync, exec, execSync, execFile, execFileSync, fork, _forkChild };
