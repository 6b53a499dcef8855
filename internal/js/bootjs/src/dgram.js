'use strict';
// dgram: UDP sockets on the kernel's network stack. Datagrams to the VM's
// own addresses stay in the VM; others go to the host network where the
// policy allows ("connect" rules on the destination; binding a fixed
// port needs "listen").
//
// The socket's states, argument checks and error messages follow Node's
// lib/dgram.js: a socket binds (to an ephemeral port) before its first
// send or connect, and what is asked for while it binds waits in a queue.
// A connected socket is the kernel's unconnected one with the peer kept
// here: sends go to the peer and datagrams from others are dropped, as
// the kernel of a connected UDP socket does.
const { B, takeBytes, giveBytes } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const EventEmitter = require('./events.js');
const net = require('./net.js');
const { codedError } = require('./internal/errors.js');

const receivers = new Map();
loop.onEvent('udpmsg', (h, n, code, payload) => {
  const fn = receivers.get(h);
  if (!fn) return;
  if (code) { receivers.delete(h); fn(null, code); return; }
  const { Buffer } = require('./buffer.js');
  fn(takeBytes(n, (k) => Buffer.allocUnsafe(k)), null, JSON.parse(payload));
});

const UNBOUND = 0;
const BINDING = 1;
const BOUND = 2;
const DISCONNECTED = 0;
const CONNECTING = 1;
const CONNECTED = 2;

const kState = Symbol('state');
const bufferTypes = ['string', 'Buffer', 'TypedArray', 'DataView'];

// errnoError is Node's ErrnoException for a socket call: "setTTL EINVAL".
function errnoError(code, syscall) { return net._exceptionWithHostPort(code, syscall); }

