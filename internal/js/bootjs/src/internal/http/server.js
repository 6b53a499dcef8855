'use strict';
// The server side: ServerResponse, Server and the connection listener
// (Node's _http_server). Request deadlines (headersTimeout,
// requestTimeout) are per-connection setTimeout timers, never clock
// arithmetic: the sandbox's Date.now may be frozen.
const net = require('../../net.js');
const { setTimeout, clearTimeout } = require('../../timers.js');
const { httpError, connResetException, codedError } = require('./errors.js');
const {
  STATUS_CODES, checkInvalidHeaderChar, newParser, freeParser, prepareError, HTTPParser,
  kIncomingMessage, kServerResponse, continueExpression, chunkExpression, isLenient, validateHeaderName, validateHeaderValue,
} = require('./common.js');
const { OutgoingMessage, kOutHeaders, kNeedDrain, kUniqueHeaders, parseUniqueHeadersOption } = require('./outgoing.js');
const { IncomingMessage } = require('./incoming.js');

const kConnections = Symbol('http.server.connections');
const kState = Symbol('http.server.connectionState');
const nop = () => {};

const badRequestResponse = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
const requestTimeoutResponse = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
const requestHeaderFieldsTooLargeResponse = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
const requestChunkExtensionsTooLargeResponse = 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n';


// ---- ServerResponse ----

function ServerResponse(req, options) {
  OutgoingMessage.call(this, options);
  if (req.method === 'HEAD') this._hasBody = false;
  this.req = req;
  this.sendDate = true;
  this._sent100 = false;
  this._expect_continue = false;
  if (req.httpVersionMajor < 1 || req.httpVersionMinor < 1) {
    // An HTTP/1.0 client gets chunks only if it said it takes them.
    this.useChunkedEncodingByDefault = chunkExpression.test(req.headers.te);
    this.shouldKeepAlive = false;
  }
}
Object.setPrototypeOf(ServerResponse.prototype, OutgoingMessage.prototype);
Object.setPrototypeOf(ServerResponse, OutgoingMessage);

ServerResponse.prototype.statusCode = 200;
ServerResponse.prototype.statusMessage = undefined;

function onServerResponseClose() {
  const msg = this._httpMessage;
  if (msg) {
    msg.destroyed = true;
    msg._closed = true;
    msg.emit('close');
  }
}

ServerResponse.prototype.assignSocket = function assignSocket(socket) {
  if (socket._httpMessage) throw httpError('ERR_HTTP_SOCKET_ASSIGNED');
  socket._httpMessage = this;
  socket.on('close', onServerResponseClose);
  this.socket = socket;
  this.emit('socket', socket);
  this._flush();
};

ServerResponse.prototype.detachSocket = function detachSocket(socket) {
  socket.removeListener('close', onServerResponseClose);
  socket._httpMessage = null;
  this.socket = null;
};

ServerResponse.prototype.writeContinue = function writeContinue(cb) {
  this._writeRaw('HTTP/1.1 100 Continue\r\n\r\n', 'ascii', cb);
  this._sent100 = true;
};

ServerResponse.prototype.writeProcessing = function writeProcessing(cb) {
  this._writeRaw('HTTP/1.1 102 Processing\r\n\r\n', 'ascii', cb);
};

