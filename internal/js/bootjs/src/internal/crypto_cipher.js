'use strict';
// Cipheriv and Decipheriv on Go's AES and x/crypto's ChaCha20. The state
// of a cipher lives here (Go is stateless between calls): the key, an
// opaque state string from Go, and for AEAD modes the AAD and plaintext
// that the tag is computed from at the end.
const { Transform } = require('../stream.js');
const U = require('./crypto_util.js');
const { B, call, give, pack, bytes, cryptoError, toBuf, lazyBuffer } = U;

const infoCache = new Map();
function cipherInfo(name) {
  const k = name.toLowerCase();
  let info = infoCache.get(k);
  if (!info) {
    const [mode, keyLen, ivLen, blockSize] = JSON.parse(call(B.cipherInfo, name));
    info = { mode, keyLen, ivLen, blockSize, aead: mode === 'gcm' || mode === 'chacha20-poly1305' };
    infoCache.set(k, info);
  }
  return info;
}

const keyTypes = 'of type string or an instance of ArrayBuffer, Buffer, TypedArray, DataView, KeyObject, or CryptoKey';
const ivTypes = 'of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView';

function cipherKey(key, enc) {
  const { KeyObject, secretBytes } = require('./crypto_keys.js');
  if (key instanceof KeyObject) {
    if (key.type !== 'secret') throw cryptoError('ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE', `Invalid key object type ${key.type}, expected secret.`);
    return secretBytes(key);
  }
  if (typeof key === 'string' || U.isBufferLike(key)) return toBuf(key, 'key', enc);
  throw U.invalidType('key', keyTypes, key);
}

function validTagLen(mode, n) {
  return mode === 'gcm' ? (n === 4 || n === 8 || (n >= 12 && n <= 16)) : (n >= 1 && n <= 16);
}

const kState = Symbol('kState');

class CipherBase extends Transform {
  constructor(decipher, cipher, key, iv, options) {
    U.validateString(cipher, 'cipher');
    const k = new Uint8Array(cipherKey(key));
    let ivb = null;
    if (iv !== null && iv !== undefined) {
      if (typeof iv !== 'string' && !U.isBufferLike(iv)) throw U.invalidType('iv', ivTypes, iv);
      ivb = new Uint8Array(toBuf(iv, 'iv'));
    } else if (iv === undefined) {
      throw U.invalidType('iv', ivTypes, iv);
    }
    super(options);
    const info = cipherInfo(cipher);
    let tagLen = -1;
    if (options && options.authTagLength !== undefined) {
      const t = options.authTagLength;
      if (!Number.isInteger(t) || t < 0 || t > 0xffffffff) throw U.invalidValue('options.authTagLength', t);
      if (info.aead) {
        if (!validTagLen(info.mode, t)) throw cryptoError('ERR_CRYPTO_INVALID_AUTH_TAG', `Invalid authentication tag length: ${t}`);
        tagLen = t;
      }
    }
    if (info.aead && tagLen < 0 && (!decipher || info.mode === 'chacha20-poly1305')) tagLen = 16;
    const st = bytes(call(B.cipherInit, cipher, decipher, k.length, pack(k, ivb || new Uint8Array(0))));
    this._decoder = null;
    this._options = options;
    Object.defineProperty(this, kState, {
      value: { name: cipher, info, dec: decipher, key: k, iv: ivb, st, pad: true, done: false, tagLen,
        tag: null, aad: [], plain: [], started: false },
    });
  }

