'use strict';
// http2: the client side of node's HTTP/2 API (http2.connect). The
// protocol itself runs in Go, on golang.org/x/net/http2 (see
// bridge_http2.go): this module opens the connection as any guest would
// (net.connect for http:, tls.connect with ALPN h2 for https:, both under
// the kernel's network policy and TLS) and then hands the socket's
// descriptor to the Go session, which speaks HTTP/2 over it. Streams are
// Duplexes fed one body chunk at a time, with backpressure to the peer
// through HTTP/2 flow control. The server side is internal/http2_server.js.
const { B, takeBytes, giveBytes } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const { fromBridge, codedError } = require('./internal/errors.js');
const { Duplex } = require('./stream.js');
const net = require('./net.js');

const { constants, sensitiveHeaders, getDefaultSettings, h2Error, fromGo, tokenRe, badValueRe, connectionHeaders,
  noPayloadMethods, headerObject, rawPairs, closeStream, onLast, SessionBase } = require('./internal/http2_common.js');
const common = require('./internal/http2_common.js');

// --- handles answered by the loop ---

const sessions = new Map();
const streams = new Map();
let nextHandle = 1;

loop.onEvent('h2resp', (sh, _b, _code, payload) => {
  const s = streams.get(sh);
  if (s) s._onResponse(JSON.parse(payload));
});
loop.onEvent('h2info', (sh, _b, _code, payload) => {
  const s = streams.get(sh);
  if (!s) return;
  const head = JSON.parse(payload);
  if (head.status === 100) s.emit('continue');
  s.emit('headers', headerObject(head.headers, head.status), constants.NGHTTP2_FLAG_END_HEADERS);
});
loop.onEvent('h2data', (sh, n) => {
  const s = streams.get(sh);
  if (!s) return;
  const { Buffer } = require('./buffer.js');
  s._onData(takeBytes(n, (k) => Buffer.allocUnsafe(k)));
});
onLast('h2end', streams, (s, code, payload) => s._onEnd(code, payload));
onLast('h2sessclose', sessions, (s, code, payload) => s._onGoClosed(code, payload));

// --- streams ---

class ClientHttp2Stream extends Duplex {
  constructor(session, options) {
    super({ allowHalfOpen: true, autoDestroy: true, emitClose: false, decodeStrings: false,
      highWaterMark: options.highWaterMark });
    this.session = session;
    this._h = 0;
    this._started = false;
    this._paused = false;
    this._pending = [];
    this._gotResponse = false;
    this._ended = false;
    this.id = undefined;
    this.rstCode = undefined;
    this.sentHeaders = undefined;
    this.sentTrailers = undefined;
    this.sentInfoHeaders = [];
    this.aborted = false;
    this.headersSent = false;
  }

  get pending() { return !this._started; }
  get closed() { return this.rstCode !== undefined; }
  get endAfterHeaders() { return !!this._endAfterHeaders; }
  get bufferSize() { return this.writableLength; }
  get state() { return {}; }

  // _start sends the request (once the session is connected).
  _start(req, endStream) {
    const h = nextHandle++;
    try {
      B.h2Request(this.session._h, h, JSON.stringify(req), !!endStream);
    } catch (e) {
      const err = e === 'EAGAIN'
        ? h2Error('ERR_HTTP2_OUT_OF_STREAMS', 'No stream ID is available because maximum stream ID has been reached')
        : fromBridge(e, 'request');
      this.destroy(err);
      return;
    }
    this._h = h;
    this._started = true;
    this.headersSent = true;
    streams.set(h, this);
    this.emit('ready');
    if (this._paused) B.h2Pause(h, true);
    for (const fn of this._pending.splice(0)) fn();
  }

  _whenStarted(fn) {
    if (this._started) fn();
    else this._pending.push(fn);
  }

  _onResponse(head) {
    this._gotResponse = true;
    this._endAfterHeaders = !!head.end;
    const headers = headerObject(head.headers, head.status);
    this.emit('response', headers, constants.NGHTTP2_FLAG_END_HEADERS | (head.end ? constants.NGHTTP2_FLAG_END_STREAM : 0), rawPairs(headers));
  }

  _onData(chunk) {
    if (!this.push(chunk)) {
      this._paused = true;
      if (this._h) B.h2Pause(this._h, true);
    }
  }

