'use strict';
// child_process: processes of the same VM, spawned through the kernel.
const EventEmitter = require('./events.js');
const { B, takeBytes, giveBytes, asU8 } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const reader = require('./internal/reader.js');
const { fromBridge, codedError, accessDenied, errnoOf } = require('./internal/errors.js');
const constants = require('./internal/constants.js');

function lazyBuffer() { return require('./buffer.js').Buffer; }

function normalizeArgs(file, args, options) {
  if (typeof file !== 'string' || file === '') throw codedError('ERR_INVALID_ARG_VALUE', 'file', file, 'cannot be empty');
  if (Array.isArray(args)) args = args.slice();
  else if (args == null) args = [];
  else if (typeof args === 'object') { options = args; args = []; }
  else throw codedError('ERR_INVALID_ARG_TYPE', 'args', 'an instance of Array', args);
  options = { ...(options || {}) };
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
  for (const k of Object.keys(env)) if (env[k] !== undefined) out.push(`${k}=${env[k]}`);
  return out;
}

function stdioList(stdio, def) {
  if (stdio === undefined) stdio = def;
  if (typeof stdio === 'string') stdio = [stdio, stdio, stdio];
  const out = [];
  for (let i = 0; i < 3; i++) {
    const s = stdio[i] === undefined || stdio[i] === null ? (def[i] ?? 'pipe') : stdio[i];
    if (s === 'pipe' || s === 'overlapped') out.push('pipe');
    else if (s === 'inherit') out.push(i);
    else if (s === 'ignore') out.push('ignore');
    else if (typeof s === 'number') out.push(s);
    else if (s && typeof s === 'object' && typeof s.fd === 'number') out.push(s.fd);
    else if (s === 'ipc') throw accessDenied('IPC channels (child_process with stdio "ipc")');
    else out.push('pipe');
  }
  return out;
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
  disconnect() {}
  send() { throw accessDenied('child_process IPC (send)'); }
  get [Symbol.toStringTag]() { return 'ChildProcess'; }
}

