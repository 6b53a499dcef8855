'use strict';
// Agent: pools client connections per host:port (Node's _http_agent).
const net = require('../../net.js');
const EventEmitter = require('../../events.js');
const { codedError, httpError } = require('./errors.js');

const kRequestOptions = Symbol('requestOptions');

function freeSocketErrorListener(err) {
  const socket = this;
  socket.destroy();
  socket.emit('agentRemove');
  void err;
}

function Agent(options) {
  if (!(this instanceof Agent)) return new Agent(options);
  EventEmitter.call(this);
  this.defaultPort = 80;
  this.protocol = 'http:';
  this.options = { __proto__: null, ...options };
  if (this.options.noDelay === undefined) this.options.noDelay = true;
  // Don't confuse net and make it think that we're connecting to a pipe.
  this.options.path = null;
  this.requests = { __proto__: null };
  this.sockets = { __proto__: null };
  this.freeSockets = { __proto__: null };
  this.keepAliveMsecs = this.options.keepAliveMsecs || 1000;
  this.keepAlive = this.options.keepAlive || false;
  this.maxSockets = this.options.maxSockets || Agent.defaultMaxSockets;
  this.maxFreeSockets = this.options.maxFreeSockets || 256;
  this.scheduling = this.options.scheduling || 'lifo';
  this.maxTotalSockets = this.options.maxTotalSockets;
  this.totalSocketCount = 0;
  if (this.scheduling !== 'fifo' && this.scheduling !== 'lifo') {
    throw httpError('ERR_INVALID_ARG_VALUE', 'scheduling', this.scheduling, "must be one of: 'fifo', 'lifo'");
  }
  if (this.maxTotalSockets !== undefined) {
    if (typeof this.maxTotalSockets !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'maxTotalSockets', 'of type number', this.maxTotalSockets);
    if (!(this.maxTotalSockets >= 1)) throw codedError('ERR_OUT_OF_RANGE', 'maxTotalSockets', '>= 1', this.maxTotalSockets);
  } else {
    this.maxTotalSockets = Infinity;
  }
  this.on('free', (socket, opts) => onFree(this, socket, opts));
}
Object.setPrototypeOf(Agent.prototype, EventEmitter.prototype);
Object.setPrototypeOf(Agent, EventEmitter);

Agent.defaultMaxSockets = Infinity;

// A socket whose request is done: to the next queued request of its
// origin, else to the free list if keep-alive allows, else closed.
function onFree(agent, socket, options) {
  const name = agent.getName(options);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const requests = agent.requests[name];
  if (requests && requests.length) {
    const req = requests.shift();
    setRequestSocket(agent, req, socket);
    if (requests.length === 0) delete agent.requests[name];
    return;
  }
  const req = socket._httpMessage;
  if (!req || !req.shouldKeepAlive || !agent.keepAlive) {
    socket.destroy();
    return;
  }
  const freeSockets = agent.freeSockets[name] || [];
  const freeLen = freeSockets.length;
  let count = freeLen;
  if (agent.sockets[name]) count += agent.sockets[name].length;
  if (agent.totalSocketCount > agent.maxTotalSockets || count > agent.maxSockets || freeLen >= agent.maxFreeSockets || !agent.keepSocketAlive(socket)) {
    socket.destroy();
    return;
  }
  agent.freeSockets[name] = freeSockets;
  socket._httpMessage = null;
  agent.removeSocket(socket, options);
  socket.once('error', freeSocketErrorListener);
  freeSockets.push(socket);
}

Agent.prototype.createConnection = function createConnection(...args) {
  return net.createConnection(...args);
};

Agent.prototype.getName = function getName(options = {}) {
  let name = options.host || 'localhost';
  name += ':';
  if (options.port) name += options.port;
  name += ':';
  if (options.localAddress) name += options.localAddress;
  if (options.family === 4 || options.family === 6) name += `:${options.family}`;
  if (options.socketPath) name += `:${options.socketPath}`;
  return name;
};

Agent.prototype.addRequest = function addRequest(req, options, port, localAddress) {
  if (typeof options === 'string') options = { __proto__: null, host: options, port, localAddress };
  options = { __proto__: null, ...options, ...this.options };
  if (options.socketPath) options.path = options.socketPath;
  normalizeServerName(options, req);
  const name = this.getName(options);
  this.sockets[name] ||= [];
  const freeSockets = this.freeSockets[name];
  let socket;
  if (freeSockets) {
    while (freeSockets.length && freeSockets[0].destroyed) freeSockets.shift();
    socket = this.scheduling === 'fifo' ? freeSockets.shift() : freeSockets.pop();
    if (!freeSockets.length) delete this.freeSockets[name];
  }
  const freeLen = freeSockets ? freeSockets.length : 0;
  const sockLen = freeLen + this.sockets[name].length;
  if (socket) {
    this.reuseSocket(socket, req);
    setRequestSocket(this, req, socket);
    this.sockets[name].push(socket);
  } else if (sockLen < this.maxSockets && this.totalSocketCount < this.maxTotalSockets) {
    this.createSocket(req, options, (err, s) => {
      if (err) req.onSocket(s, err);
      else setRequestSocket(this, req, s);
    });
  } else {
    // Over the limits: the request waits for a socket to be freed.
    this.requests[name] ||= [];
    req[kRequestOptions] = options;
    this.requests[name].push(req);
  }
};

