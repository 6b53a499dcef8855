package ncrypto

import (
	"crypto/rand"
	"math/big"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
)

// Classic (finite-field) Diffie-Hellman for crypto.createDiffieHellman,
// getDiffieHellman and createDiffieHellmanGroup. JavaScript keeps the
// parameters and keys; this does the arithmetic: modular exponentiation,
// safe-prime generation and OpenSSL's DH_check.

// maxDHBits bounds a modulus, private key or peer key, as OpenSSL's
// OPENSSL_DH_MAX_MODULUS_BITS does.
const maxDHBits = 10000

// minHeavyDHBits: from this modulus size on, an exponentiation runs on
// the State's Heavy runner.
const minHeavyDHBits = 2048

// The DH_check flags Node reports as verifyError.
const (
	dhCheckPNotPrime       = 0x01
	dhCheckPNotSafePrime   = 0x02
	dhNotSuitableGenerator = 0x08
	dhModulusTooSmall      = 0x80
	dhModulusTooLarge      = 0x100
	dhMinBits              = 512
	dhPrimeRounds          = 2
	dhSieveLimit           = 1 << 16
	dhWindow               = 1 << 14
)

// modpGroups are the MODP groups of RFC 2409 and RFC 3526 by Node's
// names: n bits and the k of p = 2^n - 2^(n-64) - 1 + 2^64 * (floor(2^(n-130) pi) + k).
var modpGroups = map[string]struct{ bits, k int }{
	"modp1": {768, 149686}, "modp2": {1024, 129093}, "modp5": {1536, 741804},
	"modp14": {2048, 124476}, "modp15": {3072, 1690314}, "modp16": {4096, 240904},
	"modp17": {6144, 929484}, "modp18": {8192, 4743158},
}

var (
	modpOnce   sync.Once
	modpPrimes map[string]*big.Int
)

// piFixed returns floor(pi * 2^prec), from Machin's formula
// pi = 16 atan(1/5) - 4 atan(1/239), with guard bits.
func piFixed(prec uint) *big.Int {
	const guard = 32
	one := new(big.Int).Lsh(big.NewInt(1), prec+guard)
	atanInv := func(x int64) *big.Int {
		// atan(1/x) = sum (-1)^k / ((2k+1) x^(2k+1))
		sum := new(big.Int)
		xx := big.NewInt(x * x)
		term := new(big.Int).Div(one, big.NewInt(x))
		for k := int64(0); term.Sign() != 0; k++ {
			t := new(big.Int).Div(term, big.NewInt(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, t)
			} else {
				sum.Sub(sum, t)
			}
			term.Div(term, xx)
		}
		return sum
	}
	pi := new(big.Int).Mul(atanInv(5), big.NewInt(16))
	pi.Sub(pi, new(big.Int).Mul(atanInv(239), big.NewInt(4)))
	return pi.Rsh(pi, guard)
}

func modpPrime(name string) *big.Int {
	modpOnce.Do(func() {
		pi := piFixed(8192)
		modpPrimes = map[string]*big.Int{}
		for n, g := range modpGroups {
			bits := uint(g.bits)
			p := new(big.Int).Lsh(big.NewInt(1), bits)
			p.Sub(p, new(big.Int).Lsh(big.NewInt(1), bits-64))
			p.Sub(p, big.NewInt(1))
			// floor(2^(n-130) pi) from pi * 2^8192.
			f := new(big.Int).Rsh(pi, 8192-(bits-130))
			f.Add(f, big.NewInt(int64(g.k)))
			p.Add(p, f.Lsh(f, 64))
			modpPrimes[n] = p
		}
	})
	return modpPrimes[name]
}

// isModpPrime reports whether p is one of the named groups' primes,
// which OpenSSL's DH_check accepts without testing.
func isModpPrime(p *big.Int) bool {
	for n := range modpGroups {
		if modpPrime(n).Cmp(p) == 0 {
			return true
		}
	}
	return false
}

// dhCheck is OpenSSL 3's DH_check for parameters without q.
func dhCheck(p, g *big.Int, stop *atomic.Bool) int {
	flags := 0
	bits := p.BitLen()
	if bits < dhMinBits {
		flags |= dhModulusTooSmall
	}
	if bits > maxDHBits {
		return flags | dhModulusTooLarge
	}
	if isModpPrime(p) {
		return flags
	}
	pm1 := new(big.Int).Sub(p, big.NewInt(1))
	if g.Cmp(big.NewInt(1)) <= 0 || g.Cmp(pm1) >= 0 {
		flags |= dhNotSuitableGenerator
	}
	if stop != nil && stop.Load() {
		return flags
	}
	if !p.ProbablyPrime(dhPrimeRounds) {
		return flags | dhCheckPNotPrime
	}
	if !new(big.Int).Rsh(pm1, 1).ProbablyPrime(dhPrimeRounds) {
		flags |= dhCheckPNotSafePrime
	}
	return flags
}

// smallPrimes are the odd primes below dhSieveLimit.
var smallPrimes = func() []uint64 {
	var ps []uint64
	composite := make([]bool, dhSieveLimit)
	for i := 3; i < dhSieveLimit; i += 2 {
		if composite[i] {
			continue
		}
		ps = append(ps, uint64(i))
		for j := i * i; j < dhSieveLimit; j += 2 * i {
			composite[j] = true
		}
	}
	return ps
}()

