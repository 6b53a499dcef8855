'use strict';
// net: TCP and Unix-domain sockets on the kernel's network stack
// (kernel/netstack). A socket is a kernel descriptor: reads and writes go
// through the loop's asynchronous reader and writer, as pipes do; connect,
// accept and lookups run on Go goroutines and report to the loop.
//
// Names are passed to the kernel, which resolves them and checks the
// network policy on the name and on every address (so a rule naming a
// host keeps working and DNS rebinding cannot reach what rules deny); the
// 'lookup' event reports the address actually connected to.
const { B } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const reader = require('./internal/reader.js');
const writer = require('./internal/writer.js');
const { fromBridge, codedError, errnoOf } = require('./internal/errors.js');
const { callable } = require('./internal/crypto_util.js');
const { Duplex } = require('./stream.js');
const EventEmitter = require('./events.js');
const timers = require('./timers.js');

// --- addresses ---

const v4Seg = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const v4Str = `(?:${v4Seg}\\.){3}${v4Seg}`;
const IPv4Reg = new RegExp(`^${v4Str}$`);
const v6Seg = '(?:[0-9a-fA-F]{1,4})';
const IPv6Reg = new RegExp('^(?:' +
  `(?:${v6Seg}:){7}(?:${v6Seg}|:)|` +
  `(?:${v6Seg}:){6}(?:${v4Str}|:${v6Seg}|:)|` +
  `(?:${v6Seg}:){5}(?::${v4Str}|(?::${v6Seg}){1,2}|:)|` +
  `(?:${v6Seg}:){4}(?:(?::${v6Seg}){0,1}:${v4Str}|(?::${v6Seg}){1,3}|:)|` +
  `(?:${v6Seg}:){3}(?:(?::${v6Seg}){0,2}:${v4Str}|(?::${v6Seg}){1,4}|:)|` +
  `(?:${v6Seg}:){2}(?:(?::${v6Seg}){0,3}:${v4Str}|(?::${v6Seg}){1,5}|:)|` +
  `(?:${v6Seg}:){1}(?:(?::${v6Seg}){0,4}:${v4Str}|(?::${v6Seg}){1,6}|:)|` +
  `(?::(?:(?::${v6Seg}){0,5}:${v4Str}|(?::${v6Seg}){1,7}|:))` +
  ')(?:%[0-9a-zA-Z-.:]{1,})?$');

// As Node's, the input is read as a string (an object by its toString).
function isIPv4(s) { return IPv4Reg.test(`${s}`); }
function isIPv6(s) { return IPv6Reg.test(`${s}`); }
function isIP(s) { return isIPv4(s) ? 4 : isIPv6(s) ? 6 : 0; }

// errnoException builds Node's error for a failed socket call, e.g.
// "connect ECONNREFUSED 127.0.0.1:3000".
function exceptionWithHostPort(code, syscall, address, port) {
  const err = fromBridge(code, syscall);
  let details = '';
  // As Node's ExceptionWithHostPort: port 0 is not shown.
  if (address !== undefined) details = port > 0 ? ` ${address}:${port}` : ` ${address}`;
  err.message = `${syscall} ${code}${details}`;
  if (address !== undefined) err.address = address;
  if (port > 0) err.port = port;
  return err;
}

// validatePort is Node's: a port is an integer (or its decimal string) up
// to 65535, above 0 unless allowZero.
function validatePort(port, name = 'Port', allowZero = true) {
  if ((typeof port !== 'number' && typeof port !== 'string') ||
      (typeof port === 'string' && port.trim().length === 0) ||
      +port !== (+port >>> 0) || port > 0xFFFF || (+port === 0 && !allowZero)) {
    throw codedError('ERR_SOCKET_BAD_PORT', name, port, allowZero);
  }
  return +port;
}

// --- pending requests answered by the loop ---

const requests = new Map();
let nextRequest = 1;
function request(fn, cb) {
  const id = nextRequest++;
  requests.set(id, cb);
  try {
    fn(id);
  } catch (e) {
    requests.delete(id);
    throw e;
  }
}
for (const kind of ['netconnect', 'dns', 'udpsend', 'tls', 'h2open', 'h2write', 'h2ping', 'h2sop', 'h2spush']) {
  loop.onEvent(kind, (id, _b, code, payload) => {
    const cb = requests.get(id);
    requests.delete(id);
    if (cb) cb(code, payload);
  });
}

