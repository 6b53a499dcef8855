package js

import (
	"bytes"
	"encoding/asn1"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebCryptoHostileInputs feeds crypto.subtle what a hostile guest
// would: algorithm objects whose getters throw, Proxies, oversized key
// data and parameters, garbage to unwrap, and typed-array prototypes
// patched to catch key material. Every call must settle as a rejection
// (never a crash or a synchronous throw), within the limits, and no key
// byte may reach guest code.
func TestWebCryptoHostileInputs(t *testing.T) {
	e := newEngine(t, Config{HeapLimitBytes: 64 << 20, ExternalLimitBytes: 64 << 20})
	v := newVM(t, e)
	r := v.node(`
const s = crypto.subtle;
const out = {};
const name = async (k, f) => {
  let p;
  try { p = f(); } catch (e) { out[k] = 'sync ' + e.name; return; }
  out[k] = await p.then(() => 'ok', (e) => e.name);
};
(async () => {
  const bits = new Uint8Array(32).fill(9);
  await name('getterThrows', () => s.importKey('raw', bits, { get name() { throw new Error('boom'); } }, false, ['sign']));
  await name('proxy', () => s.importKey('raw', bits, new Proxy({}, { get: (t, k) => (k === 'name' ? 'HMAC' : k === 'hash' ? 'SHA-256' : undefined) }), false, ['sign']));
  await name('hugeExponent', () => s.generateKey({ name: 'RSA-OAEP', modulusLength: 2048, publicExponent: new Uint8Array(10000).fill(255), hash: 'SHA-256' }, false, ['decrypt']));
  await name('hugeModulus', () => s.generateKey({ name: 'RSA-PSS', modulusLength: 2 ** 20, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, false, ['sign']));
  await name('hugeSpki', () => s.importKey('spki', new Uint8Array(1 << 21).fill(0x30), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']));
  await name('garbageJwk', () => s.importKey('jwk', { kty: 'RSA', n: 'A'.repeat(1 << 16), e: 'AQAB' }, { name: 'RSA-PSS', hash: 'SHA-256' }, true, ['verify']));
  await name('jwkNotObject', () => s.importKey('jwk', 42, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']));
  const kek = await s.importKey('raw', bits, 'AES-KW', false, ['unwrapKey', 'wrapKey']);
  await name('unwrapGarbage', () => s.unwrapKey('raw', new Uint8Array(1 << 16), kek, 'AES-KW', 'AES-GCM', false, ['encrypt']));
  await name('unwrapOdd', () => s.unwrapKey('raw', new Uint8Array(17), kek, 'AES-KW', 'AES-GCM', false, ['encrypt']));
  const ikm = await s.importKey('raw', bits, 'HKDF', false, ['deriveBits']);
  await name('hkdfTooLong', () => s.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: bits, info: bits }, ikm, 255 * 256 + 8));
  await name('lengthNaN', () => s.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: bits, info: bits }, ikm, NaN));
  const gk = await s.importKey('raw', bits, 'AES-GCM', false, ['encrypt', 'decrypt']);
  await name('gcmNoIv', () => s.encrypt({ name: 'AES-GCM', iv: new Uint8Array(0) }, gk, bits));
  const ck = await s.importKey('raw', bits, 'AES-CTR', false, ['encrypt']);
  await name('ctrWraps', () => s.encrypt({ name: 'AES-CTR', counter: new Uint8Array(16), length: 1 }, ck, new Uint8Array(33)));
  await name('foreignThis', async () => Object.getOwnPropertyDescriptor(CryptoKey.prototype, 'algorithm').get.call({}));
  await name('newCryptoKey', async () => new CryptoKey());

  // Key bytes never pass through guest-replaceable typed-array methods.
  const secret = new Uint8Array(32).fill(0x5a);
  const wrapped = await s.wrapKey('raw', await s.importKey('raw', secret, 'AES-CBC', true, ['encrypt']), kek, 'AES-KW');
  const seen = [];
  const TA = Object.getPrototypeOf(Uint8Array.prototype);
  const saved = { set: TA.set, subarray: TA.subarray, slice: TA.slice };
  const isSecret = (x) => x && x.length >= 8 && Array.prototype.every.call(saved.subarray.call(x, 0, 8), (b) => b === 0x5a);
  for (const m of Object.keys(saved)) TA[m] = function (...a) { seen.push(this, ...a); return saved[m].apply(this, a); };
  // The trap works: it sees the guest's own use.
  secret.subarray(0, 8);
  out.trapWorks = seen.some(isSecret);
  seen.length = 0;
  const hidden = await s.unwrapKey('raw', wrapped, kek, 'AES-KW', 'AES-CBC', false, ['encrypt']);
  await s.encrypt({ name: 'AES-CBC', iv: new Uint8Array(16) }, hidden, new Uint8Array(16));
  await s.sign('HMAC', await s.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']), bits);
  Object.assign(TA, saved);
  out.leaked = seen.some(isSecret);
  out.hiddenExport = await s.exportKey('raw', hidden).then(() => 'ok', (e) => e.name);
  console.log(JSON.stringify(out));
})();
`)
	want := `{"getterThrows":"Error","proxy":"ok","hugeExponent":"OperationError","hugeModulus":"OperationError",` +
		`"hugeSpki":"DataError","garbageJwk":"DataError","jwkNotObject":"TypeError","unwrapGarbage":"OperationError",` +
		`"unwrapOdd":"OperationError","hkdfTooLong":"OperationError","lengthNaN":"ok","gcmNoIv":"OperationError",` +
		`"ctrWraps":"OperationError","foreignThis":"TypeError","newCryptoKey":"TypeError","trapWorks":true,"leaked":false,"hiddenExport":"InvalidAccessException"}` + "\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout %s\nwant   %s\nstderr %s", r.code, r.stdout, want, trunc(r.stderr))
	}
	if strings.Contains(r.stderr, "panic") {
		t.Fatalf("stderr: %s", r.stderr)
	}
}

