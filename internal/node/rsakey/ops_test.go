package rsakey

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/node/hostnode"
)

func digestOf(h crypto.Hash, msg []byte) []byte {
	d := h.New()
	d.Write(msg)
	return d.Sum(nil)
}

// hashNames are Node's names of the hashes the tests use.
var hashNames = map[crypto.Hash]string{
	crypto.MD5: "md5", crypto.SHA1: "sha1", crypto.SHA224: "sha224", crypto.SHA256: "sha256",
	crypto.SHA384: "sha384", crypto.SHA512: "sha512", crypto.SHA512_224: "sha512-224",
	crypto.SHA512_256: "sha512-256", crypto.SHA3_256: "sha3-256",
}

// TestSmallKeysHostUsesOurs makes keys under 1024 bits here and has host
// node (OpenSSL, which checks a key when it loads it) verify PKCS #1 v1.5
// signatures with every hash, PSS signatures with each salt length rule,
// and decrypt OAEP and raw privateEncrypt blocks made here.
func TestSmallKeysHostUsesOurs(t *testing.T) {
	msg := []byte("small rsa")
	var lines []string
	for _, bits := range []int{512, 513, 600, 767, 1023} {
		e := 65537
		if bits == 600 {
			e = 3
		}
		k, err := GenerateKey(rand.Reader, bits, e, nil)
		if err != nil {
			t.Fatalf("%d bits: %v", bits, err)
		}
		if k.N.BitLen() != bits {
			t.Fatalf("asked %d bits, got %d", bits, k.N.BitLen())
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		add := func(kind, hash string, salt int, out []byte) {
			lines = append(lines, fmt.Sprintf("%x %s %s %d %x", der, kind, hash, salt, out))
		}
		for h, name := range hashNames {
			sig, err := SignPKCS1v15(rand.Reader, k, h, digestOf(h, msg))
			if err == ErrDigestTooBig {
				continue // the host's refusal is checked in TestSmallKeyRefusals
			}
			if err != nil {
				t.Fatalf("%d bits %s: %v", bits, name, err)
			}
			add("pkcs1", name, 0, sig)
		}
		for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA256} {
			for _, salt := range []int{SaltLengthDigest, SaltLengthMax, 0, 5} {
				sig, err := SignPSS(rand.Reader, k, h, digestOf(h, msg), salt)
				if salt == SaltLengthDigest && err == ErrDataTooLarge && (bits+6)/8 < 2*h.Size()+2 {
					continue // as OpenSSL: no room for a salt as long as the digest
				}
				if err != nil {
					t.Fatalf("%d bits PSS %v salt %d: %v", bits, h, salt, err)
				}
				add("pss", hashNames[h], salt, sig)
			}
			ct, err := EncryptOAEP(h, rand.Reader, &k.PublicKey, msg, nil)
			if err == ErrDataTooLarge && (bits+7)/8 < 2*h.Size()+2+len(msg) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			add("oaep", hashNames[h], 0, ct)
		}
		raw, err := SignPKCS1v15(rand.Reader, k, 0, msg)
		if err != nil {
			t.Fatal(err)
		}
		add("private", "-", 0, raw)
	}
	out := hostnode.Run(t, `
const c = require('crypto');
for (const l of require('fs').readFileSync(0, 'utf8').trim().split('\n')) {
  const [derHex, kind, hash, saltS, outHex] = l.split(' ');
  const k = c.createPrivateKey({ key: Buffer.from(derHex, 'hex'), format: 'der', type: 'pkcs8' });
  const pub = c.createPublicKey(k), out = Buffer.from(outHex, 'hex'), msg = Buffer.from('small rsa');
  const salt = Number(saltS);
  let ok;
  if (kind === 'pkcs1') ok = c.verify(hash, msg, pub, out);
  else if (kind === 'pss') ok = c.verify(hash, msg, { key: pub, padding: c.constants.RSA_PKCS1_PSS_PADDING,
    saltLength: salt === -2 ? c.constants.RSA_PSS_SALTLEN_AUTO : salt }, out);
  else if (kind === 'oaep') ok = c.privateDecrypt({ key: k, oaepHash: hash }, out).equals(msg);
  else ok = c.publicDecrypt(pub, out).equals(msg);
  console.log(k.asymmetricKeyDetails.modulusLength, kind, hash, salt, ok);
}
`, strings.Join(lines, "\n"))
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != len(lines) {
		t.Fatalf("host node answered %d of %d lines:\n%s", len(got), len(lines), out)
	}
	for _, l := range got {
		if !strings.HasSuffix(l, " true") {
			t.Errorf("host node refuses: %s", l)
		}
	}
}