// A Link header value as Node accepts it for early hints: each link a
// <URI-reference> with ;-separated parameters, nothing else (no CR or LF
// can reach the 103 head).
const linkValueRegExp = /^(?:<[^>]*>)(?:\s*;\s*[^;"\s]+(?:=(")?[^;"\s]*\1)?)*$/;
const linkFormat = 'must be an array or string of format "</styles.css>; rel=preload; as=style"';

function validateLinkHeaderFormat(value) {
  if (typeof value !== 'string' || !linkValueRegExp.test(value)) throw httpError('ERR_INVALID_ARG_VALUE', 'hints', value, linkFormat);
}

function validateLinkHeaderValue(links) {
  if (typeof links === 'string') {
    validateLinkHeaderFormat(links);
    return links;
  }
  if (!Array.isArray(links)) throw httpError('ERR_INVALID_ARG_VALUE', 'hints', links, linkFormat);
  for (const link of links) validateLinkHeaderFormat(link);
  return links.join(', ');
}

ServerResponse.prototype.writeEarlyHints = function writeEarlyHints(hints, cb) {
  if (hints === null || typeof hints !== 'object' || Array.isArray(hints)) throw codedError('ERR_INVALID_ARG_TYPE', 'hints', 'of type object', hints);
  if (hints.link === null || hints.link === undefined) return;
  const link = validateLinkHeaderValue(hints.link);
  if (link.length === 0) return;
  // Stricter than Node, which writes these raw: no CR or LF may split the
  // 103 head into headers (or a response) of the guest's making.
  if (checkInvalidHeaderChar(link)) throw httpError('ERR_INVALID_CHAR', 'header content', 'link');
  let head = `HTTP/1.1 103 Early Hints\r\nLink: ${link}\r\n`;
  for (const key of Object.keys(hints)) {
    if (key === 'link') continue;
    validateHeaderName(key);
    validateHeaderValue(key, hints[key]);
    head += `${key}: ${hints[key]}\r\n`;
  }
  this._writeRaw(`${head}\r\n`, 'ascii', cb);
};

ServerResponse.prototype._implicitHeader = function _implicitHeader() {
  this.writeHead(this.statusCode);
};

ServerResponse.prototype.writeHead = function writeHead(statusCode, reason, obj) {
  if (this._header) throw httpError('ERR_HTTP_HEADERS_SENT', 'write');
  const originalStatusCode = statusCode;
  statusCode |= 0;
  if (statusCode < 100 || statusCode > 999) throw httpError('ERR_HTTP_INVALID_STATUS_CODE', originalStatusCode);
  if (typeof reason === 'string') {
    this.statusMessage = reason;
  } else {
    this.statusMessage ||= STATUS_CODES[statusCode] || 'unknown';
    obj ??= reason;
  }
  this.statusCode = statusCode;

  let headers;
  if (this[kOutHeaders]) {
    // Headers given here override the ones set before, but explicit
    // duplicates in an array stay.
    if (Array.isArray(obj)) {
      if (obj.length % 2 !== 0) throw httpError('ERR_INVALID_ARG_VALUE', 'headers', obj);
      for (let n = 0; n < obj.length; n += 2) this.removeHeader(obj[n]);
      for (let n = 0; n < obj.length; n += 2) if (obj[n]) this.appendHeader(obj[n], obj[n + 1]);
    } else if (obj) {
      for (const k of Object.keys(obj)) if (k) this.setHeader(k, obj[k]);
    }
    headers = this[kOutHeaders];
  } else {
    headers = obj;
  }
  if (checkInvalidHeaderChar(this.statusMessage)) throw httpError('ERR_INVALID_CHAR', 'statusMessage');
  const statusLine = `HTTP/1.1 ${statusCode} ${this.statusMessage}\r\n`;
  if (statusCode === 204 || statusCode === 304 || (statusCode >= 100 && statusCode <= 199)) this._hasBody = false;
  // A client that waits for 100 Continue and got a final status may
  // still send the body: that connection cannot be reused.
  if (this._expect_continue && !this._sent100) this.shouldKeepAlive = false;
  this._storeHeader(statusLine, headers);
  return this;
};
ServerResponse.prototype.writeHeader = ServerResponse.prototype.writeHead;

// ---- Server ----

function validateTimeout(v, name) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw codedError('ERR_OUT_OF_RANGE', name, '>= 0 && an integer', v);
  return v;
}

function storeHTTPOptions(options) {
  this[kIncomingMessage] = options.IncomingMessage || IncomingMessage;
  this[kServerResponse] = options.ServerResponse || ServerResponse;
  const { maxHeaderSize } = options;
  if (maxHeaderSize !== undefined && (!Number.isInteger(maxHeaderSize) || maxHeaderSize < 0)) {
    throw codedError('ERR_OUT_OF_RANGE', 'maxHeaderSize', '>= 0 && <= 4294967295', maxHeaderSize);
  }
  this.maxHeaderSize = maxHeaderSize;
  if (options.insecureHTTPParser !== undefined && typeof options.insecureHTTPParser !== 'boolean') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'options.insecureHTTPParser', 'of type boolean', options.insecureHTTPParser);
  }
  this.insecureHTTPParser = options.insecureHTTPParser;
  this.requestTimeout = options.requestTimeout !== undefined ? validateTimeout(options.requestTimeout, 'requestTimeout') : 300000;
  this.headersTimeout = options.headersTimeout !== undefined ? validateTimeout(options.headersTimeout, 'headersTimeout') : Math.min(60000, this.requestTimeout || 60000);
  if (this.requestTimeout > 0 && this.headersTimeout > 0 && this.headersTimeout > this.requestTimeout) {
    throw codedError('ERR_OUT_OF_RANGE', 'http.Server.headersTimeout', '<= http.Server.requestTimeout', this.headersTimeout);
  }
  this.connectionsCheckingInterval = options.connectionsCheckingInterval !== undefined ? options.connectionsCheckingInterval : 30000;
  this.requireHostHeader = options.requireHostHeader !== undefined ? !!options.requireHostHeader : true;
  this.joinDuplicateHeaders = options.joinDuplicateHeaders;
  this.rejectNonStandardBodyWrites = options.rejectNonStandardBodyWrites !== undefined ? !!options.rejectNonStandardBodyWrites : false;
}

