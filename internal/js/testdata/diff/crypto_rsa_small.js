// RSA keys under 1024 bits (crypto/rsa refuses them; node:crypto runs its
// own encodings for them): deterministic PKCS #1 v1.5 signatures and
// privateEncrypt blocks of fixed keys made by host node, PSS and OAEP
// round trips, OpenSSL's refusals when a digest or salt does not fit,
// and generated keys of 512 and 513 bits.
const c = require('crypto');
const P = c.constants;
const k512 = c.createPrivateKey(`-----BEGIN RSA PRIVATE KEY-----
MIIBOgIBAAJBAMAC/jzn+OYkgVEcDAGvmQhGsDXmlvC4yPGeagc27rrGMxGFJF1C
nBIMgqnCRewZz1YuDE/iKuvKf3KOjdA6GjkCAwEAAQJAQkOGK8y+Z+YnPq+YMSjB
fkqu2xsl8hNDPac23iCGCKxufM6x7f6VAdOv7Ldfb8AnSxTLd4XyrPv0Qu4K8Xm7
VQIhAOtR9U6rxepCpMjgB4rvyzWN3kOHvL+lrV99NXhVWyAnAiEA0OK3YtI0THqE
SUMWZo5td4dc2fi+spV2rWaitwSJDp8CIHECJg1G3sAWiy5QsC6f4/XvEItbt2BN
/0m5RqFoVF/HAiEApK5ZDhvTB4h/ypKNkoUvYFDjryUgkwKq8cI8/jUhKNkCID+r
AOhBL/LzuA1beqwTYEe9yjM6j7ImcXAUz2xfJ+o3
-----END RSA PRIVATE KEY-----`);
const k777 = c.createPrivateKey(`-----BEGIN PRIVATE KEY-----
MIIB5wIBADANBgkqhkiG9w0BAQEFAASCAdEwggHNAgEAAmIBnZm48MNUSv3iGlRc
5GymemHdcLZGahQLdjYaSQ6w3QsjlaPYUTZyzFS4pmF+h85cBaLxNFNXEiLgQZc3
zNEqleppx1L04oN2huqfovdIcQ+lCzpq5oEpWH5ghcQyNf0FaQIBAwJiARO70KCC
ODH+lrw4Pe2dxFGWk6B5hEa4B6QkEYYJyz4HbQ5tOuDO9zLjJcRA/wU0PTuiEIpW
O0DgtPZCXdvc5zCElBB7S2VUyf+iAtqaTXOMLznIhYmpKhg/N0fFDHAnaqsCMR65
11jJASMaeQpZIjsVJ1YVwGdUykqu5CgINi/dlp/O79tUXyaqGRWy2gDgp3fndAEC
MQ12AQwI/Q23V8XaiMfwqHcNy0dFOX/VY19vZSsyPaPublk5Q3FZUR5ss5k7+BXa
cWkCMRR75OXbVhdm+1w7bCdjb465Ku+N3DHJ7XAFeXU+ZGqJ9Tzi6hnGu2PMkVXr
Gk/voqsCMQj5VggF/gkk5S6RsIVLGvoJMi+De6qOQj+fmMd208Ke9Dt7gkuQ4L7z
ImYn+rk8S5sCMQdXpZwgY4TOlr5XxNiFSn4SdJ+QnrmbdELdgXodC/iJbHiZ9HdR
SG/IW0M7OngcuME=
-----END PRIVATE KEY-----`);
const msg = Buffer.from('small keys');
const tryIt = (f) => { try { return f(); } catch (e) { return `${e.code} ${e.message}`; } };
const hex = (b) => (Buffer.isBuffer(b) ? b.toString('hex') : b);
for (const [name, k] of [['512', k512], ['777', k777]]) {
  const pub = c.createPublicKey(k);
  console.log(name, k.asymmetricKeyDetails, pub.asymmetricKeyDetails);
  for (const h of ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha512-256', 'sha3-256']) {
    const sig = tryIt(() => c.sign(h, msg, k));
    console.log(name, h, hex(sig), Buffer.isBuffer(sig) && c.verify(h, msg, pub, sig));
  }
  for (const saltLength of [undefined, P.RSA_PSS_SALTLEN_DIGEST, 0, 10, 1000]) {
    for (const h of ['sha1', 'sha256']) {
      const sig = tryIt(() => c.sign(h, msg, { key: k, padding: P.RSA_PKCS1_PSS_PADDING, saltLength }));
      if (!Buffer.isBuffer(sig)) { console.log(name, 'pss', h, saltLength, sig); continue; }
      console.log(name, 'pss', h, saltLength, sig.length,
        c.verify(h, msg, { key: pub, padding: P.RSA_PKCS1_PSS_PADDING, saltLength }, sig),
        c.verify(h, msg, { key: pub, padding: P.RSA_PKCS1_PSS_PADDING, saltLength: P.RSA_PSS_SALTLEN_AUTO }, sig),
        saltLength === 0 ? hex(sig) : '');
    }
  }
  for (const oaepHash of ['sha1', 'sha256', 'sha512']) {
    const ct = tryIt(() => c.publicEncrypt({ key: pub, oaepHash }, msg));
    console.log(name, 'oaep', oaepHash, Buffer.isBuffer(ct) ? c.privateDecrypt({ key: k, oaepHash }, ct).toString() : ct);
  }
  const pk1 = c.publicEncrypt({ key: pub, padding: P.RSA_PKCS1_PADDING }, msg);
  console.log(name, 'pkcs1 encrypt', pk1.length);
  const pe = c.privateEncrypt(k, msg);
  console.log(name, 'privateEncrypt', hex(pe), c.publicDecrypt(pub, pe).toString());
  console.log(name, 'bad oaep', tryIt(() => c.privateDecrypt(k, Buffer.alloc(pk1.length, 1))));
  console.log(name, 'too long', tryIt(() => c.publicEncrypt(pub, Buffer.alloc(200))));
  console.log(name, 'verify misfits', tryIt(() => c.verify('sha512', msg, pub, Buffer.alloc(64, 1))),
    tryIt(() => c.verify('sha512', msg, { key: pub, padding: P.RSA_PKCS1_PSS_PADDING }, Buffer.alloc(64, 1))),
    tryIt(() => c.verify('sha256', msg, pub, Buffer.alloc(200, 1))),
    tryIt(() => c.privateDecrypt({ key: k, oaepHash: 'sha512' }, Buffer.alloc(64, 1))));
}
for (const [modulusLength, publicExponent] of [[512, 65537], [513, 3], [511, 65537], [256, 3]]) {
  const r = tryIt(() => c.generateKeyPairSync('rsa', { modulusLength, publicExponent }));
  if (typeof r === 'string') { console.log(modulusLength, r); continue; }
  const sig = c.sign('sha256', msg, r.privateKey);
  console.log(modulusLength, r.publicKey.asymmetricKeyDetails, sig.length, c.verify('sha256', msg, r.publicKey, sig),
    c.privateDecrypt(r.privateKey, c.publicEncrypt(r.publicKey, msg)).toString());
}
c.generateKeyPair('rsa', { modulusLength: 512 }, (err, pub, priv) => {
  console.log('async', err, pub.asymmetricKeyDetails, c.verify(null, msg, pub, c.sign(null, msg, priv)));
});
