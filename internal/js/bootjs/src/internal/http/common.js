'use strict';
// What the server and the client share: the parser's callbacks (as Node's
// _http_common), header validation, status codes.
const { HTTPParser, methods } = require('./parser.js');
const { httpError } = require('./errors.js');

const CRLF = '\r\n';
// Node's default for server.maxHeadersCount / parser.maxHeaderPairs.
const MAX_HEADER_PAIRS = 2000;

const STATUS_CODES = {
  100: 'Continue', 101: 'Switching Protocols', 102: 'Processing', 103: 'Early Hints',
  200: 'OK', 201: 'Created', 202: 'Accepted', 203: 'Non-Authoritative Information', 204: 'No Content',
  205: 'Reset Content', 206: 'Partial Content', 207: 'Multi-Status', 208: 'Already Reported', 226: 'IM Used',
  300: 'Multiple Choices', 301: 'Moved Permanently', 302: 'Found', 303: 'See Other', 304: 'Not Modified',
  305: 'Use Proxy', 307: 'Temporary Redirect', 308: 'Permanent Redirect',
  400: 'Bad Request', 401: 'Unauthorized', 402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found',
  405: 'Method Not Allowed', 406: 'Not Acceptable', 407: 'Proxy Authentication Required', 408: 'Request Timeout',
  409: 'Conflict', 410: 'Gone', 411: 'Length Required', 412: 'Precondition Failed', 413: 'Payload Too Large',
  414: 'URI Too Long', 415: 'Unsupported Media Type', 416: 'Range Not Satisfiable', 417: 'Expectation Failed',
  418: "I'm a Teapot", 421: 'Misdirected Request', 422: 'Unprocessable Entity', 423: 'Locked',
  424: 'Failed Dependency', 425: 'Too Early', 426: 'Upgrade Required', 428: 'Precondition Required',
  429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable',
  504: 'Gateway Timeout', 505: 'HTTP Version Not Supported', 506: 'Variant Also Negotiates',
  507: 'Insufficient Storage', 508: 'Loop Detected', 509: 'Bandwidth Limit Exceeded', 510: 'Not Extended',
  511: 'Network Authentication Required',
};

const tokenRegExp = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
function checkIsHttpToken(val) { return tokenRegExp.test(val); }

const headerCharRegex = /[^\t\x20-\x7e\x80-\xff]/;
function checkInvalidHeaderChar(val) { return headerCharRegex.test(val); }

function validateHeaderName(name, label = 'Header name') {
  if (typeof name !== 'string' || !name || !checkIsHttpToken(name)) throw httpError('ERR_INVALID_HTTP_TOKEN', label, name);
}

function validateHeaderValue(name, value) {
  if (value === undefined) throw httpError('ERR_HTTP_INVALID_HEADER_VALUE', value, name);
  if (checkInvalidHeaderChar(String(value))) throw httpError('ERR_INVALID_CHAR', 'header content', name);
}

// Parser callbacks; `this` is the parser.
function parserOnHeaders(headers, url) {
  // Trailers: kept until the message completes.
  this._headers.push(...headers);
  this._url += url;
}

function parserOnHeadersComplete(versionMajor, versionMinor, headers, method, url, statusCode, statusMessage, upgrade, shouldKeepAlive) {
  const parser = this;
  const { socket } = parser;
  const server = socket && socket.server;
  const Incoming = (server && server[kIncomingMessage]) || lazyIncoming().IncomingMessage;
  const incoming = parser.incoming = new Incoming(socket);
  incoming.httpVersionMajor = versionMajor;
  incoming.httpVersionMinor = versionMinor;
  incoming.httpVersion = `${versionMajor}.${versionMinor}`;
  incoming.joinDuplicateHeaders = (server && server.joinDuplicateHeaders) || parser.joinDuplicateHeaders;
  incoming.url = url === undefined ? '' : url;
  incoming.upgrade = upgrade;
  let n = headers.length;
  if (parser.maxHeaderPairs > 0) n = Math.min(n, parser.maxHeaderPairs);
  incoming._addHeaderLines(headers, n);
  if (method !== undefined) incoming.method = method;
  else {
    incoming.statusCode = statusCode;
    incoming.statusMessage = statusMessage;
  }
  return parser.onIncoming(incoming, shouldKeepAlive);
}

