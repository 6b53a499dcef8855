'use strict';
// The sandbox's lazy chunks, as far as http uses them: llhttp's
// WebAssembly from the undici-llhttp package run.sh installs.
const path = require('path');

const dir = path.join(process.env.HTTPJS_DEPS, 'node_modules', 'undici-llhttp', 'lib', 'llhttp');
exports.lazy = (name) => {
  if (name !== 'llhttp') throw new Error(`lazy chunk ${name}: not in the harness`);
  return { simd: () => require(path.join(dir, 'llhttp_simd-wasm.js')), plain: () => require(path.join(dir, 'llhttp-wasm.js')) };
};
