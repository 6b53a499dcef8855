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

// OpenSSL's names of the TLS 1.0-1.2 suites crypto/tls has, by their IANA
// names, with the version SSL_CIPHER_get_version reports for each.
const cipherNames = {
  'TLS_RSA_WITH_RC4_128_SHA': ['RC4-SHA', 'SSLv3'],
  'TLS_RSA_WITH_3DES_EDE_CBC_SHA': ['DES-CBC3-SHA', 'SSLv3'],
  'TLS_RSA_WITH_AES_128_CBC_SHA': ['AES128-SHA', 'SSLv3'],
  'TLS_RSA_WITH_AES_256_CBC_SHA': ['AES256-SHA', 'SSLv3'],
  'TLS_RSA_WITH_AES_128_CBC_SHA256': ['AES128-SHA256', 'TLSv1.2'],
  'TLS_RSA_WITH_AES_128_GCM_SHA256': ['AES128-GCM-SHA256', 'TLSv1.2'],
  'TLS_RSA_WITH_AES_256_GCM_SHA384': ['AES256-GCM-SHA384', 'TLSv1.2'],
  'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA': ['ECDHE-ECDSA-RC4-SHA', 'TLSv1.0'],
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA': ['ECDHE-ECDSA-AES128-SHA', 'TLSv1.0'],
  'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA': ['ECDHE-ECDSA-AES256-SHA', 'TLSv1.0'],
  'TLS_ECDHE_RSA_WITH_RC4_128_SHA': ['ECDHE-RSA-RC4-SHA', 'TLSv1.0'],
  'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA': ['ECDHE-RSA-DES-CBC3-SHA', 'TLSv1.0'],
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA': ['ECDHE-RSA-AES128-SHA', 'TLSv1.0'],
  'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA': ['ECDHE-RSA-AES256-SHA', 'TLSv1.0'],
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256': ['ECDHE-ECDSA-AES128-SHA256', 'TLSv1.2'],
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256': ['ECDHE-RSA-AES128-SHA256', 'TLSv1.2'],
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256': ['ECDHE-RSA-AES128-GCM-SHA256', 'TLSv1.2'],
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256': ['ECDHE-ECDSA-AES128-GCM-SHA256', 'TLSv1.2'],
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384': ['ECDHE-RSA-AES256-GCM-SHA384', 'TLSv1.2'],
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384': ['ECDHE-ECDSA-AES256-GCM-SHA384', 'TLSv1.2'],
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256': ['ECDHE-RSA-CHACHA20-POLY1305', 'TLSv1.2'],
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256': ['ECDHE-ECDSA-CHACHA20-POLY1305', 'TLSv1.2'],
};
const ianaByOpenSSL = Object.fromEntries(Object.entries(cipherNames).map(([iana, [name]]) => [name, iana]));
// OpenSSL's cipher-list keywords: a list with one keeps crypto/tls's
// default suites.
const cipherKeywords = new Set(['ALL', 'DEFAULT', 'HIGH', 'MEDIUM', 'LOW', 'COMPLEMENTOFDEFAULT', 'COMPLEMENTOFALL',
  'aNULL', 'eNULL', 'NULL', 'kRSA', 'aRSA', 'RSA', 'ECDHE', 'EECDH', 'kECDHE', 'kEECDH', 'ECDH', 'aECDSA', 'ECDSA',
  'AES', 'AES128', 'AES256', 'AESGCM', 'CHACHA20', 'SHA', 'SHA1', 'SHA256', 'SHA384', 'TLSv1', 'TLSv1.2', 'SSLv3',
  'DHE', 'EDH', 'kEDH', 'kDHE', '3DES', 'DES', 'RC4', 'MD5', 'PSK', 'SRP', 'CAMELLIA', 'EXPORT', 'SEED', 'IDEA', 'ARIA']);
const tls13Suites = ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'];