  #run(data, final) {
    const s = this[kState];
    const res = bytes(call(B.cipherUpdate, s.name, s.dec, s.pad, final, s.key.length, s.st.length, pack(s.key, s.st, data)));
    const sl = res[0];
    s.st = res.slice(1, 1 + sl);
    return res.subarray(1 + sl);
  }

  update(data, inputEncoding, outputEncoding) {
    const s = this[kState];
    if (s.done) throw cryptoError('', 'Trying to add data in unsupported state');
    let u8;
    if (typeof data === 'string') u8 = lazyBuffer().from(data, inputEncoding === 'buffer' ? 'utf8' : (lazyBuffer().isEncoding(inputEncoding) ? inputEncoding : 'utf8'));
    else if (ArrayBuffer.isView(data)) u8 = U.asU8(data);
    else throw U.invalidType('data', `of type string or ${U.bufTypes}`, data);
    s.started = true;
    const res = this.#run(u8, false);
    if (s.info.aead) s.plain.push(lazyBuffer().from(s.dec ? res : u8));
    return this.#encode(res, outputEncoding, false);
  }

  #encode(buf, enc, end) {
    if (enc === undefined || enc === null || enc === 'buffer') return buf;
    if (!lazyBuffer().isEncoding(enc)) throw cryptoError('ERR_UNKNOWN_ENCODING', `Unknown encoding: ${enc}`);
    if (!this._decoder) {
      const { StringDecoder } = require('../string_decoder.js');
      this._decoder = new StringDecoder(enc);
    }
    return end ? this._decoder.end(buf) : this._decoder.write(buf);
  }

  final(outputEncoding) {
    const s = this[kState];
    if (s.done) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Invalid state');
    if (outputEncoding !== undefined && outputEncoding !== 'buffer' && !lazyBuffer().isEncoding(outputEncoding)) {
      throw cryptoError('ERR_UNKNOWN_ENCODING', `Unknown encoding: ${outputEncoding}`);
    }
    s.done = true;
    let res;
    try {
      res = this.#run(new Uint8Array(0), true);
      if (s.info.aead) this.#finishAEAD(s);
    } finally {
      s.key.fill(0);
      s.plain = [];
    }
    return this.#encode(res, outputEncoding, true);
  }

  #finishAEAD(s) {
    const Buffer = lazyBuffer();
    if (s.dec && !s.tag) throw cryptoError('', 'Unsupported state or unable to authenticate data');
    give(0, s.key);
    give(1, s.iv);
    give(2, Buffer.concat(s.aad));
    give(3, Buffer.concat(s.plain));
    const full = bytes(call(B.aeadTag, s.name));
    if (!s.dec) {
      s.tag = full.subarray(0, s.tagLen);
      return;
    }
    let d = 0;
    for (let i = 0; i < s.tag.length; i++) d |= s.tag[i] ^ full[i];
    if (d !== 0) throw cryptoError('', 'Unsupported state or unable to authenticate data');
  }

  setAutoPadding(ap) {
    const s = this[kState];
    if (s.done) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Invalid state for operation setAutoPadding');
    s.pad = ap === undefined ? true : !!ap;
    return this;
  }

  setAAD(aadbuf, options) {
    const s = this[kState];
    const u8 = toBuf(aadbuf, 'buffer', undefined, U.bufTypes);
    void options;
    if (s.done || !s.info.aead || s.started) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Invalid state for operation setAAD');
    s.aad.push(lazyBuffer().from(u8));
    return this;
  }

  _transform(chunk, encoding, callback) {
    try {
      this.push(this.update(chunk, encoding));
    } catch (e) {
      callback(e);
      return;
    }
    callback();
  }

  _flush(callback) {
    try {
      this.push(this.final());
    } catch (e) {
      callback(e);
      return;
    }
    callback();
  }
}

class Cipheriv extends CipherBase {
  constructor(cipher, key, iv, options) {
    super(false, cipher, key, iv, options);
  }

  getAuthTag() {
    const s = this[kState];
    if (!s.done || !s.tag) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Invalid state for operation getAuthTag');
    return lazyBuffer().from(s.tag);
  }
}

class Decipheriv extends CipherBase {
  constructor(cipher, key, iv, options) {
    super(true, cipher, key, iv, options);
  }

  setAuthTag(tagbuf, encoding) {
    const s = this[kState];
    const tag = toBuf(tagbuf, 'buffer', encoding);
    if (s.done || !s.info.aead || s.tag) throw cryptoError('ERR_CRYPTO_INVALID_STATE', 'Invalid state for operation setAuthTag');
    if (!validTagLen(s.info.mode, tag.length) || (s.tagLen > 0 && tag.length !== s.tagLen)) {
      throw cryptoError('ERR_CRYPTO_INVALID_AUTH_TAG', `Invalid authentication tag length: ${tag.length}`);
    }
    s.tag = new Uint8Array(tag);
    return this;
  }
}

function createCipheriv(cipher, key, iv, options) { return new Cipheriv(cipher, key, iv, options); }
function createDecipheriv(cipher, key, iv, options) { return new Decipheriv(cipher, key, iv, options); }

