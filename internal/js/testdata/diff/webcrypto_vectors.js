// crypto.subtle with fixed keys and deterministic algorithms: digests,
// HMAC, AES-GCM/CBC/CTR/KW, PBKDF2, HKDF, RSASSA-PKCS1-v1_5, RSA-PSS with
// saltLength 0, Ed25519, ECDH and X25519 agreement, key export in every
// format, and cross-checks with node:crypto.
const nc = require('crypto');
const s = globalThis.crypto.subtle;
const hex = (b) => Buffer.from(b instanceof ArrayBuffer ? b : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)).toString('hex');
const u8 = (h) => new Uint8Array(Buffer.from(h, 'hex'));
const te = new TextEncoder();
const ECA = {"kty":"EC","x":"rsGzvr7u7Iq26AuBtOemmPuhiFIAwB_12_Xao6uOywQ","y":"_yuQdA3jZUXKUvxjvLWYAHISfjad1YbcIirtf-HxrH0","crv":"P-256","d":"vK5EZPMK97wkTpjJjI-ZNHuhpBmUbkPsrcXJfTbCfIs"};
const ECB = {"kty":"EC","x":"cBAT--_UF8ubm5iSRFuYdUB4m7VELfCag2OrMyUPTg4","y":"vLUdV4MSApRzIdSF21b6b3gvqdLLffO7WDZLRZH9p-A","crv":"P-256","d":"wBCOtLvDWqUyOYTJGEBF-x0mjCZKnGIDpytwfDCDELg"};
const EC384 = {"kty":"EC","x":"GF54G7FPlagAE7oa-rbKUhRNjcmgfgiKHUWmtEN2eaX37Fr0mVsHie3uSzAk4WyK","y":"9w2PL2u2FHIZiA8fIAwTSxU1lUgGs411uno0rtmqaCjSI-7832B5c7QD5uO3QRmT","crv":"P-384","d":"EehtbAzWPike3iFyfXDHl9aJnBbP2nsuHXU7gbzkLQrzpiw4ngDplfGX_ypiiGCO"};
const EC521 = {"kty":"EC","x":"ALWsKajB1iL-3TOX1z1xMZasTGt5Ob8jspD6lah_57hOF0ofGW9LEX1QSEt6Z-IJHVbkl1g5fhbJBEU6kr47E94k","y":"Ac5_4TIJyRo1jJzVp7kk7yHyxkkPVJ7l1R5TlrNITQoN19PWrqDR6NnuzHdZkiXhzewqQuipGEM3aFIeFCcXQF7G","crv":"P-521","d":"AP7LJphfg7GjDsixFGlddnuc460EfCcSecklr4fXNegRr3OsSncbQK7KC0Z60KANfRc3V3NtSTwEK8BI5ZIVSS_V"};
const XA = {"crv":"X25519","d":"ILXaV1hi3RUgv2hdjOVE0whWh5wwjbO-NHoTvKcK1Gg","x":"U8l7pCcljOLx6n2wZ-auH5BIPCVGw7oDl9k9SRR_Mlg","kty":"OKP"};
const XB = {"crv":"X25519","d":"OET3AJ95MX6Tex4b_tmfO8gCi7Jv5dt2EZZ3ATGm9G8","x":"x-3fanJhEO8hEOGoVAKHAQOCMbIE4JNL72L_XUbDTHQ","kty":"OKP"};
const ED = {"crv":"Ed25519","d":"-sIxTgy0uR3gsZPDRNUvS3jyZdx1qBE32kt8hRhhFW8","x":"JgyB-PQ6yZ9J13CseNffKp0iaXOVdRljQu7nlXVwYNs","kty":"OKP"};
const RSA_PKCS8 = Buffer.from('MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAKyzzFtPgFEaXntMK2FPp6MyDh9dR6t4w/SrCqSNxDxOhmTzm5fH0LoCuiOMWrpbGPkKf7cEz/AE0pno7XEo92BHgxwde+0rBNs85dSYIpC3Mdr+XiRPo3Ml3SURrP5ezBOgWowZE0/6qZQjKGa6hnsZMjTcAChdNG3EhKVLKv+XAgMBAAECgYEAiWQMWkP3+A17RqmFBUhiO7ExjQAfaSmM8tMzh0+E4tkxj5RBntEGm0RaIreg4gpg5pbUnZwFdJPRm0Gzy8dka/Q+yHgUVH6UYETSvsUypQHKex2MA9e3RqcRp9FapLVAf50f8GkqD7G7uNo8IFNmoJMvYIThoMMZFF4MaeeESOECQQDVycYdRYT4fMxOvhz/+OHqMDWgJGrtCGVYLUFVHSZ3rglhrR8f8bd8bRuitUE/rVAqsEOWVIDZa8sJBn1t+o1RAkEAzs1IRxTh9uN9pKZ4MyjA+Jnmat+U9owxq5vzN9uwpE8XzbeJtjLjz45QobJLACYnZvag5ZQO1xhJIu0NLYDkZwJASEjr+pO57QbNUcaIKahuQm/AggAuQyz2j0Tl9TBhBFBNDcCqaHOjNafykyY0BKLGG1jz0U2LL3h58vhFyrzPsQJAI1XUKcEZsxO/3ihLlYI7Jr81LcGyNEZUHlxxPHQfRJP3H0FjGGytnENW56oNQqNCTEeLym538qzFomAaxlGltQJAZl3nf/5LtRPlHMKyr/6a1c+A0NUgz+/5FQCVdRsE6qrgBXXXEmI5PzS1haeS56647cP9BodOGPmEl1wvizAZOw==', 'base64');
const pub = (jwk) => { const { d, ...rest } = jwk; return rest; };
const alg = (k) => JSON.stringify(k.algorithm, (key, v) => (v instanceof Uint8Array ? hex(v) : v));
const show = (label, k) => console.log(label, k.type, k.extractable, alg(k), JSON.stringify(k.usages));

