'use strict';
// Triple DES (EDE3 and two-key EDE, CBC and ECB) as OpenSSL 3's default
// provider: ciphertexts, padding, getCipherInfo, a wrong key's error.
const crypto = require('crypto');
for (const n of ['des-ede3-cbc', 'des3', 'des-ede3', 'des-ede3-ecb', 'des-ede-cbc', 'des-ede', 'DES-EDE3-CBC']) {
  const ci = crypto.getCipherInfo(n);
  const k = Buffer.alloc(ci.keyLength, 1);
  const iv = ci.ivLength ? Buffer.alloc(ci.ivLength, 2) : null;
  const x = crypto.createCipheriv(n, k, iv);
  const ct = Buffer.concat([x.update('hello world, des'), x.update('!'), x.final()]);
  const d = crypto.createDecipheriv(n, k, iv);
  console.log(n, JSON.stringify(ci), ct.toString('hex'), Buffer.concat([d.update(ct.subarray(0, 5)), d.update(ct.subarray(5)), d.final()]).toString());
  const d2 = crypto.createDecipheriv(n, Buffer.alloc(ci.keyLength, 3), iv);
  try { d2.update(ct); d2.final(); console.log('no error'); } catch (e) { console.log(e.code, e.reason); }
  const np = crypto.createCipheriv(n, k, iv).setAutoPadding(false);
  try { np.update('odd'); np.final(); } catch (e) { console.log(e.code, e.reason); }
}
for (const [n, k, iv] of [['des-ede3-cbc', 23, 8], ['des-ede3-cbc', 24, 16], ['des-ede-cbc', 24, 8], ['des-ede3', 24, 8]]) {
  try { crypto.createCipheriv(n, Buffer.alloc(k), Buffer.alloc(iv)); console.log('ok'); } catch (e) { console.log(e.code, e.message); }
}
console.log(crypto.getCipherInfo(44).name, crypto.getCipherInfo('des3', { keyLength: 16 }));
