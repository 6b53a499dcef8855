'use strict';
// fs: every operation is a system call on the kernel through the bridge,
// so permissions, quotas and errors are the kernel's. The callback and
// promise APIs run the same calls and report asynchronously.
const { B: bridgeB, scratchF64, giveBytes, takeBytes, fromScratch, toScratch, asU8, SCRATCH } = require('./internal/bridge.js');
const { uvException, fromBridge, codedError } = require('./internal/errors.js');
const P = require('./internal/primordials.js');
const loop = require('./internal/loop.js');
const constants = require('./internal/constants.js').fs;
const pathMod = require('./path.js');
const {
  validateInt32, validateInteger, validateBoolean, validateFunction, validateObject, validateAbortSignal,
  validateEncoding, parseFileMode, validateBuffer,
} = require('./internal/validators.js');

// B is the bridge; checkArgs swaps it for a while (see there).
let B = bridgeB;

function lazyBuffer() { return require('./buffer.js').Buffer; }

function sys(syscall, path, dest, fn) {
  try {
    return fn();
  } catch (e) {
    const err = fromBridge(e, syscall, path, dest);
    if (err instanceof Error && err.stack) Error.captureStackTrace(err, sys);
    throw err;
  }
}

function toPath(p, name = 'path') {
  if (typeof p === 'string') {
    if (p.includes('\u0000')) throw codedError('ERR_INVALID_ARG_VALUE', name, p, 'must be a string, Uint8Array, or URL without null bytes');
    return p;
  }
  if (p instanceof Uint8Array) return toPath(lazyBuffer().from(p).toString(), name);
  if (p && typeof p === 'object' && typeof p.href === 'string' && p.protocol !== undefined) {
    return require('./url.js').fileURLToPath(p);
  }
  throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type string or an instance of Buffer or URL', p);
}

// checkFd is Node's getValidatedFd: a descriptor is an int32 >= 0.
function checkFd(fd, name = 'fd') {
  validateInt32(fd, name, 0);
  return fd;
}

const flagMap = {
  r: 0, rs: 0, sr: 0, 'r+': 2, 'rs+': 2, 'sr+': 2,
  w: 0o1101, wx: 0o1301, xw: 0o1301, 'w+': 0o1102, 'wx+': 0o1302, 'xw+': 0o1302,
  a: 0o2101, ax: 0o2301, xa: 0o2301, as: 0o2101, sa: 0o2101, 'a+': 0o2102, 'ax+': 0o2302, 'xa+': 0o2302, 'as+': 0o2102, 'sa+': 0o2102,
};
function stringToFlags(flags, def = 'r') {
  if (flags === undefined || flags === null) flags = def;
  if (typeof flags === 'number') return flags;
  const f = Object.hasOwn(flagMap, flags) ? flagMap[flags] : undefined;
  if (f === undefined) throw codedError('ERR_INVALID_ARG_VALUE', 'flags', flags);
  return f;
}

function parseMode(mode, def, name = 'mode') {
  return parseFileMode(mode, name, def);
}

// getOptions is Node's: a string is the encoding; an unknown encoding or
// a signal that is not an AbortSignal is refused before any I/O.
function getOptions(options, def) {
  if (options === undefined || options === null || typeof options === 'function') return def;
  if (typeof options === 'string') options = { ...def, encoding: options };
  else if (typeof options !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'options', ['string', 'Object'], options);
  else options = { ...def, ...options };
  if (options.encoding !== 'buffer') validateEncoding(options.encoding);
  if (options.signal !== undefined) validateAbortSignal(options.signal, 'options.signal');
  return options;
}

function encode(buf, encoding) {
  if (!encoding || encoding === 'buffer') return buf;
  return buf.toString(encoding);
}

// --- Stats ---
const kNs = 1e6;
function dateFromMs(ms) { return new Date(ms); }
class StatsBase {
  isFile() { return (this.mode & constants.S_IFMT) === constants.S_IFREG; }
  isDirectory() { return (this.mode & constants.S_IFMT) === constants.S_IFDIR; }
  isSymbolicLink() { return (this.mode & constants.S_IFMT) === constants.S_IFLNK; }
  isFIFO() { return (this.mode & constants.S_IFMT) === constants.S_IFIFO; }
  isSocket() { return (this.mode & constants.S_IFMT) === constants.S_IFSOCK; }
  isCharacterDevice() { return (this.mode & constants.S_IFMT) === constants.S_IFCHR; }
  isBlockDevice() { return (this.mode & constants.S_IFMT) === constants.S_IFBLK; }
}
function Stats(dev, mode, nlink, uid, gid, rdev, blksize, ino, size, blocks, atimeMs, mtimeMs, ctimeMs, birthtimeMs) {
  this.dev = dev; this.mode = mode; this.nlink = nlink; this.uid = uid; this.gid = gid; this.rdev = rdev;
  this.blksize = blksize; this.ino = ino; this.size = size; this.blocks = blocks;
  this.atimeMs = atimeMs; this.mtimeMs = mtimeMs; this.ctimeMs = ctimeMs; this.birthtimeMs = birthtimeMs;
}
Object.setPrototypeOf(Stats.prototype, StatsBase.prototype);
for (const k of ['atime', 'mtime', 'ctime', 'birthtime']) {
  Object.defineProperty(Stats.prototype, k, {
    enumerable: true, configurable: true,
    get() { const d = dateFromMs(this[`${k}Ms`]); Object.defineProperty(this, k, { value: d, writable: true, enumerable: true, configurable: true }); return d; },
    set(v) { Object.defineProperty(this, k, { value: v, writable: true, enumerable: true, configurable: true }); },
  });
}
class BigIntStats extends StatsBase {}

function statsFromScratch(bigint) {
  const f = scratchF64;
  if (bigint) {
    const s = new BigIntStats();
    const names = ['dev', 'mode', 'nlink', 'uid', 'gid', 'rdev', 'blksize', 'ino', 'size', 'blocks'];
    names.forEach((n, i) => { s[n] = BigInt(f[i]); });
    for (const [i, n] of [[10, 'atime'], [11, 'mtime'], [12, 'ctime'], [13, 'birthtime']]) {
      s[`${n}Ms`] = BigInt(Math.floor(f[i]));
      s[`${n}Ns`] = BigInt(Math.floor(f[i])) * 1000000n + BigInt(Math.round((f[i] % 1) * kNs));
      s[n] = new Date(f[i]);
    }
    return s;
  }
  return new Stats(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13]);
}

