'use strict';
// Large npm packages (undici, the WHATWG streams) are not in the
// bootstrap: each is a CommonJS chunk that Go compiles (with the code
// cache) the first time a guest uses it, so that a process that never
// fetches neither parses nor holds them. Their "node:" requires are the
// runtime's builtins.
const { B } = require('./bridge.js');

const loaded = new Map();

function builtinRequire(id) {
  return require('./builtins.js').load(id);
}

function lazy(name) {
  let exports = loaded.get(name);
  if (exports !== undefined) return exports;
  const fn = B.compileLazy(name);
  const module = { exports: {} };
  loaded.set(name, module.exports); // a cycle sees the partial exports
  fn.call(module.exports, module.exports, builtinRequire, module, `node:internal/deps/${name}.js`, 'node:internal/deps');
  // The WHATWG streams get the state Node's own streams read from them.
  if (name === 'web-streams-polyfill') require('./webstream_state.js').install(module.exports);
  loaded.set(name, module.exports);
  return module.exports;
}

module.exports = { lazy };
