package js

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"testing"
)

// TestPSS0AgainstGo checks salt-less PSS against crypto/rsa's own
// verifier (which, with PSSSaltLengthAuto, reads the salt length from the
// signature): for moduli whose encoded message is one byte shorter than
// the key (bit lengths 8n+1) as well as the usual ones, and both ways:
// Go's salted signatures must fail the strict salt-less check.
func TestPSS0AgainstGo(t *testing.T) {
	for _, bits := range []int{1024, 1025, 1031, 2048} {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []crypto.Hash{crypto.SHA256, crypto.SHA512} {
			var digest []byte
			if h == crypto.SHA256 {
				d := sha256.Sum256([]byte("message"))
				digest = d[:]
			} else {
				d := sha512.Sum512([]byte("message"))
				digest = d[:]
			}
			sig, err := signPSS0(k, h, digest)
			if err != nil {
				t.Fatalf("%d bits %v: %v", bits, h, err)
			}
			again, _ := signPSS0(k, h, digest)
			if string(again) != string(sig) {
				t.Errorf("%d bits %v: not deterministic", bits, h)
			}
			if err := rsa.VerifyPSS(&k.PublicKey, h, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}); err != nil {
				t.Errorf("%d bits %v: Go rejects the salt-less signature: %v", bits, h, err)
			}
			if !verifyPSS0(&k.PublicKey, h, digest, sig) {
				t.Errorf("%d bits %v: verifyPSS0 rejects its own signature", bits, h)
			}
			salted, err := rsa.SignPSS(rand.Reader, k, h, digest, &rsa.PSSOptions{SaltLength: 16})
			if err != nil {
				t.Fatal(err)
			}
			if verifyPSS0(&k.PublicKey, h, digest, salted) {
				t.Errorf("%d bits %v: a salted signature passed as salt-less", bits, h)
			}
			bad := append([]byte(nil), sig...)
			bad[len(bad)/2] ^= 1
			if verifyPSS0(&k.PublicKey, h, digest, bad) || verifyPSS0(&k.PublicKey, h, digest[1:], sig) || verifyPSS0(&k.PublicKey, h, digest, sig[1:]) {
				t.Errorf("%d bits %v: a damaged signature or digest passed", bits, h)
			}
		}
	}
}
