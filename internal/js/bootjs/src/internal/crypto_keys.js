'use strict';
// KeyObject and key generation, import and export. A key's material
// stays in JavaScript: secret keys as bytes, asymmetric keys as their
// canonical DER (PKCS #8 or SPKI), which Go parses (with a small cache)
// for each operation.
const U = require('./crypto_util.js');
const { B, call, give, bytes, out, cryptoError, lazyBuffer, invalidValue } = U;

const data = new WeakMap();
const kKeyType = Symbol('kKeyType');
const kAsymmetricKeyType = Symbol('kAsymmetricKeyType');
const token = Symbol('internal');

class KeyObject {
  constructor(type, handle) {
    if (type !== 'secret' && type !== 'public' && type !== 'private') throw invalidValue('type', type);
    if (handle !== token) throw U.invalidType('handle', 'of type object', handle);
    this[kKeyType] = type;
  }

  get type() { return this[kKeyType]; }

  static from(key) {
    // The key behind a CryptoKey (the same object each time, as in Node).
    const ko = require('./webcrypto.js').keyObjectOf(key);
    if (!ko) throw U.invalidType('key', 'an instance of CryptoKey', key);
    return ko;
  }

  toCryptoKey(algorithm, extractable, keyUsages) {
    return require('./webcrypto.js').toCryptoKey(this, algorithm, extractable, keyUsages);
  }

  equals(otherKeyObject) {
    if (!(otherKeyObject instanceof KeyObject)) throw U.invalidType('otherKeyObject', 'an instance of KeyObject', otherKeyObject);
    if (otherKeyObject === this) return true;
    const a = data.get(this), b = data.get(otherKeyObject);
    if (!a || !b || a.type !== b.type) return false;
    const x = a.bytes, y = b.bytes;
    if (x.length !== y.length) return false;
    let d = 0;
    for (let i = 0; i < x.length; i++) d |= x[i] ^ y[i];
    return d === 0;
  }

  get [Symbol.toStringTag]() { return 'KeyObject'; }
}

class SecretKeyObject extends KeyObject {
  constructor(handle) { super('secret', handle); }

  get symmetricKeySize() { return data.get(this).bytes.length; }

  export(options) {
    const d = data.get(this);
    if (options !== undefined) U.validateObject(options, 'options');
    const format = options && options.format;
    if (format === 'jwk') return { kty: 'oct', k: lazyBuffer().from(d.bytes).toString('base64url') };
    if (format !== undefined && format !== 'buffer') throw invalidValue('options.format', format);
    return lazyBuffer().from(d.bytes);
  }
}

class AsymmetricKeyObject extends KeyObject {
  get asymmetricKeyType() {
    // Node caches the type on the object on first use (util.inspect
    // shows it from then on).
    const akt = data.get(this).info.akt;
    if (!Object.prototype.hasOwnProperty.call(this, kAsymmetricKeyType)) this[kAsymmetricKeyType] = akt;
    return akt;
  }

  get asymmetricKeyDetails() {
    const i = data.get(this).info;
    if (i.akt === 'rsa') return { modulusLength: i.modulusLength, publicExponent: BigInt(i.publicExponent) };
    if (i.akt === 'ec') return { namedCurve: i.namedCurve };
    return {};
  }

  export(options) {
    const d = data.get(this);
    U.validateObject(options, 'options');
    const { format, type } = options;
    if (format === 'jwk') {
      if (options.passphrase !== undefined) throw cryptoError('ERR_CRYPTO_INCOMPATIBLE_KEY_OPTIONS', 'The selected key encoding jwk does not support encryption.');
      give(0, d.bytes);
      return JSON.parse(bytes(call(B.keyExport, 'jwk', '')).toString('utf8'));
    }
    if (format !== 'pem' && format !== 'der') throw invalidValue('options.format', format);
    checkEncodingType(d.type, d.info.akt, type, 'options.type');
    let cipher = '';
    if (d.type === 'private' && (options.cipher !== undefined || options.passphrase !== undefined)) {
      const { passphrase } = options;
      cipher = options.cipher;
      if (typeof cipher !== 'string') throw invalidValue('options.cipher', cipher);
      if (typeof passphrase !== 'string' && !U.isBufferLike(passphrase)) throw invalidValue('options.passphrase', passphrase);
      if (format === 'der' && type !== 'pkcs8') {
        throw cryptoError('ERR_CRYPTO_INCOMPATIBLE_KEY_OPTIONS', `The selected key encoding ${type} does not support encryption.`);
      }
      give(1, passphraseBytes(passphrase));
    }
    give(0, d.bytes);
    const res = bytes(call(B.keyExport, format, type, cipher));
    return format === 'pem' ? res.toString('latin1') : res;
  }
}

