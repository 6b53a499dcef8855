'use strict';
// tls: TLS sockets whose handshake and records run in the kernel, on the
// host's crypto/tls (kernel.Process.StartTLS): the guest's socket carries
// plaintext once the handshake is done, and certificates are verified
// against the host's trust store (or the given ca) outside the isolate.
const { B } = require('./internal/bridge.js');
const net = require('./net.js');
const { codedError } = require('./internal/errors.js');

// Node's messages for OpenSSL's verification codes.
const messages = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in certificate chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the first certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'unable to get issuer certificate',
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  CERT_UNTRUSTED: 'certificate not trusted',
  ECONNRESET: 'Client network socket disconnected before secure TLS connection was established',
  ETIMEDOUT: 'TLS handshake timed out',
};

function tlsError(code, payload, host) {
  let msg = messages[code] || payload || code;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') msg = `Hostname/IP does not match certificate's altnames: Host: ${host}. is not in the cert's altnames`;
  const err = new Error(msg);
  err.code = code;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') { err.reason = msg; err.host = host; }
  return err;
}

function pemList(v) {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((x) => (typeof x === 'string' ? x : require('./buffer.js').Buffer.from(x).toString('latin1')));
}

function pemOne(v) {
  const l = pemList(v);
  return l.length ? l.join('\n') : undefined;
}

const kInfo = Symbol('tlsInfo');

class TLSSocket extends net.Socket {
  constructor(socket, options = {}) {
    const fd = socket instanceof net.Socket ? socket[net._kFd] : undefined;
    super({ fd: fd !== undefined && fd >= 0 ? fd : undefined, allowHalfOpen: options.allowHalfOpen });
    this.encrypted = true;
    this.authorized = false;
    this.authorizationError = null;
    this.alpnProtocol = false;
    this.servername = null;
    this._tlsOptions = options;
    this[kInfo] = null;
    this._secureWait = true;
    if (socket instanceof net.Socket && fd !== undefined && fd >= 0) {
      // The descriptor moves to this socket; the plain one lets it go.
      socket[net._kFd] = -1;
      this._peer = socket._peer;
    }
  }

  _onConnected() {
    this.emit('connect');
    this._startTLS();
  }

  _startTLS() {
    const o = this._tlsOptions;
    const server = !!o.isServer;
    const req = {
      server,
      servername: server ? '' : (o.servername !== undefined ? o.servername : (net.isIP(o.host || '') ? '' : (o.host || 'localhost'))),
      rejectUnauthorized: o.rejectUnauthorized !== undefined ? !!o.rejectUnauthorized : process.env.NODE_TLS_REJECT_UNAUTHORIZED !== '0',
      ca: pemList(o.ca),
      cert: pemOne(o.cert),
      key: pemOne(o.key),
      alpn: Array.isArray(o.ALPNProtocols) ? o.ALPNProtocols.map(String) : [],
      requestCert: !!o.requestCert,
    };
    if (o.pfx) { process.nextTick(() => this.destroy(codedError('ERR_FEATURE_UNAVAILABLE_ON_PLATFORM', 'the pfx option'))); return; }
    if (!server) this.servername = req.servername || null;
    try {
      net._request((id) => B.tlsStart(this[net._kFd], JSON.stringify(req), id), (code, payload) => {
        if (this.destroyed) return;
        if (code) {
          const err = tlsError(code, payload, req.servername);
          if (server) this.emit('_tlsError', err);
          this.destroy(err);
          return;
        }
        const info = JSON.parse(payload);
        this[kInfo] = info;
        this.authorized = !!info.authorized;
        this.authorizationError = info.authorizationError || null;
        this.alpnProtocol = info.alpnProtocol || false;
        if (server) this.servername = info.servername || false;
        this._secureWait = false;
        this.emit(server ? '_secure' : 'secureConnect');
        if (!server) this.emit('session', require('./buffer.js').Buffer.alloc(0));
        this._flushPending();
      });
    } catch (e) {
      process.nextTick(() => this.destroy(tlsError(typeof e === 'string' ? e : 'EINVAL')));
    }
  }

  getPeerCertificate(detailed) {
    const info = this[kInfo];
    if (!info || !info.peerCertificates || info.peerCertificates.length === 0) return {};
    const certs = info.peerCertificates.map((c) => ({ ...c, raw: require('./buffer.js').Buffer.from(c.raw, 'base64') }));
    if (detailed) {
      for (let i = 0; i < certs.length; i++) certs[i].issuerCertificate = certs[i + 1] || certs[i];
    }
    return certs[0];
  }

