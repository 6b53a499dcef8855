'use strict';
// buffer: the npm polyfill, with Node's extras.
const mod = require('buffer/');
const { Buffer } = mod;
const enc = require('./internal/encoding.js');
const types = require('./internal/types.js');
const kMaxLength = mod.kMaxLength;
const { codedError } = require('./internal/errors.js');

// base64url (Node 15+) is base64 with the URL alphabet and no padding;
// the polyfill's decoder already accepts that alphabet.
const isB64url = (e) => typeof e === 'string' && e.toLowerCase() === 'base64url';
const b64ToUrl = (s) => s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

// The encodings Buffer#toString knows, by each spelling Node accepts.
const encodingNames = {
  utf8: 'utf8', 'utf-8': 'utf8', ucs2: 'utf16le', 'ucs-2': 'utf16le', utf16le: 'utf16le', 'utf-16le': 'utf16le',
  latin1: 'latin1', binary: 'latin1', base64: 'base64', base64url: 'base64url', hex: 'hex', ascii: 'ascii',
};

// toString is Node's: start and end clamped first (an empty range is ''
// whatever the encoding), then an unknown encoding is
// ERR_UNKNOWN_ENCODING. UTF-8 is decoded in Go, as V8 does (one U+FFFD
// per maximal subpart of an ill-formed sequence; the polyfill's decoder
// differs), and fast for large buffers.
const origToString = Buffer.prototype.toString;
Buffer.prototype.toString = function toString(encoding, start, end) {
  if (arguments.length === 0) return enc.utf8Decode(this);
  const len = this.length;
  if (start <= 0) start = 0;
  else if (start >= len) return '';
  else start = Math.trunc(start) || 0;
  if (end === undefined || end > len) end = len;
  else end = Math.trunc(end) || 0;
  if (end <= start) return '';
  let name = 'utf8';
  if (encoding !== undefined) {
    const spelled = `${encoding}`;
    name = encodingNames[spelled] ?? encodingNames[spelled.toLowerCase()];
    if (name === undefined) throw codedError('ERR_UNKNOWN_ENCODING', encoding);
  }
  if (name === 'utf8') return enc.utf8Decode(start === 0 && end === len ? this : this.subarray(start, end));
  if (name === 'base64url') return b64ToUrl(Reflect.apply(origToString, this, ['base64', start, end]));
  return Reflect.apply(origToString, this, [name, start, end]);
};
const origWrite = Buffer.prototype.write;
Buffer.prototype.write = function write(string, ...rest) {
  for (let i = 0; i < rest.length; i++) if (isB64url(rest[i])) rest[i] = 'base64';
  return Reflect.apply(origWrite, this, [string, ...rest]);
};
const origFrom = Buffer.from;
const fromArgs = ['string', 'Buffer', 'ArrayBuffer', 'Array', 'Array-like Object'];
// Buffer.from takes what Node's takes, in Node's order (an object's
// valueOf, then array-likes, then Symbol.toPrimitive); the polyfill
// converts.
Buffer.from = function from(value, enc, len) {
  if (isB64url(enc)) enc = 'base64';
  if (typeof value === 'string') return Reflect.apply(origFrom, this, [value, enc, len]);
  if (typeof value === 'object' && value !== null) {
    if (types.isAnyArrayBuffer(value)) return Reflect.apply(origFrom, this, [value, enc, len]);
    const prim = typeof value.valueOf === 'function' ? value.valueOf() : undefined;
    if (prim != null && prim !== value && (typeof prim === 'string' || typeof prim === 'object')) return from(prim, enc, len);
    if (value.length !== undefined || types.isAnyArrayBuffer(value.buffer)) {
      if (typeof value.length !== 'number') return Buffer.alloc(0);
      return Reflect.apply(origFrom, this, [value]);
    }
    if (value.type === 'Buffer' && Array.isArray(value.data)) return Reflect.apply(origFrom, this, [value.data]);
    if (typeof value[Symbol.toPrimitive] === 'function') {
      const str = value[Symbol.toPrimitive]('string');
      if (typeof str === 'string') return Reflect.apply(origFrom, this, [str, enc]);
    }
  }
  throw codedError('ERR_INVALID_ARG_TYPE', 'first argument', fromArgs, value);
};