function parserOnBody(b) {
  const stream = this.incoming;
  if (!stream) return;
  // Pushing past the high-water mark pauses the socket: the peer's body
  // waits in its own buffers, not in ours, until the app reads.
  if (!stream._dumped && !stream.push(b)) readStop(this.socket);
}

function parserOnMessageComplete() {
  const parser = this;
  const stream = parser.incoming;
  if (stream) {
    stream.complete = true;
    const headers = parser._headers;
    if (headers.length) {
      stream._addHeaderLines(headers, headers.length);
      parser._headers = [];
      parser._url = '';
    }
    stream.push(null);
  }
  if (typeof parser.onMessageDone === 'function') parser.onMessageDone();
  readStart(parser.socket);
}

// FreeList keeps up to max released objects for reuse (Node's
// internal/freelist); http.setMaxIdleHTTPParsers sets the parsers' max.
class FreeList {
  constructor(name, max, ctor) {
    this.name = name;
    this.ctor = ctor;
    this.max = max;
    this.list = [];
  }

  alloc(...args) {
    return this.list.length > 0 ? this.list.pop() : Reflect.apply(this.ctor, this, args);
  }

  free(obj) {
    if (this.list.length < this.max) {
      this.list.push(obj);
      return true;
    }
    return false;
  }
}

// kIdle marks a parser that is in the free list, so a second freeParser
// of it (two close paths of one socket) never lists it twice.
const kIdle = Symbol('kIdle');

function cleanParser(parser) {
  parser._headers = [];
  parser._url = '';
  parser.socket = null;
  parser.incoming = null;
  parser.outgoing = null;
  parser.maxHeaderPairs = MAX_HEADER_PAIRS;
  parser.onIncoming = null;
  parser.onMessageDone = null;
  parser.joinDuplicateHeaders = null;
  parser._consumed = false;
}

const parsers = new FreeList('parsers', 1000, function parsersCb() {
  const parser = new HTTPParser();
  cleanParser(parser);
  parser[HTTPParser.kOnHeaders] = parserOnHeaders;
  parser[HTTPParser.kOnHeadersComplete] = parserOnHeadersComplete;
  parser[HTTPParser.kOnBody] = parserOnBody;
  parser[HTTPParser.kOnMessageComplete] = parserOnMessageComplete;
  return parser;
});

// newParser returns a parser with the callbacks wired, an idle one when
// the free list has it; the caller initializes it.
function newParser() {
  const parser = parsers.alloc();
  parser[kIdle] = false;
  return parser;
}

function freeParser(parser, req, socket) {
  if (parser && !parser[kIdle]) {
    if (parser._consumed) parser.unconsume();
    cleanParser(parser);
    parser[kIdle] = true;
    // One the free list cannot take gives its llhttp state back now.
    if (parsers.free(parser)) parser.free();
    else parser.close();
  }
  if (req) req.parser = null;
  if (socket) socket.parser = null;
}

function readStart(socket) {
  if (socket && !socket._paused && socket.readable) socket.resume();
}

function readStop(socket) {
  if (socket) socket.pause();
}

// prepareError adds what Node's parser errors carry.
function prepareError(err, parser, rawPacket) {
  err.rawPacket = rawPacket || (parser && parser.getCurrentBuffer && parser.getCurrentBuffer());
  if (typeof err.reason === 'string') err.message = `Parse Error: ${err.reason}`;
}

function isInformational(code) { return code >= 100 && code < 200 && code !== 101; }

const kIncomingMessage = Symbol('IncomingMessage');
const chunkExpression = /(?:^|\W)chunked(?:$|\W)/i;
const continueExpression = /(?:^|\W)100-continue(?:$|\W)/i;

// isLenient: the --insecure-http-parser default, which this runtime
// does not take.
function isLenient() { return false; }
const kServerResponse = Symbol('ServerResponse');

let incomingModule;
function lazyIncoming() { return (incomingModule ||= require('./incoming.js')); }

module.exports = {
  CRLF, STATUS_CODES, methods, HTTPParser, MAX_HEADER_PAIRS,
  checkIsHttpToken, checkInvalidHeaderChar, validateHeaderName, validateHeaderValue,
  newParser, freeParser, prepareError, readStart, readStop, isInformational,
  kIncomingMessage, kServerResponse, parsers, chunkExpression, continueExpression, isLenient,
};