function sslError(code, reason, hex) {
  const err = new Error(`error:${hex}:SSL routines::${reason}`);
  err.code = code;
  err.library = 'SSL routines';
  err.reason = reason;
  return err;
}

// resolveCiphers reads an OpenSSL cipher list as far as crypto/tls can
// follow it: named TLS 1.0-1.2 suites become the accepted list, a list
// with a keyword (ALL, DEFAULT, HIGH, ...) keeps crypto/tls's defaults less
// the suites it excludes (!NAME), and TLS 1.3's suites, which crypto/tls
// does not let a program choose, are accepted and have no effect. It
// returns the IANA names, or null for the defaults.
function resolveCiphers(list) {
  if (list === undefined || list === null) return null;
  if (typeof list !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'options.ciphers', 'of type string', list);
  const named = [];
  const excluded = new Set();
  let keyword = false;
  let tls13 = false;
  let unsupported = false;
  for (let item of list.split(/[:, ]+/)) {
    if (item === '') continue;
    item = item.replace(/@.*$/, '');
    if (item === '') continue;
    const neg = item[0] === '!' || item[0] === '-';
    if (neg || item[0] === '+') item = item.slice(1);
    const iana = ianaByOpenSSL[item] || (cipherNames[item] ? item : undefined);
    if (neg) { if (iana) excluded.add(iana); continue; }
    if (iana) named.push(iana);
    else if (tls13Suites.includes(item)) tls13 = true;
    else if (cipherKeywords.has(item)) keyword = true;
    // A suite OpenSSL has and crypto/tls lacks (DHE, CAMELLIA, AES256-SHA256)
    // is a valid name that no handshake can agree on.
    else if (/^[A-Z0-9]+(?:-[A-Z0-9]+)+$/.test(item)) unsupported = true;
  }
  if (!keyword && named.length === 0 && !tls13 && !unsupported) throw sslError('ERR_SSL_NO_CIPHER_MATCH', 'no cipher match', '0A0000B9');
  if (keyword) return excluded.size ? Object.keys(cipherNames).filter((n) => !excluded.has(n) && !/RC4|3DES/.test(n)) : null;
  return named.filter((n) => !excluded.has(n));
}

const protocolNumbers = { TLSv1: 0x301, 'TLSv1.1': 0x302, 'TLSv1.2': 0x303, 'TLSv1.3': 0x304 };

function toVersion(which, v, def) {
  if (v === undefined || v === null) v = def;
  const n = protocolNumbers[v];
  if (n === undefined) {
    const err = new TypeError(`${JSON.stringify(v)} is not a valid ${which} TLS protocol version`);
    err.code = 'ERR_TLS_INVALID_PROTOCOL_VERSION';
    throw err;
  }
  return n;
}

// methodVersions are the ranges OpenSSL's methods stand for (Node's
// SecureContext::Init); SSLv23 keeps the minimum it was given.
function methodVersions(method, min) {
  const m = /^(SSLv23|TLS|TLSv1|TLSv1_1|TLSv1_2|SSLv2|SSLv3)(?:_server|_client)?_method$/.exec(method);
  const err = (msg) => { const e = new TypeError(msg); e.code = 'ERR_TLS_INVALID_PROTOCOL_METHOD'; return e; };
  if (!m) throw err(`Unknown method: ${method}`);
  switch (m[1]) {
    case 'SSLv2': throw err('SSLv2 methods disabled');
    case 'SSLv3': throw err('SSLv3 methods disabled');
    case 'SSLv23': return [min, 0x303];
    case 'TLS': return [0x301, 0x304];
    case 'TLSv1': return [0x301, 0x301];
    case 'TLSv1_1': return [0x302, 0x302];
    default: return [0x303, 0x303];
  }
}

