'use strict';
// Module._resolveLookupPaths (null for builtins, '.' or the parent's
// directory for relative requests, node_modules then global paths
// otherwise) and Module._stat (0 file, 1 directory, negative errno).
const Module = require('module');
const fs = require('fs');
const path = require('path');
process.env.HOME = '/h';
delete process.env.NODE_PATH;
Module._initPaths();
const parent = { id: '/p/q/main.js', filename: '/p/q/main.js', paths: ['/p/q/node_modules', '/p/node_modules'] };
for (const req of ['./x', '../x', '.', '..', '.x', 'fs', 'node:fs', 'lodash', '.\\x']) {
  console.log(req, Module._resolveLookupPaths(req), Module._resolveLookupPaths(req, null), Module._resolveLookupPaths(req, parent));
}
const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'stat-'));
fs.writeFileSync(path.join(dir, 'f.js'), '');
console.log(Module._stat(dir), Module._stat(path.join(dir, 'f.js')), Module._stat(path.join(dir, 'none')));
