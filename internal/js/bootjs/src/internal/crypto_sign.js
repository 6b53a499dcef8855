'use strict';
// Signatures (Sign, Verify, sign, verify), RSA encryption and ECDH. The
// data is hashed by the crypto module's own Hash; Go signs the digest.
const { Writable } = require('../stream.js');
const U = require('./crypto_util.js');
const K = require('./crypto_keys.js');
const { B, call, give, bytes, cryptoError, lazyBuffer, invalidValue, toBuf } = U;

function createHash(alg) { return require('../crypto.js').createHash(alg); }

function intOption(key, name) {
  if (key === null || typeof key !== 'object' || K.KeyObject && key instanceof K.KeyObject || U.isBufferLike(key)) return undefined;
  const v = key[name];
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < -(2 ** 31) || v > 2 ** 31 - 1) throw invalidValue(`options.${name}`, v);
  return v;
}

function dsaEncoding(key) {
  if (key === null || typeof key !== 'object' || key instanceof K.KeyObject || U.isBufferLike(key)) return false;
  const e = key.dsaEncoding;
  if (e === undefined || e === 'der') return false;
  if (e === 'ieee-p1363') return true;
  throw invalidValue('options.dsaEncoding', e);
}

function privateKeyOf(key) {
  const k = K.prepareKey(key, 'private');
  if (k.type !== 'private') throw cryptoError('ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE', `Invalid key object type ${k.type}, expected private.`);
  return k;
}

function publicKeyOf(key) {
  const k = K.prepareKey(key, 'public');
  if (k.type === 'secret') throw cryptoError('ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE', 'Invalid key object type secret, expected public.');
  return k;
}

// signRaw signs digest (or, for Ed25519, the message) with k.
function signRaw(k, hashName, digest, key) {
  const padding = intOption(key, 'padding');
  const salt = intOption(key, 'saltLength');
  const p1363 = dsaEncoding(key);
  give(0, K.keyBytes(k));
  give(1, digest);
  return bytes(call(B.signDigest, hashName, padding === undefined ? 0 : padding, salt === undefined ? null : salt, p1363));
}

function verifyRaw(k, hashName, digest, key, sig) {
  const padding = intOption(key, 'padding');
  const salt = intOption(key, 'saltLength');
  const p1363 = dsaEncoding(key);
  give(0, K.keyBytes(k));
  give(1, digest);
  give(2, sig);
  return call(B.verifyDigest, hashName, padding === undefined ? 0 : padding, salt === undefined ? null : salt, p1363);
}

const kSign = Symbol('kSign');

class Sign extends Writable {
  constructor(algorithm, options) {
    U.validateString(algorithm, 'algorithm');
    const name = U.digestName(algorithm);
    if (!name) throw cryptoError('ERR_CRYPTO_INVALID_DIGEST');
    super(options);
    Object.defineProperty(this, kSign, { value: { name, hash: createHash(name), done: false } });
  }

  _write(chunk, encoding, callback) {
    this.update(chunk, encoding);
    callback();
  }

  update(data, encoding) {
    const s = this[kSign];
    if (s.done) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Not initialised');
    if (typeof data !== 'string' && !ArrayBuffer.isView(data)) throw U.invalidType('data', `of type string or ${U.bufTypes}`, data);
    s.hash.update(data, encoding);
    return this;
  }

  sign(privateKey, outputEncoding) {
    const s = this[kSign];
    if (s.done) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Not initialised');
    if (!privateKey) throw cryptoError('ERR_CRYPTO_SIGN_KEY_REQUIRED', 'No key provided to sign');
    const k = privateKeyOf(privateKey);
    if (k.asymmetricKeyType === 'ed25519' || k.asymmetricKeyType === 'ed448') throw cryptoError('ERR_CRYPTO_UNSUPPORTED_OPERATION');
    s.done = true;
    const sig = signRaw(k, s.name, s.hash.digest(), privateKey);
    return U.encodeOut(sig, outputEncoding);
  }
}

class Verify extends Writable {
  constructor(algorithm, options) {
    U.validateString(algorithm, 'algorithm');
    const name = U.digestName(algorithm);
    if (!name) throw cryptoError('ERR_CRYPTO_INVALID_DIGEST');
    super(options);
    Object.defineProperty(this, kSign, { value: { name, hash: createHash(name), done: false } });
  }

  _write(chunk, encoding, callback) {
    this.update(chunk, encoding);
    callback();
  }

  update(data, encoding) {
    return Sign.prototype.update.call(this, data, encoding);
  }

