package js

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// Everything secexec encrypts, signs, exports or compresses, secexec
// decrypts, verifies, imports and decompresses: random keys, IVs, data
// and update() chunking for every cipher; every key type through every
// export format; signatures in every padding and encoding; ECDH both ways;
// and the RFC test vectors of HKDF and scrypt.
func TestCryptoRoundTrips(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const crypto = require('crypto');
const zlib = require('zlib');
const assert = require('assert');
let n = 0;
const rnd = (k) => crypto.randomBytes(k);
const chunked = (obj, data) => {
  const out = [];
  for (let off = 0; off < data.length;) {
    const k = Math.min(data.length - off, 1 + crypto.randomInt(40));
    out.push(obj.update(data.subarray(off, off + k)));
    off += k;
  }
  out.push(obj.final());
  return Buffer.concat(out);
};
for (const name of crypto.getCiphers()) {
  const info = crypto.getCipherInfo(name);
  // Key wrap takes each update whole, as OpenSSL (probe crypto_aes_wrap).
  if (info.mode === 'wrap') continue;
  for (let i = 0; i < 8; i++) {
    const key = rnd(info.keyLength);
    const iv = info.mode === 'ecb' ? null : rnd(info.mode === 'gcm' ? 1 + crypto.randomInt(32) : info.ivLength);
    const pt = rnd(crypto.randomInt(300));
    const aad = rnd(crypto.randomInt(20));
    const aead = info.mode === 'gcm' || name.endsWith('poly1305');
    const c = crypto.createCipheriv(name, key, iv);
    if (aead) c.setAAD(aad);
    const ct = chunked(c, pt);
    const d = crypto.createDecipheriv(name, key, iv);
    if (aead) { d.setAAD(aad); d.setAuthTag(c.getAuthTag()); }
    assert.deepStrictEqual(chunked(d, ct), pt, name);
    if (aead && ct.length > 0) {
      const bad = Buffer.from(ct); bad[0] ^= 1;
      const d2 = crypto.createDecipheriv(name, key, iv);
      d2.setAAD(aad); d2.setAuthTag(c.getAuthTag());
      d2.update(bad);
      assert.throws(() => d2.final(), /unable to authenticate/);
    }
    n++;
  }
}
const pairs = {
  rsa: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }),
  p256: crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  p384: crypto.generateKeyPairSync('ec', { namedCurve: 'secp384r1' }),
  p521: crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' }),
  ed: crypto.generateKeyPairSync('ed25519'),
  x: crypto.generateKeyPairSync('x25519'),
};
for (const [name, { publicKey, privateKey }] of Object.entries(pairs)) {
  const types = [['pkcs8', 'spki']];
  if (name === 'rsa') types.push(['pkcs1', 'pkcs1']);
  if (name.startsWith('p')) types.push(['sec1', 'spki']);
  for (const [pt, ut] of types) {
    for (const format of ['pem', 'der']) {
      const priv = crypto.createPrivateKey({ key: privateKey.export({ type: pt, format }), format, type: pt });
      const pub = crypto.createPublicKey({ key: publicKey.export({ type: ut, format }), format, type: ut });
      assert(priv.equals(privateKey) && pub.equals(publicKey), name + pt + format);
    }
  }
  assert(crypto.createPrivateKey({ key: privateKey.export({ format: 'jwk' }), format: 'jwk' }).equals(privateKey));
  assert(crypto.createPublicKey({ key: publicKey.export({ format: 'jwk' }), format: 'jwk' }).equals(publicKey));
  assert(crypto.createPublicKey(privateKey).equals(publicKey));
  n++;
}
const msg = rnd(1000);
for (const [name, opts] of [['rsa', {}], ['rsa', { padding: 6 }], ['rsa', { padding: 6, saltLength: 0 }], ['rsa', { padding: 6, saltLength: -1 }],
  ['p256', {}], ['p384', { dsaEncoding: 'ieee-p1363' }], ['p521', {}], ['p521', { dsaEncoding: 'ieee-p1363' }]]) {
  const { publicKey, privateKey } = pairs[name];
  for (const alg of ['sha1', 'sha256', 'sha512', 'sha3-256']) {
    const sig = crypto.sign(alg, msg, { key: privateKey, ...opts });
    if (opts.saltLength === 0) {
      // Without salt PSS is deterministic, and a salted signature does not
      // pass for a salt-less one.
      assert(crypto.sign(alg, msg, { key: privateKey, ...opts }).equals(sig), 'pss0 deterministic');
      assert(!crypto.verify(alg, msg, { key: publicKey, ...opts }, crypto.sign(alg, msg, { key: privateKey, padding: 6 })), 'pss0 strict');
    }
    assert(crypto.verify(alg, msg, { key: publicKey, ...opts }, sig), name + alg);
    assert(crypto.createVerify(alg).update(msg).verify({ key: publicKey, ...opts }, sig));
    assert(!crypto.verify(alg, rnd(10), { key: publicKey, ...opts }, sig));
    n++;
  }
}
const edSig = crypto.sign(null, msg, pairs.ed.privateKey);
assert(crypto.verify(null, msg, pairs.ed.publicKey, edSig) && !crypto.verify(null, msg.subarray(1), pairs.ed.publicKey, edSig));
for (const opts of [{}, { oaepHash: 'sha256' }, { oaepHash: 'sha512', oaepLabel: rnd(5) }]) {
  const ct = crypto.publicEncrypt({ key: pairs.rsa.publicKey, ...opts }, Buffer.from('secret'));
  assert.strictEqual(crypto.privateDecrypt({ key: pairs.rsa.privateKey, ...opts }, ct).toString(), 'secret');
}
assert.strictEqual(crypto.publicDecrypt(pairs.rsa.publicKey, crypto.privateEncrypt(pairs.rsa.privateKey, Buffer.from('signed'))).toString(), 'signed');
for (const curve of crypto.getCurves()) {
  const a = crypto.createECDH(curve), b = crypto.createECDH(curve);
  a.generateKeys(); b.generateKeys();
  assert.deepStrictEqual(a.computeSecret(b.getPublicKey(null, 'compressed')), b.computeSecret(a.getPublicKey()));
  n++;
}
for (const k of ['p256', 'x']) {
  const other = crypto.generateKeyPairSync(k === 'x' ? 'x25519' : 'ec', { namedCurve: 'P-256' });
  assert.deepStrictEqual(crypto.diffieHellman({ privateKey: pairs[k].privateKey, publicKey: other.publicKey }),
    crypto.diffieHellman({ privateKey: other.privateKey, publicKey: pairs[k].publicKey }));
}
// RFC 5869 test case 1 and RFC 7914 section 12.
assert.strictEqual(Buffer.from(crypto.hkdfSync('sha256', Buffer.alloc(22, 0x0b), Buffer.from('000102030405060708090a0b0c', 'hex'),
  Buffer.from('f0f1f2f3f4f5f6f7f8f9', 'hex'), 42)).toString('hex'),
  '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865');
