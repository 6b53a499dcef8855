package js

import (
	"crypto/hkdf"
	"fmt"
	"hash"
	"sync/atomic"

	v8 "github.com/tommie/v8go"
	"golang.org/x/crypto/scrypt"

	"github.com/secexec/secexec/kernel/errno"
)

// maxKDFOutput bounds the key length of scrypt and hkdf.
const maxKDFOutput = 1 << 20

// maxScryptWork bounds scrypt's cost N*r*p (the strongest settings in
// common use are about 2^23; this is seconds of CPU): Go's scrypt cannot
// be stopped, so a computation abandoned by a killed process finishes in
// the background, and its length must be bounded. Below minHeavyScrypt
// it runs in the bridge call itself.
const (
	maxScryptWork  = 1 << 25
	minHeavyScrypt = 1 << 16
)

// maxScryptMem bounds the memory of one scrypt computation, whatever
// maxmem the guest passes; the process's external-memory limit applies
// too (scrypt's memory is host memory the guest chose).
const maxScryptMem = 1 << 30

var errScryptMem = cryptoErr("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params: error:030000AC:digital envelope routines::memory limit exceeded")

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
		return cryptoErr("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params")
	}
	// N must be below 2^(128 r / 8).
	if 16*r < 63 && n >= int64(1)<<(16*r) {
		return cryptoErr("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params")
	}
	mem := scryptMem(uint64(n), uint64(r), uint64(p))
	if mem < 0 || mem > maxmem || mem > limit {
		return errScryptMem
	}
	if n > maxScryptWork || r*p > maxScryptWork || n*r*p > maxScryptWork {
		return cryptoErr("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", fmt.Sprintf("Invalid scrypt params: N*r*p above %d is not supported in this sandbox", maxScryptWork))
	}
	return nil
}

func init() {
	register("scrypt", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		var v [5]int
		for i := range v {
			x, err := argInt(args, i)
			if err != nil || x < 0 {
				return nil, errno.EINVAL
			}
			v[i] = x
		}
		n, br, p, maxmem, keyLen := v[0], v[1], v[2], v[3], v[4]
		cs := r.cs()
		pw, salt := cs.take(0), cs.take(1)
		if keyLen > maxKDFOutput {
			return nil, cryptoErr("ERR_OUT_OF_RANGE", fmt.Sprintf("scrypt keys longer than %d bytes are not supported in this sandbox", maxKDFOutput))
		}
		limit := min(int64(maxScryptMem), int64(r.extLimit))
		if err := checkScrypt(int64(n), int64(br), int64(p), int64(maxmem), limit); err != nil {
			return nil, err
		}
		var out []byte
		run := func(*atomic.Bool) error {
			var kerr error
			out, kerr = scrypt.Key(pw, salt, n, br, p, keyLen)
			return kerr
		}
		var err error
		if n*br*p < minHeavyScrypt {
			err = run(nil)
		} else {
			err = r.heavy(run)
		}
		if err != nil {
			if errno.Of(err) != 0 {
				return nil, err
			}
			return nil, cryptoErr("ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params")
		}
		return r.bytesResult(out)
	})
	register("hkdf", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		alg, err1 := argString(args, 0)
		keyLen, err2 := argInt(args, 1)
		cs := r.cs()
		ikm, salt, info := cs.take(0), cs.take(1), cs.take(2)
		if err1 != nil || err2 != nil || keyLen < 0 {
			return nil, errno.EINVAL
		}
		newH, ok := newHashFunc(alg)
		if !ok {
			return nil, cryptoErr("ERR_CRYPTO_INVALID_DIGEST", "Invalid digest: "+alg)
		}
		if keyLen > 255*newH().Size() || keyLen > maxKDFOutput {
			return nil, cryptoErr("ERR_CRYPTO_INVALID_KEYLEN", "")
		}
		if keyLen == 0 {
			return r.bytesResult(nil)
		}
		out, err := hkdf.Key(func() hash.Hash { return newH() }, ikm, salt, string(info), keyLen)
		if err != nil {
			return nil, cryptoErr("ERR_CRYPTO_INVALID_KEYLEN", "")
		}
		return r.bytesResult(out)
	})
}
