'use strict';
// The parts of path.win32 that POSIX programs use: tar (npm's unpacker)
// strips absolute paths with win32.parse and win32.isAbsolute, because a
// Windows root is also absolute for it on Linux. These follow the
// algorithm of node's lib/path.js; the rest of win32 is not provided.

const isSep = (c) => c === 47 || c === 92; // '/' or '\'
const isDriveLetter = (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

function check(path) {
  if (typeof path !== 'string') {
    const err = new TypeError(`The "path" argument must be of type string. Received ${typeof path}`);
    err.code = 'ERR_INVALID_ARG_TYPE';
    throw err;
  }
}

// rootLength returns the length of path's root: "\", "C:", "C:\",
// "\\server\share\" (UNC), or 0.
function rootLength(path) {
  const len = path.length;
  if (len === 0) return 0;
  const c = path.charCodeAt(0);
  if (isSep(c)) {
    if (len < 2 || !isSep(path.charCodeAt(1))) return 1;
    // \\server\share: the root takes both names when both are there.
    let j = 2;
    while (j < len && !isSep(path.charCodeAt(j))) j++;
    if (j === 2 || j === len) return 1;
    while (j < len && isSep(path.charCodeAt(j))) j++;
    const shareStart = j;
    if (j === len) return 1;
    while (j < len && !isSep(path.charCodeAt(j))) j++;
    if (j === shareStart) return 1;
    return j === len ? j : j + 1;
  }
  if (len >= 2 && isDriveLetter(c) && path.charCodeAt(1) === 58) {
    return len >= 3 && isSep(path.charCodeAt(2)) ? 3 : 2;
  }
  return 0;
}

function isAbsolute(path) {
  check(path);
  const len = path.length;
  if (len === 0) return false;
  const c = path.charCodeAt(0);
  return isSep(c) || (len > 2 && isDriveLetter(c) && path.charCodeAt(1) === 58 && isSep(path.charCodeAt(2)));
}

function parse(path) {
  check(path);
  const ret = { root: '', dir: '', base: '', ext: '', name: '' };
  if (path.length === 0) return ret;
  const rootEnd = rootLength(path);
  ret.root = path.slice(0, rootEnd);
  if (rootEnd === path.length) {
    ret.dir = ret.root;
    return ret;
  }
  // The last component, without trailing separators.
  let end = path.length;
  while (end > rootEnd && isSep(path.charCodeAt(end - 1))) end--;
  let start = end;
  while (start > rootEnd && !isSep(path.charCodeAt(start - 1))) start--;
  ret.base = path.slice(start, end);
  const dot = ret.base.lastIndexOf('.');
  if (dot <= 0 || ret.base === '..') {
    ret.name = ret.base;
  } else {
    ret.name = ret.base.slice(0, dot);
    ret.ext = ret.base.slice(dot);
  }
  let dirEnd = start;
  while (dirEnd > rootEnd && isSep(path.charCodeAt(dirEnd - 1))) dirEnd--;
  ret.dir = dirEnd > rootEnd ? path.slice(0, dirEnd) : ret.root;
  return ret;
}

module.exports = { isAbsolute, parse, sep: '\\', delimiter: ';' };
