'use strict';
// http: Node's HTTP/1.1 client and server on the sandbox's net module.
const agentModule = require('./internal/http/agent.js');
const { ClientRequest } = require('./internal/http/client.js');
const { IncomingMessage } = require('./internal/http/incoming.js');
const { OutgoingMessage } = require('./internal/http/outgoing.js');
const { Server, ServerResponse, connectionListener } = require('./internal/http/server.js');
const { STATUS_CODES, methods, validateHeaderName, validateHeaderValue } = require('./internal/http/common.js');
const { parsers } = require('./internal/http/common.js');
const { kDefaultMaxHeaderSize } = require('./internal/http/parser.js');
const { codedError } = require('./internal/errors.js');

function createServer(opts, requestListener) {
  return new Server(opts, requestListener);
}

function request(url, options, cb) {
  return new ClientRequest(url, options, cb);
}

function get(url, options, cb) {
  const req = request(url, options, cb);
  req.end();
  return req;
}

// setMaxIdleHTTPParsers bounds the free list of idle parsers.
function setMaxIdleHTTPParsers(max) {
  if (typeof max !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'max', 'of type number', max);
  if (!Number.isInteger(max) || max < 1) throw codedError('ERR_OUT_OF_RANGE', 'max', '>= 1 && <= 4294967295', max);
  parsers.max = max;
}

module.exports = {
  _connectionListener: connectionListener,
  METHODS: methods.slice().sort(),
  STATUS_CODES,
  Agent: agentModule.Agent,
  ClientRequest,
  IncomingMessage,
  OutgoingMessage,
  Server,
  ServerResponse,
  createServer,
  validateHeaderName,
  validateHeaderValue,
  get,
  request,
  setMaxIdleHTTPParsers,
};

Object.defineProperty(module.exports, 'maxHeaderSize', {
  configurable: true, enumerable: true,
  get() { return kDefaultMaxHeaderSize; },
});

Object.defineProperty(module.exports, 'globalAgent', {
  configurable: true, enumerable: true,
  get() { return agentModule.globalAgent; },
  set(value) { agentModule.globalAgent = value; },
});