function statSync(path, options = {}) {
  path = toPath(path);
  try {
    B.stat(path, true);
  } catch (e) {
    if (options.throwIfNoEntry === false && e === 'ENOENT') return undefined;
    throw fromBridge(e, 'stat', path);
  }
  return statsFromScratch(options.bigint);
}
function lstatSync(path, options = {}) {
  path = toPath(path);
  try {
    B.stat(path, false);
  } catch (e) {
    if (options.throwIfNoEntry === false && e === 'ENOENT') return undefined;
    throw fromBridge(e, 'lstat', path);
  }
  return statsFromScratch(options.bigint);
}
function fstatSync(fd, options = {}) {
  checkFd(fd);
  sys('fstat', undefined, undefined, () => B.fstat(fd));
  return statsFromScratch(options.bigint);
}

function existsSync(path) {
  try {
    path = toPath(path);
    B.access(path, 0);
    return true;
  } catch {
    return false;
  }
}

function accessSync(path, mode = constants.F_OK) {
  path = toPath(path);
  sys('access', path, undefined, () => B.access(path, mode));
}

// --- open/read/write ---
function openSync(path, flags, mode) {
  path = toPath(path);
  const f = stringToFlags(flags);
  const m = parseMode(mode, 0o666);
  return sys('open', path, undefined, () => B.open(path, f, m));
}
function closeSync(fd) {
  checkFd(fd);
  sys('close', undefined, undefined, () => B.close(fd));
}

// validatePosition is Node's: a position is an integer >= -1 (-1 and
// null: the file's offset) or a bigint that leaves room for length bytes.
function validatePosition(position, name, length) {
  if (typeof position === 'number') {
    validateInteger(position, name, -1);
  } else if (typeof position === 'bigint') {
    const max = 2n ** 63n - 1n - BigInt(length);
    if (!(position >= -1n && position <= max)) throw codedError('ERR_OUT_OF_RANGE', name, `>= -1 && <= ${max}`, position);
  } else {
    throw codedError('ERR_INVALID_ARG_TYPE', name, ['integer', 'bigint'], position);
  }
}

function validateOffsetLengthRead(offset, length, bufferLength) {
  if (offset < 0) throw codedError('ERR_OUT_OF_RANGE', 'offset', '>= 0', offset);
  if (length < 0) throw codedError('ERR_OUT_OF_RANGE', 'length', '>= 0', length);
  if (offset + length > bufferLength) throw codedError('ERR_OUT_OF_RANGE', 'length', `<= ${bufferLength - offset}`, length);
}

function validateOffsetLengthWrite(offset, length, byteLength) {
  if (offset > byteLength) throw codedError('ERR_OUT_OF_RANGE', 'offset', `<= ${byteLength}`, offset);
  if (length > byteLength - offset) throw codedError('ERR_OUT_OF_RANGE', 'length', `<= ${byteLength - offset}`, length);
  if (length < 0) throw codedError('ERR_OUT_OF_RANGE', 'length', '>= 0', length);
  validateInt32(length, 'length', 0);
}

// readArgs checks a read's offset, length and position as Node's
// fs.read and fs.readSync do; null length means nothing to read.
function readArgs(buffer, offset, length, position) {
  if (offset === undefined || offset === null) offset = 0;
  else validateInteger(offset, 'offset', 0);
  length |= 0;
  if (length === 0) return null;
  if (buffer.byteLength === 0) throw codedError('ERR_INVALID_ARG_VALUE', 'buffer', buffer, 'is empty and cannot be written');
  validateOffsetLengthRead(offset, length, buffer.byteLength);
  if (position === null || position === undefined) position = -1;
  else validatePosition(position, 'position', length);
  return { offset, length, position: Number(position) };
}

function readSync(fd, buffer, offsetOrOptions, length, position) {
  checkFd(fd);
  validateBuffer(buffer);
  let offset = offsetOrOptions;
  if (arguments.length <= 3 || typeof offsetOrOptions === 'object') {
    if (offsetOrOptions !== undefined) validateObject(offsetOrOptions, 'options', { nullable: true });
    ({ offset = 0, length = buffer.byteLength - offset, position = null } = offsetOrOptions ?? {});
  }
  const a = readArgs(buffer, offset, length, position);
  if (a === null) return 0;
  return readInto(fd, buffer, a.offset, a.length, a.position);
}

function readInto(fd, buffer, offset, length, pos) {
  const u8 = asU8(buffer);
  let total = 0;
  while (total < length) {
    const want = Math.min(SCRATCH, length - total);
    const n = sys('read', undefined, undefined, () => B.read(fd, want, pos));
    if (n === 0) break;
    fromScratch(n, u8, offset + total);
    total += n;
    if (pos >= 0) pos += n;
    if (n < want) break;
  }
  return total;
}

function writeBytes(fd, u8, pos) {
  let total = 0;
  while (total < u8.length) {
    const k = Math.min(SCRATCH, u8.length - total);
    toScratch(u8, total, k);
    const n = sys('write', undefined, undefined, () => B.writeScratch(fd, k, pos));
    total += n;
    if (pos >= 0) pos += n;
  }
  return total;
}

function writeSync(fd, buffer, offsetOrOptions, length, position) {
  checkFd(fd);
  if (ArrayBuffer.isView(buffer)) {
    let offset = offsetOrOptions;
    if (offsetOrOptions !== null && typeof offsetOrOptions === 'object') {
      ({ offset = 0, length = buffer.byteLength - offset, position = null } = offsetOrOptions);
    }
    if (offset === undefined || offset === null || typeof offset === 'function') offset = 0;
    else validateInteger(offset, 'offset', 0);
    if (typeof length !== 'number') length = buffer.byteLength - offset;
    validateOffsetLengthWrite(offset, length, buffer.byteLength);
    const u8 = asU8(buffer).subarray(offset, offset + length);
    return writeBytes(fd, u8, typeof position === 'number' ? position : -1);
  }
  if (typeof buffer !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'buffer', ['string', 'Buffer', 'TypedArray', 'DataView'], buffer);
  // The string form is (fd, string, position, encoding).
  const pos = typeof offsetOrOptions === 'number' ? offsetOrOptions : -1;
  const encoding = typeof length === 'string' ? length : 'utf8';
  validateDataEncoding(buffer, encoding);
  if ((encoding === 'utf8' || encoding === 'utf-8') && pos < 0) return sys('write', undefined, undefined, () => B.write(fd, buffer));
  return writeBytes(fd, lazyBuffer().from(buffer, encoding), pos);
}

