'use strict';
// path: path-browserify (Node's posix path module).
const path = require('path-browserify');
const out = Object.assign({}, path);
out.posix = out;
const win32 = require('./internal/path_win32.js');
out.win32 = new Proxy(win32, {
  get(t, k) { return k in t ? t[k] : () => { throw new Error(`path.win32.${String(k)} is not supported`); }; },
});
out.toNamespacedPath = (p) => p;
out.matchesGlob = (p, pattern) => {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') { if (pattern[i + 1] === '*') { re += '.*'; i++; if (pattern[i + 1] === '/') i++; } else re += '[^/]*'; }
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(p);
};
module.exports = out;