const acceptors = new Map();
let nextAcceptor = 1;
loop.onEvent('netaccept', (h, fd, code, payload) => {
  const fn = acceptors.get(h);
  if (fn) fn(fd, code, payload);
  else if (!code) { try { B.close(fd); } catch { /* */ } }
});

// --- Socket ---

const kFd = Symbol('fd');
const kReader = Symbol('reader');
const kTimeout = Symbol('timeout');
const kHandle = Symbol('handle');
const kNoDelay = Symbol('noDelay');
const kKeepAlive = Symbol('keepAlive');
const kKeepAliveDelay = Symbol('keepAliveDelay');

// keepAliveDelay is the option keepAliveInitialDelay (ms, negative as 0)
// in the seconds the handle takes.
function keepAliveDelay(ms) { return ~~((ms < 0 ? 0 : ms) / 1000); }

// SocketHandle is a connected socket's handle as Node's TCPWrap shows it to
// programs: socket options on the kernel descriptor, and close.
class SocketHandle {
  constructor(socket, fd) {
    this.fd = fd;
    this._socket = socket;
  }

  setNoDelay(on) { return this._opt('nodelay', on); }
  setKeepAlive(on) { return this._opt('keepalive', on); }

  _opt(name, on) {
    try {
      B.netSetOpt(this.fd, name, on ? 1 : 0);
      return 0;
    } catch (e) {
      return errnoOf(typeof e === 'string' ? e : 'EINVAL');
    }
  }

  close(cb) {
    this._socket.destroy();
    if (typeof cb === 'function') process.nextTick(cb);
  }
}

// toNumber and isPipeName are Node's: a pipe name is a string that is not
// a non-negative number.
function toNumber(x) { return (x = Number(x)) >= 0 ? x : false; }
function isPipeName(s) { return typeof s === 'string' && toNumber(s) === false; }

// normalizeArgs is Node's: [options, cb] from ([port][, host][...][, cb]),
// (path[...][, cb]) or (options[...][, cb]).
function normalizeArgs(args) {
  if (args.length === 0) return [{}, null];
  const a0 = args[0];
  let options = {};
  if (a0 !== null && typeof a0 === 'object') options = { ...a0 };
  else if (isPipeName(a0)) options.path = a0;
  else {
    options.port = a0;
    if (args.length > 1 && typeof args[1] === 'string') options.host = args[1];
  }
  const cb = args[args.length - 1];
  return [options, typeof cb === 'function' ? cb : null];
}

class Socket extends Duplex {
  constructor(options = {}) {
    if (typeof options === 'number') options = { fd: options };
    else if (options === null || options === undefined) options = {};
    if (options.fd !== undefined) {
      if (typeof options.fd !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'fd', 'of type number', options.fd);
      if (!Number.isInteger(options.fd) || options.fd < 0 || options.fd > 0x7fffffff) {
        throw codedError('ERR_OUT_OF_RANGE', 'fd', Number.isInteger(options.fd) ? '>= 0 && <= 2147483647' : 'an integer', options.fd);
      }
    }
    // A socket carries bytes: object modes are refused, as by Node.
    for (const key of ['objectMode', 'readableObjectMode', 'writableObjectMode']) {
      if (options[key]) throw codedError('ERR_INVALID_ARG_VALUE', `options.${key}`, options[key], 'is not supported');
    }
    super({
      allowHalfOpen: !!options.allowHalfOpen,
      emitClose: false,
      autoDestroy: true,
      decodeStrings: false,
      highWaterMark: options.highWaterMark,
      readableHighWaterMark: options.readableHighWaterMark,
      writableHighWaterMark: options.writableHighWaterMark,
    });
    this[kFd] = -1;
    this[kReader] = null;
    this[kTimeout] = null;
    this[kHandle] = null;
    this[kNoDelay] = !!options.noDelay;
    this[kKeepAlive] = !!options.keepAlive;
    this[kKeepAliveDelay] = keepAliveDelay(options.keepAliveInitialDelay);
    this.connecting = false;
    this._hadError = false;
    this._host = null;
    this._peer = null;
    this.bytesRead = 0;
    this._bytesDispatched = 0;
    this.server = null;
    this._server = null;
    this._refed = true;
    this._timeoutMs = 0;
    if (options.fd !== undefined && options.fd >= 0) this._attach(options.fd, null);
    if (options.signal) {
      const onAbort = () => this.destroy(require('./internal/web.js').abortError(options.signal.reason));
      if (options.signal.aborted) process.nextTick(onAbort);
      else options.signal.addEventListener('abort', onAbort, { once: true });
    }
  }

