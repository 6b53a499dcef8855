'use strict';
// What the HTTP/2 client (http2.js) and server (http2_server.js) share:
// node's constants, its errors and header objects.
const { fromBridge, codedError } = require('./errors.js');

const constants = {
  NGHTTP2_SESSION_SERVER: 0,
  NGHTTP2_SESSION_CLIENT: 1,
  NGHTTP2_NO_ERROR: 0,
  NGHTTP2_PROTOCOL_ERROR: 1,
  NGHTTP2_INTERNAL_ERROR: 2,
  NGHTTP2_FLOW_CONTROL_ERROR: 3,
  NGHTTP2_SETTINGS_TIMEOUT: 4,
  NGHTTP2_STREAM_CLOSED: 5,
  NGHTTP2_FRAME_SIZE_ERROR: 6,
  NGHTTP2_REFUSED_STREAM: 7,
  NGHTTP2_CANCEL: 8,
  NGHTTP2_COMPRESSION_ERROR: 9,
  NGHTTP2_CONNECT_ERROR: 10,
  NGHTTP2_ENHANCE_YOUR_CALM: 11,
  NGHTTP2_INADEQUATE_SECURITY: 12,
  NGHTTP2_HTTP_1_1_REQUIRED: 13,
  NGHTTP2_FLAG_NONE: 0,
  NGHTTP2_FLAG_END_STREAM: 1,
  NGHTTP2_FLAG_END_HEADERS: 4,
  NGHTTP2_DEFAULT_WEIGHT: 16,
  NGHTTP2_SETTINGS_HEADER_TABLE_SIZE: 1,
  NGHTTP2_SETTINGS_ENABLE_PUSH: 2,
  NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS: 3,
  NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE: 4,
  NGHTTP2_SETTINGS_MAX_FRAME_SIZE: 5,
  NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE: 6,
  DEFAULT_SETTINGS_HEADER_TABLE_SIZE: 4096,
  DEFAULT_SETTINGS_ENABLE_PUSH: 1,
  DEFAULT_SETTINGS_MAX_CONCURRENT_STREAMS: 0xffffffff,
  DEFAULT_SETTINGS_INITIAL_WINDOW_SIZE: 65535,
  DEFAULT_SETTINGS_MAX_FRAME_SIZE: 16384,
  DEFAULT_SETTINGS_MAX_HEADER_LIST_SIZE: 65535,
  MAX_MAX_FRAME_SIZE: 16777215,
  MIN_MAX_FRAME_SIZE: 16384,
  MAX_INITIAL_WINDOW_SIZE: 2147483647,
  HTTP2_HEADER_STATUS: ':status',
  HTTP2_HEADER_METHOD: ':method',
  HTTP2_HEADER_AUTHORITY: ':authority',
  HTTP2_HEADER_SCHEME: ':scheme',
  HTTP2_HEADER_PATH: ':path',
  HTTP2_HEADER_PROTOCOL: ':protocol',
  HTTP2_HEADER_ACCEPT: 'accept',
  HTTP2_HEADER_ACCEPT_ENCODING: 'accept-encoding',
  HTTP2_HEADER_AUTHORIZATION: 'authorization',
  HTTP2_HEADER_CACHE_CONTROL: 'cache-control',
  HTTP2_HEADER_CONNECTION: 'connection',
  HTTP2_HEADER_CONTENT_ENCODING: 'content-encoding',
  HTTP2_HEADER_CONTENT_LENGTH: 'content-length',
  HTTP2_HEADER_CONTENT_TYPE: 'content-type',
  HTTP2_HEADER_COOKIE: 'cookie',
  HTTP2_HEADER_DATE: 'date',
  HTTP2_HEADER_HOST: 'host',
  HTTP2_HEADER_KEEP_ALIVE: 'keep-alive',
  HTTP2_HEADER_LOCATION: 'location',
  HTTP2_HEADER_PROXY_CONNECTION: 'proxy-connection',
  HTTP2_HEADER_SET_COOKIE: 'set-cookie',
  HTTP2_HEADER_TE: 'te',
  HTTP2_HEADER_TRANSFER_ENCODING: 'transfer-encoding',
  HTTP2_HEADER_UPGRADE: 'upgrade',
  HTTP2_HEADER_USER_AGENT: 'user-agent',
  HTTP2_METHOD_CONNECT: 'CONNECT',
  HTTP2_METHOD_DELETE: 'DELETE',
  HTTP2_METHOD_GET: 'GET',
  HTTP2_METHOD_HEAD: 'HEAD',
  HTTP2_METHOD_OPTIONS: 'OPTIONS',
  HTTP2_METHOD_PATCH: 'PATCH',
  HTTP2_METHOD_POST: 'POST',
  HTTP2_METHOD_PUT: 'PUT',
  HTTP_STATUS_OK: 200,
  HTTP_STATUS_NO_CONTENT: 204,
  HTTP_STATUS_NOT_FOUND: 404,
  HTTP_STATUS_INTERNAL_SERVER_ERROR: 500,
};

