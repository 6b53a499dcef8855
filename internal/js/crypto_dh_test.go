package js

import (
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// genSafePrime returns safe primes with OpenSSL's congruence for the
// generator, and gives up when told to stop.
func TestDHSafePrime(t *testing.T) {
	for _, g := range []int64{2, 5, 3} {
		p := genSafePrime(512, g, nil)
		if p == nil || p.BitLen() != 512 || !p.ProbablyPrime(20) || !new(big.Int).Rsh(p, 1).ProbablyPrime(20) {
			t.Fatalf("g=%d: %v is not a 512-bit safe prime", g, p)
		}
		want := map[int64][2]int64{2: {24, 23}, 5: {60, 59}, 3: {12, 11}}[g]
		if new(big.Int).Mod(p, big.NewInt(want[0])).Int64() != want[1] {
			t.Fatalf("g=%d: p mod %d = %v", g, want[0], new(big.Int).Mod(p, big.NewInt(want[0])))
		}
		if f := dhCheck(p, big.NewInt(g), nil); f != 0 {
			t.Fatalf("g=%d: DH_check flags %#x", g, f)
		}
	}
	stop := new(atomic.Bool)
	stop.Store(true)
	if p := genSafePrime(8192, 2, stop); p != nil {
		t.Fatal("a stopped generation returned a prime")
	}
	// DH_check: 255 is not prime and too small, 23 is a small safe prime.
	if f := dhCheck(big.NewInt(255), big.NewInt(2), nil); f != dhCheckPNotPrime|dhModulusTooSmall {
		t.Fatalf("255: %#x", f)
	}
	if f := dhCheck(big.NewInt(23), big.NewInt(23), nil); f != dhModulusTooSmall|dhNotSuitableGenerator {
		t.Fatalf("23: %#x", f)
	}
}

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
