'use strict';
// buffer: the npm polyfill, with Node's extras.
const mod = require('buffer/');
const { Buffer } = mod;
const enc = require('./internal/encoding.js');

// UTF-8 is decoded in Go, as V8 does (one U+FFFD per maximal subpart
// of an ill-formed sequence; the polyfill's decoder differs), and fast
// for large buffers.
const origToString = Buffer.prototype.toString;
Buffer.prototype.toString = function toString(encoding, start, end) {
  if (arguments.length === 0 || encoding === 'utf8' || encoding === 'utf-8' || encoding === undefined) {
    if (start === undefined && end === undefined) return enc.utf8Decode(this);
    // Node's clamping of start and end.
    const len = this.length;
    if (start === undefined || start <= 0) start = 0;
    else if (start >= len) return '';
    else start = Math.trunc(start) || 0;
    if (end === undefined || end > len) end = len;
    else end = Math.trunc(end) || 0;
    if (end <= start) return '';
    return enc.utf8Decode(this.subarray(start, end));
  }
  return Reflect.apply(origToString, this, arguments);
};

// base64url (Node 15+) is base64 with the URL alphabet and no padding;
// the polyfill's decoder already accepts that alphabet.
const isB64url = (e) => typeof e === 'string' && e.toLowerCase() === 'base64url';
const b64ToUrl = (s) => s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const origToString2 = Buffer.prototype.toString;
Buffer.prototype.toString = function toString(encoding, start, end) {
  if (isB64url(encoding)) return b64ToUrl(Reflect.apply(origToString2, this, ['base64', start, end]));
  return Reflect.apply(origToString2, this, arguments);
};
const origWrite = Buffer.prototype.write;
Buffer.prototype.write = function write(string, ...rest) {
  for (let i = 0; i < rest.length; i++) if (isB64url(rest[i])) rest[i] = 'base64';
  return Reflect.apply(origWrite, this, [string, ...rest]);
};
const origFrom = Buffer.from;
Buffer.from = function from(value, enc, len) {
  if (isB64url(enc)) enc = 'base64';
  return Reflect.apply(origFrom, this, [value, enc, len]);
};
const origByteLength = Buffer.byteLength;
Buffer.byteLength = function byteLength(s, enc) { return origByteLength(s, isB64url(enc) ? 'base64' : enc); };
const origIsEncoding = Buffer.isEncoding;
Buffer.isEncoding = function isEncoding(enc) { return isB64url(enc) || origIsEncoding(enc); };

const kMaxLength = mod.kMaxLength;
module.exports = {
  ...mod,
  Buffer,
  atob: globalThis.atob,
  btoa: globalThis.btoa,
  constants: { MAX_LENGTH: kMaxLength, MAX_STRING_LENGTH: (1 << 29) - 24 },
  kMaxLength,
  kStringMaxLength: (1 << 29) - 24,
  isUtf8: (b) => { try { new enc.TextDecoder('utf-8', { fatal: true }).decode(b); return true; } catch { return false; } },
  isAscii: (b) => { for (const x of new Uint8Array(b.buffer || b, b.byteOffset || 0, b.byteLength)) if (x >= 0x80) return false; return true; },
  transcode: (src, from, to) => Buffer.from(Buffer.from(src).toString(from), to),
  Blob: globalThis.Blob,
  File: globalThis.File,
  resolveObjectURL: (url) => require('./internal/whatwg_url.js').resolveObjectURL(url),
};
