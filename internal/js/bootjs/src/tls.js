'use strict';
// tls: TLS sockets whose handshake and records run in the kernel, on the
// host's crypto/tls (kernel.Process.StartTLS): the guest's socket carries
// plaintext once the handshake is done, and certificates are verified
// against the host's trust store (or the given ca) outside the isolate.
const { B } = require('./internal/bridge.js');
const net = require('./net.js');
const { codedError } = require('./internal/errors.js');
const { callable } = require('./internal/crypto_util.js');

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

function tlsError(code, payload, host, server) {
  // A server's peer that went away hung up (Node's onSocketClose).
  let msg = (server && code === 'ECONNRESET' ? 'socket hang up' : messages[code]) || payload || code;
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

// convertALPNProtocols puts protocols (names, or their wire form already)
// on out.ALPNProtocols in the wire form: each name after its length byte.
function convertALPNProtocols(protocols, out) {
  const { Buffer } = require('./buffer.js');
  if (Array.isArray(protocols)) {
    const parts = protocols.map((p, i) => {
      const b = Buffer.from(String(p));
      if (b.length > 255) {
        const err = new RangeError(`The byte length of the protocol at index ${i} exceeds the maximum length. It must be <= 255. Received ${b.length}`);
        err.code = 'ERR_OUT_OF_RANGE';
        throw err;
      }
      return Buffer.concat([Buffer.from([b.length]), b]);
    });
    out.ALPNProtocols = Buffer.concat(parts);
  } else if (ArrayBuffer.isView(protocols)) {
    out.ALPNProtocols = Buffer.from(protocols.buffer.slice(protocols.byteOffset, protocols.byteOffset + protocols.byteLength));
  }
}

// alpnNames reads ALPNProtocols given as names or in the wire form.
function alpnNames(v) {
  if (Array.isArray(v)) return v.map(String);
  if (!ArrayBuffer.isView(v)) return [];
  const b = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  const names = [];
  for (let i = 0; i < b.length && names.length < 16;) {
    const n = b[i];
    names.push(String.fromCharCode(...b.subarray(i + 1, i + 1 + n)));
    i += 1 + n;
  }
  return names;
}

const kInfo = Symbol('tlsInfo');

class TLSSocket extends net.Socket {
  constructor(socket, options = {}) {
    // A connected socket nobody has read from hands its descriptor over
    // and the kernel runs TLS on it; one already read from (an HTTP
    // CONNECT tunnel, whose response the http client parsed) keeps its
    // reader and is used as a stream: moving the descriptor left that
    // reader racing the handshake for the server's first bytes.
    const fd = socket instanceof net.Socket && !socket.connecting && !net._hasRead(socket) ? socket[net._kFd] : undefined;
    super({ fd: fd !== undefined && fd >= 0 ? fd : undefined, allowHalfOpen: options.allowHalfOpen });
    this.encrypted = true;
    this.authorized = false;
    this.authorizationError = null;
    this.alpnProtocol = false;
    this.servername = null;
    this._tlsOptions = options;
    this[kInfo] = null;
    this._secureWait = true;
    this._transport = null;
    if (fd !== undefined && fd >= 0) {
      // The descriptor moves to this socket; the plain one lets it go.
      socket[net._kFd] = -1;
      this._peer = socket._peer;
    } else if (socket) {
      this._transport = socket;
    }
    // A server side made directly on a stream starts its handshake at
    // once, as Node's does (tls.Server starts its own sockets).
    if (options.isServer && socket) this._useTransport(() => { if (!this.destroyed) this._startTLS(); });
  }

  // _useTransport runs start once this socket has a descriptor: at once,
  // when the net.Socket it wraps connects (its descriptor then moves
  // here, before that socket reads), or, for any other stream, on one
  // end of a kernel socket pair whose other end is piped to the stream.
  _useTransport(start) {
    const t = this._transport;
    this._transport = null;
    if (t === null) { process.nextTick(start); return; }
    if (t instanceof net.Socket && t[net._kFd] < 0) {
      this.connecting = true;
      const onError = (err) => this.destroy(err);
      t.once('error', onError);
      t.once('connect', () => {
        t.removeListener('error', onError);
        this.connecting = false;
        const fd = t[net._kFd];
        t[net._kFd] = -1;
        if (this.destroyed) { try { B.close(fd); } catch { /* */ } return; }
        this._attach(fd, t._peer);
        this.emit('connect');
        start();
      });
      return;
    }
    let pair;
    try {
      pair = JSON.parse(B.netSocketPair());
    } catch (e) {
      process.nextTick(() => this.destroy(require('./internal/errors.js').fromBridge(e, 'socketpair')));
      return;
    }
    this._attach(pair[0], null);
    const inner = new net.Socket({ fd: pair[1], allowHalfOpen: true });
    t.pipe(inner);
    inner.pipe(t);
    t.on('error', (err) => { inner.destroy(); this.destroy(err); });
    t.on('close', () => inner.destroy());
    // When this socket closes, what it sent last still drains to the
    // stream, which the pipe then ends.
    this.once('close', () => inner.end());
    process.nextTick(start);
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
      alpn: alpnNames(o.ALPNProtocols),
      requestCert: !!o.requestCert,
    };
    if (o.pfx) { process.nextTick(() => this.destroy(codedError('ERR_FEATURE_UNAVAILABLE_ON_PLATFORM', 'the pfx option'))); return; }
    if (!server) this.servername = req.servername || null;
    try {
      net._request((id) => B.tlsStart(this[net._kFd], JSON.stringify(req), id), (code, payload) => {
        if (this.destroyed) return;
        if (code) {
          this.destroy(tlsError(code, payload, req.servername, server));
          return;
        }
        const info = JSON.parse(payload);
        this[kInfo] = info;
        this.authorized = !!info.authorized;
        this.authorizationError = info.authorizationError || null;
        this.alpnProtocol = info.alpnProtocol || false;
        if (server) this.servername = info.servername || false;
        else if (this.authorized && !this._verifyName(req.rejectUnauthorized)) return;
        this._secureWait = false;
        if (server) {
          this.emit('_secure');
          this.emit('secure');
        } else {
          this.emit('secureConnect');
        }
        if (!server) this.emit('session', require('./buffer.js').Buffer.alloc(0));
        this._flushPending();
      });
    } catch (e) {
      process.nextTick(() => this.destroy(tlsError(typeof e === 'string' ? e : 'EINVAL')));
    }
  }

  // _verifyName checks the server's name as Node's onConnectSecure does,
  // with options.checkServerIdentity when given; a mismatch unauthorizes
  // the socket, and ends it when unauthorized peers are rejected.
  _verifyName(reject) {
    const o = this._tlsOptions;
    const hostname = o.servername || o.host || (o.socket && o.socket._host) || 'localhost';
    const check = typeof o.checkServerIdentity === 'function' ? o.checkServerIdentity : checkServerIdentity;
    let err;
    try {
      err = check(hostname, this.getPeerCertificate(true));
    } catch (e) {
      err = e;
    }
    if (!err) return true;
    this.authorized = false;
    this.authorizationError = err.code || err.message;
    if (!reject) return true;
    this.destroy(err);
    return false;
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
    s._useTransport(() => { if (!s.destroyed) s._startTLS(); });
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
    // As Node's Server: the protocols in wire form, or the callback.
    if (options && options.ALPNCallback !== undefined) {
      if (typeof options.ALPNCallback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'options.ALPNCallback', 'of type function', options.ALPNCallback);
      if (options.ALPNProtocols) throw codedError('ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS');
      this.ALPNCallback = options.ALPNCallback;
    }
    if (options && options.ALPNProtocols) convertALPNProtocols(options.ALPNProtocols, this);
    if (listener) this.on('secureConnection', listener);
  }

  _wrapAccepted(fd) {
    const s = new TLSSocket(null, { ...this._tlsOptions, allowHalfOpen: this.allowHalfOpen });
    s._attach(fd, null);
    // As Node's onSocketTLSError: an error before the handshake is done
    // is the server's tlsClientError, and the socket always has this
    // listener (a later error with no listener of its own is dropped).
    let secure = false;
    let reported = false;
    s.on('error', (err) => {
      if (secure || reported) return;
      reported = true;
      this.emit('tlsClientError', err, s);
    });
    s.on('_secure', () => { secure = true; this.emit('secureConnection', s); });
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

// canonicalizeIP writes an address as inet_ntop does (IPv6 lower case,
// the longest run of zero groups as ::), or undefined if it is none.
function canonicalizeIP(ip) {
  if (net.isIPv4(ip)) return ip;
  if (!net.isIPv6(ip)) return undefined;
  let s = ip.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const n = v4.slice(1).map(Number);
    s = s.slice(0, v4.index) + ((n[0] << 8) | n[1]).toString(16) + ':' + ((n[2] << 8) | n[3]).toString(16);
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const hp = head ? head.split(':') : [];
  const tp = tail ? tail.split(':') : [];
  const groups = tail === undefined ? hp : [...hp, ...new Array(8 - hp.length - tp.length).fill('0'), ...tp];
  const g = groups.map((x) => parseInt(x, 16));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (best >= 0 && g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || (g[5] === 0 && best === 0 && bestLen === 6 && g[6] !== 0))) {
    const tail4 = `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
    return g[5] === 0xffff ? `::ffff:${tail4}` : `::${tail4}`;
  }
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

function unfqdn(host) { return host.replace(/[.]$/, ''); }

// splitHost lowers only A-Z: toLowerCase depends on the locale.
function splitHost(host) {
  return unfqdn(host).replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32)).split('.');
}

// matchName matches host parts against one certificate name as RFC 6125
// says (a wildcard only as the whole or part of the left-most label, never
// in an A-label, and not for a name of two labels or fewer).
function matchName(hostParts, pattern, wildcards) {
  if (!pattern) return false;
  const patternParts = splitHost(pattern);
  if (hostParts.length !== patternParts.length) return false;
  if (patternParts.includes('')) return false;
  if (patternParts.some((p) => /[^\u0021-\u007F]/u.test(p))) return false;
  for (let i = hostParts.length - 1; i > 0; i -= 1) {
    if (hostParts[i] !== patternParts[i]) return false;
  }
  const hostSub = hostParts[0];
  const patternSub = patternParts[0];
  const subParts = patternSub.split('*', 3);
  if (subParts.length === 1 || patternSub.includes('xn--')) return hostSub === patternSub;
  if (!wildcards || subParts.length > 2 || patternParts.length <= 2) return false;
  const [prefix, suffix] = subParts;
  return prefix.length + suffix.length <= hostSub.length && hostSub.startsWith(prefix) && hostSub.endsWith(suffix);
}

// A JSON string literal: how OpenSSL quotes an alt name holding a comma.
// eslint-disable-next-line no-control-regex
const jsonString = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/;

function splitAltNames(altNames) {
  if (!altNames.includes('"')) return altNames.split(', ');
  const out = [];
  let token = '';
  let at = 0;
  while (at !== altNames.length) {
    const sep = altNames.indexOf(', ', at);
    const quote = altNames.indexOf('"', at);
    if (quote !== -1 && (sep === -1 || quote < sep)) {
      token += altNames.substring(at, quote);
      const m = jsonString.exec(altNames.substring(quote));
      if (!m) {
        const err = new SyntaxError('Invalid subject alternative name string');
        err.code = 'ERR_TLS_CERT_ALTNAME_FORMAT';
        throw err;
      }
      token += JSON.parse(m[0]);
      at = quote + m[0].length;
    } else if (sep !== -1) {
      out.push(token + altNames.substring(at, sep));
      token = '';
      at = sep + 2;
    } else {
      token += altNames.substring(at);
      at = altNames.length;
    }
  }
  out.push(token);
  return out;
}

// checkServerIdentity is Node's: the host must be one of the certificate's
// DNS or IP alt names, or, when it has no DNS name, its CN.
function checkServerIdentity(hostname, cert) {
  const subject = cert && cert.subject;
  const altNames = cert && cert.subjectaltname;
  const dnsNames = [];
  const ips = [];
  hostname = unfqdn('' + hostname);
  if (altNames) {
    for (const name of splitAltNames(altNames)) {
      if (name.startsWith('DNS:')) dnsNames.push(name.slice(4));
      else if (name.startsWith('IP Address:')) ips.push(canonicalizeIP(name.slice(11)));
    }
  }
  let valid = false;
  let reason = 'Unknown reason';
  if (net.isIP(hostname)) {
    valid = ips.includes(canonicalizeIP(hostname));
    if (!valid) reason = `IP: ${hostname} is not in the cert's list: ${ips.join(', ')}`;
  } else if (dnsNames.length > 0 || (subject && subject.CN)) {
    const hostParts = splitHost(hostname);
    const wildcard = (pattern) => matchName(hostParts, pattern, true);
    if (dnsNames.length > 0) {
      valid = dnsNames.some(wildcard);
      if (!valid) reason = `Host: ${hostname}. is not in the cert's altnames: ${altNames}`;
    } else {
      const cn = subject.CN;
      valid = Array.isArray(cn) ? cn.some(wildcard) : wildcard(cn);
      if (!valid) reason = `Host: ${hostname}. is not cert's CN: ${cn}`;
    }
  } else {
    reason = 'Cert does not contain a DNS name';
  }
  if (valid) return undefined;
  const err = new Error(`Hostname/IP does not match certificate's altnames: ${reason}`);
  err.code = 'ERR_TLS_CERT_ALTNAME_INVALID';
  err.reason = reason;
  err.host = hostname;
  err.cert = cert;
  if (typeof err.stack === 'string') err.stack = err.stack.replace('Error', 'Error [ERR_TLS_CERT_ALTNAME_INVALID]');
  return err;
}

module.exports = {
  TLSSocket,
  // Node's tls.Server constructs when called without new.
  Server: callable(Server),
  connect,
  createServer,
  createSecureContext,
  checkServerIdentity,
  convertALPNProtocols,
  getCiphers: () => ['tls_aes_128_gcm_sha256', 'tls_aes_256_gcm_sha384', 'tls_chacha20_poly1305_sha256', 'ecdhe-rsa-aes128-gcm-sha256', 'ecdhe-ecdsa-aes128-gcm-sha256'],
  rootCertificates: Object.freeze([]),
  DEFAULT_ECDH_CURVE: 'auto',
  DEFAULT_MIN_VERSION: 'TLSv1.2',
  DEFAULT_MAX_VERSION: 'TLSv1.3',
  DEFAULT_CIPHERS: 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256',
  CLIENT_RENEG_LIMIT: 3,
  CLIENT_RENEG_WINDOW: 600,
};
