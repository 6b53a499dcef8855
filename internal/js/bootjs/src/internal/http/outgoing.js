'use strict';
// OutgoingMessage: what ServerResponse and ClientRequest share, the
// header block and the body framing (Node's _http_outgoing).
const { Stream } = require('../../stream.js');
const { Buffer } = require('../../buffer.js');
const { httpError } = require('./errors.js');
const { CRLF, checkIsHttpToken, checkInvalidHeaderChar, validateHeaderName, validateHeaderValue } = require('./common.js');

const kOutHeaders = Symbol('kOutHeaders');
const kNeedDrain = Symbol('kNeedDrain');
const kCorked = Symbol('corked');
const kErrored = Symbol('errored');
const kHighWaterMark = Symbol('kHighWaterMark');
const kRejectNonStandardBodyWrites = Symbol('kRejectNonStandardBodyWrites');
const kUniqueHeaders = Symbol('kUniqueHeaders');
const kBytesWritten = Symbol('kBytesWritten');

const nop = () => {};
const RE_CONN_CLOSE = /(?:^|\W)close(?:$|\W)/i;
const RE_TE_CHUNKED = /(?:^|\W)chunked(?:$|\W)/i;
const crlfBuf = Buffer.from(CRLF);
const nonAsciiRe = /[^\x00-\x7f]/;

// The Date header, as Node formats it. Node caches it for a second with a
// timer; it is cheap enough to format per message.
function utcDate() { return new Date().toUTCString(); }

function OutgoingMessage(options) {
  Stream.call(this);
  this.outputData = [];
  this.outputSize = 0;
  this.writable = true;
  this.destroyed = false;
  this._last = false;
  this.chunkedEncoding = false;
  this.shouldKeepAlive = true;
  this.maxRequestsOnConnectionReached = false;
  this._defaultKeepAlive = true;
  this.useChunkedEncodingByDefault = true;
  this.sendDate = false;
  this._removedConnection = false;
  this._removedContLen = false;
  this._removedTE = false;
  this.strictContentLength = false;
  this[kBytesWritten] = 0;
  this._contentLength = null;
  this._hasBody = true;
  this._trailer = '';
  this[kNeedDrain] = false;
  this.finished = false;
  this._headerSent = false;
  this[kCorked] = 0;
  this._closed = false;
  this.socket = null;
  this._header = null;
  this[kOutHeaders] = null;
  this._keepAliveTimeout = 0;
  this._onPendingData = nop;
  this[kErrored] = null;
  this[kHighWaterMark] = (options && options.highWaterMark) || 16 * 1024;
  this[kRejectNonStandardBodyWrites] = (options && options.rejectNonStandardBodyWrites) || false;
  this[kUniqueHeaders] = null;
}
Object.setPrototypeOf(OutgoingMessage.prototype, Stream.prototype);
Object.setPrototypeOf(OutgoingMessage, Stream);

function getter(name, get) {
  Object.defineProperty(OutgoingMessage.prototype, name, { configurable: true, get });
}
getter('errored', function errored() { return this[kErrored]; });
getter('closed', function closed() { return this._closed; });
getter('writableFinished', function writableFinished() {
  return this.finished && this.outputSize === 0 && (!this.socket || this.socket.writableLength === 0);
});
getter('writableObjectMode', () => false);
getter('writableLength', function writableLength() { return this.outputSize + (this.socket ? this.socket.writableLength : 0); });
getter('writableHighWaterMark', function writableHighWaterMark() {
  return this.socket ? this.socket.writableHighWaterMark : this[kHighWaterMark];
});
getter('writableCorked', function writableCorked() { return this.socket ? this.socket.writableCorked : this[kCorked]; });
getter('writableEnded', function writableEnded() { return this.finished; });
getter('writableNeedDrain', function writableNeedDrain() { return !this.destroyed && !this.finished && this[kNeedDrain]; });
getter('headersSent', function headersSent() { return !!this._header; });
Object.defineProperty(OutgoingMessage.prototype, 'connection', {
  configurable: true, enumerable: true,
  get() { return this.socket; },
  set(val) { this.socket = val; },
});

