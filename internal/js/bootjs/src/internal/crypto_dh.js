'use strict';
// Classic Diffie-Hellman (createDiffieHellman, getDiffieHellman,
// DiffieHellmanGroup) as Node's on OpenSSL 3. The parameters and keys
// live here as big-endian bytes; the bridge does the arithmetic
// (internal/node/ncrypto/dh.go).
const U = require('./crypto_util.js');
const { B, call, give, bytes, cryptoError, invalidType, lazyBuffer, asU8 } = U;

const kState = Symbol('kState');
const keyTypes = 'one of type number or string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView';
// The private key sizes OpenSSL 3 uses for the named groups (twice their
// security strength); other groups take keys as long as the prime.
const namedPrivBytes = { modp5: 25, modp14: 29, modp15: 35, modp16: 41, modp17: 47, modp18: 50 };

// trim drops leading zero bytes, as OpenSSL's BIGNUMs do.
function trim(u8) {
  let i = 0;
  while (i < u8.length && u8[i] === 0) i++;
  return lazyBuffer().from(u8.subarray(i));
}

function isBuffer(v) { return ArrayBuffer.isView(v) || require('./types.js').isAnyArrayBuffer(v); }
function bufOf(v, enc) {
  if (typeof v === 'string') return lazyBuffer().from(v, enc && enc !== 'buffer' ? enc : 'utf8');
  return v instanceof ArrayBuffer || !ArrayBuffer.isView(v) ? new Uint8Array(v) : asU8(v);
}
function validateInt32(v, name) {
  if (!Number.isInteger(v)) throw U.outOfRange(name, 'an integer', v);
  if (v < -(2 ** 31) || v > 2 ** 31 - 1) throw U.outOfRange(name, `>= ${-(2 ** 31)} && <= ${2 ** 31 - 1}`, v);
}
function osslError(code, lib, reason) {
  const err = new Error(`error:${lib}:Diffie-Hellman routines::${reason}`);
  err.code = code;
  err.library = 'Diffie-Hellman routines';
  err.reason = reason;
  return err;
}
function encode(buf, enc) { return enc && enc !== 'buffer' ? buf.toString(enc) : buf; }
function modExp(base, exp, mod) {
  give(0, base);
  give(1, exp);
  give(2, mod);
  return bytes(call(B.dhModExp));
}
function check(p, g) {
  give(0, p);
  give(1, g);
  return call(B.dhCheck);
}
function bigEndian(n) {
  const out = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) out.unshift(v % 256);
  return lazyBuffer().from(out);
}
function state(self) {
  const s = self[kState];
  if (!s) throw invalidType('this', 'an instance of DiffieHellman', self);
  return s;
}

function DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding) {
  if (!(this instanceof DiffieHellman)) return new DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding);
  if (typeof sizeOrKey !== 'number' && typeof sizeOrKey !== 'string' && !isBuffer(sizeOrKey)) {
    throw invalidType('sizeOrKey', keyTypes, sizeOrKey);
  }
  if (typeof sizeOrKey === 'number') validateInt32(sizeOrKey, 'sizeOrKey');
  if (keyEncoding && !lazyBuffer().isEncoding(keyEncoding) && keyEncoding !== 'buffer') {
    genEncoding = generator;
    generator = keyEncoding;
    keyEncoding = false;
  }
  let g;
  if (!generator) g = lazyBuffer().from([2]);
  else if (typeof generator === 'number') {
    validateInt32(generator, 'generator');
    if (generator < 2) throw osslError('ERR_OSSL_DH_BAD_GENERATOR', '02800065', 'bad generator');
    g = bigEndian(generator);
  } else if (typeof generator === 'string' || isBuffer(generator)) {
    g = trim(bufOf(generator, genEncoding));
    if (g.length === 0 || (g.length === 1 && g[0] < 2)) throw osslError('ERR_OSSL_DH_BAD_GENERATOR', '02800065', 'bad generator');
  } else {
    throw invalidType('generator', keyTypes, generator);
  }
  let p;
  if (typeof sizeOrKey === 'number') {
    if (sizeOrKey < 2) throw osslError('ERR_OSSL_DH_MODULUS_TOO_SMALL', '0280007E', 'modulus too small');
    if (sizeOrKey < 512) throw cryptoError('ERR_INVALID_ARG_VALUE', 'Invalid DH parameters', TypeError);
    const gen = g.length <= 4 ? g.readUIntBE(0, g.length) : 0;
    if (gen < 2) throw cryptoError('ERR_INVALID_ARG_VALUE', 'Invalid DH parameters', TypeError);
    p = bytes(call(B.dhGenPrime, sizeOrKey, gen));
  } else {
    p = trim(bufOf(sizeOrKey, keyEncoding));
  }
  init(this, p, g, check(p, g));
}