// checkSize is Node's check of a size to allocate.
function checkSize(size) {
  if (typeof size !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'size', 'of type number', size);
  if (!(size >= 0 && size <= kMaxLength)) throw codedError('ERR_OUT_OF_RANGE', 'size', `>= 0 && <= ${kMaxLength}`, size);
}
for (const name of ['alloc', 'allocUnsafe', 'allocUnsafeSlow']) {
  const orig = Buffer[name];
  Buffer[name] = { [name](size, ...rest) {
    checkSize(size);
    return Reflect.apply(orig, this, [size, ...rest]);
  } }[name];
}
const origByteLength = Buffer.byteLength;
Buffer.byteLength = function byteLength(s, enc) {
  if (typeof s !== 'string') {
    if (ArrayBuffer.isView(s) || types.isAnyArrayBuffer(s)) return s.byteLength;
    throw codedError('ERR_INVALID_ARG_TYPE', 'string', ['string', 'Buffer', 'ArrayBuffer'], s);
  }
  return origByteLength(s, isB64url(enc) ? 'base64' : enc);
};

// Node's argument checks for comparing and joining buffers: any
// Uint8Array is accepted, anything else is ERR_INVALID_ARG_TYPE.
function checkBytes(v, name) {
  if (!types.isUint8Array(v)) throw codedError('ERR_INVALID_ARG_TYPE', name, ['Buffer', 'Uint8Array'], v);
}