class PublicKeyObject extends AsymmetricKeyObject {
  constructor(handle) { super('public', handle); }
}

class PrivateKeyObject extends AsymmetricKeyObject {
  constructor(handle) { super('private', handle); }
}

function passphraseBytes(p) { return typeof p === 'string' ? lazyBuffer().from(p, 'utf8') : U.asU8(p); }

function checkEncodingType(kind, akt, type, name) {
  const ok = kind === 'public' ? ['pkcs1', 'spki'] : ['pkcs1', 'pkcs8', 'sec1'];
  if (!ok.includes(type)) throw invalidValue(name, type);
  if (type === 'pkcs1' && akt !== 'rsa') throw cryptoError('ERR_CRYPTO_INCOMPATIBLE_KEY_OPTIONS', 'The selected key encoding pkcs1 can only be used for RSA keys.');
  if (type === 'sec1' && akt !== 'ec') throw cryptoError('ERR_CRYPTO_INCOMPATIBLE_KEY_OPTIONS', 'The selected key encoding sec1 can only be used for EC keys.');
}

function makeSecret(u8) {
  const k = new SecretKeyObject(token);
  data.set(k, { type: 'secret', bytes: new Uint8Array(u8) });
  return k;
}

// makeAsym wraps the key Go just described (info JSON) and put in out
// slot i.
function makeAsym(infoJSON, i) {
  const info = JSON.parse(infoJSON);
  const der = new Uint8Array(out(i));
  const k = info.type === 'private' ? new PrivateKeyObject(token) : new PublicKeyObject(token);
  data.set(k, { type: info.type, bytes: der, info });
  return k;
}

function keyBytes(k) { return data.get(k).bytes; }
function secretBytes(k) { return new Uint8Array(data.get(k).bytes); }
function keyInfo(k) { return data.get(k).info; }

const keyArgTypes = 'of type string or an instance of ArrayBuffer, Buffer, TypedArray, DataView, KeyObject, or CryptoKey';

function validateJWK(jwk, priv) {
  U.validateObject(jwk, 'key.key');
  const str = (f) => { if (typeof jwk[f] !== 'string') throw U.invalidType(`key.${f}`, 'of type string', jwk[f]); };
  switch (jwk.kty) {
    case 'RSA':
      str('n'); str('e');
      if (priv) ['d', 'p', 'q', 'dp', 'dq', 'qi'].forEach(str);
      break;
    case 'EC':
      str('crv');
      if (!['P-256', 'secp256k1', 'P-384', 'P-521'].includes(jwk.crv)) throw invalidValue('key.crv', jwk.crv, "must be one of: 'P-256', 'secp256k1', 'P-384', 'P-521'");
      str('x'); str('y');
      if (priv) str('d');
      if (jwk.crv === 'secp256k1') throw cryptoError('ERR_FEATURE_UNAVAILABLE_ON_PLATFORM', 'The secp256k1 curve is not supported in this sandbox');
      break;
    case 'OKP':
      str('crv');
      if (!['Ed25519', 'Ed448', 'X25519', 'X448'].includes(jwk.crv)) throw invalidValue('key.crv', jwk.crv, "must be one of: 'Ed25519', 'Ed448', 'X25519', 'X448'");
      str('x');
      if (priv) str('d');
      break;
    default:
      throw invalidValue('key.kty', jwk.kty, "must be one of: 'RSA', 'EC', 'OKP'");
  }
}

