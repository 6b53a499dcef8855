package cfrg

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/secexec/secexec/internal/node/hostnode"
)

// hostNode runs script under the machine's node (OpenSSL, the oracle).
var hostNode = hostnode.Run

// hostKeys is what the host's node makes for each curve.
type hostKeys struct {
	PKCS8, SPKI, Sig, Shared, PeerSPKI string // hex
	JWK                                map[string]string
}

const hostGen = `
const c = require('crypto');
const msg = Buffer.from('message from the host');
const out = {};
for (const t of ['ed448', 'x448']) {
  const { privateKey, publicKey } = c.generateKeyPairSync(t);
  const o = {
    PKCS8: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('hex'),
    SPKI: publicKey.export({ format: 'der', type: 'spki' }).toString('hex'),
    JWK: privateKey.export({ format: 'jwk' }),
  };
  if (t === 'ed448') o.Sig = c.sign(null, msg, privateKey).toString('hex');
  else {
    const peer = c.generateKeyPairSync('x448');
    o.PeerSPKI = peer.publicKey.export({ format: 'der', type: 'spki' }).toString('hex');
    o.Shared = c.diffieHellman({ privateKey, publicKey: peer.publicKey }).toString('hex');
  }
  out[t] = o;
}
console.log(JSON.stringify(out));
`

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func unb64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostNodeKeys reads keys that OpenSSL (through the host's node) made
// in PKCS #8, SPKI and JWK, checks that this package writes the very same
// bytes back, verifies the host's Ed448 signature and agrees on the host's
// X448 shared secret.
func TestHostNodeKeys(t *testing.T) {
	var keys map[string]hostKeys
	if err := json.Unmarshal(hostNode(t, hostGen, ""), &keys); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"ed448", "x448"} {
		h := keys[kind]
		priv, err := ParsePKCS8(unhex(t, h.PKCS8))
		if err != nil {
			t.Fatalf("%s pkcs8: %v", kind, err)
		}
		if k, p := Kind(priv); k != kind || !p {
			t.Fatalf("%s pkcs8 read as %s (private %v)", kind, k, p)
		}
		pub, err := ParseSPKI(unhex(t, h.SPKI))
		if err != nil {
			t.Fatalf("%s spki: %v", kind, err)
		}
		if der, err := MarshalPKCS8(priv); err != nil || hex.EncodeToString(der) != h.PKCS8 {
			t.Errorf("%s pkcs8 written as %x (%v), OpenSSL wrote %s", kind, der, err, h.PKCS8)
		}
		for _, k := range []any{pub, PublicOf(priv)} {
			if der, err := MarshalSPKI(k); err != nil || hex.EncodeToString(der) != h.SPKI {
				t.Errorf("%s spki written as %x (%v), OpenSSL wrote %s", kind, der, err, h.SPKI)
			}
		}
		crv, x, d := JWK(priv)
		if crv != h.JWK["crv"] || !bytes.Equal(x, unb64(t, h.JWK["x"])) || !bytes.Equal(d, unb64(t, h.JWK["d"])) {
			t.Errorf("%s jwk differs from the host's %v", kind, h.JWK)
		}
		fromJWK, err := FromJWK(h.JWK["crv"], unb64(t, h.JWK["x"]), unb64(t, h.JWK["d"]), true)
		if err != nil {
			t.Fatalf("%s jwk: %v", kind, err)
		}
		if der, _ := MarshalPKCS8(fromJWK); hex.EncodeToString(der) != h.PKCS8 {
			t.Errorf("%s jwk gave another key", kind)
		}
	}
	msg := []byte("message from the host")
	pub, _ := ParseSPKI(unhex(t, keys["ed448"].SPKI))
	if !pub.(*Ed448PublicKey).Verify(msg, unhex(t, keys["ed448"].Sig)) {
		t.Error("the host's Ed448 signature does not verify")
	}
	if pub.(*Ed448PublicKey).Verify(append([]byte("x"), msg...), unhex(t, keys["ed448"].Sig)) {
		t.Error("the host's Ed448 signature verifies another message")
	}
	xk, _ := ParsePKCS8(unhex(t, keys["x448"].PKCS8))
	peer, err := ParseSPKI(unhex(t, keys["x448"].PeerSPKI))
	if err != nil {
		t.Fatal(err)
	}
	s, err := xk.(*X448PrivateKey).Shared(peer.(*X448PublicKey))
	if err != nil || hex.EncodeToString(s) != keys["x448"].Shared {
		t.Errorf("X448 shared secret %x (%v), the host's %s", s, err, keys["x448"].Shared)
	}
}