Agent.prototype.createSocket = function createSocket(req, options, cb) {
  options = { __proto__: null, ...options, ...this.options };
  if (options.socketPath) options.path = options.socketPath;
  normalizeServerName(options, req);
  const name = this.getName(options);
  options._agentKey = name;
  options.encoding = null;
  let called = false;
  const oncreate = (err, s) => {
    if (called) return;
    called = true;
    if (err) return cb(err);
    this.sockets[name] ||= [];
    this.sockets[name].push(s);
    this.totalSocketCount++;
    installListeners(this, s, options);
    cb(null, s);
  };
  if (this.keepAlive) {
    options.keepAlive = this.keepAlive;
    options.keepAliveInitialDelay = this.keepAliveMsecs;
  }
  const newSocket = this.createConnection(options, oncreate);
  if (newSocket) oncreate(null, newSocket);
};

function normalizeServerName(options, req) {
  if (!options.servername && options.servername !== '') options.servername = calculateServerName(options, req);
}

function calculateServerName(options, req) {
  let servername = options.host;
  const hostHeader = req.getHeader('host');
  if (hostHeader) {
    if (typeof hostHeader !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'options.headers.host', 'of type string', hostHeader);
    if (hostHeader[0] === '[') {
      const index = hostHeader.indexOf(']');
      servername = index === -1 ? hostHeader : hostHeader.substring(1, index);
    } else {
      servername = hostHeader.split(':', 1)[0];
    }
  }
  // IP addresses are not server names (SNI).
  if (net.isIP(servername)) servername = '';
  return servername;
}

function installListeners(agent, s, options) {
  function onFreeSocket() { agent.emit('free', s, options); }
  s.on('free', onFreeSocket);
  // The only place sockets leave the agent: every socket closes.
  function onClose() {
    agent.totalSocketCount--;
    agent.removeSocket(s, options);
  }
  s.on('close', onClose);
  function onTimeout() {
    // An idle free socket that timed out is closed.
    const sockets = agent.freeSockets;
    if (Object.keys(sockets).some((name) => sockets[name].includes(s))) s.destroy();
  }
  s.on('timeout', onTimeout);
  // Upgraded sockets leave the pool for good.
  function onRemove() {
    agent.totalSocketCount--;
    agent.removeSocket(s, options);
    s.removeListener('close', onClose);
    s.removeListener('free', onFreeSocket);
    s.removeListener('timeout', onTimeout);
    s.removeListener('agentRemove', onRemove);
  }
  s.on('agentRemove', onRemove);
}

Agent.prototype.removeSocket = function removeSocket(s, options) {
  const name = this.getName(options);
  const sets = [this.sockets];
  if (!s.writable) sets.push(this.freeSockets);
  for (const sockets of sets) {
    if (sockets[name]) {
      const index = sockets[name].indexOf(s);
      if (index !== -1) {
        sockets[name].splice(index, 1);
        if (sockets[name].length === 0) delete sockets[name];
      }
    }
  }
  let req;
  if (this.requests[name] && this.requests[name].length) {
    req = this.requests[name][0];
  } else {
    // A request of another origin may wait for the total limit.
    for (const prop of Object.keys(this.requests)) {
      if (this.sockets[prop] && this.sockets[prop].length) break;
      req = this.requests[prop][0];
      options = req[kRequestOptions];
      break;
    }
  }
  if (req && options) {
    req[kRequestOptions] = undefined;
    this.createSocket(req, options, (err, socket) => {
      if (err) req.onSocket(socket, err);
      else socket.emit('free');
    });
  }
};

Agent.prototype.keepSocketAlive = function keepSocketAlive(socket) {
  socket.setKeepAlive(true, this.keepAliveMsecs);
  socket.unref();
  let agentTimeout = this.options.timeout || 0;
  let canKeepSocketAlive = true;
  const res = socket._httpMessage && socket._httpMessage.res;
  if (res) {
    const keepAliveHint = res.headers['keep-alive'];
    const hint = keepAliveHint && /^timeout=(\d+)/.exec(keepAliveHint);
    if (hint) {
      // Close before the server's announced timeout, so a request is not
      // sent on a connection the server is closing.
      let serverHintTimeout = (parseInt(hint[1], 10) * 1000) - 1000;
      serverHintTimeout = serverHintTimeout > 0 ? serverHintTimeout : 0;
      if (serverHintTimeout === 0) canKeepSocketAlive = false;
      else if (serverHintTimeout < agentTimeout) agentTimeout = serverHintTimeout;
    }
  }
  if (socket.timeout !== agentTimeout) socket.setTimeout(agentTimeout);
  return canKeepSocketAlive;
};

Agent.prototype.reuseSocket = function reuseSocket(socket, req) {
  socket.removeListener('error', freeSocketErrorListener);
  req.reusedSocket = true;
  socket.ref();
};

Agent.prototype.destroy = function destroy() {
  for (const set of [this.freeSockets, this.sockets]) {
    for (const key of Object.keys(set)) {
      for (const s of set[key]) s.destroy();
    }
  }
};

function setRequestSocket(agent, req, socket) {
  req.onSocket(socket);
  const agentTimeout = agent.options.timeout || 0;
  if (req.timeout === undefined || req.timeout === agentTimeout) return;
  socket.setTimeout(req.timeout);
}

const globalAgent = new Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5000 });

module.exports = { Agent, globalAgent };
