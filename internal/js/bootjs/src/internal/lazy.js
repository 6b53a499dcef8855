'use strict';
// Large npm packages (undici, the WHATWG streams) are not in the
// bootstrap: each is a CommonJS chunk that Go compiles (with the code
// cache) the first time a guest uses it, so that a process that never
// fetches neither parses nor holds them. Their "node:" requires are the
// runtime's builtins.
const { B, takeBytes } = require('./bridge.js');

const loaded = new Map();

const assetPrefix = 'secexec:asset/';

// chunkRequire is a chunk's require: the runtime's builtins, and the
// assets bundled beside the chunks (bootjs.LazyAssets).
function chunkRequire(id) {
  if (typeof id === 'string' && id.startsWith(assetPrefix)) return asset(id.slice(assetPrefix.length));
  return require('./builtins.js').load(id);
}

// asset returns a fresh Buffer of one of the bundle's binary assets
// (llhttp's WebAssembly), decoded once in Go when the bundle was built.
function asset(name) {
  const { Buffer } = require('../buffer.js');
  return takeBytes(B.lazyAsset(name), (n) => Buffer.alloc(n));
}

function lazy(name) {
  let exports = loaded.get(name);
  if (exports !== undefined) return exports;
  const fn = B.compileLazy(name);
  const module = { exports: {} };
  loaded.set(name, module.exports); // a cycle sees the partial exports
  fn.call(module.exports, module.exports, chunkRequire, module, `node:internal/deps/${name}.js`, 'node:internal/deps');
  // The WHATWG streams get the state Node's own streams read from them.
  if (name === 'web-streams-polyfill') require('./webstream_state.js').install(module.exports);
  loaded.set(name, module.exports);
  return module.exports;
}

module.exports = { lazy, asset };
