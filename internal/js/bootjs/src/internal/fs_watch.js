'use strict';
// fs.watch, fs.promises.watch, fs.watchFile and fs.unwatchFile.
//
// fs.watch sits on the kernel's watch sets (Linux's inotify, see
// kernel/vfs/notify.go) as libuv sits on inotify: one set per process,
// opened lazily, read by the asynchronous reader; each FSWatcher is one
// watch in it. The reader is referenced while any open watcher is, so a
// persistent watcher keeps the loop alive. Records are struct
// inotify_event (wd, mask, cookie, len, name); their masks map to Node's
// event types exactly as libuv maps them. When the kernel dropped events
// (its queues are bounded), the watchers concerned get ('rename', null):
// something changed, look again.
//
// fs.watchFile polls stat() on an interval and reports (curr, prev) with
// libuv's rules (uv_fs_poll), as Node does.
const EventEmitter = require('../events.js');
const { B, takeBytes } = require('./bridge.js');
const reader = require('./reader.js');
const { uvException, codedError } = require('./errors.js');

const IN_MODIFY = 0x2;
const IN_ATTRIB = 0x4;
const IN_Q_OVERFLOW = 0x4000;
const IN_IGNORED = 0x8000;

function lazyFs() { return require('../fs.js'); }
function lazyBuffer() { return require('../buffer.js').Buffer; }

// --- the process's watch set ---
// The reader reads the set's doorbell (one byte whenever records are
// queued); onBell then takes the records from the set, so they wait in
// the kernel's queue until the loop gets to them, as inotify's do.
let setFd = -1;
let handle = 0;
let refd = false;
const byWd = new Map(); // wd → the FSWatchers sharing that watch
// Open watchers, including those whose watch ended (the watched object
// was removed): as in Node, they keep the loop alive until closed.
const open = new Set();

function* allWatchers() { for (const ws of byWd.values()) yield* ws; }

function openSet() {
  setFd = B.watchInit();
  const bell = B.watchBell(setFd);
  try {
    handle = reader.start(bell, onBell, onSetError);
  } finally {
    B.close(bell); // the reader holds the doorbell
  }
  refd = true;
  updateRef();
}

// resetSet forgets the set (its descriptor was closed under us, or its
// reader failed); the watches end with it.
function resetSet() {
  if (handle) reader.stop(handle);
  const fd = setFd;
  setFd = -1;
  handle = 0;
  if (fd >= 0) { try { B.close(fd); } catch { /* closed already */ } }
  for (const w of allWatchers()) w._wd = 0;
  byWd.clear();
}

function updateRef() {
  if (!handle) return;
  let want = false;
  for (const w of open) if (w._ref) { want = true; break; }
  if (want !== refd) { refd = want; reader.ref(handle, want); }
}

function onSetError(err) {
  const ws = [...allWatchers()];
  resetSet();
  for (const w of ws) {
    open.delete(w);
    if (!w._closed) w.emit('error', err);
  }
}

function onBell(chunk) {
  if (chunk === null) { onSetError(uvException('EIO', 'watch')); return; }
  let n;
  try {
    n = B.watchRead(setFd);
  } catch {
    // The guest closed the set's descriptor: its watches are gone.
    resetSet();
    return;
  }
  if (n > 0) onRecords(takeBytes(n, (k) => lazyBuffer().allocUnsafe(k)));
}

