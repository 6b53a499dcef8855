// Package cfrg holds the CFRG curves' keys that Go's standard library
// lacks, Ed448 (RFC 8032) and X448 (RFC 7748), with their PKCS #8, SPKI
// (RFC 8410) and JWK (RFC 8037) encodings, for node:crypto and
// crypto.subtle. It works on bytes only (no V8), so its decoders are
// fuzzed without cgo. The curve arithmetic is cloudflare/circl's.
package cfrg

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"io"

	"github.com/cloudflare/circl/dh/x448"
	"github.com/cloudflare/circl/sign/ed448"
)

// Sizes of the encoded keys.
const (
	Ed448KeySize = ed448.PublicKeySize // public key and seed
	X448KeySize  = x448.Size           // public and private key
)

// ErrInvalid reports key bytes that are not a key of the curve.
var ErrInvalid = errors.New("cfrg: invalid key")

// ErrLowOrder reports an X448 public key whose shared secret is zero.
var ErrLowOrder = errors.New("cfrg: low-order public key")

var (
	oidX448  = asn1.ObjectIdentifier{1, 3, 101, 111}
	oidEd448 = asn1.ObjectIdentifier{1, 3, 101, 113}
)

// Ed448PrivateKey is an Ed448 private key (seed and public key, as circl
// keeps it).
type Ed448PrivateKey struct{ k ed448.PrivateKey }

// Ed448PublicKey is an Ed448 public key.
type Ed448PublicKey struct{ k ed448.PublicKey }

// X448PrivateKey is an X448 private key with its public key.
type X448PrivateKey struct{ d, pub x448.Key }

// X448PublicKey is an X448 public key.
type X448PublicKey struct{ k x448.Key }

// GenerateEd448 makes an Ed448 key from rand.
func GenerateEd448(rand io.Reader) (*Ed448PrivateKey, error) {
	_, k, err := ed448.GenerateKey(rand)
	if err != nil {
		return nil, err
	}
	return &Ed448PrivateKey{k}, nil
}

// NewEd448Private is the Ed448 key of a 57-byte seed.
func NewEd448Private(seed []byte) (*Ed448PrivateKey, error) {
	if len(seed) != ed448.SeedSize {
		return nil, ErrInvalid
	}
	return &Ed448PrivateKey{ed448.NewKeyFromSeed(seed)}, nil
}

// NewEd448Public reads a 57-byte Ed448 public key. Like OpenSSL it does
// not decode the point here: a key that is not on the curve verifies
// nothing.
func NewEd448Public(b []byte) (*Ed448PublicKey, error) {
	if len(b) != ed448.PublicKeySize {
		return nil, ErrInvalid
	}
	return &Ed448PublicKey{append(ed448.PublicKey(nil), b...)}, nil
}

// Seed is the key's 57-byte seed.
func (k *Ed448PrivateKey) Seed() []byte { return k.k.Seed() }

// Public is the key's public half.
func (k *Ed448PrivateKey) Public() *Ed448PublicKey {
	return &Ed448PublicKey{k.k.Public().(ed448.PublicKey)}
}

// Sign signs msg (pure Ed448, the empty context, as Node does).
func (k *Ed448PrivateKey) Sign(msg []byte) []byte { return ed448.Sign(k.k, msg, "") }

// Bytes is the encoded public key.
func (k *Ed448PublicKey) Bytes() []byte { return append([]byte(nil), k.k...) }

// Verify checks sig over msg (empty context).
func (k *Ed448PublicKey) Verify(msg, sig []byte) bool {
	return len(sig) == ed448.SignatureSize && ed448.Verify(k.k, msg, sig, "")
}

// Equal reports whether k and o are the same key.
func (k *Ed448PublicKey) Equal(o *Ed448PublicKey) bool { return k.k.Equal(o.k) }

// GenerateX448 makes an X448 key from rand.
func GenerateX448(rand io.Reader) (*X448PrivateKey, error) {
	var d x448.Key
	if _, err := io.ReadFull(rand, d[:]); err != nil {
		return nil, err
	}
	return NewX448Private(d[:])
}

// NewX448Private is the X448 key of 56 private bytes (clamped when used,
// so every 56 bytes are a key).
func NewX448Private(d []byte) (*X448PrivateKey, error) {
	if len(d) != x448.Size {
		return nil, ErrInvalid
	}
	k := &X448PrivateKey{}
	copy(k.d[:], d)
	x448.KeyGen(&k.pub, &k.d)
	return k, nil
}

// NewX448Public reads a 56-byte X448 public key.
func NewX448Public(b []byte) (*X448PublicKey, error) {
	if len(b) != x448.Size {
		return nil, ErrInvalid
	}
	k := &X448PublicKey{}
	copy(k.k[:], b)
	return k, nil
}

// Bytes is the key's 56 private bytes.
func (k *X448PrivateKey) Bytes() []byte { return append([]byte(nil), k.d[:]...) }

// Public is the key's public half.
func (k *X448PrivateKey) Public() *X448PublicKey { return &X448PublicKey{k.pub} }

// Shared is the X448 shared secret with pub.
func (k *X448PrivateKey) Shared(pub *X448PublicKey) ([]byte, error) {
	var s x448.Key
	if !x448.Shared(&s, &k.d, &pub.k) {
		return nil, ErrLowOrder
	}
	return s[:], nil
}

// Bytes is the encoded public key.
func (k *X448PublicKey) Bytes() []byte { return append([]byte(nil), k.k[:]...) }

// Equal reports whether k and o are the same key.
func (k *X448PublicKey) Equal(o *X448PublicKey) bool { return k.k == o.k }

