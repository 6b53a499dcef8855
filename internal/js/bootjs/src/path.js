'use strict';
// path: Node's path module, both flavours. path.posix is what a program
// on Linux gets as path; path.win32 is there because programs running on
// POSIX still use it (npm's tar strips Windows roots with it, tools build
// Windows paths in tests). Both follow the results of Node 22's
// lib/path.js, quirks included (dirname('//a') is '//', basename('a/b/',
// 'xb') is 'b/'), because programs and Node's own tests compare strings.

const { validateString, validateObject } = require('./internal/validators.js');

const SLASH = 47;
const BACKSLASH = 92;
const COLON = 58;
const DOT = 46;

const isPosixSep = (c) => c === SLASH;
const isWinSep = (c) => c === SLASH || c === BACKSLASH;
const isDriveLetter = (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const hasDrive = (p) => p.length >= 2 && isDriveLetter(p.charCodeAt(0)) && p.charCodeAt(1) === COLON;

// normalizeSegments resolves '.' and '..' in a rootless path and joins
// what is left with sep; '..' that would climb past the start is kept
// only when allowAboveRoot (a relative path).
function normalizeSegments(path, allowAboveRoot, isSep, sep) {
  const out = [];
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i < path.length && !isSep(path.charCodeAt(i))) continue;
    const seg = path.slice(start, i);
    start = i + 1;
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (allowAboveRoot) out.push('..');
      continue;
    }
    out.push(seg);
  }
  return out.join(sep);
}

// lastSegment returns [start, end) of the last name in path at or after
// from, trailing separators left out; end is -1 when there is no name.
function lastSegment(path, from, isSep) {
  let end = path.length;
  while (end > from && isSep(path.charCodeAt(end - 1))) end--;
  if (end === from) return [from, -1];
  let start = end;
  while (start > from && !isSep(path.charCodeAt(start - 1))) start--;
  return [start, end];
}

// extOf is the extension of a name: from its last dot, unless that dot
// starts the name or the name is '..'.
function extOf(name) {
  if (name === '..') return '';
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot);
}

function basenameFrom(path, suffix, from, isSep) {
  if (suffix !== undefined) validateString(suffix, 'suffix');
  validateString(path, 'path');
  if (suffix !== undefined && suffix.length > 0 && suffix.length <= path.length) {
    if (suffix === path) return '';
    const [start, end] = lastSegment(path, from, isSep);
    // Node's suffix scan never finds where the name ends in a path of
    // separators alone, and returns all of it.
    if (end === -1) return path.slice(from);
    const name = path.slice(start, end);
    if (suffix.length < name.length && name.endsWith(suffix)) return path.slice(start, end - suffix.length);
    if (suffix.length === name.length || (suffix.length < name.length)) return name;
    // A suffix longer than the name that still ends with all of it: Node
    // keeps the name's trailing separators then.
    return suffix.endsWith(name) ? path.slice(start) : name;
  }
  const [start, end] = lastSegment(path, from, isSep);
  return end === -1 ? '' : path.slice(start, end);
}

function extnameFrom(path, from, isSep) {
  validateString(path, 'path');
  const [start, end] = lastSegment(path, from, isSep);
  return end === -1 ? '' : extOf(path.slice(start, end));
}

// parseFrom fills ret (whose root is set) from the part of path after
// rootEnd; Node's dir keeps all but one of the separators before the name.
function parseFrom(path, ret, rootEnd, isSep) {
  const [start, end] = lastSegment(path, rootEnd, isSep);
  if (end !== -1) {
    ret.base = path.slice(start, end);
    ret.ext = extOf(ret.base);
    ret.name = ret.ext === '' ? ret.base : ret.base.slice(0, ret.base.length - ret.ext.length);
  }
  ret.dir = end !== -1 && start > rootEnd ? path.slice(0, start - 1) : ret.root;
  return ret;
}

function formatWith(sep, pathObject) {
  validateObject(pathObject, 'pathObject');
  const dir = pathObject.dir || pathObject.root;
  const ext = pathObject.ext ? `${pathObject.ext[0] === '.' ? '' : '.'}${pathObject.ext}` : '';
  const base = pathObject.base || `${pathObject.name || ''}${ext}`;
  if (!dir) return base;
  return dir === pathObject.root ? `${dir}${base}` : `${dir}${sep}${base}`;
}

// ---- glob ----------------------------------------------------------