  verify(object, signature, sigEncoding) {
    const s = this[kSign];
    if (s.done) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Not initialised');
    const k = publicKeyOf(object);
    const sig = toBuf(signature, 'signature', sigEncoding);
    if (k.asymmetricKeyType === 'ed25519' || k.asymmetricKeyType === 'ed448') throw cryptoError('ERR_CRYPTO_UNSUPPORTED_OPERATION');
    s.done = true;
    return verifyRaw(k, s.name, s.hash.digest(), object, sig);
  }
}

function createSign(algorithm, options) { return new Sign(algorithm, options); }
function createVerify(algorithm, options) { return new Verify(algorithm, options); }

function oneShotDigest(algorithm, data, k) {
  if (algorithm !== null && algorithm !== undefined) U.validateString(algorithm, 'algorithm');
  const u8 = toBuf(data, 'data', undefined, `an instance of ${'Buffer, TypedArray, or DataView'}`);
  const akt = k.asymmetricKeyType;
  if (akt === 'ed25519' || akt === 'ed448') {
    if (algorithm === null || algorithm === undefined) return ['', u8];
    const name = U.digestName(algorithm);
    if (!name) throw cryptoError('ERR_CRYPTO_INVALID_DIGEST', `Invalid digest: ${algorithm}`);
    return [name, u8];
  }
  let name = 'sha256';
  if (algorithm !== null && algorithm !== undefined) {
    name = U.digestName(algorithm);
    if (!name) throw cryptoError('ERR_CRYPTO_INVALID_DIGEST', `Invalid digest: ${algorithm}`);
  }
  return [name, createHash(name).update(u8).digest()];
}

function sign(algorithm, data, key, callback) {
  if (callback !== undefined) U.validateFunction(callback, 'callback');
  if (!key) throw cryptoError('ERR_CRYPTO_SIGN_KEY_REQUIRED', 'No key provided to sign');
  const k = privateKeyOf(key);
  const [name, digest] = oneShotDigest(algorithm, data, k);
  if (!callback) return signRaw(k, name, digest, key);
  let r, e = null;
  try { r = signRaw(k, name, digest, key); } catch (x) { e = x; }
  process.nextTick(callback, e, r);
  return undefined;
}

function verify(algorithm, data, key, signature, callback) {
  if (callback !== undefined) U.validateFunction(callback, 'callback');
  const k = publicKeyOf(key);
  const [name, digest] = oneShotDigest(algorithm, data, k);
  const sig = toBuf(signature, 'signature', undefined, `an instance of ${'ArrayBuffer, Buffer, TypedArray, or DataView'}`);
  if (!callback) return verifyRaw(k, name, digest, key, sig);
  let r, e = null;
  try { r = verifyRaw(k, name, digest, key, sig); } catch (x) { e = x; }
  process.nextTick(callback, e, r);
  return undefined;
}

// RSA encryption.
function rsaOp(op, key, buffer, defaultPadding, priv) {
  const k = priv ? privateKeyOf(key) : publicKeyOf(key);
  const padding = intOption(key, 'padding') ?? defaultPadding;
  let hash = 'sha1', label = null;
  if (key !== null && typeof key === 'object' && !(key instanceof K.KeyObject) && !U.isBufferLike(key)) {
    if (key.oaepHash !== undefined) {
      U.validateString(key.oaepHash, 'key.oaepHash');
      hash = U.digestName(key.oaepHash);
      if (!hash) throw cryptoError('ERR_OSSL_EVP_INVALID_DIGEST', 'error:0308010C:digital envelope routines::invalid digest');
    }
    if (key.oaepLabel !== undefined) label = toBuf(key.oaepLabel, 'key.oaepLabel', undefined, `an instance of ${'ArrayBuffer, Buffer, TypedArray, or DataView'}`);
  }
  if (op === 'privateDecrypt' && padding === 1) {
    throw cryptoError('ERR_INVALID_ARG_VALUE', 'RSA_PKCS1_PADDING is no longer supported for private decryption, this can be reverted with --security-revert=CVE-2023-46809');
  }
  const data = toBuf(buffer, 'buffer', undefined, `of type string or an instance of ${'ArrayBuffer, Buffer, TypedArray, or DataView'}`);
  give(0, K.keyBytes(k));
  give(1, data);
  give(2, label);
  return bytes(call(B.rsaCrypt, op, padding, hash));
}

const publicEncrypt = (key, buffer) => rsaOp('publicEncrypt', key, buffer, 4, false);
const privateDecrypt = (key, buffer) => rsaOp('privateDecrypt', key, buffer, 4, true);
const privateEncrypt = (key, buffer) => rsaOp('privateEncrypt', key, buffer, 1, true);
const publicDecrypt = (key, buffer) => rsaOp('publicDecrypt', key, buffer, 1, false);

// ECDH on the NIST curves.
const curveSizes = { prime256v1: 32, secp256r1: 32, secp384r1: 48, secp521r1: 66 };
const kECDH = Symbol('kECDH');