function validateString(v, name) {
  if (typeof v !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type string', v);
}

function validateNumber(v, name) {
  if (typeof v !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', v);
}

function sliceBuffer(buffer, offset, length) {
  const { Buffer } = require('./buffer.js');
  if (typeof buffer === 'string') buffer = Buffer.from(buffer);
  else if (!ArrayBuffer.isView(buffer)) throw codedError('ERR_INVALID_ARG_TYPE', 'buffer', bufferTypes, buffer);
  offset >>>= 0;
  length >>>= 0;
  if (offset > buffer.byteLength) throw codedError('ERR_BUFFER_OUT_OF_BOUNDS', 'offset');
  if (offset + length > buffer.byteLength) throw codedError('ERR_BUFFER_OUT_OF_BOUNDS', 'length');
  return Buffer.from(buffer.buffer, buffer.byteOffset + offset, length);
}

// toList turns what send was given into a list of Buffers, or null when
// an element of a list is not one.
function toList(buffer) {
  const { Buffer } = require('./buffer.js');
  const one = (b) => {
    if (typeof b === 'string') return Buffer.from(b);
    if (ArrayBuffer.isView(b)) return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    return null;
  };
  if (!Array.isArray(buffer)) {
    const b = one(buffer);
    if (b === null) throw codedError('ERR_INVALID_ARG_TYPE', 'buffer', bufferTypes, buffer);
    return [b];
  }
  const list = buffer.map(one);
  if (list.includes(null)) throw codedError('ERR_INVALID_ARG_TYPE', 'buffer list arguments', bufferTypes, buffer);
  return list;
}

function healthCheck(socket) {
  if (!socket[kState].open) throw codedError('ERR_SOCKET_DGRAM_NOT_RUNNING');
}

function stopReceiving(socket) {
  const st = socket[kState];
  if (st.h) { receivers.delete(st.h); B.readStop(st.h); st.h = 0; }
}

// isMulticast tells whether ip is a multicast group of the socket's family.
function isMulticast(ip, v6) {
  if (v6) return net.isIPv6(ip) && /^ff/i.test(ip);
  if (!net.isIPv4(ip)) return false;
  const first = +ip.split('.')[0];
  return first >= 224 && first <= 239;
}

class Socket extends EventEmitter {
  constructor(type, listener) {
    super();
    let options = {};
    if (type !== null && typeof type === 'object') {
      options = type;
      type = options.type;
    }
    if (type !== 'udp4' && type !== 'udp6') throw codedError('ERR_SOCKET_BAD_TYPE');
    let lookup = options.lookup;
    if (lookup !== undefined && typeof lookup !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'lookup', 'of type function', lookup);
    // As Node's: dns.lookup as it is when the socket is made.
    if (lookup === undefined) lookup = require('./dns.js').lookup;
    for (const name of ['recvBufferSize', 'sendBufferSize']) {
      if (options[name] !== undefined && typeof options[name] !== 'number') {
        throw codedError('ERR_INVALID_ARG_TYPE', `options.${name}`, 'of type number', options[name]);
      }
    }
    const signal = options.signal;
    if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.signal', 'an instance of AbortSignal', signal);
    }
    this.type = type;
    this[kState] = {
      open: true,
      fd: -1,
      h: 0,
      bindState: UNBOUND,
      connectState: DISCONNECTED,
      peer: null,
      queue: undefined,
      refed: true,
      reuseAddr: !!options.reuseAddr,
      reusePort: !!options.reusePort,
      // What setRecvBufferSize and setSendBufferSize set last (0: the
      // kernel's default).
      bufSize: { rcvbuf: options.recvBufferSize | 0, sndbuf: options.sendBufferSize | 0 },
      lookup: (address, cb) => lookup(address || (type === 'udp4' ? '127.0.0.1' : '::1'), type === 'udp4' ? 4 : 6, cb),
    };
    if (typeof listener === 'function') this.on('message', listener);
    if (signal !== undefined) {
      const onAborted = () => { if (this[kState].open) this.close(); };
      if (signal.aborted) onAborted();
      else {
        signal.addEventListener('abort', onAborted);
        this.once('close', () => signal.removeEventListener('abort', onAborted));
      }
    }
  }

  _fd() {
    const st = this[kState];
    if (st.fd < 0) st.fd = B.netSocket(this.type === 'udp4' ? 4 : 6, 2);
    return st.fd;
  }

  _startReceiving() {
    const st = this[kState];
    if (st.h) return;
    const h = require('./internal/reader.js').newHandle();
    st.h = h;
    receivers.set(h, (buf, code, from) => {
      if (code) { this.emit('error', errnoError(code, 'recvmsg')); return; }
      const peer = st.connectState === CONNECTED ? st.peer : null;
      if (peer && (peer.address !== from.address || peer.port !== from.port)) return;
      this.emit('message', buf, { address: from.address, family: from.family, port: from.port, size: buf.length });
    });
    B.udpRecvStart(st.fd, h);
    if (!st.refed) B.readRef(h, false);
  }

  bind(port, address) {
    healthCheck(this);
    const st = this[kState];
    if (st.bindState !== UNBOUND) throw codedError('ERR_SOCKET_ALREADY_BOUND');
    st.bindState = BINDING;
    const cb = arguments.length && arguments[arguments.length - 1];
    if (typeof cb === 'function') {
      // A failed bind drops its callback, so that retrying bind() does
      // not pile up 'listening' listeners (Node's fix for #30209).
      const removeListeners = () => {
        this.removeListener('error', removeListeners);
        this.removeListener('listening', onListening);
      };
      const onListening = () => { removeListeners(); cb.call(this); };
      this.on('error', removeListeners);
      this.on('listening', onListening);
    }
    let exclusive = false;
    if (port !== null && typeof port === 'object') {
      address = port.address || '';
      exclusive = !!port.exclusive;
      port = port.port;
    } else if (typeof address === 'function') {
      address = '';
    }
    // bind(cb) binds port 0, as Node's handle reads a function as 0.
    if (typeof port !== 'number' && typeof port !== 'string') port = 0;
    if (!address) address = this.type === 'udp4' ? '0.0.0.0' : '::';
    st.lookup(address, (err, ip) => {
      if (!st.open) return;
      if (err) {
        st.bindState = UNBOUND;
        this.emit('error', err);
        return;
      }
      // As Node's: in a cluster worker a socket not bound exclusively
      // shares the port its primary picks for the address (cluster.js).
      const cluster = exclusive ? null : net._clusterWorker();
      if (cluster === null) {
        this._bindNow(ip, port || 0, st.reusePort);
        return;
      }
      cluster._getServer(this, { address: ip, port: port || 0, addressType: this.type, fd: undefined, flags: 0 }, (code, shared) => {
        if (!st.open) return;
        if (code) {
          st.bindState = UNBOUND;
          this.emit('error', net._exceptionWithHostPort(code, 'bind', ip, port));
          return;
        }
        this._bindNow(ip, shared, true);
      });
    });
    return this;
  }

  _bindNow(ip, port, reusePort) {
    const st = this[kState];
    try {
      this._fd();
      if (st.reuseAddr) B.netSetOpt(st.fd, 'reuseaddr', 1);
      if (reusePort) B.netSetOpt(st.fd, 'reuseport', 1);
      B.netBind(st.fd, ip, port);
    } catch (e) {
      st.bindState = UNBOUND;
      this.emit('error', net._exceptionWithHostPort(typeof e === 'string' ? e : 'EINVAL', 'bind', ip, port));
      return;
    }
    st.bindState = BOUND;
    this._startReceiving();
    for (const name of ['rcvbuf', 'sndbuf']) {
      if (st.bufSize[name]) this._setBufferSize(name, st.bufSize[name]);
    }
    this.emit('listening');
  }

  // _enqueue runs fn once the socket is bound; a failed bind drops the
  // queue (Node's enqueue).
  _enqueue(fn) {
    const st = this[kState];
    if (st.queue === undefined) {
      st.queue = [];
      const onError = () => {
        this.removeListener('listening', onListening);
        st.queue = undefined;
      };
      const onListening = () => {
        this.removeListener(EventEmitter.errorMonitor, onError);
        const queue = st.queue;
        st.queue = undefined;
        for (const f of queue) f();
      };
      this.once(EventEmitter.errorMonitor, onError);
      this.once('listening', onListening);
    }
    st.queue.push(fn);
  }

  connect(port, address, callback) {
    port = validatePort(port, 'Port', false);
    if (typeof address === 'function') {
      callback = address;
      address = '';
    } else if (address === undefined) {
      address = '';
    }
    validateString(address, 'address');
    const st = this[kState];
    if (st.connectState !== DISCONNECTED) throw codedError('ERR_SOCKET_DGRAM_IS_CONNECTED');
    st.connectState = CONNECTING;
    if (st.bindState === UNBOUND) this.bind({ port: 0, exclusive: true }, null);
    if (st.bindState !== BOUND) {
      this._enqueue(() => this._connect(port, address, callback));
      return;
    }
    this._connect(port, address, callback);
  }

  _connect(port, address, callback) {
    const st = this[kState];
    if (callback) this.once('connect', callback);
    st.lookup(address, (ex, ip) => {
      if (!st.open) return;
      if (ex) {
        st.connectState = DISCONNECTED;
        process.nextTick(() => {
          if (callback) {
            this.removeListener('connect', callback);
            callback(ex);
          } else {
            this.emit('error', ex);
          }
        });
        return;
      }
      st.peer = { address: ip, port };
      st.connectState = CONNECTED;
      process.nextTick(() => this.emit('connect'));
    });
  }

  disconnect() {
    const st = this[kState];
    if (st.connectState !== CONNECTED) throw codedError('ERR_SOCKET_DGRAM_NOT_CONNECTED');
    st.peer = null;
    st.connectState = DISCONNECTED;
  }

  send(buffer, offset, length, port, address, callback) {
    const st = this[kState];
    const connected = st.connectState === CONNECTED;
    if (!connected) {
      if (address || (port && typeof port !== 'function')) {
        buffer = sliceBuffer(buffer, offset, length);
      } else {
        callback = port;
        port = offset;
        address = length;
      }
    } else {
      if (typeof length === 'number') {
        buffer = sliceBuffer(buffer, offset, length);
        if (typeof port === 'function') {
          callback = port;
          port = null;
        }
      } else {
        callback = offset;
      }
      if (port || address) throw codedError('ERR_SOCKET_DGRAM_IS_CONNECTED');
    }
    const list = toList(buffer);
    if (!connected) port = validatePort(port, 'Port', false);
    if (typeof callback !== 'function') callback = undefined;
    if (typeof address === 'function') {
      callback = address;
      address = undefined;
    } else if (address != null) {
      validateString(address, 'address');
    }
    healthCheck(this);
    if (st.bindState === UNBOUND) this.bind({ port: 0, exclusive: true }, null);
    if (st.bindState !== BOUND) {
      this._enqueue(() => this.send(list, port, address, callback));
      return;
    }
    const doSend = (ex, ip) => {
      if (ex) {
        if (callback) process.nextTick(callback, ex);
        else process.nextTick(() => this.emit('error', ex));
        return;
      }
      if (!st.open) return;
      const to = connected ? st.peer : { address: ip, port };
      const { Buffer } = require('./buffer.js');
      const data = list.length === 1 ? list[0] : Buffer.concat(list);
      // As Node's: an error is the callback's; without one it is dropped.
      const done = (code) => {
        if (!callback) return;
        if (code) callback(net._exceptionWithHostPort(code, 'send', address, port));
        else callback(null, data.length);
      };
      try {
        net._request((id) => B.udpSend(st.fd, giveBytes(data), to.address, to.port, id), done);
      } catch (e) {
        process.nextTick(done, typeof e === 'string' ? e : 'EINVAL');
      }
    };
    if (connected) doSend(null, null);
    else st.lookup(address, doSend);
  }

  remoteAddress() {
    healthCheck(this);
    const st = this[kState];
    if (st.connectState !== CONNECTED) throw codedError('ERR_SOCKET_DGRAM_NOT_CONNECTED');
    return { address: st.peer.address, family: net.isIPv6(st.peer.address) ? 'IPv6' : 'IPv4', port: st.peer.port };
  }

  address() {
    healthCheck(this);
    const st = this[kState];
    if (st.fd < 0) throw errnoError('EBADF', 'getsockname');
    return JSON.parse(B.netName(st.fd, false));
  }

  close(callback) {
    const st = this[kState];
    if (typeof callback === 'function') this.on('close', callback);
    if (st.queue !== undefined) {
      st.queue.push(() => this.close());
      return this;
    }
    healthCheck(this);
    stopReceiving(this);
    if (st.fd >= 0) { try { B.close(st.fd); } catch { /* */ } st.fd = -1; }
    st.open = false;
    process.nextTick(() => this.emit('close'));
    return this;
  }

  [Symbol.asyncDispose]() {
    if (!this[kState].open) return Promise.resolve();
    return new Promise((resolve, reject) => this.close((err) => (err ? reject(err) : resolve())));
  }

  ref() {
    const st = this[kState];
    st.refed = true;
    if (st.h) B.readRef(st.h, true);
    return this;
  }

  unref() {
    const st = this[kState];
    st.refed = false;
    if (st.h) B.readRef(st.h, false);
    return this;
  }

  // _bound returns the descriptor of a bound socket, or throws syscall
  // EBADF as libuv's option calls do before the socket has one.
  _bound(syscall) {
    healthCheck(this);
    const st = this[kState];
    if (st.bindState !== BOUND) throw errnoError('EBADF', syscall);
    return st.fd;
  }

  setBroadcast(arg) {
    const fd = this._bound('setBroadcast');
    try { B.netSetOpt(fd, 'broadcast', arg ? 1 : 0); } catch (e) { throw errnoError(typeof e === 'string' ? e : 'EINVAL', 'setBroadcast'); }
  }

  // The kernel's UDP has no TTL or multicast: the settings are checked
  // as Linux checks them and then have nothing to change.
  setTTL(ttl) {
    validateNumber(ttl, 'ttl');
    this._bound('setTTL');
    if (ttl < 1 || ttl > 255) throw errnoError('EINVAL', 'setTTL');
    return ttl;
  }

  setMulticastTTL(ttl) {
    validateNumber(ttl, 'ttl');
    this._bound('setMulticastTTL');
    if (ttl < 0 || ttl > 255) throw errnoError('EINVAL', 'setMulticastTTL');
    return ttl;
  }

  setMulticastLoopback(arg) {
    this._bound('setMulticastLoopback');
    return arg;
  }

  setMulticastInterface(interfaceAddress) {
    healthCheck(this);
    validateString(interfaceAddress, 'interfaceAddress');
    this._bound('setMulticastInterface');
    const v6 = this.type === 'udp6';
    const ip = v6 ? interfaceAddress.replace(/%.*$/, '') : interfaceAddress;
    if (!(v6 ? net.isIPv6(ip) : net.isIPv4(ip))) throw errnoError('EINVAL', 'setMulticastInterface');
    // An IPv4 interface is named by one of its addresses: the VM's
    // loopback, or any (0.0.0.0).
    if (!v6 && ip !== '0.0.0.0' && !ip.startsWith('127.')) throw errnoError('EADDRNOTAVAIL', 'setMulticastInterface');
  }

  _membership(syscall, multicastAddress, interfaceAddress) {
    healthCheck(this);
    if (!multicastAddress) throw codedError('ERR_MISSING_ARGS', 'multicastAddress');
    validateString(multicastAddress, 'multicastAddress');
    if (interfaceAddress !== undefined) validateString(interfaceAddress, 'interfaceAddress');
    if (!isMulticast(multicastAddress, this.type === 'udp6')) throw errnoError('EINVAL', syscall);
    throw errnoError('ENOTSUP', syscall);
  }

  addMembership(multicastAddress, interfaceAddress) { this._membership('addMembership', multicastAddress, interfaceAddress); }
  dropMembership(multicastAddress, interfaceAddress) { this._membership('dropMembership', multicastAddress, interfaceAddress); }

  _sourceMembership(syscall, sourceAddress, groupAddress, interfaceAddress) {
    healthCheck(this);
    validateString(sourceAddress, 'sourceAddress');
    validateString(groupAddress, 'groupAddress');
    if (interfaceAddress !== undefined) validateString(interfaceAddress, 'interfaceAddress');
    if (!isMulticast(groupAddress, this.type === 'udp6') || !net.isIP(sourceAddress)) throw errnoError('EINVAL', syscall);
    throw errnoError('ENOTSUP', syscall);
  }

  addSourceSpecificMembership(sourceAddress, groupAddress, interfaceAddress) {
    this._sourceMembership('addSourceSpecificMembership', sourceAddress, groupAddress, interfaceAddress);
  }

  dropSourceSpecificMembership(sourceAddress, groupAddress, interfaceAddress) {
    this._sourceMembership('dropSourceSpecificMembership', sourceAddress, groupAddress, interfaceAddress);
  }

  setRecvBufferSize(n) { this._setBufferSize('rcvbuf', n); }
  setSendBufferSize(n) { this._setBufferSize('sndbuf', n); }
  getRecvBufferSize() { return this._getBufferSize('rcvbuf'); }
  getSendBufferSize() { return this._getBufferSize('sndbuf'); }

  _setBufferSize(name, n) {
    if (!Number.isInteger(n) || n <= 0 || n > 0x7fffffff) throw codedError('ERR_SOCKET_BAD_BUFFER_SIZE');
    const st = this[kState];
    if (st.bindState !== BOUND) throw bufferSizeError(name === 'rcvbuf' ? 'recv' : 'send');
    try { B.netSetOpt(st.fd, name, n); } catch { /* the kernel keeps its own size */ }
    st.bufSize[name] = n;
  }

  _getBufferSize(name) {
    const st = this[kState];
    if (st.bindState !== BOUND) throw bufferSizeError(name === 'rcvbuf' ? 'recv' : 'send');
    // Linux reports twice the size asked for (the kernel's bookkeeping
    // share), and 212992 by default.
    return st.bufSize[name] ? st.bufSize[name] * 2 : 212992;
  }

  // sendto is Node's older send with every argument checked.
  sendto(buffer, offset, length, port, address, callback) {
    validateNumber(offset, 'offset');
    validateNumber(length, 'length');
    validateNumber(port, 'port');
    validateString(address, 'address');
    this.send(buffer, offset, length, port, address, callback);
  }

  getSendQueueSize() { return 0; }
  getSendQueueCount() { return 0; }
}

// bufferSizeError is Node's ERR_SOCKET_BUFFER_SIZE for a socket not bound.
function bufferSizeError(which) {
  const err = new Error(`Could not get or set buffer size: uv_${which}_buffer_size returned EBADF (bad file descriptor)`);
  err.name = 'SystemError';
  err.code = 'ERR_SOCKET_BUFFER_SIZE';
  err.info = { errno: -9, code: 'EBADF', message: 'bad file descriptor', syscall: `uv_${which}_buffer_size` };
  err.errno = -9;
  err.syscall = `uv_${which}_buffer_size`;
  return err;
}

// The internals Node's Socket once exposed still read and write, with
// DEP0112's warning.
const { deprecate } = require('./util.js');
for (const [name, key] of [['_handle', 'fd'], ['_receiving', 'h'], ['_bindState', 'bindState'], ['_queue', 'queue'], ['_reuseAddr', 'reuseAddr']]) {
  const msg = `Socket.prototype.${name} is deprecated`;
  Object.defineProperty(Socket.prototype, name, {
    get: deprecate(function () { return this[kState][key]; }, msg, 'DEP0112'),
    set: deprecate(function (v) { this[kState][key] = v; }, msg, 'DEP0112'),
    configurable: true,
  });
}
Socket.prototype._healthCheck = deprecate(function () { healthCheck(this); }, 'Socket.prototype._healthCheck() is deprecated', 'DEP0112');
Socket.prototype._stopReceiving = deprecate(function () { stopReceiving(this); }, 'Socket.prototype._stopReceiving() is deprecated', 'DEP0112');

function validatePort(port, name, allowZero) { return net._validatePort(port, name, allowZero); }

function createSocket(type, listener) { return new Socket(type, listener); }

module.exports = { Socket, createSocket };
