// Keys: import of fixed PEM/DER/JWK keys, their exports, deterministic
// signatures (RSA PKCS #1 v1.5, Ed25519), verification of signatures made by
// node, RSA decryption of node's ciphertexts, ECDH, and Node's errors.
const crypto = require('crypto');
const RSA_PKCS1 = `-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAwT60s2Xb6y4pyCv0xknsc5jiq4HMIIKg+C7E5z74glrmD+Nu
Z9q9obvtXGD6ORxsfUtRWOfNhlxQF4fRmR4US9vbsQvZpBbgwWusGxXk2Hm+RBTS
SGgKWc+WZkAIWGrlO03MYHuHSPTkxI9P2yDsmXoHWtRZcjxLDBebEud9GA0C4mPZ
Gvb07//Q17qD0vH8wNBKC4aQzRNb9nHFlNc2/ZsZ+pKHTruH5FzZJp9q/uyiSN6C
JqwBq/UlI3RpFJbYxavgfx4gvCe+KE4OhZFmq3ZHnSFuTc7gtWlbRKQhPx6Ayc3T
U3LlU7WwJ9SNTUPo7vvT5QJktudWHjQ4G2vUswIDAQABAoIBABwW13ZSN9l4wCsF
X1LpUOeWprAZBwkHY+A0utCwNw2KVUb5n0U/pvEuRg4iVzeGTwDBZMWAYEAHsBP+
MonIClmNJOMYdAjQKIME+c3awgUeC87imz8Exyhkg8SWHysW/VNq92pjhPfRB7sd
579+4CqznFkSunO1RDqxkwwi6OyIoAQNsQ8AwRRKAZ8IWEjxLSFrvIUB2efPPhDY
mmp08xKKjPXa/GWa7bGV9p+/N3Il9nrS37/Bj0ie+no9IPT1IDaTjCfe0Ud6bXma
zxK3RvBmn+gmICuVs1bop5wYjAzD1tFTUKPO3ziwElDX6e9OSN6Frx8tycekFHY6
n9LJ1g0CgYEA9J2PgzAsnc9m543FXQ9uftVIm1skSg9BER3Vqmn9MFH5Y8FQvVC7
mqTCVp81AOgIJ0mUqF2KvBj6Zy5SqDmfwk8uCvuGPqm784WVRUsTjNeRdCi5eLPY
MzZk/7cLbYKB3k9KXpAoPmMQpfgOYV4hsGj/cSSdEGYMXW3x6wJeDO0CgYEAyj0Z
B6OJSEB0D7ZWuFMQKtxhqaTJezY8qRIXgYflMhSBj/HyDbJ3yGZ1TE+RdMnk04z2
12rVAQ9mh0OynQR0lg+gdWY0GlGikvm/fZswv0EPhiH67PXg3hf685LJrMOCAoq5
OL4OMyCyAGlW8Jipq9QkH4JX26N0USSOOdYk1B8CgYAuyGuIFZCS5fWyV2TltWvW
iggG3lmEaIJzOZeBrh+kPClMMM62Rlh67QPV+UDz2WylxubNhIZiDwzk6vEYB11M
lkQiCZTVKzUtD+FKjV9B0oCZDKjcMtkogkCyv1lKKmmYEOYSS9PGir/GXjix2oTq
7kncY7o+RqYawEpCPgOqyQKBgQC8qfa5q5QcNRSQu9d2qPaCJYluSu4y5Uv9pYUM
L4xfBcZAVMMsh/s6lmqCwA+/1cCEohJ8r4r6LDXHph3wYQGqI/Xaz3d3vgRd/GLp
eGcnZDhpNzXw7QfT6KcRpzRA2TplyKg2CQcSJ0QnIh4a4TAXvhXc1ynDGl8ee227
AszknQKBgQC0zzfgoQlCpvWoRFTSbtP9Xd+EoqysDaG6RpKyCE6sQTE+I8FOOwqV
VD5gDxqXIV0+5kWWH2d4oLWvug6QvTWhE3yx5QIcNZSjNbkeRn+96mkezdmr9R3L
ngXMw+6tCAqjGmzIDgrUAxw9AnudjQ+Wc8e3f139x4WsL8XNrbJ+TA==
-----END RSA PRIVATE KEY-----
`;
const EC_SEC1 = `-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIGwe86gqdlmgxtEDNx18igQuU2ey9BB1KuS7xyVvh4X5oAoGCCqGSM49
AwEHoUQDQgAEOa2aXuiwIUqXnzuPxZmuxeOJkGWL7569TMY7PbG4/aR91VpcOal2
NJlFJ8hk1bRsrKNsWPW7k7OftVbcK60tQQ==
-----END EC PRIVATE KEY-----
`;
const EC384_PKCS8 = `-----BEGIN PRIVATE KEY-----
MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBzOKRb9FZqTrlNygAb
5bpDkLZHPZhvJoP+Y1sNcKEsY6Q7LloJaszYOTlTcZXNcY6hZANiAARV0e9S/d+Y
nH5NCPFRz/HA46S4/xuBIYEpq0fYgErKzuNzADm8C4mWeTT1FPEh1M+1VwRTHCC0
FdJgnAu6XWazTjbCu/zsQw4GpwACdrrL8xI6bERLnsQSaLZIFa3KHyM=
-----END PRIVATE KEY-----
`;
const ED_PKCS8 = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIERshamrhALEq12MzC4MyLLgzTrh812dq0kAYibyNlCl
-----END PRIVATE KEY-----
`;
const X_PKCS8 = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VuBCIEIGAFBu05KUSsX6rgkQfGIryUTrxVSKVCffelBMVtEoBZ
-----END PRIVATE KEY-----
`;
const EC_SIG = '304402207dc360dc534705c7fe96f6bbd6775c23c4f540f200e9aad67dda03ef258bfb880220615b97f2c3966dd0dff1f95596bd611a69c6e0d262f74136c6fa3b51d0fb10bc';
const EC384_SIG_P1363 = 'e7ba6aa83a69fe81f7a23ad3d793e75dc5dc78e85f0371e67197ac1004675b0b7cf13eb703069e6283991aa104ca54a06c7f611d324807155287544a68183ed039ae41f77aac8890fa7b12291e447a578a42641fc5406cca73a3488094f804f8';
const PSS_SIG = '8c39ec64f77501cd439dfef7c2ef17f5ccafadbcf2df52073c321b5b8a525e701271caf92f17cc57e023db4a95056054b59a5ecdd882014b385f4a316950827c82b18240d67581127457d78ed6b3f62e8c250a8ba4135428e595c1a92d2bee206d729bc4e16ac2d5bb45f0611170e363f2af0e10b29992ad16277131a64a2c20bc9fe55895a6ede995c870ca0b12f9170656604240e19e754e756619438d640d5a5346ac9aa3a891ee302eb7b6c9dbbf2faac315a0fdc736300e7ab83762392bd0b77650fd81b3af0c24d27e8a4f93daa5c1369d9235d493dd01d369e645bfc4645d6573083ee4aa6626002edfbb26e0c68ab0a63bf2f905a1d06840392ccd46';
const OAEP_CT = '397d0c8255967aa765b5ff5fc3f550a424d6e55df46415e355b31718291c1453fccc62f8a757196222d94e9a8fb78280a0032e7a63b3774a197d6d6f4c098ef02ef398cc358397e1663f85883cecf95c2f924cc27cdddcc918d6df5192dfd40e39a143ff379c23a23238f5f00c245e01f3234e6341ab33f2ab5961741464c3c67518f24febb659a7b4c4c277ae8508f138a58810d1f813aea88d1653b89f36c7a742a640176e6dc6fff8e5b02f733ed0d6af6a5f5e5c60e41e90f77ea00368ac02c4f5b9ec94c247f929d9c355b60320a8d19355d10cbf33bb257799c6e52a1137c2abdcde170c876190d0d24ed87a560f66ff079aa1145a9e3125e5b556162e';
const OAEP256_CT = '52c4931250485edfee2cf7972129f1c0349d32ddf252ece78a6d4ab825ea748d9b0200c9e4f7f259232ab129747bee6239368658ebb7d762b2edaa02ad39dd5309114e9988738b6e4b3b236027013e0bb11f44a534f3282f2160f5a3001514781fb58332130c989a11d0a14fe4f2b19851a6a9bad4625233aa80ae17dbf70bf62a28486870921f0138d7338385080635948632b104aa24d37c4a99baab977e4611eb09e54a60272bd434c5da4dc270bd1240ed5deebb063d31d151b76905a472de8566d37640d72c4f816ccdbf88c571c493c07e786097f72f904ca3e8cbcfbb7b5f865703efd120eea69eaa7417e4cd3a3d84cb771003f2712f057c62864d53';
function show(label, f) {
  try { console.log(label, f()); } catch (e) { console.log(label, 'throws', e.name, e.code, e.message); }
}
const msg = Buffer.from('message to sign');