// prepareKey reads the key argument of createPrivateKey/createPublicKey,
// sign/verify and the RSA functions: a KeyObject, or key material with
// its encoding. kind is 'private' or 'public' (a public context also
// takes private material). It returns a KeyObject.
function prepareKey(key, kind, argName = 'key') {
  if (key instanceof KeyObject) return key;
  let material = key, format = 'pem', type, encoding, passphrase;
  if (typeof key !== 'string' && !U.isBufferLike(key)) {
    if (key === null || typeof key !== 'object') throw U.invalidType(argName, keyArgTypes, key);
    material = key.key;
    if (material instanceof KeyObject) return material;
    if (key.format !== undefined) format = key.format;
    type = key.type;
    encoding = key.encoding;
    passphrase = key.passphrase;
    if (passphrase !== undefined && typeof passphrase !== 'string' && !U.isBufferLike(passphrase)) {
      throw invalidValue('options.passphrase', passphrase);
    }
    if (format !== 'pem' && format !== 'der' && format !== 'jwk') throw invalidValue('options.format', format);
    if (format !== 'jwk' && typeof material !== 'string' && !U.isBufferLike(material)) {
      throw U.invalidType('key.key', keyArgTypes, material);
    }
  }
  if (format === 'jwk') {
    validateJWK(material, kind === 'private');
    give(0, lazyBuffer().from(JSON.stringify(material)));
    return makeAsym(call(B.keyImport, kind, 'jwk', ''), 0);
  }
  if (format === 'der') {
    const ok = kind === 'private' ? ['pkcs1', 'pkcs8', 'sec1'] : ['pkcs1', 'spki', 'pkcs8', 'sec1'];
    if (!ok.includes(type)) throw invalidValue('options.type', type);
  }
  const u8 = typeof material === 'string' ? lazyBuffer().from(material, encoding || 'utf8') : U.asU8(material);
  give(0, u8);
  if (passphrase !== undefined) give(1, passphraseBytes(passphrase));
  return makeAsym(call(B.keyImport, kind, format, type || '', passphrase !== undefined), 0);
}

function createPrivateKey(key) {
  if (key instanceof KeyObject || (key && typeof key === 'object' && !U.isBufferLike(key) && key.key instanceof KeyObject)) {
    throw U.invalidType('key', 'of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView', key instanceof KeyObject ? key : key.key);
  }
  const k = prepareKey(key, 'private');
  return k;
}

function createPublicKey(key) {
  const k0 = key instanceof KeyObject ? key : (key && typeof key === 'object' && key.key instanceof KeyObject ? key.key : null);
  if (k0) {
    if (k0.type !== 'private') throw cryptoError('ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE', `Invalid key object type ${k0.type}, expected private.`);
    return publicFromPrivate(k0);
  }
  return prepareKey(key, 'public');
}

function publicFromPrivate(k) {
  give(0, keyBytes(k));
  return makeAsym(call(B.keyPublic), 0);
}

function createSecretKey(key, encoding) {
  if (typeof key === 'string') return makeSecret(lazyBuffer().from(key, encoding || 'utf8'));
  if (!U.isBufferLike(key)) throw U.invalidType('key', 'an instance of ArrayBuffer, Buffer, TypedArray, or DataView', key);
  return makeSecret(U.asU8(key));
}

const keyTypes = ['rsa', 'rsa-pss', 'dsa', 'ec', 'ed25519', 'ed448', 'x25519', 'x448', 'dh'];

function checkEncodingOpts(enc, kind, akt, name) {
  if (enc === undefined || enc === null) return undefined;
  if (typeof enc !== 'object') throw invalidValue(name, enc);
  const { format, type } = enc;
  if (format === 'jwk') return enc;
  if (format !== 'pem' && format !== 'der') throw invalidValue(`${name}.format`, format);
  checkEncodingType(kind, akt, type, `${name}.type`);
  return enc;
}

