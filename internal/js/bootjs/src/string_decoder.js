'use strict';
// string_decoder: Node's StringDecoder. A write returns the text of the
// complete characters it was given and keeps the bytes of a character
// cut at the chunk's end (at most 4) for the next write, so that the
// pieces joined equal Buffer#toString of the whole input; end() flushes
// what is kept as Buffer#toString would show it. Every npm package in
// the bootstrap gets this one too (bootjs resolves "string_decoder" here).
const P = require('./internal/primordials.js');
const { codedError } = require('./internal/errors.js');

const kState = Symbol('kState');

// encodings maps each spelling Node accepts (case-insensitively) to the
// decoder's encoding.
const encodings = {
  utf8: 'utf8', 'utf-8': 'utf8', ucs2: 'utf16le', 'ucs-2': 'utf16le', utf16le: 'utf16le', 'utf-16le': 'utf16le',
  latin1: 'latin1', binary: 'latin1', base64: 'base64', base64url: 'base64url', ascii: 'ascii', hex: 'hex',
};

function normalizeEncoding(enc) {
  if (enc === undefined || enc === null || enc === '') return 'utf8';
  const name = typeof enc === 'string' ? encodings[enc.toLowerCase()] : undefined;
  if (name === undefined) {
    const err = codedError('ERR_UNKNOWN_ENCODING', enc);
    Error.captureStackTrace(err, normalizeEncoding);
    throw err;
  }
  return name;
}

let BufferCtor;
const bufferOf = (bytes) => {
  BufferCtor ||= require('./buffer.js').Buffer;
  return BufferCtor.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

/**
 * StringDecoder decodes a stream of byte chunks into text.
 * @param {string} [encoding]
 */
function StringDecoder(encoding) {
  this.encoding = normalizeEncoding(encoding);
  this[kState] = { kept: new P.Uint8Array(4), held: 0, missing: 0 };
}

// keep returns how many bytes at the end of data begin a character that
// data does not finish, and how many more bytes that character needs.
function keep(encoding, data) {
  const n = data.length;
  switch (encoding) {
    case 'utf8': {
      // Look back over at most 3 continuation bytes for a lead byte.
      for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
        const b = data[i];
        if ((b & 0xC0) === 0x80) continue;
        let need = 0;
        if ((b & 0xE0) === 0xC0) need = 2;
        else if ((b & 0xF0) === 0xE0) need = 3;
        else if ((b & 0xF8) === 0xF0) need = 4;
        const have = n - i;
        return need > have ? [have, need - have] : [0, 0];
      }
      return [0, 0];
    }
    case 'utf16le': {
      let held = n % 2;
      if (n - held >= 2) {
        const hi = data[n - held - 1];
        if (hi >= 0xD8 && hi <= 0xDB) held += 2; // a high surrogate waits for its pair
      }
      // One byte short of a unit, or two (a whole unit) short of a pair.
      return [held, held === 0 ? 0 : (held % 2 === 1 ? 1 : 2)];
    }
    case 'base64':
    case 'base64url': {
      const held = n % 3;
      return [held, held === 0 ? 0 : 3 - held];
    }
    default:
      return [0, 0];
  }
}

function decode(decoder, chunk) {
  const st = decoder[kState];
  let data = new P.Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  let head = '';
  if (st.missing > 0) {
    // First finish the kept character, on its own (as Node does: a
    // UTF-16 high surrogate finished here is not held for its pair).
    let take = P.MathMin(st.missing, data.length);
    let given = take;
    if (decoder.encoding === 'utf8') {
      // A byte that cannot continue it ends it early: it is ill-formed.
      for (let i = 0; i < take; i++) {
        if ((data[i] & 0xC0) !== 0x80) {
          take = i;
          given = st.missing;
          break;
        }
      }
    }
    P.TypedArrayPrototypeSet(st.kept, P.TypedArrayPrototypeSubarray(data, 0, take), st.held);
    st.held += take;
    st.missing -= given;
    data = P.TypedArrayPrototypeSubarray(data, take);
    if (st.missing > 0) return '';
    head = flush(decoder);
  }
  const [held, missing] = keep(decoder.encoding, data);
  const done = data.length - held;
  P.TypedArrayPrototypeSet(st.kept, P.TypedArrayPrototypeSubarray(data, done));
  st.held = held;
  st.missing = missing;
  return done === 0 ? head : head + bufferOf(P.TypedArrayPrototypeSubarray(data, 0, done)).toString(decoder.encoding);
}

function flush(decoder) {
  const st = decoder[kState];
  let n = st.held;
  st.held = 0;
  st.missing = 0;
  // A lone trailing byte of UTF-16 is dropped, as Buffer#toString does.
  if (decoder.encoding === 'utf16le') n -= n % 2;
  if (n === 0) return '';
  return bufferOf(P.TypedArrayPrototypeSlice(st.kept, 0, n)).toString(decoder.encoding);
}

function state(decoder) {
  const st = decoder !== null && typeof decoder === 'object' ? decoder[kState] : undefined;
  if (st === undefined) throw codedError('ERR_INVALID_THIS', 'StringDecoder');
  return st;
}

StringDecoder.prototype.write = function write(buf) {
  if (typeof buf === 'string') return buf;
  if (!P.ArrayBufferIsView(buf)) {
    throw codedError('ERR_INVALID_ARG_TYPE', 'buf', 'an instance of Buffer, TypedArray, or DataView', buf);
  }
  state(this);
  return decode(this, buf);
};

StringDecoder.prototype.end = function end(buf) {
  let out = '';
  if (buf !== undefined) out = this.write(buf);
  if (state(this).held > 0) out += flush(this);
  return out;
};

// text decodes buf from offset on, dropping any kept bytes (legacy API).
StringDecoder.prototype.text = function text(buf, offset) {
  const st = state(this);
  st.held = 0;
  st.missing = 0;
  return this.write(buf.slice(offset));
};

P.ObjectDefineProperty(StringDecoder.prototype, 'lastChar', {
  configurable: true, enumerable: true,
  get() { return bufferOf(state(this).kept); },
});
P.ObjectDefineProperty(StringDecoder.prototype, 'lastNeed', {
  configurable: true, enumerable: true,
  get() { return state(this).missing; },
});
P.ObjectDefineProperty(StringDecoder.prototype, 'lastTotal', {
  configurable: true, enumerable: true,
  get() { const st = state(this); return st.held + st.missing; },
});

module.exports = { StringDecoder };