const rsa = crypto.createPrivateKey(RSA_PKCS1);
const ec = crypto.createPrivateKey(EC_SEC1);
const ec384 = crypto.createPrivateKey({ key: EC384_PKCS8, format: 'pem' });
const ed = crypto.createPrivateKey(ED_PKCS8);
const x = crypto.createPrivateKey(Buffer.from(X_PKCS8));
for (const [name, k] of Object.entries({ rsa, ec, ec384, ed, x })) {
  const pub = crypto.createPublicKey(k);
  show(`${name} type`, () => [k.type, k.asymmetricKeyType, k.asymmetricKeyDetails, pub.type, pub.asymmetricKeyType, k.symmetricKeySize]);
  show(`${name} pkcs8`, () => k.export({ type: 'pkcs8', format: 'pem' }));
  show(`${name} spki`, () => pub.export({ type: 'spki', format: 'pem' }));
  show(`${name} der`, () => [k.export({ type: 'pkcs8', format: 'der' }).toString('hex'), pub.export({ type: 'spki', format: 'der' }).toString('base64')]);
  show(`${name} jwk`, () => [k.export({ format: 'jwk' }), pub.export({ format: 'jwk' })]);
  show(`${name} pkcs1`, () => [k.export({ type: 'pkcs1', format: 'pem' }), pub.export({ type: 'pkcs1', format: 'der' }).toString('hex')]);
  show(`${name} sec1`, () => k.export({ type: 'sec1', format: 'pem' }));
  show(`${name} round trips`, () => [
    crypto.createPrivateKey({ key: k.export({ type: 'pkcs8', format: 'der' }), format: 'der', type: 'pkcs8' }).equals(k),
    crypto.createPrivateKey({ key: k.export({ format: 'jwk' }), format: 'jwk' }).equals(k),
    crypto.createPublicKey({ key: pub.export({ format: 'jwk' }), format: 'jwk' }).equals(pub),
    crypto.createPublicKey({ key: k.export({ format: 'jwk' }), format: 'jwk' }).equals(pub),
    crypto.createPublicKey(pub.export({ type: 'spki', format: 'pem' })).equals(pub),
    crypto.createPublicKey(k.export({ type: 'pkcs8', format: 'pem' })).equals(pub),
    crypto.createPublicKey({ key: k.export({ type: 'pkcs8', format: 'der' }), format: 'der', type: 'pkcs8' }).equals(pub),
    k.equals(pub), pub.equals(k), String(k),
  ]);
}
show('rsa pkcs1 public', () => crypto.createPublicKey(crypto.createPublicKey(rsa).export({ type: 'pkcs1', format: 'pem' })).equals(crypto.createPublicKey(rsa)));
show('sec1 der', () => crypto.createPrivateKey({ key: ec.export({ type: 'sec1', format: 'der' }), format: 'der', type: 'sec1' }).equals(ec));
show('pkcs1 der', () => crypto.createPrivateKey({ key: rsa.export({ type: 'pkcs1', format: 'der' }), format: 'der', type: 'pkcs1' }).equals(rsa));
show('pem with text around', () => crypto.createPrivateKey(`junk before\n${ED_PKCS8}junk after`).equals(ed));