// genSafePrime returns a safe prime p of the given size (p = 2q + 1, q
// prime) with OpenSSL's congruences for the generator (p = 23 mod 24 for
// 2, 59 mod 60 for 5, 11 mod 12 otherwise), so that g generates the
// subgroup of order q. From a random start it tries p, p + add, p + 2 add,
// ... in windows: a sieve of the small primes first strikes out the
// candidates where p or q has a small factor. It returns nil when stop is
// set.
func genSafePrime(bits int, gen int64, stop *atomic.Bool) *big.Int {
	add, rem := int64(12), int64(11)
	switch gen {
	case 2:
		add, rem = 24, 23
	case 5:
		add, rem = 60, 59
	}
	bigAdd := big.NewInt(add)
	// inv[i] is add's inverse modulo smallPrimes[i] (0 when s divides
	// add: then every candidate has the same residue).
	inv := make([]uint64, len(smallPrimes))
	for i, sp := range smallPrimes {
		if uint64(add)%sp != 0 {
			inv[i] = new(big.Int).ModInverse(bigAdd, new(big.Int).SetUint64(sp)).Uint64()
		}
	}
	bad := make([]bool, dhWindow)
	r := new(big.Int)
	for {
		if stop != nil && stop.Load() {
			return nil
		}
		p, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
		if err != nil {
			return nil
		}
		// The top two bits set, as OpenSSL, then p = rem (mod add).
		p.SetBit(p, bits-1, 1)
		p.SetBit(p, bits-2, 1)
		p.Sub(p, r.Mod(p, bigAdd)).Add(p, big.NewInt(rem))
		clear(bad)
		for i, sp := range smallPrimes {
			res := r.Mod(p, new(big.Int).SetUint64(sp)).Uint64()
			if inv[i] == 0 {
				// s divides add (3, or 5 for the generator 5): every
				// candidate has the residue of rem, which is neither 0
				// nor 1.
				continue
			}
			// p + k add = 0 (mod s): p has the factor s; = 1: q has.
			for _, target := range [2]uint64{0, 1} {
				for k := (target + sp - res) % sp * inv[i] % sp; k < dhWindow; k += sp {
					bad[k] = true
				}
			}
		}
		cand := new(big.Int)
		for k := 0; k < dhWindow; k++ {
			if bad[k] {
				continue
			}
			if stop != nil && stop.Load() {
				return nil
			}
			cand.Mul(bigAdd, big.NewInt(int64(k))).Add(cand, p)
			if cand.BitLen() != bits {
				break
			}
			// A Fermat test to base 2 drops almost every composite at
			// the cost of one exponentiation (ProbablyPrime always adds a
			// Lucas test, several times dearer).
			q := new(big.Int).Rsh(cand, 1)
			if fermat2(q) && fermat2(cand) && q.ProbablyPrime(dhPrimeRounds) && cand.ProbablyPrime(dhPrimeRounds) {
				return cand
			}
		}
	}
}

// fermat2 reports whether 2^(n-1) = 1 (mod n), which every odd prime n
// passes.
func fermat2(n *big.Int) bool {
	e := new(big.Int).Sub(n, big.NewInt(1))
	return new(big.Int).Exp(big.NewInt(2), e, n).Cmp(big.NewInt(1)) == 0
}

// DHGroup returns the prime of the MODP group Node names name (modp1,
// modp2, modp5, modp14 to modp18).
func DHGroup(name string) ([]byte, error) {
	if _, ok := modpGroups[name]; !ok {
		return nil, newError("ERR_CRYPTO_UNKNOWN_DH_GROUP", "Unknown DH group")
	}
	return modpPrime(name).Bytes(), nil
}

// DHCheck returns OpenSSL's DH_check flags (Node's verifyError) of the
// prime and generator in operands 0 and 1.
func (s *State) DHCheck() (int, error) {
	p, g := new(big.Int).SetBytes(s.take(0)), new(big.Int).SetBytes(s.take(1))
	heavy := p.BitLen() >= minHeavyDHBits && p.BitLen() <= maxDHBits && !isModpPrime(p)
	var flags int
	if err := s.run(heavy, func(stop *atomic.Bool) error { flags = dhCheck(p, g, stop); return nil }); err != nil {
		return 0, err
	}
	return flags, nil
}

// DHGenPrime returns a new safe prime of bits bits (512 to 10000) suited
// to generator gen.
func (s *State) DHGenPrime(bits, gen int) ([]byte, error) {
	if bits < dhMinBits || bits > maxDHBits || gen < 2 {
		return nil, errno.EINVAL
	}
	var p *big.Int
	if err := s.run(true, func(stop *atomic.Bool) error {
		p = genSafePrime(bits, int64(gen), stop)
		if p == nil {
			return errno.ECANCELED
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return p.Bytes(), nil
}

// DHModExp returns base^exponent mod modulus (operands 0 to 2),
// unpadded; each is bounded to 10000 bits.
func (s *State) DHModExp() ([]byte, error) {
	b, e, m := new(big.Int).SetBytes(s.take(0)), new(big.Int).SetBytes(s.take(1)), new(big.Int).SetBytes(s.take(2))
	if m.BitLen() > maxDHBits || e.BitLen() > maxDHBits || b.BitLen() > maxDHBits || m.Sign() == 0 {
		return nil, newError("ERR_OSSL_DH_MODULUS_TOO_LARGE", "error:02800067:Diffie-Hellman routines::modulus too large")
	}
	var out *big.Int
	if err := s.run(m.BitLen() >= minHeavyDHBits, func(*atomic.Bool) error { out = new(big.Int).Exp(b, e, m); return nil }); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
