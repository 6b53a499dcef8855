'use strict';
// ClientRequest (Node's _http_client).
const net = require('../../net.js');
const { Buffer } = require('../../buffer.js');
const { URL, urlToHttpOptions } = require('../../url.js');
const { finished } = require('../../stream.js');
const { httpError, connResetException, abortError, codedError } = require('./errors.js');
const { checkIsHttpToken, newParser, freeParser, prepareError, HTTPParser, isInformational, isLenient } = require('./common.js');
const { OutgoingMessage, kOutHeaders, kNeedDrain, kUniqueHeaders, parseUniqueHeadersOption } = require('./outgoing.js');
const agentModule = require('./agent.js');

const INVALID_PATH_REGEX = /[^\u0021-\u00ff]/;
const kError = Symbol('kError');
const kClientRequest = Symbol('kClientRequest');

function validateHost(host, name) {
  if (host !== null && host !== undefined && typeof host !== 'string') {
    throw codedError('ERR_INVALID_ARG_TYPE', `options.${name}`, 'of type string or one of undefined or null', host);
  }
  return host;
}

function getTimerDuration(msecs, name) {
  if (typeof msecs !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', msecs);
  if (msecs < 0 || !Number.isFinite(msecs)) throw codedError('ERR_OUT_OF_RANGE', name, 'a non-negative finite number', msecs);
  return msecs;
}

function isURL(u) { return u instanceof URL || (u != null && typeof u.href === 'string' && typeof u.searchParams === 'object'); }

// normalizeArgs: request(url[, options][, cb]) or request(options[, cb]).
function normalizeArgs(input, options, cb) {
  if (typeof input === 'string') {
    const s = input;
    try {
      input = urlToHttpOptions(new URL(s));
    } catch {
      const err = httpError('ERR_INVALID_URL');
      err.input = s;
      throw err;
    }
  } else if (isURL(input)) {
    input = urlToHttpOptions(input);
  } else {
    cb = options;
    options = input;
    input = null;
  }
  if (typeof options === 'function') {
    cb = options;
    options = input || {};
  } else {
    options = Object.assign(input || {}, options);
  }
  return { options, cb };
}

function ClientRequest(input, options, cb) {
  OutgoingMessage.call(this);
  ({ options, cb } = normalizeArgs(input, options, cb));

  let agent = options.agent;
  const defaultAgent = options._defaultAgent || agentModule.globalAgent;
  if (agent === false) {
    const Ctor = defaultAgent.constructor;
    agent = new Ctor();
  } else if (agent === null || agent === undefined) {
    // With createConnection of its own, a request uses no agent.
    if (typeof options.createConnection !== 'function') agent = defaultAgent;
  } else if (typeof agent.addRequest !== 'function') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'options.agent', 'one of Agent-like Object, undefined, or false', agent);
  }
  this.agent = agent;

  const protocol = options.protocol || defaultAgent.protocol;
  let expectedProtocol = defaultAgent.protocol;
  if (this.agent && this.agent.protocol) expectedProtocol = this.agent.protocol;

  if (options.path) {
    const path = String(options.path);
    if (INVALID_PATH_REGEX.test(path)) throw httpError('ERR_UNESCAPED_CHARACTERS', 'Request path');
  }
  if (protocol !== expectedProtocol) throw httpError('ERR_INVALID_PROTOCOL', protocol, expectedProtocol);

  const defaultPort = options.defaultPort || (this.agent && this.agent.defaultPort);
  const optsWithoutSignal = { __proto__: null, ...options };
  const port = optsWithoutSignal.port = options.port || defaultPort || 80;
  const host = optsWithoutSignal.host = validateHost(options.hostname, 'hostname') || validateHost(options.host, 'host') || 'localhost';
  const setHost = options.setHost === undefined || Boolean(options.setHost);
  this.socketPath = options.socketPath;
  if (options.timeout !== undefined) this.timeout = getTimerDuration(options.timeout, 'timeout');

  const signal = options.signal;
  if (signal) {
    addAbortSignal(signal, this);
    delete optsWithoutSignal.signal;
  }

  let method = options.method;
  const methodIsString = typeof method === 'string';
  if (method !== null && method !== undefined && !methodIsString) throw codedError('ERR_INVALID_ARG_TYPE', 'options.method', 'of type string', method);
  if (methodIsString && method) {
    if (!checkIsHttpToken(method)) throw httpError('ERR_INVALID_HTTP_TOKEN', 'Method', method);
    method = this.method = method.toUpperCase();
  } else {
    method = this.method = 'GET';
  }

  const maxHeaderSize = options.maxHeaderSize;
  if (maxHeaderSize !== undefined && (!Number.isInteger(maxHeaderSize) || maxHeaderSize < 0)) {
    throw codedError('ERR_OUT_OF_RANGE', 'maxHeaderSize', '>= 0 && <= 4294967295', maxHeaderSize);
  }
  this.maxHeaderSize = maxHeaderSize;
  if (options.insecureHTTPParser !== undefined && typeof options.insecureHTTPParser !== 'boolean') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'options.insecureHTTPParser', 'of type boolean', options.insecureHTTPParser);
  }
  this.insecureHTTPParser = options.insecureHTTPParser;
  this.joinDuplicateHeaders = options.joinDuplicateHeaders;

  this.path = options.path || '/';
  if (cb) this.once('response', cb);

  // Methods without a body get no chunked framing by default.
  if (method === 'GET' || method === 'HEAD' || method === 'DELETE' || method === 'OPTIONS' || method === 'TRACE' || method === 'CONNECT') {
    this.useChunkedEncodingByDefault = false;
  } else {
    this.useChunkedEncodingByDefault = true;
  }

  this._ended = false;
  this.res = null;
  this.aborted = false;
  this.timeoutCb = null;
  this.upgradeOrConnect = false;
  this.parser = null;
  this.maxHeadersCount = null;
  this.reusedSocket = false;
  this.host = host;
  this.protocol = protocol;

  if (this.agent) {
    // Keep-alive only when the agent may actually reuse the connection.
    if (!this.agent.keepAlive && !Number.isFinite(this.agent.maxSockets)) {
      this._last = true;
      this.shouldKeepAlive = false;
    } else {
      this._last = false;
      this.shouldKeepAlive = true;
    }
  }

  this[kUniqueHeaders] = parseUniqueHeadersOption(options.uniqueHeaders);

  const headersArray = Array.isArray(options.headers);
  if (!headersArray) {
    if (options.headers) {
      for (const key of Object.keys(options.headers)) this.setHeader(key, options.headers[key]);
    }
    if (host && !this.getHeader('host') && setHost) {
      let hostHeader = host;
      // IPv6 addresses go in brackets.
      const posColon = hostHeader.indexOf(':');
      if (posColon !== -1 && hostHeader.includes(':', posColon + 1) && hostHeader.charCodeAt(0) !== 91) hostHeader = `[${hostHeader}]`;
      if (port && +port !== defaultPort) hostHeader += `:${port}`;
      this.setHeader('Host', hostHeader);
    }
    if (options.auth && !this.getHeader('Authorization')) {
      this.setHeader('Authorization', `Basic ${Buffer.from(options.auth).toString('base64')}`);
    }
    if (this.getHeader('expect')) {
      if (this._header) throw httpError('ERR_HTTP_HEADERS_SENT', 'render');
      this._storeHeader(`${this.method} ${this.path} HTTP/1.1\r\n`, this[kOutHeaders]);
    }
  } else {
    this._storeHeader(`${this.method} ${this.path} HTTP/1.1\r\n`, options.headers);
  }

  let called = false;
  const oncreate = (err, socket) => {
    if (called) return;
    called = true;
    if (err) {
      process.nextTick(() => this.emit('error', err));
      return;
    }
    this.onSocket(socket);
  };

  if (this.agent) {
    this.agent.addRequest(this, optsWithoutSignal);
  } else {
    // No agent: a socket of our own, closed after this request.
    this._last = true;
    this.shouldKeepAlive = false;
    let opts = optsWithoutSignal;
    if (opts.path || opts.socketPath) {
      opts = { ...optsWithoutSignal };
      if (opts.socketPath) opts.path = opts.socketPath;
      else if (opts.path) opts.path = undefined;
    }
    if (typeof opts.createConnection === 'function') {
      const socket = opts.createConnection(opts, oncreate);
      if (socket) oncreate(null, socket);
    } else {
      this.onSocket(net.createConnection(opts));
    }
  }
}
Object.setPrototypeOf(ClientRequest.prototype, OutgoingMessage.prototype);
Object.setPrototypeOf(ClientRequest, OutgoingMessage);