// initServer sets up an http(s) server object after its net/tls
// constructor ran.
function initServer(server, options, requestListener) {
  storeHTTPOptions.call(server, options);
  if (requestListener) server.on('request', requestListener);
  // Half-closed by the client: the server ends its side (Node's default).
  server.httpAllowHalfOpen = false;
  server.timeout = 0;
  server.maxHeadersCount = null;
  server.maxRequestsPerSocket = 0;
  server.keepAliveTimeout = 5000;
  server[kConnections] = new Set();
  server[kUniqueHeaders] = parseUniqueHeadersOption(options.uniqueHeaders);
}

function normalizeServerArgs(options, requestListener) {
  if (typeof options === 'function') return [{}, options];
  if (options == null) return [{}, requestListener];
  if (typeof options !== 'object' || Array.isArray(options)) throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
  return [options, requestListener];
}

// Server is callable with or without new, like Node's, and subclasses
// net.Server whether that is a class or a function.
function Server(options, requestListener) {
  if (!new.target) return new Server(options, requestListener);
  [options, requestListener] = normalizeServerArgs(options, requestListener);
  const self = Reflect.construct(net.Server, [{
    allowHalfOpen: true,
    noDelay: options.noDelay ?? true,
    keepAlive: options.keepAlive,
    keepAliveInitialDelay: options.keepAliveInitialDelay,
    highWaterMark: options.highWaterMark,
  }], new.target);
  initServer(self, options, requestListener);
  self.on('connection', connectionListener);
  return self;
}
Object.setPrototypeOf(Server.prototype, net.Server.prototype);
Object.setPrototypeOf(Server, net.Server);

Server.prototype.close = function close(...args) {
  httpServerPreClose(this);
  net.Server.prototype.close.apply(this, args);
  return this;
};

if (Symbol.asyncDispose) {
  Server.prototype[Symbol.asyncDispose] = function asyncDispose() {
    return new Promise((resolve, reject) => this.close((err) => (err ? reject(err) : resolve())));
  };
}

function httpServerPreClose(server) { server.closeIdleConnections(); }

Server.prototype.closeAllConnections = function closeAllConnections() {
  if (!this[kConnections]) return;
  for (const state of [...this[kConnections]]) state.socket.destroy();
};

// Idle: between requests, with no response in flight.
Server.prototype.closeIdleConnections = function closeIdleConnections() {
  if (!this[kConnections]) return;
  for (const state of [...this[kConnections]]) {
    if (state.active) continue;
    const msg = state.socket._httpMessage;
    if (msg && !msg.finished) continue;
    state.socket.destroy();
  }
};

Server.prototype.setTimeout = function setTimeout(msecs, callback) {
  this.timeout = msecs;
  if (callback) this.on('timeout', callback);
  return this;
};

// ---- connections ----

function connectionListener(socket) {
  connectionListenerInternal(this, socket);
}