// IsKey reports whether k is one of this package's keys.
func IsKey(k any) bool {
	switch k.(type) {
	case *Ed448PrivateKey, *Ed448PublicKey, *X448PrivateKey, *X448PublicKey:
		return true
	}
	return false
}

// Kind is Node's asymmetricKeyType of k ("ed448" or "x448") and whether
// it is private; "" when k is not one of this package's keys.
func Kind(k any) (kind string, private bool) {
	switch k.(type) {
	case *Ed448PrivateKey:
		return "ed448", true
	case *Ed448PublicKey:
		return "ed448", false
	case *X448PrivateKey:
		return "x448", true
	case *X448PublicKey:
		return "x448", false
	}
	return "", false
}

// PublicOf is the public half of k (k itself when it is public).
func PublicOf(k any) any {
	switch k := k.(type) {
	case *Ed448PrivateKey:
		return k.Public()
	case *X448PrivateKey:
		return k.Public()
	}
	return k
}

// pkcs8 is RFC 5958's OneAsymmetricKey; its optional attributes and
// public key, when present, are not read (OpenSSL ignores them too).
type pkcs8 struct {
	Version    int
	Algo       pkix.AlgorithmIdentifier
	PrivateKey []byte
}

type spki struct {
	Algo      pkix.AlgorithmIdentifier
	PublicKey asn1.BitString
}

// ParsePKCS8 reads an Ed448 or X448 private key in PKCS #8.
func ParsePKCS8(der []byte) (any, error) {
	var p pkcs8
	rest, err := asn1.Unmarshal(der, &p)
	if err != nil || len(rest) != 0 || (p.Version != 0 && p.Version != 1) || len(p.Algo.Parameters.FullBytes) != 0 {
		return nil, ErrInvalid
	}
	var raw []byte
	if rest, err := asn1.Unmarshal(p.PrivateKey, &raw); err != nil || len(rest) != 0 {
		return nil, ErrInvalid
	}
	switch {
	case p.Algo.Algorithm.Equal(oidEd448):
		return untyped(NewEd448Private(raw))
	case p.Algo.Algorithm.Equal(oidX448):
		return untyped(NewX448Private(raw))
	}
	return nil, ErrInvalid
}

// ParseSPKI reads an Ed448 or X448 public key in SPKI.
func ParseSPKI(der []byte) (any, error) {
	var s spki
	rest, err := asn1.Unmarshal(der, &s)
	if err != nil || len(rest) != 0 || len(s.Algo.Parameters.FullBytes) != 0 || s.PublicKey.BitLength%8 != 0 {
		return nil, ErrInvalid
	}
	switch {
	case s.Algo.Algorithm.Equal(oidEd448):
		return untyped(NewEd448Public(s.PublicKey.Bytes))
	case s.Algo.Algorithm.Equal(oidX448):
		return untyped(NewX448Public(s.PublicKey.Bytes))
	}
	return nil, ErrInvalid
}

// untyped keeps a failed constructor's nil pointer out of an interface
// (where it would not compare equal to nil).
func untyped[K any](k *K, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return k, nil
}

// MarshalPKCS8 writes a private key as OpenSSL does (version 0, no
// public key).
func MarshalPKCS8(k any) ([]byte, error) {
	var oid asn1.ObjectIdentifier
	var raw []byte
	switch k := k.(type) {
	case *Ed448PrivateKey:
		oid, raw = oidEd448, k.Seed()
	case *X448PrivateKey:
		oid, raw = oidX448, k.Bytes()
	default:
		return nil, ErrInvalid
	}
	inner, err := asn1.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(pkcs8{Algo: pkix.AlgorithmIdentifier{Algorithm: oid}, PrivateKey: inner})
}

// MarshalSPKI writes a public key in SPKI.
func MarshalSPKI(k any) ([]byte, error) {
	var oid asn1.ObjectIdentifier
	var raw []byte
	switch k := k.(type) {
	case *Ed448PublicKey:
		oid, raw = oidEd448, k.Bytes()
	case *X448PublicKey:
		oid, raw = oidX448, k.Bytes()
	default:
		return nil, ErrInvalid
	}
	return asn1.Marshal(spki{Algo: pkix.AlgorithmIdentifier{Algorithm: oid}, PublicKey: asn1.BitString{Bytes: raw, BitLength: 8 * len(raw)}})
}

// JWK is the "crv", "x" and (for a private key) "d" of k's OKP JWK, as
// raw bytes.
func JWK(k any) (crv string, x, d []byte) {
	switch k := k.(type) {
	case *Ed448PrivateKey:
		return "Ed448", k.Public().Bytes(), k.Seed()
	case *Ed448PublicKey:
		return "Ed448", k.Bytes(), nil
	case *X448PrivateKey:
		return "X448", k.Public().Bytes(), k.Bytes()
	case *X448PublicKey:
		return "X448", k.Bytes(), nil
	}
	return "", nil, nil
}

// FromJWK is the key of an OKP JWK's crv, x and, when private, d; a
// private key must match x.
func FromJWK(crv string, x, d []byte, private bool) (any, error) {
	switch crv {
	case "Ed448":
		return fromJWK(NewEd448Public, NewEd448Private, x, d, private)
	case "X448":
		return fromJWK(NewX448Public, NewX448Private, x, d, private)
	}
	return nil, ErrInvalid
}

func fromJWK[Pub interface{ Equal(Pub) bool }, Priv interface{ Public() Pub }](
	newPub func([]byte) (Pub, error), newPriv func([]byte) (Priv, error), x, d []byte, private bool,
) (any, error) {
	pub, err := newPub(x)
	if err != nil {
		return nil, err
	}
	if !private {
		return pub, nil
	}
	k, err := newPriv(d)
	if err != nil || !k.Public().Equal(pub) {
		return nil, ErrInvalid
	}
	return k, nil
}