function generateKeyPairSync(type, options) {
  U.validateString(type, 'type');
  if (!keyTypes.includes(type)) throw invalidValue('type', type, 'must be a supported key type');
  let opts = {};
  if (type === 'rsa' || type === 'rsa-pss' || type === 'dsa' || type === 'ec' || type === 'dh') {
    U.validateObject(options, 'options');
  } else if (options !== undefined) {
    U.validateObject(options, 'options');
  }
  options = options || {};
  if (type === 'rsa' || type === 'rsa-pss') {
    const { modulusLength, publicExponent } = options;
    if (typeof modulusLength !== 'number') throw U.invalidType('options.modulusLength', 'of type number', modulusLength);
    U.validateInt(modulusLength, 'options.modulusLength', 0, 2 ** 32 - 1);
    if (publicExponent !== undefined) U.validateInt(publicExponent, 'options.publicExponent', 0, 2 ** 32 - 1);
    opts = { modulusLength, publicExponent: publicExponent || 0 };
  } else if (type === 'ec') {
    U.validateString(options.namedCurve, 'options.namedCurve');
    const { paramEncoding } = options;
    if (paramEncoding !== undefined && paramEncoding !== 'named' && paramEncoding !== 'explicit') {
      throw invalidValue('options.paramEncoding', paramEncoding);
    }
    opts = { namedCurve: options.namedCurve };
  }
  const akt = type;
  const pubEnc = checkEncodingOpts(options.publicKeyEncoding, 'public', akt, 'options.publicKeyEncoding');
  const privEnc = checkEncodingOpts(options.privateKeyEncoding, 'private', akt, 'options.privateKeyEncoding');
  if (privEnc && privEnc.format !== 'jwk' && (privEnc.cipher !== undefined || privEnc.passphrase !== undefined)) {
    // Checked before the key is made, as Node does.
    if (typeof privEnc.cipher !== 'string') throw invalidValue('options.privateKeyEncoding.cipher', privEnc.cipher);
    if (typeof privEnc.passphrase !== 'string' && !U.isBufferLike(privEnc.passphrase)) {
      throw invalidValue('options.privateKeyEncoding.passphrase', privEnc.passphrase);
    }
    if (privEnc.format === 'der' && privEnc.type !== 'pkcs8') {
      throw cryptoError('ERR_CRYPTO_INCOMPATIBLE_KEY_OPTIONS', `The selected key encoding ${privEnc.type} does not support encryption.`);
    }
  }
  give(0, lazyBuffer().from(JSON.stringify(opts)));
  const infoJSON = call(B.keyGenerate, type);
  const privateKey = makeAsym(infoJSON, 0);
  const pubInfo = JSON.stringify({ ...JSON.parse(infoJSON), type: 'public' });
  const publicKey = makeAsym(pubInfo, 1);
  return {
    publicKey: pubEnc ? publicKey.export(pubEnc) : publicKey,
    privateKey: privEnc ? privateKey.export(privEnc) : privateKey,
  };
}

function generateKeyPair(type, options, callback) {
  if (typeof options === 'function') { callback = options; options = undefined; }
  U.validateFunction(callback, 'callback');
  let pair;
  try {
    pair = generateKeyPairSync(type, options);
  } catch (e) {
    // Argument errors are thrown, as Node's validation does; failures of
    // the generation itself go to the callback.
    const sync = ['ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_CRYPTO_INVALID_CURVE', 'ERR_CRYPTO_INCOMPATIBLE_KEY_OPTIONS'];
    if (e && (sync.includes(e.code) || (e.code === 'ERR_OUT_OF_RANGE' && !/sandbox/.test(e.message)))) throw e;
    process.nextTick(callback, e);
    return;
  }
  process.nextTick(callback, null, pair.publicKey, pair.privateKey);
}

function generateKeySync(type, options) {
  U.validateString(type, 'type');
  U.validateObject(options, 'options');
  const { length } = options;
  if (type === 'hmac') {
    U.validateInt(length, 'options.length', 8, 2 ** 31 - 1);
  } else if (type === 'aes') {
    if (![128, 192, 256].includes(length)) throw invalidValue('options.length', length, 'must be one of: 128, 192, 256');
  } else {
    throw invalidValue('type', type, "must be a supported key type");
  }
  return makeSecret(require('../crypto.js').randomBytes(Math.floor(length / 8)));
}

function generateKey(type, options, callback) {
  U.validateFunction(callback, 'callback');
  const k = generateKeySync(type, options);
  process.nextTick(callback, null, k);
}

module.exports = {
  KeyObject, SecretKeyObject, PublicKeyObject, PrivateKeyObject, createPrivateKey, createPublicKey, createSecretKey,
  generateKeyPairSync, generateKeyPair, generateKeySync, generateKey, prepareKey, publicFromPrivate, keyBytes,
  secretBytes, keyInfo, makeSecret,
};
