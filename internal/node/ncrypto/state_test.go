package ncrypto

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

func errorsAs[T error](err error, target *T) bool { return errors.As(err, target) }

// The state's slots and hashes are bounded, and a hash copy goes on
// independently of its original.
func TestStateBounds(t *testing.T) {
	s := NewState(nil)
	for _, i := range []int{-1, Operands} {
		if err := s.SetOperand(i, nil); !errors.Is(err, errno.EINVAL) {
			t.Errorf("SetOperand(%d): %v", i, err)
		}
	}
	for _, i := range []int{-1, Results} {
		if _, err := s.TakeResult(i); !errors.Is(err, errno.EINVAL) {
			t.Errorf("TakeResult(%d): %v", i, err)
		}
	}
	if _, err := s.NewHash("md4", nil, false); !errors.Is(err, errno.EINVAL) {
		t.Errorf("unknown digest: %v", err)
	}
	id, err := s.NewHash("sha256", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.HashUpdate(id, []byte("ab")); err != nil {
		t.Fatal(err)
	}
	cp, err := s.HashCopy(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.HashUpdate(cp, []byte("c")); err != nil {
		t.Fatal(err)
	}
	d1, _ := s.HashDigest(id)
	d2, _ := s.HashDigest(cp)
	if w1, w2 := sha256.Sum256([]byte("ab")), sha256.Sum256([]byte("abc")); !bytes.Equal(d1, w1[:]) || !bytes.Equal(d2, w2[:]) {
		t.Fatalf("digests %x %x", d1, d2)
	}
	if _, err := s.HashDigest(id); !errors.Is(err, errno.EINVAL) {
		t.Errorf("digest twice: %v", err)
	}
	for i := 0; i < MaxHashes; i++ {
		if _, err := s.NewHash("md5", nil, false); err != nil {
			t.Fatalf("hash %d: %v", i, err)
		}
	}
	if _, err := s.NewHash("md5", nil, false); !errors.Is(err, ErrTooManyHashes) {
		t.Fatalf("hash past the bound: %v", err)
	}
}

// The KDFs' guest-chosen costs are bounded before any work, and the
// large ones run on the State's Runner.
func TestKDFBounds(t *testing.T) {
	var ran atomic.Int32
	s := NewState(func(fn func(*atomic.Bool) error) error {
		ran.Add(1)
		return fn(new(atomic.Bool))
	})
	if _, err := s.PBKDF2(MaxPBKDF2Work+1, 32, "sha256"); !errors.Is(err, errno.EINVAL) {
		t.Errorf("pbkdf2 past the work bound: %v", err)
	}
	if _, err := s.PBKDF2(1, 32, "sha256"); err != nil || ran.Load() != 0 {
		t.Fatalf("cheap pbkdf2: %v, %d heavy runs", err, ran.Load())
	}
	if _, err := s.PBKDF2(minHeavyPBKDF2, 32, "sha256"); err != nil || ran.Load() != 1 {
		t.Fatalf("dear pbkdf2: %v, %d heavy runs", err, ran.Load())
	}
	var ce *Error
	for _, c := range []struct{ n, r, p, maxmem int }{
		{1 << 20, 8, 8, 1 << 40},  // N*r*p past the work bound
		{3, 1, 1, 1 << 20},        // N not a power of two
		{1 << 14, 8, 1, 1 << 20},  // past maxmem
		{1 << 22, 1, 1, 1 << 40},  // past the memory limit below
		{1 << 16, 1 << 15, 1, -1}, // negative maxmem
	} {
		_, err := s.Scrypt(c.n, c.r, c.p, c.maxmem, 16, 1<<28)
		if c.maxmem < 0 {
			if !errors.Is(err, errno.EINVAL) {
				t.Errorf("scrypt %+v: %v", c, err)
			}
			continue
		}
		if !errorsAs(err, &ce) || ce.Code != "ERR_CRYPTO_INVALID_SCRYPT_PARAMS" {
			t.Errorf("scrypt %+v: %v", c, err)
		}
	}
	if _, err := s.Scrypt(16, 1, 1, 1<<20, maxKDFOutput+1, 1<<28); !errorsAs(err, &ce) || ce.Code != "ERR_OUT_OF_RANGE" {
		t.Errorf("scrypt key length: %v", err)
	}
	if _, err := s.HKDF("sha256", 255*32+1); !errorsAs(err, &ce) || ce.Code != "ERR_CRYPTO_INVALID_KEYLEN" {
		t.Errorf("hkdf key length: %v", err)
	}
}
