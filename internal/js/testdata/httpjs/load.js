'use strict';
// Loads the sandbox's http/https (bootjs/src) in host node: the sandbox
// builtins they require are mapped to host node's, internal/errors.js and
// internal/http/ are the real files, llhttp's WebAssembly comes from a
// temporary npm install (HTTPJS_DEPS, set by run.sh).
//
// Mode 'polyfills' maps stream.js, events.js and buffer.js to the npm
// polyfills the sandbox bundles (readable-stream, events, buffer, at the
// versions bootjs/package.json pins) instead, so the code also runs on
// the stream implementation it meets in the sandbox.
const Module = require('module');
const path = require('path');

const SRC = path.resolve(__dirname, '../../bootjs/src');
const DEPS = process.env.HTTPJS_DEPS;
if (!DEPS) throw new Error('HTTPJS_DEPS is not set (run through run.sh)');

const hostBuiltins = {
  'net.js': 'net', 'tls.js': 'tls', 'stream.js': 'stream', 'events.js': 'events', 'buffer.js': 'buffer',
  'url.js': 'url', 'util.js': 'util', 'timers.js': 'timers',
};
const ourFiles = /^(internal\/errors\.js|internal\/primordials\.js|internal\/http\/[a-z_]+\.js|http\.js|https\.js)$/;
const polyfills = { 'stream.js': 'readable-stream', 'events.js': 'events', 'buffer.js': 'buffer' };
const required = new Set();
let mode = 'host';

const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveFilename(request, parent, ...rest) {
  if (parent && parent.filename && parent.filename.startsWith(SRC + path.sep)) {
    if (request === '../lazy.js') {
      // llhttp's WebAssembly, which the sandbox loads as a lazy chunk.
      required.add('llhttp');
      return path.join(__dirname, 'lazy_llhttp.js');
    }
    if (!request.startsWith('.')) throw new Error(`${parent.filename} requires ${request}: not allowed`);
    const rel = path.relative(SRC, path.resolve(path.dirname(parent.filename), request)).split(path.sep).join('/');
    required.add(rel);
    if (mode === 'polyfills' && polyfills[rel]) {
      // A path, so that node's builtins of the same name do not win.
      return resolve.call(this, path.join(DEPS, 'node_modules', polyfills[rel]) + '/', parent, ...rest);
    }
    if (hostBuiltins[rel]) return hostBuiltins[rel];
    if (!ourFiles.test(rel)) throw new Error(`${parent.filename} requires ${request}: not in the allowed set`);
  }
  return resolve.call(this, request, parent, ...rest);
};

// load returns a fresh copy of http and https for the mode.
function load(m = 'host') {
  mode = m;
  for (const k of Object.keys(require.cache)) if (k.startsWith(SRC + path.sep)) delete require.cache[k];
  const http = require(path.join(SRC, 'http.js'));
  const https = require(path.join(SRC, 'https.js'));
  // Node caches the resolution of relative requests to files, so a mode
  // switch could keep the other mode's streams: check which ones we got.
  const Readable = m === 'polyfills' ? require(path.join(DEPS, 'node_modules', 'readable-stream')).Readable : require('stream').Readable;
  if (Object.getPrototypeOf(http.IncomingMessage.prototype) !== Readable.prototype) throw new Error(`load(${m}): wrong stream module`);
  return { http, https };
}

module.exports = { load, required, SRC, DEPS };