// _headerNames (DEP0066): the header names as set, by lowercased name.
// One deprecated function serves get and set, so the warning shows once.
let warnHeaderNames;
function headerNamesDeprecated() {
  warnHeaderNames ||= require('../../util.js').deprecate(nop, 'OutgoingMessage.prototype._headerNames is deprecated', 'DEP0066');
  warnHeaderNames();
}
Object.defineProperty(OutgoingMessage.prototype, '_headerNames', {
  configurable: true,
  get() {
    headerNamesDeprecated();
    const headers = this[kOutHeaders];
    if (headers === null) return null;
    const out = { __proto__: null };
    for (const key of Object.keys(headers)) out[key] = headers[key][0];
    return out;
  },
  set(names) {
    headerNamesDeprecated();
    if (typeof names !== 'object' || names === null) return;
    const headers = this[kOutHeaders];
    if (!headers) return;
    for (const key of Object.keys(names)) {
      const header = headers[key];
      if (header) header[0] = names[key];
    }
  },
});

OutgoingMessage.prototype.cork = function cork() {
  if (this.socket) this.socket.cork();
  else this[kCorked]++;
};

OutgoingMessage.prototype.uncork = function uncork() {
  if (this.socket) this.socket.uncork();
  else if (this[kCorked]) this[kCorked]--;
};

OutgoingMessage.prototype.setTimeout = function setTimeout(msecs, callback) {
  if (callback) this.on('timeout', callback);
  if (!this.socket) this.once('socket', (socket) => socket.setTimeout(msecs));
  else this.socket.setTimeout(msecs);
  return this;
};

OutgoingMessage.prototype.destroy = function destroy(error) {
  if (this.destroyed) return this;
  this.destroyed = true;
  this[kErrored] = error;
  if (this.socket) this.socket.destroy(error);
  else this.once('socket', (socket) => socket.destroy(error));
  return this;
};

// _send writes data, the header block first if it is still unsent.
OutgoingMessage.prototype._send = function _send(data, encoding, callback, byteLength) {
  if (!this._headerSent && this._header !== null) {
    // The head is latin1; it rides in one write with a string body only
    // where that body's encoding writes it byte for byte.
    if (typeof data === 'string' && (encoding === 'latin1' || ((encoding === 'utf8' || !encoding) && !nonAsciiRe.test(this._header)))) {
      data = this._header + data;
    } else {
      const header = this._header;
      this.outputData.unshift({ data: header, encoding: 'latin1', callback: null });
      this.outputSize += header.length;
      this._onPendingData(header.length);
    }
    this._headerSent = true;
  }
  return this._writeRaw(data, encoding, callback, byteLength);
};

OutgoingMessage.prototype._writeRaw = function _writeRaw(data, encoding, callback, size) {
  const conn = this.socket;
  if (conn && conn.destroyed) return false;
  if (typeof encoding === 'function') {
    callback = encoding;
    encoding = null;
  }
  if (conn && conn._httpMessage === this && conn.writable) {
    if (this.outputData.length) this._flushOutput(conn);
    return conn.write(data, encoding || undefined, callback || undefined);
  }
  // No socket yet (or it belongs to an earlier response in a pipeline):
  // keep the data until it is this message's turn.
  this.outputData.push({ data, encoding, callback });
  const len = size !== undefined ? size : data.length;
  this.outputSize += len;
  this._onPendingData(len);
  return this.outputSize < this[kHighWaterMark];
};

