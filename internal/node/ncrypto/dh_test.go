package ncrypto

import (
	"math/big"
	"sync/atomic"
	"testing"
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
