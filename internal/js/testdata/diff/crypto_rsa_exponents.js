// RSA public exponents: OpenSSL's rules (odd, at least 3), keys made with
// 3, 17 and 2^31-1 that sign and verify, and crypto.subtle's refusals.
const c = require('crypto');
for (const e of [1, 2, 4, 3, 17, 0x7fffffff]) { try { const k = c.generateKeyPairSync('rsa', { modulusLength: 1024, publicExponent: e }); console.log(e, 'ok', k.publicKey.asymmetricKeyDetails.publicExponent, c.verify('sha256', Buffer.from('x'), k.publicKey, c.sign('sha256', Buffer.from('x'), k.privateKey))); } catch (x) { console.log(e, x.name, x.code, x.message); } }
(async () => {
  for (const e of [[1], [3], [4], [1, 0, 0, 0, 1], [1, 0, 1]]) {
    console.log(e, await crypto.subtle.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array(e), hash: 'SHA-256' }, true, ['sign']).then((k) => k.privateKey.algorithm.publicExponent, (x) => x.name + ' ' + x.message));
  }
})();
