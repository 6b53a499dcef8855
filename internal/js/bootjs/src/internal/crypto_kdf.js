'use strict';
// scrypt (x/crypto/scrypt) and HKDF (crypto/hkdf).
const U = require('./crypto_util.js');
const { B, call, give, bytes, cryptoError, toBuf } = U;

const bufArg = 'of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView';

function scryptParams(options) {
  let N = 16384, r = 8, p = 1, maxmem = 32 << 20;
  if (options !== undefined && options !== null) {
    const pick = (a, b, name, def) => {
      const x = options[a], y = options[b];
      if (x !== undefined && y !== undefined) throw cryptoError('ERR_CRYPTO_SCRYPT_INVALID_PARAMETER');
      const v = x !== undefined ? x : y;
      if (v === undefined) return def;
      if (typeof v !== 'number') throw U.invalidType(name, 'of type number', v);
      if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw U.outOfRange(name, '>= 0 && <= 4294967295', v);
      return v;
    };
    N = pick('N', 'cost', 'N', N);
    r = pick('r', 'blockSize', 'r', r);
    p = pick('p', 'parallelization', 'p', p);
    if (options.maxmem !== undefined) {
      const m = options.maxmem;
      if (typeof m !== 'number') throw U.invalidType('maxmem', 'of type number', m);
      if (!Number.isInteger(m) || m < 0 || m > Number.MAX_SAFE_INTEGER) throw U.outOfRange('maxmem', '>= 0 && <= 9007199254740991', m);
      maxmem = m;
    }
    if (N === 0) N = 16384;
    if (r === 0) r = 8;
    if (p === 0) p = 1;
  }
  return { N, r, p, maxmem };
}

function scryptSync(password, salt, keylen, options) {
  const pw = toBuf(password, 'password', undefined, bufArg);
  const s = toBuf(salt, 'salt', undefined, bufArg);
  U.validateInt(keylen, 'keylen', 0, 2 ** 31 - 1);
  const { N, r, p, maxmem } = scryptParams(options);
  give(0, pw);
  give(1, s);
  return bytes(call(B.scrypt, N, r, p, maxmem, keylen));
}

function scrypt(password, salt, keylen, options, callback) {
  if (typeof options === 'function') { callback = options; options = undefined; }
  const pw = toBuf(password, 'password', undefined, bufArg);
  const s = toBuf(salt, 'salt', undefined, bufArg);
  U.validateInt(keylen, 'keylen', 0, 2 ** 31 - 1);
  const params = scryptParams(options);
  U.validateFunction(callback, 'callback');
  let res, err = null;
  try {
    give(0, pw);
    give(1, s);
    res = bytes(call(B.scrypt, params.N, params.r, params.p, params.maxmem, keylen));
  } catch (e) {
    if (e && e.code === 'ERR_CRYPTO_INVALID_SCRYPT_PARAMS') throw e;
    err = e;
  }
  process.nextTick(callback, err, res);
}

function hkdfArgs(digest, ikm, salt, info, keylen) {
  U.validateString(digest, 'digest');
  const { KeyObject, secretBytes } = require('./crypto_keys.js');
  let key;
  if (ikm instanceof KeyObject) {
    if (ikm.type !== 'secret') throw U.invalidType('ikm', 'of type string or an instance of SecretKeyObject, ArrayBuffer, TypedArray, DataView, or Buffer', ikm);
    key = secretBytes(ikm);
  } else {
    key = toBuf(ikm, 'ikm', undefined, 'of type string or an instance of SecretKeyObject, ArrayBuffer, TypedArray, DataView, or Buffer');
  }
  const s = toBuf(salt, 'salt', undefined, bufArg);
  const i = toBuf(info, 'info', undefined, bufArg);
  U.validateInt(keylen, 'length', 0, 2 ** 31 - 1);
  if (i.byteLength > 1024) throw U.outOfRange('info', 'must not contain more than 1024 bytes', i.byteLength);
  const name = U.digestName(digest);
  if (!name) throw cryptoError('ERR_CRYPTO_INVALID_DIGEST', `Invalid digest: ${digest}`);
  // HKDF yields at most 255 blocks of the digest's size.
  if (keylen > 255 * require('../crypto.js').createHash(name).digest().length) throw cryptoError('ERR_CRYPTO_INVALID_KEYLEN');
  return [name, key, s, i, keylen];
}

function hkdfRun([name, key, s, i, keylen]) {
  give(0, key);
  give(1, s);
  give(2, i);
  const out = bytes(call(B.hkdf, name, keylen));
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
}

function hkdfSync(digest, ikm, salt, info, keylen) {
  return hkdfRun(hkdfArgs(digest, ikm, salt, info, keylen));
}

function hkdf(digest, ikm, salt, info, keylen, callback) {
  const args = hkdfArgs(digest, ikm, salt, info, keylen);
  U.validateFunction(callback, 'callback');
  let res, err = null;
  try { res = hkdfRun(args); } catch (e) { err = e; }
  process.nextTick(callback, err, res);
}

module.exports = { scrypt, scryptSync, hkdf, hkdfSync };