(async () => {
  console.log('same subtle', crypto.subtle === nc.subtle, nc.webcrypto.subtle === nc.subtle, Object.prototype.toString.call(crypto.subtle));
  const msg = te.encode('The quick brown fox jumps over the lazy dog');
  const view = new DataView(new Uint8Array([0, ...msg, 0]).buffer, 1, msg.length);
  for (const h of ['SHA-1', 'sha-256', { name: 'SHA-384' }, 'Sha-512']) {
    console.log('digest', JSON.stringify(h), hex(await s.digest(h, msg)), hex(await s.digest(h, view)) === hex(await s.digest(h, msg.buffer)));
  }

  // HMAC
  const hk = await s.importKey('raw', te.encode('secret key'), { name: 'hmac', hash: 'SHA-256' }, true, ['sign', 'verify']);
  show('hmac', hk);
  const mac = await s.sign('HMAC', hk, msg);
  console.log('hmac sig', hex(mac), hex(mac) === nc.createHmac('sha256', 'secret key').update(msg).digest('hex'));
  console.log('hmac verify', await s.verify('HMAC', hk, mac, msg), await s.verify('HMAC', hk, new Uint8Array(32), msg), await s.verify('HMAC', hk, mac.slice(1), msg));
  console.log('hmac export', hex(await s.exportKey('raw', hk)), JSON.stringify(await s.exportKey('jwk', hk)));
  const hk512 = await s.importKey('jwk', { kty: 'oct', k: 'c2VjcmV0IGtleQ', alg: 'HS512', ext: true }, { name: 'HMAC', hash: { name: 'SHA-512' } }, false, ['sign']);
  show('hmac512', hk512);
  console.log('hmac512 sig', hex(await s.sign({ name: 'HMAC' }, hk512, Buffer.from('abc'))));

  // AES
  const key = u8('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f');
  const iv = u8('cafebabefacedbaddecaf888');
  for (const bits of [128, 192, 256]) {
    const gk = await s.importKey('raw', key.subarray(0, bits / 8), 'AES-GCM', true, ['encrypt', 'decrypt']);
    show('gcm', gk);
    for (const tagLength of [undefined, 96, 32]) {
      const p = { name: 'AES-GCM', iv, additionalData: te.encode('aad'), tagLength };
      const ct = await s.encrypt(p, gk, msg);
      const pt = await s.decrypt(p, gk, ct);
      console.log('gcm', bits, tagLength, hex(ct), Buffer.from(pt).toString());
    }
    const ck = await s.importKey('raw', key.subarray(0, bits / 8), { name: 'AES-CBC' }, true, ['encrypt', 'decrypt']);
    const civ = u8('0f0e0d0c0b0a09080706050403020100');
    const cct = await s.encrypt({ name: 'AES-CBC', iv: civ }, ck, msg);
    console.log('cbc', bits, hex(cct), Buffer.from(await s.decrypt({ name: 'AES-CBC', iv: civ }, ck, cct)).toString());
    console.log('cbc empty', hex(await s.encrypt({ name: 'AES-CBC', iv: civ }, ck, new Uint8Array(0))));
    const tk = await s.importKey('raw', key.subarray(0, bits / 8), 'AES-CTR', true, ['encrypt', 'decrypt']);
    for (const [counter, length] of [['00000000000000000000000000000000', 64], ['f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff', 128], ['000102030405060708090a0b0c0d0efe', 8], ['ffffffffffffffffffffffffffffffff', 128]]) {
      const ct = await s.encrypt({ name: 'AES-CTR', counter: u8(counter), length }, tk, msg);
      console.log('ctr', bits, length, hex(ct), Buffer.from(await s.decrypt({ name: 'AES-CTR', counter: u8(counter), length }, tk, ct)).toString());
    }
    console.log('aes jwk', JSON.stringify(await s.exportKey('jwk', tk)));
  }
  // AES-KW: RFC 3394 section 4.1 (128-bit KEK, 128-bit key) and 4.6.
  const kek = await s.importKey('raw', u8('000102030405060708090a0b0c0d0e0f'), 'AES-KW', true, ['wrapKey', 'unwrapKey']);
  const inner = await s.importKey('raw', u8('00112233445566778899aabbccddeeff'), 'AES-GCM', true, ['encrypt']);
  const wrapped = await s.wrapKey('raw', inner, kek, 'AES-KW');
  console.log('kw', hex(wrapped));
  const un = await s.unwrapKey('raw', wrapped, kek, { name: 'AES-KW' }, 'AES-GCM', true, ['encrypt']);
  show('kw unwrapped', un);
  console.log('kw key', hex(await s.exportKey('raw', un)));
  const kek256 = await s.importKey('raw', key, 'AES-KW', false, ['wrapKey', 'unwrapKey']);
  const inner256 = await s.importKey('raw', u8('00112233445566778899aabbccddeeff000102030405060708090a0b0c0d0e0f'), 'HMAC', true, ['sign']).catch((e) => e.name);
  console.log('hmac without hash', inner256);
  const inner2 = await s.importKey('raw', u8('00112233445566778899aabbccddeeff000102030405060708090a0b0c0d0e0f'), 'AES-CBC', true, ['decrypt']);
  console.log('kw256', hex(await s.wrapKey('raw', inner2, kek256, 'AES-KW')));
  const bad = new Uint8Array(wrapped); bad[3] ^= 1;
  console.log('kw tampered', await s.unwrapKey('raw', bad, kek, 'AES-KW', 'AES-GCM', true, ['encrypt']).catch((e) => `${e.name}: ${e.message}`));

  // PBKDF2, HKDF, deriveKey
  const pw = await s.importKey('raw', te.encode('password'), 'PBKDF2', false, ['deriveBits', 'deriveKey']);
  show('pbkdf2', pw);
  for (const h of ['SHA-1', 'SHA-256', 'SHA-512']) {
    const bits = await s.deriveBits({ name: 'PBKDF2', hash: h, salt: te.encode('salt'), iterations: 4096 }, pw, 256);
    console.log('pbkdf2', h, hex(bits), hex(bits) === nc.pbkdf2Sync('password', 'salt', 4096, 32, h.replace('-', '')).toString('hex'));
  }
  const dk = await s.deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt: te.encode('salt'), iterations: 10 }, pw, { name: 'AES-GCM', length: 128 }, true, ['encrypt']);
  show('derived aes', dk);
  console.log('derived aes key', hex(await s.exportKey('raw', dk)));
  const dh = await s.deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt: te.encode('salt'), iterations: 10 }, pw, { name: 'HMAC', hash: 'SHA-384' }, true, ['sign']);
  show('derived hmac', dh);
  const ikm = await s.importKey('raw', u8('0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b'), { name: 'HKDF' }, false, ['deriveBits', 'deriveKey']);
  const hb = await s.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: u8('000102030405060708090a0b0c'), info: u8('f0f1f2f3f4f5f6f7f8f9') }, ikm, 42 * 8);
  console.log('hkdf', hex(hb));
  const hkd = await s.deriveKey({ name: 'HKDF', hash: 'SHA-512', salt: new Uint8Array(0), info: te.encode('ctx') }, ikm, { name: 'AES-CTR', length: 256 }, true, ['encrypt']);
  console.log('hkdf key', hex(await s.exportKey('raw', hkd)));

  // RSA
  for (const name of ['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'RSA-OAEP']) {
    const usage = name === 'RSA-OAEP' ? ['decrypt', 'unwrapKey'] : ['sign'];
    const priv = await s.importKey('pkcs8', RSA_PKCS8, { name, hash: 'SHA-256' }, true, usage);
    show('rsa priv', priv);
    const jwk = await s.exportKey('jwk', priv);
    console.log('rsa jwk', JSON.stringify(jwk));
    console.log('rsa pkcs8 same', hex(await s.exportKey('pkcs8', priv)) === RSA_PKCS8.toString('hex'));
    const pubJwk = { kty: 'RSA', n: jwk.n, e: jwk.e };
    const pk = await s.importKey('jwk', pubJwk, { name, hash: { name: 'SHA-256' } }, true, name === 'RSA-OAEP' ? ['encrypt', 'wrapKey'] : ['verify']);
    show('rsa pub', pk);
    console.log('rsa spki', hex(await s.exportKey('spki', pk)));
    console.log('rsa pub jwk', JSON.stringify(await s.exportKey('jwk', pk)));
  }
  const rs = await s.importKey('pkcs8', RSA_PKCS8, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' }, false, ['sign']);
  const rsig = await s.sign('RSASSA-PKCS1-v1_5', rs, msg);
  const rsaObj = nc.createPrivateKey({ key: RSA_PKCS8, format: 'der', type: 'pkcs8' });
  console.log('rs384', hex(rsig), nc.verify('sha384', msg, nc.createPublicKey(rsaObj), Buffer.from(rsig)));
  const rv = await s.importKey('spki', nc.createPublicKey(rsaObj).export({ format: 'der', type: 'spki' }), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' }, false, ['verify']);
  console.log('rs384 verify', await s.verify('RSASSA-PKCS1-v1_5', rv, rsig, msg), await s.verify('RSASSA-PKCS1-v1_5', rv, rsig, msg.subarray(1)));
  const ps = await s.importKey('pkcs8', RSA_PKCS8, { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['sign']);
  const ps0 = await s.sign({ name: 'RSA-PSS', saltLength: 0 }, ps, msg);
  console.log('pss0', hex(ps0));
  const ps32 = await s.sign({ name: 'RSA-PSS', saltLength: 32 }, ps, msg);
  console.log('pss32 node verify', nc.verify('sha256', msg, { key: rsaObj, padding: nc.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, Buffer.from(ps32)));
  const pv = await s.importKey('spki', nc.createPublicKey(rsaObj).export({ format: 'der', type: 'spki' }), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify']);
  const nodePss = nc.sign('sha256', msg, { key: rsaObj, padding: nc.constants.RSA_PKCS1_PSS_PADDING, saltLength: 20 });
  console.log('pss0 node', nc.sign('sha256', msg, { key: rsaObj, padding: 6, saltLength: 0 }).toString('hex') === hex(ps0),
    await s.verify({ name: 'RSA-PSS', saltLength: 0 }, pv, ps0, msg), await s.verify({ name: 'RSA-PSS', saltLength: 0 }, pv, ps32, msg));
  console.log('pss verify', await s.verify({ name: 'RSA-PSS', saltLength: 20 }, pv, nodePss, msg), await s.verify({ name: 'RSA-PSS', saltLength: 32 }, pv, ps32, msg), await s.verify({ name: 'RSA-PSS', saltLength: 32 }, pv, ps0, msg));
  const op = await s.importKey('pkcs8', RSA_PKCS8, { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['decrypt']);
  const nodeCt = nc.publicEncrypt({ key: rsaObj, oaepHash: 'sha256', oaepLabel: te.encode('label') }, msg);
  console.log('oaep node ct', Buffer.from(await s.decrypt({ name: 'RSA-OAEP', label: te.encode('label') }, op, nodeCt)).toString());
  const oe = await s.importKey('spki', nc.createPublicKey(rsaObj).export({ format: 'der', type: 'spki' }), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt']);
  const oct = await s.encrypt({ name: 'RSA-OAEP' }, oe, msg.subarray(0, 20));
  console.log('oaep subtle ct', nc.privateDecrypt({ key: rsaObj, oaepHash: 'sha256' }, Buffer.from(oct)).toString(), (await s.decrypt('RSA-OAEP', op, oct)).byteLength);
  console.log('oaep wrong label', await s.decrypt({ name: 'RSA-OAEP', label: te.encode('x') }, op, oct).catch((e) => `${e.name}: ${e.message}`));

  // EC
  for (const [jwk, hash] of [[ECA, 'SHA-256'], [EC384, 'SHA-384'], [EC521, 'SHA-512']]) {
    const ep = await s.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: jwk.crv }, true, ['sign']);
    show('ec priv', ep);
    console.log('ec priv jwk', JSON.stringify(await s.exportKey('jwk', ep)));
    const pkcs8 = await s.exportKey('pkcs8', ep);
    console.log('ec pkcs8', hex(pkcs8) === nc.createPrivateKey({ key: jwk, format: 'jwk' }).export({ format: 'der', type: 'pkcs8' }).toString('hex'));
    const ev = await s.importKey('jwk', pub(jwk), { name: 'ECDSA', namedCurve: jwk.crv }, true, ['verify']);
    const raw = await s.exportKey('raw', ev);
    console.log('ec raw', hex(raw));
    console.log('ec spki', hex(await s.exportKey('spki', ev)));
    const ev2 = await s.importKey('raw', raw, { name: 'ECDSA', namedCurve: jwk.crv }, true, ['verify']);
    const comp = nc.ECDH.convertKey(Buffer.from(raw), { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' }[jwk.crv], undefined, undefined, 'compressed');
    const ev3 = await s.importKey('raw', comp, { name: 'ECDSA', namedCurve: jwk.crv }, true, ['verify']);
    console.log('ec compressed', hex(await s.exportKey('raw', ev3)) === hex(raw));
    const sig = await s.sign({ name: 'ECDSA', hash }, ep, msg);
    console.log('ecdsa', sig.byteLength, await s.verify({ name: 'ECDSA', hash }, ev2, sig, msg), await s.verify({ name: 'ECDSA', hash }, ev, sig, msg.subarray(2)));
    console.log('ecdsa node verify', nc.verify(hash.replace('-', ''), msg, { key: nc.createPublicKey({ key: pub(jwk), format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, Buffer.from(sig)));
    const nsig = nc.sign(hash, msg, { key: nc.createPrivateKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' });
    console.log('ecdsa of node', await s.verify({ name: 'ECDSA', hash: { name: hash } }, ev, nsig, msg));
  }
  const ea = await s.importKey('jwk', ECA, { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits', 'deriveKey']);
  const eb = await s.importKey('jwk', pub(ECB), { name: 'ECDH', namedCurve: 'P-256' }, true, []);
  show('ecdh pub', eb);
  const z = await s.deriveBits({ name: 'ECDH', public: eb }, ea, 256);
  console.log('ecdh', hex(z), hex(z) === nc.diffieHellman({ privateKey: nc.createPrivateKey({ key: ECB, format: 'jwk' }), publicKey: nc.createPublicKey({ key: pub(ECA), format: 'jwk' }) }).toString('hex'));
  console.log('ecdh 128', hex(await s.deriveBits({ name: 'ECDH', public: eb }, ea, 128)));
  const ek = await s.deriveKey({ name: 'ECDH', public: eb }, ea, { name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);
  console.log('ecdh key', hex(await s.exportKey('raw', ek)));
  const xa = await s.importKey('jwk', XA, 'X25519', true, ['deriveBits']);
  const xb = await s.importKey('raw', Buffer.from(XB.x, 'base64url'), { name: 'x25519' }, true, []);
  show('x25519', xa);
  console.log('x25519', hex(await s.deriveBits({ name: 'X25519', public: xb }, xa, 256)), hex(await s.exportKey('raw', xb)));
  console.log('x25519 jwk', JSON.stringify(await s.exportKey('jwk', xa)), JSON.stringify(await s.exportKey('jwk', xb)));
  console.log('x25519 pkcs8', hex(await s.exportKey('pkcs8', xa)), hex(await s.exportKey('spki', xb)));

  // Ed25519
  const edk = await s.importKey('jwk', ED, { name: 'Ed25519' }, true, ['sign']);
  const edsig = await s.sign('Ed25519', edk, msg);
  console.log('ed25519', hex(edsig), hex(edsig) === nc.sign(null, msg, nc.createPrivateKey({ key: ED, format: 'jwk' })).toString('hex'));
  const edp = await s.importKey('raw', Buffer.from(ED.x, 'base64url'), 'Ed25519', true, ['verify']);
  console.log('ed25519 verify', await s.verify('Ed25519', edp, edsig, msg), await s.verify('Ed25519', edp, edsig, msg.subarray(1)));
  // Node 20 adds "alg": "Ed25519" to the JWK, Node 22 does not: left out.
  const { alg: edAlg, ...edJwk } = await s.exportKey('jwk', edk);
  console.log('ed25519 export', JSON.stringify(edJwk), hex(await s.exportKey('pkcs8', edk)), hex(await s.exportKey('spki', edp)), hex(await s.exportKey('raw', edp)));

  // KeyObject.from and the CryptoKey class
  const ko = nc.KeyObject.from(hk);
  console.log('keyobject', ko.type, ko.export().toString(), nc.KeyObject.from(hk) === ko, nc.KeyObject.from(edk).asymmetricKeyType);
  console.log('cryptokey', hk instanceof CryptoKey, Object.prototype.toString.call(hk), typeof CryptoKey, require('util').types.isCryptoKey(hk), require('util').types.isCryptoKey({}));
})().catch((e) => { console.log('FAILED', e); process.exitCode = 1; });