OutgoingMessage.prototype._storeHeader = function _storeHeader(firstLine, headers) {
  const state = { connection: false, contLen: false, te: false, date: false, expect: false, trailer: false, header: firstLine };
  if (headers) {
    if (headers === this[kOutHeaders]) {
      for (const key in headers) processHeader(this, state, headers[key][0], headers[key][1], false);
    } else if (Array.isArray(headers)) {
      if (headers.length && Array.isArray(headers[0])) {
        for (let i = 0; i < headers.length; i++) processHeader(this, state, headers[i][0], headers[i][1], true);
      } else {
        if (headers.length % 2 !== 0) throw httpError('ERR_INVALID_ARG_VALUE', 'headers', headers);
        for (let n = 0; n < headers.length; n += 2) processHeader(this, state, headers[n], headers[n + 1], true);
      }
    } else {
      for (const key in headers) {
        if (Object.prototype.hasOwnProperty.call(headers, key)) processHeader(this, state, key, headers[key], true);
      }
    }
  }
  let { header } = state;
  if (this.sendDate && !state.date) header += `Date: ${utcDate()}\r\n`;

  // Keep-alive is announced only when the peer can find the body's end
  // (a length, chunks, or a client's agent).
  // A 204 or 304 with "Transfer-Encoding: chunked" set by the app gets no
  // zero chunk, and the connection closes after it: a proxy that expects
  // a body there would otherwise read the next response as this one's.
  if (this.chunkedEncoding && (this.statusCode === 204 || this.statusCode === 304)) {
    this.chunkedEncoding = false;
    this.shouldKeepAlive = false;
  }
  if (!this._removedConnection && !state.connection) {
    const shouldSendKeepAlive = this.shouldKeepAlive && (state.contLen || this.useChunkedEncodingByDefault || this.agent);
    if (shouldSendKeepAlive && this.maxRequestsOnConnectionReached) {
      header += 'Connection: close\r\n';
    } else if (shouldSendKeepAlive) {
      header += 'Connection: keep-alive\r\n';
      if (this._keepAliveTimeout && this._defaultKeepAlive) {
        const timeoutSeconds = Math.floor(this._keepAliveTimeout / 1000);
        let max = '';
        if (this._maxRequestsPerSocket > 0) max = `, max=${this._maxRequestsPerSocket}`;
        header += `Keep-Alive: timeout=${timeoutSeconds}${max}\r\n`;
      }
    } else {
      this._last = true;
      header += 'Connection: close\r\n';
    }
  }

  if (!state.contLen && !state.te) {
    if (!this._hasBody) {
      this.chunkedEncoding = false;
    } else if (!this.useChunkedEncodingByDefault) {
      this._last = true;
    } else if (!state.trailer && !this._removedContLen && typeof this._contentLength === 'number') {
      header += `Content-Length: ${this._contentLength}\r\n`;
    } else if (!this._removedTE) {
      header += 'Transfer-Encoding: chunked\r\n';
      this.chunkedEncoding = true;
    } else {
      // Neither a length nor chunks: the body ends with the connection.
      this._last = true;
    }
  }
  if (this.chunkedEncoding !== true && state.trailer) throw httpError('ERR_HTTP_TRAILER_INVALID');

  this._header = header + CRLF;
  this._headerSent = false;
  // "Expect: 100-continue" requests go out at once, to get the 100.
  if (state.expect) this._send('');
};

function processHeader(self, state, key, value, validate) {
  if (validate) validateHeaderName(key);
  if (Array.isArray(value)) {
    if ((value.length < 2 || !isCookieField(key)) && (!self[kUniqueHeaders] || !self[kUniqueHeaders].has(key.toLowerCase()))) {
      for (let i = 0; i < value.length; i++) storeHeader(self, state, key, value[i], validate);
      return;
    }
    value = value.join('; ');
  }
  storeHeader(self, state, key, value, validate);
}

function isCookieField(s) { return s.length === 6 && s.toLowerCase() === 'cookie'; }

function storeHeader(self, state, key, value, validate) {
  if (validate) validateHeaderValue(key, value);
  state.header += `${key}: ${value}${CRLF}`;
  matchHeader(self, state, key, value);
}

function matchHeader(self, state, field, value) {
  if (field.length < 4 || field.length > 17) return;
  field = field.toLowerCase();
  switch (field) {
    case 'connection':
      state.connection = true;
      self._removedConnection = false;
      if (RE_CONN_CLOSE.test(value)) self._last = true;
      else self.shouldKeepAlive = true;
      break;
    case 'transfer-encoding':
      state.te = true;
      self._removedTE = false;
      if (RE_TE_CHUNKED.test(value)) self.chunkedEncoding = true;
      break;
    case 'content-length':
      state.contLen = true;
      self._contentLength = +value;
      self._removedContLen = false;
      break;
    case 'date':
    case 'expect':
    case 'trailer':
      state[field] = true;
      break;
    case 'keep-alive':
      self._defaultKeepAlive = false;
      break;
    default:
  }
}