// TestHostNodeReadsOurs hands keys and a signature made here to the host's
// node, which must read them, verify the signature and compute the same
// X448 secret.
func TestHostNodeReadsOurs(t *testing.T) {
	ek, err := GenerateEd448(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a, err := GenerateX448(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateX448(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("message from Go")
	shared, err := a.Shared(b.Public())
	if err != nil {
		t.Fatal(err)
	}
	hx := func(b []byte, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(b)
	}
	crv, x, d := JWK(ek)
	in, _ := json.Marshal(map[string]string{
		"edPKCS8": hx(MarshalPKCS8(ek)), "edSPKI": hx(MarshalSPKI(ek.Public())),
		"sig": hex.EncodeToString(ek.Sign(msg)), "msg": hex.EncodeToString(msg),
		"jwkCrv": crv, "jwkX": base64.RawURLEncoding.EncodeToString(x), "jwkD": base64.RawURLEncoding.EncodeToString(d),
		"xPKCS8": hx(MarshalPKCS8(a)), "peerSPKI": hx(MarshalSPKI(b.Public())), "shared": hex.EncodeToString(shared),
	})
	out := hostNode(t, `
const c = require('crypto');
const i = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const h = (s) => Buffer.from(s, 'hex');
const priv = c.createPrivateKey({ key: h(i.edPKCS8), format: 'der', type: 'pkcs8' });
const pub = c.createPublicKey({ key: h(i.edSPKI), format: 'der', type: 'spki' });
const jwk = c.createPrivateKey({ key: { kty: 'OKP', crv: i.jwkCrv, x: i.jwkX, d: i.jwkD }, format: 'jwk' });
const xk = c.createPrivateKey({ key: h(i.xPKCS8), format: 'der', type: 'pkcs8' });
const peer = c.createPublicKey({ key: h(i.peerSPKI), format: 'der', type: 'spki' });
console.log(JSON.stringify({
  types: [priv.asymmetricKeyType, pub.asymmetricKeyType, xk.asymmetricKeyType, peer.asymmetricKeyType],
  verify: c.verify(null, h(i.msg), pub, h(i.sig)),
  samePub: c.createPublicKey(priv).export({ format: 'der', type: 'spki' }).toString('hex') === i.edSPKI,
  jwkSame: jwk.export({ format: 'der', type: 'pkcs8' }).toString('hex') === i.edPKCS8,
  shared: c.diffieHellman({ privateKey: xk, publicKey: peer }).toString('hex') === i.shared,
}));
`, string(in))
	want := `{"types":["ed448","ed448","x448","x448"],"verify":true,"samePub":true,"jwkSame":true,"shared":true}` + "\n"
	if string(out) != want {
		t.Fatalf("host node says %s, want %s", out, want)
	}
}

// TestDecodeHostile: truncations, wrong lengths, trailing bytes, OIDs of
// other curves, algorithm parameters, and a JWK whose d is not x's key.
func TestDecodeHostile(t *testing.T) {
	ek, _ := GenerateEd448(rand.Reader)
	der, _ := MarshalPKCS8(ek)
	spkiDER, _ := MarshalSPKI(ek.Public())
	for i := range der {
		if _, err := ParsePKCS8(der[:i]); err == nil {
			t.Fatalf("pkcs8 truncated to %d bytes parsed", i)
		}
	}
	for i := range spkiDER {
		if _, err := ParseSPKI(spkiDER[:i]); err == nil {
			t.Fatalf("spki truncated to %d bytes parsed", i)
		}
	}
	if _, err := ParsePKCS8(append(der, 0)); err == nil {
		t.Fatal("pkcs8 with a trailing byte parsed")
	}
	// Ed25519's OID (1.3.101.112) is not ours.
	ed25519 := bytes.Replace(der, []byte{0x2b, 0x65, 0x71}, []byte{0x2b, 0x65, 0x70}, 1)
	if _, err := ParsePKCS8(ed25519); err == nil {
		t.Fatal("an Ed25519 OID parsed as Ed448")
	}
	other, _ := GenerateEd448(rand.Reader)
	_, x, _ := JWK(ek)
	_, _, d := JWK(other)
	if _, err := FromJWK("Ed448", x, d, true); err == nil {
		t.Fatal("a JWK whose d does not match x imported")
	}
	if _, err := FromJWK("Ed448", x[:56], nil, false); err == nil {
		t.Fatal("a short Ed448 x imported")
	}
	if _, err := FromJWK("X448", make([]byte, 57), nil, false); err == nil {
		t.Fatal("a long X448 x imported")
	}
	if _, err := FromJWK("Ed25519", x, nil, false); err == nil {
		t.Fatal("another curve imported")
	}
	// X448's all-zero public key is of low order: no shared secret.
	a, _ := GenerateX448(rand.Reader)
	zero, _ := NewX448Public(make([]byte, X448KeySize))
	if _, err := a.Shared(zero); err != ErrLowOrder {
		t.Fatalf("low-order point: %v", err)
	}
}

// FuzzDecode feeds arbitrary bytes to the PKCS #8, SPKI and JWK readers:
// they fail cleanly or give a key that writes back to the same bytes
// (DER) and reads back to the same key. The seeds in testdata/fuzz are
// OpenSSL's encodings of each curve and a few malformed ones.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		switch sel % 4 {
		case 0:
			k, err := ParsePKCS8(data)
			if err != nil {
				return
			}
			der, err := MarshalPKCS8(k)
			if err != nil {
				t.Fatalf("parsed key does not marshal: %v", err)
			}
			back, err := ParsePKCS8(der)
			if err != nil {
				t.Fatalf("marshalled key does not parse: %v", err)
			}
			if again, _ := MarshalPKCS8(back); !bytes.Equal(again, der) {
				t.Fatal("pkcs8 is not stable")
			}
		case 1:
			k, err := ParseSPKI(data)
			if err != nil {
				return
			}
			der, err := MarshalSPKI(k)
			if err != nil {
				t.Fatalf("parsed key does not marshal: %v", err)
			}
			if !bytes.Equal(der, data) {
				// SPKI has one encoding: a parsed one is canonical.
				t.Fatalf("spki %x written back as %x", data, der)
			}
		default:
			crv := []string{"Ed448", "X448"}[sel%4-2]
			n := map[string]int{"Ed448": Ed448KeySize, "X448": X448KeySize}[crv]
			if len(data) < n {
				return
			}
			k, err := FromJWK(crv, data[:n], data[n:], len(data) > n)
			if err != nil {
				return
			}
			c, x, d := JWK(k)
			if c != crv || !bytes.Equal(x, data[:n]) || (len(data) > n && !bytes.Equal(d, data[n:])) {
				t.Fatal("jwk does not read back")
			}
		}
	})
}
