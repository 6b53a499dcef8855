// Package rsakey generates and uses RSA keys as OpenSSL does for Node:
// with any public exponent OpenSSL allows (an odd e of at least 3), where
// crypto/rsa's GenerateKey makes only e = 65537, and with moduli from
// MinBits up, where crypto/rsa refuses keys under GoMinBits. It works on
// numbers only (no V8).
package rsakey

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"math/big"
	"sync/atomic"
)

// ErrExponent reports a public exponent that is not odd, at least 3 and
// below 2^31 (crypto/rsa's bound for using the key).
var ErrExponent = errors.New("rsakey: public exponent out of range")

// ErrStopped reports a generation abandoned through its stop flag.
var ErrStopped = errors.New("rsakey: stopped")

// MaxExponent is the largest public exponent crypto/rsa uses.
const MaxExponent = 1<<31 - 1

// GenerateKey makes an RSA key of bits bits with public exponent e. For
// e = 65537 it is crypto/rsa's GenerateKey; otherwise two primes from
// crypto/rand.Prime (top two bits set, so that their product has exactly
// bits bits) with p-1 and q-1 prime to e, which is also the way to keys
// shorter than GoMinBits. It checks stop (when not nil) between primes
// so that an abandoned generation ends early.
func GenerateKey(random io.Reader, bits, e int, stop *atomic.Bool) (*rsa.PrivateKey, error) {
	if bits < MinBits {
		return nil, ErrTooShort
	}
	if e == 65537 && bits >= GoMinBits {
		return rsa.GenerateKey(random, bits)
	}
	if e < 3 || e%2 == 0 || e > MaxExponent {
		return nil, ErrExponent
	}
	E := big.NewInt(int64(e))
	one := big.NewInt(1)
	prime := func(n int) (*big.Int, error) {
		for {
			if stop != nil && stop.Load() {
				return nil, ErrStopped
			}
			p, err := rand.Prime(random, n)
			if err != nil {
				return nil, err
			}
			if new(big.Int).GCD(nil, nil, E, new(big.Int).Sub(p, one)).Cmp(one) == 0 {
				return p, nil
			}
		}
	}
	for {
		p, err := prime(bits - bits/2)
		if err != nil {
			return nil, err
		}
		q, err := prime(bits / 2)
		if err != nil {
			return nil, err
		}
		n := new(big.Int).Mul(p, q)
		if p.Cmp(q) == 0 || n.BitLen() != bits {
			continue
		}
		phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
		d := new(big.Int).ModInverse(E, phi)
		if d == nil {
			continue
		}
		k := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: e}, D: d, Primes: []*big.Int{p, q}}
		if err := k.Validate(); err != nil {
			return nil, err
		}
		k.Precompute()
		return k, nil
	}
}