function connectionListenerInternal(server, socket) {
  socket.server = server;
  if (server.timeout && typeof socket.setTimeout === 'function') socket.setTimeout(server.timeout);
  socket.on('timeout', socketOnTimeout);

  const parser = newParser();
  const lenient = server.insecureHTTPParser === undefined ? isLenient() : server.insecureHTTPParser;
  parser.initialize(HTTPParser.REQUEST, undefined, server.maxHeaderSize || 0, lenient ? HTTPParser.kLenientAll : HTTPParser.kLenientNone);
  parser.socket = socket;
  socket.parser = parser;
  if (typeof server.maxHeadersCount === 'number') parser.maxHeaderPairs = server.maxHeadersCount << 1;

  const state = {
    socket, server, onData: null, onEnd: null, onClose: null, onDrain: null,
    outgoing: [], incoming: [], outgoingData: 0, requestsCount: 0, keepAliveTimeoutSet: false,
    // active: a request is being received (from its first byte until it
    // is complete); a new connection counts as one.
    active: true, headersTimer: null, requestTimer: null,
  };
  socket[kState] = state;
  server[kConnections].add(state);
  state.onData = socketOnData.bind(undefined, server, socket, parser, state);
  state.onEnd = socketOnEnd.bind(undefined, server, socket, parser, state);
  state.onClose = socketOnClose.bind(undefined, socket, state);
  state.onDrain = socketOnDrain.bind(undefined, socket, state);
  socket.on('data', state.onData);
  socket.on('error', socketOnError);
  socket.on('end', state.onEnd);
  socket.on('close', state.onClose);
  socket.on('drain', state.onDrain);
  parser.onIncoming = parserOnIncoming.bind(undefined, server, socket, state);
  parser.onMessageDone = onMessageDone.bind(undefined, state);
  socket.setEncoding = socketSetEncoding;
  socket._paused = false;
  armRequestTimers(state, true);
}

function socketSetEncoding() {
  throw httpError('ERR_HTTP_SOCKET_ENCODING');
}

// A request must have its headers within headersTimeout and be complete
// within requestTimeout; else the connection gets a 408 (a slowloris
// client that never finishes its headers is cut here).
function armRequestTimers(state, withHeaders) {
  const { server } = state;
  clearRequestTimers(state);
  if (withHeaders && server.headersTimeout > 0) {
    state.headersTimer = setTimeout(onRequestTimeout, server.headersTimeout, state);
    state.headersTimer.unref();
  }
  if (server.requestTimeout > 0) {
    state.requestTimer = setTimeout(onRequestTimeout, server.requestTimeout, state);
    state.requestTimer.unref();
  }
}

function clearRequestTimers(state) {
  if (state.headersTimer) clearTimeout(state.headersTimer);
  if (state.requestTimer) clearTimeout(state.requestTimer);
  state.headersTimer = null;
  state.requestTimer = null;
}

function onRequestTimeout(state) {
  state.headersTimer = null;
  state.requestTimer = null;
  const { socket } = state;
  if (socket.destroyed || !state.active) return;
  socketOnError.call(socket, httpError('ERR_HTTP_REQUEST_TIMEOUT'));
}

function onMessageDone(state) {
  state.active = false;
  clearRequestTimers(state);
}

// trackMessage notices a request that began in the data just parsed.
function trackMessage(parser, state) {
  if (state.active || parser.hadError || !parser.inMessage) return;
  state.active = true;
  armRequestTimers(state, !parser.headersCompleted());
}

function updateOutgoingData(socket, state, delta) {
  state.outgoingData += delta;
  socketOnDrain(socket, state);
}

function socketOnDrain(socket, state) {
  const needPause = state.outgoingData > socket.writableHighWaterMark;
  // Reading stopped while responses queued up; they drained.
  if (socket._paused && !needPause) {
    socket._paused = false;
    if (socket.parser) socket.parser.resume();
    socket.resume();
  }
  const msg = socket._httpMessage;
  if (msg && !msg.finished && msg[kNeedDrain]) {
    msg[kNeedDrain] = false;
    msg.emit('drain');
  }
}

