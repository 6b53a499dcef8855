'use strict';
// Web Crypto (crypto.subtle) on the node:crypto KeyObjects, as Node's
// lib/internal/crypto/webcrypto.js builds it on its own: a CryptoKey wraps
// a KeyObject with the algorithm, usages and extractability; each method
// normalizes its algorithm, checks the key, and runs the node:crypto
// operation. It loads on the first call of a subtle method, so that
// crypto.randomUUID() does not pay for it. Errors are Node's DOMExceptions
// (names and messages as Node 20 and 22 give them).
const U = require('./crypto_util.js');
const K = require('./crypto_keys.js');
const P = require('./primordials.js');
const { DOMException } = require('./web.js');

const nodeCrypto = () => require('../crypto.js');
const signMod = () => require('./crypto_sign.js');
const Buf = () => U.lazyBuffer();

function dom(msg, name) { return new DOMException(msg, name); }
function typeErr(code, msg) { return U.cryptoError(code, msg, TypeError); }

// copy takes a BufferSource as it is at the call (later changes by the
// caller must not reach the operation).
function copy(v, what) {
  if (!P.ArrayBufferIsView(v) && !(v instanceof P.ArrayBuffer)) throw typeErr('ERR_INVALID_ARG_TYPE', `${what} is not instance of ArrayBuffer, Buffer, TypedArray, or DataView.`);
  return new P.Uint8Array(U.asU8(v));
}
function argData(v, op, nth) { return copy(v, `Failed to execute '${op}' on 'SubtleCrypto': ${nth} argument`); }
// Typed-array methods as captured at start: the bytes here may be key
// material, which a guest's patched prototype must never be handed.
function set(dst, src, off = 0) { P.TypedArrayPrototypeSet(dst, src, off); }
function sub(u8, a, b) { return P.TypedArrayPrototypeSubarray(u8, a, b); }
function toAB(u8) {
  const ab = new P.ArrayBuffer(u8.length);
  P.TypedArrayPrototypeSet(new P.Uint8Array(ab), u8, 0);
  return ab;
}
const b64u = (u8) => Buf().from(u8).toString('base64url');
const unb64u = (s) => new P.Uint8Array(Buf().from(s, 'base64url'));

// CryptoKey: its slots live in a WeakMap, out of the guest's reach.
const slots = new P.WeakMapCtor();
const kToken = Symbol('CryptoKey');
function slot(k) { return P.WeakMapPrototypeGet(slots, k); }

class CryptoKey {
  constructor(token) {
    if (token !== kToken) throw typeErr('ERR_ILLEGAL_CONSTRUCTOR', 'Illegal constructor');
  }
  get type() { return s(this).keyObject.type; }
  get extractable() { return s(this).extractable; }
  get algorithm() { return s(this).algorithm; }
  // A fresh array each time, as in Node 22 (Node 20 gave the same one).
  get usages() { return [...s(this).usages]; }
  get [Symbol.toStringTag]() { return 'CryptoKey'; }
  [Symbol.for('nodejs.util.inspect.custom')](depth, options, inspect) {
    if (depth < 0) return this;
    const o = { type: this.type, extractable: this.extractable, algorithm: this.algorithm, usages: this.usages };
    const body = (inspect || require('../util.js').inspect)(o, { ...options, depth: options.depth == null ? null : options.depth - 1 });
    return `CryptoKey ${body}`;
  }
}
function s(k) {
  const d = slot(k);
  if (!d) throw typeErr('ERR_INVALID_THIS', 'Value of "this" must be of type CryptoKey');
  return d;
}
function makeKey(keyObject, algorithm, usages, extractable) {
  const k = new CryptoKey(kToken);
  P.WeakMapPrototypeSet(slots, k, { keyObject, algorithm, usages: [...usages], extractable: !!extractable });
  return k;
}
function isCryptoKey(v) { return v !== null && typeof v === 'object' && !!slot(v); }

// Algorithm names per operation, and the members each takes.
const names = ['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'RSA-OAEP', 'ECDSA', 'ECDH', 'Ed25519', 'Ed448', 'X25519', 'X448', 'AES-CTR', 'AES-CBC',
  'AES-GCM', 'AES-KW', 'HMAC', 'SHA-1', 'SHA-256', 'SHA-384', 'SHA-512', 'HKDF', 'PBKDF2'];