assert.strictEqual(crypto.scryptSync('password', 'NaCl', 64, { N: 1024, r: 8, p: 16 }).toString('hex'),
  'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640');
const big = Buffer.concat([rnd(100000), Buffer.alloc(200000, 'z')]);
for (const q of [0, 5, 11]) assert.deepStrictEqual(zlib.brotliDecompressSync(zlib.brotliCompressSync(big, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: q } })), big);
console.log('round trips', n > 150);
`)
	if r.code != 0 || r.stdout != "round trips true\n" {
		t.Fatalf("code %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
}

// Hostile inputs end in Node's errors (or the sandbox's own, which say
// what is not supported), never in a host panic or unbounded memory.
func TestCryptoHostileInputs(t *testing.T) {
	e := newEngine(t, Config{HeapLimitBytes: 32 << 20, ExternalLimitBytes: 64 << 20})
	v := newVM(t, e)
	// A Brotli bomb: 256 MiB of zeros (four times the external-memory
	// limit) in a few hundred bytes.
	var bomb bytes.Buffer
	w := brotli.NewWriterOptions(&bomb, brotli.WriterOptions{Quality: 5})
	zero := make([]byte, 1<<20)
	for range 256 {
		if _, err := w.Write(zero); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if bomb.Len() > 1<<20 {
		t.Fatalf("bomb of %d bytes", bomb.Len())
	}
	v.writeFile("/workspace/bomb.br", bomb.String())
	r := v.node(`