  _onEnd(code, payload) {
    this._h = 0;
    this._ended = true;
    this.session._streamDone(this);
    // A reset with NO_ERROR ends the response as node's onStreamClose
    // does: what arrived is read to its end.
    const info = code === 'ERR_HTTP2_STREAM_ERROR' && payload ? JSON.parse(payload) : {};
    // A connection lost under the stream (bridge_http2.go) closes it with
    // CANCEL as node's socketOnClose does: what arrived still ends it.
    const lost = code === 'ERR_HTTP2_CONNECTION_LOST';
    if (info.rst === constants.NGHTTP2_NO_ERROR || lost) {
      code = '';
      payload = '';
      // As node's closeStream: a reset while the request is still being
      // written aborts it.
      if (!this._writableState.ending) {
        this.aborted = true;
        this.emit('aborted');
      }
    }
    if (code) {
      const err = fromGo(code, payload, 'read');
      this.rstCode = err.rstCode !== undefined ? err.rstCode : constants.NGHTTP2_INTERNAL_ERROR;
      if (code === 'ERR_HTTP2_STREAM_ERROR') {
        // The peer reset the stream: node reports it 'aborted', and an
        // error only for a code other than NO_ERROR and CANCEL.
        this.aborted = true;
        this.emit('aborted');
        if (this.rstCode === constants.NGHTTP2_CANCEL || this.rstCode === constants.NGHTTP2_NO_ERROR) {
          this.destroy();
          return;
        }
      }
      this.destroy(err);
      return;
    }
    this.rstCode = lost ? constants.NGHTTP2_CANCEL : constants.NGHTTP2_NO_ERROR;
    if (payload) {
      const info = JSON.parse(payload);
      if (info.trailers) this.emit('trailers', headerObject(info.trailers), constants.NGHTTP2_FLAG_END_STREAM | constants.NGHTTP2_FLAG_END_HEADERS);
    }
    this.push(null);
    // As node's onStreamClose: an empty rest ends the stream (and lets it
    // close) even when nobody reads it.
    this.read(0);
    // The request side is over once the response is: the peer ended the
    // stream, so what was not written cannot be sent.
    if (!this.writableEnded) this.end();
  }

  _read() {
    if (this._paused) {
      this._paused = false;
      if (this._h) B.h2Pause(this._h, false);
    }
  }

  _write(chunk, encoding, cb) {
    this._whenStarted(() => {
      if (!this._h) { cb(this._ended ? null : h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed')); return; }
      const { Buffer } = require('./buffer.js');
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
      try {
        net._request((id) => B.h2Write(this._h, giveBytes(buf), id), (code) => {
          // A body the peer stopped taking (it answered, or reset the
          // stream) ends the write quietly: the stream reports the reset.
          cb(code && code !== 'EPIPE' ? fromBridge(code, 'write') : null);
        });
      } catch (e) {
        cb(e === 'EPIPE' ? null : fromBridge(e, 'write'));
      }
    });
  }

  _final(cb) {
    this._whenStarted(() => {
      if (this._waitForTrailers && this._h && this.listenerCount('wantTrailers') > 0) {
        this._trailersReady = true;
        this.emit('wantTrailers');
        // The body ends with the trailers, whenever they are sent.
        if (!this._trailersSent) { this._endPending = true; cb(); return; }
      }
      if (this._h) B.h2End(this._h);
      cb();
    });
  }

  _destroy(err, cb) {
    if (this._h) {
      streams.delete(this._h);
      B.h2Cancel(this._h, this.rstCode || constants.NGHTTP2_CANCEL);
      this._h = 0;
      this.session._streamDone(this);
    } else if (!this._started) {
      this.session._streamDone(this);
    }
    if (this.rstCode === undefined) this.rstCode = err ? constants.NGHTTP2_INTERNAL_ERROR : constants.NGHTTP2_CANCEL;
    this._pending.length = 0;
    cb(err);
    process.nextTick(() => this.emit('close'));
  }

  close(code = constants.NGHTTP2_NO_ERROR, callback) { closeStream(this, code, callback); }

  priority() {}
  sendTrailers(headers) {
    if (this.destroyed || this.closed) throw h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    if (this._trailersSent) throw h2Error('ERR_HTTP2_TRAILERS_ALREADY_SENT', 'Trailing headers have already been sent');
    if (!this._trailersReady) throw h2Error('ERR_HTTP2_TRAILERS_NOT_READY', 'Trailing headers cannot be sent until after the wantTrailers event is emitted');
    if (headers === null || typeof headers !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'headers', 'of type object', headers);
    const pairs = [];
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined || v === null) continue;
      for (const x of Array.isArray(v) ? v : [v]) pairs.push([k.toLowerCase(), String(x)]);
    }
    this._trailersSent = true;
    this.sentTrailers = headers;
    if (this._h) B.h2Trailers(this._h, JSON.stringify(pairs));
    if (this._endPending && this._h) { this._endPending = false; B.h2End(this._h); }
  }
  setTimeout(ms, cb) { if (cb) this.once('timeout', cb); return this; }
}

