'use strict';
// The Web Crypto objects (globalThis.crypto, crypto.subtle and their
// classes), small enough for crypto.js to load at once; the subtle methods
// are in webcrypto.js, loaded on their first call.
const wc = () => require('./webcrypto.js');
const kSubtle = Symbol('SubtleCrypto');
function illegal() { const e = new TypeError('Illegal constructor'); e.code = 'ERR_ILLEGAL_CONSTRUCTOR'; return e; }
function invalidThis(type) {
  const e = new TypeError(`Value of "this" must be of type ${type}`);
  e.code = 'ERR_INVALID_THIS';
  return e;
}
class SubtleCrypto {
  constructor(token) { if (token !== kSubtle) throw illegal(); }
  get [Symbol.toStringTag]() { return 'SubtleCrypto'; }
}
let subtle;
for (const [m, n] of [['encrypt', 3], ['decrypt', 3], ['sign', 3], ['verify', 4], ['digest', 2], ['generateKey', 3],
  ['deriveKey', 5], ['deriveBits', 2], ['importKey', 5], ['exportKey', 2], ['wrapKey', 4], ['unwrapKey', 7]]) {
  const f = {
    async [m](...args) {
      if (this !== subtle) throw invalidThis('SubtleCrypto');
      return wc()[m](...args);
    },
  }[m];
  Object.defineProperty(f, 'length', { value: n });
  Object.defineProperty(SubtleCrypto.prototype, m, { value: f, writable: true, enumerable: true, configurable: true });
}
subtle = new SubtleCrypto(kSubtle);
class Crypto {
  constructor(token) { if (token !== kSubtle) throw illegal(); }
  get [Symbol.toStringTag]() { return 'Crypto'; }
}
const cryptoMembers = {
  get subtle() { if (this !== webcrypto) throw invalidThis('Crypto'); return subtle; },
  getRandomValues(ta) { if (this !== webcrypto) throw invalidThis('Crypto'); return require('../crypto.js').getRandomValues(ta); },
  randomUUID() { if (this !== webcrypto) throw invalidThis('Crypto'); return require('../crypto.js').randomUUID(); },
};
for (const k of ['subtle', 'getRandomValues', 'randomUUID']) {
  const d = Object.getOwnPropertyDescriptor(cryptoMembers, k);
  d.enumerable = true;
  Object.defineProperty(Crypto.prototype, k, d);
}
const webcrypto = new Crypto(kSubtle);
module.exports = { webcrypto, subtle, Crypto, SubtleCrypto, CryptoKey: () => wc().CryptoKey };