const crypto = require('crypto');
const zlib = require('zlib');
const fs = require('fs');
const code = (f) => { try { f(); return 'no error'; } catch (e) { return e.code || e.message; } };
const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
const pem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' });
const results = {
  keylen: code(() => crypto.createCipheriv('aes-256-gcm', Buffer.alloc(31), Buffer.alloc(12))),
  ivlen: code(() => crypto.createCipheriv('aes-128-cbc', Buffer.alloc(16), Buffer.alloc(17))),
  unknown: code(() => crypto.createCipheriv('no-such-cipher', Buffer.alloc(24), Buffer.alloc(8))),
  truncatedPem: code(() => crypto.createPrivateKey(pem.slice(0, pem.length / 2))),
  corruptPem: code(() => crypto.createPrivateKey(pem.replace(/A/g, 'B'))),
  hugeModulus: code(() => crypto.generateKeyPairSync('rsa', { modulusLength: 2 ** 20 })),
  tinyModulus: code(() => crypto.generateKeyPairSync('rsa', { modulusLength: 511 })),
  hugeDer: code(() => crypto.createPrivateKey({ key: Buffer.alloc(1 << 21, 0x30), format: 'der', type: 'pkcs8' })),
  hugeJwk: code(() => crypto.createPublicKey({ key: { kty: 'RSA', n: 'A'.repeat(1 << 16), e: 'AQAB' }, format: 'jwk' })),
  scryptMem: code(() => crypto.scryptSync('pw', 'salt', 16, { N: 2 ** 24, r: 8, maxmem: 2 ** 53 - 1 })),
  scryptWork: code(() => crypto.scryptSync('pw', 'salt', 16, { N: 2 ** 17, r: 1, p: 2 ** 17, maxmem: 2 ** 30 })),
  scryptKeylen: code(() => crypto.scryptSync('pw', 'salt', 2 ** 30, { N: 16 })),
  hkdfLen: code(() => crypto.hkdfSync('sha256', 'k', 's', 'i', 255 * 32 + 1)),
  chachaCounter: code(() => crypto.createCipheriv('chacha20', Buffer.alloc(32), Buffer.alloc(16, 0xff)).update(Buffer.alloc(200))),
  bomb: code(() => zlib.brotliDecompressSync(fs.readFileSync('bomb.br'))),
  bombMax: code(() => zlib.brotliDecompressSync(fs.readFileSync('bomb.br'), { maxOutputLength: 1 << 20 })),
  brotliGarbage: code(() => zlib.brotliDecompressSync(crypto.randomBytes(1000))),
};
const s = zlib.createBrotliDecompress();
s.on('error', (e) => { results.bombStream = e.code; console.log(JSON.stringify(results)); });
s.on('data', () => {});
s.end(fs.readFileSync('bomb.br'));
`)
	want := `{"keylen":"ERR_CRYPTO_INVALID_KEYLEN","ivlen":"ERR_CRYPTO_INVALID_IV","unknown":"ERR_CRYPTO_UNKNOWN_CIPHER",` +
		`"truncatedPem":"ERR_OSSL_UNSUPPORTED","corruptPem":"ERR_OSSL_UNSUPPORTED","hugeModulus":"ERR_OUT_OF_RANGE",` +
		`"tinyModulus":"error:1C8000AB:Provider routines::key size too small","hugeDer":"ERR_OUT_OF_RANGE","hugeJwk":"ERR_CRYPTO_INVALID_JWK",` +
		`"scryptMem":"ERR_CRYPTO_INVALID_SCRYPT_PARAMS","scryptWork":"ERR_CRYPTO_INVALID_SCRYPT_PARAMS","scryptKeylen":"ERR_OUT_OF_RANGE","hkdfLen":"ERR_CRYPTO_INVALID_KEYLEN",` +
		`"chachaCounter":"ERR_OUT_OF_RANGE","bomb":"ERR_BUFFER_TOO_LARGE","bombMax":"ERR_BUFFER_TOO_LARGE",` +
		`"brotliGarbage":"` // the code depends on the random bytes
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.HasSuffix(r.stdout, `"bombStream":"ERR_BUFFER_TOO_LARGE"}`+"\n") {
		t.Fatalf("code %d stdout %s stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
}

// Expensive computations give way to the process's time limit: Go code
// does not see V8's TerminateExecution, so they run beside the bridge
// call, which returns when the limit passes.
func TestCryptoHeavyWorkTimeLimit(t *testing.T) {
	e := newEngine(t, Config{TimeLimit: 300 * time.Millisecond})
	v := newVM(t, e)
	// About 128 MiB and several seconds of scrypt per call.
	r := v.node(`for (;;) require('crypto').scryptSync('pw', 'salt', 16, { N: 2 ** 17, r: 8, p: 4, maxmem: 2 ** 30 })`)
	if r.code != 124 || !strings.Contains(r.stderr, "CPU time limit exceeded") {
		t.Fatalf("code %d stderr %s", r.code, trunc(r.stderr))
	}
	// Brotli at quality 11 compresses random data at a few MB/s.
	r = v.node(`for (;;) require('zlib').brotliCompressSync(require('crypto').randomBytes(8 << 20))`)
	if r.code != 124 || !strings.Contains(r.stderr, "CPU time limit exceeded") {
		t.Fatalf("brotli: code %d stderr %s", r.code, trunc(r.stderr))
	}
	// The VM is still usable.
	if r := v.node(`console.log(require('crypto').scryptSync('a', 'b', 4, { N: 16 }).length)`); r.stdout != "4\n" {
		t.Fatalf("code %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
}

// Direct bridge calls with malformed operands (a guest cannot make them;
// this is defence in depth) end in errors.
func TestCryptoBridgeMalformed(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: -1})
	e.exposeBridge = true
	v := newVM(t, e)
	r := v.node(`
const B = globalThis.__test_bridge;
// Operands are the first n bytes of the scratch buffer, whatever the
// previous calls left there.
const junk = [0, 37, 38, 100, 5000];
let threw = 0, calls = 0, eio = 0;
const put = (i, n) => { try { B.cryptoIn(i, n); } catch { threw++; } };
for (const a of junk) for (const b of junk) for (const c of junk) {
  for (const [name, args] of [['cipherRun', ['aes-128-cbc', true, true, true, 0]], ['cipherRun', ['chacha20', false, true, false, 0]],
    ['cipherRun', ['aes-256-gcm', false, false, true, 0]], ['cipherInit', ['aes-128-gcm', false]], ['aeadTag', ['aes-128-gcm']],
    ['aeadTag', ['chacha20-poly1305']], ['keyExport', ['pem', 'pkcs1']], ['keyPublic', []], ['signDigest', ['sha256', 6, 0, true]],
    ['verifyDigest', ['', 0, null, false]], ['rsaCrypt', ['publicDecrypt', 1, 'sha1']], ['ecdhCompute', ['secp521r1']],
    ['ecdhConvert', ['prime256v1', 'hybrid']], ['diffieHellman', []], ['keyImport', ['public', 'der', 'spki']],
    ['keyImport', ['private', 'jwk', '']], ['keyGenerate', ['ec']], ['scrypt', [2, 1, 1, 1e9, 16]], ['hkdf', ['sha256', 8160]]]) {
    put(0, a); put(1, b); put(2, c); put(3, a);
    try { B[name](...args); } catch (e) { threw++; if (e === 'EIO') eio++; }
    calls++;
  }
}
// EIO is what a panicking bridge function throws.
console.log('done', calls, threw > 0, eio);
`)
	if r.code != 0 || r.stdout != "done 2375 true 0\n" {
		t.Fatalf("code %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
}
