'use strict';
// llhttp compiled to WebAssembly, as undici builds it (with and without
// SIMD): the lazy chunk "llhttp" that parser.js instantiates. The package
// is an npm alias of an undici release whose llhttp is the one host node
// runs (see docs/RATIONALE.md); only these two files are bundled.
exports.simd = () => require('undici-llhttp/lib/llhttp/llhttp_simd-wasm.js');
exports.plain = () => require('undici-llhttp/lib/llhttp/llhttp-wasm.js');
