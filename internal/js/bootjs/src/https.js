'use strict';
// https: the http module over tls (TLS itself is the tls module's).
const tls = require('./tls.js');
const { URL, urlToHttpOptions } = require('./url.js');
const { Agent: HttpAgent } = require('./internal/http/agent.js');
const { ClientRequest } = require('./internal/http/client.js');
const { Server: HttpServer, initServer, normalizeServerArgs, connectionListener, httpServerPreClose } = require('./internal/http/server.js');
const { httpError } = require('./internal/http/errors.js');
const P = require('./internal/primordials.js');

// agent-base (the base of npm's HTTP agents) tells an https request from an
// http one, when the options do not say, by looking for a "node:https:"
// frame on the stack, which node's own https.request leaves there. Ours
// lives in one bundled script, so the request is constructed from a frame
// named like node's.
const constructRequest = P.indirectEval('(function request(C, args) { return Reflect.construct(C, args); })\n//# sourceURL=node:https');

// Server: a tls.Server whose secure connections speak HTTP.
function Server(opts, requestListener) {
  if (!new.target) return new Server(opts, requestListener);
  [opts, requestListener] = normalizeServerArgs(opts, requestListener);
  // http/1.0 has no ALPN id: the server offers http/1.1 unless told
  // (protocols, or a callback that picks them).
  const alpn = opts.ALPNProtocols || opts.ALPNCallback ? {} : { ALPNProtocols: ['http/1.1'] };
  const self = Reflect.construct(tls.Server, [{ noDelay: true, ...alpn, ...opts }, connectionListener], new.target);
  initServer(self, opts, requestListener);
  self.on('tlsClientError', function onTlsClientError(err, conn) {
    if (!this.emit('clientError', err, conn)) conn.destroy(err);
  });
  return self;
}
Object.setPrototypeOf(Server.prototype, tls.Server.prototype);
Object.setPrototypeOf(Server, tls.Server);

Server.prototype.closeAllConnections = HttpServer.prototype.closeAllConnections;
Server.prototype.closeIdleConnections = HttpServer.prototype.closeIdleConnections;
Server.prototype.setTimeout = HttpServer.prototype.setTimeout;
Server.prototype.close = function close(...args) {
  httpServerPreClose(this);
  tls.Server.prototype.close.apply(this, args);
  return this;
};
if (Symbol.asyncDispose) Server.prototype[Symbol.asyncDispose] = HttpServer.prototype[Symbol.asyncDispose];

function createServer(opts, requestListener) {
  return new Server(opts, requestListener);
}

// createConnection is the agent's: tls.connect, with TLS sessions kept
// per origin for resumption.
function createConnection(port, host, options) {
  if (port !== null && typeof port === 'object') options = port;
  else if (host !== null && typeof host === 'object') options = { ...host };
  else if (options === null || typeof options !== 'object') options = {};
  else options = { ...options };
  if (typeof port === 'number') options.port = port;
  if (typeof host === 'string') options.host = host;
  if (options._agentKey) {
    const session = this._getSession(options._agentKey);
    if (session) options = { session, ...options };
  }
  const socket = tls.connect(options);
  if (options._agentKey) {
    socket.on('session', (session) => this._cacheSession(options._agentKey, session));
    socket.once('close', (err) => { if (err) this._evictSession(options._agentKey); });
  }
  return socket;
}

function Agent(options) {
  if (!(this instanceof Agent)) return new Agent(options);
  HttpAgent.call(this, options);
  this.defaultPort = 443;
  this.protocol = 'https:';
  this.maxCachedSessions = this.options.maxCachedSessions;
  if (this.maxCachedSessions === undefined) this.maxCachedSessions = 100;
  this._sessionCache = { map: {}, list: [] };
}
Object.setPrototypeOf(Agent.prototype, HttpAgent.prototype);
Object.setPrototypeOf(Agent, HttpAgent);
Agent.prototype.createConnection = createConnection;

// Connections differ by their TLS options too: a pooled socket is reused
// only for the same CA, certificate, server name...
const nameFields = [
  'ca', 'cert', 'clientCertEngine', 'ciphers', 'key', 'pfx', 'rejectUnauthorized', 'servername', 'minVersion',
  'maxVersion', 'secureProtocol', 'crl', 'honorCipherOrder', 'ecdhCurve', 'dhparam', 'secureOptions',
  'sessionIdContext', 'sigalgs', 'privateKeyIdentifier', 'privateKeyEngine',
];
Agent.prototype.getName = function getName(options = {}) {
  let name = HttpAgent.prototype.getName.call(this, options);
  for (const field of nameFields) {
    name += ':';
    const v = options[field];
    if (field === 'rejectUnauthorized') { if (v !== undefined) name += v; } else if (field === 'servername') {
      if (v && v !== options.host) name += v;
    } else if (field === 'sigalgs') {
      if (v) name += JSON.stringify(v);
    } else if (v !== undefined && v !== null) name += v;
  }
  return name;
};

Agent.prototype._getSession = function _getSession(key) {
  return this._sessionCache.map[key];
};

Agent.prototype._cacheSession = function _cacheSession(key, session) {
  if (this.maxCachedSessions === 0) return;
  if (this._sessionCache.map[key]) {
    this._sessionCache.map[key] = session;
    return;
  }
  if (this._sessionCache.list.length >= this.maxCachedSessions) {
    const oldKey = this._sessionCache.list.shift();
    delete this._sessionCache.map[oldKey];
  }
  this._sessionCache.list.push(key);
  this._sessionCache.map[key] = session;
};

Agent.prototype._evictSession = function _evictSession(key) {
  const index = this._sessionCache.list.indexOf(key);
  if (index === -1) return;
  this._sessionCache.list.splice(index, 1);
  delete this._sessionCache.map[key];
};

const globalAgent = new Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5000 });

function request(...args) {
  let options = {};
  if (typeof args[0] === 'string') {
    const urlStr = args.shift();
    try {
      options = urlToHttpOptions(new URL(urlStr));
    } catch {
      const err = httpError('ERR_INVALID_URL');
      err.input = urlStr;
      throw err;
    }
  } else if (args[0] instanceof URL) {
    options = urlToHttpOptions(args.shift());
  }
  if (args[0] && typeof args[0] !== 'function') Object.assign(options, args.shift());
  options._defaultAgent = module.exports.globalAgent;
  args.unshift(options);
  return constructRequest(ClientRequest, args);
}

function get(input, options, cb) {
  const req = request(input, options, cb);
  req.end();
  return req;
}

module.exports = { Agent, globalAgent, Server, createServer, get, request };