OutgoingMessage.prototype.setHeader = function setHeader(name, value) {
  if (this._header) throw httpError('ERR_HTTP_HEADERS_SENT', 'set');
  validateHeaderName(name);
  validateHeaderValue(name, value);
  let headers = this[kOutHeaders];
  if (headers === null) this[kOutHeaders] = headers = { __proto__: null };
  headers[name.toLowerCase()] = [name, value];
  return this;
};

OutgoingMessage.prototype.setHeaders = function setHeaders(headers) {
  if (this._header) throw httpError('ERR_HTTP_HEADERS_SENT', 'set');
  if (!headers || Array.isArray(headers) || typeof headers.keys !== 'function' || typeof headers.get !== 'function') {
    throw httpError('ERR_INVALID_ARG_TYPE', 'headers', 'an instance of Headers or Map', headers);
  }
  const cookies = [];
  for (const [key, value] of headers) {
    if (key === 'set-cookie') {
      if (Array.isArray(value)) cookies.push(...value);
      else cookies.push(value);
      continue;
    }
    this.setHeader(key, value);
  }
  if (cookies.length) this.setHeader('set-cookie', cookies);
  return this;
};

OutgoingMessage.prototype.appendHeader = function appendHeader(name, value) {
  if (this._header) throw httpError('ERR_HTTP_HEADERS_SENT', 'append');
  validateHeaderName(name);
  validateHeaderValue(name, value);
  const field = name.toLowerCase();
  const headers = this[kOutHeaders];
  if (headers === null || !headers[field]) return this.setHeader(name, value);
  if (!Array.isArray(headers[field][1])) headers[field][1] = [headers[field][1]];
  const existing = headers[field][1];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) existing.push(value[i]);
  } else {
    existing.push(value);
  }
  return this;
};

OutgoingMessage.prototype.getHeader = function getHeader(name) {
  if (typeof name !== 'string') throw httpError('ERR_INVALID_ARG_TYPE', 'name', 'of type string', name);
  const headers = this[kOutHeaders];
  if (headers === null) return undefined;
  const entry = headers[name.toLowerCase()];
  return entry && entry[1];
};

OutgoingMessage.prototype.getHeaderNames = function getHeaderNames() {
  return this[kOutHeaders] !== null ? Object.keys(this[kOutHeaders]) : [];
};

OutgoingMessage.prototype.getRawHeaderNames = function getRawHeaderNames() {
  const headersMap = this[kOutHeaders];
  if (headersMap === null) return [];
  return Object.values(headersMap).map((e) => e[0]);
};

OutgoingMessage.prototype.getHeaders = function getHeaders() {
  const headers = this[kOutHeaders];
  const ret = { __proto__: null };
  if (headers) {
    for (const key of Object.keys(headers)) ret[key] = headers[key][1];
  }
  return ret;
};

OutgoingMessage.prototype.hasHeader = function hasHeader(name) {
  if (typeof name !== 'string') throw httpError('ERR_INVALID_ARG_TYPE', 'name', 'of type string', name);
  return this[kOutHeaders] !== null && !!this[kOutHeaders][name.toLowerCase()];
};

OutgoingMessage.prototype.removeHeader = function removeHeader(name) {
  if (typeof name !== 'string') throw httpError('ERR_INVALID_ARG_TYPE', 'name', 'of type string', name);
  if (this._header) throw httpError('ERR_HTTP_HEADERS_SENT', 'remove');
  const key = name.toLowerCase();
  switch (key) {
    case 'connection': this._removedConnection = true; break;
    case 'content-length': this._removedContLen = true; break;
    case 'transfer-encoding': this._removedTE = true; break;
    case 'date': this.sendDate = false; break;
    default:
  }
  if (this[kOutHeaders] !== null) delete this[kOutHeaders][key];
};

OutgoingMessage.prototype._implicitHeader = function _implicitHeader() {
  throw httpError('ERR_METHOD_NOT_IMPLEMENTED', '_implicitHeader()');
};

OutgoingMessage.prototype.write = function write(chunk, encoding, callback) {
  if (typeof encoding === 'function') {
    callback = encoding;
    encoding = null;
  }
  const ret = write_(this, chunk, encoding, callback, false);
  if (!ret) this[kNeedDrain] = true;
  return ret;
};

function onError(msg, err, callback) {
  if (msg.socket && msg.socket._hadError) return;
  process.nextTick(emitErrorNt, msg, err, callback);
}