function addAbortSignal(signal, req) {
  if (typeof signal !== 'object' || signal === null || !('aborted' in signal)) {
    throw codedError('ERR_INVALID_ARG_TYPE', 'signal', 'an instance of AbortSignal', signal);
  }
  const onAbort = () => req.destroy(abortError(signal));
  if (signal.aborted) {
    process.nextTick(onAbort);
  } else {
    signal.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => signal.removeEventListener('abort', onAbort));
  }
}

ClientRequest.prototype._finish = function _finish() {
  OutgoingMessage.prototype._finish.call(this);
};

ClientRequest.prototype._implicitHeader = function _implicitHeader() {
  if (this._header) throw httpError('ERR_HTTP_HEADERS_SENT', 'render');
  this._storeHeader(`${this.method} ${this.path} HTTP/1.1\r\n`, this[kOutHeaders]);
};

ClientRequest.prototype.abort = function abort() {
  if (this.aborted) return;
  this.aborted = true;
  process.nextTick(emitAbortNT, this);
  this.destroy();
};

ClientRequest.prototype.destroy = function destroy(err) {
  if (this.destroyed) return this;
  this.destroyed = true;
  // A response in progress is drained and dropped.
  if (this.res) this.res._dump();
  this[kError] = err;
  if (this.socket) this.socket.destroy(err);
  return this;
};

