'use strict';
// Both halves of TestWebCryptoHostInterop, run by secexec's node and by the
// host's. 'gen' makes a key of every Web Crypto algorithm, exports it in
// every format the algorithm allows and uses it (a signature, a
// ciphertext, a wrapped key, derived bits), printing all of it as JSON.
// 'check' reads the other side's JSON on stdin, imports every export and
// checks the other side's work with it (verifies, decrypts, unwraps,
// derives the same bits, signs to the same bytes where that is
// deterministic, exports the same JWK back). 'errors' prints the error
// name (and code) of calls that must fail, for the two sides to compare.
const { subtle } = require('crypto').webcrypto;
const fs = require('fs');

const msg = new TextEncoder().encode('a message between two runtimes');
const hex = (b) => Buffer.from(b).toString('hex');
const unhex = (s) => new Uint8Array(Buffer.from(s, 'hex'));
const same = (a, b) => hex(a) === hex(b);
const rsa = (name, hash) => ({ name, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash });
const iv = new Uint8Array(16).fill(7);
const label = new TextEncoder().encode('label');

// [case, generate/import algorithm, key usages, what the key does, its
// operation's parameters]
const cases = [
  ['RSASSA-PKCS1-v1_5', rsa('RSASSA-PKCS1-v1_5', 'SHA-256'), ['sign', 'verify'], 'sign', { name: 'RSASSA-PKCS1-v1_5' }],
  ['RSA-PSS', rsa('RSA-PSS', 'SHA-384'), ['sign', 'verify'], 'sign', { name: 'RSA-PSS', saltLength: 48 }],
  ['RSA-OAEP', rsa('RSA-OAEP', 'SHA-256'), ['encrypt', 'decrypt'], 'encrypt', { name: 'RSA-OAEP', label }],
  ['ECDSA P-256', { name: 'ECDSA', namedCurve: 'P-256' }, ['sign', 'verify'], 'sign', { name: 'ECDSA', hash: 'SHA-256' }],
  ['ECDSA P-384', { name: 'ECDSA', namedCurve: 'P-384' }, ['sign', 'verify'], 'sign', { name: 'ECDSA', hash: 'SHA-384' }],
  ['ECDSA P-521', { name: 'ECDSA', namedCurve: 'P-521' }, ['sign', 'verify'], 'sign', { name: 'ECDSA', hash: 'SHA-512' }],
  ['Ed25519', { name: 'Ed25519' }, ['sign', 'verify'], 'sign', { name: 'Ed25519' }],
  ['Ed448', { name: 'Ed448' }, ['sign', 'verify'], 'sign', { name: 'Ed448' }],
  ['ECDH P-256', { name: 'ECDH', namedCurve: 'P-256' }, ['deriveBits'], 'derive', 256],
  ['ECDH P-384', { name: 'ECDH', namedCurve: 'P-384' }, ['deriveBits'], 'derive', 384],
  ['ECDH P-521', { name: 'ECDH', namedCurve: 'P-521' }, ['deriveBits'], 'derive', 528],
  ['X25519', { name: 'X25519' }, ['deriveBits'], 'derive', 256],
  ['X448', { name: 'X448' }, ['deriveBits'], 'derive', 448],
  ['HMAC SHA-256', { name: 'HMAC', hash: 'SHA-256' }, ['sign', 'verify'], 'sign', { name: 'HMAC' }],
  ['HMAC SHA-512', { name: 'HMAC', hash: 'SHA-512', length: 384 }, ['sign', 'verify'], 'sign', { name: 'HMAC' }],
  ['AES-GCM', { name: 'AES-GCM', length: 256 }, ['encrypt', 'decrypt'], 'encrypt', { name: 'AES-GCM', iv: iv.subarray(0, 12), additionalData: label, tagLength: 96 }],
  ['AES-CBC', { name: 'AES-CBC', length: 128 }, ['encrypt', 'decrypt'], 'encrypt', { name: 'AES-CBC', iv }],
  ['AES-CTR', { name: 'AES-CTR', length: 192 }, ['encrypt', 'decrypt'], 'encrypt', { name: 'AES-CTR', counter: iv, length: 64 }],
  ['AES-KW', { name: 'AES-KW', length: 256 }, ['wrapKey', 'unwrapKey'], 'wrap', { name: 'AES-KW' }],
];