function emitErrorNt(msg, err, callback) {
  if (typeof callback === 'function') callback(err);
  if (typeof msg.emit === 'function' && !msg.destroyed) msg.emit('error', err);
}

function strictContentLength(msg) {
  return msg.strictContentLength && msg._contentLength != null && msg._hasBody && !msg._removedContLen &&
    !msg.chunkedEncoding && !msg.hasHeader('transfer-encoding');
}

function write_(msg, chunk, encoding, callback, fromEnd) {
  if (typeof callback !== 'function') callback = nop;
  if (chunk === null) throw httpError('ERR_STREAM_NULL_VALUES');
  if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) {
    throw httpError('ERR_INVALID_ARG_TYPE', 'chunk', 'of type string or an instance of Buffer or Uint8Array', chunk);
  }
  let err;
  if (msg.finished) err = httpError('ERR_STREAM_WRITE_AFTER_END');
  else if (msg.destroyed) err = httpError('ERR_STREAM_DESTROYED', 'write');
  if (err) {
    if (!msg.destroyed) onError(msg, err, callback);
    else process.nextTick(callback, err);
    return false;
  }

  let len;
  if (msg.strictContentLength) {
    len = typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.byteLength;
    if (strictContentLength(msg) && (fromEnd ? msg[kBytesWritten] + len !== msg._contentLength : msg[kBytesWritten] + len > msg._contentLength)) {
      throw httpError('ERR_HTTP_CONTENT_LENGTH_MISMATCH', len + msg[kBytesWritten], msg._contentLength);
    }
    msg[kBytesWritten] += len;
  }

  if (!msg._header) {
    if (fromEnd) {
      len = len !== undefined ? len : typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.byteLength;
      msg._contentLength = len;
    }
    msg._implicitHeader();
  }

  if (!msg._hasBody) {
    if (msg[kRejectNonStandardBodyWrites]) throw httpError('ERR_HTTP_BODY_NOT_ALLOWED');
    // A HEAD, 204 or 304 response has no body: writes are dropped.
    process.nextTick(callback);
    return true;
  }

  // Several writes in one tick go out as one packet.
  if (!fromEnd && msg.socket && !msg.socket.writableCorked) {
    msg.socket.cork();
    process.nextTick(connectionCorkNT, msg.socket);
  }

  let ret;
  if (msg.chunkedEncoding && chunk.length !== 0) {
    len = len !== undefined ? len : typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.byteLength;
    msg._send(len.toString(16), 'latin1', null);
    msg._send(crlfBuf, null, null);
    msg._send(chunk, encoding, null, len);
    ret = msg._send(crlfBuf, null, callback);
  } else {
    ret = msg._send(chunk, encoding, callback, len);
  }
  return ret;
}

function connectionCorkNT(conn) { conn.uncork(); }

OutgoingMessage.prototype.addTrailers = function addTrailers(headers) {
  this._trailer = '';
  const keys = Object.keys(headers);
  const isArray = Array.isArray(headers);
  for (let i = 0, l = keys.length; i < l; i++) {
    let field;
    let value;
    if (isArray) {
      field = headers[keys[i]][0];
      value = headers[keys[i]][1];
    } else {
      field = keys[i];
      value = headers[field];
    }
    if (typeof field !== 'string' || !field || !checkIsHttpToken(field)) throw httpError('ERR_INVALID_HTTP_TOKEN', 'Trailer name', field);
    if (Array.isArray(value) && value.length > 1 && (!this[kUniqueHeaders] || !this[kUniqueHeaders].has(field.toLowerCase()))) {
      for (let j = 0, n = value.length; j < n; j++) {
        if (checkInvalidHeaderChar(value[j])) throw httpError('ERR_INVALID_CHAR', 'trailer content', field);
        this._trailer += `${field}: ${value[j]}\r\n`;
      }
    } else {
      if (Array.isArray(value)) value = value.join('; ');
      if (checkInvalidHeaderChar(value)) throw httpError('ERR_INVALID_CHAR', 'trailer content', field);
      this._trailer += `${field}: ${value}\r\n`;
    }
  }
};

function onFinish(outmsg) {
  if (outmsg && outmsg.socket && outmsg.socket._hadError) return;
  outmsg.emit('finish');
}