function onRecords(chunk) {
  let off = 0;
  while (off + 16 <= chunk.length) {
    const wd = chunk.readInt32LE(off);
    const mask = chunk.readUInt32LE(off + 4);
    const len = chunk.readUInt32LE(off + 12);
    const name = chunk.subarray(off + 16, off + 16 + len);
    off += 16 + len;
    if (wd === -1) {
      for (const w of [...allWatchers()]) w._emitChange('rename', null);
      continue;
    }
    const ws = byWd.get(wd);
    if (!ws) continue;
    if (mask & IN_Q_OVERFLOW) { for (const w of [...ws]) w._emitChange('rename', null); continue; }
    if (mask & IN_IGNORED) {
      byWd.delete(wd);
      for (const w of ws) w._wd = 0;
    }
    let end = name.indexOf(0);
    if (end < 0) end = name.length;
    // As libuv: anything but a data or metadata change is a 'rename'.
    const type = mask & ~(IN_MODIFY | IN_ATTRIB) ? 'rename' : 'change';
    for (const w of [...ws]) w._emitChange(type, end > 0 ? name.subarray(0, end) : true);
  }
}

function addWatch(path, recursive) {
  for (let attempt = 0; ; attempt++) {
    if (setFd < 0) openSet();
    try {
      return B.watchAdd(setFd, path, recursive);
    } catch (e) {
      // The guest closed the set's descriptor (or put something else
      // there): start a new set once.
      if (e === 'EBADF' && attempt === 0) { resetSet(); continue; }
      throw e;
    }
  }
}

function watchError(code, filename) {
  const err = uvException(code, 'watch', filename);
  if (code === 'ENOSPC') err.message = `ENOSPC: System limit for number of file watchers reached, watch '${filename}'`;
  err.filename = filename;
  return err;
}

function checkEncoding(encoding) {
  if (encoding && encoding !== 'buffer' && !lazyBuffer().isEncoding(encoding)) {
    const err = codedError('ERR_INVALID_ARG_VALUE', 'encoding', encoding, 'is invalid encoding');
    err.message = `The argument 'encoding' is invalid encoding. Received ${require('../util.js').inspect(encoding)}`;
    throw err;
  }
}

// typeError is ERR_INVALID_ARG_TYPE worded as Node words it.
function typeError(name, expected, actual) {
  const err = codedError('ERR_INVALID_ARG_TYPE', name, expected, actual);
  const kind = name.includes('.') ? 'property' : 'argument';
  const { describe } = require('./errors.js');
  err.message = `The "${name}" ${kind} must be ${expected}. Received ${describe(actual)}`;
  return err;
}

class FSWatcher extends EventEmitter {
  constructor() {
    super();
    this._wd = 0;
    this._ref = true;
    this._closed = false;
    this._encoding = 'utf8';
    this._base = '';
  }
  // _start adds the watch; failures throw as Node's do.
  _start(filename, persistent, recursive, encoding) {
    checkEncoding(encoding);
    this._encoding = encoding || 'utf8';
    const path = lazyFs()._toPath(filename, 'filename');
    try {
      this._wd = addWatch(path, !!recursive);
    } catch (e) {
      throw typeof e === 'string' ? watchError(e, path) : e;
    }
    this._base = require('../path.js').basename(path);
    // Only true itself makes a watcher persistent, as in Node's binding.
    this._ref = persistent === true;
    let ws = byWd.get(this._wd);
    if (!ws) byWd.set(this._wd, ws = new Set());
    ws.add(this);
    open.add(this);
    updateRef();
  }
  // _emitChange reports one event. name holds the entry's name, or is
  // true for the watched object itself (reported by its base name, as
  // libuv does) or null when unknown (events were dropped).
  _emitChange(type, name) {
    if (this._closed) return;
    let filename = null;
    if (name !== null) {
      const bytes = name === true ? lazyBuffer().from(this._base) : lazyBuffer().from(name);
      filename = this._encoding === 'buffer' ? bytes : bytes.toString(this._encoding);
    }
    this.emit('change', type, filename);
  }
  close() {
    if (this._closed) return;
    this._closed = true;
    const wd = this._wd;
    this._wd = 0;
    const ws = wd ? byWd.get(wd) : undefined;
    if (ws && ws.delete(this) && ws.size === 0) {
      byWd.delete(wd);
      try { B.watchRm(setFd, wd); } catch { /* ended already */ }
    }
    if (open.delete(this)) updateRef();
    process.nextTick(() => this.emit('close'));
  }
  ref() { if (!this._ref) { this._ref = true; updateRef(); } return this; }
  unref() { if (this._ref) { this._ref = false; updateRef(); } return this; }
  [Symbol.dispose || Symbol.for('nodejs.dispose')]() { this.close(); }
}