function checkFormat(format) {
  if (format === undefined || format === 'uncompressed') return 'uncompressed';
  if (format === 'compressed' || format === 'hybrid') return format;
  throw cryptoError('ERR_CRYPTO_ECDH_INVALID_FORMAT', `Invalid ECDH format: ${format}`);
}

function convertPoint(curve, pub, format) {
  if (format === 'uncompressed') return pub;
  give(0, pub);
  return bytes(call(B.ecdhConvert, curve, format));
}

class ECDH {
  constructor(curve) {
    U.validateString(curve, 'curve');
    if (!curveSizes[curve]) throw cryptoError('ERR_CRYPTO_INVALID_CURVE');
    Object.defineProperty(this, kECDH, { value: { curve, priv: null, pub: null } });
  }

  static convertKey(key, curve, inEnc, outEnc, format) {
    U.validateString(curve, 'curve');
    if (!curveSizes[curve]) throw cryptoError('ERR_CRYPTO_INVALID_CURVE');
    const f = checkFormat(format);
    give(0, toBuf(key, 'key', inEnc));
    const res = bytes(call(B.ecdhConvert, curve, f));
    return U.encodeOut(res, outEnc);
  }

  generateKeys(encoding, format) {
    const s = this[kECDH];
    s.pub = bytes(call(B.ecdhKeys, s.curve, true));
    s.priv = U.out(0);
    return this.getPublicKey(encoding, format);
  }

  computeSecret(key, inEnc, outEnc) {
    const s = this[kECDH];
    const peer = toBuf(key, 'key', inEnc);
    if (!s.priv) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Invalid state for operation computeSecret');
    give(0, s.priv);
    give(1, peer);
    return U.encodeOut(bytes(call(B.ecdhCompute, s.curve)), outEnc);
  }

  getPublicKey(encoding, format) {
    const s = this[kECDH];
    if (!s.pub) throw cryptoError('ERR_CRYPTO_OPERATION_FAILED', 'Failed to get ECDH public key');
    return U.encodeOut(convertPoint(s.curve, s.pub, checkFormat(format)), encoding);
  }

  getPrivateKey(encoding) {
    const s = this[kECDH];
    if (!s.priv) throw cryptoError('ERR_CRYPTO_OPERATION_FAILED', 'Failed to get ECDH private key');
    return U.encodeOut(lazyBuffer().from(s.priv), encoding);
  }

  setPrivateKey(key, encoding) {
    const s = this[kECDH];
    let k = toBuf(key, 'key', encoding);
    const size = curveSizes[s.curve];
    if (k.length < size) {
      const p = new Uint8Array(size);
      p.set(k, size - k.length);
      k = p;
    }
    give(0, k);
    s.pub = bytes(call(B.ecdhKeys, s.curve, false));
    s.priv = U.out(0);
    return this;
  }

  setPublicKey(key, encoding) {
    const s = this[kECDH];
    const k = toBuf(key, 'key', encoding);
    give(0, k);
    s.pub = bytes(call(B.ecdhConvert, s.curve, 'uncompressed'));
    return this;
  }
}

function createECDH(curve) { return new ECDH(curve); }

function diffieHellman(options) {
  U.validateObject(options, 'options');
  const { privateKey, publicKey } = options;
  if (!(privateKey instanceof K.KeyObject)) throw invalidValue('options.privateKey', privateKey);
  if (!(publicKey instanceof K.KeyObject)) throw invalidValue('options.publicKey', publicKey);
  if (privateKey.type !== 'private') throw cryptoError('ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE', `Invalid key object type ${privateKey.type}, expected private.`);
  if (publicKey.type !== 'public' && publicKey.type !== 'private') throw cryptoError('ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE', `Invalid key object type ${publicKey.type}, expected private or public.`);
  const a = privateKey.asymmetricKeyType, b = publicKey.asymmetricKeyType;
  if (a !== b || (a !== 'ec' && a !== 'x25519' && a !== 'x448')) throw cryptoError('ERR_CRYPTO_INCOMPATIBLE_KEY', `Incompatible key types for Diffie-Hellman: ${a} and ${b}`);
  give(0, K.keyBytes(privateKey));
  give(1, K.keyBytes(publicKey));
  try {
    return bytes(call(B.diffieHellman));
  } catch (e) {
    if (e && e.code === 'ERR_CRYPTO_INCOMPATIBLE_KEY') throw cryptoError('ERR_CRYPTO_INCOMPATIBLE_KEY', `Incompatible key types for Diffie-Hellman: ${a} and ${b}`);
    throw e;
  }
}

module.exports = {
  Sign, Verify, createSign, createVerify, sign, verify, publicEncrypt, privateDecrypt, privateEncrypt, publicDecrypt,
  ECDH, createECDH, diffieHellman,
};