// TestWebCryptoHostInterop uses the host's node as the oracle for
// crypto.subtle: keys of every algorithm generated in the VM, exported in
// every format, are imported by the host, which verifies the VM's
// signatures, decrypts its ciphertexts, unwraps its keys, derives the
// same bits and exports the same JWKs; then the same the other way round.
// Both sides also fail the same calls with the same error names
// (testdata/webcrypto_interop.js holds both halves).
func TestWebCryptoHostInterop(t *testing.T) {
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("this test needs node on the host")
	}
	script, err := os.ReadFile("testdata/webcrypto_interop.js")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	hostFile := filepath.Join(tmp, "interop.js")
	if err := os.WriteFile(hostFile, script, 0o644); err != nil {
		t.Fatal(err)
	}
	host := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(hostNode, append([]string{"--no-warnings", hostFile}, args...)...)
		cmd.Dir = tmp
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("host node %v: %v\n%s", args, err, stderr.String())
		}
		return string(out)
	}
	v := newVM(t, nil)
	v.writeFile("/workspace/interop.js", string(script))
	vm := func(args ...string) string {
		t.Helper()
		r := v.run("", append([]string{"node", "interop.js"}, args...)...)
		if r.code != 0 {
			t.Fatalf("node %v in the VM: exit %d\n%s\n%s", args, r.code, r.stdout, trunc(r.stderr))
		}
		return r.stdout
	}
	// allOK checks a check run's report: every line ok, and enough of them
	// that no algorithm was skipped.
	allOK := func(who, report string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(report), "\n")
		for _, l := range lines {
			if !strings.HasSuffix(l, ": ok") {
				t.Errorf("%s: %s", who, l)
			}
		}
		if len(lines) < 240 {
			t.Errorf("%s made only %d checks:\n%s", who, len(lines), report)
		}
	}

	vmKeys := vm("gen")
	if err := os.WriteFile(filepath.Join(tmp, "vm.json"), []byte(vmKeys), 0o644); err != nil {
		t.Fatal(err)
	}
	allOK("the host on the VM's keys", host("check", "vm.json"))

	v.writeFile("/workspace/host.json", host("gen"))
	allOK("the VM on the host's keys", vm("check", "host.json"))

	if got, want := vm("errors"), host("errors"); got != want {
		t.Errorf("errors differ\n--- VM\n%s\n--- host\n%s", got, want)
	}
}

// TestEncryptedKeyIterations: an encrypted PKCS #8 key names its own
// PBKDF2 iteration count, which a guest chooses. A count past the bound
// pbkdf2() has is refused before any work; a large one within it runs on
// a charged host thread (heavy) and ends in the wrong passphrase's error.
func TestEncryptedKeyIterations(t *testing.T) {
	enc := func(iter int) string {
		type algo struct {
			OID    asn1.ObjectIdentifier
			Params asn1.RawValue `asn1:"optional"`
		}
		must := func(b []byte, err error) []byte {
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		kdf := must(asn1.Marshal(struct {
			Salt []byte
			Iter int
		}{make([]byte, 8), iter}))
		iv := must(asn1.Marshal(make([]byte, 16)))
		params := must(asn1.Marshal(struct{ KDF, Scheme algo }{
			algo{asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}, asn1.RawValue{FullBytes: kdf}},
			algo{asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}, asn1.RawValue{FullBytes: iv}},
		}))
		return hex.EncodeToString(must(asn1.Marshal(struct {
			Algo algo
			Data []byte
		}{algo{asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}, asn1.RawValue{FullBytes: params}}, make([]byte, 64)})))
	}
	v := newVM(t, nil)
	r := v.node(`
const c = require('crypto');
for (const h of process.argv.slice(1)) {
  try {
    c.createPrivateKey({ key: Buffer.from(h, 'hex'), format: 'der', type: 'pkcs8', passphrase: 'guess' });
    console.log('imported');
  } catch (e) { console.log(e.code); }
}
`, enc(1<<31-1), enc(1<<20), enc(2048))
	want := "ERR_OUT_OF_RANGE\nERR_OSSL_BAD_DECRYPT\nERR_OSSL_BAD_DECRYPT\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout %s\nwant %s\nstderr %s", r.code, r.stdout, want, trunc(r.stderr))
	}
}
