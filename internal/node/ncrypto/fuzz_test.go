package ncrypto

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"slices"
	"testing"

	"github.com/secexec/secexec/internal/node/cfrg"
	"github.com/secexec/secexec/kernel/errno"
)

// keySeeds are valid keys in every encoding the importer reads.
func keySeeds(f *testing.F) {
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		f.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	_, dk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	ed448k, err := cfrg.GenerateEd448(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	x448k, err := cfrg.GenerateX448(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	for _, k := range []any{rk, ek, dk, ed448k, x448k} {
		der, err := marshalPKCS8(k)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(der, uint8(1))
		f.Add(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), uint8(0))
		pub, err := marshalSPKI(publicOf(k))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pub, uint8(4))
		f.Add(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), uint8(3))
		j, err := exportJWK(k)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(j, uint8(2))
	}
	f.Add(x509.MarshalPKCS1PrivateKey(rk), uint8(5))
	sec1, err := x509.MarshalECPrivateKey(ek)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sec1, uint8(6))
	f.Add([]byte(`{"kty":"OKP","crv":"X25519","x":"AA","d":"AA"}`), uint8(2))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nMC4CAQA\n-----END PRIVATE KEY-----\n"), uint8(0))
}

// FuzzKeyImport feeds arbitrary bytes to the PEM, DER and JWK importers:
// they must fail cleanly or yield a key that exports in every format.
func FuzzKeyImport(f *testing.F) {
	keySeeds(f)
	modes := []struct{ kind, format, typ string }{
		{"private", "pem", ""}, {"private", "der", "pkcs8"}, {"private", "jwk", ""},
		{"public", "pem", ""}, {"public", "der", "spki"}, {"private", "der", "pkcs1"},
		{"private", "der", "sec1"}, {"public", "der", "pkcs1"}, {"public", "jwk", ""}, {"public", "der", "pkcs8"},
	}
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		m := modes[int(sel)%len(modes)]
		k, err := importKey(m.kind, m.format, m.typ, data, &keyPassphrase{given: true, pass: []byte("pw"), work: func(cost int64, fn func()) error {
			// As the bridge bounds it, but tighter: a fuzzer's iteration
			// counts must not stall it.
			if cost > 1<<12 {
				return errno.EINVAL
			}
			fn()
			return nil
		}})
		if err != nil {
			return
		}
		if _, err := infoOf(k); err != nil {
			t.Fatalf("imported key without info: %v", err)
		}
		der, err := canonical(k)
		if err != nil {
			t.Fatalf("imported key does not marshal: %v", err)
		}
		back, err := importKey(m.kind, "der", map[bool]string{true: "pkcs8", false: "spki"}[isPrivate(k)], der, nil)
		if err != nil {
			t.Fatalf("canonical DER does not import: %v", err)
		}
		again, err := canonical(back)
		if err != nil || !bytes.Equal(again, der) {
			t.Fatalf("canonical DER is not stable: %v", err)
		}
		for _, typ := range []string{"pkcs8", "spki", "pkcs1", "sec1"} {
			for _, format := range []string{"pem", "der"} {
				_, _ = exportKey(k, format, typ, "", nil)
				_, _ = exportKey(k, format, typ, "aes-128-cbc", []byte("pw"))
			}
		}
		if _, err := exportKey(k, "jwk", "", "", nil); err != nil {
			t.Fatalf("jwk export: %v", err)
		}
	})
}

// FuzzCipherRun runs every cipher from arbitrary states, keys and input:
// a malformed state (JavaScript holds it) is an error, never a panic.
func FuzzCipherRun(f *testing.F) {
	f.Add(make([]byte, CipherStateLen), make([]byte, 32), []byte("data"), uint8(0))
	f.Add(append(make([]byte, CipherStateLen), 1, 2, 3), make([]byte, 16), make([]byte, 33), uint8(3))
	st := make([]byte, CipherStateLen)
	st[32], st[33], st[34], st[35], st[36], st[37] = 16, 0xff, 0xff, 0xff, 0xff, 63
	f.Add(st, make([]byte, 32), make([]byte, 200), uint8(7))
	names := make([]string, 0, len(cipherSpecs))
	for n := range cipherSpecs {
		names = append(names, n)
	}
	slices.Sort(names)
	f.Fuzz(func(t *testing.T, state, key, in []byte, sel uint8) {
		name := names[int(sel)%len(names)]
		spec := cipherSpecs[name]
		if len(key) != spec.keyLen {
			k := make([]byte, spec.keyLen)
			copy(k, key)
			key = k
		}
		for _, dec := range []bool{false, true} {
			c, err := unmarshalCipher(spec, dec, state)
			if err != nil {
				continue
			}
			out, err := c.run(key, in, sel&1 == 0, sel&2 == 0)
			if err == nil {
				switch spec.mode {
				case "cbc", "ecb":
				case "wrap", "wrappad":
					// Each update wraps its whole input: 8 bytes of
					// integrity value more (RFC 3394), the input padded
					// to 8 first with padding (RFC 5649); unwrapping takes
					// them off. An empty update makes nothing, as OpenSSL's.
					want := (len(in)+7)/8*8 + 8
					if len(in) == 0 {
						want = 0
					}
					if !dec && len(out) != want {
						t.Fatalf("%s: wrapped %d bytes into %d, want %d", name, len(in), len(out), want)
					}
					if dec && len(in) > 0 && len(out) > len(in)-8 {
						t.Fatalf("%s: unwrapped %d bytes into %d", name, len(in), len(out))
					}
				default:
					if len(out) != len(in) {
						t.Fatalf("%s: stream output %d for input %d", name, len(out), len(in))
					}
				}
			}
			if len(c.marshal()) > CipherStateLen+16 {
				t.Fatalf("%s: state grew to %d", name, len(c.marshal()))
			}
		}
		if isAEAD(spec.mode) {
			_, _ = aeadTag(spec, key, in, state, key)
		}
		_, _ = initCipher(spec, sel&4 == 0, key, in)
	})
}

// PKCS #1 v1.5 encryption (built here: Go deprecates it) pads as RFC 8017
// says: 00 02, at least eight non-zero random bytes, 00, the message.
func TestRSAPKCS1Encrypt(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 50, 117} {
		msg := bytes.Repeat([]byte{0xab}, n)
		ct, err := rsaCrypt("publicEncrypt", &k.PublicKey, rsaPKCS1Padding, "", nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		em := new(big.Int).Exp(new(big.Int).SetBytes(ct), k.D, k.N).FillBytes(make([]byte, k.Size()))
		sep := bytes.IndexByte(em[2:], 0) + 2
		if em[0] != 0 || em[1] != 2 || sep < 10 || !bytes.Equal(em[sep+1:], msg) {
			t.Fatalf("n=%d: bad encoding %x", n, em)
		}
	}
	if _, err := rsaCrypt("publicEncrypt", &k.PublicKey, rsaPKCS1Padding, "", nil, make([]byte, 118)); err == nil {
		t.Fatal("a message of k-10 bytes was encrypted")
	}
}