// expandBraces turns a{b,c}d into [abd, acd] (nested sets too), as
// minimatch does before matching.
function expandBraces(pattern) {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '{') { if (depth++ === 0) open = i; }
    else if (c === '}' && depth > 0 && --depth === 0) {
      const body = pattern.slice(open + 1, i);
      const alts = [];
      let d = 0;
      let from = 0;
      for (let j = 0; j < body.length; j++) {
        if (body[j] === '{') d++;
        else if (body[j] === '}') d--;
        else if (body[j] === ',' && d === 0) { alts.push(body.slice(from, j)); from = j + 1; }
      }
      alts.push(body.slice(from));
      if (alts.length < 2) continue;
      const head = pattern.slice(0, open);
      const tails = expandBraces(pattern.slice(i + 1));
      const out = [];
      for (const a of alts) for (const e of expandBraces(a)) for (const t of tails) out.push(head + e + t);
      return out;
    }
  }
  return [pattern];
}

// segmentRegExp compiles one name of a glob: * and ? stay inside the
// name and never match a leading dot, [...] is a class ([!...] negated).
function segmentRegExp(seg) {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const close = seg.indexOf(']', i + 2);
      if (close === -1) { re += '\\['; continue; }
      let body = seg.slice(i + 1, close);
      const negate = body[0] === '!' || body[0] === '^';
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = close;
    } else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const dotSafe = seg[0] === '.' ? '' : '(?!\\.)';
  return new RegExp(`^${dotSafe}${re}$`);
}

function matchParts(names, pats, ni, pi) {
  for (; pi < pats.length; pi++) {
    const p = pats[pi];
    if (p === '**') {
      for (let k = ni; k <= names.length; k++) {
        if (matchParts(names, pats, k, pi + 1)) return true;
        if (k < names.length && names[k][0] === '.') return false;
      }
      return false;
    }
    if (ni >= names.length || !segmentRegExp(p).test(names[ni])) return false;
    ni++;
  }
  return ni === names.length;
}

let globWarned = false;

function matchesGlobWith(splitter, path, pattern) {
  validateString(path, 'path');
  validateString(pattern, 'pattern');
  if (!globWarned) {
    globWarned = true;
    process.emitWarning('glob is an experimental feature and might change at any time', 'ExperimentalWarning');
  }
  const names = path.split(splitter);
  return expandBraces(pattern).some((p) => matchParts(names, p.split(splitter), 0, 0));
}

// ---- posix ---------------------------------------------------------