// validateDataEncoding refuses hex of odd length, as Node's write does.
function validateDataEncoding(data, encoding) {
  if (typeof encoding === 'string' && encoding.toLowerCase() === 'hex' && data.length % 2 !== 0) {
    throw codedError('ERR_INVALID_ARG_VALUE', 'encoding', encoding, `is invalid for data of length ${data.length}`);
  }
}

function readAllFd(fd, isUserFd) {
  const Buffer = lazyBuffer();
  let size = 0;
  let regular = false;
  try {
    B.fstat(fd);
    regular = (scratchF64[1] & constants.S_IFMT) === constants.S_IFREG;
    if (regular) size = scratchF64[8];
  } catch { /* unknown size */ }
  if (size > 0x7fffffff) throw codedError('ERR_FS_FILE_TOO_LARGE', size);
  // Pipes and devices are read sequentially; regular files from the
  // start (or, for a descriptor the caller passed, from its offset).
  const pos = isUserFd || !regular ? -1 : 0;
  if (size > 0) {
    let buf = Buffer.allocUnsafe(size);
    let off = 0;
    let p = pos;
    while (off < size) {
      const want = Math.min(SCRATCH, size - off);
      const n = sys('read', undefined, undefined, () => B.read(fd, want, p));
      if (n === 0) break;
      fromScratch(n, buf, off);
      off += n;
      if (p >= 0) p += n;
    }
    if (off < size) buf = buf.subarray(0, off);
    // The file may have grown since fstat.
    const rest = readRest(fd, p);
    return rest.length ? Buffer.concat([buf, rest]) : buf;
  }
  return readRest(fd, pos);
}

function readRest(fd, pos) {
  const Buffer = lazyBuffer();
  const chunks = [];
  let total = 0;
  for (;;) {
    const n = sys('read', undefined, undefined, () => B.read(fd, SCRATCH, pos));
    if (n === 0) break;
    chunks.push(takeBytes(n, (k) => Buffer.allocUnsafe(k)));
    total += n;
    if (total > 0x7fffffff) throw codedError('ERR_FS_FILE_TOO_LARGE', total);
    if (pos >= 0) pos += n;
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

function readFileSync(path, options) {
  options = getOptions(options, { flag: 'r' });
  const isFd = typeof path === 'number';
  const fd = isFd ? checkFd(path) : openSync(path, options.flag, 0o666);
  try {
    return encode(readAllFd(fd, isFd), options.encoding);
  } finally {
    if (!isFd) closeSync(fd);
  }
}

function toBytes(data, encoding) {
  if (typeof data === 'string') return lazyBuffer().from(data, encoding || 'utf8');
  if (ArrayBuffer.isView(data)) return asU8(data);
  throw codedError('ERR_INVALID_ARG_TYPE', 'data', 'of type string or an instance of Buffer, TypedArray, or DataView', data);
}

function writeFileSync(path, data, options) {
  options = getOptions(options, { encoding: 'utf8', mode: 0o666, flag: 'w' });
  // Bad data is refused before the file is opened (and so created).
  if (!ArrayBuffer.isView(data) && typeof data !== 'string') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'data', ['string', 'Buffer', 'TypedArray', 'DataView'], data);
  }
  const isFd = typeof path === 'number';
  const fd = isFd ? checkFd(path) : openSync(path, options.flag, options.mode);
  try {
    if (typeof data === 'string' && (options.encoding === 'utf8' || options.encoding === 'utf-8')) {
      sys('write', undefined, undefined, () => B.write(fd, data));
    } else {
      writeBytes(fd, toBytes(data, options.encoding), -1);
    }
  } finally {
    if (!isFd) closeSync(fd);
  }
}

function appendFileSync(path, data, options) {
  options = getOptions(options, { encoding: 'utf8', mode: 0o666, flag: 'a' });
  writeFileSync(path, data, options);
}

// --- directories ---
class Dirent {
  constructor(name, type, parentPath) {
    this.name = name;
    this.parentPath = parentPath;
    this.path = parentPath;
    this[kType] = type;
  }
  isFile() { return this[kType] === 'f'; }
  isDirectory() { return this[kType] === 'd'; }
  isSymbolicLink() { return this[kType] === 'l'; }
  isFIFO() { return this[kType] === 'p'; }
  isSocket() { return this[kType] === 's'; }
  isCharacterDevice() { return this[kType] === 'c'; }
  isBlockDevice() { return this[kType] === 'b'; }
}
const kType = Symbol('type');

function readdirRaw(path) {
  const s = sys('scandir', path, undefined, () => B.readdir(path));
  if (s === '') return [];
  const out = [];
  for (const e of s.split('\u0000')) out.push([e.slice(1), e[0]]);
  out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return out;
}

function readdirSync(path, options) {
  options = getOptions(options, { encoding: 'utf8', withFileTypes: false, recursive: false });
  path = toPath(path);
  const result = [];
  const walk = (dir, prefix) => {
    for (const [name, type] of readdirRaw(dir)) {
      const rel = prefix ? `${prefix}/${name}` : name;
      if (options.withFileTypes) result.push(new Dirent(name, type, dir));
      else result.push(options.encoding === 'buffer' ? lazyBuffer().from(rel) : rel);
      if (options.recursive && type === 'd') walk(`${dir}/${name}`, rel);
    }
  };
  walk(path, '');
  return result;
}