const ciphers = [];
for (const b of [128, 192, 256]) {
  for (const m of ['cbc', 'cfb', 'ctr', 'ecb', 'gcm', 'ofb']) ciphers.push(`aes-${b}-${m}`);
  ciphers.push(`aes${b}`, `id-aes${b}-GCM`, `aes${b}-wrap`, `id-aes${b}-wrap`, `id-aes${b}-wrap-pad`);
}
ciphers.push('chacha20', 'chacha20-poly1305', 'des-ede', 'des-ede-cbc', 'des-ede-ecb', 'des-ede3', 'des-ede3-cbc',
  'des-ede3-ecb', 'des3');
ciphers.sort();

// OpenSSL's numeric ids, for getCipherInfo.
const nids = {
  'aes-128-ecb': 418, 'aes-128-cbc': 419, 'aes-128-ofb': 420, 'aes-128-cfb': 421,
  'aes-192-ecb': 422, 'aes-192-cbc': 423, 'aes-192-ofb': 424, 'aes-192-cfb': 425,
  'aes-256-ecb': 426, 'aes-256-cbc': 427, 'aes-256-ofb': 428, 'aes-256-cfb': 429,
  'id-aes128-gcm': 895, 'id-aes192-gcm': 898, 'id-aes256-gcm': 901,
  'aes-128-ctr': 904, 'aes-192-ctr': 905, 'aes-256-ctr': 906, 'chacha20-poly1305': 1018, 'chacha20': 1019,
  'des-ede': 32, 'des-ede3': 33, 'des-ede-cbc': 43, 'des-ede3-cbc': 44,
  'id-aes128-wrap': 788, 'id-aes192-wrap': 789, 'id-aes256-wrap': 790,
  'id-aes128-wrap-pad': 897, 'id-aes192-wrap-pad': 900, 'id-aes256-wrap-pad': 903,
};
// The names OpenSSL resolves to another's info.
const cipherAliases = { des3: 'des-ede3-cbc', 'des-ede3-ecb': 'des-ede3', 'des-ede-ecb': 'des-ede' };

function getCipherInfo(nameOrNid, options) {
  if (typeof nameOrNid !== 'string' && typeof nameOrNid !== 'number') throw U.invalidType('nameOrNid', 'one of type string or number', nameOrNid);
  if (options !== undefined) {
    U.validateObject(options, 'options');
    if (options.keyLength !== undefined) U.validateInt(options.keyLength, 'options.keyLength', -(2 ** 31), 2 ** 31 - 1);
    if (options.ivLength !== undefined) U.validateInt(options.ivLength, 'options.ivLength', -(2 ** 31), 2 ** 31 - 1);
  }
  let name;
  if (typeof nameOrNid === 'number') {
    name = Object.keys(nids).find((k) => nids[k] === nameOrNid);
    if (!name) return undefined;
  } else if (typeof nameOrNid === 'string') {
    name = nameOrNid.toLowerCase().replace(/^aes-(\d+)-gcm$/, 'id-aes$1-gcm').replace(/^aes(\d+)$/, 'aes-$1-cbc');
    name = (cipherAliases[name] || name).replace(/^aes(\d+)-wrap/, 'id-aes$1-wrap');
  } else {
    throw U.invalidType('nameOrNid', 'one of type string or number', nameOrNid);
  }
  if (!nids[name]) return undefined;
  const info = cipherInfo(name);
  const stream = info.mode === 'chacha20' || info.mode === 'chacha20-poly1305';
  let ivLength = info.ivLen > 0 ? info.ivLen : info.ivLen < 0 ? 12 : undefined;
  let keyLength = info.keyLen;
  if (options !== undefined) {
    U.validateObject(options, 'options');
    if (options.keyLength !== undefined) {
      if (options.keyLength !== info.keyLen) return undefined;
      keyLength = options.keyLength;
    }
    if (options.ivLength !== undefined) {
      const ok = info.ivLen < 0 ? options.ivLength > 0 : options.ivLength === info.ivLen;
      if (!ok) return undefined;
      ivLength = options.ivLength;
    }
  }
  const res = { mode: stream ? 'stream' : info.mode === 'wrappad' ? 'wrap' : info.mode, name, nid: nids[name] };
  if (!stream) res.blockSize = ['cbc', 'ecb', 'wrap', 'wrappad'].includes(info.mode) ? info.blockSize : 1;
  if (ivLength !== undefined) res.ivLength = ivLength;
  res.keyLength = keyLength;
  return res;
}

module.exports = { Cipheriv, Decipheriv, createCipheriv, createDecipheriv, getCiphers: () => ciphers.slice(), getCipherInfo };