const posix = {
  sep: '/',
  delimiter: ':',

  resolve(...args) {
    let resolved = '';
    let absolute = false;
    for (let i = args.length - 1; i >= -1 && !absolute; i--) {
      const p = i >= 0 ? args[i] : process.cwd();
      if (i >= 0) validateString(p, `paths[${i}]`);
      if (p.length === 0) continue;
      resolved = `${p}/${resolved}`;
      absolute = p.charCodeAt(0) === SLASH;
    }
    resolved = normalizeSegments(resolved, !absolute, isPosixSep, '/');
    if (absolute) return `/${resolved}`;
    return resolved.length > 0 ? resolved : '.';
  },

  normalize(path) {
    validateString(path, 'path');
    if (path.length === 0) return '.';
    const absolute = path.charCodeAt(0) === SLASH;
    const trailing = path.charCodeAt(path.length - 1) === SLASH;
    let out = normalizeSegments(path, !absolute, isPosixSep, '/');
    if (out.length === 0) {
      if (absolute) return '/';
      return trailing ? './' : '.';
    }
    if (trailing) out += '/';
    return absolute ? `/${out}` : out;
  },

  isAbsolute(path) {
    validateString(path, 'path');
    return path.length > 0 && path.charCodeAt(0) === SLASH;
  },

  join(...args) {
    let joined;
    for (const arg of args) {
      validateString(arg, 'path');
      if (arg.length > 0) joined = joined === undefined ? arg : `${joined}/${arg}`;
    }
    return joined === undefined ? '.' : posix.normalize(joined);
  },

  relative(from, to) {
    validateString(from, 'from');
    validateString(to, 'to');
    if (from === to) return '';
    from = posix.resolve(from);
    to = posix.resolve(to);
    if (from === to) return '';
    // Both are absolute and normalized: compare them name by name.
    const fromParts = from.split('/').filter(Boolean);
    const toParts = to.split('/').filter(Boolean);
    let i = 0;
    while (i < fromParts.length && i < toParts.length && fromParts[i] === toParts[i]) i++;
    return [...new Array(fromParts.length - i).fill('..'), ...toParts.slice(i)].join('/');
  },

  toNamespacedPath(path) {
    return path;
  },

  dirname(path) {
    validateString(path, 'path');
    if (path.length === 0) return '.';
    const rooted = path.charCodeAt(0) === SLASH;
    let i = path.length - 1;
    while (i >= 1 && path.charCodeAt(i) === SLASH) i--;
    while (i >= 1 && path.charCodeAt(i) !== SLASH) i--;
    if (i < 1) return rooted ? '/' : '.';
    if (rooted && i === 1) return '//';
    return path.slice(0, i);
  },

  basename(path, suffix) {
    return basenameFrom(path, suffix, 0, isPosixSep);
  },

  extname(path) {
    return extnameFrom(path, 0, isPosixSep);
  },

  format(pathObject) {
    return formatWith('/', pathObject);
  },

  parse(path) {
    validateString(path, 'path');
    const ret = { root: '', dir: '', base: '', ext: '', name: '' };
    if (path.length === 0) return ret;
    const rootEnd = path.charCodeAt(0) === SLASH ? 1 : 0;
    ret.root = path.slice(0, rootEnd);
    parseFrom(path, ret, rootEnd, isPosixSep);
    // Node reads '..' right after the root as the name '.' with the
    // extension '.' (its scan takes the root's slash for the name's start).
    if (/^\/\.\.\/*$/.test(path)) {
      ret.name = ret.ext = '.';
    }
    return ret;
  },

  matchesGlob(path, pattern) {
    return matchesGlobWith('/', path, pattern);
  },
};

// ---- win32 ---------------------------------------------------------

function relativeByName(fromOrig, toOrig) {
  const names = (p) => {
    const s = p.split('\\');
    if (s[s.length - 1] === '') s.pop();
    return s;
  };
  const from = names(fromOrig);
  const to = names(toOrig);
  const n = Math.min(from.length, to.length);
  let i = 0;
  while (i < n && from[i].toLowerCase() === to[i].toLowerCase()) i++;
  if (i === 0) return toOrig;
  return [...new Array(from.length - i).fill('..'), ...to.slice(i)].join('\\');
}

// trimSeps is [start, end) of p without its leading backslashes and
// without trailing ones (keeping one character).
function trimSeps(p) {
  let start = 0;
  while (start < p.length && p.charCodeAt(start) === BACKSLASH) start++;
  let end = p.length;
  while (end - 1 > start && p.charCodeAt(end - 1) === BACKSLASH) end--;
  return [start, end];
}

// uncRoot reads \\server\share at the start of path: [server, shareStart,
// shareEnd], or null when the server or the share is missing.
function uncRoot(path) {
  const len = path.length;
  let j = 2;
  while (j < len && !isWinSep(path.charCodeAt(j))) j++;
  if (j === len || j === 2) return null;
  const server = path.slice(2, j);
  while (j < len && isWinSep(path.charCodeAt(j))) j++;
  if (j === len) return null;
  const shareStart = j;
  while (j < len && !isWinSep(path.charCodeAt(j))) j++;
  return [server, shareStart, j];
}

// winRoot splits path into its device (C: or \\server\share), where its
// root ends and whether it is absolute, as resolve and normalize see it.
function winRoot(path) {
  const len = path.length;
  const c = path.charCodeAt(0);
  if (len === 1) return { device: '', rootEnd: isWinSep(c) ? 1 : 0, absolute: isWinSep(c) };
  if (isWinSep(c)) {
    if (!isWinSep(path.charCodeAt(1))) return { device: '', rootEnd: 1, absolute: true };
    const unc = uncRoot(path);
    if (unc === null) return { device: '', rootEnd: 0, absolute: true };
    const [server, shareStart, shareEnd] = unc;
    return { device: `\\\\${server}\\${path.slice(shareStart, shareEnd)}`, rootEnd: shareEnd, absolute: true, unc: shareEnd === len };
  }
  if (hasDrive(path)) {
    const absolute = len > 2 && isWinSep(path.charCodeAt(2));
    return { device: path.slice(0, 2), rootEnd: absolute ? 3 : 2, absolute };
  }
  return { device: '', rootEnd: 0, absolute: false };
}

const win32 = {
  sep: '\\',
  delimiter: ';',

  resolve(...args) {
    let device = '';
    let tail = '';
    let absolute = false;
    for (let i = args.length - 1; i >= -1; i--) {
      let p;
      if (i >= 0) {
        p = args[i];
        validateString(p, `paths[${i}]`);
        if (p.length === 0) continue;
      } else if (device.length === 0) {
        p = process.cwd();
      } else {
        // The drive's own working directory (=C: in the environment on
        // Windows), else the process's when it is on that drive.
        p = process.env[`=${device}`] || process.cwd();
        if (p === undefined || (p.slice(0, 2).toLowerCase() !== device.toLowerCase() && p.charCodeAt(2) === BACKSLASH)) {
          p = `${device}\\`;
        }
      }
      const root = winRoot(p);
      if (root.device.length > 0) {
        if (device.length === 0) device = root.device;
        else if (root.device.toLowerCase() !== device.toLowerCase()) continue;
      }
      if (absolute) {
        if (device.length > 0) break;
      } else {
        tail = `${p.slice(root.rootEnd)}\\${tail}`;
        absolute = root.absolute;
        if (absolute && device.length > 0) break;
      }
    }
    tail = normalizeSegments(tail, !absolute, isWinSep, '\\');
    return absolute ? `${device}\\${tail}` : `${device}${tail}` || '.';
  },

  normalize(path) {
    validateString(path, 'path');
    const len = path.length;
    if (len === 0) return '.';
    if (len === 1) return path.charCodeAt(0) === SLASH ? '\\' : path;
    const root = winRoot(path);
    if (root.unc) return `${root.device}\\`;
    let tail = root.rootEnd < len ? normalizeSegments(path.slice(root.rootEnd), !root.absolute, isWinSep, '\\') : '';
    if (tail.length === 0 && !root.absolute) tail = '.';
    if (tail.length > 0 && isWinSep(path.charCodeAt(len - 1))) tail += '\\';
    return root.absolute ? `${root.device}\\${tail}` : `${root.device}${tail}`;
  },

  isAbsolute(path) {
    validateString(path, 'path');
    const len = path.length;
    if (len === 0) return false;
    return isWinSep(path.charCodeAt(0)) || (len > 2 && hasDrive(path) && isWinSep(path.charCodeAt(2)));
  },

  join(...args) {
    let joined;
    let first;
    for (const arg of args) {
      validateString(arg, 'path');
      if (arg.length === 0) continue;
      if (joined === undefined) joined = first = arg;
      else joined += `\\${arg}`;
    }
    if (joined === undefined) return '.';
    // Joining must not make a UNC root out of parts that did not start as
    // one (join('\\', 'server', 'share')): only a first part that itself
    // begins with exactly two separators and a name keeps its leading pair.
    let lead = 0;
    for (; lead < 3 && lead < first.length && isWinSep(first.charCodeAt(lead));) lead++;
    const keepsUNC = lead === 2 && first.length > 2;
    if (!keepsUNC && lead > 0) {
      let n = 0;
      while (n < joined.length && isWinSep(joined.charCodeAt(n))) n++;
      if (n >= 2) joined = `\\${joined.slice(n)}`;
    }
    return win32.normalize(joined);
  },

  relative(from, to) {
    validateString(from, 'from');
    validateString(to, 'to');
    if (from === to) return '';
    const fromOrig = win32.resolve(from);
    const toOrig = win32.resolve(to);
    if (fromOrig === toOrig) return '';
    // Compared without case, character by character between the leading
    // and trailing separators, as Node does: a rooted path without a
    // drive shares nothing with another unless one is a prefix.
    const f = fromOrig.toLowerCase();
    const t = toOrig.toLowerCase();
    if (f === t) return '';
    // Lower case that changes lengths (İ becomes i̇) breaks the character
    // offsets below: compare whole names instead.
    if (f.length !== fromOrig.length || t.length !== toOrig.length) return relativeByName(fromOrig, toOrig);
    const [fs, fe] = trimSeps(f);
    const [ts, te] = trimSeps(t);
    const n = Math.min(fe - fs, te - ts);
    let lastSep = -1;
    let i = 0;
    for (; i < n; i++) {
      const c = f.charCodeAt(fs + i);
      if (c !== t.charCodeAt(ts + i)) break;
      if (c === BACKSLASH) lastSep = i;
    }
    if (i !== n) {
      if (lastSep === -1) return toOrig;
    } else {
      if (te - ts > n) {
        if (t.charCodeAt(ts + i) === BACKSLASH) return toOrig.slice(ts + i + 1);
        if (i === 2) return toOrig.slice(ts + i); // 'C:' to 'C:foo'
      }
      if (fe - fs > n) {
        if (f.charCodeAt(fs + i) === BACKSLASH) lastSep = i;
        else if (i === 2) lastSep = 3;
      }
      if (lastSep === -1) lastSep = 0;
    }
    let up = '';
    for (let k = fs + lastSep + 1; k <= fe; k++) {
      if (k === fe || f.charCodeAt(k) === BACKSLASH) up += up.length === 0 ? '..' : '\\..';
    }
    let rest = ts + lastSep;
    if (up.length > 0) return `${up}${toOrig.slice(rest, te)}`;
    if (toOrig.charCodeAt(rest) === BACKSLASH) rest++;
    return toOrig.slice(rest, te);
  },

  toNamespacedPath(path) {
    if (typeof path !== 'string' || path.length === 0) return path;
    const resolved = win32.resolve(path);
    if (resolved.length <= 2) return path;
    if (resolved.charCodeAt(0) === BACKSLASH) {
      if (resolved.charCodeAt(1) === BACKSLASH) {
        const c = resolved.charCodeAt(2);
        if (c !== 63 && c !== DOT) return `\\\\?\\UNC\\${resolved.slice(2)}`;
      }
    } else if (hasDrive(resolved) && resolved.charCodeAt(2) === BACKSLASH) {
      return `\\\\?\\${resolved}`;
    }
    return resolved;
  },

  dirname(path) {
    validateString(path, 'path');
    const len = path.length;
    if (len === 0) return '.';
    if (len === 1) return isWinSep(path.charCodeAt(0)) ? path : '.';
    let rootEnd = -1;
    if (isWinSep(path.charCodeAt(0))) {
      rootEnd = 1;
      if (isWinSep(path.charCodeAt(1))) {
        const unc = uncRoot(path);
        if (unc !== null) {
          if (unc[2] === len) return path;
          rootEnd = unc[2] + 1;
        }
      }
    } else if (hasDrive(path)) {
      rootEnd = len > 2 && isWinSep(path.charCodeAt(2)) ? 3 : 2;
    }
    const from = Math.max(rootEnd, 0);
    let i = len - 1;
    while (i >= from && isWinSep(path.charCodeAt(i))) i--;
    while (i >= from && !isWinSep(path.charCodeAt(i))) i--;
    if (i < from) return rootEnd === -1 ? '.' : path.slice(0, rootEnd);
    return path.slice(0, i);
  },

  basename(path, suffix) {
    validateString(path, 'path');
    return basenameFrom(path, suffix, hasDrive(path) ? 2 : 0, isWinSep);
  },

  extname(path) {
    validateString(path, 'path');
    return extnameFrom(path, hasDrive(path) ? 2 : 0, isWinSep);
  },

  format(pathObject) {
    return formatWith('\\', pathObject);
  },

  parse(path) {
    validateString(path, 'path');
    const ret = { root: '', dir: '', base: '', ext: '', name: '' };
    const len = path.length;
    if (len === 0) return ret;
    const c = path.charCodeAt(0);
    if (len === 1) {
      if (isWinSep(c)) ret.root = ret.dir = path;
      else ret.base = ret.name = path;
      return ret;
    }
    let rootEnd = 0;
    if (isWinSep(c)) {
      rootEnd = 1;
      if (isWinSep(path.charCodeAt(1))) {
        const unc = uncRoot(path);
        if (unc !== null) rootEnd = unc[2] === len ? len : unc[2] + 1;
      }
    } else if (hasDrive(path)) {
      if (len === 2 || (len === 3 && isWinSep(path.charCodeAt(2)))) {
        ret.root = ret.dir = path;
        return ret;
      }
      rootEnd = isWinSep(path.charCodeAt(2)) ? 3 : 2;
    }
    ret.root = path.slice(0, rootEnd);
    return parseFrom(path, ret, rootEnd, isWinSep);
  },

  matchesGlob(path, pattern) {
    return matchesGlobWith(/[\\/]/, path, pattern);
  },
};

posix.win32 = win32.win32 = win32;
posix.posix = win32.posix = posix;
posix._makeLong = posix.toNamespacedPath;
win32._makeLong = win32.toNamespacedPath;

module.exports = posix;
