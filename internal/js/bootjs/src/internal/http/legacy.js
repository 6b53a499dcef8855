'use strict';
// The shapes of Node's _http_common, _http_outgoing and _http_server
// modules (deprecated, still requireable), built from ours.
const common = require('./common.js');
const outgoing = require('./outgoing.js');
const server = require('./server.js');

module.exports = {
  common: () => ({
    _checkInvalidHeaderChar: common.checkInvalidHeaderChar,
    _checkIsHttpToken: common.checkIsHttpToken,
    chunkExpression: common.chunkExpression,
    continueExpression: common.continueExpression,
    CRLF: common.CRLF,
    freeParser: common.freeParser,
    methods: common.methods,
    parsers: common.parsers,
    kIncomingMessage: common.kIncomingMessage,
    HTTPParser: common.HTTPParser,
    isLenient: common.isLenient,
    prepareError: common.prepareError,
  }),
  outgoing: () => ({
    kHighWaterMark: outgoing.kHighWaterMark,
    kUniqueHeaders: outgoing.kUniqueHeaders,
    parseUniqueHeadersOption: outgoing.parseUniqueHeadersOption,
    validateHeaderName: outgoing.validateHeaderName,
    validateHeaderValue: outgoing.validateHeaderValue,
    OutgoingMessage: outgoing.OutgoingMessage,
  }),
  server: () => ({
    STATUS_CODES: common.STATUS_CODES,
    Server: server.Server,
    ServerResponse: server.ServerResponse,
    storeHTTPOptions: server.storeHTTPOptions,
    _connectionListener: server.connectionListener,
    httpServerPreClose: server.httpServerPreClose,
    kServerResponse: common.kServerResponse,
  }),
};
