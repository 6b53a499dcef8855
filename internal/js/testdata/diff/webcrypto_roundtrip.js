// crypto.subtle with generated keys: generateKey for every algorithm, then
// sign/verify, encrypt/decrypt, both sides of ECDH and X25519, wrap and
// unwrap in every format, a JWT signed and verified by hand as jose does
// it, and node:crypto checking subtle's work (and the reverse).
const nc = require('crypto');
const { subtle } = nc.webcrypto;
const te = new TextEncoder();
const alg = (k) => JSON.stringify(k.algorithm, (key, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v));
const show = (label, k) => console.log(label, k.type, k.extractable, alg(k), JSON.stringify(k.usages));
const eq = (a, b) => Buffer.from(a).equals(Buffer.from(b));
const b64u = (b) => Buffer.from(b).toString('base64url');
const msg = te.encode('message to sign and encrypt');

(async () => {
  // A subtle method returns a promise even for bad arguments.
  const p = subtle.sign();
  console.log('promise', p instanceof Promise, await p.then(() => 'ok', (e) => e.name));
  console.log('lengths', ['encrypt', 'decrypt', 'sign', 'verify', 'digest', 'generateKey', 'deriveKey', 'deriveBits', 'importKey', 'exportKey', 'wrapKey', 'unwrapKey'].map((m) => `${m}:${subtle[m].length}`).join(' '));

  for (const [a, usages] of [
    [{ name: 'HMAC', hash: 'SHA-256' }, ['sign', 'verify', 'sign']],
    [{ name: 'HMAC', hash: 'SHA-512', length: 128 }, ['verify', 'sign']],
    [{ name: 'AES-GCM', length: 128 }, ['encrypt', 'decrypt']],
    [{ name: 'aes-cbc', length: 192 }, ['decrypt', 'encrypt', 'wrapKey']],
    [{ name: 'AES-CTR', length: 256 }, ['encrypt']],
    [{ name: 'AES-KW', length: 256 }, ['unwrapKey', 'wrapKey']],
  ]) {
    const k = await subtle.generateKey(a, true, usages);
    show('gen', k);
    console.log('raw length', (await subtle.exportKey('raw', k)).byteLength, Object.keys(await subtle.exportKey('jwk', k)).join());
  }
  for (const [a, usages] of [
    [{ name: 'ECDSA', namedCurve: 'P-256' }, ['verify', 'sign']],
    [{ name: 'ECDSA', namedCurve: 'P-384' }, ['sign', 'verify']],
    [{ name: 'ECDH', namedCurve: 'P-521' }, ['deriveBits', 'deriveKey']],
    [{ name: 'Ed25519' }, ['sign', 'verify']],
    [{ name: 'X25519' }, ['deriveKey']],
    [{ name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, ['sign', 'verify']],
    [{ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: { name: 'SHA-384' } }, ['sign', 'verify']],
    [{ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-1' }, ['wrapKey', 'encrypt', 'decrypt', 'unwrapKey']],
  ]) {
    const { publicKey, privateKey } = await subtle.generateKey(a, false, usages);
    show('pub', publicKey);
    show('priv', privateKey);
    const spki = await subtle.exportKey('spki', publicKey);
    const ko = nc.createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
    console.log('node sees', ko.asymmetricKeyType, JSON.stringify(ko.asymmetricKeyDetails, (k, v) => (typeof v === 'bigint' ? String(v) : v)));
    console.log('private not extractable', await subtle.exportKey('pkcs8', privateKey).catch((e) => `${e.name}: ${e.message}`));
  }

  // Signatures made with generated keys, checked by subtle and by node.
  for (const [a, p] of [
    [{ name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-256' }],
    [{ name: 'ECDSA', namedCurve: 'P-521' }, { name: 'ECDSA', hash: 'SHA-384' }],
    [{ name: 'Ed25519' }, { name: 'Ed25519' }],
    [{ name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, 'RSASSA-PKCS1-v1_5'],
    [{ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, { name: 'RSA-PSS', saltLength: 32 }],
  ]) {
    const { publicKey, privateKey } = await subtle.generateKey(a, true, ['sign', 'verify']);
    const sig = await subtle.sign(p, privateKey, msg);
    const nodeKey = nc.KeyObject.from(publicKey);
    const hash = p.hash ? p.hash.replace('-', '') : a.hash ? a.hash.replace('-', '') : null;
    const opts = { key: nodeKey };
    if (a.name === 'ECDSA') opts.dsaEncoding = 'ieee-p1363';
    if (a.name === 'RSA-PSS') { opts.padding = nc.constants.RSA_PKCS1_PSS_PADDING; opts.saltLength = 32; }
    const nodeSig = nc.sign(hash, msg, { ...opts, key: nc.KeyObject.from(privateKey) });
    console.log('sign', a.name, await subtle.verify(p, publicKey, sig, msg), nc.verify(hash, msg, opts, Buffer.from(sig)),
      await subtle.verify(p, publicKey, nodeSig, msg), await subtle.verify(p, publicKey, sig, te.encode('other')));
  }

  // Encryption round trips.
  const gcm = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);
  const iv = nc.getRandomValues(new Uint8Array(12));
  const ct = await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: te.encode('hdr') }, gcm, msg);
  console.log('gcm', eq(await subtle.decrypt({ name: 'AES-GCM', iv, additionalData: te.encode('hdr') }, gcm, ct), msg),
    await subtle.decrypt({ name: 'AES-GCM', iv }, gcm, ct).catch((e) => e.name));
  const raw = Buffer.from(await subtle.exportKey('raw', gcm));
  const d = nc.createDecipheriv('aes-256-gcm', raw, iv);
  d.setAAD(te.encode('hdr'));
  d.setAuthTag(Buffer.from(ct).subarray(-16));
  console.log('gcm by node', Buffer.concat([d.update(Buffer.from(ct).subarray(0, -16)), d.final()]).toString());
  const cbc = await subtle.generateKey({ name: 'AES-CBC', length: 128 }, false, ['encrypt', 'decrypt']);
  const civ = nc.randomBytes(16);
  console.log('cbc', eq(await subtle.decrypt({ name: 'AES-CBC', iv: civ }, cbc, await subtle.encrypt({ name: 'AES-CBC', iv: civ }, cbc, msg)), msg));
  const ctr = await subtle.generateKey({ name: 'AES-CTR', length: 128 }, false, ['encrypt', 'decrypt']);
  const counter = nc.randomBytes(16);
  console.log('ctr', eq(await subtle.decrypt({ name: 'AES-CTR', counter, length: 32 }, ctr, await subtle.encrypt({ name: 'AES-CTR', counter, length: 32 }, ctr, msg)), msg));
  const oaep = await subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']);
  const oct = await subtle.encrypt({ name: 'RSA-OAEP', label: te.encode('l') }, oaep.publicKey, msg);
  console.log('oaep', oct.byteLength, eq(await subtle.decrypt({ name: 'RSA-OAEP', label: te.encode('l') }, oaep.privateKey, oct), msg),
    nc.privateDecrypt({ key: nc.KeyObject.from(oaep.privateKey), oaepHash: 'sha256', oaepLabel: te.encode('l') }, Buffer.from(oct)).toString());

  // Key agreement: both sides derive the same secret.
  for (const a of [{ name: 'ECDH', namedCurve: 'P-256' }, { name: 'ECDH', namedCurve: 'P-384' }, { name: 'X25519' }]) {
    const x = await subtle.generateKey(a, true, ['deriveBits', 'deriveKey']);
    const y = await subtle.generateKey(a, true, ['deriveBits', 'deriveKey']);
    const xy = await subtle.deriveBits({ name: a.name, public: y.publicKey }, x.privateKey, null);
    const yx = await subtle.deriveBits({ name: a.name, public: x.publicKey }, y.privateKey, null);
    const byNode = nc.diffieHellman({ privateKey: nc.KeyObject.from(x.privateKey), publicKey: nc.KeyObject.from(y.publicKey) });
    const kx = await subtle.deriveKey({ name: a.name, public: y.publicKey }, x.privateKey, { name: 'HMAC', hash: 'SHA-256', length: 256 }, true, ['sign']);
    console.log('agree', a.name, xy.byteLength, eq(xy, yx), eq(xy, byNode), eq(await subtle.exportKey('raw', kx), xy.slice(0, 32)));
  }

  // Wrapping, in every format, with every wrapping algorithm.
  const kw = await subtle.generateKey({ name: 'AES-KW', length: 128 }, false, ['wrapKey', 'unwrapKey']);
  const gcmWrap = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['wrapKey', 'unwrapKey']);
  const hmac = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);
  const ec = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const giv = nc.randomBytes(12);
  for (const [format, key, ua, uses] of [
    ['raw', hmac, { name: 'HMAC', hash: 'SHA-256' }, ['sign']],
    ['jwk', hmac, { name: 'HMAC', hash: 'SHA-256' }, ['verify']],
    ['pkcs8', ec.privateKey, { name: 'ECDSA', namedCurve: 'P-256' }, ['sign']],
    ['jwk', ec.privateKey, { name: 'ECDSA', namedCurve: 'P-256' }, ['sign']],
    ['spki', ec.publicKey, { name: 'ECDSA', namedCurve: 'P-256' }, ['verify']],
  ]) {
    for (const [wk, wa] of [[kw, 'AES-KW'], [gcmWrap, { name: 'AES-GCM', iv: giv }], [oaep.publicKey, { name: 'RSA-OAEP' }]]) {
      const uk = wk === oaep.publicKey ? oaep.privateKey : wk;
      if (wa === 'AES-KW' && format === 'pkcs8') continue;
      let res;
      try {
        const w = await subtle.wrapKey(format, key, wk, wa);
        const u = await subtle.unwrapKey(format, w, uk, wa, ua, true, uses);
        res = `${u.type} ${alg(u)} ${u.usages} ${eq(await subtle.exportKey(format === 'spki' ? 'spki' : format === 'raw' ? 'raw' : 'jwk', u).then((x) => (x instanceof ArrayBuffer ? x : te.encode(JSON.stringify({ ...x, key_ops: [] })))),
          await subtle.exportKey(format === 'spki' ? 'spki' : format === 'raw' ? 'raw' : 'jwk', key).then((x) => (x instanceof ArrayBuffer ? x : te.encode(JSON.stringify({ ...x, key_ops: [] })))))}`;
      } catch (e) { res = `${e.name}: ${e.message}`; }
      console.log('wrap', format, typeof wa === 'string' ? wa : wa.name, res);
    }
  }

  // What jose does for ES256 and HS256: import a JWK, sign the JWS
  // signing input, check the signature.
  const jwk = await subtle.exportKey('jwk', ec.privateKey);
  const sk = await subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
  const { d: _d, key_ops: _o, ext: _e, ...pubJwk } = jwk;
  const vk = await subtle.importKey('jwk', pubJwk, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']);
  const input = `${b64u(JSON.stringify({ alg: 'ES256', typ: 'JWT' }))}.${b64u(JSON.stringify({ sub: 'u1', iat: 1700000000 }))}`;
  const jws = await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, sk, te.encode(input));
  const token = `${input}.${b64u(jws)}`;
  const [h, pl, sg] = token.split('.');
  console.log('jwt es256', await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, vk, Buffer.from(sg, 'base64url'), te.encode(`${h}.${pl}`)), JSON.parse(Buffer.from(pl, 'base64url')).sub);
  const hs = await subtle.importKey('jwk', { kty: 'oct', k: b64u('a shared secret of 32 bytes.....'), alg: 'HS256' }, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  const hsig = await subtle.sign('HMAC', hs, te.encode(input));
  console.log('jwt hs256', `${input}.${b64u(hsig)}`, await subtle.verify('HMAC', hs, hsig, te.encode(input)));
  // jose's JWE with ECDH-ES+A256KW and A256GCM: an ephemeral ECDH key,
  // Concat KDF over SHA-256, the content key wrapped with AES-KW.
  const recipient = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
  const concatKdf = async (z, alg, bits) => {
    const u32 = (n) => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n); return b; };
    const lv = (b) => Buffer.concat([u32(b.length), b]);
    const otherInfo = Buffer.concat([lv(te.encode(alg)), lv(new Uint8Array(0)), lv(new Uint8Array(0)), u32(bits)]);
    return (await subtle.digest('SHA-256', Buffer.concat([u32(1), Buffer.from(z), otherInfo]))).slice(0, bits / 8);
  };
  const epk = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
  const z1 = await subtle.deriveBits({ name: 'ECDH', public: recipient.publicKey }, epk.privateKey, 256);
  const kek1 = await subtle.importKey('raw', await concatKdf(z1, 'ECDH-ES+A256KW', 256), 'AES-KW', false, ['wrapKey']);
  const cek = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt']);
  const encryptedKey = await subtle.wrapKey('raw', cek, kek1, 'AES-KW');
  const jweIv = nc.randomBytes(12);
  const protectedHeader = b64u(JSON.stringify({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', epk: await subtle.exportKey('jwk', epk.publicKey) }));
  const jweCt = await subtle.encrypt({ name: 'AES-GCM', iv: jweIv, additionalData: te.encode(protectedHeader) }, cek, te.encode('jwe payload'));
  // The recipient's side, from the compact parts.
  const hdr = JSON.parse(Buffer.from(protectedHeader, 'base64url'));
  const { key_ops: _ko, ext: _ex, ...epkJwk } = hdr.epk;
  const epkPub = await subtle.importKey('jwk', epkJwk, { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  const z2 = await subtle.deriveBits({ name: 'ECDH', public: epkPub }, recipient.privateKey, 256);
  const kek2 = await subtle.importKey('raw', await concatKdf(z2, hdr.alg, 256), { name: 'AES-KW' }, false, ['unwrapKey']);
  const cek2 = await subtle.unwrapKey('raw', encryptedKey, kek2, 'AES-KW', 'AES-GCM', false, ['decrypt']);
  const pt = await subtle.decrypt({ name: 'AES-GCM', iv: jweIv, additionalData: te.encode(protectedHeader) }, cek2, jweCt);
  console.log('jwe', encryptedKey.byteLength, Buffer.from(pt).toString());

  // EdDSA and RS256 JWTs: jose imports the JWK and signs the input.
  const ed = await subtle.generateKey('Ed25519', true, ['sign', 'verify']);
  const edJwk = await subtle.exportKey('jwk', ed.privateKey);
  const edSigner = await subtle.importKey('jwk', { kty: edJwk.kty, crv: edJwk.crv, x: edJwk.x, d: edJwk.d }, 'Ed25519', false, ['sign']);
  const edVerifier = await subtle.importKey('jwk', { kty: edJwk.kty, crv: edJwk.crv, x: edJwk.x }, { name: 'Ed25519' }, false, ['verify']);
  const edIn = `${b64u(JSON.stringify({ alg: 'EdDSA' }))}.${b64u('{}')}`;
  console.log('jwt eddsa', await subtle.verify('Ed25519', edVerifier, await subtle.sign('Ed25519', edSigner, te.encode(edIn)), te.encode(edIn)));
  const rs = await subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify']);
  const rsJwk = await subtle.exportKey('jwk', rs.publicKey);
  const rsVerifier = await subtle.importKey('jwk', { kty: 'RSA', n: rsJwk.n, e: rsJwk.e, alg: 'RS256' }, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
  const rsSig = await subtle.sign('RSASSA-PKCS1-v1_5', rs.privateKey, te.encode(edIn));
  console.log('jwt rs256', rsJwk.alg, await subtle.verify('RSASSA-PKCS1-v1_5', rsVerifier, rsSig, te.encode(edIn)));
})().catch((e) => { console.log('FAILED', e); process.exitCode = 1; });