const sensitiveHeaders = Symbol('nodejs.http2.sensitiveHeaders');

function getDefaultSettings() {
  return {
    headerTableSize: 4096,
    enablePush: true,
    initialWindowSize: 65535,
    maxFrameSize: 16384,
    maxConcurrentStreams: 4294967295,
    maxHeaderListSize: 65535,
    maxHeaderSize: 65535,
    enableConnectProtocol: false,
  };
}

// h2Error builds an error with one of node's ERR_HTTP2_* codes.
function h2Error(code, message, Kind = Error) {
  const err = new Kind(message);
  Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  if (typeof err.stack === 'string') err.stack = err.stack.replace(Kind.name, `${Kind.name} [${code}]`);
  return err;
}

// fromGo turns an error code and payload of the Go session into an error.
function fromGo(code, payload, syscall) {
  let info = {};
  if (payload) { try { info = JSON.parse(payload); } catch { /* */ } }
  if (code.startsWith('E') && !code.startsWith('ERR_')) return fromBridge(code, syscall);
  const err = h2Error(code, info.message || code);
  if (info.rst !== undefined) err.rstCode = info.rst;
  return err;
}

// --- headers ---

const tokenRe = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const badValueRe = /[^\t\x20-\x7e\x80-\xff]/;
const connectionHeaders = new Set(['connection', 'upgrade', 'http2-settings', 'te', 'transfer-encoding', 'keep-alive', 'proxy-connection']);
const noPayloadMethods = new Set(['GET', 'HEAD', 'DELETE']);

// headerObject turns [name, value] pairs into node's headers object:
// repeated names join with ', ' ('; ' for cookie), set-cookie is an array.
function headerObject(pairs, status) {
  const out = Object.create(null);
  if (status !== undefined) out[':status'] = status;
  for (const [k, v] of pairs) {
    if (k === 'set-cookie') (out[k] || (out[k] = [])).push(v);
    else if (out[k] === undefined) out[k] = v;
    else out[k] += (k === 'cookie' ? '; ' : ', ') + v;
  }
  out[sensitiveHeaders] = [];
  return out;
}

function rawPairs(obj) {
  const out = [];
  for (const [k, v] of Object.entries(obj)) out.push(k, String(v));
  return out;
}

const errorNames = ['NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR', 'FLOW_CONTROL_ERROR', 'SETTINGS_TIMEOUT',
  'STREAM_CLOSED', 'FRAME_SIZE_ERROR', 'REFUSED_STREAM', 'CANCEL', 'COMPRESSION_ERROR', 'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM', 'INADEQUATE_SECURITY', 'HTTP_1_1_REQUIRED'];

function codeName(code) {
  return code < errorNames.length ? `NGHTTP2_${errorNames[code]}` : String(code);
}

// SessionBase is what client and server sessions share: 'close' comes
// once the session is over (destroyed, or closed and its connection
// ended) and its last stream is done.
class SessionBase extends require('../events.js') {
  get closed() { return this._closing || this._destroyed; }
  get destroyed() { return this._destroyed; }

  _streamDone(stream) {
    this._streams.delete(stream);
    this._maybeClose();
  }

  _maybeClose() {
    if (this._closeEmitted || this._streams.size > 0) return;
    if (!this._destroyed && !(this._closing && this._goClosed)) return;
    this._closeEmitted = true;
    this._destroyed = true;
    this._closed();
    process.nextTick(() => this.emit('close'));
  }

  // _closed releases what the session holds besides its Go side.
  _closed() {}
}

// onLast dispatches the loop's events of kind that end the handle they
// name: the handle leaves handles before fn(object, code, payload) runs.
function onLast(kind, handles, fn) {
  require('./loop.js').onEvent(kind, (h, _b, code, payload) => {
    const o = handles.get(h);
    handles.delete(h);
    if (o) fn(o, code, payload);
  });
}

// closeStream is node's stream.close(code, callback) for both sides: a
// code other than NO_ERROR and CANCEL is an error of the stream.
function closeStream(stream, code, callback) {
  if (typeof code !== 'number' || code < 0 || code > 0xffffffff) {
    throw codedError('ERR_OUT_OF_RANGE', 'code', '>= 0 && <= 4294967295', code);
  }
  if (typeof callback === 'function') stream.once('close', callback);
  if (stream.destroyed) return;
  stream.rstCode = code;
  if (code !== constants.NGHTTP2_NO_ERROR && code !== constants.NGHTTP2_CANCEL) {
    stream.destroy(h2Error('ERR_HTTP2_STREAM_ERROR', `Stream closed with error code ${codeName(code)}`));
  } else {
    stream.destroy();
  }
}

module.exports = {
  closeStream, onLast, SessionBase,
  constants, sensitiveHeaders, getDefaultSettings, h2Error, fromGo, tokenRe, badValueRe, connectionHeaders,
  noPayloadMethods, headerObject, rawPairs, codeName, errorNames,
};