const rsa = ['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'RSA-OAEP'];
const cfrg = ['Ed25519', 'Ed448', 'X25519', 'X448'];
// The raw (and JWK "x") length of each CFRG curve's keys.
const cfrgBytes = { Ed25519: 32, X25519: 32, Ed448: 57, X448: 56 };
const aes = ['AES-CTR', 'AES-CBC', 'AES-GCM', 'AES-KW'];
const ops = {
  digest: ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512'],
  generateKey: [...rsa, 'ECDSA', 'ECDH', 'Ed25519', 'Ed448', 'X25519', 'X448', ...aes, 'HMAC'],
  importKey: [...rsa, 'ECDSA', 'ECDH', 'Ed25519', 'Ed448', 'X25519', 'X448', ...aes, 'HMAC', 'HKDF', 'PBKDF2'],
  sign: ['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'ECDSA', 'Ed25519', 'Ed448', 'HMAC'],
  verify: ['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'ECDSA', 'Ed25519', 'Ed448', 'HMAC'],
  encrypt: ['RSA-OAEP', 'AES-CTR', 'AES-CBC', 'AES-GCM'],
  decrypt: ['RSA-OAEP', 'AES-CTR', 'AES-CBC', 'AES-GCM'],
  deriveBits: ['ECDH', 'X25519', 'X448', 'HKDF', 'PBKDF2'],
  'get key length': ['AES-CTR', 'AES-CBC', 'AES-GCM', 'AES-KW', 'HMAC', 'HKDF', 'PBKDF2'],
  wrapKey: ['RSA-OAEP', 'AES-CTR', 'AES-CBC', 'AES-GCM', 'AES-KW'],
  unwrapKey: ['RSA-OAEP', 'AES-CTR', 'AES-CBC', 'AES-GCM', 'AES-KW'],
};
const canon = new P.MapCtor();
for (const n of names) P.MapPrototypeSet(canon, n.toLowerCase(), n);

// Dictionary members: [member, kind, required].
const dicts = {
  generateKey: {
    'RSA*': ['RsaHashedKeyGenParams', [['modulusLength', 'int', true], ['publicExponent', 'bigint', true], ['hash', 'hash', true]]],
    ECDSA: ['EcKeyGenParams', [['namedCurve', 'string', true]]],
    ECDH: ['EcKeyGenParams', [['namedCurve', 'string', true]]],
    'AES*': ['AesKeyGenParams', [['length', 'int', true]]],
    HMAC: ['HmacKeyGenParams', [['hash', 'hash', true], ['length', 'int', false]]],
  },
  importKey: {
    'RSA*': ['RsaHashedImportParams', [['hash', 'hash', true]]],
    ECDSA: ['EcKeyImportParams', [['namedCurve', 'string', true]]],
    ECDH: ['EcKeyImportParams', [['namedCurve', 'string', true]]],
    HMAC: ['HmacImportParams', [['hash', 'hash', true], ['length', 'int', false]]],
  },
  sign: {
    'RSA-PSS': ['RsaPssParams', [['saltLength', 'int', true]]],
    ECDSA: ['EcdsaParams', [['hash', 'hash', true]]],
    Ed448: ['Ed448Params', [['context', 'buffer', false]]],
  },
  encrypt: {
    'RSA-OAEP': ['RsaOaepParams', [['label', 'buffer', false]]],
    'AES-CTR': ['AesCtrParams', [['counter', 'buffer', true], ['length', 'octet', true]]],
    'AES-CBC': ['AesCbcParams', [['iv', 'buffer', true]]],
    'AES-GCM': ['AesGcmParams', [['iv', 'buffer', true], ['tagLength', 'octet', false], ['additionalData', 'buffer', false]]],
  },
  deriveBits: {
    ECDH: ['EcdhKeyDeriveParams', [['public', 'key', true]]],
    X25519: ['EcdhKeyDeriveParams', [['public', 'key', true]]],
    X448: ['EcdhKeyDeriveParams', [['public', 'key', true]]],
    HKDF: ['HkdfParams', [['hash', 'hash', true], ['salt', 'buffer', true], ['info', 'buffer', true]]],
    PBKDF2: ['Pbkdf2Params', [['hash', 'hash', true], ['salt', 'buffer', true], ['iterations', 'int', true]]],
  },
  'get key length': {
    'AES*': ['AesDerivedKeyParams', [['length', 'int', true]]],
    HMAC: ['HmacImportParams', [['hash', 'hash', true], ['length', 'int', false]]],
  },
};
dicts.verify = dicts.sign;
dicts.decrypt = dicts.encrypt;
dicts.wrapKey = dicts.encrypt;
dicts.unwrapKey = dicts.encrypt;

function dictFor(op, name) {
  const d = dicts[op];
  if (!d) return null;
  return d[name] || (rsa.includes(name) && d['RSA*']) || (aes.includes(name) && d['AES*']) || null;
}

function normalize(alg, op) {
  // AlgorithmIdentifier is (object or DOMString): anything else is a string.
  if (alg === null || (typeof alg !== 'object' && typeof alg !== 'function')) return normalize({ name: `${alg}` }, op);
  if (alg.name === undefined) {
    throw typeErr('ERR_MISSING_OPTION', "Failed to normalize algorithm: passed algorithm can not be converted to 'Algorithm' because 'name' is required in 'Algorithm'.");
  }
  const name = P.MapPrototypeGet(canon, `${alg.name}`.toLowerCase());
  if (!name || !ops[op].includes(name)) throw dom('Unrecognized algorithm name', 'NotSupportedError');
  const out = { name };
  const d = dictFor(op, name);
  if (!d) return out;
  const [dictName, members] = d;
  for (const [m, kind, required] of members) {
    const v = alg[m];
    if (v === undefined) {
      if (required) throw typeErr('ERR_MISSING_OPTION', `Failed to normalize algorithm: passed algorithm can not be converted to '${dictName}' because '${m}' is required in '${dictName}'.`);
      continue;
    }
    const where = `Failed to normalize algorithm: ${m} in ${dictName}`;
    switch (kind) {
      case 'hash': out[m] = normalize(v, 'digest'); break;
      case 'buffer': out[m] = copy(v, where); break;
      case 'string': out[m] = `${v}`; break;
      case 'key':
        if (!isCryptoKey(v)) throw typeErr('ERR_INVALID_ARG_TYPE', `${where} is not of type CryptoKey.`);
        out[m] = v;
        break;
      case 'bigint':
        if (!(v instanceof P.Uint8Array)) throw typeErr('ERR_INVALID_ARG_TYPE', `${where} is not instance of Uint8Array.`);
        out[m] = new P.Uint8Array(v);
        break;
      case 'octet': case 'int': {
        // WebIDL's unsigned integers: NaN and infinities are 0, the rest
        // wraps modulo the type's range.
        const n = Number(v);
        const t = Number.isFinite(n) ? Math.trunc(n) : 0;
        const max = kind === 'octet' ? 255 : 2 ** 32 - 1;
        out[m] = ((t % (max + 1)) + (max + 1)) % (max + 1);
        break;
      }
    }
  }
  return out;
}

const blockBits = { 'SHA-1': 512, 'SHA-256': 512, 'SHA-384': 1024, 'SHA-512': 1024 };
const hashBytes = { 'SHA-1': 20, 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };
const nodeHash = (h) => h.name.replace('-', '').toLowerCase();
const curves = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };
const curveNames = { prime256v1: 'P-256', secp256r1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };
const curveBytes = { 'P-256': 32, 'P-384': 48, 'P-521': 66 };

// Usages each kind of key may have: [secret or private, public].
function allowedUsages(name) {
  switch (name) {
    case 'HMAC': return [['sign', 'verify']];
    case 'AES-KW': return [['wrapKey', 'unwrapKey']];
    case 'AES-CTR': case 'AES-CBC': case 'AES-GCM': return [['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']];
    case 'PBKDF2': case 'HKDF': return [['deriveKey', 'deriveBits']];
    case 'ECDSA': case 'Ed25519': case 'Ed448': case 'RSASSA-PKCS1-v1_5': case 'RSA-PSS': return [['sign'], ['verify']];
    case 'ECDH': case 'X25519': case 'X448': return [['deriveKey', 'deriveBits'], []];
    case 'RSA-OAEP': return [['decrypt', 'unwrapKey'], ['encrypt', 'wrapKey']];
  }
  return [[]];
}
// usageWord is the key's noun in Node's message, which differs between
// generateKey and importKey ("a RSA" and "an RSA-OAEP", "an ECDSA" and
// "a ECDSA").
function usageWord(name, generating) {
  if (name === 'HMAC') return 'an HMAC';
  if (aes.includes(name)) return 'an AES';
  if (rsa.includes(name)) return generating ? 'a RSA' : `an ${name}`;
  if (generating && (name === 'ECDSA' || name === 'ECDH' || cfrg.includes(name))) return `an ${name}`;
  return `a ${name}`;
}
function checkUsages(name, usages, which, generating) {
  const allowed = which === undefined ? [].concat(...allowedUsages(name)) : allowedUsages(name)[which];
  for (const u of usages) {
    if (!allowed.includes(u)) throw dom(`Unsupported key usage for ${usageWord(name, generating)} key`, 'SyntaxError');
  }
}
// subset keeps the usages of list in want's canonical order (Node's
// getUsagesUnion), for the two halves of a generated pair.
function subset(usages, want) { return want.filter((u) => usages.includes(u)); }

function asymType(name) {
  if (rsa.includes(name)) return 'rsa';
  if (name === 'ECDSA' || name === 'ECDH') return 'ec';
  return name.toLowerCase();
}

function algorithmOf(name, ko, params) {
  if (rsa.includes(name)) {
    const d = K.keyInfo(ko);
    let e = d.publicExponent;
    const bytes = [];
    while (e > 0) { bytes.unshift(e & 0xff); e = Math.floor(e / 256); }
    return { name, modulusLength: d.modulusLength, publicExponent: new P.Uint8Array(bytes), hash: { name: params.hash.name } };
  }
  if (name === 'ECDSA' || name === 'ECDH') return { name, namedCurve: params.namedCurve };
  return { name };
}

// --- generateKey

async function generateKey(algorithm, extractable, keyUsages) {
  if (arguments.length < 3) throw missingArgs('generateKey', 3, arguments.length);
  const alg = normalize(algorithm, 'generateKey');
  const name = alg.name;
  const usages = usageList(keyUsages, 'generateKey', '3rd');
  checkUsages(name, usages, undefined, true);
  if (aes.includes(name) || name === 'HMAC') {
    let bits;
    if (name === 'HMAC') {
      bits = alg.length === undefined ? blockBits[alg.hash.name] : alg.length;
      if (bits === 0) throw dom('Zero-length key is not supported', 'OperationError');
    } else {
      bits = alg.length;
      if (bits !== 128 && bits !== 192 && bits !== 256) throw dom('AES key length must be 128, 192, or 256 bits', 'OperationError');
    }
    if (usages.length === 0) throw dom('Usages cannot be empty when creating a key.', 'SyntaxError');
    const ko = K.makeSecret(nodeCrypto().randomBytes(Math.ceil(bits / 8)));
    // Node's order: length before hash here, after it on import.
    const a = name === 'HMAC' ? { name, length: bits, hash: { name: alg.hash.name } } : { name, length: bits };
    return makeKey(ko, a, dedupe(usages), extractable);
  }
  const [privAllowed, pubAllowed] = allowedUsages(name);
  const privUsages = subset(usages, privAllowed), pubUsages = subset(usages, pubAllowed);
  let gen;
  if (rsa.includes(name)) {
    let e = 0;
    for (const b of alg.publicExponent) e = e * 256 + b;
    if (e > 0xffffffff) throw dom('The publicExponent must be equivalent to an unsigned 32-bit value', 'OperationError');
    gen = () => K.generateKeyPairSync('rsa', { modulusLength: alg.modulusLength, publicExponent: e });
  } else if (name === 'ECDSA' || name === 'ECDH') {
    if (!curves[alg.namedCurve]) throw dom('Unrecognized namedCurve', 'NotSupportedError');
    gen = () => K.generateKeyPairSync('ec', { namedCurve: curves[alg.namedCurve] });
  } else {
    gen = () => K.generateKeyPairSync(name.toLowerCase());
  }
  if (privUsages.length === 0) throw dom('Usages cannot be empty when creating a key.', 'SyntaxError');
  let pair;
  try {
    pair = gen();
  } catch (e) {
    // What this sandbox cannot generate (RSA exponents of 2^31 and more)
    // says so; the rest is Node's OperationError.
    if (e && e.code === 'ERR_FEATURE_UNAVAILABLE_ON_PLATFORM') throw new DOMException(e.message, { name: 'NotSupportedError', cause: e });
    throw new DOMException('The operation failed for an operation-specific reason', { name: 'OperationError', cause: e });
  }
  const a = algorithmOf(name, pair.privateKey, alg);
  return {
    publicKey: makeKey(pair.publicKey, a, pubUsages, true),
    privateKey: makeKey(pair.privateKey, a, privUsages, extractable),
  };
}
function dedupe(list) { return list.filter((u, i) => list.indexOf(u) === i); }

function missingArgs(op, n, got) {
  return typeErr('ERR_MISSING_ARGS', `Failed to execute '${op}' on 'SubtleCrypto': ${n} arguments required, but only ${got} present.`);
}
// usageList reads keyUsages as WebIDL's sequence<KeyUsage>.
function usageList(v, op, nth) {
  if (v === null || typeof v !== 'object' || typeof v[Symbol.iterator] !== 'function') {
    throw typeErr('ERR_INVALID_ARG_TYPE', `Failed to execute '${op}' on 'SubtleCrypto': ${nth} argument can not be converted to sequence.`);
  }
  return [...v];
}

// --- importKey

const formats = ['raw', 'spki', 'pkcs8', 'jwk'];
function checkFormat(format, op) {
  if (!formats.includes(format)) {
    throw typeErr('ERR_INVALID_ARG_VALUE', `Failed to execute '${op}' on 'SubtleCrypto': 1st argument value '${format}' is not a valid enum value of type KeyFormat.`);
  }
}

const jwkAlgs = {
  HMAC: { 'SHA-1': 'HS1', 'SHA-256': 'HS256', 'SHA-384': 'HS384', 'SHA-512': 'HS512' },
  'RSASSA-PKCS1-v1_5': { 'SHA-1': 'RS1', 'SHA-256': 'RS256', 'SHA-384': 'RS384', 'SHA-512': 'RS512' },
  'RSA-PSS': { 'SHA-1': 'PS1', 'SHA-256': 'PS256', 'SHA-384': 'PS384', 'SHA-512': 'PS512' },
  'RSA-OAEP': { 'SHA-1': 'RSA-OAEP', 'SHA-256': 'RSA-OAEP-256', 'SHA-384': 'RSA-OAEP-384', 'SHA-512': 'RSA-OAEP-512' },
};
const ecdsaJwkAlgs = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };
function jwkAlg(name, alg, lengthBits) {
  if (jwkAlgs[name]) return jwkAlgs[name][alg.hash.name];
  if (aes.includes(name)) return `A${lengthBits}${name.slice(4)}`;
  return undefined;
}

const sigAlgs = ['HMAC', 'ECDSA', 'Ed25519', 'Ed448', 'RSASSA-PKCS1-v1_5', 'RSA-PSS'];
function checkJwk(jwk, usages, extractable, kty, name) {
  if (jwk === null || typeof jwk !== 'object' || !jwk.kty) throw dom('Invalid keyData', 'DataError');
  if (jwk.kty !== kty) throw dom('Invalid JWK "kty" Parameter', 'DataError');
  if (usages.length > 0 && jwk.use !== undefined && jwk.use !== (sigAlgs.includes(name) ? 'sig' : 'enc')) {
    throw dom('Invalid JWK "use" Parameter', 'DataError');
  }
  if (jwk.key_ops !== undefined) {
    if (!P.ArrayIsArray(jwk.key_ops) || !usages.every((u) => jwk.key_ops.includes(u))) throw dom('Key operations and usage mismatch', 'DataError');
  }
  if (jwk.ext !== undefined && jwk.ext === false && extractable) throw dom('JWK "ext" Parameter and extractable mismatch', 'DataError');
}

function importSecret(format, keyData, alg, extractable, usages) {
  const name = alg.name;
  if ((name === 'PBKDF2' || name === 'HKDF')) {
    if (format !== 'raw' && format !== 'KeyObject') throw dom(`Unable to import ${name} key with format ${format}`, 'NotSupportedError');
    if (extractable) throw dom(`${name} keys are not extractable`, 'SyntaxError');
  }
  let raw;
  if (format === 'raw') raw = argData(keyData, 'importKey', '2nd');
  else if (format === 'KeyObject') {
    if (keyData.type !== 'secret') throw dom('Invalid key type', 'DataError');
    raw = K.secretBytes(keyData);
  }
  else if (format === 'jwk') {
    checkJwk(keyData, usages, extractable, 'oct', name);
    if (typeof keyData.k !== 'string') throw dom('Invalid keyData', 'DataError');
    raw = unb64u(keyData.k);
  } else {
    throw dom(`Unable to import ${aes.includes(name) ? 'AES' : name} key with format ${format}`, 'NotSupportedError');
  }
  if (usages.length === 0) throw dom('Usages cannot be empty when importing a secret key.', 'SyntaxError');
  let a;
  const bits = raw.length * 8;
  if (aes.includes(name)) {
    if (bits !== 128 && bits !== 192 && bits !== 256) throw dom('Invalid key length', 'DataError');
    a = { name, length: bits };
  } else if (name === 'HMAC') {
    if (bits === 0 || alg.length === 0) throw dom('Zero-length key is not supported', 'DataError');
    if (alg.length !== undefined && alg.length !== bits) throw dom('Invalid key length', 'DataError');
    a = { name, hash: { name: alg.hash.name }, length: bits };
  } else {
    a = { name };
  }
  if (format === 'jwk' && keyData.alg !== undefined) {
    const want = jwkAlg(name, alg, bits);
    if (want !== undefined && keyData.alg !== want) throw dom('JWK "alg" does not match the requested algorithm', 'DataError');
  }
  return makeKey(K.makeSecret(raw), a, usages, extractable);
}

function importAsym(format, keyData, alg, extractable, usages) {
  const name = alg.name;
  const ec = name === 'ECDSA' || name === 'ECDH';
  if (ec && !curves[alg.namedCurve]) throw dom('Unrecognized namedCurve', 'NotSupportedError');
  let ko;
  const attempt = (f, msg = 'Invalid keyData') => {
    try { return f(); } catch (e) { throw new DOMException(msg, { name: 'DataError', cause: e }); }
  };
  if (format === 'KeyObject') {
    checkUsages(name, usages, keyData.type === 'private' ? 0 : 1);
    if (keyData.type === 'secret') throw dom('Invalid key type', 'DataError');
    ko = keyData;
  } else if (format === 'spki') {
    checkUsages(name, usages, 1);
    const der = argData(keyData, 'importKey', '2nd');
    ko = attempt(() => K.createPublicKey({ key: der, format: 'der', type: 'spki' }));
  } else if (format === 'pkcs8') {
    checkUsages(name, usages, 0);
    const der = argData(keyData, 'importKey', '2nd');
    ko = attempt(() => K.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
  } else if (format === 'raw') {
    if (rsa.includes(name)) throw dom(`Unable to import ${name} key with format raw`, 'NotSupportedError');
    checkUsages(name, usages, 1);
    const raw = argData(keyData, 'importKey', '2nd');
    let jwk;
    if (ec) {
      const n = curveBytes[alg.namedCurve];
      let point = raw;
      if (raw.length === n + 1 && (raw[0] === 2 || raw[0] === 3)) {
        point = attempt(() => signMod().ECDH.convertKey(raw, curves[alg.namedCurve], undefined, undefined, 'uncompressed'));
      }
      if (point.length !== 2 * n + 1 || point[0] !== 4) throw dom('Invalid keyData', 'DataError');
      jwk = { kty: 'EC', crv: alg.namedCurve, x: b64u(sub(point, 1, 1 + n)), y: b64u(sub(point, 1 + n)) };
    } else {
      if (raw.length !== cfrgBytes[name]) throw dom(`${name} raw keys must be exactly ${cfrgBytes[name]}-bytes`, 'DataError');
      jwk = { kty: 'OKP', crv: name, x: b64u(raw) };
    }
    ko = attempt(() => K.createPublicKey({ key: jwk, format: 'jwk' }));
  } else {
    const jwk = keyData;
    const kty = rsa.includes(name) ? 'RSA' : ec ? 'EC' : 'OKP';
    if (jwk && typeof jwk === 'object' && jwk.kty === kty) checkUsages(name, usages, jwk.d !== undefined ? 0 : 1);
    checkJwk(jwk, usages, extractable, kty, name);
    const priv = jwk.d !== undefined;
    if (ec && jwk.crv !== alg.namedCurve) throw dom('JWK "crv" does not match the requested algorithm', 'DataError');
    if (kty === 'OKP' && jwk.crv !== name) throw dom('JWK "crv" Parameter and algorithm name mismatch', 'DataError');
    // Node 22 checks "alg" for RSA and ECDSA keys only (Node 20 also for
    // Ed25519).
    const wantAlg = rsa.includes(name) ? jwkAlgs[name][alg.hash.name] : name === 'ECDSA' ? ecdsaJwkAlgs[alg.namedCurve] : undefined;
    if (jwk.alg !== undefined && wantAlg !== undefined && jwk.alg !== wantAlg) {
      throw dom('JWK "alg" does not match the requested algorithm', 'DataError');
    }
    const clean = {};
    for (const f of ['kty', 'crv', 'x', 'y', 'd', 'n', 'e', 'p', 'q', 'dp', 'dq', 'qi']) if (jwk[f] !== undefined) clean[f] = jwk[f];
    ko = attempt(() => (priv ? K.createPrivateKey({ key: clean, format: 'jwk' }) : K.createPublicKey({ key: clean, format: 'jwk' })));
  }
  if (ko.asymmetricKeyType !== asymType(name)) throw dom('Invalid key type', 'DataError');
  if (ec && curveNames[ko.asymmetricKeyDetails.namedCurve] !== alg.namedCurve) throw dom('Named curve mismatch', 'DataError');
  if (ko.type === 'private' && usages.length === 0) throw dom('Usages cannot be empty when importing a private key.', 'SyntaxError');
  const a = algorithmOf(name, ko, alg);
  // Imported public keys are always extractable, but not those made by
  // KeyObject.toCryptoKey (as in Node 22).
  return makeKey(ko, a, usages, ko.type === 'public' && format !== 'KeyObject' ? true : extractable);
}

async function importKey(format, keyData, algorithm, extractable, keyUsages) {
  if (arguments.length < 4) throw missingArgs('importKey', 4, arguments.length);
  checkFormat(format, 'importKey');
  if (format === 'jwk' && (keyData === null || typeof keyData !== 'object')) {
    throw typeErr('ERR_INVALID_ARG_TYPE', "Failed to execute 'importKey' on 'SubtleCrypto': 2nd argument can not be converted to a dictionary");
  }
  const alg = normalize(algorithm, 'importKey');
  const usages = usageList(keyUsages, 'importKey', '5th');
  return importNormalized(format, keyData, alg, !!extractable, usages);
}
function importNormalized(format, keyData, alg, extractable, usages) {
  const name = alg.name;
  if (aes.includes(name) || name === 'HMAC' || name === 'PBKDF2' || name === 'HKDF') {
    checkUsages(name, usages);
    return importSecret(format, keyData, alg, extractable, usages);
  }
  return importAsym(format, keyData, alg, extractable, usages);
}

// toCryptoKey is KeyObject.prototype.toCryptoKey (Node 22.10): the
// key imported as importKey would, from the KeyObject itself.
function toCryptoKey(keyObject, algorithm, extractable, keyUsages) {
  const alg = normalize(algorithm, 'importKey');
  const usages = usageList(keyUsages, 'toCryptoKey', '3rd');
  return importNormalized('KeyObject', keyObject, alg, !!extractable, usages);
}

// --- exportKey

function exportNormalized(format, key) {
  const d = s(key);
  const ko = d.keyObject, name = d.algorithm.name;
  if (!d.extractable) throw dom('key is not extractable', 'InvalidAccessException');
  if (ko.type === 'secret') {
    const raw = K.secretBytes(ko);
    if (format === 'raw') return toAB(raw);
    if (format === 'jwk') {
      const jwk = { key_ops: [...d.usages], ext: d.extractable, kty: 'oct', k: b64u(raw) };
      const alg = jwkAlg(name, d.algorithm, raw.length * 8);
      if (alg !== undefined) jwk.alg = alg;
      return jwk;
    }
    throw dom(`Unable to export a raw ${name} ${ko.type} key`, 'InvalidAccessError');
  }
  if (format === 'jwk') {
    const jwk = { key_ops: [...d.usages], ext: d.extractable };
    Object.assign(jwk, ko.export({ format: 'jwk' }));
    if (jwkAlgs[name]) jwk.alg = jwkAlgs[name][d.algorithm.hash.name];
    return jwk;
  }
  if (format === 'spki' && ko.type === 'public') return toAB(ko.export({ format: 'der', type: 'spki' }));
  if (format === 'pkcs8' && ko.type === 'private') return toAB(ko.export({ format: 'der', type: 'pkcs8' }));
  if (format === 'raw' && ko.type === 'public' && !rsa.includes(name)) {
    const jwk = ko.export({ format: 'jwk' });
    if (jwk.kty === 'EC') {
      const x = unb64u(jwk.x), y = unb64u(jwk.y);
      const p = new P.Uint8Array(1 + x.length + y.length);
      p[0] = 4;
      set(p, x, 1);
      set(p, y, 1 + x.length);
      return toAB(p);
    }
    return toAB(unb64u(jwk.x));
  }
  // Node says "raw" for spki too (its message names the wrong format).
  throw dom(`Unable to export a ${format === 'pkcs8' ? 'pkcs8' : 'raw'} ${name} ${ko.type} key`, 'InvalidAccessError');
}

async function exportKey(format, key) {
  if (arguments.length < 2) throw missingArgs('exportKey', 2, arguments.length);
  checkFormat(format, 'exportKey');
  if (!isCryptoKey(key)) throw typeErr('ERR_INVALID_ARG_TYPE', "Failed to execute 'exportKey' on 'SubtleCrypto': 2nd argument is not of type CryptoKey.");
  return exportNormalized(format, key);
}

// --- sign / verify

// keyFor reads the key argument (the 2nd of op, or nth).
function keyFor(op, key, nth = '2nd') {
  if (!isCryptoKey(key)) throw typeErr('ERR_INVALID_ARG_TYPE', `Failed to execute '${op}' on 'SubtleCrypto': ${nth} argument is not of type CryptoKey.`);
  return s(key);
}

function signVerify(op, alg, d, data, signature) {
  const name = alg.name;
  const usage = op;
  if (d.algorithm.name !== name || !d.usages.includes(usage)) throw dom(`Unable to use this key to ${op}`, 'InvalidAccessError');
  const ko = d.keyObject;
  const S = signMod();
  if (name === 'HMAC') {
    const mac = nodeCrypto().createHmac(nodeHash(d.algorithm.hash), K.secretBytes(ko)).update(data).digest();
    if (op === 'sign') return toAB(mac);
    return signature.length === mac.length && nodeCrypto().timingSafeEqual(signature, mac);
  }
  let hash = null;
  const opts = { key: ko };
  if (name === 'Ed448' && alg.context && alg.context.length) {
    throw dom('Non zero-length context is not yet supported.', 'NotSupportedError');
  }
  if (name === 'ECDSA') {
    hash = nodeHash(alg.hash);
    opts.dsaEncoding = 'ieee-p1363';
  } else if (rsa.includes(name)) {
    hash = nodeHash(d.algorithm.hash);
    opts.padding = name === 'RSA-PSS' ? 6 : 1;
    if (name === 'RSA-PSS') {
      // Node checks the salt against the key before it signs or verifies.
      const max = Math.ceil((d.algorithm.modulusLength - 1) / 8) - hashBytes[d.algorithm.hash.name] - 2;
      if (alg.saltLength > max) {
        throw new DOMException('The operation failed for an operation-specific reason', {
          name: 'OperationError', cause: U.outOfRange('algorithm.saltLength', `>= 0 && <= ${max}`, alg.saltLength),
        });
      }
      opts.saltLength = alg.saltLength;
    }
  }
  if (op === 'sign') {
    try { return toAB(S.sign(hash, data, opts)); } catch (e) { throw new DOMException('The operation failed for an operation-specific reason', { name: 'OperationError', cause: e }); }
  }
  try { return S.verify(hash, data, opts, signature); } catch { return false; }
}

async function sign(algorithm, key, data) {
  if (arguments.length < 3) throw missingArgs('sign', 3, arguments.length);
  // WebIDL converts every argument before the algorithm is normalized.
  const d = keyFor('sign', key);
  const bytes = argData(data, 'sign', '3rd');
  return signVerify('sign', normalize(algorithm, 'sign'), d, bytes);
}

async function verify(algorithm, key, signature, data) {
  if (arguments.length < 4) throw missingArgs('verify', 4, arguments.length);
  const d = keyFor('verify', key);
  const sig = argData(signature, 'verify', '3rd');
  const bytes = argData(data, 'verify', '4th');
  return signVerify('verify', normalize(algorithm, 'verify'), d, bytes, sig);
}

// --- encrypt / decrypt

const failed = () => dom('The operation failed for an operation-specific reason', 'OperationError');

function cipher(mode, bits, key, iv, dec, opts) {
  const C = nodeCrypto();
  const name = `aes-${bits}-${mode}`;
  return dec ? C.createDecipheriv(name, key, iv, opts) : C.createCipheriv(name, key, iv, opts);
}
function concat(a, b) {
  const o = new P.Uint8Array(a.length + b.length);
  set(o, a, 0);
  set(o, b, a.length);
  return o;
}

function aesGcm(dec, d, alg, data) {
  const tagLength = alg.tagLength === undefined ? 128 : alg.tagLength;
  if (![32, 64, 96, 104, 112, 120, 128].includes(tagLength)) throw dom(`${tagLength} is not a valid AES-GCM tag length`, 'OperationError');
  const key = K.secretBytes(d.keyObject);
  const tl = tagLength / 8;
  let c;
  try { c = cipher('gcm', key.length * 8, key, alg.iv, dec, { authTagLength: tl }); } catch { throw failed(); }
  if (alg.additionalData) c.setAAD(alg.additionalData);
  if (!dec) {
    const body = concat(c.update(data), c.final());
    return toAB(concat(body, c.getAuthTag()));
  }
  if (data.length < tl) throw dom('The provided data is too small.', 'OperationError');
  c.setAuthTag(sub(data, data.length - tl));
  try {
    return toAB(concat(c.update(sub(data, 0, data.length - tl)), c.final()));
  } catch { throw failed(); }
}

function aesCbc(dec, d, alg, data) {
  if (alg.iv.length !== 16) throw dom('algorithm.iv must contain exactly 16 bytes', 'OperationError');
  const key = K.secretBytes(d.keyObject);
  const c = cipher('cbc', key.length * 8, key, alg.iv, dec);
  try {
    return toAB(concat(c.update(data), c.final()));
  } catch { throw failed(); }
}

// aesCtr runs AES-CTR with Web Crypto's counter: only its low length
// bits count, wrapping on their own. The cipher's own CTR counts all 128
// bits, which is the same until the low bits wrap: the data is cut there,
// and the second part starts from the counter with its low bits zero.
function aesCtr(d, alg, data) {
  if (alg.counter.length !== 16) throw dom('algorithm.counter must contain exactly 16 bytes', 'OperationError');
  if (alg.length === 0 || alg.length > 128) throw dom('AES-CTR algorithm.length must be between 1 and 128', 'OperationError');
  const key = K.secretBytes(d.keyObject);
  const blocks = BigInt(Math.ceil(data.length / 16));
  const mask = (1n << BigInt(alg.length)) - 1n;
  let ctr = 0n;
  for (const b of alg.counter) ctr = (ctr << 8n) | BigInt(b);
  if (blocks > mask + 1n) throw failed();
  const run = (counter, part) => {
    const iv = new P.Uint8Array(16);
    for (let j = 15; j >= 0; j--) { iv[j] = Number(counter & 0xffn); counter >>= 8n; }
    const c = cipher('ctr', key.length * 8, key, iv, false);
    return concat(c.update(part), c.final());
  };
  const before = mask - (ctr & mask) + 1n; // blocks until the low bits wrap
  if (blocks <= before) return toAB(run(ctr, data));
  const n = Number(before) * 16;
  return toAB(concat(run(ctr, sub(data, 0, n)), run(ctr & ~mask, sub(data, n))));
}

function rsaOaep(dec, d, alg, data) {
  const ko = d.keyObject;
  if (ko.type !== (dec ? 'private' : 'public')) throw dom(`The requested operation is not valid for the provided key`, 'InvalidAccessError');
  const S = signMod();
  const opts = { key: ko, padding: 4, oaepHash: nodeHash(d.algorithm.hash) };
  if (alg.label && alg.label.length) opts.oaepLabel = alg.label;
  try {
    return toAB(dec ? S.privateDecrypt(opts, data) : S.publicEncrypt(opts, data));
  } catch { throw failed(); }
}

function cipherOp(dec, alg, d, data, usage) {
  if (d.algorithm.name !== alg.name || !d.usages.includes(usage)) throw dom('The requested operation is not valid for the provided key', 'InvalidAccessError');
  switch (alg.name) {
    case 'AES-GCM': return aesGcm(dec, d, alg, data);
    case 'AES-CBC': return aesCbc(dec, d, alg, data);
    case 'AES-CTR': return aesCtr(d, alg, data);
    case 'RSA-OAEP': return rsaOaep(dec, d, alg, data);
    case 'AES-KW': return aesKw(dec, d, data);
  }
  throw dom('Unrecognized algorithm name', 'NotSupportedError');
}

async function encrypt(algorithm, key, data) {
  if (arguments.length < 3) throw missingArgs('encrypt', 3, arguments.length);
  const d = keyFor('encrypt', key);
  const bytes = argData(data, 'encrypt', '3rd');
  return cipherOp(false, normalize(algorithm, 'encrypt'), d, bytes, 'encrypt');
}

async function decrypt(algorithm, key, data) {
  if (arguments.length < 3) throw missingArgs('decrypt', 3, arguments.length);
  const d = keyFor('decrypt', key);
  const bytes = argData(data, 'decrypt', '3rd');
  return cipherOp(true, normalize(algorithm, 'decrypt'), d, bytes, 'decrypt');
}

// AES-KW (RFC 3394) on AES-ECB: there is no id-aes*-wrap cipher here.
function aesKw(unwrap, d, data) {
  const key = K.secretBytes(d.keyObject);
  if (data.length % 8 !== 0 || data.length < (unwrap ? 24 : 16)) throw failed();
  const ecb = (block, dec) => {
    const c = cipher('ecb', key.length * 8, key, null, dec);
    c.setAutoPadding(false);
    return concat(c.update(block), c.final());
  };
  const iv = [0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6];
  if (!unwrap) {
    const n = data.length / 8;
    const a = new P.Uint8Array(iv);
    const r = new P.Uint8Array(data);
    for (let j = 0; j <= 5; j++) {
      for (let i = 1; i <= n; i++) {
        const b = ecb(concat(a, sub(r, (i - 1) * 8, i * 8)), false);
        set(a, sub(b, 0, 8));
        let t = n * j + i;
        for (let x = 7; x >= 0 && t > 0; x--) { a[x] ^= t & 0xff; t = Math.floor(t / 256); }
        set(r, sub(b, 8), (i - 1) * 8);
      }
    }
    return toAB(concat(a, r));
  }
  const n = data.length / 8 - 1;
  const a = new P.Uint8Array(sub(data, 0, 8));
  const r = new P.Uint8Array(sub(data, 8));
  for (let j = 5; j >= 0; j--) {
    for (let i = n; i >= 1; i--) {
      let t = n * j + i;
      for (let x = 7; x >= 0 && t > 0; x--) { a[x] ^= t & 0xff; t = Math.floor(t / 256); }
      const b = ecb(concat(a, sub(r, (i - 1) * 8, i * 8)), true);
      set(a, sub(b, 0, 8));
      set(r, sub(b, 8), (i - 1) * 8);
    }
  }
  let bad = 0;
  for (let i = 0; i < 8; i++) bad |= a[i] ^ 0xa6;
  if (bad) throw failed();
  return toAB(r);
}

// --- deriveBits / deriveKey

function derive(alg, d, length, usage) {
  const name = alg.name;
  if (!d.usages.includes(usage)) throw dom(`baseKey does not have ${usage} usage`, 'InvalidAccessError');
  if (d.algorithm.name !== name) throw dom('Key algorithm mismatch', 'InvalidAccessError');
  const ko = d.keyObject;
  if (name === 'PBKDF2' || name === 'HKDF') {
    if (length === null || length === undefined) throw dom('length cannot be null', 'OperationError');
    if (length % 8) throw dom('length must be a multiple of 8', 'OperationError');
    const raw = K.secretBytes(ko);
    if (name === 'PBKDF2') {
      if (alg.iterations === 0) throw dom('iterations cannot be zero', 'OperationError');
      try {
        return toAB(nodeCrypto().pbkdf2Sync(raw, alg.salt, alg.iterations, length / 8, nodeHash(alg.hash)));
      } catch (e) { throw new DOMException('The operation failed for an operation-specific reason', { name: 'OperationError', cause: U.convert(e) }); }
    }
    if (length === 0) return new P.ArrayBuffer(0);
    try {
      return require('./crypto_kdf.js').hkdfSync(nodeHash(alg.hash), raw, alg.salt, alg.info, length / 8);
    } catch (e) { throw new DOMException('The operation failed for an operation-specific reason', { name: 'OperationError', cause: e }); }
  }
  // ECDH, X25519, X448
  const pub = s(alg.public);
  if (ko.type !== 'private') throw dom('The requested operation is not valid for the provided key', 'InvalidAccessError');
  if (pub.keyObject.type !== 'public') throw dom('algorithm.public must be a public key', 'InvalidAccessError');
  if (!['ECDH', 'X25519', 'X448'].includes(pub.algorithm.name)) throw dom('Keys must be ECDH, X25519, or X448 keys', 'InvalidAccessError');
  if (pub.algorithm.name !== name) throw dom('The public and private keys must be of the same type', 'InvalidAccessError');
  if (name === 'ECDH' && pub.algorithm.namedCurve !== d.algorithm.namedCurve) throw dom('Named curve mismatch', 'InvalidAccessError');
  let bits;
  try {
    bits = signMod().diffieHellman({ privateKey: ko, publicKey: pub.keyObject });
  } catch (e) { throw new DOMException('The operation failed for an operation-specific reason', { name: 'OperationError', cause: e }); }
  if (length === null || length === undefined) return toAB(bits);
  const n = Math.ceil(length / 8);
  if (bits.length < n) throw dom('derived bit length is too small', 'OperationError');
  return toAB(sub(bits, 0, n));
}

async function deriveBits(algorithm, baseKey, length) {
  if (arguments.length < 2) throw missingArgs('deriveBits', 2, arguments.length);
  const d = keyFor('deriveBits', baseKey);
  const alg = normalize(algorithm, 'deriveBits');
  if (length !== null && length !== undefined) length = normalize({ name: 'AES-CBC', length }, 'get key length').length;
  return derive(alg, d, length, 'deriveBits');
}

function keyLength(alg) {
  if (aes.includes(alg.name)) {
    if (![128, 192, 256].includes(alg.length)) throw dom('Invalid key length', 'OperationError');
    return alg.length;
  }
  if (alg.name === 'HMAC') return alg.length === undefined ? blockBits[alg.hash.name] : alg.length;
  return null;
}

async function deriveKey(algorithm, baseKey, derivedKeyAlgorithm, extractable, keyUsages) {
  if (arguments.length < 5) throw missingArgs('deriveKey', 5, arguments.length);
  const d = keyFor('deriveKey', baseKey);
  const usages = usageList(keyUsages, 'deriveKey', '5th');
  const alg = normalize(algorithm, 'deriveBits');
  const dalg = normalize(derivedKeyAlgorithm, 'importKey');
  const length = keyLength(normalize(derivedKeyAlgorithm, 'get key length'));
  const bits = derive(alg, d, length, 'deriveKey');
  return importNormalized('raw', bits, dalg, !!extractable, usages);
}

// --- wrapKey / unwrapKey

async function wrapKey(format, key, wrappingKey, wrapAlgorithm) {
  if (arguments.length < 4) throw missingArgs('wrapKey', 4, arguments.length);
  checkFormat(format, 'wrapKey');
  keyFor('wrapKey', key);
  const d = keyFor('wrapKey', wrappingKey, '3rd');
  const alg = normalize(wrapAlgorithm, 'wrapKey');
  const exported = exportNormalized(format, key);
  let bytes;
  if (format === 'jwk') {
    bytes = new P.Uint8Array(Buf().from(JSON.stringify(exported), 'utf8'));
    if (alg.name === 'AES-KW' && bytes.length % 8) {
      const padded = new P.Uint8Array(bytes.length + 8 - (bytes.length % 8)).fill(0x20);
      set(padded, bytes, 0);
      bytes = padded;
    }
  } else {
    bytes = new P.Uint8Array(exported);
  }
  return cipherOp(false, alg, d, bytes, 'wrapKey');
}

async function unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, keyUsages) {
  if (arguments.length < 7) throw missingArgs('unwrapKey', 7, arguments.length);
  checkFormat(format, 'unwrapKey');
  const wrapped = argData(wrappedKey, 'unwrapKey', '2nd');
  const d = keyFor('unwrapKey', unwrappingKey, '3rd');
  const usages = usageList(keyUsages, 'unwrapKey', '7th');
  const alg = normalize(unwrapAlgorithm, 'unwrapKey');
  const ualg = normalize(unwrappedKeyAlgorithm, 'importKey');
  let keyData = new P.Uint8Array(cipherOp(true, alg, d, wrapped, 'unwrapKey'));
  if (format === 'jwk') {
    try { keyData = JSON.parse(Buf().from(keyData).toString('utf8')); } catch { throw dom('Invalid keyData', 'DataError'); }
  }
  return importNormalized(format, keyData, ualg, !!extractable, usages);
}

// --- digest

async function digest(algorithm, data) {
  if (arguments.length < 2) throw missingArgs('digest', 2, arguments.length);
  const alg = normalize(algorithm, 'digest');
  const bytes = argData(data, 'digest', '2nd');
  return toAB(nodeCrypto().createHash(nodeHash(alg)).update(bytes).digest());
}

// KeyObject.from and the key behind a CryptoKey, for node:crypto.
function keyObjectOf(v) {
  const d = isCryptoKey(v) ? slot(v) : null;
  return d ? d.keyObject : null;
}

// structuredClone(cryptoKey) gives a new CryptoKey on the same key, as
// Node's does.
require('./web.js').setCloneKey((v) => {
  const d = isCryptoKey(v) ? slot(v) : null;
  return d ? makeKey(d.keyObject, cloneAlgorithm(d.algorithm), d.usages, d.extractable) : null;
});
function cloneAlgorithm(a) {
  const o = {};
  for (const k of P.ObjectKeys(a)) {
    const v = a[k];
    o[k] = v instanceof P.Uint8Array ? new P.Uint8Array(v) : v !== null && typeof v === 'object' ? cloneAlgorithm(v) : v;
  }
  return o;
}

module.exports = {
  CryptoKey, isCryptoKey, keyObjectOf, makeKey, toCryptoKey,
  digest, generateKey, importKey, exportKey, sign, verify, encrypt, decrypt, deriveBits, deriveKey, wrapKey, unwrapKey,
};
