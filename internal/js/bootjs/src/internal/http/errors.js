'use strict';
// The ERR_* errors of Node's http modules, built the way
// internal/errors.js builds its own (code on the error, code in the name
// part of the stack). Codes internal/errors.js already knows go there.
const base = require('../errors.js');

const quote = (v) => (typeof v === 'string' ? v : String(v));

const messages = {
  ERR_HTTP_HEADERS_SENT: (what) => `Cannot ${what} headers after they are sent to the client`,
  ERR_INVALID_HTTP_TOKEN: (name, token) => `${name} must be a valid HTTP token ["${quote(token)}"]`,
  ERR_HTTP_INVALID_HEADER_VALUE: (value, name) => `Invalid value "${quote(value)}" for header "${name}"`,
  ERR_INVALID_CHAR: (name, field) => `Invalid character in ${name}${field ? ` ["${field}"]` : ''}`,
  ERR_HTTP_INVALID_STATUS_CODE: (code) => `Invalid status code: ${lazyFormat()('%s', code)}`,
  ERR_HTTP_TRAILER_INVALID: () => 'Trailers are invalid with this transfer encoding',
  ERR_HTTP_CONTENT_LENGTH_MISMATCH: (actual, expected) =>
    `Response body's content-length of ${actual} byte(s) does not match the content-length of ${expected} byte(s) set in header`,
  ERR_HTTP_REQUEST_TIMEOUT: () => 'Request timeout',
  ERR_HTTP_SOCKET_ENCODING: () => 'Changing the socket encoding is not allowed per RFC7230 Section 3.',
  ERR_HTTP_SOCKET_ASSIGNED: () => 'ServerResponse has an already-assigned socket',
  ERR_HTTP_BODY_NOT_ALLOWED: () => 'Adding content for this request method or response status is not allowed.',
  ERR_STREAM_DESTROYED: (name) => `Cannot call ${name} after a stream was destroyed`,
  ERR_STREAM_NULL_VALUES: () => 'May not write null values to stream',
  ERR_STREAM_ALREADY_FINISHED: (name) => `Cannot call ${name} after a stream was finished`,
  ERR_STREAM_CANNOT_PIPE: () => 'Cannot pipe, not readable',
  ERR_UNESCAPED_CHARACTERS: (name) => `${name} contains unescaped characters`,
  ERR_INVALID_PROTOCOL: (actual, expected) => `Protocol "${actual}" not supported. Expected "${expected}"`,
  ERR_SERVER_NOT_RUNNING: () => 'Server is not running.',
  ERR_MISSING_ARGS: (name) => `The "${name}" argument must be specified`,
  ERR_INVALID_URL: () => 'Invalid URL',
  // Node's wording (internal/errors.js words this one differently).
  ERR_INVALID_ARG_VALUE: (name, value, reason = 'is invalid') =>
    `The ${name.includes('.') ? 'property' : 'argument'} '${name}' ${reason}. Received ${lazyInspect()(value)}`,
};

let inspect;
function lazyInspect() { return (inspect ||= require('../../util.js').inspect); }
let format;
function lazyFormat() { return (format ||= require('../../util.js').format); }

const kinds = {
  ERR_INVALID_HTTP_TOKEN: TypeError, ERR_HTTP_INVALID_HEADER_VALUE: TypeError, ERR_INVALID_CHAR: TypeError,
  ERR_HTTP_INVALID_STATUS_CODE: RangeError, ERR_STREAM_NULL_VALUES: TypeError, ERR_UNESCAPED_CHARACTERS: TypeError,
  ERR_INVALID_PROTOCOL: TypeError, ERR_MISSING_ARGS: TypeError, ERR_INVALID_URL: TypeError, ERR_INVALID_ARG_VALUE: TypeError,
};

function httpError(code, ...args) {
  if (!messages[code]) return base.codedError(code, ...args);
  const Kind = kinds[code] || Error;
  const err = new Kind(messages[code](...args));
  Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  if (typeof err.stack === 'string') err.stack = err.stack.replace(Kind.name, `${Kind.name} [${code}]`);
  return err;
}

// connResetException is the ECONNRESET a peer that went away produces:
// "socket hang up" before a response, "aborted" in the middle of one.
function connResetException(msg) {
  const err = new Error(msg);
  err.code = 'ECONNRESET';
  return err;
}

function abortError(signal) {
  const err = new Error('The operation was aborted');
  err.name = 'AbortError';
  err.code = 'ABORT_ERR';
  if (signal && signal.reason !== undefined) err.cause = signal.reason;
  return err;
}

module.exports = { httpError, connResetException, abortError, codedError: base.codedError };