  // _connecting is the old name of connecting.
  get _connecting() { return this.connecting; }
  get pending() { return this[kFd] < 0 || this.connecting; }
  get readyState() {
    if (this.connecting) return 'opening';
    if (this.readable && this.writable) return 'open';
    if (this.readable && !this.writable) return 'readOnly';
    if (!this.readable && this.writable) return 'writeOnly';
    return 'closed';
  }
  // bytesWritten counts what is queued too, as Node's: what waits in the
  // writable buffer and the write held back until the connection.
  get bytesWritten() {
    const { Buffer } = require('./buffer.js');
    const size = (chunk, encoding) => (typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.length);
    let bytes = this._bytesDispatched;
    for (const el of this.writableBuffer || []) bytes += size(el.chunk, el.encoding);
    if (this._pendingWrite) bytes += size(this._pendingWrite[0], this._pendingWrite[1]);
    return bytes;
  }
  get remoteAddress() { return this._peerInfo().address; }
  get remoteFamily() { return this._peerInfo().family; }
  get remotePort() { return this._peerInfo().port; }
  get localAddress() { return this.address().address; }
  get localPort() { return this.address().port; }
  get localFamily() { return this.address().family; }
  // _handle stands for Node's TCPWrap while the socket has a descriptor:
  // one object per socket, so a program may wrap its methods.
  get _handle() {
    if (this[kFd] < 0) return null;
    if (this[kHandle] === null || this[kHandle].fd !== this[kFd]) this[kHandle] = new SocketHandle(this, this[kFd]);
    return this[kHandle];
  }
  get bufferSize() { return this[kFd] >= 0 ? this.writableLength : undefined; }

  _peerInfo() {
    if (this._peer) return this._peer;
    if (this[kFd] < 0 || this.connecting) return {};
    try { this._peer = JSON.parse(B.netName(this[kFd], true)); } catch { return {}; }
    return this._peer;
  }

  address() {
    if (this[kFd] < 0) return {};
    try {
      const a = JSON.parse(B.netName(this[kFd], false));
      return a.path !== undefined ? a.path : a;
    } catch { return {}; }
  }

  _attach(fd, peer) {
    this[kFd] = fd;
    this._peer = peer;
  }

