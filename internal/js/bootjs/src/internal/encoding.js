'use strict';
// TextEncoder and TextDecoder (WHATWG Encoding) for utf-8, utf-16le and
// latin1. Large inputs are converted in Go.
const { B, takeBytes, giveBytes, asU8 } = require('./bridge.js');

const BIG = 512;

function utf8Encode(str) {
  str = `${str}`;
  if (str.length > BIG) return takeBytes(B.utf8Encode(str));
  const out = [];
  for (let i = 0; i < str.length; i++) {
    let c = str.charCodeAt(i);
    if (c < 0x80) { out.push(c); continue; }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < str.length) {
      const d = str.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

// utf8Decode decodes with U+FFFD for ill-formed sequences (Go does the
// same replacement as the WHATWG decoder: one per maximal subpart).
function utf8Decode(u8) {
  if (u8.length === 0) return '';
  let ascii = u8.length <= BIG;
  if (ascii) for (let i = 0; i < u8.length; i++) if (u8[i] >= 0x80) { ascii = false; break; }
  if (ascii) {
    let s = '';
    for (let i = 0; i < u8.length; i += 4096) s += String.fromCharCode.apply(null, u8.subarray(i, i + 4096));
    return s;
  }
  return B.utf8Decode(giveBytes(u8));
}

class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(input = '') { return utf8Encode(input); }
  encodeInto(src, dest) {
    const bytes = utf8Encode(src);
    let n = Math.min(bytes.length, dest.length);
    // Do not split a character.
    while (n > 0 && n < bytes.length && (bytes[n] & 0xc0) === 0x80) n--;
    dest.set(bytes.subarray(0, n));
    let read = 0;
    let i = 0;
    while (i < n) {
      const b = bytes[i];
      const len = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
      i += len;
      read += len === 4 ? 2 : 1;
    }
    return { read, written: n };
  }
  get [Symbol.toStringTag]() { return 'TextEncoder'; }
}

const labels = {
  'utf-8': 'utf-8', 'utf8': 'utf-8', 'unicode-1-1-utf-8': 'utf-8',
  'utf-16le': 'utf-16le', 'utf-16': 'utf-16le', 'ucs-2': 'utf-16le',
  'latin1': 'windows-1252', 'iso-8859-1': 'windows-1252', 'windows-1252': 'windows-1252', 'ascii': 'windows-1252', 'us-ascii': 'windows-1252',
};

class TextDecoder {
  #enc; #fatal; #ignoreBOM; #pending = null; #bomSeen = false;
  constructor(label = 'utf-8', options = {}) {
    const enc = labels[String(label).trim().toLowerCase()];
    if (!enc) {
      const e = new RangeError(`The "${label}" encoding is not supported`);
      e.code = 'ERR_ENCODING_NOT_SUPPORTED';
      throw e;
    }
    this.#enc = enc;
    this.#fatal = !!options.fatal;
    this.#ignoreBOM = !!options.ignoreBOM;
  }
  get encoding() { return this.#enc; }
  get fatal() { return this.#fatal; }
  get ignoreBOM() { return this.#ignoreBOM; }
  decode(input, options = {}) {
    let u8 = input === undefined ? new Uint8Array(0) : asU8(input);
    if (this.#pending) {
      const m = new Uint8Array(this.#pending.length + u8.length);
      m.set(this.#pending);
      m.set(u8, this.#pending.length);
      u8 = m;
      this.#pending = null;
    }
    const stream = !!options.stream;
    let s;
    if (this.#enc === 'utf-8') {
      if (stream) {
        // Keep an incomplete trailing sequence for the next call.
        let k = u8.length;
        let back = 0;
        while (k > 0 && back < 3 && (u8[k - 1] & 0xc0) === 0x80) { k--; back++; }
        if (k > 0) {
          const b = u8[k - 1];
          const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
          if (need > 1 && need > back + 1) { this.#pending = u8.slice(k - 1); u8 = u8.subarray(0, k - 1); }
        }
      }
      s = utf8Decode(u8);
      if (this.#fatal && s.includes('\ufffd') && !this.#validUtf8(u8)) {
        const e = new TypeError('The encoded data was not valid for encoding utf-8');
        e.code = 'ERR_ENCODING_INVALID_ENCODED_DATA';
        throw e;
      }
    } else if (this.#enc === 'utf-16le') {
      let n = u8.length & ~1;
      if (stream && n !== u8.length) this.#pending = u8.slice(n);
      s = '';
      for (let i = 0; i < n; i += 2) s += String.fromCharCode(u8[i] | (u8[i + 1] << 8));
      if (!stream && n !== u8.length) s += '\ufffd';
    } else {
      s = '';
      for (let i = 0; i < u8.length; i += 4096) s += String.fromCharCode.apply(null, u8.subarray(i, i + 4096));
    }
    if (!this.#ignoreBOM && !this.#bomSeen && s.length > 0) {
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    }
    if (s.length > 0 || !stream) this.#bomSeen = stream;
    return s;
  }
  #validUtf8(u8) { return B.utf8Valid(giveBytes(u8)); }
  get [Symbol.toStringTag]() { return 'TextDecoder'; }
}

module.exports = { TextEncoder, TextDecoder, utf8Encode, utf8Decode };
