package rsakey

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/secexec/secexec/internal/node/hostnode"
)

// TestHostUsesOurKeys generates keys with several exponents and has the
// host's node (OpenSSL, which checks the key when it loads it) read them,
// verify a signature made here and decrypt an OAEP message made here.
func TestHostUsesOurKeys(t *testing.T) {
	msg := []byte("rsakey")
	h := sha256.Sum256(msg)
	var lines []string
	for _, c := range []struct{ bits, e int }{{1024, 3}, {1536, 17}, {2048, 65537}, {1025, 257}, {1024, MaxExponent}} {
		k, err := GenerateKey(rand.Reader, c.bits, c.e, nil)
		if err != nil {
			t.Fatalf("%d bits, e %d: %v", c.bits, c.e, err)
		}
		if k.N.BitLen() != c.bits || k.E != c.e {
			t.Fatalf("asked %d bits e %d, got %d bits e %d", c.bits, c.e, k.N.BitLen(), k.E)
		}
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, h[:])
		if err != nil {
			t.Fatal(err)
		}
		ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, &k.PublicKey, msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("%x %x %x", der, sig, ct))
	}
	out := hostnode.Run(t, `
const c = require('crypto');
for (const l of require('fs').readFileSync(0, 'utf8').trim().split('\n')) {
  const [der, sig, ct] = l.split(' ').map((h) => Buffer.from(h, 'hex'));
  const k = c.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const d = k.asymmetricKeyDetails;
  console.log(d.modulusLength, d.publicExponent.toString(), c.verify('sha256', Buffer.from('rsakey'), c.createPublicKey(k), sig),
    c.privateDecrypt({ key: k, oaepHash: 'sha256' }, ct).toString());
}
`, strings.Join(lines, "\n"))
	want := fmt.Sprintf("1024 3 true rsakey\n1536 17 true rsakey\n2048 65537 true rsakey\n1025 257 true rsakey\n1024 %d true rsakey\n", MaxExponent)
	if string(out) != want {
		t.Fatalf("host node says\n%s\nwant\n%s", out, want)
	}
}

// TestExponentRules: even, too small and too large exponents are refused
// before any work, and a stopped generation ends.
func TestExponentRules(t *testing.T) {
	for _, e := range []int{-3, 0, 1, 2, 4, 65536, MaxExponent + 2} {
		if _, err := GenerateKey(rand.Reader, 1024, e, nil); err != ErrExponent {
			t.Errorf("e %d: %v", e, err)
		}
	}
	stop := new(atomic.Bool)
	stop.Store(true)
	if _, err := GenerateKey(rand.Reader, 4096, 3, stop); err != ErrStopped {
		t.Fatalf("stopped: %v", err)
	}
}
