'use strict';
// Helpers shared by the crypto modules: operands across the bridge, the
// errors Go reports, and Node's argument checks.
const { B, takeBytes, giveBytes, asU8, scratch, SCRATCH } = require('./bridge.js');
const P = require('./primordials.js');
const { fromBridge, describe } = require('./errors.js');

function lazyBuffer() { return require('../buffer.js').Buffer; }

const kinds = {
  ERR_CRYPTO_INVALID_KEYLEN: RangeError, ERR_CRYPTO_INVALID_IV: TypeError, ERR_CRYPTO_INVALID_AUTH_TAG: TypeError,
  ERR_CRYPTO_INVALID_SCRYPT_PARAMS: RangeError, ERR_CRYPTO_INVALID_JWK: TypeError, ERR_CRYPTO_INVALID_CURVE: TypeError,
  ERR_CRYPTO_INVALID_DIGEST: TypeError, ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE: TypeError, ERR_CRYPTO_INVALID_KEYTYPE: RangeError,
  ERR_OUT_OF_RANGE: RangeError, ERR_INVALID_ARG_VALUE: TypeError, ERR_INVALID_ARG_TYPE: TypeError,
  ERR_FEATURE_UNAVAILABLE_ON_PLATFORM: TypeError, ERR_CRYPTO_ECDH_INVALID_FORMAT: TypeError, ERR_UNKNOWN_ENCODING: TypeError,
  ERR_CRYPTO_INVALID_MESSAGELEN: RangeError, ERR_MISSING_OPTION: TypeError, ERR_CRYPTO_SCRYPT_INVALID_PARAMETER: Error,
  ERR_MISSING_PASSPHRASE: TypeError,
};
const defaults = {
  ERR_CRYPTO_UNKNOWN_CIPHER: 'Unknown cipher', ERR_CRYPTO_INVALID_KEYLEN: 'Invalid key length',
  ERR_CRYPTO_INVALID_IV: 'Invalid initialization vector', ERR_CRYPTO_INVALID_CURVE: 'Invalid EC curve name',
  ERR_CRYPTO_INVALID_DIGEST: 'Invalid digest', ERR_CRYPTO_UNSUPPORTED_OPERATION: 'Unsupported crypto operation',
  ERR_CRYPTO_INVALID_STATE: 'Invalid state', ERR_CRYPTO_SCRYPT_INVALID_PARAMETER: 'Invalid scrypt parameter',
  ERR_CRYPTO_INVALID_SCRYPT_PARAMS: 'Invalid scrypt params', ERR_CRYPTO_INVALID_JWK: 'Invalid JWK data',
  ERR_CRYPTO_OPERATION_FAILED: 'Operation failed',
};

// cryptoError makes a Node error with code (none when code is empty).
function cryptoError(code, msg, Kind) {
  Kind = Kind || kinds[code] || Error;
  const err = new Kind(msg || defaults[code] || code);
  if (code) {
    Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
    if (typeof err.stack === 'string') err.stack = err.stack.replace(Kind.name, `${Kind.name} [${code}]`);
  }
  return err;
}

// convert turns what a crypto bridge call threw into Node's error.
function convert(e) {
  if (typeof e !== 'string') return e;
  const parts = e.split('\u0000');
  if (parts[0] === 'CRYPTO') return cryptoError(parts[1], parts[2]);
  if (parts[0] === 'OSSL') {
    const err = new Error(parts[2]);
    err.library = parts[3];
    err.reason = parts[4];
    if (parts[1]) err.code = parts[1];
    return err;
  }
  if (e === 'ECANCELED' || e === 'ETIMEDOUT') return cryptoError('ERR_CRYPTO_OPERATION_FAILED', 'The operation was interrupted');
  if (e === 'EINVAL') return cryptoError('ERR_CRYPTO_OPERATION_FAILED', 'Invalid crypto operation');
  return fromBridge(e);
}

// call runs a bridge call, converting its errors.
function call(fn, ...args) {
  try {
    return fn(...args);
  } catch (e) {
    throw convert(e);
  }
}

// give stashes bytes as operand i of the next operation.
function give(i, u8) { call(B.cryptoIn, i, giveBytes(u8 || new Uint8Array(0))); }
// pack passes several byte strings as one operand: straight into the
// scratch buffer when they fit (with primordials: guest code must never
// see the scratch buffer), else as one blob.
function pack(...parts) {
  let n = 0;
  for (let i = 0; i < parts.length; i++) n += parts[i].length;
  let into = scratch;
  if (n > SCRATCH) into = new Uint8Array(n);
  let off = 0;
  for (let i = 0; i < parts.length; i++) {
    P.TypedArrayPrototypeSet(into, parts[i], off);
    off += parts[i].length;
  }
  return into === scratch ? n : giveBytes(into);
}