function checkOffset(v, name, max) {
  if (typeof v !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', v);
  if (!Number.isInteger(v)) throw codedError('ERR_OUT_OF_RANGE', name, 'an integer', v);
  if (v < 0 || v > max) throw codedError('ERR_OUT_OF_RANGE', name, `>= 0 && <= ${max}`, v);
}

// compareBytes orders a[as:ae] against b[bs:be] as memcmp and then the
// lengths do.
function compareBytes(a, b, as, ae, bs, be) {
  const n = Math.min(ae - as, be - bs);
  for (let i = 0; i < n; i++) {
    if (a[as + i] !== b[bs + i]) return a[as + i] < b[bs + i] ? -1 : 1;
  }
  const la = ae - as;
  const lb = be - bs;
  return la === lb ? 0 : la < lb ? -1 : 1;
}

Buffer.compare = function compare(buf1, buf2) {
  checkBytes(buf1, 'buf1');
  checkBytes(buf2, 'buf2');
  return compareBytes(buf1, buf2, 0, buf1.length, 0, buf2.length);
};

Buffer.prototype.equals = function equals(otherBuffer) {
  checkBytes(otherBuffer, 'otherBuffer');
  if (this === otherBuffer) return true;
  if (this.byteLength !== otherBuffer.byteLength) return false;
  return compareBytes(this, otherBuffer, 0, this.length, 0, otherBuffer.length) === 0;
};

Buffer.prototype.compare = function compare(target, targetStart, targetEnd, sourceStart, sourceEnd) {
  checkBytes(target, 'target');
  if (arguments.length === 1) return compareBytes(this, target, 0, this.length, 0, target.length);
  if (targetStart === undefined) targetStart = 0;
  else checkOffset(targetStart, 'targetStart', kMaxLength);
  if (targetEnd === undefined) targetEnd = target.length;
  else checkOffset(targetEnd, 'targetEnd', target.length);
  if (sourceStart === undefined) sourceStart = 0;
  else checkOffset(sourceStart, 'sourceStart', kMaxLength);
  if (sourceEnd === undefined) sourceEnd = this.length;
  else checkOffset(sourceEnd, 'sourceEnd', this.length);
  if (sourceStart >= sourceEnd) return targetStart >= targetEnd ? 0 : -1;
  if (targetStart >= targetEnd) return 1;
  if (sourceStart > this.length) throw rangeError('The value of "sourceStart" is out of range.');
  if (targetStart > target.length) throw rangeError('The value of "targetStart" is out of range.');
  return compareBytes(this, target, sourceStart, sourceEnd, targetStart, targetEnd);
};

function rangeError(message) {
  const err = new RangeError(message);
  err.code = 'ERR_OUT_OF_RANGE';
  return err;
}

// toInteger is Node's loose integer conversion of copy's positions.
function toInteger(n, dflt) {
  n = +n;
  if (!Number.isNaN(n) && n >= Number.MIN_SAFE_INTEGER && n <= Number.MAX_SAFE_INTEGER) return n % 1 === 0 ? n : Math.floor(n);
  return dflt;
}

// copy is Node's: positions checked (ERR_OUT_OF_RANGE), the copy cut to
// what fits, the number of bytes copied returned.
Buffer.prototype.copy = function copy(target, targetStart, sourceStart, sourceEnd) {
  checkBytes(this, 'source');
  checkBytes(target, 'target');
  if (targetStart === undefined) targetStart = 0;
  else {
    targetStart = Number.isInteger(targetStart) ? targetStart : toInteger(targetStart, 0);
    if (targetStart < 0) throw codedError('ERR_OUT_OF_RANGE', 'targetStart', '>= 0', targetStart);
  }
  if (sourceStart === undefined) sourceStart = 0;
  else {
    sourceStart = Number.isInteger(sourceStart) ? sourceStart : toInteger(sourceStart, 0);
    if (sourceStart < 0 || sourceStart > this.byteLength) {
      throw codedError('ERR_OUT_OF_RANGE', 'sourceStart', `>= 0 && <= ${this.byteLength}`, sourceStart);
    }
  }
  if (sourceEnd === undefined) sourceEnd = this.byteLength;
  else {
    sourceEnd = Number.isInteger(sourceEnd) ? sourceEnd : toInteger(sourceEnd, 0);
    if (sourceEnd < 0) throw codedError('ERR_OUT_OF_RANGE', 'sourceEnd', '>= 0', sourceEnd);
  }
  if (targetStart >= target.byteLength || sourceStart >= sourceEnd) return 0;
  const n = Math.min(sourceEnd - sourceStart, target.byteLength - targetStart, this.byteLength - sourceStart);
  if (n <= 0) return 0;
  Uint8Array.prototype.set.call(target, this.subarray(sourceStart, sourceStart + n), targetStart);
  return n;
};

const origConcat = Buffer.concat;
Buffer.concat = function concat(list, length) {
  if (!Array.isArray(list)) throw codedError('ERR_INVALID_ARG_TYPE', 'list', ['Array'], list);
  for (let i = 0; i < list.length; i++) checkBytes(list[i], `list[${i}]`);
  if (length !== undefined) checkOffset(length, 'length', kMaxLength);
  return Reflect.apply(origConcat, this, [list, length]);
};
const origIsEncoding = Buffer.isEncoding;
Buffer.isEncoding = function isEncoding(enc) { return isB64url(enc) || origIsEncoding(enc); };

require('./internal/buffer_rw.js').install(Buffer.prototype);

function validateInteger(value, name, min = 0, max = Number.MAX_SAFE_INTEGER) {
  if (typeof value !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', value);
  if (!Number.isInteger(value)) throw codedError('ERR_OUT_OF_RANGE', name, 'an integer', value);
  if (value < min || value > max) throw codedError('ERR_OUT_OF_RANGE', name, `>= ${min} && <= ${max}`, value);
}

// copyBytesFrom copies a TypedArray's bytes (a range of its elements)
// into a new Buffer, as Node 19.8+.
Buffer.copyBytesFrom = function copyBytesFrom(view, offset, length) {
  if (!types.isTypedArray(view)) throw codedError('ERR_INVALID_ARG_TYPE', 'view', ['TypedArray'], view);
  const n = view.length;
  if (n === 0) return Buffer.alloc(0);
  if (offset !== undefined || length !== undefined) {
    if (offset !== undefined) {
      validateInteger(offset, 'offset');
      if (offset >= n) return Buffer.alloc(0);
    } else {
      offset = 0;
    }
    let end = n;
    if (length !== undefined) {
      validateInteger(length, 'length');
      end = offset + length;
    }
    view = view.slice(offset, end);
  }
  return Buffer.from(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
};

// validatedBytes is the input of isAscii/isUtf8 as bytes: a TypedArray
// or an ArrayBuffer, not detached.
function validatedBytes(input) {
  let ab;
  if (types.isTypedArray(input)) ab = input.buffer;
  else if (types.isAnyArrayBuffer(input)) ab = input;
  else throw codedError('ERR_INVALID_ARG_TYPE', 'input', ['ArrayBuffer', 'Buffer', 'TypedArray'], input);
  if (ab.detached) {
    const err = new Error('Cannot validate on a detached buffer');
    err.code = 'ERR_INVALID_STATE';
    throw err;
  }
  return ab === input ? new Uint8Array(ab) : new Uint8Array(ab, input.byteOffset, input.byteLength);
}

// Buffer's inspect, as Node shows it: at most INSPECT_MAX_BYTES bytes,
// how many more, then the buffer's own non-index properties.
let inspectMaxBytes = 50;
const isIndexKey = (k, n) => typeof k === 'string' && /^(0|[1-9][0-9]*)$/.test(k) && Number(k) < n;
function inspectBuffer(recurseTimes, ctx) {
  const shown = Math.min(inspectMaxBytes, this.length);
  const remaining = this.length - inspectMaxBytes;
  const hex = [];
  for (let i = 0; i < shown; i++) hex.push((this[i] < 16 ? '0' : '') + this[i].toString(16));
  let str = hex.join(' ');
  if (remaining > 0) str += ` ... ${remaining} more byte${remaining > 1 ? 's' : ''}`;
  if (ctx) {
    const extra = { __proto__: null };
    let any = false;
    for (const key of Reflect.ownKeys(this)) {
      if (isIndexKey(key, this.length)) continue;
      if (!ctx.showHidden && !Object.getOwnPropertyDescriptor(this, key).enumerable) continue;
      extra[key] = this[key];
      any = true;
    }
    if (any) {
      if (this.length !== 0) str += ', ';
      // Drop "[Object: null prototype] {" and " }".
      str += require('./util.js').inspect(extra, { ...ctx, breakLength: Infinity, compact: true }).slice(27, -2);
    }
  }
  return `<${this.constructor.name} ${str}>`;
}
Buffer.prototype[Symbol.for('nodejs.util.inspect.custom')] = inspectBuffer;
Buffer.prototype.inspect = inspectBuffer;

// SlowBuffer (deprecated) is allocUnsafeSlow with Node's size check.
function SlowBuffer(size) {
  return Buffer.allocUnsafeSlow(size);
}

module.exports = {
  ...mod,
  Buffer,
  SlowBuffer,
  atob: globalThis.atob,
  btoa: globalThis.btoa,
  constants: { MAX_LENGTH: kMaxLength, MAX_STRING_LENGTH: (1 << 29) - 24 },
  kMaxLength,
  kStringMaxLength: (1 << 29) - 24,
  isUtf8(input) {
    const u8 = validatedBytes(input);
    try { new enc.TextDecoder('utf-8', { fatal: true }).decode(u8); return true; } catch { return false; }
  },
  isAscii(input) {
    const u8 = validatedBytes(input);
    for (let i = 0; i < u8.length; i++) if (u8[i] >= 0x80) return false;
    return true;
  },
  transcode: (src, from, to) => Buffer.from(Buffer.from(src).toString(from), to),
  Blob: globalThis.Blob,
  File: globalThis.File,
  resolveObjectURL: (url) => require('./internal/whatwg_url.js').resolveObjectURL(url),
};
Object.defineProperty(module.exports, 'INSPECT_MAX_BYTES', {
  get() { return inspectMaxBytes; },
  set(v) {
    if (typeof v !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'INSPECT_MAX_BYTES', 'of type number', v);
    if (!(v >= 0)) throw codedError('ERR_OUT_OF_RANGE', 'INSPECT_MAX_BYTES', '>= 0', v);
    inspectMaxBytes = v;
  },
  enumerable: true, configurable: true,
});