OutgoingMessage.prototype.end = function end(chunk, encoding, callback) {
  if (typeof chunk === 'function') {
    callback = chunk;
    chunk = null;
    encoding = null;
  } else if (typeof encoding === 'function') {
    callback = encoding;
    encoding = null;
  }

  if (chunk) {
    if (this.finished) {
      onError(this, httpError('ERR_STREAM_WRITE_AFTER_END'), typeof callback !== 'function' ? nop : callback);
      return this;
    }
    if (this.socket) this.socket.cork();
    write_(this, chunk, encoding, null, true);
  } else if (this.finished) {
    if (typeof callback === 'function') {
      if (!this.writableFinished) this.on('finish', callback);
      else callback(httpError('ERR_STREAM_ALREADY_FINISHED', 'end'));
    }
    return this;
  } else if (!this._header) {
    if (this.socket) this.socket.cork();
    this._contentLength = 0;
    this._implicitHeader();
  }

  if (typeof callback === 'function') this.once('finish', callback);

  if (strictContentLength(this) && this[kBytesWritten] !== this._contentLength) {
    throw httpError('ERR_HTTP_CONTENT_LENGTH_MISMATCH', this[kBytesWritten], this._contentLength);
  }

  const finish = onFinish.bind(undefined, this);
  if (this._hasBody && this.chunkedEncoding) {
    this._send(`0\r\n${this._trailer}\r\n`, 'latin1', finish);
  } else if (!this._headerSent || this.writableLength || chunk) {
    this._send('', 'latin1', finish);
  } else {
    process.nextTick(finish);
  }

  if (this.socket) {
    // Fully uncork the connection: the message is complete.
    while (this.socket.writableCorked) this.socket.uncork();
  }
  this[kCorked] = 1;
  this.uncork();

  this.finished = true;

  // The message is written; the next one on the connection may start
  // (prefinish), unless it waits for the socket still.
  if (this.outputData.length === 0 && this.socket && this.socket._httpMessage === this) this._finish();
  return this;
};

OutgoingMessage.prototype._finish = function _finish() {
  this.emit('prefinish');
};

// _flush sends what was kept before the socket was ours.
OutgoingMessage.prototype._flush = function _flush() {
  const socket = this.socket;
  if (socket && socket.writable) {
    const ret = this._flushOutput(socket);
    if (this.finished) {
      this._finish();
    } else if (ret && this[kNeedDrain]) {
      this[kNeedDrain] = false;
      this.emit('drain');
    }
  }
};

OutgoingMessage.prototype._flushOutput = function _flushOutput(socket) {
  while (this[kCorked]) {
    this[kCorked]--;
    socket.cork();
  }
  const outputLength = this.outputData.length;
  if (outputLength <= 0) return undefined;
  const outputData = this.outputData;
  socket.cork();
  let ret;
  for (let i = 0; i < outputLength; i++) {
    const { data, encoding, callback } = outputData[i];
    ret = socket.write(data, encoding || undefined, callback || undefined);
  }
  socket.uncork();
  this.outputData = [];
  this._onPendingData(-this.outputSize);
  this.outputSize = 0;
  return ret;
};

OutgoingMessage.prototype.flushHeaders = function flushHeaders() {
  if (!this._header) this._implicitHeader();
  // Force-flush the headers.
  this._send('');
};

OutgoingMessage.prototype.pipe = function pipe() {
  this.emit('error', httpError('ERR_STREAM_CANNOT_PIPE'));
};

if (Symbol.asyncDispose) OutgoingMessage.prototype[Symbol.asyncDispose] = async function asyncDispose() { this.destroy(); };

// parseUniqueHeadersOption reads the uniqueHeaders option: the fields
// whose repeated values go out joined with "; " on one line.
function parseUniqueHeadersOption(headers) {
  if (!Array.isArray(headers)) return null;
  const unique = new Set();
  for (const h of headers) {
    if (Array.isArray(h)) for (const x of h) unique.add(String(x).toLowerCase());
    else unique.add(String(h).toLowerCase());
  }
  return unique;
}

module.exports = {
  parseUniqueHeadersOption,
  OutgoingMessage, kOutHeaders, kNeedDrain, kHighWaterMark, kUniqueHeaders, kErrored, utcDate,
  validateHeaderName, validateHeaderValue,
};
