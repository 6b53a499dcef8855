package keyenc

import (
	"bytes"
	"crypto/rand"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/node/hostnode"
)

// hostNode runs script under the machine's node (OpenSSL, the oracle).
var hostNode = hostnode.Run

var cipherNames = []string{"aes-128-cbc", "aes-192-cbc", "aes-256-cbc", "des-ede3-cbc"}

// TestHostEncryptedKeys decrypts what OpenSSL encrypted (PKCS #8 with
// each cipher, in PEM and DER, and legacy PEM for SEC 1 and PKCS #1) and
// refuses a wrong passphrase.
func TestHostEncryptedKeys(t *testing.T) {
	out := hostNode(t, `
const c = require('crypto');
const ec = c.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const rsa = c.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
const r = { pkcs8: ec.export({ format: 'der', type: 'pkcs8' }).toString('hex'),
  sec1: ec.export({ format: 'der', type: 'sec1' }).toString('hex'),
  pkcs1: rsa.export({ format: 'der', type: 'pkcs1' }).toString('hex'), enc: [] };
for (const cipher of `+"['aes-128-cbc', 'aes-192-cbc', 'aes-256-cbc', 'des-ede3-cbc']"+`) {
  const passphrase = 'pass ' + cipher;
  r.enc.push({ cipher, passphrase, type: 'pkcs8', pem: ec.export({ format: 'pem', type: 'pkcs8', cipher, passphrase }) });
  r.enc.push({ cipher, passphrase, type: 'pkcs8', der: ec.export({ format: 'der', type: 'pkcs8', cipher, passphrase }).toString('hex') });
  r.enc.push({ cipher, passphrase, type: 'sec1', pem: ec.export({ format: 'pem', type: 'sec1', cipher, passphrase }) });
  r.enc.push({ cipher, passphrase, type: 'pkcs1', pem: rsa.export({ format: 'pem', type: 'pkcs1', cipher, passphrase }) });
}
console.log(JSON.stringify(r));
`, "")
	var host struct {
		PKCS8, Sec1, PKCS1 string
		Enc                []struct{ Cipher, Passphrase, Type, PEM, DER string }
	}
	if err := json.Unmarshal(out, &host); err != nil {
		t.Fatal(err)
	}
	if len(host.Enc) != 16 {
		t.Fatalf("%d encrypted keys from the host", len(host.Enc))
	}
	for _, e := range host.Enc {
		want := map[string]string{"pkcs8": host.PKCS8, "sec1": host.Sec1, "pkcs1": host.PKCS1}[e.Type]
		decrypt := func(pass []byte) ([]byte, error) {
			if e.DER != "" {
				der, _ := hex.DecodeString(e.DER)
				if !IsEncryptedPKCS8(der) {
					t.Fatalf("%s %s DER not recognised", e.Cipher, e.Type)
				}
				d, err := ParsePKCS8(der)
				if err != nil {
					return nil, err
				}
				if d.Cost() != DefaultIterations {
					t.Errorf("%s: cost %d", e.Cipher, d.Cost())
				}
				return d.Decrypt(pass)
			}
			b, _ := pem.Decode([]byte(e.PEM))
			if b == nil {
				t.Fatalf("%s %s: no PEM", e.Cipher, e.Type)
			}
			if e.Type == "pkcs8" {
				if b.Type != "ENCRYPTED PRIVATE KEY" {
					t.Fatalf("PEM type %s", b.Type)
				}
				d, err := ParsePKCS8(b.Bytes)
				if err != nil {
					return nil, err
				}
				return d.Decrypt(pass)
			}
			if !IsEncryptedPEM(b) {
				t.Fatalf("%s %s: not an encrypted PEM", e.Cipher, e.Type)
			}
			return DecryptPEM(b, pass)
		}
		plain, err := decrypt([]byte(e.Passphrase))
		if err != nil || hex.EncodeToString(plain) != want {
			t.Errorf("%s %s (der %v): %v", e.Cipher, e.Type, e.DER != "", err)
		}
		// A wrong passphrase fails, or (when the padding happens to look
		// right, as it does for OpenSSL one time in 256) gives other bytes.
		plain, err = decrypt([]byte("wrong"))
		if err == nil && hex.EncodeToString(plain) == want {
			t.Errorf("%s %s: a wrong passphrase decrypts", e.Cipher, e.Type)
		}
		if err != nil && !errors.Is(err, ErrBadDecrypt) {
			t.Errorf("%s %s: wrong passphrase gives %v", e.Cipher, e.Type, err)
		}
	}
}