function socketOnTimeout() {
  const req = this.parser && this.parser.incoming;
  const reqTimeout = req && !req.complete && req.emit('timeout', this);
  const res = this._httpMessage;
  const resTimeout = res && res.emit('timeout', this);
  const serverTimeout = this.server.emit('timeout', this);
  if (!reqTimeout && !resTimeout && !serverTimeout) this.destroy();
}

function socketOnClose(socket, state) {
  clearRequestTimers(state);
  state.server[kConnections].delete(state);
  freeParser(socket.parser, null, socket);
  abortIncoming(state.incoming);
}

function abortIncoming(incoming) {
  while (incoming.length) {
    const req = incoming.shift();
    req.destroy(connResetException('aborted'));
  }
}

function socketOnEnd(server, socket, parser, state) {
  const ret = parser.finish();
  if (ret instanceof Error) {
    socketOnError.call(socket, ret);
  } else if (!server.httpAllowHalfOpen) {
    if (socket.writable) socket.end();
  } else if (state.outgoing.length) {
    state.outgoing[state.outgoing.length - 1]._last = true;
  } else if (socket._httpMessage) {
    socket._httpMessage._last = true;
  } else if (socket.writable) {
    socket.end();
  }
}

function socketOnData(server, socket, parser, state, d) {
  const ret = parser.execute(d);
  onParserExecuteCommon(server, socket, parser, state, ret, d);
}

function onParserExecuteCommon(server, socket, parser, state, ret, d) {
  resetSocketTimeout(server, socket, state);
  if (ret instanceof Error) {
    prepareError(ret, parser, d);
    socketOnError.call(socket, ret);
    return;
  }
  if (parser.incoming && parser.incoming.upgrade) {
    upgradeConnection(server, socket, parser, state, d.slice(ret, d.length));
    return;
  }
  trackMessage(parser, state);
}

// upgradeConnection hands the socket over to 'upgrade' or 'connect'
// listeners: HTTP is done with it.
function upgradeConnection(server, socket, parser, state, bodyHead) {
  const req = parser.incoming;
  socket.removeListener('data', state.onData);
  socket.removeListener('end', state.onEnd);
  socket.removeListener('close', state.onClose);
  socket.removeListener('drain', state.onDrain);
  socket.removeListener('error', socketOnError);
  socket.removeListener('timeout', socketOnTimeout);
  clearRequestTimers(state);
  server[kConnections].delete(state);
  parser.finish();
  freeParser(parser, req, socket);
  delete socket.setEncoding;
  const eventName = req.method === 'CONNECT' ? 'connect' : 'upgrade';
  if (eventName === 'upgrade' || server.listenerCount(eventName) > 0) {
    socket.readableFlowing = null;
    server.emit(eventName, req, socket, bodyHead);
  } else {
    // CONNECT, and nobody to take it.
    socket.destroy();
  }
}

function socketOnError(e) {
  // Later errors of this socket are not the app's concern.
  this.removeListener('error', socketOnError);
  if (this.timeout) this.setTimeout(0);
  this.on('error', nop);
  const state = this[kState];
  if (state) clearRequestTimers(state);
  if (this.server.emit('clientError', e, this)) return;
  // Answer only when no response of ours is on the wire yet, so the
  // peer never reads a status line inside another response.
  const msg = this._httpMessage;
  if (this.writable && (!msg || !msg._headerSent)) {
    let response;
    switch (e.code) {
      case 'HPE_HEADER_OVERFLOW': response = requestHeaderFieldsTooLargeResponse; break;
      case 'HPE_CHUNK_EXTENSIONS_OVERFLOW': response = requestChunkExtensionsTooLargeResponse; break;
      case 'ERR_HTTP_REQUEST_TIMEOUT': response = requestTimeoutResponse; break;
      default: response = badRequestResponse;
    }
    // Stop parsing; destroy once the answer is handed to the socket (a
    // socket whose writes complete later would lose it otherwise).
    if (state) this.removeListener('data', state.onData);
    this.write(response, () => this.destroy(e));
    return;
  }
  this.destroy(e);
}

function resetSocketTimeout(server, socket, state) {
  if (!state.keepAliveTimeoutSet) return;
  socket.setTimeout(server.timeout || 0);
  state.keepAliveTimeoutSet = false;
}