// --- sessions ---

class ClientHttp2Session extends SessionBase {
  constructor(url, options) {
    super();
    this._h = 0;
    this._open = false;
    this._closing = false;
    this._destroyed = false;
    this._closeEmitted = false;
    this._goClosed = false;
    this._streams = new Set();
    this._queue = [];
    this._refed = true;
    this._scheme = url.protocol.slice(0, -1);
    this._authority = url.host;
    this._options = options;
    this.encrypted = this._scheme === 'https';
    this.alpnProtocol = undefined;
    this.originSet = undefined;
    this.type = constants.NGHTTP2_SESSION_CLIENT;
    this.socket = null;
    this._connect(url, options);
  }

  get connecting() { return !this._open && !this._destroyed; }
  get pendingSettingsAck() { return false; }
  get localSettings() { return getDefaultSettings(); }
  get remoteSettings() { return getDefaultSettings(); }
  get state() { return { effectiveLocalWindowSize: 1 << 20, localWindowSize: 1 << 20, outboundQueueSize: 0 }; }

  _connect(url, options) {
    let host = url.hostname || 'localhost';
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    const port = Number(url.port || (this._scheme === 'http' ? 80 : 443));
    let socket;
    if (typeof options.createConnection === 'function') {
      socket = options.createConnection(url, options);
    } else if (this.encrypted) {
      socket = require('./tls.js').connect({ ...options, host, port, servername: options.servername !== undefined ? options.servername : (net.isIP(host) ? undefined : host), ALPNProtocols: ['h2'] });
    } else {
      // node passes the port as a string, as a URL holds it.
      socket = net.connect({ host, port: String(port) });
    }
    this.socket = socket;
    const onError = (err) => this.destroy(err);
    const onClose = () => { if (!this._open) this.destroy(); };
    socket.on('error', onError);
    socket.on('close', onClose);
    const ready = () => {
      socket.removeListener('error', onError);
      socket.removeListener('close', onClose);
      this._handOver(socket);
    };
    if (socket.encrypted) socket.once('secureConnect', ready);
    else socket.once('connect', ready);
  }

  // _handOver gives the connected socket's descriptor to the Go session.
  _handOver(socket) {
    if (this._destroyed) { socket.destroy(); return; }
    if (this.encrypted || socket.encrypted) {
      if (socket.alpnProtocol !== 'h2') {
        const err = h2Error('ERR_HTTP2_ERROR', `the server did not agree on HTTP/2 (ALPN: ${socket.alpnProtocol || 'none'})`);
        socket.destroy();
        this.destroy(err);
        return;
      }
      this.alpnProtocol = 'h2';
    } else {
      this.alpnProtocol = 'h2c';
    }
    const fd = socket[net._kFd];
    if (fd === undefined || fd < 0 || (socket._handle && socket.listenerCount('data') > 0)) {
      this.destroy(h2Error('ERR_HTTP2_ERROR', 'the socket is not usable for an HTTP/2 session'));
      return;
    }
    if (typeof socket._peerInfo === 'function') socket._peerInfo(); // kept for remoteAddress
    socket[net._kFd] = -1;
    const h = nextHandle++;
    const settings = this._options.settings || {};
    const opts = { maxHeaderListSize: Number(this._options.maxHeaderListSize || settings.maxHeaderListSize || settings.maxHeaderSize || 0) | 0 };
    try {
      net._request((id) => B.h2Open(fd, h, JSON.stringify(opts), id), (code) => {
        if (code) { sessions.delete(h); this._h = 0; this.destroy(fromBridge(code, 'connect')); return; }
        if (this._destroyed) return;
        this._open = true;
        this.originSet = [`${this._scheme}://${this._authority}`];
        this.emit('connect', this, socket);
        for (const [stream, req, endStream] of this._queue.splice(0)) {
          if (!stream.destroyed) stream._start(req, endStream);
        }
        if (this._closing) B.h2Close(this._h, true);
      });
    } catch (e) {
      try { B.close(fd); } catch { /* gone */ }
      this.destroy(fromBridge(e, 'connect'));
      return;
    }
    this._h = h;
    sessions.set(h, this);
    if (!this._refed) B.h2Ref(h, false);
    // The socket object is a shell from now on (its descriptor is the
    // session's); it stays as session.socket for its addresses.
    socket.destroy();
  }

