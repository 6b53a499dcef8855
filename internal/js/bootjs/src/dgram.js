'use strict';
// dgram: UDP sockets on the kernel's network stack. Datagrams to the VM's
// own addresses stay in the VM; others go to the host network where the
// policy allows ("connect" rules on the destination; binding a fixed
// port needs "listen").
const { B, takeBytes } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const EventEmitter = require('./events.js');
const net = require('./net.js');
const { codedError } = require('./internal/errors.js');

const receivers = new Map();
let nextReceiver = 1;
loop.onEvent('udpmsg', (h, n, code, payload) => {
  const fn = receivers.get(h);
  if (!fn) return;
  if (code) { receivers.delete(h); fn(null, code); return; }
  const { Buffer } = require('./buffer.js');
  fn(takeBytes(n, (k) => Buffer.allocUnsafe(k)), null, JSON.parse(payload));
});

function toBuffer(msg) {
  const { Buffer } = require('./buffer.js');
  if (Array.isArray(msg)) return Buffer.concat(msg.map(toBuffer));
  if (typeof msg === 'string') return Buffer.from(msg);
  if (msg instanceof Uint8Array) return Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength);
  if (ArrayBuffer.isView(msg)) return Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength);
  throw codedError('ERR_INVALID_ARG_TYPE', 'msg', 'of type string or an instance of Buffer, TypedArray, or DataView', msg);
}

class Socket extends EventEmitter {
  constructor(options, listener) {
    super();
    if (typeof options === 'string') options = { type: options };
    if (!options || (options.type !== 'udp4' && options.type !== 'udp6')) {
      throw codedError('ERR_SOCKET_BAD_TYPE');
    }
    this.type = options.type;
    this._fd = -1;
    this._h = 0;
    this._bound = false;
    this._connected = null;
    this._refed = true;
    if (listener) this.on('message', listener);
  }

  _ensure() {
    if (this._fd < 0) this._fd = B.netSocket(this.type === 'udp4' ? 4 : 6, 2);
    return this._fd;
  }

  _startReceiving() {
    if (this._h) return;
    const h = nextReceiver++;
    this._h = h;
    receivers.set(h, (buf, code, from) => {
      if (code) { this.emit('error', net._exceptionWithHostPort(code, 'recvmsg')); return; }
      this.emit('message', buf, { address: from.address, family: from.family, port: from.port, size: buf.length });
    });
    B.udpRecvStart(this._fd, h);
    if (!this._refed) B.readRef(h, false);
  }

  bind(...args) {
    let port = 0;
    let address = '';
    let cb = typeof args[args.length - 1] === 'function' ? args.pop() : null;
    if (args[0] !== null && typeof args[0] === 'object') ({ port = 0, address = '' } = args[0]);
    else { if (args[0] !== undefined) port = args[0]; if (typeof args[1] === 'string') address = args[1]; }
    if (this._bound) throw codedError('ERR_SOCKET_ALREADY_BOUND');
    if (cb) this.once('listening', cb);
    const finish = (addr) => {
      try {
        this._ensure();
        B.netBind(this._fd, addr, port);
      } catch (e) {
        // A failed bind drops its callback, so that retrying bind() does
        // not pile up 'listening' listeners (Node's fix for #30209).
        if (cb) this.removeListener('listening', cb);
        process.nextTick(() => this.emit('error', net._exceptionWithHostPort(typeof e === 'string' ? e : 'EINVAL', 'bind', addr || (this.type === 'udp4' ? '0.0.0.0' : '::'), port)));
        return;
      }
      this._bound = true;
      this._startReceiving();
      process.nextTick(() => this.emit('listening'));
    };
    if (address && !net.isIP(address)) {
      require('./dns.js').lookup(address, { family: this.type === 'udp4' ? 4 : 6 }, (err, a) => (err ? this.emit('error', err) : finish(a)));
    } else finish(address || (this.type === 'udp4' ? '0.0.0.0' : ''));
    return this;
  }