function mkdirSync(path, options) {
  let mode = 0o777;
  let recursive = false;
  if (typeof options === 'number' || typeof options === 'string') mode = parseMode(options, 0o777);
  else if (options) {
    if (options.recursive !== undefined) recursive = options.recursive;
    if (options.mode !== undefined) mode = parseMode(options.mode, 0o777, 'options.mode');
  }
  path = toPath(path);
  validateBoolean(recursive, 'options.recursive');
  if (!recursive) {
    sys('mkdir', path, undefined, () => B.mkdir(path, mode));
    return undefined;
  }
  // Not normalised: "a/../b" makes a as well, as Node's mkdirp does.
  const abs = path.startsWith('/') ? path : `${process.cwd()}/${path}`;
  let first;
  const make = (p) => {
    try {
      B.mkdir(p, mode);
      if (first === undefined) first = p;
      return;
    } catch (e) {
      if (e === 'EEXIST') {
        let isDir = false;
        try { B.stat(p, true); isDir = (scratchF64[1] & constants.S_IFMT) === constants.S_IFDIR; } catch { /* */ }
        if (isDir) return;
        throw fromBridge(e, 'mkdir', path);
      }
      if (e !== 'ENOENT') throw fromBridge(e, 'mkdir', path);
    }
    const parent = pathMod.dirname(p);
    if (parent === p) throw fromBridge('ENOENT', 'mkdir', path);
    make(parent);
    try {
      B.mkdir(p, mode);
      if (first === undefined) first = p;
    } catch (e) {
      if (e !== 'EEXIST') throw fromBridge(e, 'mkdir', path);
    }
  };
  make(abs);
  return first;
}

let recursiveRmdirWarned = false;
function rmdirSync(path, options) {
  path = toPath(path);
  if (options !== undefined) validateObject(options, 'options');
  if (options && options.recursive) {
    if (!recursiveRmdirWarned) {
      recursiveRmdirWarned = true;
      process.emitWarning('In future versions of Node.js, fs.rmdir(path, { recursive: true }) will be removed. Use fs.rm(path, { recursive: true }) instead', 'DeprecationWarning', 'DEP0147');
    }
    // As Node: only a directory is removed recursively; anything else
    // gets rmdir's own error (ENOENT, ENOTDIR).
    if (lstatSync(path).isDirectory()) return rmSync(path, { recursive: true, force: false });
  }
  sys('rmdir', path, undefined, () => B.rmdir(path));
}

function rmSync(path, options = {}) {
  path = toPath(path);
  let st;
  try {
    B.stat(path, false);
    st = scratchF64[1];
  } catch (e) {
    if (e === 'ENOENT' && options.force) return;
    throw fromBridge(e, 'lstat', path);
  }
  if ((st & constants.S_IFMT) === constants.S_IFDIR) {
    if (!options.recursive) {
      const err = codedError('ERR_FS_EISDIR', path);
      err.errno = 21; err.syscall = 'rm'; err.path = path;
      err.info = { code: 'EISDIR', message: 'is a directory', path, syscall: 'rm', errno: 21 };
      throw err;
    }
    const rec = (dir, depth) => {
      if (depth > 4096) throw fromBridge('ELOOP', 'rm', dir);
      for (const [name, type] of readdirRaw(dir)) {
        const p = `${dir}/${name}`;
        if (type === 'd') rec(p, depth + 1);
        else sys('unlink', p, undefined, () => B.unlink(p));
      }
      sys('rmdir', dir, undefined, () => B.rmdir(dir));
    };
    rec(path, 0);
    return;
  }
  sys('unlink', path, undefined, () => B.unlink(path));
}

function unlinkSync(path) { path = toPath(path); sys('unlink', path, undefined, () => B.unlink(path)); }
function renameSync(a, b) { a = toPath(a, 'oldPath'); b = toPath(b, 'newPath'); sys('rename', a, b, () => B.rename(a, b)); }
function linkSync(a, b) { a = toPath(a, 'existingPath'); b = toPath(b, 'newPath'); sys('link', a, b, () => B.link(a, b)); }
function symlinkSync(target, path, type) {
  if (type != null && type !== 'dir' && type !== 'file' && type !== 'junction') throw codedError('ERR_FS_INVALID_SYMLINK_TYPE', type);
  target = toPath(target, 'target');
  path = toPath(path);
  sys('symlink', target, path, () => B.symlink(target, path));
}
function readlinkSync(path, options) {
  options = getOptions(options, { encoding: 'utf8' });
  path = toPath(path);
  const s = sys('readlink', path, undefined, () => B.readlink(path));
  return options.encoding === 'buffer' ? lazyBuffer().from(s) : s;
}
function realpathSync(path, options) {
  options = getOptions(options, { encoding: 'utf8' });
  path = toPath(path);
  const s = sys('lstat', path, undefined, () => B.realpath(path));
  return options.encoding === 'buffer' ? lazyBuffer().from(s) : s;
}
realpathSync.native = function realpathNative(path, options) {
  options = getOptions(options, { encoding: 'utf8' });
  path = toPath(path);
  const s = sys('realpath', path, undefined, () => B.realpath(path));
  return options.encoding === 'buffer' ? lazyBuffer().from(s) : s;
};
function chmodSync(path, mode) { path = toPath(path); mode = parseMode(mode); sys('chmod', path, undefined, () => B.chmod(path, mode, true)); }
function lchmodSync(path, mode) { path = toPath(path); mode = parseMode(mode); sys('lchmod', path, undefined, () => B.chmod(path, mode, false)); }
function fchmodSync(fd, mode) { checkFd(fd); mode = parseMode(mode); sys('fchmod', undefined, undefined, () => B.fchmod(fd, mode)); }
// Node takes -1 (leave as is) up to the largest 32-bit id.
const kMaxUserId = 2 ** 32 - 1;
function checkIds(uid, gid) {
  validateInteger(uid, 'uid', -1, kMaxUserId);
  validateInteger(gid, 'gid', -1, kMaxUserId);
}
function chownSync(path, uid, gid) { path = toPath(path); checkIds(uid, gid); sys('chown', path, undefined, () => B.chown(path, uid, gid, true)); }
function lchownSync(path, uid, gid) { path = toPath(path); checkIds(uid, gid); sys('lchown', path, undefined, () => B.chown(path, uid, gid, false)); }
function fchownSync(fd, uid, gid) { checkFd(fd); checkIds(uid, gid); sys('fchown', undefined, undefined, () => B.fchown(fd, uid, gid)); }
// toMs is Node's toUnixTimestamp in milliseconds: seconds as a number or
// numeric string (a negative time means now), or a Date.
function toMs(t, name = 'time') {
  if (typeof t === 'string' && +t == t) return +t * 1000;
  if (Number.isFinite(t)) return t < 0 ? Date.now() : t * 1000;
  if (t instanceof Date) return t.getTime();
  throw codedError('ERR_INVALID_ARG_TYPE', name, ['Date', 'Time in seconds'], t);
}
function utimesSync(path, atime, mtime) { path = toPath(path); const a = toMs(atime), m = toMs(mtime); sys('utime', path, undefined, () => B.utimes(path, a, m, true)); }
function lutimesSync(path, atime, mtime) { path = toPath(path); const a = toMs(atime), m = toMs(mtime); sys('lutime', path, undefined, () => B.utimes(path, a, m, false)); }
function futimesSync(fd, atime, mtime) { checkFd(fd); const a = toMs(atime, 'atime'), m = toMs(mtime, 'mtime'); sys('futime', undefined, undefined, () => B.futimes(fd, a, m)); }
let truncateFdWarned = false;
function truncateSync(path, len = 0) {
  if (typeof path === 'number') {
    if (!truncateFdWarned) {
      truncateFdWarned = true;
      process.emitWarning('Using fs.truncate with a file descriptor is deprecated. Please use fs.ftruncate with a file descriptor instead.', 'DeprecationWarning', 'DEP0081');
    }
    return ftruncateSync(path, len);
  }
  path = toPath(path);
  validateInteger(len, 'len');
  len = Math.max(0, len);
  sys('open', path, undefined, () => B.truncate(path, len));
}
function ftruncateSync(fd, len = 0) { checkFd(fd); validateInteger(len, 'len'); len = Math.max(0, len); sys('ftruncate', undefined, undefined, () => B.ftruncate(fd, len)); }
function fsyncSync(fd) { checkFd(fd); sys('fsync', undefined, undefined, () => B.fstat(fd)); }