function emitAbortNT(req) { req.emit('abort'); }

function emitErrorEvent(request, error) {
  request.emit('error', error);
}

function socketCloseListener() {
  const socket = this;
  const req = socket._httpMessage;
  // The parser may be freed by socketOnData before.
  const parser = socket.parser;
  const res = req.res;
  req.destroyed = true;
  if (res) {
    // The connection ended inside the response body.
    if (!res.complete) res.destroy(connResetException('aborted'));
    req._closed = true;
    req.emit('close');
    if (!res.aborted && res.readable) res.push(null);
  } else {
    if (!req.socket._hadError) {
      // No response at all: the request fails.
      req.socket._hadError = true;
      emitErrorEvent(req, connResetException('socket hang up'));
    }
    req._closed = true;
    req.emit('close');
  }
  if (req.outputData) req.outputData.length = 0;
  if (parser) {
    parser.finish();
    freeParser(parser, req, socket);
  }
}

function socketErrorListener(err) {
  const socket = this;
  const req = socket._httpMessage;
  if (req) {
    req.socket._hadError = true;
    emitErrorEvent(req, err);
  }
  const parser = socket.parser;
  if (parser) {
    parser.finish();
    freeParser(parser, req, socket);
  }
  // No more data from this socket.
  socket.removeListener('data', socketOnData);
  socket.removeListener('end', socketOnEnd);
  socket.destroy();
}

function socketOnEnd() {
  const socket = this;
  const req = this._httpMessage;
  const parser = this.parser;
  if (!req.res && !req.socket._hadError) {
    req.socket._hadError = true;
    emitErrorEvent(req, connResetException('socket hang up'));
  }
  if (parser) {
    parser.finish();
    freeParser(parser, req, socket);
  }
  socket.destroy();
}

function socketOnData(d) {
  const socket = this;
  const req = this._httpMessage;
  const parser = this.parser;
  const ret = parser.execute(d);
  if (ret instanceof Error) {
    prepareError(ret, parser, d);
    freeParser(parser, req, socket);
    socket.removeListener('data', socketOnData);
    socket.removeListener('end', socketOnEnd);
    socket.destroy();
    req.socket._hadError = true;
    emitErrorEvent(req, ret);
  } else if (parser.incoming && parser.incoming.upgrade) {
    upgradeResponse(req, socket, parser, d.slice(ret, d.length));
  } else if (parser.incoming && parser.incoming.complete && !isInformational(parser.incoming.statusCode)) {
    // The response is complete: this parser has nothing more to do (a
    // 1xx is followed by the final response, so it stays).
    socket.removeListener('data', socketOnData);
    socket.removeListener('end', socketOnEnd);
    socket.removeListener('drain', ondrain);
    freeParser(parser, req, socket);
  }
}

