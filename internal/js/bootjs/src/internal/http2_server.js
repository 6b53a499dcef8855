'use strict';
// http2 servers: http2.createServer and createSecureServer. The protocol
// runs in Go, on golang.org/x/net/http2's Server (bridge_http2_server.go,
// which says why): the server here is a net.Server (or tls.Server with
// ALPN h2) whose accepted sockets are handed, descriptor and all, to a Go
// session. Go posts each request as a stream; ServerHttp2Stream is a
// Duplex over it (the request body in, the response out, with
// backpressure both ways), and Http2ServerRequest/Response are node's
// compatibility API on top.
const { B, takeBytes, giveBytes } = require('./bridge.js');
const loop = require('./loop.js');
const { fromBridge, codedError } = require('./errors.js');
const { Duplex, Readable, Stream } = require('../stream.js');
const net = require('../net.js');
const { constants, sensitiveHeaders, getDefaultSettings, h2Error, fromGo, tokenRe, badValueRe, connectionHeaders,
  headerObject, closeStream, onLast, SessionBase, checkSingle, validateSettings, validateGoaway } = require('./http2_common.js');
const { validateFunction } = require('./validators.js');

const sessions = new Map();
const streams = new Map();
let nextSession = 1;

function buf() { return require('../buffer.js').Buffer; }

loop.onEvent('h2sstream', (h, sh, _code, payload) => {
  const s = sessions.get(h);
  if (!s) { B.h2sReset(sh, constants.NGHTTP2_REFUSED_STREAM); return; }
  s._onStream(sh, JSON.parse(payload));
});
loop.onEvent('h2sdata', (sh, n) => {
  const chunk = takeBytes(n, (k) => buf().allocUnsafe(k));
  const s = streams.get(sh);
  if (s) s._onData(chunk);
});
loop.onEvent('h2sbodyend', (sh, _b, _code, payload) => {
  const s = streams.get(sh);
  if (s) s._onBodyEnd(payload ? JSON.parse(payload) : {});
});
onLast('h2sclose', streams, (s, code, payload) => s._onGoClosed(code, payload));
onLast('h2ssessclose', sessions, (s, code, payload) => s._onGoClosed(code, payload));

// request runs a bridge operation whose result comes back as an event.
function request(start, done) {
  try {
    net._request(start, done);
  } catch (e) {
    process.nextTick(done, typeof e === 'string' ? e : 'EINVAL');
  }
}

const kNoBodyStatus = new Set([204, 205, 304]);

// responseHead validates the headers of respond() or additionalHeaders()
// as node does and returns [status, [name, value] pairs].
function responseHead(headers, trailers = false) {
  if (headers === undefined || headers === null) headers = {};
  if (typeof headers !== 'object' || Array.isArray(headers)) throw codedError('ERR_INVALID_ARG_TYPE', 'headers', 'of type object', headers);
  let status = 200;
  const pairs = [];
  const seen = new Set();
  for (const [name, value] of Object.entries(headers)) {
    const k = name.toLowerCase();
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) continue;
    checkSingle(k, Array.isArray(value) ? value : [value], seen);
    if (k === ':status' && !trailers) {
      status = Number(value);
      if (!Number.isInteger(status) || status < 100 || status > 599) throw h2Error('ERR_HTTP2_STATUS_INVALID', `Invalid status code: ${value}`, RangeError);
      continue;
    }
    if (k.startsWith(':')) throw h2Error('ERR_HTTP2_INVALID_PSEUDOHEADER', `"${name}" is an invalid pseudoheader or is used incorrectly`, TypeError);
    if (!tokenRe.test(k)) throw h2Error('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`, TypeError);
    const values = Array.isArray(value) ? value.map(String) : [String(value)];
    if (connectionHeaders.has(k) && !(k === 'te' && values.length === 1 && values[0] === 'trailers')) {
      throw h2Error('ERR_HTTP2_INVALID_CONNECTION_HEADERS', `HTTP/1 Connection specific headers are forbidden: "${k}"`, TypeError);
    }
    for (const v of values) {
      if (badValueRe.test(v)) throw h2Error('ERR_HTTP2_INVALID_HEADER_VALUE', `Invalid value "${v}" for header "${name}"`, TypeError);
      pairs.push([k, v]);
    }
  }
  return [status, pairs];
}

// --- streams ---

class ServerHttp2Stream extends Duplex {
  constructor(session, h, id, headers, endStream) {
    super({ allowHalfOpen: true, autoDestroy: false, emitClose: false, decodeStrings: false });
    this.session = session;
    this._h = h;
    this.id = id;
    this.rstCode = undefined;
    this.headersSent = false;
    this.sentHeaders = undefined;
    this.sentTrailers = undefined;
    this.sentInfoHeaders = [];
    this.aborted = false;
    this._paused = false;
    this._wantTrailers = false;
    this._trailersSent = false;
    this._endOnFinal = null;
    this._goClosed = false;
    this._method = headers[':method'];
    this._endAfterHeaders = !!endStream;
    if (endStream) this.push(null);
  }

  get pending() { return false; }
  get closed() { return this.rstCode !== undefined; }
  get endAfterHeaders() { return this._endAfterHeaders; }
  get bufferSize() { return this.writableLength; }
  get pushAllowed() { return this.session._pushEnabled; }
  get state() {
    return { state: this.destroyed ? 7 : 2, weight: 16, sumDependencyWeight: 0, localClose: this.writableEnded ? 1 : 0,
      remoteClose: this.readableEnded ? 1 : 0, localWindowSize: 65535 };
  }

  _live() { return this._h !== 0 && !this._goClosed; }