  connect(...args) {
    const [options, cb] = Array.isArray(args[0]) && args[0].length ? args[0] : normalizeArgs(args);
    if (options.port === undefined && options.path == null) throw codedError('ERR_MISSING_ARGS', ['options', 'port', 'path']);
    // As Node's: a closed socket connects again as a new one (its
    // counters start over with the new handle).
    if (this.destroyed) {
      this._undestroy();
      this[kReader] = null;
      this._peer = null;
      this._hadError = false;
      this.bytesRead = 0;
      this._bytesDispatched = 0;
    }
    if (cb) this.once('connect', cb);
    if (options.timeout) this.setTimeout(options.timeout);
    if (options.path) {
      if (typeof options.path !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'options.path', 'of type string', options.path);
      this._connect(1, options.path, -1, options);
      return this;
    }
    // As Node's lookupAndConnect, the options are checked before anything
    // starts.
    const { localAddress, localPort } = options;
    if (localAddress && !isIP(localAddress)) throw codedError('ERR_INVALID_IP_ADDRESS', localAddress);
    if (localPort && typeof localPort !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'options.localPort', 'of type number', localPort);
    if (options.lookup != null && typeof options.lookup !== 'function') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.lookup', 'of type function', options.lookup);
    }
    if (typeof options.port !== 'number' && typeof options.port !== 'string') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.port', ['number', 'string'], options.port);
    }
    const port = validatePort(options.port);
    let host = options.host || 'localhost';
    if (typeof host !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'options.host', 'of type string', host);
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    // dns.lookup's check of the hints (ADDRCONFIG, V4MAPPED, ALL), for a
    // name the kernel is to look up.
    if (!isIP(host) && options.hints && (options.hints & ~(1024 | 2048 | 256))) {
      throw codedError('ERR_INVALID_ARG_VALUE', 'hints', options.hints);
    }
    const fam = isIP(host) || (options.family === 4 ? 4 : 6);
    this._host = host;
    if (isIP(host)) {
      this._connect(fam, host, port, options);
    } else if (options.lookup != null) {
      this.connecting = true;
      this._lookupAndConnect(host, port, options);
    } else {
      // The kernel looks the name up (see above); as with Node's
      // dns.lookup, the connection starts on a later turn, so what the
      // program does next (closing the server, destroying the socket)
      // comes first.
      // The socket (Node's handle) exists at once.
      this.connecting = true;
      if (this[kFd] < 0) {
        try {
          this[kFd] = B.netSocket(fam, 1);
        } catch (e) {
          this.connecting = false;
          process.nextTick(() => this.destroy(fromBridge(e, 'socket')));
          return this;
        }
      }
      process.nextTick(() => { if (this.connecting && !this.destroyed) this._connect(fam, host, port, options); });
    }
    return this;
  }

  // _lookupAndConnect resolves host with the program's own
  // options.lookup and connects to the address it gives, as Node's
  // lookupAndConnect(Multiple) does; the kernel checks the policy on it.
  _lookupAndConnect(host, port, options) {
    // Node's socketToDnsFamily: the names as numbers, anything else as is.
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const all = family !== 4 && family !== 6 && autoSelectFamily && !options.localAddress;
    const fail = (err) => process.nextTick(() => this.destroy(err));
    options.lookup(host, { family, hints: options.hints || 0, all }, (err, address, addressType) => {
      if (!this.connecting) return;
      const list = err ? [] : all && Array.isArray(address) ? address : [{ address, family: addressType }];
      if (err) {
        this.emit('lookup', err, undefined, undefined, host);
        fail(err);
        return;
      }
      let chosen = null;
      for (const a of list) {
        this.emit('lookup', null, a.address, a.family, host);
        if (!this.connecting) return;
        if (chosen === null && isIP(a.address) && (a.family === 4 || a.family === 6)) chosen = a;
      }
      if (chosen !== null) {
        this._connect(chosen.family, chosen.address, port, options);
        return;
      }
      const first = list[0] || {};
      if (!isIP(first.address)) fail(codedError('ERR_INVALID_IP_ADDRESS', first.address));
      else {
        const e = new RangeError(`Invalid address family: ${first.family} ${options.host}:${options.port}`);
        e.code = 'ERR_INVALID_ADDRESS_FAMILY';
        e.host = options.host;
        e.port = options.port;
        fail(e);
      }
    });
  }

  _connect(family, host, port, options) {
    this.connecting = true;
    let fd;
    try {
      fd = this[kFd] >= 0 ? this[kFd] : B.netSocket(family, 1);
    } catch (e) {
      this.connecting = false;
      process.nextTick(() => this.destroy(fromBridge(e, 'socket')));
      return;
    }
    this[kFd] = fd;
    const shown = host;
    try {
      request((id) => B.netConnect(fd, host, port, id), (code, payload) => {
        if (this.destroyed) return;
        this.connecting = false;
        if (code) {
          this.destroy(exceptionWithHostPort(code, 'connect', shown, port < 0 ? undefined : port));
          return;
        }
        if (payload) this._peer = JSON.parse(payload);
        if (port >= 0 && !isIP(host) && this._peer) {
          this.emit('lookup', null, this._peer.address, this._peer.family === 'IPv6' ? 6 : 4, host);
        }
        // As Node's afterConnect: options asked for before the connection
        // apply now.
        if (options.noDelay !== undefined) this[kNoDelay] = !!options.noDelay;
        if (options.keepAlive !== undefined) {
          this[kKeepAlive] = !!options.keepAlive;
          this[kKeepAliveDelay] = keepAliveDelay(options.keepAliveInitialDelay);
        }
        if (this[kNoDelay]) this._handle.setNoDelay(true);
        if (this[kKeepAlive]) this._handle.setKeepAlive(true, this[kKeepAliveDelay]);
        this._touch();
        if (!this._refed) this.unref();
        this._onConnected();
      });
    } catch (e) {
      this.connecting = false;
      process.nextTick(() => this.destroy(exceptionWithHostPort(typeof e === 'string' ? e : 'EINVAL', 'connect', shown, port)));
    }
  }

  // _onConnected runs when the connection is up: a TLS socket first
  // runs its handshake (tls.js).
  _onConnected() {
    this.emit('connect');
    this.emit('ready');
    this._flushPending();
    // As Node's afterConnect: the first read starts (or an immediate end
    // of file comes), so an open connection keeps the process alive.
    if (this.readable && !this.isPaused()) this.read(0);
  }

  // _notReady reports whether data may not flow yet (connecting, or a
  // TLS handshake under way).
  _notReady() { return this.connecting || this[kFd] < 0 || this._secureWait === true; }

  // _flushPending lets through what waited for the connection.
  _flushPending() {
    if (this._pendingRead) {
      this._pendingRead = false;
      this._read();
    }
    if (this._pendingWrite) {
      const [chunk, encoding, cb] = this._pendingWrite;
      this._pendingWrite = null;
      this._write(chunk, encoding, cb);
    }
    if (this._pendingFinal) {
      const cb = this._pendingFinal;
      this._pendingFinal = null;
      this._final(cb);
    }
  }

  _read() {
    if (this._notReady()) {
      this._pendingRead = true;
      return;
    }
    if (this[kReader] === null) {
      this[kReader] = reader.start(this[kFd], (chunk) => {
        if (chunk === null) {
          this[kReader] = -1;
          this.push(null);
          // As Node's onStreamRead: the end is emitted even when nobody
          // reads, so a socket that ended its side closes.
          this.read(0);
          return;
        }
        this.bytesRead += chunk.length;
        this._touch();
        if (!this.push(chunk)) reader.pause(this[kReader]);
      }, (err) => { this[kReader] = -1; this.destroy(err); });
      if (!this._refed) reader.ref(this[kReader], false);
    } else if (this[kReader] !== -1) {
      reader.resume(this[kReader]);
    }
  }

  _write(chunk, encoding, cb) {
    if (this._notReady()) {
      // As Node's _writeGeneric: a socket never connected cannot write.
      if (this[kFd] < 0 && !this.connecting) { cb(codedError('ERR_SOCKET_CLOSED')); return; }
      this._pendingWrite = [chunk, encoding, cb];
      return;
    }
    const { Buffer } = require('./buffer.js');
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    this._bytesDispatched += buf.length;
    this._touch();
    try {
      writer.write(this[kFd], buf, (err) => cb(err ? exceptionWithHostPort(err.code, 'write') : null));
    } catch (e) {
      cb(fromBridge(e, 'write'));
    }
  }

  _writev(chunks, cb) {
    const { Buffer } = require('./buffer.js');
    const bufs = chunks.map(({ chunk, encoding }) => (typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk));
    this._write(Buffer.concat(bufs), 'buffer', cb);
  }

  _final(cb) {
    if (this[kFd] < 0 && !this.connecting) { cb(); return; }
    if (this._notReady()) {
      this._pendingFinal = cb;
      return;
    }
    try { B.netShutdown(this[kFd]); } catch { /* closed or reset already */ }
    cb();
  }

  _destroy(err, cb) {
    this.connecting = false;
    this._clearTimer();
    if (this[kReader] !== null && this[kReader] !== -1) reader.stop(this[kReader]);
    this[kReader] = -1;
    const fd = this[kFd];
    this[kFd] = -1;
    if (fd >= 0) { try { B.close(fd); } catch { /* */ } }
    if (err) this._hadError = true;
    cb(err);
    const pending = this._pendingWrite;
    this._pendingWrite = null;
    process.nextTick(() => {
      // A write that waited for the connection fails as the socket
      // closes (Node's onClose in _writeGeneric).
      if (pending) pending[2](codedError('ERR_SOCKET_CLOSED_BEFORE_CONNECTION'));
      this.emit('close', !!err);
      if (this._server) this._server._connectionClosed();
    });
  }

  destroySoon() {
    if (this.writable) this.end();
    if (this.writableFinished) this.destroy();
    else this.once('finish', () => this.destroy());
  }

  resetAndDestroy() { return this.destroy(); }

  // setNoDelay and setKeepAlive remember the setting until there is a
  // connection, and call the handle only when it changes (as Node's).
  setNoDelay(enable) {
    enable = Boolean(enable === undefined ? true : enable);
    if (this[kFd] < 0 || this.connecting) { this[kNoDelay] = enable; return this; }
    if (enable !== this[kNoDelay]) {
      this[kNoDelay] = enable;
      this._handle.setNoDelay(enable);
    }
    return this;
  }

  setKeepAlive(enable, initialDelayMsecs) {
    enable = Boolean(enable);
    const initialDelay = ~~(initialDelayMsecs / 1000);
    if (this[kFd] < 0 || this.connecting) {
      this[kKeepAlive] = enable;
      this[kKeepAliveDelay] = initialDelay;
      return this;
    }
    if (enable !== this[kKeepAlive] || (enable && this[kKeepAliveDelay] !== initialDelay)) {
      this[kKeepAlive] = enable;
      this[kKeepAliveDelay] = initialDelay;
      this._handle.setKeepAlive(enable, initialDelay);
    }
    return this;
  }

  // setTimeout emits 'timeout' after ms of inactivity; built on timers
  // alone (the clock may be frozen).
  // As Node's setStreamTimeout: nothing on a destroyed socket, then the
  // delay's and callback's checks.
  setTimeout(ms, cb) {
    if (this.destroyed) return this;
    if (typeof ms !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'msecs', 'of type number', ms);
    if (!(ms >= 0) || !Number.isFinite(ms)) throw codedError('ERR_OUT_OF_RANGE', 'msecs', 'a non-negative finite number', ms);
    if (cb !== undefined && typeof cb !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', cb);
    this._timeoutMs = ms;
    if (cb) { if (ms === 0) this.removeListener('timeout', cb); else this.once('timeout', cb); }
    this._touch();
    return this;
  }

  get timeout() { return this._timeoutMs || undefined; }
  // Assigning timeout sets the field only, as on Node's plain property.
  set timeout(ms) { this._timeoutMs = ms; }

  _touch() {
    this._clearTimer();
    if (this._timeoutMs > 0 && !this.destroyed) {
      this[kTimeout] = timers.setTimeout(() => { this[kTimeout] = null; this.emit('timeout'); }, this._timeoutMs);
      if (this[kTimeout].unref) this[kTimeout].unref();
    }
  }

  _clearTimer() {
    if (this[kTimeout]) { timers.clearTimeout(this[kTimeout]); this[kTimeout] = null; }
  }

  ref() {
    this._refed = true;
    if (this[kReader] !== null && this[kReader] !== -1) reader.ref(this[kReader], true);
    return this;
  }

  unref() {
    this._refed = false;
    if (this[kReader] !== null && this[kReader] !== -1) reader.ref(this[kReader], false);
    return this;
  }
}