// upgradeResponse: a 101 or a CONNECT's answer hands the socket to the
// 'upgrade' / 'connect' listeners, or closes it when there are none.
function upgradeResponse(req, socket, parser, bodyHead) {
  const res = parser.incoming;
  req.res = res;
  socket.removeListener('data', socketOnData);
  socket.removeListener('end', socketOnEnd);
  socket.removeListener('drain', ondrain);
  if (req.timeoutCb) socket.removeListener('timeout', req.timeoutCb);
  socket.removeListener('timeout', responseOnTimeout);
  parser.finish();
  freeParser(parser, req, socket);
  const eventName = req.method === 'CONNECT' ? 'connect' : 'upgrade';
  if (req.listenerCount(eventName) > 0) {
    req.upgradeOrConnect = true;
    socket.emit('agentRemove');
    socket.removeListener('close', socketCloseListener);
    socket.removeListener('error', socketErrorListener);
    socket._httpMessage = null;
    socket.readableFlowing = null;
    req.emit(eventName, res, socket, bodyHead);
    req.destroyed = true;
    req._closed = true;
    req.emit('close');
  } else {
    socket.destroy();
  }
}

function parserOnIncomingClient(res, shouldKeepAlive) {
  const socket = this.socket;
  const req = socket._httpMessage;
  if (req.res) {
    // A second response to one request: the server is broken.
    socket.destroy();
    return 0;
  }
  req.res = res;
  if (res.upgrade) return 2;
  const method = req.method;
  if (method === 'CONNECT') {
    res.upgrade = true;
    return 2;
  }
  if (isInformational(res.statusCode)) {
    req.res = null;
    if (res.statusCode === 100) req.emit('continue');
    req.emit('information', {
      statusCode: res.statusCode, statusMessage: res.statusMessage, httpVersion: res.httpVersion,
      httpVersionMajor: res.httpVersionMajor, httpVersionMinor: res.httpVersionMinor,
      headers: res.headers, rawHeaders: res.rawHeaders,
    });
    return 1;
  }
  // The server must say keep-alive for the connection to be reused.
  if (req.shouldKeepAlive && !shouldKeepAlive && !req.upgradeOrConnect) req.shouldKeepAlive = false;
  req.res = res;
  res.req = req;
  res.on('end', responseOnEnd);
  req.on('finish', requestOnFinish);
  socket.on('timeout', responseOnTimeout);
  // Nobody listens: the body is read and dropped so the socket does not
  // stay paused forever.
  if (req.aborted || !req.emit('response', res)) res._dump();
  if (method === 'HEAD') return 1;
  if (res.statusCode === 304) {
    res.complete = true;
    return 1;
  }
  return 0;
}

function responseKeepAlive(req) {
  const socket = req.socket;
  if (req.timeoutCb) {
    socket.setTimeout(0, req.timeoutCb);
    req.timeoutCb = null;
  }
  socket.removeListener('close', socketCloseListener);
  socket.removeListener('error', socketErrorListener);
  socket.removeListener('data', socketOnData);
  socket.removeListener('end', socketOnEnd);
  // Free the socket after the user's 'end' handlers ran.
  process.nextTick(emitFreeNT, req);
  req.destroyed = true;
  if (req.res) {
    // The freed socket is no longer the response's.
    req.res.socket = null;
  }
}

function responseOnEnd() {
  const req = this.req;
  const socket = req.socket;
  if (socket) {
    if (req.timeoutCb) socket.removeListener('timeout', emitRequestTimeout);
    socket.removeListener('timeout', responseOnTimeout);
  }
  req._ended = true;
  if (!req.shouldKeepAlive) {
    if (socket.writable) {
      if (typeof socket.destroySoon === 'function') socket.destroySoon();
      else socket.end();
    }
  } else if (req.writableFinished && !this.aborted) {
    responseKeepAlive(req);
  }
}

function responseOnTimeout() {
  const req = this._httpMessage;
  if (!req) return;
  const res = req.res;
  if (!res) return;
  res.emit('timeout');
}

function requestOnFinish() {
  const req = this;
  if (req.shouldKeepAlive && req._ended) responseKeepAlive(req);
}

function emitFreeNT(req) {
  req._closed = true;
  req.emit('close');
  if (req.socket) req.socket.emit('free');
}