// Deterministic signatures.
show('rsa sha256', () => crypto.sign('sha256', msg, rsa).toString('base64'));
show('rsa sha1 stream', () => crypto.createSign('RSA-SHA1').update('message ').update('to sign').sign(rsa, 'hex'));
show('rsa sha512 pem', () => crypto.createSign('sha512').update(msg).sign(RSA_PKCS1, 'base64'));
show('rsa null alg', () => crypto.sign(null, msg, rsa).equals(crypto.sign('sha256', msg, rsa)));
show('ed25519', () => crypto.sign(null, msg, ed).toString('hex'));
show('ed25519 pem', () => crypto.sign(undefined, msg, ED_PKCS8).toString('hex'));
const edPub = crypto.createPublicKey(ed);
show('ed25519 verify', () => [crypto.verify(null, msg, edPub, crypto.sign(null, msg, ed)), crypto.verify(null, Buffer.from('other'), edPub, crypto.sign(null, msg, ed))]);

// Verifying node's signatures.
const ecPub = crypto.createPublicKey(ec), ec384Pub = crypto.createPublicKey(ec384), rsaPub = crypto.createPublicKey(rsa);
show('ecdsa der', () => [crypto.verify('sha256', msg, ecPub, Buffer.from(EC_SIG, 'hex')), crypto.createVerify('sha256').update(msg).verify(ecPub, EC_SIG, 'hex'), crypto.verify('sha256', Buffer.from('x'), ecPub, Buffer.from(EC_SIG, 'hex'))]);
show('ecdsa p1363', () => [crypto.verify('sha384', msg, { key: ec384Pub, dsaEncoding: 'ieee-p1363' }, Buffer.from(EC384_SIG_P1363, 'hex')), crypto.verify('sha384', msg, ec384Pub, Buffer.from(EC384_SIG_P1363, 'hex'))]);
show('rsa pss', () => [
  crypto.verify('sha256', msg, { key: rsaPub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, Buffer.from(PSS_SIG, 'hex')),
  crypto.verify('sha256', msg, { key: rsaPub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING }, Buffer.from(PSS_SIG, 'hex')),
  crypto.verify('sha256', msg, rsaPub, Buffer.from(PSS_SIG, 'hex')),
]);
show('own signatures', () => {
  const out = [];
  for (const [k, p, opts] of [[ec, ecPub, {}], [ec384, ec384Pub, { dsaEncoding: 'ieee-p1363' }], [rsa, rsaPub, { padding: 6, saltLength: 20 }], [rsa, rsaPub, { padding: 6 }]]) {
    const s = crypto.createSign('sha384').update(msg).sign({ key: k, ...opts });
    out.push(crypto.createVerify('sha384').update(msg).verify({ key: p, ...opts }, s));
    out.push(crypto.verify('sha384', msg, { key: k, ...opts }, s));
  }
  return out;
});
show('oaep', () => crypto.privateDecrypt(rsa, Buffer.from(OAEP_CT, 'hex')).toString());
show('oaep sha256', () => crypto.privateDecrypt({ key: RSA_PKCS1, oaepHash: 'sha256', oaepLabel: Buffer.from('lbl') }, Buffer.from(OAEP256_CT, 'hex')).toString());
show('oaep round trip', () => crypto.privateDecrypt(rsa, crypto.publicEncrypt(rsaPub, Buffer.from('round trip'))).toString());
show('pkcs1 encrypt', () => crypto.publicEncrypt({ key: rsaPub, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from('x')).length);
show('private encrypt', () => [crypto.privateEncrypt(rsa, Buffer.from('raw')).toString('hex').slice(0, 40), crypto.publicDecrypt(rsaPub, crypto.privateEncrypt(rsa, Buffer.from('raw'))).toString()]);

// ECDH and diffieHellman with fixed keys.
const e1 = crypto.createECDH('prime256v1');
e1.setPrivateKey(Buffer.alloc(32, 7));
const e2 = crypto.createECDH('prime256v1');
e2.setPrivateKey('0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20', 'hex');
show('ecdh keys', () => [e1.getPublicKey('hex'), e1.getPublicKey('base64', 'compressed'), e2.getPublicKey('hex', 'hybrid'), e2.getPrivateKey('hex')]);
show('ecdh secret', () => [e1.computeSecret(e2.getPublicKey()).toString('hex'), e2.computeSecret(e1.getPublicKey('hex', 'compressed'), 'hex', 'hex')]);
show('ecdh convert', () => crypto.ECDH.convertKey(e1.getPublicKey(), 'prime256v1', null, 'hex', 'compressed'));
const e3 = crypto.createECDH('secp384r1');
e3.setPrivateKey(Buffer.alloc(48, 3));
show('ecdh p384', () => e3.getPublicKey('hex'));
const x9 = crypto.createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), Buffer.alloc(32, 9)]), format: 'der', type: 'pkcs8' });
show('dh x25519', () => [crypto.diffieHellman({ privateKey: x, publicKey: crypto.createPublicKey(x9) }).toString('hex'), crypto.diffieHellman({ privateKey: x9, publicKey: crypto.createPublicKey(x) }).toString('hex')]);
const e2pub = e2.getPublicKey();
const ecj = crypto.createPrivateKey({ key: { kty: 'EC', crv: 'P-256', d: e2.getPrivateKey().toString('base64url'), x: e2pub.subarray(1, 33).toString('base64url'), y: e2pub.subarray(33).toString('base64url') }, format: 'jwk' });
show('dh ec', () => [crypto.diffieHellman({ privateKey: ec, publicKey: crypto.createPublicKey(ecj) }).toString('hex'), crypto.diffieHellman({ privateKey: ecj, publicKey: ecPub }).toString('hex')]);