  respond(headers, options) {
    if (this.destroyed || this.closed) throw h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    if (this.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    options = options || {};
    if (typeof options !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
    const [status, pairs] = responseHead(headers);
    if (status < 200) throw h2Error('ERR_HTTP2_STATUS_INVALID', `Invalid status code: ${status}`, RangeError);
    let endStream = !!options.endStream;
    if (kNoBodyStatus.has(status) || this._method === 'HEAD') endStream = true;
    this._wantTrailers = !!options.waitForTrailers;
    this._noDate = options.sendDate === false;
    this._send(status, pairs, headers, endStream && !this._wantTrailers);
    if (endStream) this.end();
  }

  _send(status, pairs, headers, endStream) {
    this.headersSent = true;
    this.sentHeaders = { ...(headers || {}), ':status': status };
    if (endStream) this._endOnFinal = 'sent';
    if (!this._live()) return;
    const body = JSON.stringify({ status, headers: pairs, endStream, noDate: !!this._noDate });
    const then = this._afterRespond;
    this._afterRespond = null;
    this._respondPending = true;
    this._opStarted();
    request((id) => B.h2sRespond(this._h, body, id), (code) => {
      this._respondPending = false;
      this._opDone();
      if (code && code !== 'EPIPE') this.destroy(fromBridge(code, 'respond'));
      else if (then) then();
    });
  }

  additionalHeaders(headers) {
    if (this.destroyed || this.closed) throw h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    if (this.headersSent) throw h2Error('ERR_HTTP2_HEADERS_AFTER_RESPOND', 'Cannot specify additional headers after response initiated');
    const [status, pairs] = responseHead(headers);
    if (status === 101) throw h2Error('ERR_HTTP2_STATUS_101', 'HTTP status code 101 (Switching Protocols) is forbidden in HTTP/2');
    if (status >= 200) throw h2Error('ERR_HTTP2_INVALID_INFO_STATUS', `Invalid informational status code: ${status}`, RangeError);
    this.sentInfoHeaders.push({ ...headers });
    if (!this._live()) return;
    const body = JSON.stringify({ status, headers: pairs, endStream: false });
    request((id) => B.h2sRespond(this._h, body, id), () => {});
  }

  respondWithFD(fd, headers, options) {
    this._checkFileResponse(headers, options);
    if (typeof fd === 'object' && fd !== null && typeof fd.fd === 'number' && typeof fd.close === 'function') fd = fd.fd;
    else if (typeof fd !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'fd', 'of type number or an instance of FileHandle', fd);
    this._fdResponse = true;
    this._respondWithData(() => {
      const fs = require('../fs.js');
      const fdv = typeof fd === 'object' && fd !== null ? fd.fd : fd;
      return fs.createReadStream(null, { fd: fdv, autoClose: false, start: options && options.offset, end: options && options.length !== undefined && options.length >= 0 ? (options.offset || 0) + options.length - 1 : undefined });
    }, headers, options, () => {
      const fs = require('../fs.js');
      return fs.fstatSync(typeof fd === 'object' && fd !== null ? fd.fd : fd);
    });
  }

  respondWithFile(path, headers, options) {
    this._checkFileResponse(headers, options);
    this._respondWithData(() => require('../fs.js').createReadStream(path, {
      start: options && options.offset,
      end: options && options.length !== undefined && options.length >= 0 ? (options.offset || 0) + options.length - 1 : undefined,
    }), headers, options, () => require('../fs.js').statSync(path));
  }

  // _checkFileResponse is the synchronous part of node's checks of
  // respondWithFile and respondWithFD.
  _checkFileResponse(headers, options) {
    if (this.destroyed || this.closed) throw h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    if (this.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    if (options !== undefined && (options === null || typeof options !== 'object')) throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
    options = options || {};
    for (const [name, type] of [['offset', 'number'], ['length', 'number'], ['statCheck', 'function']]) {
      const v = options[name];
      if (v !== undefined && typeof v !== type) throw codedError('ERR_INVALID_ARG_VALUE', `options.${name}`, v);
    }
    const [status] = responseHead(headers);
    if (kNoBodyStatus.has(status) || this._method === 'HEAD') {
      throw h2Error('ERR_HTTP2_PAYLOAD_FORBIDDEN', `Responses with ${status} status must not have a payload`);
    }
  }

  // _respondWithData answers with a file read through the kernel's fs.
  _respondWithData(open, headers, options, stat) {
    if (this.destroyed || this.closed) throw h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    if (this.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    options = { ...(options || {}) };
    headers = { ...(headers || {}) };
    let st;
    try {
      st = stat();
    } catch (err) {
      if (typeof options.onError === 'function') { options.onError(err); return; }
      if (this._fdResponse && typeof options.statCheck !== 'function') {
        // node sends the head of an fd response before reading it: a bad
        // descriptor resets the stream after the head.
        this._afterRespond = () => this.destroy(h2Error('ERR_HTTP2_STREAM_ERROR', 'Stream closed with error code NGHTTP2_INTERNAL_ERROR'));
        this.respond(headers);
        return;
      }
      this.destroy(err);
      return;
    }
    if (st.isDirectory && st.isDirectory()) {
      const err = h2Error('ERR_HTTP2_SEND_FILE', 'Directories cannot be sent');
      if (typeof options.onError === 'function') { options.onError(err); return; }
      this.destroy(err);
      return;
    }
    if (typeof options.statCheck === 'function' && options.statCheck(st, headers, options) === false) return;
    const offset = options.offset || 0;
    let length = options.length !== undefined && options.length >= 0 ? options.length : st.size - offset;
    length = Math.max(0, Math.min(length, st.size - offset));
    if (headers['content-length'] === undefined && st.isFile && st.isFile()) headers['content-length'] = length;
    this.respond(headers, { waitForTrailers: options.waitForTrailers });
    if (this._method === 'HEAD' || this.writableEnded) return;
    const src = open();
    src.on('error', (err) => this.destroy(err));
    src.pipe(this);
  }

  pushStream(headers, options, callback) {
    if (typeof options === 'function') { callback = options; options = {}; }
    if (typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
    if (this.destroyed || this.closed) throw h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    if (this.session._pushEnabled === false) throw h2Error('ERR_HTTP2_PUSH_DISABLED', 'HTTP/2 client has disabled push streams');
    if (this.headersSent && this.writableFinished) throw h2Error('ERR_HTTP2_STREAM_CLOSED', 'The stream is already closed');
    headers = { ...(headers || {}) };
    for (const [k, v] of Object.entries(headers)) {
      const name = k.toLowerCase();
      if (connectionHeaders.has(name) && !(name === 'te' && v === 'trailers')) {
        throw h2Error('ERR_HTTP2_INVALID_CONNECTION_HEADERS', `HTTP/1 Connection specific headers are forbidden: "${name}"`, TypeError);
      }
    }
    const path = headers[':path'] || '/';
    const method = headers[':method'] || 'GET';
    const pairs = [];
    for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':') && v !== undefined) pairs.push([k.toLowerCase(), String(v)]);
    const req = { method, path, scheme: this.session._scheme, authority: headers[':authority'] || '', headers: pairs };
    const entry = { method, path, callback, headers };
    this.session._pushes.push(entry);
    request((id) => B.h2sPush(this._h, JSON.stringify(req), id), (code) => {
      if (!code) return;
      const i = this.session._pushes.indexOf(entry);
      if (i >= 0) this.session._pushes.splice(i, 1);
      if (code === 'EOPNOTSUPP') {
        this.session._pushEnabled = false;
        callback(h2Error('ERR_HTTP2_PUSH_DISABLED', 'HTTP/2 client has disabled push streams'));
      } else {
        callback(h2Error('ERR_HTTP2_STREAM_ERROR', `Push stream failed (${code})`));
      }
    });
  }

  sendTrailers(headers) {
    if (this.destroyed || this.closed) throw h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    if (this._trailersSent) throw h2Error('ERR_HTTP2_TRAILERS_ALREADY_SENT', 'Trailing headers have already been sent');
    if (!this._wantTrailers || !this._trailersReady) throw h2Error('ERR_HTTP2_TRAILERS_NOT_READY', 'Trailing headers cannot be sent until after the wantTrailers event is emitted');
    const [, pairs] = responseHead(headers, true);
    this._trailersSent = true;
    this.sentTrailers = headers;
    this._finishWith(pairs, this._trailersCb);
  }

  _opStarted() { this._ops = (this._ops || 0) + 1; }

  _opDone() {
    this._ops--;
    if (this._ops === 0 && this._resetAfterOps) this._resetAfterOps();
  }

  _onData(chunk) {
    if (!this.push(chunk)) {
      this._paused = true;
      if (this._live()) B.h2sPause(this._h, true);
    }
  }

  _onBodyEnd(info) {
    if (info.trailers) this.emit('trailers', headerObject(info.trailers), constants.NGHTTP2_FLAG_END_STREAM | constants.NGHTTP2_FLAG_END_HEADERS);
    this.push(null);
  }

  _read() {
    if (this._paused || this._waitsContinue) {
      this._paused = false;
      this._waitsContinue = false;
      if (this._live()) B.h2sPause(this._h, false);
    }
  }

  _write(chunk, encoding, cb) {
    if (!this.headersSent) this.respond();
    if (!this._live()) { cb(this._goClosed ? null : h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed')); return; }
    const data = typeof chunk === 'string' ? buf().from(chunk, encoding) : chunk;
    this._opStarted();
    request((id) => B.h2sWrite(this._h, giveBytes(data), id), (code) => {
      this._opDone();
      // A client that reset the stream ends the write quietly: 'aborted'
      // and 'close' report it.
      cb(code && code !== 'EPIPE' ? fromBridge(code, 'write') : null);
    });
  }

  _final(cb) {
    if (!this.headersSent) this._send(200, [], {}, !this._wantTrailers);
    if (this._wantTrailers) {
      this._trailersReady = true;
      this._trailersCb = cb;
      process.nextTick(() => {
        this.emit('wantTrailers');
        // No trailers sent in the handler: the stream ends without any.
        if (!this._trailersSent && !this.destroyed) { this._trailersSent = true; this._finishWith([], cb); }
      });
      return;
    }
    this._finishWith([], cb);
  }

  _finishWith(trailers, cb) {
    if (!this._live()) { cb(); return; }
    const body = trailers.length ? JSON.stringify(trailers) : '';
    this._opStarted();
    request((id) => B.h2sEnd(this._h, body, id), () => {
      this._opDone();
      cb();
    });
  }

  // _onGoClosed: Go's handler for the stream ended, normally (the
  // response is over) or by the peer's reset or the session's end.
  _onGoClosed(code, payload) {
    this._goClosed = true;
    if (code) {
      const err = fromGo(code, payload, 'read');
      const rst = err.rstCode !== undefined ? err.rstCode : constants.NGHTTP2_CANCEL;
      if (this.rstCode === undefined) this.rstCode = rst;
      if (!this.writableFinished || !this.readableEnded) {
        this.aborted = true;
        this.emit('aborted');
      }
      this.destroy(rst === constants.NGHTTP2_NO_ERROR || rst === constants.NGHTTP2_CANCEL ? undefined : err);
      return;
    }
    if (this.rstCode === undefined) this.rstCode = constants.NGHTTP2_NO_ERROR;
    if (this.writableFinished) this.destroy();
    else this.once('finish', () => this.destroy());
  }

  _destroy(err, cb) {
    // As in node, a stream destroyed without an error resets with NO_ERROR.
    if (this.rstCode === undefined) this.rstCode = err ? constants.NGHTTP2_INTERNAL_ERROR : constants.NGHTTP2_NO_ERROR;
    // As node's closeStream: a stream closed before its response was
    // ended is aborted.
    if (!this.aborted && !this._writableState.ending) {
      this.aborted = true;
      this.emit('aborted');
    }
    if (this._h) {
      const h = this._h;
      const reset = () => {
        this._resetAfterOps = null;
        if (!this._goClosed) B.h2sReset(h, this.rstCode);
      };
      // A reset asked for while the head, or the data of a response the
      // guest already ended, is on its way follows it, as node's
      // RST_STREAM follows the frames it already queued.
      if (this._ops > 0 && (this._respondPending || (!err && this._writableState.ending))) this._resetAfterOps = reset;
      else reset();
      this._h = 0;
    }
    this.session._streamDone(this);
    cb(err);
    process.nextTick(() => this.emit('close'));
  }

  close(code = constants.NGHTTP2_NO_ERROR, callback) { closeStream(this, code, callback); }

  priority() {}
  setTimeout(ms, cb) {
    if (cb) this.once('timeout', cb);
    clearTimeout(this._timer);
    if (ms > 0) {
      this._timer = setTimeout(() => this.emit('timeout'), ms);
      if (this._timer.unref) this._timer.unref();
      this.once('close', () => clearTimeout(this._timer));
    }
    return this;
  }
}

// --- sessions ---

class ServerHttp2Session extends SessionBase {
  constructor(server, socket, options) {
    super();
    this.server = server;
    this.socket = socket;
    this.type = constants.NGHTTP2_SESSION_SERVER;
    this.encrypted = !!socket.encrypted;
    this.alpnProtocol = this.encrypted ? 'h2' : 'h2c';
    this.originSet = undefined;
    this._scheme = this.encrypted ? 'https' : 'http';
    this._h = 0;
    this._streams = new Set();
    this._pushes = [];
    this._pushEnabled = undefined;
    this._closing = false;
    this._destroyed = false;
    this._goClosed = false;
    this._closeEmitted = false;
    this._local = { ...getDefaultSettings(), ...(options.settings || {}) };
    this._timer = null;
    this._timeoutMs = 0;
  }

  get connecting() { return false; }
  get pendingSettingsAck() { return false; }
  get localSettings() { return { ...this._local }; }
  get remoteSettings() { return getDefaultSettings(); }
  get state() {
    return { effectiveLocalWindowSize: 1 << 20, localWindowSize: 1 << 20, remoteWindowSize: 65535, outboundQueueSize: 0,
      deflateDynamicTableSize: 0, inflateDynamicTableSize: 0, nextStreamID: 2 };
  }

  _start(fd, options) {
    const h = nextSession++;
    const s = options.settings || {};
    const opts = {
      maxConcurrentStreams: Number(s.maxConcurrentStreams || 0) | 0,
      maxHeaderListSize: Number(options.maxHeaderListSize || s.maxHeaderListSize || s.maxHeaderSize || 0) | 0,
      initialWindowSize: Number(s.initialWindowSize || 0) | 0,
      maxFrameSize: Number(s.maxFrameSize || 0) | 0,
      encrypted: this.encrypted,
    };
    B.h2sServe(fd, h, JSON.stringify(opts));
    this._h = h;
    sessions.set(h, this);
  }

  _touch() {
    if (!this._timeoutMs) return;
    clearTimeout(this._timer);
    this._timer = setTimeout(() => {
      if (this._streams.size > 0) { this._touch(); return; }
      if (this.listenerCount('timeout') > 0) this.emit('timeout');
      else if (this.server && this.server.listenerCount('timeout') > 0) this.server.emit('timeout', this);
      else this.destroy();
    }, this._timeoutMs);
    if (this._timer.unref) this._timer.unref();
  }

  _onStream(sh, info) {
    const headers = headerObject(info.headers);
    const raw = [];
    for (const [k, v] of info.headers) raw.push(k, v);
    const stream = new ServerHttp2Stream(this, sh, info.id, headers, info.end);
    if (headers.expect === '100-continue') stream._waitsContinue = true;
    streams.set(sh, stream);
    this._streams.add(stream);
    this._touch();
    const flags = constants.NGHTTP2_FLAG_END_HEADERS | (info.end ? constants.NGHTTP2_FLAG_END_STREAM : 0);
    // A request x/net made for a push this session promised answers it.
    const i = this._pushes.findIndex((p) => p.path === headers[':path'] && p.method === headers[':method']);
    if (i >= 0) {
      const [p] = this._pushes.splice(i, 1);
      this._pushEnabled = true;
      p.callback(null, stream, headers);
      return;
    }
    this.emit('stream', stream, headers, flags, raw);
  }

  _onGoClosed(code, payload) {
    this._goClosed = true;
    this._h = 0;
    for (const stream of [...this._streams]) if (!stream.destroyed) stream._onGoClosed('ERR_HTTP2_STREAM_CANCEL', '{"rst":8}');
    if (code && !this._destroyed && !this._closing) {
      const err = fromGo(code, payload, 'read');
      this.emit('error', err);
      if (this.server) this.server.emit('sessionError', err, this);
    }
    this._closing = true;
    this._maybeClose();
  }

  _closed() {
    clearTimeout(this._timer);
    if (this.socket) this.socket.destroy();
  }

  close(callback) {
    if (typeof callback === 'function') this.once('close', callback);
    if (this._closing || this._destroyed) return;
    this._closing = true;
    if (this._h) B.h2sClose(this._h, true);
    this._maybeClose();
  }

  goaway(code, lastStreamID, opaqueData) {
    validateGoaway(this, code, lastStreamID, opaqueData);
    this.close();
  }

  destroy(error, code) {
    if (typeof error === 'number') { code = error; error = undefined; }
    if (this._destroyed) return;
    this._destroyed = true;
    this._closing = true;
    void code;
    if (error) process.nextTick(() => this.emit('error', error));
    // The connection goes with the session, as node's socket does, and
    // its streams send no RST_STREAM first: the client sees the session
    // end under them (CANCEL), not a reset (NO_ERROR) that raced it.
    for (const stream of [...this._streams]) {
      stream._goClosed = true;
      stream.destroy();
    }
    this._streams.clear();
    if (this._h) B.h2sClose(this._h, false);
    this._maybeClose();
  }

  ping(payload, callback) {
    if (typeof payload === 'function') { callback = payload; payload = undefined; }
    if (typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
    // x/net's server sends no PINGs of its own (see bridge_http2_server.go).
    process.nextTick(callback, h2Error('ERR_HTTP2_PING_CANCEL', 'HTTP2 ping cancelled'), 0, payload ? buf().from(payload) : buf().alloc(8));
    return false;
  }

  settings(settings, callback) {
    if (settings === null || typeof settings !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'settings', 'of type object', settings);
    if (callback !== undefined && typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
    validateSettings(settings);
    // The Go session keeps the settings it started with; the values are
    // recorded so localSettings shows them.
    Object.assign(this._local, settings);
    if (callback) process.nextTick(callback, null, this.localSettings, 0);
  }

  altsvc() {}
  origin() {}
  setTimeout(ms, cb) {
    if (cb) this.once('timeout', cb);
    this._timeoutMs = ms;
    this._touch();
    return this;
  }

  ref() {
    if (this._h) B.h2sRef(this._h, true);
    return this;
  }

  unref() {
    if (this._h) B.h2sRef(this._h, false);
    return this;
  }
}

// --- the compatibility API ---

const kRequest = Symbol('request');
const kResponse = Symbol('response');
let statusMessageWarned = false;
let connectionHeaderWarned = false;

// statusMessageWarn is node's once-a-process warning that HTTP/2 has no
// reason phrase.
function statusMessageWarn() {
  if (statusMessageWarned) return;
  statusMessageWarned = true;
  process.emitWarning('Status message is not supported by HTTP/2 (RFC7540 8.1.2.4)', 'UnsupportedWarning');
}

function validateName(name) {
  if (typeof name !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'name', 'of type string', name);
}

// assertValidHeader is the compatibility API's check of a header it keeps
// for the response (or its trailers).
function assertValidHeader(name, value) {
  if (name === '' || typeof name !== 'string' || name.includes(' ')) {
    throw h2Error('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`, TypeError);
  }
  if (name.startsWith(':')) throw h2Error('ERR_HTTP2_PSEUDOHEADER_NOT_ALLOWED', 'Cannot set HTTP/2 pseudo-headers', TypeError);
  if (value === undefined || value === null) {
    throw h2Error('ERR_HTTP2_INVALID_HEADER_VALUE', `Invalid value "${value}" for header "${name}"`, TypeError);
  }
}

const linkRe = /^(?:<[^>]*>)(?:\s*;\s*[^;"\s]+(?:=(")?[^;"\s]*\1)?)*$/;
const linkReason = 'must be an array or string of format "</styles.css>; rel=preload; as=style"';

// linkValue checks the link hints of writeEarlyHints as node does and
// joins them.
function linkValue(hints) {
  const check = (v) => {
    if (typeof v !== 'string' || !linkRe.test(v)) throw codedError('ERR_INVALID_ARG_VALUE', 'hints', v, linkReason);
  };
  if (typeof hints === 'string') { check(hints); return hints; }
  if (Array.isArray(hints)) { hints.forEach(check); return hints.join(', '); }
  throw codedError('ERR_INVALID_ARG_VALUE', 'hints', hints, linkReason);
}

function noSocketManipulation() {
  return h2Error('ERR_HTTP2_NO_SOCKET_MANIPULATION', 'HTTP/2 sockets should not be directly manipulated (e.g. read and written)');
}

// proxySocketHandler makes a compatibility request's socket as node's:
// the stream answers for the stream's own state (readable, writable,
// destroyed, events, timeouts), the session's socket for the rest, and
// reading or writing it directly is refused.
const proxySocketHandler = {
  has(stream, prop) {
    const ref = stream.session ? stream.session.socket : stream;
    return prop in stream || (ref !== undefined && ref !== null && prop in ref);
  },
  get(stream, prop) {
    switch (prop) {
      case 'on': case 'once': case 'end': case 'emit': case 'destroy':
        return stream[prop].bind(stream);
      case 'writable': case 'destroyed':
        return stream[prop];
      case 'readable': {
        if (stream.destroyed) return false;
        const req = stream[kRequest];
        return req ? req.readable : stream.readable;
      }
      case 'setTimeout': {
        const target = stream.session || stream;
        return target.setTimeout.bind(target);
      }
      case 'write': case 'read': case 'pause': case 'resume':
        throw noSocketManipulation();
      default: {
        const ref = stream.session ? stream.session.socket : stream;
        const value = ref[prop];
        return typeof value === 'function' ? value.bind(ref) : value;
      }
    }
  },
  getPrototypeOf(stream) {
    return Object.getPrototypeOf(stream.session ? stream.session.socket : stream);
  },
  set(stream, prop, value) {
    switch (prop) {
      case 'writable': case 'readable': case 'destroyed': case 'on': case 'once': case 'end': case 'emit': case 'destroy':
        stream[prop] = value;
        return true;
      case 'setTimeout':
        (stream.session || stream).setTimeout = value;
        return true;
      case 'write': case 'read': case 'pause': case 'resume':
        throw noSocketManipulation();
      default:
        (stream.session ? stream.session.socket : stream)[prop] = value;
        return true;
    }
  },
};

const kProxySocket = Symbol('proxySocket');

function proxySocket(stream) {
  if (!stream[kProxySocket]) stream[kProxySocket] = new Proxy(stream, proxySocketHandler);
  return stream[kProxySocket];
}

class Http2ServerRequest extends Readable {
  constructor(stream, headers, options, rawHeaders) {
    super({ autoDestroy: false, ...options });
    this._state = { closed: false, didRead: false };
    this._stream = stream;
    this._headers = headers;
    this.rawHeaders = rawHeaders;
    this.trailers = {};
    this.rawTrailers = [];
    this._aborted = false;
    this.httpVersion = '2.0';
    this.httpVersionMajor = 2;
    this.httpVersionMinor = 0;
    stream[kRequest] = this;
    stream.on('trailers', (t, _flags, raw) => {
      Object.assign(this.trailers, t);
      if (raw) this.rawTrailers.push(...raw);
      else for (const [k, v] of Object.entries(t)) this.rawTrailers.push(k, v);
    });
    stream.on('end', () => { if (stream[kRequest] !== undefined) this.push(null); });
    stream.on('error', () => {});
    stream.on('aborted', () => {
      if (stream[kRequest] === undefined || this._state.closed) return;
      this._aborted = true;
      this.emit('aborted');
    });
    stream.on('close', () => {
      if (stream[kRequest] === undefined) return;
      this._state.closed = true;
      this.push(null);
      // Data no one asked for is dumped, as http's IncomingMessage does.
      if (!this._state.didRead && !this._readableState.resumeScheduled) this.resume();
      stream[kRequest] = undefined;
      this.emit('close');
    });
    stream.on('timeout', () => this.emit('timeout'));
    this.on('pause', () => stream.pause());
    this.on('resume', () => stream.resume());
  }

  _read() {
    if (this._state.didRead) { process.nextTick(() => this._stream.resume()); return; }
    this._state.didRead = true;
    this._stream.on('data', (chunk) => {
      if (this._stream[kRequest] !== undefined && !this.push(chunk)) this._stream.pause();
    });
    this._stream.resume();
  }

  get aborted() { return this._aborted; }
  get complete() { return this._aborted || this.readableEnded || this._state.closed || this._stream.destroyed; }
  get stream() { return this._stream; }
  get headers() { return this._headers; }
  get method() { return this._headers[':method']; }
  set method(m) {
    if (typeof m !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'method', 'of type string', m);
    if (m.trim() === '') throw codedError('ERR_INVALID_ARG_VALUE', 'method', m);
    this._headers[':method'] = m;
  }
  get url() { return this._headers[':path']; }
  set url(u) { this._headers[':path'] = u; }
  get authority() { return this._headers[':authority'] !== undefined ? this._headers[':authority'] : this._headers.host; }
  get scheme() { return this._headers[':scheme']; }
  get socket() { return proxySocket(this._stream); }
  get connection() { return this.socket; }
  setTimeout(ms, cb) {
    if (!this._state.closed) this._stream.setTimeout(ms, cb);
    return this;
  }
}

class Http2ServerResponse extends Stream {
  constructor(stream, headers, options) {
    super(options);
    void headers;
    this._state = { closed: false, ending: false, destroyed: false, headRequest: false, sendDate: true, statusCode: 200 };
    this._headers = Object.create(null);
    this._trailers = Object.create(null);
    this._stream = stream;
    this.writable = true;
    this.req = stream[kRequest];
    stream[kResponse] = this;
    const onTrailers = () => stream.sendTrailers(this._trailers);
    stream.on('drain', () => { if (stream[kResponse] !== undefined) this.emit('drain'); });
    stream.on('close', () => this._onStreamClose(onTrailers));
    stream.on('wantTrailers', onTrailers);
    stream.on('timeout', () => this.emit('timeout'));
    this._onTrailers = onTrailers;
  }

  // _onStreamClose is node's: the response finishes when its stream
  // closes, however it ended.
  _onStreamClose() {
    const stream = this._stream;
    if (stream[kResponse] === undefined) return;
    this._state.closed = true;
    stream.removeListener('wantTrailers', this._onTrailers);
    stream[kResponse] = undefined;
    this.emit('finish');
    this.emit('close');
  }

  get stream() { return this._stream; }
  get headersSent() { return this._stream.headersSent; }
  get finished() { return this._state.ending; }
  get writableEnded() { return this._state.ending; }
  get writableCorked() { return this._stream.writableCorked; }
  get writableHighWaterMark() { return this._stream.writableHighWaterMark; }
  get writableFinished() { return this._stream.writableFinished; }
  get writableLength() { return this._stream.writableLength; }
  get _header() { return this.headersSent; }
  // Like http's ServerResponse, a finished response lets its socket go.
  get socket() {
    if (this._state.closed) return undefined;
    return proxySocket(this._stream);
  }
  get connection() { return this.socket; }
  get sendDate() { return this._state.sendDate; }
  set sendDate(v) { this._state.sendDate = Boolean(v); }
  get statusMessage() { statusMessageWarn(); return ''; }
  set statusMessage(_m) { statusMessageWarn(); }
  get statusCode() { return this._state.statusCode; }
  set statusCode(code) {
    code |= 0;
    if (code >= 100 && code < 200) throw h2Error('ERR_HTTP2_INFO_STATUS_NOT_ALLOWED', 'Informational status codes cannot be used', RangeError);
    if (code < 100 || code > 599) throw h2Error('ERR_HTTP2_STATUS_INVALID', `Invalid status code: ${code}`, RangeError);
    this._state.statusCode = code;
  }

  setTrailer(name, value) {
    validateName(name);
    name = name.trim().toLowerCase();
    assertValidHeader(name, value);
    this._trailers[name] = value;
  }

  addTrailers(headers) {
    for (const k of Object.keys(headers)) this.setTrailer(k, headers[k]);
  }

  getHeader(name) { validateName(name); return this._headers[name.trim().toLowerCase()]; }
  getHeaderNames() { return Object.keys(this._headers); }
  getHeaders() { return Object.assign(Object.create(null), this._headers); }
  hasHeader(name) { validateName(name); return Object.prototype.hasOwnProperty.call(this._headers, name.trim().toLowerCase()); }

  removeHeader(name) {
    validateName(name);
    if (this._stream.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    name = name.trim().toLowerCase();
    if (name === 'date') { this._state.sendDate = false; return; }
    delete this._headers[name];
  }

  setHeader(name, value) {
    validateName(name);
    if (this._stream.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    this._setHeader(name, value);
    return this;
  }

  _setHeader(name, value) {
    name = name.trim().toLowerCase();
    assertValidHeader(name, value);
    if (!this._connectionHeaderAllowed(name, value)) return;
    this._headers[name] = value;
  }

  appendHeader(name, value) {
    validateName(name);
    if (this._stream.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    this._appendHeader(name, value);
    return this;
  }

  _appendHeader(name, value) {
    name = name.trim().toLowerCase();
    assertValidHeader(name, value);
    if (!this._connectionHeaderAllowed(name, value)) return;
    const cur = this._headers[name];
    if (cur === undefined) this._headers[name] = value;
    else this._headers[name] = [].concat(cur, value);
  }

  // _connectionHeaderAllowed: node drops a connection header (other than
  // "connection: trailers") with a warning instead of throwing.
  _connectionHeaderAllowed(name, value) {
    if (name !== 'connection' || value === 'trailers') return true;
    if (!connectionHeaderWarned) {
      connectionHeaderWarned = true;
      process.emitWarning('The provided connection header is not valid, the value will be dropped from the header and will never be in use.', 'UnsupportedWarning');
    }
    return false;
  }

  writeHead(statusCode, statusMessage, headers) {
    if (this._state.closed || this._stream.destroyed) return this;
    if (this._stream.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    if (typeof statusMessage === 'string') statusMessageWarn();
    if (headers === undefined && typeof statusMessage === 'object') headers = statusMessage;
    if (Array.isArray(headers)) {
      const tuples = headers.length > 0 && Array.isArray(headers[0]);
      if (!tuples && headers.length % 2 !== 0) throw codedError('ERR_INVALID_ARG_VALUE', 'headers', headers);
      // The array's names replace earlier ones but may repeat themselves.
      const names = tuples ? headers.map((h) => h[0]) : headers.filter((_, i) => i % 2 === 0);
      for (const n of names) this.removeHeader(n);
      if (tuples) for (const [k, v] of headers) this._appendHeader(k, v);
      else for (let i = 0; i < headers.length; i += 2) this._appendHeader(headers[i], headers[i + 1]);
    } else if (typeof headers === 'object' && headers !== null) {
      for (const k of Object.keys(headers)) this._setHeader(k, headers[k]);
    }
    this._state.statusCode = statusCode;
    this._beginSend();
    return this;
  }

  _beginSend() {
    this._headers[':status'] = this._state.statusCode;
    this._stream.respond(this._headers, { endStream: this._state.ending, waitForTrailers: true, sendDate: this._state.sendDate });
  }

  flushHeaders() {
    if (!this._state.closed && !this._stream.headersSent) this.writeHead(this._state.statusCode);
  }

  write(chunk, encoding, cb) {
    if (typeof encoding === 'function') { cb = encoding; encoding = 'utf8'; }
    let err;
    if (this._state.ending) err = codedError('ERR_STREAM_WRITE_AFTER_END');
    else if (this._state.closed) err = h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    else if (this._state.destroyed) return false;
    if (err) {
      if (typeof cb === 'function') process.nextTick(cb, err);
      this.destroy(err);
      return false;
    }
    if (!this._stream.headersSent) this.writeHead(this._state.statusCode);
    return this._stream.write(chunk, encoding, cb);
  }

  end(chunk, encoding, cb) {
    const stream = this._stream;
    const state = this._state;
    if (typeof chunk === 'function') { cb = chunk; chunk = null; }
    else if (typeof encoding === 'function') { cb = encoding; encoding = 'utf8'; }
    if (state.closed || state.ending) {
      if (typeof cb === 'function') process.nextTick(cb);
      return this;
    }
    if (chunk !== null && chunk !== undefined) this.write(chunk, encoding);
    state.ending = true;
    if (typeof cb === 'function') {
      if (stream.writableEnded) this.once('finish', cb);
      else stream.once('finish', cb);
    }
    if (!stream.headersSent) this.writeHead(state.statusCode);
    if (state.closed || stream.destroyed) this._onStreamClose();
    else stream.end();
    return this;
  }

  destroy(err) {
    if (this._state.destroyed) return;
    this._state.destroyed = true;
    this._stream.destroy(err);
  }

  writeContinue() {
    if (this._stream.headersSent || this._state.closed) return false;
    // x/net sends the 100 of a request that expects it when its body is
    // first read.
    if (this._stream._waitsContinue) this._stream._read();
    else this._stream.additionalHeaders({ ':status': 100 });
    return true;
  }

  writeEarlyHints(hints) {
    if (hints === null || typeof hints !== 'object' || Array.isArray(hints)) throw codedError('ERR_INVALID_ARG_TYPE', 'hints', 'of type object', hints);
    const link = linkValue(hints.link);
    if (link.length === 0) return false;
    if (this._stream.headersSent || this._state.closed) return false;
    const headers = {};
    for (const k of Object.keys(hints)) if (k !== 'link') headers[k] = hints[k];
    this._stream.additionalHeaders({ ...headers, ':status': 103, link });
    return true;
  }

  setTimeout(ms, cb) {
    if (!this._state.closed) this._stream.setTimeout(ms, cb);
    return this;
  }

  createPushResponse(headers, callback) {
    if (typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
    if (this._state.closed) {
      process.nextTick(callback, h2Error('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed'));
      return;
    }
    this._stream.pushStream(headers, {}, (err, stream) => {
      if (err) { callback(err); return; }
      callback(null, new Http2ServerResponse(stream));
    });
  }
}

// onServerStream answers a stream with the compatibility API (the
// server's Http2ServerRequest and Http2ServerResponse classes).
function onServerStream(stream, headers, flags, rawHeaders) {
  const server = this;
  const opts = server._h2Options || {};
  const Req = opts.Http2ServerRequest || Http2ServerRequest;
  const Res = opts.Http2ServerResponse || Http2ServerResponse;
  const req = new Req(stream, headers, undefined, rawHeaders);
  const res = new Res(stream);
  if (headers[':method'] === 'CONNECT') {
    if (!server.emit('connect', req, res)) {
      res.statusCode = 405;
      res.end();
    }
    return;
  }
  if (headers.expect !== undefined) {
    if (headers.expect === '100-continue') {
      if (server.listenerCount('checkContinue') > 0) {
        server.emit('checkContinue', req, res);
      } else {
        res.writeContinue();
        server.emit('request', req, res);
      }
    } else if (server.listenerCount('checkExpectation') > 0) {
      server.emit('checkExpectation', req, res);
    } else {
      res.statusCode = 417;
      res.end();
    }
    return;
  }
  server.emit('request', req, res);
}

// --- servers ---

function validateOptions(options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
  if (options.settings !== undefined && (options.settings === null || typeof options.settings !== 'object')) {
    throw codedError('ERR_INVALID_ARG_TYPE', 'options.settings', 'of type object', options.settings);
  }
  for (const name of ['maxSessionInvalidFrames', 'maxSessionRejectedStreams']) {
    const v = options[name];
    if (v === undefined) continue;
    if (typeof v !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', v);
    if (!(v >= 0 && v <= 4294967295)) throw codedError('ERR_OUT_OF_RANGE', name, '>= 0 && <= 4294967295', v);
  }
  return options;
}

// setupServer wires an HTTP/2 server: each connection becomes a session,
// and 'request' listeners (the compatibility API) answer the streams no
// 'stream' listener of the server is left to.
function setupServer(server, options, onRequest) {
  server._h2Options = options;
  server.timeout = 0;
  server.pauseOnConnect = true;
  server._compat = false;
  const compat = () => {
    if (server._compat) return;
    server._compat = true;
    server.on('stream', onServerStream);
  };
  server.on('newListener', (ev) => { if (ev === 'request' || ev === 'checkContinue') compat(); });
  if (typeof onRequest === 'function') server.on('request', onRequest);
}

// startSession hands an accepted (and, for TLS, handshaken) socket to a
// Go session.
function startSession(server, socket) {
  const fd = socket[net._kFd];
  if (fd === undefined || fd < 0) { socket.destroy(); return; }
  if (typeof socket._peerInfo === 'function') socket._peerInfo(); // kept for remoteAddress
  const session = new ServerHttp2Session(server, socket, server._h2Options);
  socket[net._kFd] = -1;
  try {
    session._start(fd, server._h2Options);
  } catch (e) {
    try { B.close(fd); } catch { /* gone */ }
    socket.destroy();
    server.emit('sessionError', fromBridge(e, 'accept'), session);
    return;
  }
  if (server.timeout) session.setTimeout(server.timeout);
  session.on('stream', (stream, headers, flags, raw) => {
    if (server.listenerCount('stream') > 0) server.emit('stream', stream, headers, flags, raw);
    else if (session.listenerCount('stream') <= 1) stream.respond({ ':status': 404 }, { endStream: true });
  });
  session.on('error', (err) => { if (session.listenerCount('error') === 1) server.emit('sessionError', err, session); });
  server.emit('session', session);
}

class Http2Server extends net.Server {
  constructor(options, onRequest) {
    if (typeof options === 'function') { onRequest = options; options = undefined; }
    options = validateOptions(options);
    super({ allowHalfOpen: true });
    setupServer(this, options, onRequest);
    this.on('connection', (socket) => startSession(this, socket));
  }

  setTimeout(ms, cb) { return serverTimeout(this, ms, cb); }

  updateSettings(settings) {
    if (settings === null || typeof settings !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'settings', 'of type object', settings);
    this._h2Options = { ...this._h2Options, settings: { ...(this._h2Options.settings || {}), ...settings } };
  }
}

class Http2SecureServer extends require('../tls.js').Server {
  constructor(options, onRequest) {
    // Unlike createServer, the options come first and are not optional.
    options = validateOptions(options === undefined ? {} : options);
    const alpn = options.allowHTTP1 ? ['h2', 'http/1.1'] : ['h2'];
    super({ ...options, ALPNProtocols: alpn });
    setupServer(this, options, onRequest);
    this.on('secureConnection', (socket) => {
      if (socket.alpnProtocol === 'h2') { startSession(this, socket); return; }
      if (options.allowHTTP1) { this._http1(socket); return; }
      if (this.listenerCount('unknownProtocol') > 0) this.emit('unknownProtocol', socket);
      else socket.destroy();
    });
  }

  // _wrapAccepted: a failed handshake is the server's 'tlsClientError'
  // (and the session's never starts), not an error thrown at the guest.
  _wrapAccepted(fd) {
    const s = super._wrapAccepted(fd);
    s.on('error', () => {});
    return s;
  }

  // _http1 serves a client that did not agree on h2 with node's HTTP/1
  // server, as allowHTTP1 asks: 'request' gets http's objects.
  _http1(socket) {
    const httpServer = require('./http/server.js');
    if (!this._http1Init) {
      this._http1Init = true;
      httpServer.initServer(this, {});
    }
    socket.resume();
    httpServer.connectionListener.call(this, socket);
  }

  setTimeout(ms, cb) { return serverTimeout(this, ms, cb); }

  updateSettings(settings) { Http2Server.prototype.updateSettings.call(this, settings); }
}

// serverTimeout is setTimeout of both servers: the sessions' idle time.
function serverTimeout(server, ms, cb) {
  if (cb !== undefined) {
    validateFunction(cb, 'callback');
    server.on('timeout', cb);
  }
  server.timeout = ms;
  return server;
}

function createServer(options, onRequest) { return new Http2Server(options, onRequest); }
function createSecureServer(options, onRequest) { return new Http2SecureServer(options, onRequest); }

function performServerHandshake(socket, options) {
  const server = new Http2Server(options);
  startSession(server, socket);
  return [...sessions.values()].pop();
}

module.exports = {
  Http2Server,
  Http2SecureServer,
  ServerHttp2Session,
  ServerHttp2Stream,
  Http2ServerRequest,
  Http2ServerResponse,
  createServer,
  createSecureServer,
  performServerHandshake,
  sensitiveHeaders,
};
