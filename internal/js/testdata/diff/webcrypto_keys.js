// crypto.subtle's key checks: usages per key type and format (Node's
// messages differ between generateKey and importKey), derivation usages and
// algorithms, keys used for the wrong operation, short signatures.
const s = crypto.subtle;
async function t(label, f) { try { const r = await f(); console.log(label, r instanceof ArrayBuffer ? r.byteLength : typeof r === 'object' ? JSON.stringify(r) : r); } catch (e) { console.log(label, 'ERR', e.name, e.code, e.message); } }
(async () => {
  const ed = await s.generateKey('Ed25519', true, ['sign', 'verify']);
  const ec = await s.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const x = await s.generateKey('X25519', true, ['deriveBits']);
  const ecdh = await s.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
  const rsa = await s.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['encrypt', 'decrypt']);
  await t('ed raw sign', async () => s.importKey('raw', await s.exportKey('raw', ed.publicKey), 'Ed25519', true, ['sign']));
  await t('ed raw priv', () => s.exportKey('raw', ed.privateKey));
  await t('ec pkcs8 verify', async () => s.importKey('pkcs8', await s.exportKey('pkcs8', ec.privateKey), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']));
  await t('ec spki sign', async () => s.importKey('spki', await s.exportKey('spki', ec.publicKey), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']));
  await t('ec jwk priv verify', async () => s.importKey('jwk', await s.exportKey('jwk', ec.privateKey), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']));
  await t('ec jwk pub sign', async () => s.importKey('jwk', await s.exportKey('jwk', ec.publicKey), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']));
  await t('rsa nohash', async () => s.importKey('pkcs8', await s.exportKey('pkcs8', rsa.privateKey), { name: 'RSA-OAEP' }, true, ['decrypt']));
  await t('ecdh x pub', () => s.deriveBits({ name: 'ECDH', public: x.publicKey }, ecdh.privateKey, 256));
  await t('x ecdh pub', () => s.deriveBits({ name: 'X25519', public: ecdh.publicKey }, x.privateKey, 256));
  await t('sign pub', () => s.sign('Ed25519', ed.publicKey, new Uint8Array(1)));
  await t('oaep pub decrypt', () => s.decrypt('RSA-OAEP', rsa.publicKey, new Uint8Array(128)));
  await t('oaep too long', () => s.encrypt('RSA-OAEP', rsa.publicKey, new Uint8Array(100)));
  await t('ecdsa short sig', () => s.verify({ name: 'ECDSA', hash: 'SHA-256' }, ec.publicKey, new Uint8Array(5), new Uint8Array(1)));
  await t('ed short sig', () => s.verify('Ed25519', ed.publicKey, new Uint8Array(5), new Uint8Array(1)));
  await t('ecdsa nohash', () => s.sign('ECDSA', ec.privateKey, new Uint8Array(1)));
  await t('pss nosalt', async () => s.sign('RSA-PSS', (await s.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign'])).privateKey, new Uint8Array(1)));
  await t('x deriveBits null', async () => (await s.deriveBits({ name: 'X25519', public: x.publicKey }, x.privateKey, null)).byteLength);
  await t('ecdh deriveKey hkdf', async () => (await s.deriveKey({ name: 'ECDH', public: ecdh.publicKey }, (await s.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveKey'])).privateKey, 'HKDF', false, ['deriveBits'])).algorithm);
  await t('deriveKey aes no length', async () => s.deriveKey({ name: 'ECDH', public: ecdh.publicKey }, (await s.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveKey'])).privateKey, 'AES-GCM', false, ['encrypt']));
  await t('deriveKey wrong usage', async () => s.deriveKey({ name: 'ECDH', public: ecdh.publicKey }, ecdh.privateKey, { name: 'AES-GCM', length: 128 }, false, ['encrypt']));
  await t('wrap with encrypt-only key', async () => s.wrapKey('raw', await s.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']), await s.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']), { name: 'AES-GCM', iv: new Uint8Array(12) }));
  await t('jwk ec missing d ok', () => s.importKey('jwk', { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']));
  await t('jwk okp bad crv', () => s.importKey('jwk', { kty: 'OKP', crv: 'X25519', x: 'AA' }, 'Ed25519', true, ['verify']));
  await t('gen hmac empty usage', () => s.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, []));
const rsa2 = await s.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['encrypt', 'decrypt']);
const x2 = await s.generateKey('X25519', true, ['deriveBits']);
const ecdh2 = await s.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveKey']);
for (const [k, f] of [
 ['rsa spki', async () => s.importKey('spki', await s.exportKey('spki', rsa2.publicKey), { name: 'RSA-OAEP', hash: 'SHA-256' }, true, ['sign'])],
 ['rsa jwk', async () => s.importKey('jwk', await s.exportKey('jwk', rsa2.publicKey), { name: 'RSA-OAEP', hash: 'SHA-256' }, true, ['sign'])],
 ['x raw', async () => s.importKey('raw', await s.exportKey('raw', x2.publicKey), 'X25519', true, ['sign'])],
 ['ecdh spki', async () => s.importKey('spki', await s.exportKey('spki', ecdh2.publicKey), { name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])],
 ['hkdf raw', async () => s.importKey('raw', new Uint8Array(3), 'HKDF', false, ['sign'])],
 ['derivebits usage', async () => s.deriveBits({ name: 'ECDH', public: ecdh2.publicKey }, ecdh2.privateKey, 8)],
 ['pbkdf usage', async () => s.deriveBits({ name: 'PBKDF2', salt: new Uint8Array(1), iterations: 1, hash: 'SHA-256' }, await s.importKey('raw', new Uint8Array(3), 'PBKDF2', false, ['deriveKey']), 8)],
 ['alg mismatch', async () => s.deriveBits({ name: 'HKDF', salt: new Uint8Array(1), info: new Uint8Array(1), hash: 'SHA-256' }, await s.importKey('raw', new Uint8Array(3), 'PBKDF2', false, ['deriveBits']), 8)],
 ['sign usage', async () => s.sign('HMAC', await s.importKey('raw', new Uint8Array(3), {name:'HMAC', hash:'SHA-256'}, false, ['verify']), new Uint8Array(1))],
 ['sign algmismatch', async () => s.sign('ECDSA', await s.importKey('raw', new Uint8Array(3), {name:'HMAC', hash:'SHA-256'}, false, ['sign']), new Uint8Array(1))],
 ['encrypt usage', async () => s.encrypt({name:'AES-CBC', iv: new Uint8Array(16)}, await s.importKey('raw', new Uint8Array(16), 'AES-CBC', false, ['decrypt']), new Uint8Array(1))],
 ['wrap usage', async () => s.wrapKey('raw', await s.importKey('raw', new Uint8Array(16), 'AES-CBC', true, ['decrypt']), await s.importKey('raw', new Uint8Array(16), 'AES-KW', true, ['unwrapKey']), 'AES-KW')],
 ['unwrap usage', async () => s.unwrapKey('raw', new Uint8Array(24), await s.importKey('raw', new Uint8Array(16), 'AES-KW', true, ['wrapKey']), 'AES-KW', 'AES-CBC', true, ['encrypt'])],
]) { await f().then(() => console.log(k, 'ok'), (e) => console.log(k, e.name, e.message)); }
  // JWK "use": sig for signing algorithms, enc for the rest.
  const ecU = await s.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
  const jU = await s.exportKey('jwk', ecU.privateKey);
  const edU = await s.generateKey('Ed25519', true, ['sign']);
  const jeU = await s.exportKey('jwk', edU.privateKey);
  for (const [k, f] of [
    ['hmac enc', () => s.importKey('jwk', { kty: 'oct', k: 'AAAA', use: 'enc' }, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign'])],
    ['hmac sig', () => s.importKey('jwk', { kty: 'oct', k: 'AAAA', use: 'sig' }, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign'])],
    ['aes sig', () => s.importKey('jwk', { kty: 'oct', k: 'AAAAAAAAAAAAAAAAAAAAAA', use: 'sig' }, 'AES-GCM', true, ['encrypt'])],
    ['aes enc', () => s.importKey('jwk', { kty: 'oct', k: 'AAAAAAAAAAAAAAAAAAAAAA', use: 'enc' }, 'AES-GCM', true, ['encrypt'])],
    ['ecdh sig', () => s.importKey('jwk', { ...jU, key_ops: undefined, use: 'sig' }, { name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])],
    ['ecdh enc', () => s.importKey('jwk', { ...jU, key_ops: undefined, use: 'enc' }, { name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])],
    ['ecdsa enc', () => s.importKey('jwk', { ...jU, key_ops: undefined, use: 'enc' }, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign'])],
    ['ed enc', () => s.importKey('jwk', { ...jeU, key_ops: undefined, use: 'enc' }, 'Ed25519', true, ['sign'])],
    ['ed sig', () => s.importKey('jwk', { ...jeU, key_ops: undefined, use: 'sig' }, 'Ed25519', true, ['sign'])],
  ]) await f().then(() => console.log(k, 'ok'), (e) => console.log(k, e.name, e.message));
  // JWK "alg" of EC and OKP keys.
  const ecA = await s.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
  const { key_ops: _k1, ext: _e1, ...jA } = await s.exportKey('jwk', ecA.publicKey);
  const edA = await s.generateKey('Ed25519', true, ['sign']);
  const { key_ops: _k2, ext: _e2, alg: _a2, ...jeA } = await s.exportKey('jwk', edA.publicKey);
  for (const [k, f] of [
    ['es256', () => s.importKey('jwk', { ...jA, alg: 'ES256' }, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify'])],
    ['es384', () => s.importKey('jwk', { ...jA, alg: 'ES384' }, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify'])],
    ['ecdh alg', () => s.importKey('jwk', { ...jA, alg: 'ES384' }, { name: 'ECDH', namedCurve: 'P-256' }, true, [])],
    ['eddsa', () => s.importKey('jwk', { ...jeA, alg: 'EdDSA' }, 'Ed25519', true, ['verify'])],
    ['ed Ed25519', () => s.importKey('jwk', { ...jeA, alg: 'Ed25519' }, 'Ed25519', true, ['verify'])],
  ]) await f().then(() => console.log(k, 'ok'), (e) => console.log(k, e.name, e.message));
})();
