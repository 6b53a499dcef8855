package ncrypto

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync/atomic"

	"github.com/secexec/secexec/internal/node/cfrg"
	"github.com/secexec/secexec/internal/node/keyenc"
	"github.com/secexec/secexec/internal/node/rsakey"
	"github.com/secexec/secexec/kernel/errno"
)

// Bounds on guest keys: RSA operations cost the cube of the modulus
// size, and parsing a private key validates it.
const (
	maxRSABits       = 16384
	maxRSAGenBits    = 8192
	minRSABits       = rsakey.MinBits // OpenSSL's bound for generation
	maxPrivateKeyDER = 16 << 10
	maxKeyInput      = 1 << 20
	maxKeyCache      = 64
)

// keyCache keeps parsed keys by their canonical DER (what a KeyObject
// holds in JavaScript), so repeated signatures do not re-validate them.
type keyCache struct{ m map[string]any }

func (c *keyCache) put(der []byte, k any) {
	if len(c.m) >= maxKeyCache {
		clear(c.m)
	}
	c.m[string(der)] = k
}

// KeyInfo is what JavaScript learns of a key besides its bytes (as
// JSON, Node's asymmetricKeyDetails with the key's type and kind).
type KeyInfo struct {
	Type  string `json:"type"` // private or public
	Kind  string `json:"akt"`  // rsa, ec, ed25519, x25519, ed448, x448
	Bits  int    `json:"modulusLength,omitempty"`
	Exp   int    `json:"publicExponent,omitempty"`
	Curve string `json:"namedCurve,omitempty"`
}

// curves are the EC curves supported, with Node's name, the JWK name and
// every name Node accepts for them.
var curves = [...]struct {
	curve      func() elliptic.Curve
	node, jwk  string
	otherNames []string
}{
	{elliptic.P256, "prime256v1", "P-256", []string{"secp256r1"}},
	{elliptic.P384, "secp384r1", "P-384", nil},
	{elliptic.P521, "secp521r1", "P-521", nil},
}

// curveName is Node's name of c ("" when unsupported).
func curveName(c elliptic.Curve) string {
	for _, k := range curves {
		if k.curve() == c {
			return k.node
		}
	}
	return ""
}

// curveByName accepts Node's names for the curves we support.
func curveByName(n string) elliptic.Curve {
	for _, k := range curves {
		if n == k.node || n == k.jwk || slices.Contains(k.otherNames, n) {
			return k.curve()
		}
	}
	return nil
}

// jwkCurveName is the JWK "crv" of c ("" when unsupported).
func jwkCurveName(c elliptic.Curve) string {
	for _, k := range curves {
		if k.curve() == c {
			return k.jwk
		}
	}
	return ""
}

func infoOf(k any) (KeyInfo, error) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		i, err := infoOf(&k.PublicKey)
		i.Type = "private"
		return i, err
	case *rsa.PublicKey:
		if k.N.BitLen() > maxRSABits {
			return KeyInfo{}, newError("ERR_OUT_OF_RANGE", fmt.Sprintf("RSA keys longer than %d bits are not supported in this sandbox", maxRSABits))
		}
		return KeyInfo{Type: "public", Kind: "rsa", Bits: k.N.BitLen(), Exp: k.E}, nil
	case *ecdsa.PrivateKey:
		i, err := infoOf(&k.PublicKey)
		i.Type = "private"
		return i, err
	case *ecdsa.PublicKey:
		n := curveName(k.Curve)
		if n == "" {
			return KeyInfo{}, errOSSLUnsupported
		}
		return KeyInfo{Type: "public", Kind: "ec", Curve: n}, nil
	case ed25519.PrivateKey:
		return KeyInfo{Type: "private", Kind: "ed25519"}, nil
	case ed25519.PublicKey:
		return KeyInfo{Type: "public", Kind: "ed25519"}, nil
	case *ecdh.PrivateKey:
		if k.Curve() != ecdh.X25519() {
			return KeyInfo{}, errOSSLUnsupported
		}
		return KeyInfo{Type: "private", Kind: "x25519"}, nil
	case *ecdh.PublicKey:
		if k.Curve() != ecdh.X25519() {
			return KeyInfo{}, errOSSLUnsupported
		}
		return KeyInfo{Type: "public", Kind: "x25519"}, nil
	}
	if kind, priv := cfrg.Kind(k); kind != "" {
		return KeyInfo{Type: map[bool]string{true: "private", false: "public"}[priv], Kind: kind}, nil
	}
	return KeyInfo{}, errOSSLUnsupported
}