// Secret keys.
const sk = crypto.createSecretKey(Buffer.from('0123456789abcdef'));
show('secret', () => [sk.type, sk.symmetricKeySize, sk.asymmetricKeyType, sk.export().toString(), sk.export({ format: 'jwk' }), sk.equals(crypto.createSecretKey('0123456789abcdef', 'utf8')), sk.equals(crypto.createSecretKey(Buffer.from('x')))]);

// Generated keys: shapes only.
for (const [t, o] of [['rsa', { modulusLength: 1024 }], ['ec', { namedCurve: 'P-384' }], ['ec', { namedCurve: 'prime256v1' }], ['ed25519'], ['x25519']]) {
  show(`generate ${t}`, () => {
    const { publicKey, privateKey } = crypto.generateKeyPairSync(t, o);
    return [publicKey.type, privateKey.asymmetricKeyType, privateKey.asymmetricKeyDetails, crypto.createPublicKey(privateKey).equals(publicKey)];
  });
}
show('generate pem', () => { const r = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'sec1', format: 'der' } }); return [typeof r.publicKey, r.publicKey.split('\n')[0], Buffer.isBuffer(r.privateKey)]; });
crypto.generateKeyPair('ed25519', (err, pub, priv) => console.log('async generate', err, pub.type, priv.asymmetricKeyType));