  request(headers, options) {
    if (this._destroyed) throw h2Error('ERR_HTTP2_INVALID_SESSION', 'The session has been destroyed');
    if (this._closing) throw h2Error('ERR_HTTP2_GOAWAY_SESSION', 'New streams cannot be created after receiving a GOAWAY');
    if (headers === undefined || headers === null) headers = {};
    if (typeof headers !== 'object' || Array.isArray(headers)) throw codedError('ERR_INVALID_ARG_TYPE', 'headers', 'of type object', headers);
    options = options || {};
    const req = { method: 'GET', path: '/', scheme: this._scheme, authority: this._authority, headers: [] };
    const seen = new Set();
    for (const [name, value] of Object.entries(headers)) {
      const k = name.toLowerCase();
      if (value === undefined || value === null) continue;
      const values = Array.isArray(value) ? value.map(String) : [String(value)];
      if (values.length === 0) continue;
      common.checkSingle(k, values, seen);
      for (const v of values) {
        if (badValueRe.test(v)) throw h2Error('ERR_HTTP2_INVALID_HEADER_VALUE', `Invalid value "${v}" for header "${name}"`, TypeError);
      }
      switch (k) {
        case ':method':
          if (!tokenRe.test(values[0])) throw h2Error('ERR_INVALID_HTTP_TOKEN', `Method must be a valid HTTP token ["${values[0]}"]`, TypeError);
          req.method = values[0];
          continue;
        case ':path': req.path = values[0]; continue;
        case ':scheme': req.scheme = values[0]; continue;
        case ':authority': req.authority = values[0]; continue;
      }
      if (k.startsWith(':')) throw h2Error('ERR_HTTP2_INVALID_PSEUDOHEADER', `"${name}" is an invalid pseudoheader or is used incorrectly`, TypeError);
      if (!tokenRe.test(k)) throw h2Error('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`, TypeError);
      if (connectionHeaders.has(k) && !(k === 'te' && values.length === 1 && values[0] === 'trailers')) {
        throw h2Error('ERR_HTTP2_INVALID_CONNECTION_HEADERS', `HTTP/1 Connection specific headers are forbidden: "${k}"`, TypeError);
      }
      if (k === 'host') { req.authority = values[0]; continue; }
      for (const v of values) req.headers.push([k, v]);
    }
    if (req.method === 'CONNECT') throw h2Error('ERR_HTTP2_CONNECT_PATH', 'CONNECT requests are not supported in this sandbox', TypeError);
    let endStream = options.endStream;
    if (endStream === undefined) endStream = noPayloadMethods.has(req.method);
    const stream = new ClientHttp2Stream(this, options);
    stream._waitForTrailers = !!options.waitForTrailers && !endStream;
    req.trailers = stream._waitForTrailers;
    stream.sentHeaders = { ...headers, ':method': req.method, ':path': req.path, ':scheme': req.scheme, ':authority': req.authority };
    this._streams.add(stream);
    if (endStream) stream.end();
    if (options.signal) {
      const onAbort = () => stream.destroy(require('./internal/web.js').abortError(options.signal.reason));
      if (options.signal.aborted) process.nextTick(onAbort);
      else options.signal.addEventListener('abort', onAbort, { once: true });
    }
    if (this._open) process.nextTick(() => { if (!stream.destroyed) stream._start(req, endStream); });
    else this._queue.push([stream, req, endStream]);
    return stream;
  }

  _onGoClosed(code, payload) {
    this._goClosed = true;
    this._h = 0;
    if (code && !this._destroyed && !this._closing) {
      this.destroy(fromGo(code, payload, 'read'));
      return;
    }
    this._closing = true;
    this._maybeClose();
  }

  close(callback) {
    if (typeof callback === 'function') this.once('close', callback);
    if (this._closing || this._destroyed) return;
    this._closing = true;
    // Before the connection is up, queued requests still go out and the
    // session closes after them (see _handOver).
    if (this._h && this._open) B.h2Close(this._h, true);
    else if (!this._open && this._queue.length === 0) this.destroy();
  }

  destroy(error, code) {
    if (typeof error === 'number') { code = error; error = undefined; }
    if (this._destroyed) return;
    this._destroyed = true;
    this._closing = true;
    // 'error' comes before the streams' and the session's 'close'.
    if (error) process.nextTick(() => this.emit('error', error));
    const streamErr = error || h2Error('ERR_HTTP2_STREAM_CANCEL', 'The pending stream has been canceled');
    for (const stream of [...this._streams]) stream.destroy(error ? streamErr : undefined);
    this._streams.clear();
    this._queue.length = 0;
    if (this._h) { B.h2Close(this._h, false); }
    if (this.socket && !this._open) this.socket.destroy();
    void code;
    this._maybeClose();
  }

  goaway(code, lastStreamID, opaqueData) {
    common.validateGoaway(this, code, lastStreamID, opaqueData);
    this.close();
  }

  ping(payload, callback) {
    if (typeof payload === 'function') { callback = payload; payload = undefined; }
    if (typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
    if (!this._open || !this._h) throw h2Error('ERR_HTTP2_PING_CANCEL', 'HTTP2 ping cancelled');
    const { Buffer } = require('./buffer.js');
    const echo = payload ? Buffer.from(payload) : Buffer.alloc(8);
    try {
      net._request((id) => B.h2Ping(this._h, id), (code, ms) => {
        if (code) callback(h2Error('ERR_HTTP2_PING_CANCEL', 'HTTP2 ping cancelled'), 0, echo);
        else callback(null, Number(ms), echo);
      });
    } catch {
      process.nextTick(callback, h2Error('ERR_HTTP2_PING_CANCEL', 'HTTP2 ping cancelled'), 0, echo);
    }
    return true;
  }

  settings() {
    throw h2Error('ERR_HTTP2_INVALID_SETTING_VALUE', 'session.settings() is not supported in this sandbox: the session keeps its initial settings');
  }

  setTimeout(ms, cb) { if (cb) this.once('timeout', cb); return this; }

  ref() {
    this._refed = true;
    if (this._h) B.h2Ref(this._h, true);
    else if (this.socket && this.socket.ref) this.socket.ref();
    return this;
  }

  unref() {
    this._refed = false;
    if (this._h) B.h2Ref(this._h, false);
    else if (this.socket && this.socket.unref) this.socket.unref();
    return this;
  }
}

function connect(authority, options, listener) {
  if (typeof options === 'function') { listener = options; options = undefined; }
  options = options ? { ...options } : {};
  let url = authority;
  if (typeof authority === 'string') url = new URL(authority);
  else if (!(authority instanceof URL)) {
    if (authority === null || typeof authority !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'authority', 'of type string or an instance of URL', authority);
    url = new URL(`${authority.protocol || 'https:'}//${authority.host || authority.hostname || 'localhost'}${authority.port && !authority.host ? `:${authority.port}` : ''}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw h2Error('ERR_HTTP2_UNSUPPORTED_PROTOCOL', `protocol "${url.protocol}" is unsupported.`);
  }
  const session = new ClientHttp2Session(url, options);
  if (typeof listener === 'function') session.once('connect', listener);
  return session;
}

const server = require('./internal/http2_server.js');

module.exports = {
  connect,
  constants,
  getDefaultSettings,
  getPackedSettings: common.getPackedSettings,
  getUnpackedSettings: common.getUnpackedSettings,
  sensitiveHeaders,
  createServer: server.createServer,
  createSecureServer: server.createSecureServer,
  performServerHandshake: server.performServerHandshake,
  Http2ServerRequest: server.Http2ServerRequest,
  Http2ServerResponse: server.Http2ServerResponse,
  Http2Server: server.Http2Server,
  Http2SecureServer: server.Http2SecureServer,
  ServerHttp2Session: server.ServerHttp2Session,
  ServerHttp2Stream: server.ServerHttp2Stream,
  ClientHttp2Session,
  ClientHttp2Stream,
};
