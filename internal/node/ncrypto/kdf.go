package ncrypto

import (
	"crypto/hkdf"
	"crypto/pbkdf2"
	"fmt"
	"hash"
	"sync/atomic"

	"golang.org/x/crypto/scrypt"

	"github.com/secexec/secexec/kernel/errno"
)

// MaxPBKDF2Work bounds one PBKDF2 computation's iterations times output
// blocks (about 20 s of one core), pbkdf2() and decrypting a key alike;
// from minHeavyPBKDF2 on it runs on the State's Heavy runner.
const (
	MaxPBKDF2Work  = 1 << 25
	minHeavyPBKDF2 = 1 << 16
)

// maxKDFOutput bounds the key length of scrypt and hkdf.
const maxKDFOutput = 1 << 20

// MaxScryptWork bounds scrypt's cost N*r*p (the strongest settings in
// common use are about 2^23; this is seconds of CPU): Go's scrypt cannot
// be stopped, so a computation abandoned by a killed process finishes in
// the background, and its length must be bounded. Below minHeavyScrypt
// it runs in the calling goroutine.
const (
	MaxScryptWork  = 1 << 25
	minHeavyScrypt = 1 << 16
)

// MaxScryptMem bounds the memory of one scrypt computation, whatever
// maxmem the guest passes; the caller's memory limit applies too
// (scrypt's memory is host memory the guest chose).
const MaxScryptMem = 1 << 30

var errScryptMem = newError("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params: error:030000AC:digital envelope routines::memory limit exceeded")

// SetKDFInput stashes pbkdf2's password (i = 0) or salt (i = 1); s keeps
// a copy.
func (s *State) SetKDFInput(i int, b []byte) error {
	if i < 0 || i > 1 {
		return errno.EINVAL
	}
	s.kdf[i] = append([]byte(nil), b...)
	return nil
}

// PBKDF2 derives keyLen bytes from the password and salt of SetKDFInput
// with iter iterations of HMAC-alg.
func (s *State) PBKDF2(iter, keyLen int, alg string) ([]byte, error) {
	if iter < 1 || keyLen < 0 || keyLen > 1<<20 {
		return nil, errno.EINVAL
	}
	newH, ok := newHashFunc(alg)
	if !ok {
		return nil, errno.EINVAL
	}
	// The work (iterations times output blocks), which the guest
	// chooses, is bounded: a large one runs on Heavy, which gives way to
	// kill and the limits.
	blocks := (keyLen + newH().Size() - 1) / newH().Size()
	work := int64(iter) * int64(max(blocks, 1))
	if iter > 10_000_000 || work > MaxPBKDF2Work {
		return nil, errno.EINVAL
	}
	pw, salt := string(s.kdf[0]), s.kdf[1]
	s.kdf = [2][]byte{}
	var out []byte
	err := s.run(work >= minHeavyPBKDF2, func(*atomic.Bool) error {
		var kerr error
		out, kerr = pbkdf2.Key(newH, pw, salt, iter, keyLen)
		return kerr
	})
	if err != nil {
		if errno.Of(err) != errno.EIO {
			return nil, err
		}
		return nil, errno.EINVAL
	}
	return out, nil
}

// scryptMem is OpenSSL's estimate of scrypt's memory (the B and V
// arrays), or -1 when it overflows.
func scryptMem(n, r, p uint64) int64 {
	const lim = 1 << 62
	if r == 0 || p == 0 || n > lim/128/r || p > lim/128/r {
		return -1
	}
	b := 128 * r * p
	v := 128 * r * (n + 2)
	if b+v > lim {
		return -1
	}
	return int64(b + v)
}

// checkScrypt validates N, r, p against maxmem and the sandbox's bounds.
func checkScrypt(n, r, p, maxmem, limit int64) error {
	if n < 2 || n&(n-1) != 0 || r < 1 || p < 1 || r*p >= 1<<30 {
		return newError("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params")
	}
	// N must be below 2^(128 r / 8).
	if 16*r < 63 && n >= int64(1)<<(16*r) {
		return newError("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params")
	}
	mem := scryptMem(uint64(n), uint64(r), uint64(p))
	if mem < 0 || mem > maxmem || mem > limit {
		return errScryptMem
	}
	if n > MaxScryptWork || r*p > MaxScryptWork || n*r*p > MaxScryptWork {
		return newError("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", fmt.Sprintf("Invalid scrypt params: N*r*p above %d is not supported in this sandbox", MaxScryptWork))
	}
	return nil
}

// Scrypt derives keyLen bytes from the password and salt in operands 0
// and 1 with cost n, block size r and parallelism p, in at most maxmem
// bytes and at most memLimit (the caller's memory left, capped at
// MaxScryptMem).
func (s *State) Scrypt(n, r, p, maxmem, keyLen int, memLimit int64) ([]byte, error) {
	pw, salt := s.take(0), s.take(1)
	if n < 0 || r < 0 || p < 0 || maxmem < 0 || keyLen < 0 {
		return nil, errno.EINVAL
	}
	if keyLen > maxKDFOutput {
		return nil, newError("ERR_OUT_OF_RANGE", fmt.Sprintf("scrypt keys longer than %d bytes are not supported in this sandbox", maxKDFOutput))
	}
	if err := checkScrypt(int64(n), int64(r), int64(p), int64(maxmem), min(MaxScryptMem, memLimit)); err != nil {
		return nil, err
	}
	var out []byte
	err := s.run(n*r*p >= minHeavyScrypt, func(*atomic.Bool) error {
		var kerr error
		out, kerr = scrypt.Key(pw, salt, n, r, p, keyLen)
		return kerr
	})
	if err != nil {
		if errno.Of(err) != 0 {
			return nil, err
		}
		return nil, newError("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params")
	}
	return out, nil
}

// HKDF derives keyLen bytes with HKDF-alg from the key, salt and info in
// operands 0 to 2.
func (s *State) HKDF(alg string, keyLen int) ([]byte, error) {
	ikm, salt, info := s.take(0), s.take(1), s.take(2)
	if keyLen < 0 {
		return nil, errno.EINVAL
	}
	newH, ok := newHashFunc(alg)
	if !ok {
		return nil, newError("ERR_CRYPTO_INVALID_DIGEST", "Invalid digest: "+alg)
	}
	if keyLen > 255*newH().Size() || keyLen > maxKDFOutput {
		return nil, newError("ERR_CRYPTO_INVALID_KEYLEN", "")
	}
	if keyLen == 0 {
		return nil, nil
	}
	out, err := hkdf.Key(func() hash.Hash { return newH() }, ikm, salt, string(info), keyLen)
	if err != nil {
		return nil, newError("ERR_CRYPTO_INVALID_KEYLEN", "")
	}
	return out, nil
}