// TestHostReadsOurs hands keys encrypted here to the host's node.
func TestHostReadsOurs(t *testing.T) {
	out := hostNode(t, `
const c = require('crypto');
const ec = c.generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
console.log(JSON.stringify({ pkcs8: ec.export({ format: 'der', type: 'pkcs8' }).toString('hex'), sec1: ec.export({ format: 'der', type: 'sec1' }).toString('hex') }));
`, "")
	var plain struct{ PKCS8, Sec1 string }
	if err := json.Unmarshal(out, &plain); err != nil {
		t.Fatal(err)
	}
	p8, _ := hex.DecodeString(plain.PKCS8)
	s1, _ := hex.DecodeString(plain.Sec1)
	type enc struct{ Cipher, Pass, PKCS8, Sec1 string }
	var keys []enc
	for _, c := range cipherNames {
		pass := "pass for " + c
		der, err := EncryptPKCS8(rand.Reader, p8, c, []byte(pass))
		if err != nil {
			t.Fatal(err)
		}
		b, err := EncryptPEM(rand.Reader, "EC PRIVATE KEY", s1, strings.ToUpper(c), []byte(pass))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, enc{c, pass, hex.EncodeToString(der), string(pem.EncodeToMemory(b))})
	}
	in, _ := json.Marshal(keys)
	got := hostNode(t, `
const c = require('crypto');
const keys = JSON.parse(require('fs').readFileSync(0, 'utf8'));
for (const k of keys) {
  const a = c.createPrivateKey({ key: Buffer.from(k.PKCS8, 'hex'), format: 'der', type: 'pkcs8', passphrase: k.Pass });
  const b = c.createPrivateKey({ key: k.Sec1, passphrase: k.Pass });
  console.log(k.Cipher, a.export({ format: 'der', type: 'pkcs8' }).toString('hex'), b.export({ format: 'der', type: 'sec1' }).toString('hex'));
}
`, string(in))
	var want strings.Builder
	for _, c := range cipherNames {
		want.WriteString(c + " " + plain.PKCS8 + " " + plain.Sec1 + "\n")
	}
	if string(got) != want.String() {
		t.Fatalf("host read\n%s\nwant\n%s", got, want.String())
	}
}

// TestHostile: unknown ciphers, damaged and truncated encryptions, other
// schemes, and the cost a guest's iteration count asks for.
func TestHostile(t *testing.T) {
	if _, err := EncryptPKCS8(rand.Reader, []byte{1}, "aes-128-gcm", nil); err != ErrUnknownCipher {
		t.Fatalf("gcm: %v", err)
	}
	der, err := EncryptPKCS8(rand.Reader, bytes.Repeat([]byte{7}, 40), "aes-256-cbc", []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range der {
		if _, err := ParsePKCS8(der[:i]); err == nil {
			t.Fatalf("truncated to %d parsed", i)
		}
	}
	d, err := ParsePKCS8(der)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := d.Decrypt([]byte("pw")); err != nil || !bytes.Equal(plain, bytes.Repeat([]byte{7}, 40)) {
		t.Fatalf("round trip: %v", err)
	}
	// 2^31-1 iterations: parsed, and its cost (two SHA-1 blocks for an
	// AES-256 key) is there to be refused.
	if d, err := ParsePKCS8(pbes2(t, 1<<31-1, ciphers[2].oid, make([]byte, 16))); err != nil || d.Cost() != 2*(1<<31-1) {
		t.Fatalf("huge iterations: %v", err)
	}
	if _, err := ParsePKCS8(pbes2(t, 0, ciphers[2].oid, make([]byte, 16))); err != ErrMalformed {
		t.Fatalf("zero iterations: %v", err)
	}
	if _, err := ParsePKCS8(pbes2(t, 1, ciphers[2].oid, make([]byte, 8))); err != ErrMalformed {
		t.Fatalf("short IV: %v", err)
	}
	if _, err := ParsePKCS8(pbes2(t, 1, asn1.ObjectIdentifier{1, 2, 3}, make([]byte, 16))); err != ErrUnsupported {
		t.Fatalf("unknown cipher: %v", err)
	}
	b := &pem.Block{Type: "EC PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00"}, Bytes: make([]byte, 16)}
	if _, err := DecryptPEM(b, nil); err != ErrMalformed {
		t.Fatalf("short IV: %v", err)
	}
	b.Headers["DEK-Info"] = "RC2-CBC,0000000000000000"
	if _, err := DecryptPEM(b, nil); err != ErrUnsupported {
		t.Fatalf("rc2: %v", err)
	}
	b.Headers["DEK-Info"] = "AES-128-CBC,00000000000000000000000000000000"
	b.Bytes = make([]byte, 15)
	if _, err := DecryptPEM(b, nil); err != ErrBadDecrypt {
		t.Fatalf("partial block: %v", err)
	}
}

// pbes2 encodes an EncryptedPrivateKeyInfo with the given iteration
// count, cipher and IV over 32 bytes of data.
func pbes2(t *testing.T, iter int, cipherOID asn1.ObjectIdentifier, iv []byte) []byte {
	t.Helper()
	must := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kdf := must(asn1.Marshal(pbkdf2Params{Salt: make([]byte, 8), Iterations: iter}))
	params := must(asn1.Marshal(pbes2Params{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdf}},
		Scheme: pkix.AlgorithmIdentifier{Algorithm: cipherOID, Parameters: asn1.RawValue{FullBytes: must(asn1.Marshal(iv))}},
	}))
	return must(asn1.Marshal(encryptedPrivateKeyInfo{
		Algo:          pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: params}},
		EncryptedData: make([]byte, 32),
	}))
}

// FuzzDecrypt feeds arbitrary bytes to the PKCS #8 and PEM decrypters:
// they fail cleanly, and what they accept decrypts without a panic.
func FuzzDecrypt(f *testing.F) {
	der, err := EncryptPKCS8(rand.Reader, bytes.Repeat([]byte{1}, 50), "aes-128-cbc", []byte("pw"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(der)
	b, err := EncryptPEM(rand.Reader, "EC PRIVATE KEY", bytes.Repeat([]byte{2}, 50), "des-ede3-cbc", []byte("pw"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pem.EncodeToMemory(b))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, err := ParsePKCS8(data); err == nil && d.Cost() <= 1<<12 {
			_, _ = d.Decrypt([]byte("pw"))
		}
		if b, _ := pem.Decode(data); b != nil && IsEncryptedPEM(b) {
			_, _ = DecryptPEM(b, []byte("pw"))
		}
	})
}