  send(msg, ...rest) {
    let cb = typeof rest[rest.length - 1] === 'function' ? rest.pop() : null;
    let port;
    let address;
    if (typeof rest[0] === 'number' && typeof rest[1] === 'number' && rest.length >= 2 && (rest.length > 2 || this._connected)) {
      const [offset, length] = rest;
      msg = toBuffer(msg).subarray(offset, offset + length);
      rest = rest.slice(2);
    }
    [port, address] = rest;
    if (this._connected) {
      if (port !== undefined) throw codedError('ERR_SOCKET_DGRAM_IS_CONNECTED');
      ({ port, address } = this._connected);
    }
    const buf = toBuffer(msg);
    if (address === undefined || address === null) address = this.type === 'udp4' ? '127.0.0.1' : '::1';
    try {
      this._ensure();
      if (!this._bound) { this._bound = true; this._startReceiving(); }
      net._request((id) => B.udpSend(this._fd, require('./internal/bridge.js').giveBytes(buf), address, port, id), (code) => {
        const err = code ? net._exceptionWithHostPort(code, 'send', address, port) : null;
        if (cb) cb(err, err ? undefined : buf.length);
        else if (err) this.emit('error', err);
      });
    } catch (e) {
      const err = net._exceptionWithHostPort(typeof e === 'string' ? e : 'EINVAL', 'send', address, port);
      if (cb) process.nextTick(cb, err); else process.nextTick(() => this.emit('error', err));
    }
  }

  connect(port, address, cb) {
    if (typeof address === 'function') { cb = address; address = undefined; }
    if (this._connected) throw codedError('ERR_SOCKET_DGRAM_IS_CONNECTED');
    this._connected = { port, address: address || (this.type === 'udp4' ? '127.0.0.1' : '::1') };
    process.nextTick(() => { this.emit('connect'); if (cb) cb(); });
  }

  disconnect() {
    if (!this._connected) throw codedError('ERR_SOCKET_DGRAM_NOT_CONNECTED');
    this._connected = null;
  }

  remoteAddress() {
    if (!this._connected) throw codedError('ERR_SOCKET_DGRAM_NOT_CONNECTED');
    return { address: this._connected.address, family: this.type === 'udp4' ? 'IPv4' : 'IPv6', port: this._connected.port };
  }

  address() {
    if (this._fd < 0) throw codedError('ERR_SOCKET_DGRAM_NOT_RUNNING');
    return JSON.parse(B.netName(this._fd, false));
  }

  close(cb) {
    if (cb) this.once('close', cb);
    if (this._h) { receivers.delete(this._h); B.readStop(this._h); this._h = 0; }
    if (this._fd >= 0) { try { B.close(this._fd); } catch { /* */ } this._fd = -1; }
    process.nextTick(() => this.emit('close'));
    return this;
  }

  ref() { this._refed = true; if (this._h) B.readRef(this._h, true); return this; }
  unref() { this._refed = false; if (this._h) B.readRef(this._h, false); return this; }
  setBroadcast(on) { this._ensure(); B.netSetOpt(this._fd, 'broadcast', on ? 1 : 0); }
  setTTL(ttl) { return ttl; }
  setMulticastTTL(ttl) { return ttl; }
  setMulticastLoopback(on) { return on; }
  setMulticastInterface() {}
  addMembership() { throw net._exceptionWithHostPort('ENOTSUP', 'addMembership'); }
  dropMembership() { throw net._exceptionWithHostPort('ENOTSUP', 'dropMembership'); }
  addSourceSpecificMembership() { throw net._exceptionWithHostPort('ENOTSUP', 'addSourceSpecificMembership'); }
  dropSourceSpecificMembership() { throw net._exceptionWithHostPort('ENOTSUP', 'dropSourceSpecificMembership'); }
  setRecvBufferSize(n) { this._ensure(); B.netSetOpt(this._fd, 'rcvbuf', n); }
  setSendBufferSize(n) { this._ensure(); B.netSetOpt(this._fd, 'sndbuf', n); }
  getRecvBufferSize() { return 212992; }
  getSendBufferSize() { return 212992; }
  getSendQueueSize() { return 0; }
  getSendQueueCount() { return 0; }
}

function createSocket(type, listener) { return new Socket(type, listener); }

module.exports = { Socket, createSocket };