function tickOnSocket(req, socket) {
  const parser = newParser();
  req.socket = socket;
  const lenient = req.insecureHTTPParser === undefined ? isLenient() : req.insecureHTTPParser;
  parser.initialize(HTTPParser.RESPONSE, undefined, req.maxHeaderSize || 0, lenient ? HTTPParser.kLenientAll : HTTPParser.kLenientNone);
  parser.socket = socket;
  parser.outgoing = req;
  req.parser = parser;
  socket.parser = parser;
  socket._httpMessage = req;
  if (typeof req.maxHeadersCount === 'number') parser.maxHeaderPairs = req.maxHeadersCount << 1;
  parser.joinDuplicateHeaders = req.joinDuplicateHeaders;
  parser.onIncoming = parserOnIncomingClient;
  socket.on('error', socketErrorListener);
  socket.on('data', socketOnData);
  socket.on('end', socketOnEnd);
  socket.on('close', socketCloseListener);
  socket.on('drain', ondrain);
  if (req.timeout !== undefined || (req.agent && req.agent.options && req.agent.options.timeout)) listenSocketTimeout(req);
  req.emit('socket', socket);
}

function emitRequestTimeout() {
  const req = this._httpMessage;
  if (req) req.emit('timeout');
}

function listenSocketTimeout(req) {
  if (req.timeoutCb) return;
  req.timeoutCb = emitRequestTimeout;
  if (req.socket) {
    req.socket.once('timeout', emitRequestTimeout);
  } else {
    req.on('socket', (socket) => socket.once('timeout', emitRequestTimeout));
  }
}

function ondrain() {
  const msg = this._httpMessage;
  if (msg && !msg.finished && msg[kNeedDrain]) {
    msg[kNeedDrain] = false;
    msg.emit('drain');
  }
}

ClientRequest.prototype.onSocket = function onSocket(socket, err) {
  process.nextTick(onSocketNT, this, socket, err);
};

function onSocketNT(req, socket, err) {
  if (req.destroyed || err) {
    req.destroyed = true;
    if (socket) {
      if (!err && req.agent && !socket.destroyed) {
        socket.emit('free');
      } else {
        finished(socket.destroy(err || req[kError]), (er) => {
          if (er && er.code === 'ERR_STREAM_PREMATURE_CLOSE') er = null;
          destroyRequest(req, er || err);
        });
        return;
      }
    }
    destroyRequest(req, err || req[kError]);
  } else {
    tickOnSocket(req, socket);
    req._flush();
  }
}

function destroyRequest(req, err) {
  if (!req.aborted && !err) err = connResetException('socket hang up');
  if (err) emitErrorEvent(req, err);
  req._closed = true;
  req.emit('close');
}

ClientRequest.prototype._deferToConnect = function _deferToConnect(method, args) {
  const callSocketMethod = () => {
    if (method) this.socket[method].apply(this.socket, args);
  };
  const onSocket = () => {
    if (this.socket.writable) callSocketMethod();
    else this.socket.once('connect', callSocketMethod);
  };
  if (!this.socket) this.once('socket', onSocket);
  else onSocket();
};

ClientRequest.prototype.setTimeout = function setTimeout(msecs, callback) {
  if (this._ended) return this;
  listenSocketTimeout(this);
  msecs = getTimerDuration(msecs, 'msecs');
  if (callback) this.once('timeout', callback);
  if (this.socket) setSocketTimeout(this.socket, msecs);
  else this.once('socket', (sock) => setSocketTimeout(sock, msecs));
  return this;
};

function setSocketTimeout(sock, msecs) {
  if (sock.connecting) sock.once('connect', () => sock.setTimeout(msecs));
  else sock.setTimeout(msecs);
}

ClientRequest.prototype.setNoDelay = function setNoDelay(noDelay) {
  this._deferToConnect('setNoDelay', [noDelay]);
};

ClientRequest.prototype.setSocketKeepAlive = function setSocketKeepAlive(enable, initialDelay) {
  this._deferToConnect('setKeepAlive', [enable, initialDelay]);
};

ClientRequest.prototype.clearTimeout = function clearTimeout(cb) {
  this.setTimeout(0, cb);
};

module.exports = { ClientRequest, kClientRequest };