// --- Server ---

// clusterWorker returns the cluster module in a cluster worker, else null;
// it loads nothing in other processes.
function clusterWorker() {
  // A worker thread's process.connected throws, as Node's: no cluster.
  let connected = false;
  try { connected = process.connected; } catch { /* a worker thread */ }
  if (!connected) return null;
  const cluster = require('./cluster.js');
  return cluster.isWorker && cluster.worker ? cluster : null;
}

class Server extends EventEmitter {
  constructor(options, listener) {
    super();
    if (typeof options === 'function') { listener = options; options = {}; }
    else if (options !== null && options !== undefined && typeof options !== 'object') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
    }
    options = options || {};
    if (typeof listener === 'function') this.on('connection', listener);
    this._fd = -1;
    this._acceptor = 0;
    this._connections = 0;
    this._refed = true;
    this._closing = false;
    this._pipeName = undefined;
    this._lookup = null;
    this.allowHalfOpen = !!options.allowHalfOpen;
    this.pauseOnConnect = !!options.pauseOnConnect;
    this.noDelay = !!options.noDelay;
    this.keepAlive = !!options.keepAlive;
    this.maxConnections = undefined;
  }

  get listening() { return this._fd >= 0 && this._acceptor !== 0; }

  listen(...args) {
    // As Node's Server.prototype.listen: listen([port][, host][, backlog]
    // [, cb]), listen(path[, backlog][, cb]) or listen(options[, cb]).
    const [options, cb] = normalizeArgs(args);
    if (this.listening) throw codedError('ERR_SERVER_ALREADY_LISTEN');
    if (cb !== null) this.once('listening', cb);
    const backlogFromArgs = toNumber(args.length > 1 && args[1]) || toNumber(args.length > 2 && args[2]);
    if (options.signal !== undefined) this._listenSignal(options.signal);
    if (args.length === 0 || typeof args[0] === 'function' ||
        (options.port === undefined && 'port' in options) || options.port === null) {
      options.port = 0;
    }
    const backlog = options.backlog || backlogFromArgs || 511;
    if (typeof options.port === 'number' || typeof options.port === 'string') {
      const port = validatePort(options.port, 'options.port') | 0;
      // reusePort (SO_REUSEPORT) shares the port with other such
      // listeners in the kernel, so it never asks a cluster primary.
      const reusePort = options.reusePort === true;
      const exclusive = !!options.exclusive || reusePort;
      const host = options.host;
      if (!host) {
        this._listenInCluster(6, '', port, backlog, exclusive, reusePort);
      } else {
        // As Node's lookupAndListen, an address too goes through
        // dns.lookup (and so binds a turn of the loop later).
        const lookup = {};
        this._lookup = lookup;
        require('./dns.js').lookup(host, (err, address, family) => {
          // close() before the answer cancels the listen.
          if (this._lookup !== lookup) return;
          this._lookup = null;
          if (err) { this.emit('error', err); return; }
          this._listenInCluster(family, address, port, backlog, exclusive, reusePort);
        });
      }
      return this;
    }
    if (options.path && isPipeName(options.path)) {
      this._pipeName = options.path;
      this._bind(1, options.path, -1, backlog);
      return this;
    }
    if (!('port' in options) && !('path' in options)) {
      throw codedError('ERR_INVALID_ARG_VALUE', 'options', options, 'must have the property "port" or "path"');
    }
    throw codedError('ERR_INVALID_ARG_VALUE', 'options', options);
  }

  // _listenSignal closes the server when signal aborts (Node's
  // addAbortSignalOption).
  _listenSignal(signal) {
    if (signal === null || typeof signal !== 'object' || !('aborted' in signal)) {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.signal', 'an instance of AbortSignal', signal);
    }
    const onAborted = () => this.close();
    if (signal.aborted) process.nextTick(onAborted);
    else {
      signal.addEventListener('abort', onAborted, { once: true });
      this.once('close', () => signal.removeEventListener('abort', onAborted));
    }
  }

  // _listenInCluster binds at once, or in a cluster worker (unless
  // exclusive) on the port the primary holds for this address, sharing it
  // with the other workers (see cluster.js).
  _listenInCluster(family, host, port, backlog, exclusive, reusePort) {
    const cluster = exclusive ? null : clusterWorker();
    if (cluster === null) {
      this._bind(family, host, port, backlog, reusePort);
      return;
    }
    const address = host === '' ? null : host;
    const addressType = host === '' ? 4 : family;
    cluster._getServer(this, { address, port, addressType, fd: undefined, backlog }, (code, shared) => {
      if (code) {
        this.emit('error', exceptionWithHostPort(code, 'bind', address, port));
        return;
      }
      this._bind(family, host, shared, backlog, true);
    });
  }

  _bind(family, host, port, backlog, reusePort) {
    let fd = -1;
    try {
      fd = B.netSocket(family, 1);
      if (port >= 0) B.netSetOpt(fd, 'reuseaddr', 1);
      if (reusePort) B.netSetOpt(fd, 'reuseport', 1);
      B.netBind(fd, host, port);
      B.netListen(fd, backlog);
    } catch (e) {
      if (fd >= 0) { try { B.close(fd); } catch { /* */ } }
      const shown = port < 0 ? host : host || (family === 4 ? '0.0.0.0' : '::');
      const err = exceptionWithHostPort(typeof e === 'string' ? e : 'EINVAL', 'listen', shown, port < 0 ? undefined : port);
      process.nextTick(() => this.emit('error', err));
      return;
    }
    this._fd = fd;
    this._connectionKey = `${port < 0 ? -1 : family}:${port < 0 || host ? host : (family === 4 ? '0.0.0.0' : '::')}:${port}`;
    const h = nextAcceptor++;
    this._acceptor = h;
    acceptors.set(h, (cfd, code, payload) => this._onAccept(cfd, code, payload));
    B.netAcceptStart(fd, h);
    if (!this._refed) B.netAcceptRef(h, false);
    // A server closed before this turn does not report listening.
    process.nextTick(() => { if (this._fd === fd) this.emit('listening'); });
  }

  _onAccept(fd, code, payload) {
    if (code === 'EMFILE' || code === 'ENFILE') {
      // libuv drops the connection and keeps serving (its EMFILE trick);
      // the kernel did the dropping.
      return;
    }
    if (code) {
      this.emit('error', exceptionWithHostPort(code, 'accept'));
      return;
    }
    if (this.maxConnections !== undefined && this._connections >= this.maxConnections) {
      try { B.close(fd); } catch { /* */ }
      this.emit('drop', payload ? JSON.parse(payload) : {});
      return;
    }
    const socket = this._wrapAccepted(fd);
    if (payload) {
      const peer = JSON.parse(payload);
      socket._peer = peer.path !== undefined ? {} : peer;
    }
    socket.server = this;
    socket._server = this;
    this._connections++;
    if (this.noDelay) socket.setNoDelay(true);
    if (this.keepAlive) socket.setKeepAlive(true);
    if (this.pauseOnConnect) socket.pause();
    // As Node's socket on a handle: reading starts at once, so a peer's
    // end of file ends (and, with end() called, closes) a socket nobody
    // reads.
    else socket.read(0);
    this.emit('connection', socket);
  }

  // _wrapAccepted makes the socket of an accepted connection (a TLS
  // server's is a TLSSocket).
  _wrapAccepted(fd) { return new Socket({ fd, allowHalfOpen: this.allowHalfOpen }); }

  _connectionClosed() {
    this._connections--;
    this._maybeClosed();
  }

  _maybeClosed() {
    if (this._closing && this._fd < 0 && this._connections <= 0) {
      this._closing = false;
      process.nextTick(() => this.emit('close'));
    }
  }

  address() {
    if (this._fd < 0) return null;
    if (this._pipeName !== undefined) return this._pipeName;
    try { return JSON.parse(B.netName(this._fd, false)); } catch { return null; }
  }

  close(cb) {
    this._lookup = null;
    if (typeof cb === 'function') {
      if (!this.listening) this.once('close', () => cb(codedError('ERR_SERVER_NOT_RUNNING')));
      else this.once('close', cb);
    }
    if (this._fd >= 0) {
      acceptors.delete(this._acceptor);
      B.netAcceptStop(this._acceptor);
      this._acceptor = 0;
      try { B.close(this._fd); } catch { /* */ }
      this._fd = -1;
      this._closing = true;
    }
    this._maybeClosed();
    return this;
  }

  [Symbol.asyncDispose]() {
    return new Promise((resolve) => this.close(() => resolve()));
  }

  getConnections(cb) {
    process.nextTick(cb, null, this._connections);
    return this;
  }

  ref() {
    this._refed = true;
    if (this._acceptor) B.netAcceptRef(this._acceptor, true);
    return this;
  }

  unref() {
    this._refed = false;
    if (this._acceptor) B.netAcceptRef(this._acceptor, false);
    return this;
  }
}