function bytes(n) { return takeBytes(n, (k) => lazyBuffer().allocUnsafe(k)); }
function out(i) { return bytes(call(B.cryptoOut, i)); }

const bufTypes = 'an instance of Buffer, TypedArray, or DataView';
function isBufferLike(v) { return ArrayBuffer.isView(v) || v instanceof ArrayBuffer; }

// toBuf converts string or binary data to a Uint8Array, or throws Node's
// ERR_INVALID_ARG_TYPE for name.
function toBuf(v, name, enc, expected) {
  if (typeof v === 'string') return lazyBuffer().from(v, enc || 'utf8');
  if (isBufferLike(v)) return asU8(v);
  throw invalidType(name, expected || `of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView`, v);
}

// invalidType is Node's ERR_INVALID_ARG_TYPE: 'The "name" argument must
// be ...' ('property' for dotted names).
function invalidType(name, expected, actual) {
  const what = name.includes('.') || name.includes('[') ? 'property' : 'argument';
  return cryptoError('ERR_INVALID_ARG_TYPE', `The "${name}" ${what} must be ${expected}. Received ${describe(actual)}`);
}

function validateString(v, name) {
  if (typeof v !== 'string') throw invalidType(name, 'of type string', v);
}
function validateObject(v, name) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidType(name, 'of type object', v);
}
function validateFunction(v, name) {
  if (typeof v !== 'function') throw invalidType(name, 'of type function', v);
}
function validateInt(v, name, lo, hi) {
  if (typeof v !== 'number') throw invalidType(name, 'of type number', v);
  if (!Number.isInteger(v)) throw outOfRange(name, 'an integer', v);
  if (v < lo || v > hi) throw outOfRange(name, `>= ${lo} && <= ${hi}`, v);
}
// outOfRange is Node's ERR_OUT_OF_RANGE, numbers shown as Node shows them.
function outOfRange(name, range, v) {
  let r = String(v);
  if (Number.isInteger(v) && Math.abs(v) > 2 ** 32) {
    let res = '';
    let i = r.length;
    const start = r[0] === '-' ? 1 : 0;
    for (; i >= start + 4; i -= 3) res = `_${r.slice(i - 3, i)}${res}`;
    r = `${r.slice(0, i)}${res}`;
  }
  return cryptoError('ERR_OUT_OF_RANGE', `The value of "${name}" is out of range. It must be ${range}. Received ${r}`);
}
function invalidValue(name, v, reason) {
  const what = name.includes('.') ? 'property' : 'argument';
  return cryptoError('ERR_INVALID_ARG_VALUE', `The ${what} '${name}' ${reason || 'is invalid'}. Received ${inspectValue(v)}`);
}
function inspectValue(v) {
  if (typeof v === 'string') return `'${v}'`;
  if (v === undefined || v === null || typeof v !== 'object') return String(v);
  try { return require('../util.js').inspect(v); } catch { return describe(v); }
}

// Digest names as OpenSSL resolves them for hashes and signatures.
const hashNames = ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha512-224', 'sha512-256',
  'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'];
function digestName(alg) {
  let a = `${alg}`.toLowerCase();
  a = a.replace(/^rsa-/, '').replace(/^ecdsa-with-/, '').replace(/withrsaencryption$/, '');
  a = { 'sha-1': 'sha1', 'sha-224': 'sha224', 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512',
    'sha512/224': 'sha512-224', 'sha512/256': 'sha512-256', 'sha-512/224': 'sha512-224', 'sha-512/256': 'sha512-256' }[a] || a;
  return hashNames.includes(a) ? a : null;
}

function encodeOut(buf, enc) {
  if (enc === undefined || enc === null || enc === 'buffer') return buf;
  return buf.toString(enc);
}

// callable makes class C a function that, as Node's crypto classes do,
// also constructs when called without new (crypto.Sign('sha256')); its
// instances are C's and subclasses work.
function callable(C, name = C.name, args = (a) => a) {
  const F = function (...a) { return Reflect.construct(C, args(a), new.target || F); };
  Object.defineProperty(F, 'name', { value: name, configurable: true });
  F.prototype = C.prototype;
  Object.setPrototypeOf(F, C);
  return F;
}

module.exports = {
  callable, B, call, give, pack, invalidType, bytes, out, convert, cryptoError, outOfRange, toBuf, isBufferLike, bufTypes, validateString, validateObject,
  validateFunction, validateInt, invalidValue, digestName, hashNames, encodeOut, lazyBuffer, asU8,
};