func publicOf(k any) any {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return &k.PublicKey
	case *ecdsa.PrivateKey:
		return &k.PublicKey
	case ed25519.PrivateKey:
		return k.Public()
	case *ecdh.PrivateKey:
		return k.PublicKey()
	}
	return cfrg.PublicOf(k)
}

func isPrivate(k any) bool {
	switch k.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey, *ecdh.PrivateKey:
		return true
	}
	_, priv := cfrg.Kind(k)
	return priv
}

// canonical returns the DER a KeyObject holds: PKCS #8 for private keys,
// SPKI for public keys.
func canonical(k any) ([]byte, error) {
	if isPrivate(k) {
		return marshalPKCS8(k)
	}
	return marshalSPKI(k)
}

// marshalPKCS8 and marshalSPKI add Ed448 and X448 (package cfrg) to the
// standard library's encoders; parsePKCS8 and parseSPKI do the same for
// its decoders.
func marshalPKCS8(k any) ([]byte, error) {
	if cfrg.IsKey(k) {
		return cfrg.MarshalPKCS8(k)
	}
	return x509.MarshalPKCS8PrivateKey(k)
}

func marshalSPKI(k any) ([]byte, error) {
	if cfrg.IsKey(k) {
		return cfrg.MarshalSPKI(k)
	}
	return x509.MarshalPKIXPublicKey(k)
}

func parsePKCS8(der []byte) (any, error) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		if ck, cerr := cfrg.ParsePKCS8(der); cerr == nil {
			return ck, nil
		}
	}
	return k, err
}

func parseSPKI(der []byte) (any, error) {
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		if ck, cerr := cfrg.ParseSPKI(der); cerr == nil {
			return ck, nil
		}
	}
	return k, err
}

var (
	errASN1      = osslErr("0680007B", "asn1 encoding routines", "header too long", "ERR_OSSL_ASN1_HEADER_TOO_LONG")
	errASN1Field = osslErr("06800079", "asn1 encoding routines", "field missing", "ERR_OSSL_ASN1_FIELD_MISSING")
	// errNoPassphrase is OpenSSL 3's report of an encrypted PEM key read
	// without a passphrase (it asked a callback, which had none).
	errNoPassphrase = osslErr("07880109", "common libcrypto routines", "interrupted or cancelled", "ERR_OSSL_CRYPTO_INTERRUPTED_OR_CANCELLED")
	// errMissingPassphrase is Node's for encrypted DER without one.
	errMissingPassphrase = newError("ERR_MISSING_PASSPHRASE", "Passphrase required for encrypted key")
)

// keyPassphrase is the passphrase given with key material (if any) and
// how to run the work of decrypting with it.
type keyPassphrase struct {
	given bool
	pass  []byte
	// work runs fn, PBKDF2's work of cost (iterations times blocks), or
	// refuses it; nil runs it in place (tests).
	work func(cost int64, fn func()) error
}

// decryptPKCS8 decrypts an EncryptedPrivateKeyInfo with pp.
func (pp *keyPassphrase) decryptPKCS8(der []byte) ([]byte, error) {
	d, err := keyenc.ParsePKCS8(der)
	if err != nil {
		return nil, errOSSLUnsupported
	}
	var plain []byte
	var derr error
	run := func() { plain, derr = d.Decrypt(pp.pass) }
	if pp.work == nil {
		run()
	} else if err := pp.work(d.Cost(), run); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, errBadDecrypt
	}
	return plain, nil
}

func parsePrivateDER(typ string, der []byte, pp *keyPassphrase) (any, error) {
	if len(der) > maxPrivateKeyDER {
		return nil, newError("ERR_OUT_OF_RANGE", fmt.Sprintf("private keys larger than %d bytes are not supported in this sandbox", maxPrivateKeyDER))
	}
	var k any
	var err error
	switch typ {
	case "pkcs8":
		k, err = parsePKCS8(der)
		if err != nil && keyenc.IsEncryptedPKCS8(der) {
			if pp == nil || !pp.given {
				return nil, errMissingPassphrase
			}
			plain, derr := pp.decryptPKCS8(der)
			if derr != nil {
				return nil, derr
			}
			return parsePrivateDER("pkcs8", plain, nil)
		}
	case "pkcs1":
		k, err = x509.ParsePKCS1PrivateKey(der)
	case "sec1":
		k, err = x509.ParseECPrivateKey(der)
	default:
		return nil, errno.EINVAL
	}
	if err != nil {
		if _, perr := x509.ParsePKCS1PublicKey(der); typ == "pkcs1" && perr == nil {
			// A public key where a private one was wanted: OpenSSL's
			// decoders find no decoder for it.
			return nil, errOSSLUnsupported
		}
		return nil, asn1Err(der)
	}
	return k, nil
}