// TestSmallKeysOursUseHosts has host node make 512- and 700-bit keys,
// sign with PKCS #1 v1.5 and PSS and encrypt with OAEP and PKCS #1 v1.5,
// and checks each here, damaged copies failing.
func TestSmallKeysOursUseHosts(t *testing.T) {
	out := hostnode.Run(t, `
const c = require('crypto'), msg = Buffer.from('from the host');
for (const bits of [512, 700]) {
  const { privateKey: k, publicKey: pub } = c.generateKeyPairSync('rsa', { modulusLength: bits });
  const der = k.export({ format: 'der', type: 'pkcs8' }).toString('hex');
  const P = c.constants;
  const row = (...a) => console.log(der, ...a.map((x) => Buffer.isBuffer(x) ? x.toString('hex') : x));
  row('pkcs1', 'sha256', 0, c.sign('sha256', msg, k));
  row('pkcs1', 'sha1', 0, c.sign('sha1', msg, k));
  row('pss', 'sha1', -1, c.sign('sha1', msg, { key: k, padding: P.RSA_PKCS1_PSS_PADDING, saltLength: P.RSA_PSS_SALTLEN_DIGEST }));
  row('pss', 'sha256', -2, c.sign('sha256', msg, { key: k, padding: P.RSA_PKCS1_PSS_PADDING }));
  row('pss', 'sha1', 0, c.sign('sha1', msg, { key: k, padding: P.RSA_PKCS1_PSS_PADDING, saltLength: 0 }));
  row('oaep', 'sha1', 0, c.publicEncrypt(pub, msg));
  if (bits > 512) row('oaep', 'sha256', 0, c.publicEncrypt({ key: pub, oaepHash: 'sha256' }, msg));
}
`, "")
	msg := []byte("from the host")
	names := map[string]crypto.Hash{"sha1": crypto.SHA1, "sha256": crypto.SHA256}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		der, _ := hex.DecodeString(f[0])
		blob, _ := hex.DecodeString(f[4])
		var salt int
		fmt.Sscan(f[3], &salt)
		pk, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			t.Fatal(err)
		}
		k := pk.(*rsa.PrivateKey)
		h := names[f[2]]
		bad := bytes.Clone(blob)
		bad[len(bad)/2] ^= 0x10
		check := func(b []byte) error {
			switch f[1] {
			case "pkcs1":
				return VerifyPKCS1v15(&k.PublicKey, h, digestOf(h, msg), b)
			case "pss":
				return VerifyPSS(&k.PublicKey, h, digestOf(h, msg), b, salt)
			}
			pt, err := DecryptOAEP(h, rand.Reader, k, b, nil)
			if err == nil && !bytes.Equal(pt, msg) {
				return fmt.Errorf("decrypted %q", pt)
			}
			return err
		}
		if err := check(blob); err != nil {
			t.Errorf("%d bits %s %s salt %d: %v", k.N.BitLen(), f[1], f[2], salt, err)
		}
		if check(bad) == nil {
			t.Errorf("%d bits %s %s: a damaged block passed", k.N.BitLen(), f[1], f[2])
		}
		n++
	}
	if n != 13 {
		t.Fatalf("host node gave %d rows:\n%s", n, out)
	}
}