function copyFileSync(src, dest, mode = 0) {
  src = toPath(src, 'src');
  dest = toPath(dest, 'dest');
  let data;
  try {
    data = readFileSync(src);
  } catch (e) {
    if (e.code) throw uvException(e.code, 'copyfile', src, dest);
    throw e;
  }
  const st = statSync(src);
  const flags = (mode & constants.COPYFILE_EXCL) ? 'wx' : 'w';
  let fd;
  try {
    fd = openSync(dest, flags, st.mode & 0o7777);
  } catch (e) {
    if (e.code) throw uvException(e.code, 'copyfile', src, dest);
    throw e;
  }
  try { writeBytes(fd, data, -1); } finally { closeSync(fd); }
}

function cpSync(src, dest, options = {}) {
  src = toPath(src, 'src');
  dest = toPath(dest, 'dest');
  const st = lstatSync(src);
  if (st.isDirectory()) {
    if (!options.recursive) {
      const e = new Error(`Recursive option is required to copy a directory: ${src}`);
      e.code = 'ERR_FS_EISDIR';
      throw e;
    }
    mkdirSync(dest, { recursive: true });
    for (const name of readdirSync(src)) {
      const s = `${src}/${name}`, d = `${dest}/${name}`;
      if (options.filter && !options.filter(s, d)) continue;
      cpSync(s, d, options);
    }
    return;
  }
  if (st.isSymbolicLink()) {
    if (options.force !== false) try { unlinkSync(dest); } catch { /* */ }
    symlinkSync(readlinkSync(src), dest);
    return;
  }
  if (options.errorOnExist && existsSync(dest)) throw uvException('EEXIST', 'cp', dest);
  if (options.force === false && existsSync(dest)) return;
  copyFileSync(src, dest);
}

function mkdtempSync(prefix, options) {
  options = getOptions(options, {});
  prefix = toPath(prefix, 'prefix');
  const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (let tries = 0; tries < 100; tries++) {
    B.random(6);
    let s = '';
    const r = fromScratch(6);
    for (let i = 0; i < 6; i++) s += chars[r[i] % chars.length];
    const p = prefix + s;
    try {
      B.mkdir(p, 0o700);
      return options.encoding === 'buffer' ? lazyBuffer().from(p) : p;
    } catch (e) {
      if (e !== 'EEXIST') throw fromBridge(e, 'mkdtemp', `${prefix}XXXXXX`);
    }
  }
  throw uvException('EEXIST', 'mkdtemp', `${prefix}XXXXXX`);
}