// Errors.
show('truncated pem', () => crypto.createPrivateKey('-----BEGIN PRIVATE KEY-----\nMC4CAQA'));
show('garbage', () => crypto.createPublicKey('garbage'));
show('bad der', () => crypto.createPrivateKey({ key: Buffer.from('x'), format: 'der', type: 'pkcs8' }));
show('der no type', () => crypto.createPrivateKey({ key: Buffer.from('3000', 'hex'), format: 'der' }));
show('bad format', () => crypto.createPublicKey({ key: 'x', format: 'foo' }));
show('public as private', () => crypto.createPrivateKey(crypto.createPublicKey(ed).export({ type: 'spki', format: 'pem' })));
show('key object to createPrivateKey', () => crypto.createPrivateKey(ed));
show('jwk kty', () => crypto.createPrivateKey({ key: { kty: 'foo' }, format: 'jwk' }));
show('jwk crv', () => crypto.createPrivateKey({ key: { kty: 'EC', crv: 'P-999', x: 'AA', y: 'AA', d: 'AA' }, format: 'jwk' }));
show('jwk ec', () => crypto.createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', d: 'AA' }, format: 'jwk' }));
show('jwk okp', () => crypto.createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: 'AA', d: 'AA' }, format: 'jwk' }));
show('jwk missing', () => crypto.createPrivateKey({ key: { kty: 'RSA', n: 'AA', e: 'AQAB' }, format: 'jwk' }));
show('jwk string', () => crypto.createPrivateKey({ key: 'x', format: 'jwk' }));
show('export no options', () => ed.export());
show('export pkcs1 ed', () => ed.export({ type: 'pkcs1', format: 'pem' }));
show('export sec1 rsa', () => rsa.export({ type: 'sec1', format: 'pem' }));
show('export format', () => ed.export({ type: 'pkcs8', format: 'foo' }));
show('export passphrase', () => ed.export({ type: 'pkcs8', format: 'pem', passphrase: 'x' }));
show('sign with public', () => crypto.sign(null, msg, edPub));
show('sign x25519', () => crypto.sign('sha256', msg, x));
show('sign ed25519 stream', () => crypto.createSign('sha256').update('x').sign(ed));
show('sign ed25519 digest', () => crypto.sign('sha256', msg, ed));
show('bad digest', () => crypto.createSign('foo'));
show('bad digest one-shot', () => crypto.sign('foo', msg, rsa));
show('bad padding', () => crypto.sign('sha256', msg, { key: rsa, padding: 99 }));
show('pss salt too long', () => crypto.sign('sha256', msg, { key: rsa, padding: 6, saltLength: 1000 }));
show('dsa encoding', () => crypto.sign('sha256', msg, { key: ec, dsaEncoding: 'foo' }));
show('sign twice', () => { const s = crypto.createSign('sha256'); s.update('x'); s.sign(rsa); return s.sign(rsa); });
show('bad signature', () => [crypto.verify('sha256', msg, rsaPub, Buffer.alloc(3)), crypto.verify('sha256', msg, ecPub, Buffer.alloc(3)), crypto.verify(null, msg, edPub, Buffer.alloc(3))]);
show('oaep garbage', () => crypto.privateDecrypt(rsa, Buffer.alloc(256)));
show('oaep too long', () => crypto.publicEncrypt(rsaPub, Buffer.alloc(300)));
show('pkcs1 decrypt', () => crypto.privateDecrypt({ key: rsa, padding: 1 }, Buffer.alloc(256)));
show('public decrypt garbage', () => crypto.publicDecrypt(rsaPub, Buffer.alloc(256)));
show('ecdh curve', () => crypto.createECDH('P-256'));
show('ecdh no key', () => crypto.createECDH('prime256v1').getPublicKey());
show('ecdh bad peer', () => e1.computeSecret(Buffer.alloc(65)));
show('ecdh bad private', () => crypto.createECDH('prime256v1').setPrivateKey(Buffer.alloc(32)));
show('ecdh format', () => e1.getPublicKey('hex', 'weird'));
show('dh mismatch', () => crypto.diffieHellman({ privateKey: x, publicKey: edPub }));
show('generate type', () => crypto.generateKeyPairSync('dsa2', {}));
show('generate curve', () => crypto.generateKeyPairSync('ec', { namedCurve: 'foo' }));
show('generate options', () => crypto.generateKeyPairSync('rsa'));
show('generate modulus', () => crypto.generateKeyPairSync('rsa', {}));
show('new KeyObject', () => new crypto.KeyObject());
show('secret type', () => crypto.createSecretKey(5));
show('equals', () => sk.equals(5));
{
  // PKCS #1 DER: a private key serves where a public one is wanted (the
  // DER tells them apart); a public key where a private one is wanted is
  // OpenSSL's DECODER error.
  const k = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
  const pubDER = k.publicKey.export({ format: 'der', type: 'pkcs1' });
  const privDER = k.privateKey.export({ format: 'der', type: 'pkcs1' });
  const msg = Buffer.from('pkcs1');
  for (const key of [pubDER, privDER]) {
    const ct = crypto.publicEncrypt({ key, format: 'der', type: 'pkcs1' }, msg);
    console.log('pkcs1 der as public', crypto.privateDecrypt(k.privateKey, ct).equals(msg));
  }
  try { crypto.createPrivateKey({ key: pubDER, format: 'der', type: 'pkcs1' }); } catch (e) { console.log('pkcs1 public as private', e.message, e.library); }
}
