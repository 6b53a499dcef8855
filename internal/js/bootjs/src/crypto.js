'use strict';
// crypto: randomness, hashes, HMACs, ciphers, keys, signatures and key
// derivation on Go's crypto packages (and golang.org/x/crypto).
const { B, takeBytes, giveBytes, asU8, fromScratch, SCRATCH } = require('./internal/bridge.js');
const { codedError } = require('./internal/errors.js');

function lazyBuffer() { return require('./buffer.js').Buffer; }

function toBytes(data, enc, name = 'data') {
  if (typeof data === 'string') return lazyBuffer().from(data, enc || 'utf8');
  if (ArrayBuffer.isView(data) || data instanceof ArrayBuffer) return asU8(data);
  throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type string or an instance of Buffer, TypedArray, or DataView', data);
}

function fillRandom(u8) {
  for (let off = 0; off < u8.length; off += SCRATCH) {
    const k = Math.min(SCRATCH, u8.length - off);
    B.random(k);
    fromScratch(k, u8, off);
  }
  return u8;
}

function randomBytes(size, cb) {
  // Node's assertSize: any number in range, cut to an integer.
  if (typeof size !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'size', 'of type number', size);
  if (Number.isNaN(size) || size < 0 || size > 2 ** 31 - 1) throw codedError('ERR_OUT_OF_RANGE', 'size', '>= 0 && <= 2147483647', size);
  size >>>= 0;
  if (cb !== undefined) U.validateFunction(cb, 'callback');
  const buf = fillRandom(lazyBuffer().allocUnsafe(size));
  if (typeof cb === 'function') { process.nextTick(cb, null, buf); return undefined; }
  return buf;
}
function randomFillSync(buf, offset = 0, size) {
  const u8 = asU8(buf);
  if (size === undefined) size = u8.length - offset;
  fillRandom(u8.subarray(offset, offset + size));
  return buf;
}
function randomFill(buf, offset, size, cb) {
  if (typeof offset === 'function') { cb = offset; offset = 0; size = undefined; }
  else if (typeof size === 'function') { cb = size; size = undefined; }
  randomFillSync(buf, offset, size);
  process.nextTick(cb, null, buf);
}
function randomInt(min, max, cb) {
  if (max === undefined || typeof max === 'function') { cb = max; max = min; min = 0; }
  if (!Number.isSafeInteger(min)) throw codedError('ERR_INVALID_ARG_TYPE', 'min', 'a safe integer', min);
  if (!Number.isSafeInteger(max)) throw codedError('ERR_INVALID_ARG_TYPE', 'max', 'a safe integer', max);
  if (max <= min) throw codedError('ERR_OUT_OF_RANGE', 'max', `greater than the value of "min" (${min})`, max);
  const r = B.randomInt(min, max);
  if (typeof cb === 'function') { process.nextTick(cb, null, r); return undefined; }
  return r;
}
function randomUUID(options) {
  if (options !== undefined) {
    U.validateObject(options, 'options');
    const { disableEntropyCache = false } = options;
    if (typeof disableEntropyCache !== 'boolean') throw U.invalidType('options.disableEntropyCache', 'of type boolean', disableEntropyCache);
  }
  const b = fillRandom(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
function getRandomValues(ta) {
  // Node throws DOMExceptions here, from node:crypto as from Web Crypto.
  if (!ArrayBuffer.isView(ta) || ta instanceof Float32Array || ta instanceof Float64Array || ta instanceof DataView) {
    const { DOMException } = require('./internal/web.js');
    throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
  }
  if (ta.byteLength > 65536) {
    const { DOMException } = require('./internal/web.js');
    throw new DOMException('The requested length exceeds 65,536 bytes', 'QuotaExceededError');
  }
  fillRandom(asU8(ta));
  return ta;
}

const U = require('./internal/crypto_util.js');
const deprecate = (fn, msg, code) => require('./util.js').deprecate(fn, msg, code);
const hashes = U.hashNames;
function normAlg(alg) {
  const m = U.digestName(alg);
  if (!m) { const e = new Error('Digest method not supported'); e.code = 'ERR_CRYPTO_INVALID_DIGEST'; throw e; }
  return m;
}

const { LazyTransform } = require('./internal/lazy_transform.js');

// Hash (and Hmac) is a stream, as Node's: written data is hashed and the
// digest is read at the end.
class Hash extends LazyTransform {
  #id; #done = false; #hmac = false; #flushed;
  constructor(alg, key, id, options) {
    super(options);
    if (id !== undefined) { this.#id = id; return; }
    if (key === undefined) this.#id = B.hashNew(normAlg(alg), -1);
    else {
      this.#hmac = true;
      const k = key instanceof keys.KeyObject && key.type === 'secret' ? keys.secretBytes(key) : toBytes(key, 'utf8', 'key');
      this.#id = B.hashNew(normAlg(alg), giveBytes(k));
    }
  }
  update(data, enc) {
    if (this.#done) throw codedError('ERR_CRYPTO_HASH_FINALIZED');
    const u8 = toBytes(data, enc);
    for (let off = 0; off < u8.length; off += SCRATCH) {
      const part = u8.subarray(off, off + SCRATCH);
      B.hashUpdate(this.#id, giveBytes(part));
    }
    return this;
  }
  digest(enc) {
    if (this.#done) {
      // An Hmac digested again gives nothing, as in Node; a Hash throws.
      if (!this.#hmac) throw codedError('ERR_CRYPTO_HASH_FINALIZED');
      const empty = lazyBuffer().alloc(0);
      return enc && enc !== 'buffer' ? empty.toString(enc) : empty;
    }
    this.#done = true;
    const out = this.#flushed || this.#raw();
    return enc && enc !== 'buffer' ? out.toString(enc) : out;
  }
  #raw() {
    return takeBytes(B.hashDigest(this.#id), (k) => lazyBuffer().allocUnsafe(k));
  }
  copy() {
    if (this.#done) throw codedError('ERR_CRYPTO_HASH_FINALIZED');
    return new Hash(null, undefined, B.hashCopy(this.#id));
  }
  _transform(chunk, encoding, callback) {
    this.update(chunk, encoding);
    callback();
  }
  // As in Node, the stream's end pushes the digest without finishing the
  // Hash: one digest() call after it still returns the same value.
  _flush(callback) {
    this.#flushed ||= this.#raw();
    this.push(this.#flushed);
    callback();
  }
}

// createHash ignores options that are not an object, as Node's Hash does:
// ssri (npm's integrity check) calls `algorithms.map(crypto.createHash)`,
// which passes the array index as options.
function createHash(alg, options) {
  U.validateString(alg, 'algorithm');
  return new Hash(alg, undefined, undefined, options !== null && typeof options === 'object' ? options : undefined);
}
function createHmac(alg, key, options) {
  U.validateString(alg, 'hmac');
  return new Hash(alg, key, undefined, options);
}
const hashEncodings = ['hex', 'base64', 'base64url', 'latin1', 'binary', 'utf8', 'utf-8', 'ucs2', 'ucs-2', 'utf16le', 'utf-16le', 'ascii', 'buffer'];
function hash(alg, data, enc = 'hex') {
  U.validateString(alg, 'algorithm');
  if (typeof data !== 'string' && !ArrayBuffer.isView(data)) {
    throw codedError('ERR_INVALID_ARG_TYPE', 'input', ['Buffer', 'TypedArray', 'DataView', 'string'], data);
  }
  if (enc !== 'hex') {
    U.validateString(enc, 'outputEncoding');
    if (!hashEncodings.includes(enc.toLowerCase())) throw codedError('ERR_INVALID_ARG_VALUE', 'outputEncoding', enc);
  }
  return createHash(alg).update(data).digest(enc);
}

function timingSafeEqual(a, b) {
  const x = asU8(a), y = asU8(b);
  if (x.byteLength !== y.byteLength) throw codedError('ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH');
  let d = 0;
  for (let i = 0; i < x.length; i++) d |= x[i] ^ y[i];
  return d === 0;
}

// pbkdf2Args checks pbkdf2's arguments in Node's order.
function pbkdf2Args(password, salt, iterations, keylen, digest) {
  U.validateString(digest, 'digest');
  const p = toBytes(password, 'utf8', 'password'), s = toBytes(salt, 'utf8', 'salt');
  U.validateInt(iterations, 'iterations', 1, 2 ** 31 - 1);
  U.validateInt(keylen, 'keylen', 0, 2 ** 31 - 1);
  return [p, s];
}

function pbkdf2Sync(password, salt, iterations, keylen, digest) {
  const [p, s] = pbkdf2Args(password, salt, iterations, keylen, digest);
  const digestName = normAlg(digest);
  // Go's pbkdf2 refuses an empty key; Node gives an empty Buffer.
  if (keylen === 0) return lazyBuffer().alloc(0);
  // Password, then salt: each crosses the bridge on its own.
  B.kdfInput(0, giveBytes(p));
  B.kdfInput(1, giveBytes(s));
  return takeBytes(B.pbkdf2(iterations, keylen, digestName), (k) => lazyBuffer().allocUnsafe(k));
}
function pbkdf2(password, salt, iterations, keylen, digest, cb) {
  if (typeof digest === 'function') {
    cb = digest;
    digest = undefined;
  }
  // Bad arguments throw here, as in Node; only the work's own failure
  // goes to the callback.
  pbkdf2Args(password, salt, iterations, keylen, digest);
  U.validateFunction(cb, 'callback');
  let r, e = null;
  try { r = pbkdf2Sync(password, salt, iterations, keylen, digest); } catch (x) { e = x; }
  process.nextTick(cb, e, r);
}

const { webcrypto, subtle } = require('./internal/webcrypto_api.js');

// The cipher and signature modules build on streams: they load on first
// use, so that crypto.randomUUID() does not pay for readable-stream.
const keys = require('./internal/crypto_keys.js');
const kdf = require('./internal/crypto_kdf.js');
const cipherMod = () => require('./internal/crypto_cipher.js');
const signMod = () => require('./internal/crypto_sign.js');
const dhMod = () => require('./internal/crypto_dh.js');
function lazyFn(mod, name) {
  const f = { [name](...a) { return mod()[name](...a); } }[name];
  return f;
}

const constants = {
  OPENSSL_VERSION_NUMBER: 805306672, RSA_PKCS1_PADDING: 1, RSA_NO_PADDING: 3, RSA_PKCS1_OAEP_PADDING: 4,
  RSA_X931_PADDING: 5, RSA_PKCS1_PSS_PADDING: 6, RSA_PSS_SALTLEN_DIGEST: -1, RSA_PSS_SALTLEN_MAX_SIGN: -2,
  RSA_PSS_SALTLEN_AUTO: -2, POINT_CONVERSION_COMPRESSED: 2, POINT_CONVERSION_UNCOMPRESSED: 4,
  POINT_CONVERSION_HYBRID: 6,
};

const rsaAliases = ['RSA-MD5', 'RSA-SHA1', 'RSA-SHA224', 'RSA-SHA256', 'RSA-SHA3-224', 'RSA-SHA3-256', 'RSA-SHA3-384',
  'RSA-SHA3-512', 'RSA-SHA384', 'RSA-SHA512', 'RSA-SHA512/224', 'RSA-SHA512/256'];

module.exports = {
  randomBytes, pseudoRandomBytes: randomBytes, randomFillSync, randomFill, randomInt, randomUUID, getRandomValues,
  createHash, createHmac, hash, timingSafeEqual, pbkdf2Sync, pbkdf2,
  // Deprecated constructors, callable without new: Hash(algorithm,
  // options) and Hmac(algorithm, key, options).
  Hash: deprecate(U.callable(Hash, 'Hash', (a) => { U.validateString(a[0], 'algorithm'); return [a[0]]; }), 'crypto.Hash constructor is deprecated.', 'DEP0179'),
  Hmac: deprecate(U.callable(Hash, 'Hmac', (a) => { U.validateString(a[0], 'hmac'); return [a[0], a[1]]; }), 'crypto.Hmac constructor is deprecated.', 'DEP0181'),
  getFips: () => 0,
  setFips(enabled) {
    if (typeof enabled !== 'boolean' && typeof enabled !== 'number') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'val', ['boolean', 'number'], enabled);
    }
    // No FIPS provider in the sandbox.
    if (enabled) throw new Error('Cannot set FIPS mode in a non-FIPS build.');
  },
  getHashes: () => [...rsaAliases, ...hashes].sort(),
  getCiphers: lazyFn(cipherMod, 'getCiphers'), getCipherInfo: lazyFn(cipherMod, 'getCipherInfo'),
  getCurves: () => ['prime256v1', 'secp384r1', 'secp521r1'],
  webcrypto, subtle,
  constants,
  createCipheriv: lazyFn(cipherMod, 'createCipheriv'), createDecipheriv: lazyFn(cipherMod, 'createDecipheriv'),
  KeyObject: keys.KeyObject, createPrivateKey: keys.createPrivateKey, createPublicKey: keys.createPublicKey,
  createSecretKey: keys.createSecretKey, generateKeyPairSync: keys.generateKeyPairSync,
  generateKeyPair: keys.generateKeyPair, generateKeySync: keys.generateKeySync, generateKey: keys.generateKey,
  createSign: lazyFn(signMod, 'createSign'), createVerify: lazyFn(signMod, 'createVerify'),
  sign: lazyFn(signMod, 'sign'), verify: lazyFn(signMod, 'verify'),
  publicEncrypt: lazyFn(signMod, 'publicEncrypt'), privateDecrypt: lazyFn(signMod, 'privateDecrypt'),
  privateEncrypt: lazyFn(signMod, 'privateEncrypt'), publicDecrypt: lazyFn(signMod, 'publicDecrypt'),
  createECDH: lazyFn(signMod, 'createECDH'), diffieHellman: lazyFn(signMod, 'diffieHellman'),
  scrypt: kdf.scrypt, scryptSync: kdf.scryptSync, hkdf: kdf.hkdf, hkdfSync: kdf.hkdfSync,
  createDiffieHellman: lazyFn(dhMod, 'createDiffieHellman'), getDiffieHellman: lazyFn(dhMod, 'getDiffieHellman'),
  createDiffieHellmanGroup: lazyFn(dhMod, 'getDiffieHellman'),
};
for (const [name, mod] of [['Cipheriv', cipherMod], ['Decipheriv', cipherMod], ['Sign', signMod], ['Verify', signMod], ['ECDH', signMod]]) {
  let fn;
  Object.defineProperty(module.exports, name, {
    get: () => (fn ||= U.callable(mod()[name])), enumerable: true, configurable: true,
  });
}
// DiffieHellman and DiffieHellmanGroup construct without new themselves.
for (const name of ['DiffieHellman', 'DiffieHellmanGroup']) {
  Object.defineProperty(module.exports, name, { get: () => dhMod()[name], enumerable: true, configurable: true });
}
Object.defineProperty(module.exports, 'fips', {
  get: deprecate(() => 0, 'The crypto.fips is deprecated. Please use crypto.getFips()', 'DEP0093'),
  enumerable: true, configurable: true,
});