// TestSmallKeyRefusals: what does not fit fails with OpenSSL's reasons
// (the host's node agrees on the same cases), keys under MinBits are
// refused, and hostile blocks end in errors, never panics.
func TestSmallKeyRefusals(t *testing.T) {
	k, err := GenerateKey(rand.Reader, 512, 65537, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SignPKCS1v15(rand.Reader, k, crypto.SHA512, digestOf(crypto.SHA512, nil)); err != ErrDigestTooBig {
		t.Errorf("SHA-512 DigestInfo in 512 bits: %v", err)
	}
	if _, err := SignPSS(rand.Reader, k, crypto.SHA512, digestOf(crypto.SHA512, nil), SaltLengthMax); err != ErrDataTooLarge {
		t.Errorf("SHA-512 PSS in 512 bits: %v", err)
	}
	if _, err := EncryptOAEP(crypto.SHA512, rand.Reader, &k.PublicKey, []byte("x"), nil); err != ErrDataTooLarge {
		t.Errorf("OAEP SHA-512 in 512 bits: %v", err)
	}
	if _, err := EncryptOAEP(crypto.SHA1, rand.Reader, &k.PublicKey, make([]byte, 64-2*20-1), nil); err != ErrDataTooLarge {
		t.Errorf("OAEP one byte too long: %v", err)
	}
	if _, err := GenerateKey(rand.Reader, 511, 65537, nil); err != ErrTooShort {
		t.Errorf("511-bit generation: %v", err)
	}
	tiny := &rsa.PublicKey{N: big15(), E: 3}
	if _, err := Public(tiny, []byte{2}); err != ErrTooShort {
		t.Errorf("a 4-bit key: %v", err)
	}
	for _, block := range [][]byte{nil, {0}, bytes.Repeat([]byte{0xff}, 64), bytes.Repeat([]byte{0xff}, 65), make([]byte, 64)} {
		_ = VerifyPKCS1v15(&k.PublicKey, crypto.SHA256, digestOf(crypto.SHA256, nil), block)
		_ = VerifyPSS(&k.PublicKey, crypto.SHA256, digestOf(crypto.SHA256, nil), block, SaltLengthMax)
		if _, err := DecryptOAEP(crypto.SHA1, rand.Reader, k, block, nil); err == nil {
			t.Errorf("OAEP decrypted %x", block)
		}
	}
	out := hostnode.Run(t, `
const c = require('crypto');
const { privateKey: k, publicKey: pub } = c.generateKeyPairSync('rsa', { modulusLength: 512 });
for (const f of [() => c.sign('sha512', Buffer.alloc(1), k),
  () => c.sign('sha512', Buffer.alloc(1), { key: k, padding: c.constants.RSA_PKCS1_PSS_PADDING }),
  () => c.publicEncrypt({ key: pub, oaepHash: 'sha512' }, Buffer.alloc(1)),
  () => c.generateKeyPairSync('rsa', { modulusLength: 511 })]) {
  try { f(); console.log('ok') } catch (e) { console.log(e.message) }
}
`, "")
	want := "error:02000070:rsa routines::digest too big for rsa key\n" +
		"error:0200006E:rsa routines::data too large for key size\n" +
		"error:0200006E:rsa routines::data too large for key size\n" +
		"error:1C8000AB:Provider routines::key size too small\n"
	if string(out) != want {
		t.Errorf("host node says\n%s\nwant\n%s", out, want)
	}
}

// TestPSS0AgainstGo checks salt-less PSS on keys crypto/rsa signs for
// against its own verifier (which, with PSSSaltLengthAuto, reads the
// salt length from the signature): for moduli whose encoded message is
// one byte shorter than the key (bit lengths 8n+1) as well as the usual
// ones, and both ways: Go's salted signatures fail the strict salt-less
// check.
func TestPSS0AgainstGo(t *testing.T) {
	for _, bits := range []int{1024, 1025, 1031, 2048} {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []crypto.Hash{crypto.SHA256, crypto.SHA512} {
			digest := digestOf(h, []byte("message"))
			sig, err := SignPSS(rand.Reader, k, h, digest, 0)
			if err != nil {
				t.Fatalf("%d bits %v: %v", bits, h, err)
			}
			again, _ := SignPSS(rand.Reader, k, h, digest, 0)
			if !bytes.Equal(again, sig) {
				t.Errorf("%d bits %v: not deterministic", bits, h)
			}
			if err := rsa.VerifyPSS(&k.PublicKey, h, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}); err != nil {
				t.Errorf("%d bits %v: Go rejects the salt-less signature: %v", bits, h, err)
			}
			if err := VerifyPSS(&k.PublicKey, h, digest, sig, 0); err != nil {
				t.Errorf("%d bits %v: VerifyPSS rejects its own signature: %v", bits, h, err)
			}
			salted, err := rsa.SignPSS(rand.Reader, k, h, digest, &rsa.PSSOptions{SaltLength: 16})
			if err != nil {
				t.Fatal(err)
			}
			if VerifyPSS(&k.PublicKey, h, digest, salted, 0) == nil {
				t.Errorf("%d bits %v: a salted signature passed as salt-less", bits, h)
			}
			bad := bytes.Clone(sig)
			bad[len(bad)/2] ^= 1
			if VerifyPSS(&k.PublicKey, h, digest, bad, 0) == nil || VerifyPSS(&k.PublicKey, h, digest[1:], sig, 0) == nil || VerifyPSS(&k.PublicKey, h, digest, sig[1:], 0) == nil {
				t.Errorf("%d bits %v: a damaged signature or digest passed", bits, h)
			}
		}
	}
}