// asn1Err approximates OpenSSL's report of a DER key it cannot read: a
// SEQUENCE that lacks fields, or no SEQUENCE at all.
func asn1Err(der []byte) error {
	if len(der) >= 2 && der[0] == 0x30 && int(der[1]) == len(der)-2 {
		return errASN1Field
	}
	return errASN1
}

func parsePublicDER(typ string, der []byte, pp *keyPassphrase) (any, error) {
	var k any
	var err error
	switch typ {
	case "spki":
		k, err = parseSPKI(der)
	case "pkcs1":
		// A PKCS #1 private key serves as public key material too: the
		// DER tells them apart, as OpenSSL does.
		k, err = x509.ParsePKCS1PublicKey(der)
		if err != nil {
			if p, perr := parsePrivateDER("pkcs1", der, nil); perr == nil {
				return publicOf(p), nil
			}
		}
	case "pkcs8", "sec1":
		p, err := parsePrivateDER(typ, der, pp)
		if err != nil {
			return nil, err
		}
		return publicOf(p), nil
	default:
		return nil, errno.EINVAL
	}
	if err != nil {
		return nil, asn1Err(der)
	}
	return k, nil
}

// parsePEM reads the first PEM block that holds a key of the wanted kind;
// text around and between blocks is skipped, as OpenSSL does.
func parsePEM(kind string, data []byte, pp *keyPassphrase) (any, error) {
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errOSSLUnsupported
		}
		body := b.Bytes
		if b.Type != "CERTIFICATE" && (keyenc.IsEncryptedPEM(b) || b.Type == "ENCRYPTED PRIVATE KEY") {
			if pp == nil || !pp.given {
				return nil, errNoPassphrase
			}
			var err error
			if b.Type == "ENCRYPTED PRIVATE KEY" {
				body, err = pp.decryptPKCS8(b.Bytes)
			} else if body, err = keyenc.DecryptPEM(b, pp.pass); errors.Is(err, keyenc.ErrBadDecrypt) {
				err = errBadDecrypt
			} else if err != nil {
				err = errOSSLUnsupported
			}
			if err != nil {
				return nil, err
			}
		}
		var k any
		var err error
		switch b.Type {
		case "PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			k, err = parsePrivateDER("pkcs8", body, nil)
		case "RSA PRIVATE KEY":
			k, err = parsePrivateDER("pkcs1", body, nil)
		case "EC PRIVATE KEY":
			k, err = parsePrivateDER("sec1", body, nil)
		case "PUBLIC KEY":
			if kind == "private" {
				return nil, errOSSLUnsupported
			}
			k, err = parsePublicDER("spki", body, nil)
		case "RSA PUBLIC KEY":
			if kind == "private" {
				return nil, errOSSLUnsupported
			}
			k, err = parsePublicDER("pkcs1", body, nil)
		case "CERTIFICATE":
			if kind == "private" {
				return nil, errOSSLUnsupported
			}
			c, cerr := x509.ParseCertificate(b.Bytes)
			if cerr != nil {
				return nil, errOSSLUnsupported
			}
			k = c.PublicKey
		default:
			continue
		}
		if err != nil {
			return nil, errOSSLUnsupported
		}
		if kind == "public" {
			k = publicOf(k)
		}
		return k, nil
	}
}