function pipeReadable(fd, child) {
  const { Readable } = require('./stream.js');
  let handle = null;
  const r = new Readable({
    read() {
      if (handle === null) {
        handle = reader.start(fd, (chunk) => {
          if (chunk === null) { handle = -1; B.close(fd); r.push(null); return; }
          if (!r.push(chunk)) reader.pause(handle);
        }, (err) => r.destroy(err));
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
  return r;
}

const writes = new Map();
let nextWrite = 1;
loop.onEvent('write', (id, code) => {
  const cb = writes.get(id);
  writes.delete(id);
  if (cb) cb(code ? fromBridge(code, 'write') : null);
});

function pipeWritable(fd) {
  const { Writable } = require('./stream.js');
  let closed = false;
  const w = new Writable({
    write(chunk, enc, cb) {
      const id = nextWrite++;
      writes.set(id, (err) => (err && err.code === 'EPIPE' ? cb() : cb(err)));
      B.writeAsync(fd, giveBytes(asU8(chunk)), id);
    },
    final(cb) { if (!closed) { closed = true; try { B.close(fd); } catch { /* */ } } cb(); },
    destroy(err, cb) { if (!closed) { closed = true; try { B.close(fd); } catch { /* */ } } cb(err); },
  });
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
  if (flowing.length === 0) { finish(); return; }
  let left = flowing.length;
  for (const s of flowing) {
    let done = false;
    const one = () => { if (done) return; done = true; if (--left === 0) finish(); };
    s.once('end', one);
    s.once('close', one);
    s.once('error', one);
  }
});

function spawn(file, args, options) {
  const n = normalizeArgs(file, args, options);
  const o = n.options;
  const child = new ChildProcess();
  child.spawnfile = n.file;
  child.spawnargs = n.argv;
  const stdio = stdioList(o.stdio, ['pipe', 'pipe', 'pipe']);
  let res;
  try {
    res = JSON.parse(B.spawn(JSON.stringify({
      argv: n.argv, path: o.shell ? n.file : undefined, env: envList(o.env), cwd: o.cwd ? require('./fs.js')._toPath(o.cwd, 'options.cwd') : '', stdio, detached: !!o.detached,
    })));
  } catch (e) {
    const code = typeof e === 'string' ? e : 'EIO';
    process.nextTick(() => { child.emit('error', spawnError(code, n.file, n.argv)); child._maybeClose(); });
    return child;
  }
  child.pid = res.pid;
  children.set(res.pid, child);
  if (res.fds[0] >= 0) child.stdin = pipeWritable(res.fds[0]);
  if (res.fds[1] >= 0) { child.stdout = pipeReadable(res.fds[1], child); child._closesNeeded++; }
  if (res.fds[2] >= 0) { child.stderr = pipeReadable(res.fds[2], child); child._closesNeeded++; }
  child.stdio = [child.stdin, child.stdout, child.stderr];
  if (o.signal) {
    const onAbort = () => { child.kill(o.killSignal || 'SIGTERM'); const e = new Error('The operation was aborted'); e.name = 'AbortError'; e.code = 'ABORT_ERR'; child.emit('error', e); };
    if (o.signal.aborted) process.nextTick(onAbort);
    else { o.signal.addEventListener('abort', onAbort, { once: true }); child.once('exit', () => o.signal.removeEventListener('abort', onAbort)); }
  }
  if (o.timeout > 0) {
    const t = setTimeout(() => child.kill(o.killSignal || 'SIGTERM'), o.timeout);
    child.once('exit', () => clearTimeout(t));
  }
  process.nextTick(() => child.emit('spawn'));
  return child;
}

function execFile(file, args, options, callback) {
  if (typeof args === 'function') { callback = args; args = []; options = {}; }
  else if (typeof options === 'function') { callback = options; if (!Array.isArray(args)) { options = args; args = []; } else options = {}; }
  if (args && !Array.isArray(args) && typeof args === 'object') { options = args; args = []; }
  options = { encoding: 'utf8', maxBuffer: 1024 * 1024, ...(options || {}) };
  const child = spawn(file, args, options);
  const out = [], err = [];
  let outLen = 0, errLen = 0, killedForBuffer = false, ex = null;
  const Buffer = lazyBuffer();
  const collect = (arr, which) => (chunk) => {
    if (which === 1) outLen += chunk.length; else errLen += chunk.length;
    if ((which === 1 ? outLen : errLen) > options.maxBuffer) {
      ex = codedError('ERR_CHILD_PROCESS_STDIO_MAXBUFFER', which === 1 ? 'stdout' : 'stderr');
      killedForBuffer = true;
      child.kill(options.killSignal || 'SIGTERM');
      return;
    }
    arr.push(chunk);
  };
  if (child.stdout) child.stdout.on('data', collect(out, 1));
  if (child.stderr) child.stderr.on('data', collect(err, 2));
  const cmd = [file, ...(args || [])].join(' ');
  const finish = (code, signal) => {
    if (!callback) return;
    const enc = options.encoding;
    let stdout = Buffer.concat(out), stderr = Buffer.concat(err);
    if (enc && enc !== 'buffer') { stdout = stdout.toString(enc); stderr = stderr.toString(enc); }
    if (!ex && (code !== 0 || signal)) {
      ex = new Error(`Command failed: ${cmd}\n${stderr}`);
      ex.code = code === null ? undefined : code;
      ex.killed = child.killed || killedForBuffer;
      ex.signal = signal;
      ex.cmd = cmd;
    }
    if (ex) { ex.stdout = stdout; ex.stderr = stderr; }
    const cb = callback;
    callback = null;
    cb(ex, stdout, stderr);
  };
  child.on('close', finish);
  child.on('error', (e) => { ex = e; if (child.pid === undefined) finish(null, null); });
  return child;
}

function exec(command, options, callback) {
  if (typeof options === 'function') { callback = options; options = {}; }
  options = { ...(options || {}) };
  const shell = typeof options.shell === 'string' ? options.shell : '/bin/sh';
  delete options.shell;
  return execFile(shell, ['-c', command], options, callback && ((e, so, se) => {
    if (e && e.cmd) e.cmd = command;
    if (e && e.message.startsWith('Command failed: ')) e.message = `Command failed: ${command}\n${se}`;
    callback(e, so, se);
  }));
}

function spawnSync(file, args, options) {
  const n = normalizeArgs(file, args, options);
  const o = n.options;
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
      argv: n.argv, path: o.shell ? n.file : undefined, env: envList(o.env), cwd: o.cwd ? require('./fs.js')._toPath(o.cwd, 'options.cwd') : '', stdio,
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

function checkExecSyncError(ret, cmd) {
  if (ret.error) {
    const err = ret.error;
    Object.assign(err, ret);
    delete err.error;
    return err;
  }
  if (ret.status !== 0) {
    let msg = `Command failed: ${cmd}`;
    if (ret.stderr && ret.stderr.length > 0) msg += `\n${ret.stderr.toString()}`;
    const err = new Error(msg);
    Object.assign(err, ret);
    return err;
  }
  return null;
}

function execFileSync(file, args, options) {
  if (!Array.isArray(args) && args && typeof args === 'object') { options = args; args = []; }
  options = { ...(options || {}) };
  const inheritStderr = !options.stdio;
  if (!options.stdio) options.stdio = ['pipe', 'pipe', 'inherit'];
  const ret = spawnSync(file, args || [], options);
  const err = checkExecSyncError(ret, [file, ...(args || [])].join(' '));
  void inheritStderr;
  if (err) throw err;
  return ret.stdout;
}

function execSync(command, options) {
  options = { ...(options || {}) };
  const shell = typeof options.shell === 'string' ? options.shell : '/bin/sh';
  delete options.shell;
  if (!options.stdio) options.stdio = ['pipe', 'pipe', 'inherit'];
  const ret = spawnSync(shell, ['-c', command], options);
  const err = checkExecSyncError(ret, command);
  if (err) throw err;
  return ret.stdout;
}

function fork() { throw accessDenied('child_process.fork (IPC channels are not supported in this sandbox)'); }

const kCustom = Symbol.for('nodejs.util.promisify.custom');
exec[kCustom] = (cmd, opts) => new Promise((resolve, reject) => {
  exec(cmd, opts, (e, stdout, stderr) => (e ? reject(Object.assign(e, { stdout, stderr })) : resolve({ stdout, stderr })));
});
execFile[kCustom] = (f, a, o) => new Promise((resolve, reject) => {
  execFile(f, a, o, (e, stdout, stderr) => (e ? reject(Object.assign(e, { stdout, stderr })) : resolve({ stdout, stderr })));
});

module.exports = { ChildProcess, spawn, spawnSync, exec, execSync, execFile, execFileSync, fork, _forkChild: fork };