func big15() *big.Int { return big.NewInt(15) }

// FuzzSmallKeyOps hands hostile signatures, ciphertexts, digests and
// salt lengths to the operations on a 512- and a 1023-bit key: they end
// in an error or false, never a panic, and what they sign verifies.
func FuzzSmallKeyOps(f *testing.F) {
	keys := make([]*rsa.PrivateKey, 2)
	for i, bits := range []int{512, 1023} {
		k, err := GenerateKey(rand.Reader, bits, 65537, nil)
		if err != nil {
			f.Fatal(err)
		}
		keys[i] = k
	}
	f.Add([]byte{}, []byte{}, 0, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 64), make([]byte, 20), -1, uint8(1))
	f.Add(make([]byte, 128), make([]byte, 32), -2, uint8(3))
	f.Fuzz(func(t *testing.T, block, digest []byte, salt int, which uint8) {
		k := keys[which%2]
		hashes := []crypto.Hash{crypto.SHA1, crypto.SHA256, crypto.SHA512, 0}
		h := hashes[int(which/2)%len(hashes)]
		_ = VerifyPKCS1v15(&k.PublicKey, h, digest, block)
		if h != 0 {
			_ = VerifyPSS(&k.PublicKey, h, digest, block, salt)
			_, _ = DecryptOAEP(h, rand.Reader, k, block, digest)
			if ct, err := EncryptOAEP(h, rand.Reader, &k.PublicKey, block, nil); err == nil {
				if pt, err := DecryptOAEP(h, rand.Reader, k, ct, nil); err != nil || !bytes.Equal(pt, block) {
					t.Fatalf("OAEP round trip: %v", err)
				}
			}
			if sig, err := SignPSS(rand.Reader, k, h, digest, salt); err == nil {
				if err := VerifyPSS(&k.PublicKey, h, digest, sig, salt); err != nil {
					t.Fatalf("PSS salt %d: %v", salt, err)
				}
			}
		}
		if sig, err := SignPKCS1v15(rand.Reader, k, h, digest); err == nil {
			if err := VerifyPKCS1v15(&k.PublicKey, h, digest, sig); err != nil {
				t.Fatalf("PKCS #1 v1.5: %v", err)
			}
		}
		_, _ = Public(&k.PublicKey, block)
	})
}