  getCertificate() { return {}; }
  getProtocol() { return this[kInfo] ? this[kInfo].protocol : null; }
  getCipher() {
    const i = this[kInfo];
    return i ? { name: i.cipher, standardName: i.cipher, version: i.protocol } : {};
  }
  getSession() { return undefined; }
  getTLSTicket() { return undefined; }
  isSessionReused() { return false; }
  getEphemeralKeyInfo() { return {}; }
  getFinished() { return undefined; }
  getPeerFinished() { return undefined; }
  exportKeyingMaterial() { throw codedError('ERR_FEATURE_UNAVAILABLE_ON_PLATFORM', 'exportKeyingMaterial'); }
  setMaxSendFragment() { return false; }
  setServername(name) { this.servername = name; }
  renegotiate(opts, cb) { if (cb) process.nextTick(cb, codedError('ERR_TLS_RENEGOTIATION_DISABLED')); return false; }
  disableRenegotiation() {}
  enableTrace() {}
}

function connect(...args) {
  let options = {};
  let cb = null;
  if (typeof args[args.length - 1] === 'function') cb = args.pop();
  if (args[0] !== null && typeof args[0] === 'object') options = { ...args[0] };
  else {
    if (args.length) options.port = args[0];
    if (typeof args[1] === 'string') options.host = args[1];
    if (args[2] && typeof args[2] === 'object') Object.assign(options, args[2]);
    else if (args[1] && typeof args[1] === 'object') Object.assign(options, args[1]);
  }
  const s = new TLSSocket(options.socket, options);
  if (cb) s.once('secureConnect', cb);
  if (options.timeout) s.setTimeout(options.timeout);
  if (options.socket) {
    // An already connected socket: the handshake starts now.
    process.nextTick(() => s._startTLS());
    return s;
  }
  if (options.path) s.connect({ path: options.path });
  else s.connect({ port: options.port, host: options.host || 'localhost', family: options.family });
  return s;
}

class Server extends net.Server {
  constructor(options, listener) {
    if (typeof options === 'function') { listener = options; options = {}; }
    super(options);
    this._tlsOptions = { ...(options || {}), isServer: true };
    if (listener) this.on('secureConnection', listener);
  }

  _wrapAccepted(fd) {
    const s = new TLSSocket(null, { ...this._tlsOptions, allowHalfOpen: this.allowHalfOpen });
    s._attach(fd, null);
    s.on('_tlsError', (err) => this.emit('tlsClientError', err, s));
    s.on('_secure', () => this.emit('secureConnection', s));
    process.nextTick(() => { if (!s.destroyed) s._startTLS(); });
    return s;
  }

  setSecureContext(options) { Object.assign(this._tlsOptions, options); }
  addContext() {}
  getTicketKeys() { return require('./buffer.js').Buffer.alloc(48); }
  setTicketKeys() {}
}

function createServer(options, listener) { return new Server(options, listener); }

function createSecureContext(options = {}) { return { context: {}, options }; }

function checkServerIdentity(hostname, cert) {
  const names = String((cert && cert.subjectaltname) || '').split(', ').map((s) => s.replace(/^DNS:|^IP Address:/, ''));
  const ok = names.some((n) => n === hostname || (n.startsWith('*.') && hostname.endsWith(n.slice(1)) && hostname.split('.').length === n.split('.').length));
  if (ok) return undefined;
  return tlsError('ERR_TLS_CERT_ALTNAME_INVALID', undefined, hostname);
}

module.exports = {
  TLSSocket,
  Server,
  connect,
  createServer,
  createSecureContext,
  checkServerIdentity,
  getCiphers: () => ['tls_aes_128_gcm_sha256', 'tls_aes_256_gcm_sha384', 'tls_chacha20_poly1305_sha256', 'ecdhe-rsa-aes128-gcm-sha256', 'ecdhe-ecdsa-aes128-gcm-sha256'],
  rootCertificates: Object.freeze([]),
  DEFAULT_ECDH_CURVE: 'auto',
  DEFAULT_MIN_VERSION: 'TLSv1.2',
  DEFAULT_MAX_VERSION: 'TLSv1.3',
  DEFAULT_CIPHERS: 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256',
  CLIENT_RENEG_LIMIT: 3,
  CLIENT_RENEG_WINDOW: 600,
};