const isSecret = (alg) => ['HMAC', 'AES-GCM', 'AES-CBC', 'AES-CTR', 'AES-KW'].includes(alg.name);
const hasRaw = (alg) => !alg.name.startsWith('RSA');
// Deterministic signatures: the other side's must be the very bytes.
const deterministic = ['RSASSA-PKCS1-v1_5', 'Ed25519', 'Ed448', 'HMAC'];
const pubUsages = (u) => u.filter((x) => x === 'verify' || x === 'encrypt');
const privUsages = (u) => u.filter((x) => x !== 'verify' && x !== 'encrypt');

// exportAll gives every export of key: { format: hex or JWK }.
async function exportAll(key, alg) {
  const out = {};
  const formats = key.type === 'secret' ? ['raw', 'jwk'] : key.type === 'public' ? ['spki', 'jwk', ...(hasRaw(alg) ? ['raw'] : [])] : ['pkcs8', 'jwk'];
  for (const f of formats) {
    const e = await subtle.exportKey(f, key);
    out[f] = f === 'jwk' ? e : hex(e);
  }
  return out;
}

// importAll imports each export of a key: [[format, CryptoKey]].
async function importAll(exports, alg, usages) {
  const out = [];
  for (const [f, v] of Object.entries(exports)) {
    out.push([f, await subtle.importKey(f, f === 'jwk' ? v : unhex(v), alg, true, usages)]);
  }
  return out;
}

