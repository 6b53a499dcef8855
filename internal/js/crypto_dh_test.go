package js

import (
	"strings"
	"testing"
	"time"
)

// A guest's DH work is bounded: moduli, keys and generated primes above
// OpenSSL's 10000 bits are refused, and generating a large prime gives
// way to the process's time limit.
func TestDHBounds(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const crypto = require('crypto');
const code = (f) => { try { f(); return 'no error'; } catch (e) { return e.code; } };
const big = Buffer.alloc(1251, 0xff);
const dh = crypto.createDiffieHellman(crypto.getDiffieHellman('modp2').getPrime());
dh.generateKeys();
console.log(JSON.stringify({
  hugeModulus: code(() => { const d = crypto.createDiffieHellman(big); d.setPrivateKey(Buffer.from([3])); d.computeSecret(Buffer.from([2])); }),
  hugeVerify: crypto.createDiffieHellman(big).verifyError,
  hugeGen: code(() => crypto.createDiffieHellman(10001)),
  hugePeer: code(() => dh.computeSecret(big)),
  hugePriv: code(() => { dh.setPrivateKey(big); dh.generateKeys(); }),
}));
`)
	want := `{"hugeModulus":"ERR_OSSL_DH_MODULUS_TOO_LARGE","hugeVerify":256,"hugeGen":"ERR_CRYPTO_OPERATION_FAILED",` +
		`"hugePeer":"ERR_CRYPTO_INVALID_KEYTYPE","hugePriv":"ERR_OSSL_DH_MODULUS_TOO_LARGE"}` + "\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d stdout %s stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
	e := newEngine(t, Config{TimeLimit: 300 * time.Millisecond})
	v = newVM(t, e)
	r = v.node(`for (;;) require('crypto').createDiffieHellman(8192)`)
	if r.code != 124 || !strings.Contains(r.stderr, "CPU time limit exceeded") {
		t.Fatalf("code %d stderr %s", r.code, trunc(r.stderr))
	}
}
