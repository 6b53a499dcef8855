'use strict';
// require('secexec:tools'): the embedder's host tools. call(name, args)
// returns a promise of the tool's result; a failed call rejects with an
// Error whose code is ERR_TOOL_DENIED, ERR_TOOL_NOT_FOUND,
// ERR_TOOL_INVALID, ERR_TOOL_TOO_LARGE, ERR_TOOL_TIMEOUT or
// ERR_TOOL_FAILED. list() names the tools this process may call. The
// kernel checks the policy and every bound; the length check here only
// keeps a huge argument from being copied out of the isolate.
const { B } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const { codedError } = require('./internal/errors.js');

const requests = new Map();
let nextRequest = 1;

loop.onEvent('tool', (id, _b, code, payload) => {
  const cb = requests.get(id);
  requests.delete(id);
  if (cb) cb(code, payload);
});

function toolError(code, name, message) {
  const e = new Error(`tool ${name}: ${message}`);
  e.code = code;
  e.tool = name;
  return e;
}

function call(name, args) {
  return new Promise((resolve, reject) => {
    if (typeof name !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'name', 'of type string', name);
    if (name.length > 256) throw toolError('ERR_TOOL_INVALID', name.slice(0, 32) + '...', 'a tool name is at most 256 bytes');
    const limit = B.toolLimit();
    if (typeof args === 'string' && args.length > limit) {
      throw toolError('ERR_TOOL_TOO_LARGE', name, `arguments of at least ${args.length} bytes exceed the limit of ${limit}`);
    }
    let json = args === undefined ? 'null' : JSON.stringify(args);
    if (json === undefined) json = 'null';
    if (json.length > limit) {
      throw toolError('ERR_TOOL_TOO_LARGE', name, `arguments of at least ${json.length} bytes exceed the limit of ${limit}`);
    }
    const id = nextRequest++;
    requests.set(id, (code, payload) => {
      if (code) { reject(toolError(code, name, payload || code)); return; }
      try {
        resolve(JSON.parse(payload));
      } catch (e) {
        reject(toolError('ERR_TOOL_FAILED', name, 'the tool returned invalid JSON'));
      }
    });
    try {
      B.toolCall(name, json, id);
    } catch (e) {
      requests.delete(id);
      reject(toolError('ERR_TOOL_FAILED', name, `the call could not start (${e})`));
    }
  });
}

function list() { return JSON.parse(B.toolList()); }

module.exports = { call, list };