class Dir {
  #entries; #path; #i = 0; #closed = false; #pending = 0;
  constructor(path) {
    if (!path) throw codedError('ERR_MISSING_ARGS', 'handle');
    this.#path = path;
    this.#entries = readdirRaw(path);
  }
  get path() { return this.#path; }
  readSync() {
    if (this.#closed) throw codedError('ERR_DIR_CLOSED');
    if (this.#pending > 0) throw codedError('ERR_DIR_CONCURRENT_OPERATION');
    const e = this.#entries[this.#i++];
    return e ? new Dirent(e[0], e[1], this.#path) : null;
  }
  // read takes the entry now and reports it later, so a close() right
  // after the call does not lose it; meanwhile the synchronous calls
  // refuse, as in Node.
  read(cb) {
    if (cb !== undefined) validateFunction(cb, 'callback');
    let d, err;
    try { d = this.readSync(); } catch (e) { err = e; }
    this.#pending++;
    const p = Promise.resolve().then(() => {
      this.#pending--;
      if (err) throw err;
      return d;
    });
    if (cb) { p.then((x) => cb(null, x), cb); return undefined; }
    return p;
  }
  closeSync() {
    if (this.#closed) throw codedError('ERR_DIR_CLOSED');
    if (this.#pending > 0) throw codedError('ERR_DIR_CONCURRENT_OPERATION');
    this.#closed = true;
  }
  close(cb) {
    if (this.#pending > 0 && !this.#closed) {
      const p = Promise.resolve().then(() => this.close());
      if (typeof cb === 'function') { p.then(() => cb(null), cb); return undefined; }
      return p;
    }
    if (this.#closed) {
      const err = codedError('ERR_DIR_CLOSED');
      if (typeof cb === 'function') { process.nextTick(cb, err); return undefined; }
      return Promise.reject(err);
    }
    this.#closed = true;
    if (typeof cb === 'function') process.nextTick(cb, null);
    else return Promise.resolve();
    return undefined;
  }
  // Leaving the loop early, or by an exception, closes the directory too.
  async *[Symbol.asyncIterator]() {
    try {
      let d;
      while ((d = this.readSync()) !== null) yield d;
    } finally {
      if (!this.#closed) this.closeSync();
    }
  }
  *[Symbol.iterator]() {
    try {
      let d;
      while ((d = this.readSync()) !== null) yield d;
    } finally {
      if (!this.#closed) this.closeSync();
    }
  }
}
function opendirSync(path, options) {
  path = toPath(path);
  options = getOptions(options, { encoding: 'utf8' });
  validateInteger(options.bufferSize === undefined ? 32 : options.bufferSize, 'options.bufferSize', 1, 4294967295);
  return new Dir(path);
}

// readvSync and writevSync are one kernel call each
// (kernel.Process.Readv/Writev), the vectored I/O WASI's fd_read and
// fd_write use too: a readv of a pipe returns what was there instead of
// blocking for the next buffer, and a writev stops at a short write.
function iovLengths(buffers) {
  if (!Array.isArray(buffers)) throw codedError('ERR_INVALID_ARG_TYPE', 'buffers', 'an instance of ArrayBufferView[]', buffers);
  const lens = [];
  for (const b of buffers) {
    if (!ArrayBuffer.isView(b)) throw codedError('ERR_INVALID_ARG_TYPE', 'buffers', 'an instance of ArrayBufferView[]', buffers);
    lens.push(b.byteLength);
  }
  return lens;
}
function iovPosition(position) {
  return (position === undefined || position === null || position === -1) ? -1 : Number(position);
}
function readvSync(fd, buffers, position) {
  checkFd(fd);
  const lens = iovLengths(buffers);
  const pos = iovPosition(position);
  const got = takeBytes(sys('read', undefined, undefined, () => B.readv(fd, lens.join(','), pos)));
  let off = 0;
  for (const b of buffers) {
    if (off >= got.length) break;
    const k = Math.min(b.byteLength, got.length - off);
    asU8(b).set(got.subarray(off, off + k), 0);
    off += k;
  }
  return got.length;
}
function writevSync(fd, buffers, position) {
  checkFd(fd);
  const lens = iovLengths(buffers);
  const pos = iovPosition(position);
  const all = new Uint8Array(lens.reduce((a, n) => a + n, 0));
  let off = 0;
  for (const b of buffers) { all.set(asU8(b), off); off += b.byteLength; }
  const n = giveBytes(all);
  return sys('write', undefined, undefined, () => B.writev(fd, lens.join(','), n, pos));
}
class StatFs {
  constructor(type, bsize, blocks, bfree, bavail, files, ffree) {
    this.type = type; this.bsize = bsize; this.blocks = blocks; this.bfree = bfree;
    this.bavail = bavail; this.files = files; this.ffree = ffree;
  }
}
// statfsSync asks the kernel (Process.Statfs), as WASI's path_statfs does,
// so node and df report the same filesystem.
function statfsSync(path, options = {}) {
  path = toPath(path);
  try { B.statfs(path); } catch (e) { throw fromBridge(e, 'statfs', path); }
  const f = scratchF64;
  const v = [f[0], f[1], f[2], f[3], f[4], f[5], f[6]];
  return new StatFs(...(options && options.bigint ? v.map((x) => BigInt(x)) : v));
}

const syncAPI = {
  accessSync, appendFileSync, chmodSync, chownSync, closeSync, copyFileSync, cpSync, existsSync,
  fchmodSync, fchownSync, fdatasyncSync: fsyncSync, fstatSync, fsyncSync, ftruncateSync, futimesSync,
  lchmodSync, lchownSync, linkSync, lstatSync, lutimesSync, mkdirSync, mkdtempSync, openSync, opendirSync,
  readSync, readdirSync, readFileSync, readlinkSync, realpathSync, readvSync, renameSync, rmdirSync, rmSync,
  statSync, statfsSync, symlinkSync, truncateSync, unlinkSync, utimesSync, writeFileSync, writeSync, writevSync,
};

// --- callback API: the same calls, reported on the next tick ---

// Node checks a call's other arguments before its callback, so a call
// without a callback reports a bad path or mode first. checkArgs runs the
// synchronous form with a bridge whose every call stops it (kDry): the
// argument checks run, no system call does.
// dryB is built when this module loads, with primordials captured before
// any guest code: built on first use with the live Object.keys, it handed
// the bridge itself to a guest that had replaced Object.keys
// (TestSecurity/bridgeViaFsCheckArgs).
const kDry = P.ObjectFreeze(P.ObjectCreate(null));
const dryB = P.ObjectCreate(null);
{
  const keys = P.ObjectKeys(bridgeB);
  const stop = () => { throw kDry; };
  for (let i = 0; i < keys.length; i++) dryB[keys[i]] = stop;
}
function checkArgs(fn, args) {
  B = dryB;
  try {
    fn(...args);
  } catch (e) {
    if (e !== kDry && e && argumentErrors.has(e.code)) throw e;
  } finally {
    B = bridgeB;
  }
}
const argumentErrors = new Set([
  'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_OUT_OF_RANGE', 'ERR_MISSING_ARGS', 'ERR_UNKNOWN_ENCODING',
  'ERR_INVALID_URL_SCHEME', 'ERR_INVALID_FILE_URL_PATH', 'ERR_INVALID_FILE_URL_HOST', 'ERR_FS_INVALID_SYMLINK_TYPE',
]);
const fs = { ...syncAPI };
// arity is where the callback goes when the synchronous form's length
// does not say (its last parameters have defaults).
const arity = { stat: 2, lstat: 2, fstat: 2, access: 2, truncate: 2, ftruncate: 2, copyFile: 3, cp: 3, rm: 2, statfs: 2 };
// signalOf is options.signal of a writeFile or appendFile call.
function signalOf(base, args) {
  if (base !== 'writeFile' && base !== 'appendFile') return undefined;
  const o = args[2];
  return o !== null && typeof o === 'object' && o.signal !== undefined ? o.signal : undefined;
}
const resultCount = { read: 2, write: 2, readv: 2, writev: 2 };
for (const [name, fn] of Object.entries(syncAPI)) {
  if (name === 'existsSync') continue;
  const base = name.slice(0, -4);
  fs[base] = function (...args) {
    // The callback is the last argument; without one Node names what
    // stands where the callback goes (undefined when it is missing).
    const cb = typeof args[args.length - 1] === 'function' ? args.pop() : args[arity[base] ?? fn.length];
    if (typeof cb !== 'function') {
      checkArgs(fn, args);
      throw codedError('ERR_INVALID_ARG_TYPE', base === 'opendir' ? 'callback' : 'cb', 'of type function', cb);
    }
    // With a signal the work waits a tick, so an abort right after the
    // call cancels it before it starts, as in Node.
    const signal = signalOf(base, args);
    if (signal) {
      checkArgs(fn, args);
      process.nextTick(() => {
        if (signal.aborted) {
          cb(require('./timers.js').abortError(signal));
          return;
        }
        let r, e = null;
        try { r = fn(...args); } catch (x) { e = x; }
        if (e) cb(e);
        else cb(null);
      });
      return;
    }
    let res, err = null;
    try { res = fn(...args); } catch (e) { err = e; }
    // A bad argument throws at the call, as in Node; what the system
    // call reports goes to the callback.
    if (err && argumentErrors.has(err.code)) throw err;
    // The callback is an FSREQCALLBACK to async_hooks, as in Node.
    if (resultCount[base] === 2 && !err) loop.callbackAs('FSREQCALLBACK', cb, null, res, args[1]);
    else if (err) loop.callbackAs('FSREQCALLBACK', cb, err);
    // A call that returns nothing calls back with the error alone, as
    // Node's do (tests count the arguments).
    else if (res === undefined) loop.callbackAs('FSREQCALLBACK', cb, null);
    else loop.callbackAs('FSREQCALLBACK', cb, null, res);
  };
  Object.defineProperty(fs[base], 'name', { value: base });
}
// fs.read on a pipe, socket or terminal waits for its data on a
// goroutine (internal/reader.js), not on the loop's thread: a program
// that reads its stdin so (esbuild-wasm's service, any Go WebAssembly
// program) keeps its timers and other I/O running meanwhile, as in Node.
// Regular files, and reads at a position, are read at once.
fs.read = function read(fd, buffer, offsetOrOptions, length, position, callback) {
  checkFd(fd);
  let offset = offsetOrOptions;
  let params = null;
  // The argument forms are Node's: (fd, cb), (fd, params, cb),
  // (fd, buffer, cb), (fd, buffer, params, cb) and the positional one.
  if (arguments.length <= 4) {
    if (arguments.length === 4) {
      validateObject(offsetOrOptions, 'options', { nullable: true });
      callback = length;
      params = offsetOrOptions;
    } else if (arguments.length === 3) {
      if (!ArrayBuffer.isView(buffer)) {
        params = buffer;
        ({ buffer = lazyBuffer().alloc(16384) } = params ?? {});
      }
      callback = offsetOrOptions;
    } else {
      callback = buffer;
      buffer = lazyBuffer().alloc(16384);
    }
    if (params !== undefined) validateObject(params, 'options', { nullable: true });
    ({ offset = 0, length = buffer?.byteLength - offset, position = null } = params ?? {});
  }
  validateBuffer(buffer);
  validateFunction(callback, 'cb');
  const a = readArgs(buffer, offset, length, position);
  if (a === null) {
    process.nextTick(callback, null, 0, buffer);
    return;
  }
  if (a.position >= 0 || !mayBlock(fd)) {
    let n;
    try {
      n = readInto(fd, buffer, a.offset, a.length, a.position);
    } catch (e) {
      process.nextTick(callback, e);
      return;
    }
    process.nextTick(callback, null, n, buffer);
    return;
  }
  const u8 = asU8(buffer);
  require('./internal/reader.js').readOnce(fd, a.length, (err, chunk) => {
    if (err) {
      callback(err);
      return;
    }
    const n = chunk ? chunk.length : 0;
    if (n > 0) u8.set(chunk, a.offset);
    callback(null, n, buffer);
  });
};

function mayBlock(fd) {
  let st;
  try { st = fstatSync(fd); } catch { return false; }
  return st.isFIFO() || st.isSocket() || st.isCharacterDevice();
}

fs.exists = function exists(path, cb) { const r = existsSync(path); process.nextTick(cb, r); };
fs.realpath.native = (p, o, cb) => { if (typeof o === 'function') { cb = o; o = undefined; } let r, e = null; try { r = realpathSync.native(p, o); } catch (x) { e = x; } process.nextTick(cb, e, r); };
// util.promisify(fs.read) resolves to { bytesRead, buffer }, as Node's.
fs.read[Symbol.for('nodejs.util.promisify.custom')] = (...a) => new Promise((res, rej) => fs.read(...a, (e, bytesRead, buffer) => (e ? rej(e) : res({ bytesRead, buffer }))));
fs.write[Symbol.for('nodejs.util.promisify.custom')] = (...a) => new Promise((res, rej) => fs.write(...a, (e, bytesWritten, buffer) => (e ? rej(e) : res({ bytesWritten, buffer }))));
fs.exists[Symbol.for('nodejs.util.promisify.custom')] = (p) => Promise.resolve(existsSync(p));

// --- promises API ---
class FileHandle extends require('./events.js') {
  #fd;
  constructor(fd) { super(); this.#fd = fd; }
  get fd() { return this.#fd; }
  async read(buffer, offset, length, position) {
    if (buffer === undefined || (buffer !== null && !ArrayBuffer.isView(buffer) && typeof buffer === 'object')) {
      const o = buffer || {};
      buffer = o.buffer || lazyBuffer().alloc(16384);
      offset = o.offset || 0; length = o.length ?? buffer.byteLength - offset; position = o.position ?? null;
    }
    const bytesRead = readSync(this.#fd, buffer, offset ?? 0, length ?? buffer.byteLength - (offset ?? 0), position ?? null);
    return { bytesRead, buffer };
  }
  async write(data, ...rest) {
    const bytesWritten = writeSync(this.#fd, data, ...rest);
    return { bytesWritten, buffer: data };
  }
  readFile(options) { return promises.readFile(this.#fd, options); }
  async writeFile(data, options) { return writeFileSync(this.#fd, data, options); }
  async appendFile(data, options) { return writeFileSync(this.#fd, data, options); }
  async stat(options) { return fstatSync(this.#fd, options); }
  async truncate(len) { return ftruncateSync(this.#fd, len); }
  async chmod(mode) { return fchmodSync(this.#fd, mode); }
  async chown(u, g) { return fchownSync(this.#fd, u, g); }
  async utimes(a, m) { return futimesSync(this.#fd, a, m); }
  async sync() {}
  async datasync() {}
  async readv(b, p) { return { bytesRead: readvSync(this.#fd, b, p), buffers: b }; }
  async writev(b, p) { return { bytesWritten: writevSync(this.#fd, b, p), buffers: b }; }
  async close() {
    if (this.#fd >= 0) {
      const fd = this.#fd;
      this.#fd = -1;
      closeSync(fd);
      this.emit('close');
    }
  }
  async *readLines() {
    const rl = require('./readline.js').createInterface({ input: this.createReadStream() });
    for await (const l of rl) yield l;
  }
  createReadStream(o = {}) { return createReadStream(null, { ...o, fd: this }); }
  createWriteStream(o = {}) { return createWriteStream(null, { ...o, fd: this }); }
  [Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose')]() { return this.close(); }
}

// Reading a pipe, a terminal or another stream to its end waits on
// whoever writes it: the callback and promise forms of readFile do that
// through the loop's asynchronous reader, so timers and other events keep
// running meanwhile, as in Node. Files are read at once.
function isStreamFd(fd) {
  B.fstat(fd);
  const type = scratchF64[1] & constants.S_IFMT;
  return type === constants.S_IFIFO || type === constants.S_IFCHR || type === constants.S_IFSOCK;
}

function readFileAsync(path, options, cb) {
  let fd;
  const isFd = typeof path === 'number';
  const closeOwn = () => { if (!isFd && fd !== undefined) { try { closeSync(fd); } catch { /* already closed */ } } };
  // Bad arguments throw at the call, as in Node.
  const opts = getOptions(options, { flag: 'r' });
  if (isFd) checkFd(path);
  else path = toPath(path);
  try {
    fd = isFd ? path : openSync(path, opts.flag, 0o666);
    if (!isStreamFd(fd)) {
      const out = encode(readAllFd(fd, isFd), opts.encoding);
      closeOwn();
      process.nextTick(cb, null, out);
      return;
    }
  } catch (e) {
    closeOwn();
    process.nextTick(cb, e);
    return;
  }
  const chunks = [];
  let total = 0;
  const reader = require('./internal/reader.js');
  const h = reader.start(fd, (chunk) => {
    if (chunk !== null) {
      total += chunk.length;
      if (total > 0x7fffffff) {
        reader.stop(h);
        closeOwn();
        cb(codedError('ERR_FS_FILE_TOO_LARGE', total));
        return;
      }
      chunks.push(chunk);
      return;
    }
    closeOwn();
    let out;
    try {
      out = encode(lazyBuffer().concat(chunks, total), opts.encoding);
    } catch (e) {
      cb(e);
      return;
    }
    cb(null, out);
  }, (err) => {
    closeOwn();
    cb(err);
  });
}

fs.readFile = function readFile(path, options, cb) {
  if (typeof options === 'function') { cb = options; options = undefined; }
  if (typeof cb !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'cb', 'of type function', cb);
  const signal = options !== null && typeof options === 'object' ? options.signal : undefined;
  if (signal !== undefined) {
    getOptions(options, {});
    process.nextTick(() => {
      if (signal.aborted) cb(require('./timers.js').abortError(signal));
      else readFileAsync(path, options, cb);
    });
    return;
  }
  readFileAsync(path, options, cb);
};

const promises = {};
for (const [name, fn] of Object.entries(syncAPI)) {
  if (['existsSync', 'closeSync', 'openSync', 'readSync', 'writeSync', 'fstatSync', 'fsyncSync', 'fdatasyncSync', 'ftruncateSync', 'futimesSync', 'fchmodSync', 'fchownSync', 'readvSync', 'writevSync', 'opendirSync'].includes(name)) continue;
  const base = name.slice(0, -4);
  promises[base] = async function (...args) {
    if (base === 'readFile' || base === 'writeFile' || base === 'appendFile') {
      if (args[0] instanceof FileHandle) args[0] = args[0].fd;
    }
    return fn(...args);
  };
  Object.defineProperty(promises[base], 'name', { value: base });
}
promises.readFile = function readFile(path, options) {
  if (path instanceof FileHandle) path = path.fd;
  return new Promise((resolve, reject) => readFileAsync(path, options, (err, out) => (err ? reject(err) : resolve(out))));
};
promises.open = async (path, flags, mode) => new FileHandle(openSync(path, flags, mode));
promises.opendir = async (path) => opendirSync(path);
promises.constants = constants;
promises.watch = function watch(filename, options) { return require('./internal/fs_watch.js').watchAsync(filename, options); };

// --- streams: internal/fs_streams.js ---
function createReadStream(path, options) {
  return new (require('./internal/fs_streams.js').ReadStream)(path, options);
}
function createWriteStream(path, options) {
  return new (require('./internal/fs_streams.js').WriteStream)(path, options);
}

Object.assign(fs, {
  constants, promises, Stats, Dirent, Dir, createReadStream, createWriteStream,
  watch: function watch(filename, options, listener) { return require('./internal/fs_watch.js').watch(filename, options, listener); },
  watchFile: function watchFile(filename, options, listener) { return require('./internal/fs_watch.js').watchFile(filename, options, listener); },
  unwatchFile: function unwatchFile(filename, listener) { return require('./internal/fs_watch.js').unwatchFile(filename, listener); },
  F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
  openAsBlob: async (p) => new (require('./internal/web.js').Blob)([readFileSync(p)]),
  _toPath: toPath,
  _internals: { getOptions, FileHandle },
  _readAllFd: readAllFd,
});
void takeBytes; void giveBytes;
// ReadStream and WriteStream load with their first use: a program may
// replace them (graceful-fs does), so they are plain properties.
for (const name of ['ReadStream', 'WriteStream', 'FileReadStream', 'FileWriteStream']) {
  let value;
  Object.defineProperty(fs, name, {
    get() { return value ?? require('./internal/fs_streams.js')[name.replace('File', '')]; },
    set(v) { value = v; },
    enumerable: true, configurable: true,
  });
}
module.exports = fs;