async function gen() {
  const out = {};
  for (const [name, alg, usages, use, params] of cases) {
    const c = {};
    const k = await subtle.generateKey(alg, true, usages);
    if (isSecret(alg)) c.secret = await exportAll(k, alg);
    else {
      c.public = await exportAll(k.publicKey, alg);
      c.private = await exportAll(k.privateKey, alg);
    }
    const secretOrPriv = isSecret(alg) ? k : k.privateKey;
    if (use === 'sign') c.sig = hex(await subtle.sign(params, secretOrPriv, msg));
    if (use === 'encrypt') c.ct = hex(await subtle.encrypt(params, isSecret(alg) ? k : k.publicKey, msg));
    if (use === 'wrap') {
      const inner = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);
      c.inner = hex(await subtle.exportKey('raw', inner));
      c.wrapped = hex(await subtle.wrapKey('raw', inner, k, params));
      c.wrappedJwk = hex(await subtle.wrapKey('jwk', inner, k, params));
    }
    if (use === 'derive') {
      const peer = await subtle.generateKey(alg, true, usages);
      c.peer = await exportAll(peer.publicKey, alg);
      c.bits = hex(await subtle.deriveBits({ name: alg.name, public: peer.publicKey }, k.privateKey, params));
    }
    out[name] = c;
  }
  // Derivations from fixed secrets: the same bits on both sides.
  const ikm = await subtle.importKey('raw', msg, 'HKDF', false, ['deriveBits']);
  out.HKDF = { bits: hex(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: label, info: iv }, ikm, 512)) };
  const pw = await subtle.importKey('raw', msg, 'PBKDF2', false, ['deriveBits']);
  out.PBKDF2 = { bits: hex(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-512', salt: label, iterations: 1000 }, pw, 256)) };
  out.SHA = {};
  for (const h of ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512']) out.SHA[h] = hex(await subtle.digest(h, msg));
  console.log(JSON.stringify(out));
}

// jwkSame compares two JWKs member by member, but for the "alg" that
// Node 20 gives Ed25519 and Ed448 keys (the curve's name) and Node 22
// does not.
function jwkSame(a, b) {
  const members = (j) => Object.keys(j).filter((k) => !(k === 'alg' && j.alg === j.crv && j.crv.startsWith('Ed'))).sort();
  const ka = members(a), kb = members(b);
  return JSON.stringify(ka) === JSON.stringify(kb) && ka.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

async function check(theirs) {
  const results = [];
  const ok = (name, what, cond) => results.push(`${name} ${what}: ${cond ? 'ok' : 'FAIL'}`);
  for (const [name, alg, usages, use, params] of cases) {
    const c = theirs[name];
    let secrets, privs, pubs;
    if (isSecret(alg)) {
      secrets = await importAll(c.secret, alg, usages);
      for (const [f, k] of secrets) ok(name, `${f} exports the same jwk`, jwkSame(await subtle.exportKey('jwk', k), c.secret.jwk));
    } else {
      privs = await importAll(c.private, alg, privUsages(usages));
      pubs = await importAll(c.public, alg, pubUsages(usages));
      for (const [f, k] of privs) ok(name, `${f} private exports the same jwk`, jwkSame(await subtle.exportKey('jwk', k), c.private.jwk));
      for (const [f, k] of pubs) {
        ok(name, `${f} public exports the same jwk`, jwkSame(await subtle.exportKey('jwk', k), c.public.jwk));
        ok(name, `${f} public exports the same spki`, hex(await subtle.exportKey('spki', k)) === c.public.spki);
      }
    }
    if (use === 'sign') {
      const verifiers = secrets || pubs, signers = secrets || privs;
      for (const [f, k] of verifiers) {
        ok(name, `${f} verifies`, await subtle.verify(params, k, unhex(c.sig), msg));
        ok(name, `${f} refuses another message`, !(await subtle.verify(params, k, unhex(c.sig), label)));
      }
      for (const [f, k] of signers) {
        const sig = await subtle.sign(params, k, msg);
        if (deterministic.includes(alg.name)) ok(name, `${f} signs the same bytes`, hex(sig) === c.sig);
        ok(name, `${f} signs what it verifies`, await subtle.verify(params, verifiers[0][1], sig, msg));
      }
    }
    if (use === 'encrypt') {
      for (const [f, k] of secrets || privs) ok(name, `${f} decrypts`, same(await subtle.decrypt(params, k, unhex(c.ct)), msg));
      if (secrets) for (const [f, k] of secrets) ok(name, `${f} encrypts the same bytes`, hex(await subtle.encrypt(params, k, msg)) === c.ct);
      if (pubs) {
        for (const [f, k] of pubs) {
          const ct = await subtle.encrypt(params, k, msg);
          ok(name, `${f} encrypts what decrypts`, same(await subtle.decrypt(params, privs[0][1], ct), msg));
        }
      }
    }
    if (use === 'wrap') {
      for (const [f, k] of secrets) {
        const inner = await subtle.unwrapKey('raw', unhex(c.wrapped), k, params, 'AES-GCM', true, ['encrypt']);
        ok(name, `${f} unwraps raw`, hex(await subtle.exportKey('raw', inner)) === c.inner);
        const innerJwk = await subtle.unwrapKey('jwk', unhex(c.wrappedJwk), k, params, 'AES-GCM', true, ['encrypt']);
        ok(name, `${f} unwraps jwk`, hex(await subtle.exportKey('raw', innerJwk)) === c.inner);
        ok(name, `${f} wraps the same bytes`, hex(await subtle.wrapKey('raw', inner, k, params)) === c.wrapped);
      }
    }
    if (use === 'derive') {
      const peers = await importAll(c.peer, alg, []);
      for (const [f, k] of privs) {
        for (const [g, p] of peers) {
          ok(name, `${f} with ${g} peer derives the same bits`, hex(await subtle.deriveBits({ name: alg.name, public: p }, k, params)) === c.bits);
        }
      }
    }
  }
  const ikm = await subtle.importKey('raw', msg, 'HKDF', false, ['deriveBits']);
  ok('HKDF', 'same bits', hex(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: label, info: iv }, ikm, 512)) === theirs.HKDF.bits);
  const pw = await subtle.importKey('raw', msg, 'PBKDF2', false, ['deriveBits']);
  ok('PBKDF2', 'same bits', hex(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-512', salt: label, iterations: 1000 }, pw, 256)) === theirs.PBKDF2.bits);
  for (const h of ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512']) ok(h, 'same digest', hex(await subtle.digest(h, msg)) === theirs.SHA[h]);
  console.log(results.join('\n'));
}

// errors prints how calls that must fail fail.
async function errors() {
  const ed = await subtle.generateKey({ name: 'Ed448' }, false, ['sign', 'verify']);
  const x448 = await subtle.generateKey({ name: 'X448' }, true, ['deriveBits']);
  const x25519 = await subtle.generateKey({ name: 'X25519' }, true, ['deriveBits']);
  const ecdsa = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const ecdh = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-384' }, true, ['deriveBits']);
  const aes = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt', 'decrypt']);
  const hmac = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);
  const spki = await subtle.exportKey('spki', x448.publicKey);
  const pkcs8 = await subtle.exportKey('pkcs8', x448.privateKey);
  const jwk = await subtle.exportKey('jwk', x448.privateKey);
  const calls = {
    'unknown algorithm': () => subtle.generateKey({ name: 'Ed449' }, true, ['sign']),
    'usage not allowed': () => subtle.generateKey({ name: 'Ed448' }, true, ['encrypt']),
    'no private usages': () => subtle.generateKey({ name: 'X448' }, true, []),
    'AES length': () => subtle.generateKey({ name: 'AES-CBC', length: 100 }, true, ['encrypt']),
    'RSA exponent past 32 bits': () => subtle.generateKey({ ...rsa('RSA-OAEP', 'SHA-256'), publicExponent: new Uint8Array([1, 0, 0, 0, 0, 1]) }, true, ['encrypt']),
    'no modulusLength': () => subtle.generateKey({ name: 'RSA-PSS', publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign']),
    'bad format': () => subtle.importKey('pem', spki, { name: 'X448' }, true, []),
    'raw X448 of 57 bytes': () => subtle.importKey('raw', new Uint8Array(57), { name: 'X448' }, true, []),
    'raw Ed448 of 56 bytes': () => subtle.importKey('raw', new Uint8Array(56), { name: 'Ed448' }, true, ['verify']),
    'spki as pkcs8': () => subtle.importKey('pkcs8', spki, { name: 'X448' }, true, ['deriveBits']),
    'X448 spki as Ed448': () => subtle.importKey('spki', spki, { name: 'Ed448' }, true, ['verify']),
    'garbage spki': () => subtle.importKey('spki', new Uint8Array([0x30, 0x03, 1, 2, 3]), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']),
    'garbage pkcs8': () => subtle.importKey('pkcs8', new Uint8Array(100), { name: 'RSA-PSS', hash: 'SHA-256' }, true, ['sign']),
    'pkcs8 with verify usage': () => subtle.importKey('pkcs8', pkcs8, { name: 'X448' }, true, ['verify']),
    'jwk wrong kty': () => subtle.importKey('jwk', { ...jwk, kty: 'EC' }, { name: 'X448' }, true, ['deriveBits']),
    'jwk wrong crv': () => subtle.importKey('jwk', { ...jwk, crv: 'X25519' }, { name: 'X448' }, true, ['deriveBits']),
    'jwk d of another key': () => subtle.importKey('jwk', { ...jwk, d: Buffer.alloc(56, 1).toString('base64url') }, { name: 'X448' }, true, ['deriveBits']),
    'jwk not an object': () => subtle.importKey('jwk', 'x', { name: 'X448' }, true, ['deriveBits']),
    'key data a string': () => subtle.importKey('raw', 'x', { name: 'AES-GCM' }, true, ['encrypt']),
    'usages not a sequence': () => subtle.importKey('raw', new Uint8Array(16), { name: 'AES-GCM' }, true, 1),
    'not extractable': () => subtle.exportKey('raw', aes),
    'raw of a private key': () => subtle.exportKey('raw', x448.privateKey),
    'pkcs8 of a public key': () => subtle.exportKey('pkcs8', x448.publicKey),
    'spki of a secret': () => subtle.exportKey('spki', hmac),
    'not a CryptoKey': () => subtle.exportKey('jwk', {}),
    'Ed448 context': () => subtle.sign({ name: 'Ed448', context: new Uint8Array(1) }, ed.privateKey, msg),
    'sign with a public key': () => subtle.sign({ name: 'Ed448' }, ed.publicKey, msg),
    'sign with another algorithm': () => subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, ed.privateKey, msg),
    'encrypt with a signing key': () => subtle.encrypt({ name: 'AES-GCM', iv }, hmac, msg),
    'GCM tampered': async () => {
      const ct = new Uint8Array(await subtle.encrypt({ name: 'AES-GCM', iv }, aes, msg));
      ct[0] ^= 1;
      return subtle.decrypt({ name: 'AES-GCM', iv }, aes, ct);
    },
    'X448 with an X25519 peer': () => subtle.deriveBits({ name: 'X448', public: x25519.publicKey }, x448.privateKey, 448),
    'ECDH with an ECDSA peer': () => subtle.deriveBits({ name: 'ECDH', public: ecdsa.publicKey }, ecdh.privateKey, 384),
    'X448 more bits than it has': () => subtle.deriveBits({ name: 'X448', public: x448.publicKey }, x448.privateKey, 456),
    'X448 with a private key as public': () => subtle.deriveBits({ name: 'X448', public: x448.privateKey }, x448.privateKey, 448),
  };
  for (const [what, f] of Object.entries(calls)) {
    let r;
    try { r = await f().then(() => 'resolved', (e) => `${e.name}${e.code !== undefined && typeof e.code === 'string' ? ' ' + e.code : ''}`); } catch (e) { r = `sync ${e.name}`; }
    console.log(`${what}: ${r}`);
  }
}

const mode = process.argv[2];
(mode === 'gen' ? gen() : mode === 'check' ? check(JSON.parse(fs.readFileSync(process.argv[3], 'utf8'))) : errors()).catch((e) => {
  console.log('unexpected', e && e.stack);
  process.exitCode = 1;
});
