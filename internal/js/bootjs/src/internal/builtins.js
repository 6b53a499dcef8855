'use strict';
// The registry of builtin modules. Factories run on first require, so a
// module costs nothing until a guest uses it.
const { codedError, accessDenied } = require('./errors.js');

function denied(name, why) {
  return () => { throw accessDenied(`the '${name}' module ${why}`); };
}

const factories = {
  assert: () => require('../assert.js'),
  'assert/strict': () => require('../assert.js').strict,
  async_hooks: () => require('../async_hooks.js'),
  buffer: () => require('../buffer.js'),
  child_process: () => require('../child_process.js'),
  console: () => require('../console.js'),
  constants: () => { const c = require('./constants.js'); return { ...c.errno, ...c.signals, ...c.fs, ...c.priority }; },
  crypto: () => require('../crypto.js'),
  diagnostics_channel: () => require('../diagnostics_channel.js'),
  domain: () => require('../domain.js'),
  events: () => require('../events.js'),
  fs: () => require('../fs.js'),
  'fs/promises': () => require('../fs.js').promises,
  module: () => require('../module.js'),
  os: () => require('../os.js'),
  path: () => require('../path.js'),
  'path/posix': () => require('../path.js'),
  'path/win32': () => require('../path.js').win32,
  perf_hooks: () => require('../perf_hooks.js'),
  process: () => require('../process.js').process,
  punycode: () => require('punycode/'),
  querystring: () => {
    const qs = require('querystring-es3');
    // Node's parse returns an object without prototype.
    const parse = (...a) => Object.assign(Object.create(null), qs.parse(...a));
    // escape and unescape as Node's: UTF-8 percent-encoding of all but
    // encodeURIComponent's unreserved characters (a surrogate takes the
    // next unit whatever it is; one at the end is ERR_INVALID_URI), and a
    // decoding that leaves malformed sequences instead of throwing.
    const hex = (b) => `%${b < 16 ? '0' : ''}${b.toString(16).toUpperCase()}`;
    const escape = (str) => {
      if (typeof str !== 'string') str = typeof str === 'object' ? String(str) : `${str}`;
      let out = '';
      for (let i = 0; i < str.length; i++) {
        let c = str.charCodeAt(i);
        if (c < 0x80) {
          out += /[A-Za-z0-9\-._~!'()*]/.test(str[i]) ? str[i] : hex(c);
        } else if (c < 0x800) {
          out += hex(0xC0 | (c >> 6)) + hex(0x80 | (c & 0x3F));
        } else if (c < 0xD800 || c >= 0xE000) {
          out += hex(0xE0 | (c >> 12)) + hex(0x80 | ((c >> 6) & 0x3F)) + hex(0x80 | (c & 0x3F));
        } else {
          if (++i >= str.length) {
            const err = new URIError('URI malformed');
            err.code = 'ERR_INVALID_URI';
            throw err;
          }
          c = 0x10000 + (((c & 0x3FF) << 10) | (str.charCodeAt(i) & 0x3FF));
          out += hex(0xF0 | (c >> 18)) + hex(0x80 | ((c >> 12) & 0x3F)) + hex(0x80 | ((c >> 6) & 0x3F)) + hex(0x80 | (c & 0x3F));
        }
      }
      return out;
    };
    // unescapeBytes decodes each valid %XX to its byte and keeps the rest.
    const unescapeBytes = (s) => {
      const bytes = [];
      for (let i = 0; i < s.length; i++) {
        const h = s.slice(i + 1, i + 3);
        if (s[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(h)) {
          bytes.push(parseInt(h, 16));
          i += 2;
        } else {
          for (const b of Buffer.from(s[i])) bytes.push(b);
        }
      }
      return Buffer.from(bytes).toString();
    };
    const unescape = (s) => { try { return decodeURIComponent(s); } catch { return unescapeBytes(s); } };
    return { ...qs, parse, decode: parse, escape, unescape };
  },
  readline: () => require('../readline.js'),
  'readline/promises': () => require('../readline.js').promises,
  stream: () => require('../stream.js'),
  'stream/promises': () => require('../stream.js').promises,
  'stream/consumers': () => require('./stream_consumers.js'),
  'stream/web': () => ({ ...require('./lazy.js').lazy('web-streams-polyfill'), TextEncoderStream: globalThis.TextEncoderStream, TextDecoderStream: globalThis.TextDecoderStream }),
  string_decoder: () => require('../string_decoder.js'),
  sys: () => require('../util.js'),
  timers: () => require('../timers.js'),
  'timers/promises': () => require('../timers.js').promises,
  tty: () => require('../tty.js'),
  url: () => require('../url.js'),
  util: () => require('../util.js'),
  'util/types': () => require('../util.js').types,
  v8: () => require('../v8.js'),
  vm: () => require('../vm.js'),
  zlib: () => require('../zlib.js'),
  worker_threads: () => require('../worker_threads.js'),
  cluster: () => require('../cluster.js'),
  inspector: denied('inspector', 'is not available in this sandbox'),
  'inspector/promises': denied('inspector/promises', 'is not available in this sandbox'),
  repl: () => require('../repl.js'),
  trace_events: denied('trace_events', 'is not available in this sandbox'),
  wasi: denied('wasi', 'is not available in the node runtime of this sandbox; run WASI programs directly'),
  http: () => require('../http.js'),
  https: () => require('../https.js'),
  http2: () => require('../http2.js'),
  // Node's http internals, still requireable by their old public names.
  _http_agent: () => require('./http/agent.js'),
  _http_client: () => ({ ClientRequest: require('./http/client.js').ClientRequest }),
  _http_common: () => require('./http/legacy.js').common(),
  _http_incoming: () => require('./http/incoming.js'),
  _http_outgoing: () => require('./http/legacy.js').outgoing(),
  _http_server: () => require('./http/legacy.js').server(),
  net: () => require('../net.js'),
  tls: () => require('../tls.js'),
  dns: () => require('../dns.js'),
  'dns/promises': () => require('../dns.js').promises,
  dgram: () => require('../dgram.js'),
  // secexec's own: the embedder's host tools.
  'secexec:tools': () => require('../tools.js'),
};

// Modules that only exist with the node: prefix: a bare 'test' is a
// package in node_modules, as in Node.
const schemeOnly = new Set(['test', 'test/reporters', 'sqlite', 'sea']);
const schemeFactories = {
  test: () => require('./lazy.js').lazy('test_runner').test,
  'test/reporters': () => require('./lazy.js').lazy('test_runner').reporters(),
};

const cache = new Map();

function has(name) {
  if (name.startsWith('node:')) {
    name = name.slice(5);
    if (Object.prototype.hasOwnProperty.call(schemeFactories, name)) return true;
  }
  return Object.prototype.hasOwnProperty.call(factories, name);
}

function load(name) {
  const bare = name.startsWith('node:') ? name.slice(5) : name;
  if (name.startsWith('node:') && Object.prototype.hasOwnProperty.call(schemeFactories, bare)) {
    if (cache.has(name)) return cache.get(name);
    const m = schemeFactories[bare]();
    cache.set(name, m);
    return m;
  }
  if (cache.has(bare)) return cache.get(bare);
  if (!Object.prototype.hasOwnProperty.call(factories, bare)) {
    if (name.startsWith('node:') && schemeOnly.has(bare)) throw accessDenied(`the 'node:${bare}' module is not available in this sandbox`);
    throw codedError('ERR_UNKNOWN_BUILTIN_MODULE', name);
  }
  const m = factories[bare]();
  cache.set(bare, m);
  return m;
}

const builtinModules = Object.keys(factories).filter((n) => !n.startsWith('secexec:')).filter((n) => !n.includes('/') || n.startsWith('fs/') || n.startsWith('stream/') || n.startsWith('timers/') || n.startsWith('util/') || n.startsWith('path/') || n.startsWith('assert/') || n.startsWith('dns/') || n.startsWith('readline/') || n.startsWith('inspector/'));

module.exports = { has, load, builtinModules };