// contextOptions checks a context's protocol and cipher options as Node's
// createSecureContext does (throwing its errors at once) and returns what
// the kernel's handshake takes of them.
function contextOptions(o) {
  const sc = o.secureContext && o.secureContext[kContextOptions];
  if (sc) return sc;
  const { secureProtocol, minVersion, maxVersion } = o;
  if (secureProtocol !== undefined && secureProtocol !== null) {
    if (typeof secureProtocol !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'options.secureProtocol', 'of type string', secureProtocol);
    const conflict = (v) => {
      const e = new TypeError(`TLS protocol version ${JSON.stringify(v)} conflicts with secureProtocol ${JSON.stringify(secureProtocol)}`);
      e.code = 'ERR_TLS_PROTOCOL_VERSION_CONFLICT';
      return e;
    };
    if (minVersion !== undefined && minVersion !== null) throw conflict(minVersion);
    if (maxVersion !== undefined && maxVersion !== null) throw conflict(maxVersion);
  }
  let min = toVersion('minimum', minVersion, module.exports.DEFAULT_MIN_VERSION);
  let max = toVersion('maximum', maxVersion, module.exports.DEFAULT_MAX_VERSION);
  if (secureProtocol) [min, max] = methodVersions(secureProtocol, min);
  const ciphers = resolveCiphers(o.ciphers !== undefined ? o.ciphers : module.exports.DEFAULT_CIPHERS);
  return { minVersion: min, maxVersion: max, ciphers };
}

const kContextOptions = Symbol('contextOptions');
const kOwner = Symbol('secureContext');

// SecureContext is what createSecureContext makes: the options a
// handshake takes, checked once. Its native half is the kernel's, made
// per handshake from them.
class SecureContext {
  constructor(options) {
    this[kContextOptions] = contextOptions(options);
    this.context = {
      addCACert: (ca) => { options.ca = [...pemList(options.ca), ...pemList(ca)]; },
      setCert: (cert) => { options.cert = cert; },
      setKey: (key) => { options.key = key; },
      setCiphers: (c) => { this[kContextOptions].ciphers = resolveCiphers(c); },
      [kOwner]: this,
    };
    this.options = options;
  }
}

const kInfo = Symbol('tlsInfo');

// Handshakes whose server asks for its certificate by the client's name,
// by request id: the kernel's "tlssni" event names the client's server
// name, and tlsSNIReply answers it.
const sniAsks = new Map();
require('./internal/loop.js').onEvent('tlssni', (id, _b, _code, name) => {
  const ask = sniAsks.get(id);
  if (ask) ask(name);
});