function parserOnIncoming(server, socket, state, req, keepAlive) {
  resetSocketTimeout(server, socket, state);
  if (state.headersTimer) {
    clearTimeout(state.headersTimer);
    state.headersTimer = null;
  }
  if (!state.active) {
    // The whole head arrived in one read: the request deadline starts now.
    state.active = true;
    armRequestTimers(state, false);
  }
  if (req.upgrade) {
    req.upgrade = req.method === 'CONNECT' || server.listenerCount('upgrade') > 0;
    if (req.upgrade) return 2;
  }
  state.incoming.push(req);

  // Pipelined requests pile up while the responses do not drain: stop
  // reading until they do.
  if (!socket._paused) {
    const ws = socket._writableState;
    if ((ws && ws.needDrain) || state.outgoingData >= socket.writableHighWaterMark) {
      socket._paused = true;
      socket.pause();
    }
  }

  const res = new server[kServerResponse](req, {
    highWaterMark: socket.writableHighWaterMark,
    rejectNonStandardBodyWrites: server.rejectNonStandardBodyWrites,
  });
  res._keepAliveTimeout = server.keepAliveTimeout;
  res._maxRequestsPerSocket = server.maxRequestsPerSocket;
  res._onPendingData = updateOutgoingData.bind(undefined, socket, state);
  res.shouldKeepAlive = keepAlive;
  res[kUniqueHeaders] = server[kUniqueHeaders];

  if (socket._httpMessage) state.outgoing.push(res);
  else res.assignSocket(socket);

  res.on('finish', resOnFinish.bind(undefined, req, res, socket, state, server));

  let handled = false;
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
    if (server.requireHostHeader && req.headers.host === undefined) {
      res.writeHead(400, ['Connection', 'close']);
      res.end();
      return 0;
    }
    const limit = typeof server.maxRequestsPerSocket === 'number' && server.maxRequestsPerSocket > 0;
    if (limit) {
      state.requestsCount++;
      res.maxRequestsOnConnectionReached = server.maxRequestsPerSocket <= state.requestsCount;
    }
    if (limit && server.maxRequestsPerSocket < state.requestsCount) {
      handled = true;
      server.emit('dropRequest', req, socket);
      res.writeHead(503);
      res.end();
    } else if (req.headers.expect !== undefined) {
      handled = true;
      if (continueExpression.test(req.headers.expect)) {
        res._expect_continue = true;
        if (server.listenerCount('checkContinue') > 0) {
          server.emit('checkContinue', req, res);
        } else {
          res.writeContinue();
          server.emit('request', req, res);
        }
      } else if (server.listenerCount('checkExpectation') > 0) {
        server.emit('checkExpectation', req, res);
      } else {
        res.writeHead(417);
        res.end();
      }
    }
  }
  if (!handled) server.emit('request', req, res);
  return 0;
}

function resOnFinish(req, res, socket, state, server) {
  if (state.incoming.length && state.incoming[0] === req) state.incoming.shift();
  // A body the app never read is read and dropped, so the next request
  // on the connection can be parsed.
  if (!req._consuming && !req._readableState.resumeScheduled) req._dump();
  res.detachSocket(socket);
  clearIncoming(req);
  process.nextTick(emitCloseNT, res);
  if (res._last) {
    if (typeof socket.destroySoon === 'function') socket.destroySoon();
    else socket.end();
  } else if (state.outgoing.length === 0) {
    if (server.keepAliveTimeout && typeof socket.setTimeout === 'function') {
      socket.setTimeout(server.keepAliveTimeout);
      state.keepAliveTimeoutSet = true;
    }
  } else {
    const m = state.outgoing.shift();
    if (m) m.assignSocket(socket);
  }
}

function clearIncoming(req) {
  req ||= this;
  const parser = req.socket && req.socket.parser;
  if (parser && parser.incoming === req) {
    if (req.readableEnded) parser.incoming = null;
    else req.on('end', clearIncoming);
  }
}

function emitCloseNT(self) {
  if (!self._closed) {
    self.destroyed = true;
    self._closed = true;
    self.emit('close');
  }
}

module.exports = {
  Server, ServerResponse, initServer, normalizeServerArgs, connectionListener, httpServerPreClose, kConnections,
  storeHTTPOptions,
};
