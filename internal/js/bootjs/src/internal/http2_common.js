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

// settingIDs are the SETTINGS identifiers in the order node packs them.
const settingIDs = [['headerTableSize', 1], ['enablePush', 2], ['maxConcurrentStreams', 3], ['initialWindowSize', 4],
  ['maxFrameSize', 5], ['maxHeaderListSize', 6], ['enableConnectProtocol', 8]];
const kMaxCustomSettings = 10;

function settingError(name, value, Kind) {
  return h2Error('ERR_HTTP2_INVALID_SETTING_VALUE', `Invalid value for setting "${name}": ${value}`, Kind);
}

function settingInRange(name, value, min, max) {
  if (value !== undefined && (typeof value !== 'number' || value < min || value > max)) throw settingError(name, value, RangeError);
}

// validateSettings is node's check of an HTTP/2 settings object.
function validateSettings(settings) {
  if (settings === undefined) return;
  settingInRange('headerTableSize', settings.headerTableSize, 0, 2 ** 32 - 1);
  settingInRange('initialWindowSize', settings.initialWindowSize, 0, 2 ** 32 - 1);
  settingInRange('maxFrameSize', settings.maxFrameSize, 16384, 2 ** 24 - 1);
  settingInRange('maxConcurrentStreams', settings.maxConcurrentStreams, 0, 2 ** 32 - 1);
  settingInRange('maxHeaderListSize', settings.maxHeaderListSize, 0, 2 ** 32 - 1);
  settingInRange('maxHeaderSize', settings.maxHeaderSize, 0, 2 ** 32 - 1);
  for (const name of ['enablePush', 'enableConnectProtocol']) {
    const v = settings[name];
    if (v !== undefined && typeof v !== 'boolean') throw settingError(name, v, TypeError);
  }
  const custom = settings.customSettings;
  if (custom) {
    if (typeof custom !== 'object') throw settingError('customSettings', custom, RangeError);
    let n = 0;
    for (const id in custom) {
      if (++n > kMaxCustomSettings) throw h2Error('ERR_HTTP2_TOO_MANY_CUSTOM_SETTINGS', 'Number of custom settings exceeds MAX_ADDITIONAL_SETTINGS');
      const nid = Number(id);
      if (!Number.isInteger(nid) || nid < 0 || nid > 0xffff) throw settingError('customSettings:id', nid, RangeError);
      const v = custom[id];
      if (typeof v !== 'number' || v < 0 || v > 0xffffffff) throw settingError('customSettings:value', v, RangeError);
    }
  }
}

// getPackedSettings is http2.getPackedSettings: the payload of a
// SETTINGS frame carrying settings.
function getPackedSettings(settings) {
  const { Buffer } = require('../buffer.js');
  if (settings === undefined) return Buffer.alloc(0);
  if (settings === null || typeof settings !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'settings', 'of type object', settings);
  validateSettings(settings);
  const entries = [];
  for (const [name, id] of settingIDs) {
    let v = settings[name];
    if (name === 'maxHeaderListSize' && v === undefined) v = settings.maxHeaderSize;
    if (v === undefined) continue;
    entries.push([id, typeof v === 'boolean' ? Number(v) : v]);
  }
  if (settings.customSettings) {
    for (const id of Object.keys(settings.customSettings)) entries.push([Number(id), settings.customSettings[id]]);
  }
  const out = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, v], i) => {
    out.writeUInt16BE(id, i * 6);
    out.writeUInt32BE(v >>> 0, i * 6 + 2);
  });
  return out;
}

// getUnpackedSettings is http2.getUnpackedSettings. A typed array other
// than bytes is read element by element, as node's Buffer methods do.
function getUnpackedSettings(buf, options) {
  if (!ArrayBuffer.isView(buf) || buf.length === undefined) throw codedError('ERR_INVALID_ARG_TYPE', 'buf', ['Buffer', 'TypedArray'], buf);
  if (buf.length % 6 !== 0) throw h2Error('ERR_HTTP2_INVALID_PACKED_SETTINGS_LENGTH', 'Packed settings length must be a multiple of six', RangeError);
  const names = new Map(settingIDs.map(([name, id]) => [id, name]));
  const settings = {};
  for (let o = 0; o < buf.length; o += 6) {
    const id = ((buf[o] & 0xff) << 8) | (buf[o + 1] & 0xff);
    const value = (buf[o + 2] & 0xff) * 2 ** 24 + (((buf[o + 3] & 0xff) << 16) | ((buf[o + 4] & 0xff) << 8) | (buf[o + 5] & 0xff));
    const name = names.get(id);
    if (name === undefined) (settings.customSettings || (settings.customSettings = {}))[id] = value;
    else if (name === 'enablePush' || name === 'enableConnectProtocol') settings[name] = value !== 0;
    else if (name === 'maxHeaderListSize') settings.maxHeaderListSize = settings.maxHeaderSize = value;
    else settings[name] = value;
  }
  if (options != null && options.validate) validateSettings(settings);
  return settings;
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

// singleValueHeaders are the fields node allows once in a header block.
const singleValueHeaders = new Set([':status', ':method', ':authority', ':scheme', ':path', ':protocol',
  'access-control-allow-credentials', 'access-control-max-age', 'access-control-request-method', 'age',
  'authorization', 'content-encoding', 'content-language', 'content-length', 'content-location', 'content-md5',
  'content-range', 'content-type', 'date', 'dnt', 'etag', 'expires', 'from', 'host', 'if-match',
  'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'last-modified', 'location',
  'max-forwards', 'proxy-authorization', 'range', 'referer', 'retry-after', 'tk', 'upgrade-insecure-requests',
  'user-agent', 'x-content-type-options']);

// checkSingle throws node's ERR_HTTP2_HEADER_SINGLE_VALUE for a second
// value of a single-value field (lower-cased name k) in one block; seen
// collects the names of the block.
function checkSingle(k, values, seen) {
  if (!singleValueHeaders.has(k)) return;
  if (values.length > 1 || seen.has(k)) throw h2Error('ERR_HTTP2_HEADER_SINGLE_VALUE', `Header field "${k}" must only have a single value`, TypeError);
  seen.add(k);
}

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

  // setLocalWindowSize checks its argument as node does; the Go side
  // keeps the connection's flow-control window to itself.
  setLocalWindowSize(windowSize) {
    if (this._destroyed) throw h2Error('ERR_HTTP2_INVALID_SESSION', 'The session has been destroyed');
    require('./validators.js').validateInt32(windowSize, 'windowSize', 0);
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

// validateGoaway checks the arguments of session.goaway as node does.
function validateGoaway(session, code, lastStreamID, opaqueData) {
  if (session.destroyed) throw h2Error('ERR_HTTP2_INVALID_SESSION', 'The session has been destroyed');
  const V = require('./validators.js');
  if (opaqueData !== undefined) V.validateBuffer(opaqueData, 'opaqueData');
  if (code !== undefined) V.validateNumber(code, 'code');
  if (lastStreamID !== undefined) V.validateNumber(lastStreamID, 'lastStreamID');
}

// closeStream is node's stream.close(code, callback) for both sides: a
// code other than NO_ERROR and CANCEL is an error of the stream.
function closeStream(stream, code, callback) {
  const V = require('./validators.js');
  V.validateUint32(code, 'code');
  if (callback !== undefined) V.validateFunction(callback, 'callback');
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
  noPayloadMethods, checkSingle, headerObject, validateSettings, validateGoaway, getPackedSettings, getUnpackedSettings, rawPairs, codeName, errorNames,
};