// jwk is a JSON Web Key as Node reads and writes them.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	D   string `json:"d"`
	P   string `json:"p"`
	Q   string `json:"q"`
	DP  string `json:"dp"`
	DQ  string `json:"dq"`
	QI  string `json:"qi"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func b64u(s string) ([]byte, error) {
	// Node accepts padded and unpadded base64url (and plain base64).
	b, err := base64.RawURLEncoding.DecodeString(trimPad(s))
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(trimPad(s))
	}
	return b, err
}

func trimPad(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

func b64uInt(s string) (*big.Int, error) {
	b, err := b64u(s)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(b), nil
}

var errJWKData = newError("ERR_CRYPTO_INVALID_JWK", "Invalid JWK data")

// parseJWK reads a JWK (JSON text) as a private or public key.
func parseJWK(kind string, data []byte) (any, error) {
	var j jwk
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, errJWKData
	}
	priv := kind == "private"
	switch j.Kty {
	case "RSA":
		bad := newError("ERR_CRYPTO_INVALID_JWK", "Invalid JWK RSA key")
		n, err1 := b64uInt(j.N)
		e, err2 := b64uInt(j.E)
		if err1 != nil || err2 != nil || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || n.BitLen() > maxRSABits || n.Sign() == 0 {
			return nil, bad
		}
		pub := rsa.PublicKey{N: n, E: int(e.Int64())}
		if !priv {
			return &pub, nil
		}
		var vals [6]*big.Int
		for i, s := range []string{j.D, j.P, j.Q, j.DP, j.DQ, j.QI} {
			v, err := b64uInt(s)
			if err != nil || v.Sign() == 0 {
				return nil, bad
			}
			vals[i] = v
		}
		k := &rsa.PrivateKey{PublicKey: pub, D: vals[0], Primes: []*big.Int{vals[1], vals[2]},
			Precomputed: rsa.PrecomputedValues{Dp: vals[3], Dq: vals[4], Qinv: vals[5]}}
		if n.BitLen() < minRSABits {
			return nil, errRSATooShort
		}
		if err := k.Validate(); err != nil {
			return nil, bad
		}
		// Re-parse through PKCS #1 so the key is precomputed as Go wants.
		der := x509.MarshalPKCS1PrivateKey(k)
		pk, err := x509.ParsePKCS1PrivateKey(der)
		if err != nil {
			return nil, bad
		}
		return pk, nil
	case "EC":
		bad := newError("ERR_CRYPTO_INVALID_JWK", "Invalid JWK EC key")
		c := curveByName(j.Crv)
		if c == nil || j.Crv[0] != 'P' {
			return nil, newError("ERR_CRYPTO_INVALID_CURVE", "Invalid EC curve name")
		}
		size := (c.Params().BitSize + 7) / 8
		x, err1 := b64u(j.X)
		y, err2 := b64u(j.Y)
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, bad
		}
		pt := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(c, pt)
		if err != nil {
			return nil, bad
		}
		if !priv {
			return pub, nil
		}
		d, err := b64u(j.D)
		if err != nil || len(d) != size {
			return nil, bad
		}
		k, err := ecdsa.ParseRawPrivateKey(c, d)
		if err != nil || !k.PublicKey.Equal(pub) {
			return nil, bad
		}
		return k, nil
	case "OKP":
		x, err := b64u(j.X)
		if err != nil {
			return nil, errJWKData
		}
		switch j.Crv {
		case "Ed25519":
			if len(x) != ed25519.PublicKeySize {
				return nil, errJWKData
			}
			if !priv {
				return ed25519.PublicKey(x), nil
			}
			d, err := b64u(j.D)
			if err != nil || len(d) != ed25519.SeedSize {
				return nil, errJWKData
			}
			k := ed25519.NewKeyFromSeed(d)
			if !bytes.Equal(k.Public().(ed25519.PublicKey), x) {
				return nil, errJWKData
			}
			return k, nil
		case "X25519":
			pub, err := ecdh.X25519().NewPublicKey(x)
			if err != nil {
				return nil, errJWKData
			}
			if !priv {
				return pub, nil
			}
			d, err := b64u(j.D)
			if err != nil {
				return nil, errJWKData
			}
			k, err := ecdh.X25519().NewPrivateKey(d)
			if err != nil || !k.PublicKey().Equal(pub) {
				return nil, errJWKData
			}
			return k, nil
		case "Ed448", "X448":
			var d []byte
			if priv {
				if d, err = b64u(j.D); err != nil {
					return nil, errJWKData
				}
			}
			k, err := cfrg.FromJWK(j.Crv, x, d, priv)
			if err != nil {
				return nil, errJWKData
			}
			return k, nil
		}
		return nil, newError("ERR_CRYPTO_INVALID_JWK", "Unsupported JWK EC curve: "+j.Crv+".")
	}
	return nil, errJWKData
}

// errRSAExponent is OpenSSL's refusal of an even or too small exponent
// (Node gives it no code).
var errRSAExponent = osslErr("020000B2", "rsa routines", "pub exponent out of range", "")

var errRSATooShort = newError("ERR_OUT_OF_RANGE", fmt.Sprintf("RSA keys shorter than %d bits are not supported in this sandbox", minRSABits))

// errRSAGenTooShort is OpenSSL's refusal to generate a modulus under 512
// bits (Node gives it no code).
var errRSAGenTooShort = osslErr("1C8000AB", "Provider routines", "key size too small", "")

func b64e(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// exportJWK writes k as Node orders a JWK's members.
func exportJWK(k any) ([]byte, error) {
	switch k := k.(type) {
	case *rsa.PublicKey:
		return json.Marshal(struct {
			Kty string `json:"kty"`
			N   string `json:"n"`
			E   string `json:"e"`
		}{"RSA", b64e(k.N.Bytes()), b64e(big.NewInt(int64(k.E)).Bytes())})
	case *rsa.PrivateKey:
		if len(k.Primes) != 2 {
			return nil, errOSSLUnsupported
		}
		k.Precompute()
		return json.Marshal(struct {
			Kty string `json:"kty"`
			N   string `json:"n"`
			E   string `json:"e"`
			D   string `json:"d"`
			P   string `json:"p"`
			Q   string `json:"q"`
			DP  string `json:"dp"`
			DQ  string `json:"dq"`
			QI  string `json:"qi"`
		}{"RSA", b64e(k.N.Bytes()), b64e(big.NewInt(int64(k.E)).Bytes()), b64e(k.D.Bytes()),
			b64e(k.Primes[0].Bytes()), b64e(k.Primes[1].Bytes()), b64e(k.Precomputed.Dp.Bytes()),
			b64e(k.Precomputed.Dq.Bytes()), b64e(k.Precomputed.Qinv.Bytes())})
	case *ecdsa.PublicKey, *ecdsa.PrivateKey:
		var pub *ecdsa.PublicKey
		var d []byte
		if p, ok := k.(*ecdsa.PrivateKey); ok {
			pub = &p.PublicKey
			b, err := p.Bytes()
			if err != nil {
				return nil, errOSSLUnsupported
			}
			d = b
		} else {
			pub = k.(*ecdsa.PublicKey)
		}
		pt, err := pub.Bytes()
		if err != nil {
			return nil, errOSSLUnsupported
		}
		size := (len(pt) - 1) / 2
		return json.Marshal(struct {
			Kty string `json:"kty"`
			X   string `json:"x"`
			Y   string `json:"y"`
			Crv string `json:"crv"`
			D   string `json:"d,omitempty"`
		}{"EC", b64e(pt[1 : 1+size]), b64e(pt[1+size:]), jwkCurveName(pub.Curve), b64e(d)})
	case ed25519.PublicKey:
		return okpJWK("Ed25519", k, nil)
	case ed25519.PrivateKey:
		return okpJWK("Ed25519", k.Public().(ed25519.PublicKey), k.Seed())
	case *ecdh.PublicKey:
		return okpJWK("X25519", k.Bytes(), nil)
	case *ecdh.PrivateKey:
		return okpJWK("X25519", k.PublicKey().Bytes(), k.Bytes())
	}
	if crv, x, d := cfrg.JWK(k); crv != "" {
		return okpJWK(crv, x, d)
	}
	return nil, errOSSLUnsupported
}

func okpJWK(crv string, x, d []byte) ([]byte, error) {
	return json.Marshal(struct {
		Crv string `json:"crv"`
		D   string `json:"d,omitempty"`
		X   string `json:"x"`
		Kty string `json:"kty"`
	}{crv, b64e(d), b64e(x), "OKP"})
}

// exportKey encodes k as format (pem, der) and type (pkcs8, pkcs1, sec1,
// spki), encrypted with cipher and pass when cipher is not empty (PKCS #8
// encryption for pkcs8, legacy PEM encryption for the others);
// JavaScript has checked that the type suits the key and the encryption
// the format.
func exportKey(k any, format, typ, cipher string, pass []byte) ([]byte, error) {
	if format == "jwk" {
		return exportJWK(k)
	}
	var der []byte
	var label string
	var err error
	switch typ {
	case "pkcs8":
		label = "PRIVATE KEY"
		der, err = marshalPKCS8(k)
	case "spki":
		label = "PUBLIC KEY"
		der, err = marshalSPKI(k)
	case "pkcs1":
		switch k := k.(type) {
		case *rsa.PrivateKey:
			label, der = "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k)
		case *rsa.PublicKey:
			label, der = "RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(k)
		default:
			return nil, errno.EINVAL
		}
	case "sec1":
		ek, ok := k.(*ecdsa.PrivateKey)
		if !ok {
			return nil, errno.EINVAL
		}
		label = "EC PRIVATE KEY"
		der, err = x509.MarshalECPrivateKey(ek)
	default:
		return nil, errno.EINVAL
	}
	if err != nil {
		return nil, errOSSLUnsupported
	}
	if cipher != "" {
		if !keyenc.KnownCipher(cipher) {
			return nil, newError("ERR_CRYPTO_UNKNOWN_CIPHER", "Unknown cipher")
		}
		if typ == "pkcs8" {
			if der, err = keyenc.EncryptPKCS8(rand.Reader, der, cipher, pass); err != nil {
				return nil, errOSSLUnsupported
			}
			label = "ENCRYPTED PRIVATE KEY"
		} else {
			b, err := keyenc.EncryptPEM(rand.Reader, label, der, cipher, pass)
			if err != nil {
				return nil, errOSSLUnsupported
			}
			return pem.EncodeToMemory(b), nil
		}
	}
	if format == "pem" {
		return pem.EncodeToMemory(&pem.Block{Type: label, Bytes: der}), nil
	}
	return der, nil
}

// importKey parses guest key material: kind is private or public (a
// public key may be derived from private material), format pem, der or
// jwk, typ the DER type, pp the passphrase of encrypted material.
func importKey(kind, format, typ string, data []byte, pp *keyPassphrase) (any, error) {
	if len(data) > maxKeyInput {
		return nil, newError("ERR_OUT_OF_RANGE", fmt.Sprintf("key material larger than %d bytes is not supported in this sandbox", maxKeyInput))
	}
	var k any
	var err error
	switch format {
	case "pem":
		k, err = parsePEM(kind, data, pp)
	case "der":
		if kind == "private" {
			k, err = parsePrivateDER(typ, data, pp)
		} else {
			k, err = parsePublicDER(typ, data, pp)
		}
	case "jwk":
		k, err = parseJWK(kind, data)
	default:
		return nil, errno.EINVAL
	}
	if err != nil {
		return nil, err
	}
	if _, err := infoOf(k); err != nil {
		return nil, err
	}
	return k, nil
}

// keyDecryptWork bounds the PBKDF2 work of decrypting a guest's key as
// PBKDF2 is bounded, and runs what is heavy on s.Heavy.
func (s *State) keyDecryptWork(cost int64, fn func()) error {
	if cost > MaxPBKDF2Work {
		return newError("ERR_OUT_OF_RANGE", fmt.Sprintf("encrypted keys whose PBKDF2 work is above %d are not supported in this sandbox", MaxPBKDF2Work))
	}
	return s.run(cost >= minHeavyPBKDF2, func(*atomic.Bool) error {
		fn()
		return nil
	})
}

// keyFromDER returns the key a KeyObject's canonical DER holds.
func (s *State) keyFromDER(der []byte) (any, error) {
	c := &s.keys
	if k, ok := c.m[string(der)]; ok {
		return k, nil
	}
	k, err := parsePKCS8(der)
	if err != nil {
		if len(der) > maxPrivateKeyDER {
			return nil, errno.EINVAL
		}
		k, err = parseSPKI(der)
	}
	if err != nil {
		return nil, errno.EINVAL
	}
	if _, err := infoOf(k); err != nil {
		return nil, err
	}
	c.put(der, k)
	return k, nil
}

// keyResult hands a key back: its canonical DER in result slot outSlot,
// its description as the return value.
func (s *State) keyResult(k any, outSlot int) (KeyInfo, error) {
	info, err := infoOf(k)
	if err != nil {
		return info, err
	}
	der, err := canonical(k)
	if err != nil {
		return info, errOSSLUnsupported
	}
	s.keys.put(der, k)
	s.out[outSlot] = der
	return info, nil
}

// generateKey makes a key pair of kind with opts (JSON of Node's options).
func (s *State) generateKey(kind string, opts []byte) (any, error) {
	var o struct {
		ModulusLength  int    `json:"modulusLength"`
		PublicExponent int    `json:"publicExponent"`
		NamedCurve     string `json:"namedCurve"`
	}
	if len(opts) > 0 {
		if err := json.Unmarshal(opts, &o); err != nil {
			return nil, errno.EINVAL
		}
	}
	var k any
	var err error
	switch kind {
	case "rsa":
		if o.ModulusLength < minRSABits {
			return nil, errRSAGenTooShort
		}
		if o.ModulusLength > maxRSAGenBits {
			return nil, newError("ERR_OUT_OF_RANGE", fmt.Sprintf("The value of \"options.modulusLength\" is out of range. It must be <= %d in this sandbox. Received %d", maxRSAGenBits, o.ModulusLength))
		}
		e := o.PublicExponent
		if e == 0 {
			e = 65537
		}
		if e < 3 || e%2 == 0 {
			return nil, errRSAExponent
		}
		if e > rsakey.MaxExponent {
			// Go's crypto/rsa uses no larger exponent.
			return nil, newError("ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", fmt.Sprintf("RSA public exponents above %d are not supported in this sandbox", rsakey.MaxExponent))
		}
		bits := o.ModulusLength
		err = s.run(true, func(stop *atomic.Bool) error {
			var gerr error
			k, gerr = rsakey.GenerateKey(rand.Reader, bits, e, stop)
			return gerr
		})
	case "ec":
		c := curveByName(o.NamedCurve)
		if c == nil {
			return nil, newError("ERR_CRYPTO_INVALID_CURVE", "Invalid EC curve name")
		}
		k, err = ecdsa.GenerateKey(c, rand.Reader)
	case "ed25519":
		_, k, err = ed25519.GenerateKey(rand.Reader)
	case "x25519":
		k, err = ecdh.X25519().GenerateKey(rand.Reader)
	case "ed448":
		k, err = cfrg.GenerateEd448(rand.Reader)
	case "x448":
		k, err = cfrg.GenerateX448(rand.Reader)
	default:
		return nil, newError("ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "key type "+kind+" is not supported in this sandbox")
	}
	if err != nil {
		if isReported(err) {
			return nil, err
		}
		return nil, newError("ERR_CRYPTO_OPERATION_FAILED", "Key generation job failed")
	}
	return k, nil
}

// ImportKey reads the key material in operand 0 (with the passphrase in
// operand 1 when hasPassphrase is set): kind is private or public (a
// public key may be derived from private material), format pem, der or
// jwk, typ the DER type (pkcs8, pkcs1, sec1, spki). The key's canonical
// DER (what a KeyObject holds) goes to result slot 0.
func (s *State) ImportKey(kind, format, typ string, hasPassphrase bool) (KeyInfo, error) {
	data := s.take(0)
	pp := &keyPassphrase{given: hasPassphrase, pass: s.take(1), work: s.keyDecryptWork}
	k, err := importKey(kind, format, typ, data, pp)
	if err != nil {
		return KeyInfo{}, err
	}
	return s.keyResult(k, 0)
}

// PublicKey derives the public key of the canonical DER in operand 0; its
// DER goes to result slot 0.
func (s *State) PublicKey() (KeyInfo, error) {
	k, err := s.keyFromDER(s.take(0))
	if err != nil {
		return KeyInfo{}, err
	}
	return s.keyResult(publicOf(k), 0)
}

// ExportKey encodes the key of the canonical DER in operand 0 as format
// (pem, der, jwk) and type (pkcs8, pkcs1, sec1, spki), encrypted with
// cipher and the passphrase in operand 1 when cipher is not empty.
func (s *State) ExportKey(format, typ, cipher string) ([]byte, error) {
	pass := s.take(1)
	k, err := s.keyFromDER(s.take(0))
	if err != nil {
		return nil, err
	}
	return exportKey(k, format, typ, cipher, pass)
}

// GenerateKey makes a key pair of kind (rsa, ec, ed25519, x25519, ed448,
// x448) with the options in operand 0 (JSON of Node's modulusLength,
// publicExponent and namedCurve); the private key's DER goes to result
// slot 0, the public key's to slot 1.
func (s *State) GenerateKey(kind string) (KeyInfo, error) {
	k, err := s.generateKey(kind, s.take(0))
	if err != nil {
		return KeyInfo{}, err
	}
	info, err := s.keyResult(k, 0)
	if err != nil {
		return info, err
	}
	if _, err := s.keyResult(publicOf(k), 1); err != nil {
		return info, err
	}
	return info, nil
}