function watchOptions(options) {
  if (options === undefined || options === null) return {};
  if (typeof options === 'string') return { encoding: options };
  if (typeof options !== 'object') throw typeError('options', 'one of type string or object', options);
  return options;
}

function checkBool(v, name) {
  if (typeof v !== 'boolean') throw typeError(name, 'of type boolean', v);
}

function checkSignal(signal) {
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
    throw typeError('options.signal', 'an instance of AbortSignal', signal);
  }
}

function watch(filename, options, listener) {
  if (typeof options === 'function') { listener = options; options = undefined; }
  options = watchOptions(options);
  const persistent = options.persistent === undefined ? true : options.persistent;
  const recursive = options.recursive === undefined ? false : options.recursive;
  checkBool(recursive, 'options.recursive');
  checkSignal(options.signal);
  const w = new FSWatcher();
  w._start(filename, persistent, recursive, options.encoding);
  if (listener) w.addListener('change', listener);
  const { signal } = options;
  if (signal) {
    if (signal.aborted) process.nextTick(() => w.close());
    else {
      const onAbort = () => w.close();
      signal.addEventListener('abort', onAbort, { once: true });
      w.once('close', () => signal.removeEventListener('abort', onAbort));
    }
  }
  return w;
}

function abortError(signal) {
  const err = new Error('The operation was aborted');
  err.name = 'AbortError';
  err.code = 'ABORT_ERR';
  if (signal && signal.reason !== undefined) err.cause = signal.reason;
  return err;
}

// promises.watch is an async iterator of { eventType, filename }.
async function* watchAsync(filename, options = {}) {
  if (options === null || typeof options !== 'object') throw typeError('options', 'of type object', options);
  const { persistent = true, recursive = false, encoding = 'utf8', signal, maxQueue = 2048, overflow = 'ignore' } = options;
  checkBool(persistent, 'options.persistent');
  checkBool(recursive, 'options.recursive');
  if (!Number.isInteger(maxQueue)) throw typeError('options.maxQueue', 'of type number', maxQueue);
  if (overflow !== 'ignore' && overflow !== 'error') throw codedError('ERR_INVALID_ARG_VALUE', 'options.overflow', overflow, "must be one of: 'ignore', 'error'");
  checkSignal(signal);
  checkEncoding(encoding);
  if (signal && signal.aborted) throw abortError(signal);
  const w = new FSWatcher();
  const queue = [];
  let wake = null;
  let failure = null;
  const poke = () => { if (wake) { const f = wake; wake = null; f(); } };
  w.on('change', (eventType, name) => {
    if (queue.length < maxQueue) {
      queue.push({ eventType, filename: name });
    } else if (overflow === 'error') {
      failure = codedError('ERR_FS_WATCH_QUEUE_OVERFLOW');
      failure.message = `fs.watch() queued more than ${maxQueue} events`;
    } else {
      process.emitWarning('fs.watch maxQueue exceeded');
    }
    poke();
  });
  w.on('error', (e) => { failure = e; poke(); });
  const onAbort = () => { failure = abortError(signal); poke(); };
  try {
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    w._start(filename, persistent, recursive, encoding);
    for (;;) {
      while (queue.length) yield queue.shift();
      if (failure) throw failure;
      await new Promise((resolve) => { wake = resolve; });
      if (signal && signal.aborted && !queue.length) throw abortError(signal);
    }
  } finally {
    w.close();
    if (signal) signal.removeEventListener('abort', onAbort);
  }
}

// --- watchFile: stat polling ---
const statWatchers = new Map();