const kFromConnect = Symbol('fromConnect');

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
    // A given secureContext is the context: its certificates, not the
    // options', as in Node.
    const sc = options.secureContext && options.secureContext.options;
    this._tlsOptions = sc ? { ...options, ca: sc.ca, cert: sc.cert, key: sc.key, pfx: sc.pfx } : options;
    this._contextOptions = contextOptions(options);
    if (options.isServer && options.SNICallback !== undefined && typeof options.SNICallback !== 'function') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.SNICallback', 'of type function', options.SNICallback);
    }
    this[kInfo] = null;
    this._secureWait = true;
    this._transport = null;
    if (fd !== undefined && fd >= 0) {
      // The descriptor moves to this socket; the plain one lets it go.
      socket[net._kFd] = -1;
      this._peer = socket._peer;
      // The plain socket closes with this one, as both are one handle in
      // Node: a server counting its connections sees it go.
      this.once('close', () => socket.destroy());
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
      ...this._contextOptions,
    };
    if (o.pfx) { process.nextTick(() => this.destroy(codedError('ERR_FEATURE_UNAVAILABLE_ON_PLATFORM', 'the pfx option'))); return; }
    // A TLSSocket made directly, not by tls.connect, leaves the peer's
    // verification to its user (this.ssl.verifyError()), as Node's does.
    const bare = !server && !this[kFromConnect];
    if (bare) req.rejectUnauthorized = false;
    if (!server) this.servername = req.servername || null;
    const sni = server ? this._sniCallback() : null;
    req.sni = sni !== null;
    let sniId = -1;
    let sniError = null;
    try {
      net._request((id) => {
        if (sni) {
          sniId = id;
          sniAsks.set(id, (name) => this._askSNI(sni, id, name, (err) => { sniError = err; }));
        }
        B.tlsHandshake(this[net._kFd], JSON.stringify(req), id);
      }, (code, payload) => {
        sniAsks.delete(sniId);
        if (this.destroyed) return;
        if (code) {
          this.destroy(code === 'ERR_TLS_SNI_CALLBACK' && sniError ? sniError : tlsError(code, payload, req.servername, server));
          return;
        }
        const info = JSON.parse(payload);
        this[kInfo] = info;
        this.authorized = !!info.authorized;
        this.authorizationError = info.authorizationError || null;
        this.alpnProtocol = info.alpnProtocol || false;
        if (server) this.servername = info.servername || false;
        else if (!bare && this.authorized && !this._verifyName(req.rejectUnauthorized)) return;
        this._secureWait = false;
        if (server) this.emit('_secure');
        this.emit('secure');
        if (!server && !bare) this.emit('secureConnect');
        if (!server) this.emit('session', require('./buffer.js').Buffer.alloc(0));
        this._flushPending();
        // As Node's TLS handle, which reads from the start: the peer's end
        // is seen even when nobody reads.
        if (!this.destroyed) this.read(0);
      });
    } catch (e) {
      process.nextTick(() => this.destroy(tlsError(typeof e === 'string' ? e : 'EINVAL')));
    }
  }

  // _sniCallback is the server's SNICallback: the option's, else, on a
  // tls.Server with contexts (addContext), the server's; null for none.
  _sniCallback() {
    const o = this._tlsOptions;
    if (typeof o.SNICallback === 'function') return o.SNICallback;
    const srv = o.server;
    if (srv instanceof Server && srv._contexts.length > 0) return (name, cb) => srv._defaultSNI(name, cb);
    return null;
  }

  // _askSNI runs the SNICallback for the client's name and answers the
  // kernel with the context's certificate (none: the server's own).
  _askSNI(callback, id, name, fail) {
    this.servername = name;
    let answered = false;
    const reply = (err, ctx) => {
      if (answered) return;
      answered = true;
      let answer = { failed: false, cert: '', key: '' };
      if (err) {
        fail(err);
        answer = { failed: true, cert: '', key: '' };
      } else if (ctx) {
        const co = ctx.options || (ctx[kOwner] && ctx[kOwner].options) || {};
        answer.cert = pemOne(co.cert) || '';
        answer.key = pemOne(co.key) || '';
        answer.ca = pemList(co.ca);
      }
      B.tlsSNIReply(id, JSON.stringify(answer));
    };
    try {
      callback(name, reply);
    } catch (e) {
      reply(e);
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

  // ssl is the part of Node's native handle programs reach for.
  // As Node's, it goes (null) when the socket is destroyed.
  get ssl() {
    if (this.destroyed) return null;
    return {
      fd: this[net._kFd],
      verifyError: () => {
        const code = this.authorizationError;
        return code ? tlsError(code, code, this.servername, false) : null;
      },
    };
  }

  // _destroySSL frees Node's native TLS state; here it lives in the
  // kernel and goes with the descriptor, at destroy().
  _destroySSL() {}

  getCertificate() { return {}; }
  getProtocol() { return this[kInfo] ? this[kInfo].protocol : null; }
  getCipher() {
    const i = this[kInfo];
    if (!i) return {};
    const [name, version] = cipherNames[i.cipher] || [i.cipher, 'TLSv1.3'];
    return { name, standardName: i.cipher, version };
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
  s[kFromConnect] = true;
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
    contextOptions(this._tlsOptions);
    // As Node's Server: the protocols in wire form, or the callback.
    if (options && options.ALPNCallback !== undefined) {
      if (typeof options.ALPNCallback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'options.ALPNCallback', 'of type function', options.ALPNCallback);
      if (options.ALPNProtocols) throw codedError('ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS');
      this.ALPNCallback = options.ALPNCallback;
    }
    if (options && options.ALPNProtocols) convertALPNProtocols(options.ALPNProtocols, this);
    if (options && options.SNICallback !== undefined && typeof options.SNICallback !== 'function') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.SNICallback', 'of type function', options.SNICallback);
    }
    this._contexts = [];
    if (listener) this.on('secureConnection', listener);
  }

  _wrapAccepted(fd) {
    const s = new TLSSocket(null, { ...this._tlsOptions, server: this, allowHalfOpen: this.allowHalfOpen });
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
  // addContext serves context to the clients whose server name matches
  // servername, where * stands for one label, as Node's.
  addContext(servername, context) {
    if (!servername) throw codedError('ERR_TLS_REQUIRED_SERVER_NAME');
    const re = new RegExp(`^${servername.replace(/([.^$+?\-\\[\]{}])/g, '\\$1').replace(/\*/g, '[^.]*')}$`);
    const ctx = context instanceof SecureContext ? context : createSecureContext(context);
    this._contexts.push([re, ctx]);
  }

  // _defaultSNI is Node's SNICallback of a server: the last context added
  // for the name, else none (the server's own).
  _defaultSNI(name, cb) {
    for (let i = this._contexts.length - 1; i >= 0; i--) {
      if (this._contexts[i][0].test(name)) { cb(null, this._contexts[i][1]); return; }
    }
    cb(null, undefined);
  }
  getTicketKeys() { return require('./buffer.js').Buffer.alloc(48); }
  setTicketKeys() {}
}

function createServer(options, listener) { return new Server(options, listener); }

function createSecureContext(options = {}) { return new SecureContext({ ...options }); }

// The defaults Node's --tls-min-v1.x, --tls-max-v1.x and --tls-cipher-list
// set; a program may change them.
function defaultVersions() {
  const ea = process.execArgv || [];
  const has = (f) => ea.includes(f) || ea.includes(f.replace(/-/g, '_').replace(/^__/, '--'));
  let min = 'TLSv1.2';
  if (has('--tls-min-v1.0')) min = 'TLSv1';
  else if (has('--tls-min-v1.1')) min = 'TLSv1.1';
  else if (has('--tls-min-v1.3')) min = 'TLSv1.3';
  const max = has('--tls-max-v1.2') ? 'TLSv1.2' : 'TLSv1.3';
  let ciphers;
  for (let i = 0; i < ea.length; i++) {
    if (ea[i].startsWith('--tls-cipher-list=')) ciphers = ea[i].slice(18);
    else if (ea[i] === '--tls-cipher-list') ciphers = ea[i + 1];
  }
  return { min, max, ciphers };
}

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
  SecureContext,
  CLIENT_RENEG_LIMIT: 3,
  CLIENT_RENEG_WINDOW: 600,
};

// Read from execArgv when first used: a warm isolate evaluates this
// module before it knows its process's options.
for (const [name, pick] of [['DEFAULT_MIN_VERSION', (d) => d.min], ['DEFAULT_MAX_VERSION', (d) => d.max],
  ['DEFAULT_CIPHERS', (d) => d.ciphers || 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-SHA256:DHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA384:DHE-RSA-AES256-SHA384:ECDHE-RSA-AES256-SHA256:DHE-RSA-AES256-SHA256:HIGH:!aNULL:!eNULL:!EXPORT:!DES:!RC4:!MD5:!PSK:!SRP:!CAMELLIA']]) {
  let value;
  let set = false;
  Object.defineProperty(module.exports, name, {
    enumerable: true,
    configurable: true,
    get() { if (!set) { value = pick(defaultVersions()); set = true; } return value; },
    set(v) { value = v; set = true; },
  });
}