function createServer(options, listener) { return new Server(options, listener); }

function connect(...args) {
  const [options] = normalizeArgs(args);
  const socket = new Socket(options);
  if (options.timeout) socket.setTimeout(options.timeout);
  return socket.connect(...args);
}

let autoSelectFamily = true;
let autoSelectFamilyAttemptTimeout = 250;

class SocketAddress {
  constructor(options = {}) {
    const { address = '127.0.0.1', port = 0, family = 'ipv4', flowlabel = 0 } = options;
    Object.assign(this, { address, port, family, flowlabel });
  }
}

class BlockList {
  constructor() { this._rules = []; }
  addAddress(address, family = 'ipv4') { this._rules.push({ kind: 'address', address, family }); }
  addRange(start, end, family = 'ipv4') { this._rules.push({ kind: 'range', start, end, family }); }
  addSubnet(network, prefix, family = 'ipv4') { this._rules.push({ kind: 'subnet', network, prefix, family }); }
  check(address) { return this._rules.some((r) => r.kind === 'address' && r.address === address); }
  get rules() { return this._rules.map((r) => `${r.kind} ${r.address || r.network || r.start}`); }
}

// _setSimultaneousAccepts set a Windows-only option: it only warns
// (DEP0121, once), as on other platforms.
let warnSimultaneousAccepts = true;
function _setSimultaneousAccepts() {
  if (!warnSimultaneousAccepts) return;
  warnSimultaneousAccepts = false;
  process.emitWarning('net._setSimultaneousAccepts() is deprecated and will be removed.', 'DeprecationWarning', 'DEP0121');
}

// Node's net.Socket and net.Server construct when called without new.
const SocketFn = callable(Socket);
const ServerFn = callable(Server);

module.exports = {
  Socket: SocketFn,
  Stream: SocketFn,
  Server: ServerFn,
  createServer,
  connect,
  createConnection: connect,
  isIP,
  isIPv4,
  isIPv6,
  SocketAddress,
  BlockList,
  getDefaultAutoSelectFamily: () => autoSelectFamily,
  setDefaultAutoSelectFamily: (v) => { autoSelectFamily = !!v; },
  getDefaultAutoSelectFamilyAttemptTimeout: () => autoSelectFamilyAttemptTimeout,
  setDefaultAutoSelectFamilyAttemptTimeout: (v) => { autoSelectFamilyAttemptTimeout = v; },
  _setSimultaneousAccepts,
  _request: request,
  _kFd: kFd,
  // _hasRead: whether a socket has started reading its descriptor
  // (tls.js moves only an unread descriptor to a TLS socket).
  _hasRead: (socket) => socket[kReader] !== null || socket.readableLength > 0,
  _exceptionWithHostPort: exceptionWithHostPort,
  _validatePort: validatePort,
  _clusterWorker: clusterWorker,
};