function init(self, p, g, verifyError, privBytes = p.length) {
  self[kState] = { p, g, priv: null, pub: null, privBytes };
  Object.defineProperty(self, 'verifyError', { enumerable: true, value: verifyError, writable: false });
}

function DiffieHellmanGroup(name) {
  if (!(this instanceof DiffieHellmanGroup)) return new DiffieHellmanGroup(name);
  if (typeof name !== 'string') throw cryptoError('ERR_INVALID_ARG_TYPE', 'Group name must be a string', TypeError);
  const p = bytes(call(B.dhGroup, name));
  init(this, p, lazyBuffer().from([2]), 0, namedPrivBytes[name] || p.length);
}

function generateKeys(encoding) {
  const s = state(this);
  if (s.p.length * 8 < 512) throw cryptoError('ERR_CRYPTO_OPERATION_FAILED', 'Key generation failed');
  if (!s.priv) {
    // A private key in [2, p - 2]: random bytes shorter than p.
    const { randomFillSync } = require('../crypto.js');
    let k;
    do {
      k = randomFillSync(lazyBuffer().alloc(s.privBytes));
      if (s.privBytes >= s.p.length) k[0] &= 0x7f;
      k = trim(k);
    } while (k.length === 0 || (k.length === 1 && k[0] < 2));
    s.priv = k;
  }
  s.pub = trim(modExp(s.g, s.priv, s.p));
  return encode(s.pub, encoding);
}

function computeSecret(key, inEnc, outEnc) {
  const s = state(this);
  if (typeof key !== 'string' && !isBuffer(key)) {
    throw invalidType('key', 'of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView', key);
  }
  const peer = trim(bufOf(key, inEnc));
  if (!s.priv) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'No private key - did you forget to generate one?');
  if (peer.length === 0 || (peer.length === 1 && peer[0] <= 1)) {
    throw cryptoError('ERR_CRYPTO_INVALID_KEYLEN', 'Supplied key is too small');
  }
  // The peer key must be below p - 1.
  const pm1 = lazyBuffer().from(s.p);
  for (let i = pm1.length - 1; i >= 0; i--) {
    if (pm1[i] > 0) { pm1[i]--; break; }
    pm1[i] = 0xff;
  }
  if (peer.length > s.p.length || (peer.length === s.p.length && lazyBuffer().compare(peer, pm1) >= 0)) {
    throw cryptoError('ERR_CRYPTO_INVALID_KEYTYPE', 'Unspecified validation error');
  }
  const raw = modExp(peer, s.priv, s.p);
  // Node pads the secret to the prime's length.
  const out = lazyBuffer().alloc(s.p.length);
  out.set(raw, s.p.length - raw.length);
  return encode(out, outEnc);
}

const methods = {
  generateKeys,
  computeSecret,
  getPrime(encoding) { return encode(state(this).p, encoding); },
  getGenerator(encoding) { return encode(state(this).g, encoding); },
  getPublicKey(encoding) {
    const s = state(this);
    if (!s.pub) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'No public key - did you forget to generate one?');
    return encode(s.pub, encoding);
  },
  getPrivateKey(encoding) {
    const s = state(this);
    if (!s.priv) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'No private key - did you forget to generate one?');
    return encode(s.priv, encoding);
  },
};
for (const [name, fn] of Object.entries(methods)) {
  DiffieHellman.prototype[name] = fn;
  DiffieHellmanGroup.prototype[name] = fn;
}
DiffieHellman.prototype.setPublicKey = function setPublicKey(key, encoding) {
  state(this).pub = trim(U.toBuf(key, 'key', encoding));
  return this;
};
DiffieHellman.prototype.setPrivateKey = function setPrivateKey(key, encoding) {
  state(this).priv = trim(U.toBuf(key, 'key', encoding));
  return this;
};

module.exports = {
  DiffieHellman,
  DiffieHellmanGroup,
  createDiffieHellman: (sizeOrKey, keyEncoding, generator, genEncoding) => new DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding),
  getDiffieHellman: (name) => new DiffieHellmanGroup(name),
};
