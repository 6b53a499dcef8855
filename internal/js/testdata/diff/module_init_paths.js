'use strict';
// Module._initPaths rebuilds globalPaths from NODE_PATH (empty parts
// dropped) and HOME; isBuiltin answers false for what is not a string.
const Module = require('module');
process.env.HOME = '/h';
process.env.NODE_PATH = '/a/lib::/b/node_modules:';
Module._initPaths();
console.log(Module.globalPaths.filter((p) => !p.endsWith('/lib/node')));
delete process.env.NODE_PATH;
delete process.env.HOME;
Module._initPaths();
console.log(Module.globalPaths.filter((p) => !p.endsWith('/lib/node')).length);
console.log([undefined, null, 1, '', 'fs', 'node:test', 'test', 'internal/errors'].map((n) => Module.isBuiltin(n)));