function zeroStats(bigint) {
  const fs = lazyFs();
  if (!bigint) return new fs.Stats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  const s = Object.create(Object.getPrototypeOf(fs.statSync('/', { bigint: true })));
  for (const k of ['dev', 'mode', 'nlink', 'uid', 'gid', 'rdev', 'blksize', 'ino', 'size', 'blocks']) s[k] = 0n;
  for (const k of ['atime', 'mtime', 'ctime', 'birthtime']) { s[`${k}Ms`] = 0n; s[`${k}Ns`] = 0n; s[k] = new Date(0); }
  return s;
}

const compared = ['ctimeMs', 'mtimeMs', 'birthtimeMs', 'size', 'mode', 'uid', 'gid', 'ino', 'dev'];
function sameStats(a, b) {
  for (const k of compared) if (a[k] !== b[k]) return false;
  return true;
}

class StatWatcher extends EventEmitter {
  constructor(bigint) {
    super();
    this._bigint = !!bigint;
    this._timer = null;
    this._refs = 0;
    this._ref = true;
  }
  _start(path, persistent, interval) {
    this._path = path;
    this._busy = 0; // libuv's busy_polling: 0 first, 1 after a stat, -errno after a failure
    this._last = zeroStats(this._bigint);
    this._ref = persistent !== false;
    this._refs = 1;
    // The first look sets the baseline (or reports a missing file) on the
    // next turn, as libuv's first poll does.
    this._timer = setTimeout(() => { this._poll(); this._arm(interval); }, 0);
    if (!this._ref) this._timer.unref();
  }
  _arm(interval) {
    if (this._timer === null) return;
    this._timer = setInterval(() => this._poll(), interval);
    if (!this._ref) this._timer.unref();
  }
  _poll() {
    if (this._timer === null) return;
    let st = null;
    let status = 0;
    try {
      st = lazyFs().statSync(this._path, { bigint: this._bigint });
    } catch (e) {
      status = typeof e.errno === 'number' ? e.errno : -5;
    }
    if (st === null) {
      if (this._busy !== status) {
        this._busy = status;
        this.emit('change', zeroStats(this._bigint), this._last);
      }
      return;
    }
    const prev = this._last;
    const report = this._busy !== 0 && (this._busy < 0 || !sameStats(prev, st));
    this._last = st;
    this._busy = 1;
    if (report) this.emit('change', st, prev);
  }
  stop() {
    if (this._timer === null) return;
    clearTimeout(this._timer);
    this._timer = null;
    process.nextTick(() => this.emit('stop'));
  }
  ref() { this._ref = true; if (this._timer) this._timer.ref(); return this; }
  unref() { this._ref = false; if (this._timer) this._timer.unref(); return this; }
}

function watchFile(filename, options, listener) {
  const fs = lazyFs();
  const path = require('../path.js').resolve(fs._toPath(filename, 'filename'));
  if (options === null || typeof options !== 'object') { listener = options; options = null; }
  options = { interval: 5007, persistent: true, ...options };
  if (typeof listener !== 'function') throw typeError('listener', 'of type function', listener);
  let stat = statWatchers.get(path);
  if (stat === undefined) {
    stat = new StatWatcher(options.bigint);
    stat._start(path, options.persistent, options.interval);
    statWatchers.set(path, stat);
  } else {
    stat._refs++;
  }
  stat.addListener('change', listener);
  return stat;
}

function unwatchFile(filename, listener) {
  const fs = lazyFs();
  const path = require('../path.js').resolve(fs._toPath(filename, 'filename'));
  const stat = statWatchers.get(path);
  if (stat === undefined) return;
  if (typeof listener === 'function') stat.removeListener('change', listener);
  else stat.removeAllListeners('change');
  if (stat.listenerCount('change') === 0) {
    stat.stop();
    statWatchers.delete(path);
  }
}

module.exports = { watch, watchAsync, watchFile, unwatchFile, FSWatcher, StatWatcher };
