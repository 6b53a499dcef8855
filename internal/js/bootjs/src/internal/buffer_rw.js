'use strict';
// Buffer's read*/write* number methods with Node's checks: an offset
// that is not a number is ERR_INVALID_ARG_TYPE, one out of the buffer or
// not an integer ERR_OUT_OF_RANGE ("It must be >= 0 and <= N"), a value
// out of its type's range ERR_OUT_OF_RANGE on "value". The polyfill's own
// accept strings, clamp or throw plain RangeErrors.
const { codedError } = require('./errors.js');

function validateNumber(v, name) {
  if (typeof v !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', v);
}

// boundsError explains why value (an offset, or a byteLength when name
// says so) does not fit; last is the greatest allowed.
function boundsError(value, last, name) {
  if (Math.floor(value) !== value) {
    validateNumber(value, name || 'offset');
    throw codedError('ERR_OUT_OF_RANGE', name || 'offset', 'an integer', value);
  }
  if (last < 0) throw codedError('ERR_BUFFER_OUT_OF_BOUNDS');
  throw codedError('ERR_OUT_OF_RANGE', name || 'offset', `>= ${name ? 1 : 0} and <= ${last}`, value);
}

// check validates a read or write of n bytes at offset.
function check(buf, offset, n) {
  validateNumber(offset, 'offset');
  if (buf[offset] === undefined || buf[offset + n - 1] === undefined) boundsError(offset, buf.length - n);
}

// checkValue validates a value written in n bytes against [min, max].
function checkValue(value, min, max, n) {
  if (value > max || value < min) {
    const b = typeof min === 'bigint' ? 'n' : '';
    let range;
    if (n > 4) {
      const bits = n * 8;
      range = min === 0 || min === 0n ? `>= 0${b} and < 2${b} ** ${bits}${b}` : `>= -(2${b} ** ${bits - 1}${b}) and < 2${b} ** ${bits - 1}${b}`;
    } else {
      range = `>= ${min}${b} and <= ${max}${b}`;
    }
    throw codedError('ERR_OUT_OF_RANGE', 'value', range, value);
  }
}

// Unsigned little/big-endian integers of 1 to 6 bytes.
function readU(buf, offset, n, le) {
  check(buf, offset, n);
  let v = 0;
  for (let i = 0; i < n; i++) v += buf[offset + (le ? i : n - 1 - i)] * 2 ** (8 * i);
  return v;
}

function readS(buf, offset, n, le) {
  const v = readU(buf, offset, n, le);
  const top = 2 ** (8 * n - 1);
  return v >= top ? v - 2 * top : v;
}

function writeN(buf, value, offset, n, le, min, max) {
  value = +value;
  // One byte: the offset's type is checked first, as in Node.
  if (n === 1) validateNumber(offset, 'offset');
  checkValue(value, min, max, n);
  check(buf, offset, n);
  // NaN writes zeros; fractions are cut toward zero.
  let v = Math.trunc(value) || 0;
  if (v < 0) v += 2 ** (8 * n);
  for (let i = 0; i < n; i++) {
    buf[offset + (le ? i : n - 1 - i)] = v % 256;
    v = Math.floor(v / 256);
  }
  return offset + n;
}

const f32 = new Float32Array(1);
const f64 = new Float64Array(1);
const f32b = new Uint8Array(f32.buffer);
const f64b = new Uint8Array(f64.buffer);

// The scratch arrays are little-endian (as every host secexec runs on).
function readF(buf, offset, bytes, le) {
  check(buf, offset, bytes.length);
  const n = bytes.length;
  for (let i = 0; i < n; i++) bytes[i] = buf[offset + (le ? i : n - 1 - i)];
}

function writeF(buf, offset, bytes, le) {
  check(buf, offset, bytes.length);
  const n = bytes.length;
  for (let i = 0; i < n; i++) buf[offset + (le ? i : n - 1 - i)] = bytes[i];
  return offset + n;
}

function readBig(buf, offset, le, signed) {
  check(buf, offset, 8);
  let v = 0n;
  for (let i = 0; i < 8; i++) v = (v << 8n) + BigInt(buf[offset + (le ? 7 - i : i)]);
  return signed ? BigInt.asIntN(64, v) : v;
}

function writeBig(buf, value, offset, le, min, max) {
  checkValue(value, min, max, 8);
  check(buf, offset, 8);
  if (typeof value !== 'bigint') throw new TypeError('Cannot mix BigInt and other types, use explicit conversions');
  let v = BigInt.asUintN(64, value);
  for (let i = 0; i < 8; i++) {
    buf[offset + (le ? i : 7 - i)] = Number(v & 0xffn);
    v >>= 8n;
  }
  return offset + 8;
}

// byteLength dispatch of read/write{U,}Int{LE,BE}: 1 to 6 bytes.
function byteLength(n) {
  if (n >= 1 && n <= 6 && Math.floor(n) === n) return n;
  return boundsError(n, 6, 'byteLength');
}

const ranges = { 1: 0x80, 2: 0x8000, 3: 0x800000, 4: 0x80000000, 5: 0x8000000000, 6: 0x800000000000 };

const methods = {
  readUInt8(offset = 0) { return readU(this, offset, 1, true); },
  readUInt16LE(offset = 0) { return readU(this, offset, 2, true); },
  readUInt16BE(offset = 0) { return readU(this, offset, 2, false); },
  readUInt32LE(offset = 0) { return readU(this, offset, 4, true); },
  readUInt32BE(offset = 0) { return readU(this, offset, 4, false); },
  readInt8(offset = 0) { return readS(this, offset, 1, true); },
  readInt16LE(offset = 0) { return readS(this, offset, 2, true); },
  readInt16BE(offset = 0) { return readS(this, offset, 2, false); },
  readInt32LE(offset = 0) { return readS(this, offset, 4, true); },
  readInt32BE(offset = 0) { return readS(this, offset, 4, false); },
  readUIntLE(offset, n) {
    if (offset === undefined) throw codedError('ERR_INVALID_ARG_TYPE', 'offset', 'of type number', offset);
    return readU(this, offset, byteLength(n), true);
  },
  readUIntBE(offset, n) {
    if (offset === undefined) throw codedError('ERR_INVALID_ARG_TYPE', 'offset', 'of type number', offset);
    return readU(this, offset, byteLength(n), false);
  },
  readIntLE(offset, n) {
    if (offset === undefined) throw codedError('ERR_INVALID_ARG_TYPE', 'offset', 'of type number', offset);
    return readS(this, offset, byteLength(n), true);
  },
  readIntBE(offset, n) {
    if (offset === undefined) throw codedError('ERR_INVALID_ARG_TYPE', 'offset', 'of type number', offset);
    return readS(this, offset, byteLength(n), false);
  },
  readFloatLE(offset = 0) { readF(this, offset, f32b, true); return f32[0]; },
  readFloatBE(offset = 0) { readF(this, offset, f32b, false); return f32[0]; },
  readDoubleLE(offset = 0) { readF(this, offset, f64b, true); return f64[0]; },
  readDoubleBE(offset = 0) { readF(this, offset, f64b, false); return f64[0]; },
  readBigUInt64LE(offset = 0) { return readBig(this, offset, true, false); },
  readBigUInt64BE(offset = 0) { return readBig(this, offset, false, false); },
  readBigInt64LE(offset = 0) { return readBig(this, offset, true, true); },
  readBigInt64BE(offset = 0) { return readBig(this, offset, false, true); },

  writeUInt8(value, offset = 0) { return writeN(this, value, offset, 1, true, 0, 0xff); },
  writeUInt16LE(value, offset = 0) { return writeN(this, value, offset, 2, true, 0, 0xffff); },
  writeUInt16BE(value, offset = 0) { return writeN(this, value, offset, 2, false, 0, 0xffff); },
  writeUInt32LE(value, offset = 0) { return writeN(this, value, offset, 4, true, 0, 0xffffffff); },
  writeUInt32BE(value, offset = 0) { return writeN(this, value, offset, 4, false, 0, 0xffffffff); },
  writeInt8(value, offset = 0) { return writeN(this, value, offset, 1, true, -0x80, 0x7f); },
  writeInt16LE(value, offset = 0) { return writeN(this, value, offset, 2, true, -0x8000, 0x7fff); },
  writeInt16BE(value, offset = 0) { return writeN(this, value, offset, 2, false, -0x8000, 0x7fff); },
  writeInt32LE(value, offset = 0) { return writeN(this, value, offset, 4, true, -0x80000000, 0x7fffffff); },
  writeInt32BE(value, offset = 0) { return writeN(this, value, offset, 4, false, -0x80000000, 0x7fffffff); },
  writeUIntLE(value, offset, n) { n = byteLength(n); return writeN(this, value, offset, n, true, 0, 2 * ranges[n] - 1); },
  writeUIntBE(value, offset, n) { n = byteLength(n); return writeN(this, value, offset, n, false, 0, 2 * ranges[n] - 1); },
  writeIntLE(value, offset, n) { n = byteLength(n); return writeN(this, value, offset, n, true, -ranges[n], ranges[n] - 1); },
  writeIntBE(value, offset, n) { n = byteLength(n); return writeN(this, value, offset, n, false, -ranges[n], ranges[n] - 1); },
  writeFloatLE(value, offset = 0) { f32[0] = +value; return writeF(this, offset, f32b, true); },
  writeFloatBE(value, offset = 0) { f32[0] = +value; return writeF(this, offset, f32b, false); },
  writeDoubleLE(value, offset = 0) { f64[0] = +value; return writeF(this, offset, f64b, true); },
  writeDoubleBE(value, offset = 0) { f64[0] = +value; return writeF(this, offset, f64b, false); },
  writeBigUInt64LE(value, offset = 0) { return writeBig(this, value, offset, true, 0n, 0xffffffffffffffffn); },
  writeBigUInt64BE(value, offset = 0) { return writeBig(this, value, offset, false, 0n, 0xffffffffffffffffn); },
  writeBigInt64LE(value, offset = 0) { return writeBig(this, value, offset, true, -(2n ** 63n), 2n ** 63n - 1n); },
  writeBigInt64BE(value, offset = 0) { return writeBig(this, value, offset, false, -(2n ** 63n), 2n ** 63n - 1n); },
};

// install puts the methods on proto, with Node's "Uint" aliases.
function install(proto) {
  for (const name of Object.keys(methods)) {
    const fn = methods[name];
    Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: true });
    if (name.includes('UInt')) {
      Object.defineProperty(proto, name.replace('UInt', 'Uint'), { value: fn, writable: true, configurable: true, enumerable: true });
    }
  }
}

module.exports = { install, boundsError, validateNumber };
