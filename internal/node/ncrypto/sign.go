package ncrypto

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"errors"
	"math/big"

	"github.com/secexec/secexec/internal/node/cfrg"
	"github.com/secexec/secexec/internal/node/rsakey"
	"github.com/secexec/secexec/kernel/errno"
)

// Node's RSA padding constants.
const (
	rsaPKCS1Padding = 1
	rsaNoPadding    = 3
	rsaOAEPPadding  = 4
	rsaPSSPadding   = 6
)

func cryptoHash(name string) (crypto.Hash, bool) {
	switch name {
	case "md5":
		return crypto.MD5, true
	case "sha1":
		return crypto.SHA1, true
	case "sha224":
		return crypto.SHA224, true
	case "sha256":
		return crypto.SHA256, true
	case "sha384":
		return crypto.SHA384, true
	case "sha512":
		return crypto.SHA512, true
	case "sha512-224":
		return crypto.SHA512_224, true
	case "sha512-256":
		return crypto.SHA512_256, true
	case "sha3-224":
		return crypto.SHA3_224, true
	case "sha3-256":
		return crypto.SHA3_256, true
	case "sha3-384":
		return crypto.SHA3_384, true
	case "sha3-512":
		return crypto.SHA3_512, true
	}
	return 0, false
}

var (
	errInvalidDigest  = osslErr("1C80007A", "Provider routines", "invalid digest", "ERR_OSSL_INVALID_DIGEST")
	errBadPadding     = osslErr("1C8000A5", "Provider routines", "illegal or unsupported padding mode", "ERR_OSSL_ILLEGAL_OR_UNSUPPORTED_PADDING_MODE")
	errRSATooLarge    = osslErr("0200006E", "rsa routines", "data too large for key size", "ERR_OSSL_RSA_DATA_TOO_LARGE_FOR_KEY_SIZE")
	errDigestTooBig   = osslErr("02000070", "rsa routines", "digest too big for rsa key", "ERR_OSSL_RSA_DIGEST_TOO_BIG_FOR_RSA_KEY")
	errOAEPDecode     = osslErr("02000079", "rsa routines", "oaep decoding error", "ERR_OSSL_RSA_OAEP_DECODING_ERROR")
	errBlockTypeNot01 = osslErr("0200006A", "rsa routines", "block type is not 01", "ERR_OSSL_RSA_BLOCK_TYPE_IS_NOT_01")
	errECDHPublic     = newError("ERR_CRYPTO_ECDH_INVALID_PUBLIC_KEY", "Public key is not valid for specified curve")
)

// signOpts are Node's signing options after JavaScript checked them.
type signOpts struct {
	hash     string // digest name; "" for Ed25519
	padding  int    // 0: the key's default
	saltLen  int    // Node's saltLength (-1 digest, -2 max/auto), or >= 0
	hasSalt  bool
	p1363    bool
	digested []byte // the digest, or the message for Ed25519
}

// pssSalt maps Node's saltLength to rsakey's: absent is the longest
// salt when signing and any salt when verifying (OpenSSL's defaults).
func pssSalt(o signOpts) (int, error) {
	if !o.hasSalt {
		return rsakey.SaltLengthMax, nil
	}
	if o.saltLen < rsakey.SaltLengthMax {
		return 0, errRSATooLarge
	}
	return o.saltLen, nil
}

// rsaErr maps rsakey's errors to OpenSSL's, as Node reports them.
func rsaErr(err error, otherwise error) error {
	switch {
	case errors.Is(err, rsakey.ErrTooShort):
		return errRSATooShort
	case errors.Is(err, rsakey.ErrDigestTooBig):
		return errDigestTooBig
	case errors.Is(err, rsakey.ErrHash):
		return errInvalidDigest
	}
	return otherwise
}

func signWith(k any, o signOpts) ([]byte, error) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		h, ok := cryptoHash(o.hash)
		if !ok {
			return nil, errInvalidDigest
		}
		var s []byte
		var err error
		switch o.padding {
		case 0, rsaPKCS1Padding:
			s, err = rsakey.SignPKCS1v15(rand.Reader, k, h, o.digested)
		case rsaPSSPadding:
			salt, serr := pssSalt(o)
			if serr != nil {
				return nil, serr
			}
			s, err = rsakey.SignPSS(rand.Reader, k, h, o.digested, salt)
		default:
			return nil, errBadPadding
		}
		if err != nil {
			return nil, rsaErr(err, errRSATooLarge)
		}
		return s, nil
	case *ecdsa.PrivateKey:
		if _, ok := cryptoHash(o.hash); !ok {
			return nil, errInvalidDigest
		}
		der, err := ecdsa.SignASN1(rand.Reader, k, o.digested)
		if err != nil {
			return nil, errKeyTypeOp
		}
		if !o.p1363 {
			return der, nil
		}
		var sig struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(der, &sig); err != nil {
			return nil, errKeyTypeOp
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*n)
		sig.R.FillBytes(out[:n])
		sig.S.FillBytes(out[n:])
		return out, nil
	case ed25519.PrivateKey:
		if o.hash != "" {
			return nil, errInvalidDigest
		}
		return ed25519.Sign(k, o.digested), nil
	case *cfrg.Ed448PrivateKey:
		if o.hash != "" {
			return nil, errInvalidDigest
		}
		return k.Sign(o.digested), nil
	}
	return nil, errKeyTypeOp
}

func verifyWith(k any, o signOpts, sig []byte) (bool, error) {
	switch k := k.(type) {
	case *rsa.PublicKey:
		h, ok := cryptoHash(o.hash)
		if !ok {
			return false, errInvalidDigest
		}
		var err error
		switch o.padding {
		case 0, rsaPKCS1Padding:
			err = rsakey.VerifyPKCS1v15(k, h, o.digested, sig)
		case rsaPSSPadding:
			salt, serr := pssSalt(o)
			if serr != nil {
				return false, serr
			}
			err = rsakey.VerifyPSS(k, h, o.digested, sig, salt)
		default:
			return false, errBadPadding
		}
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, rsakey.ErrTooShort), errors.Is(err, rsakey.ErrHash):
			// A key or hash that cannot be used throws.
			return false, rsaErr(err, nil)
		}
		// A bad signature is false, as is one whose digest does not fit
		// the key (OpenSSL too).
		return false, nil
	case *ecdsa.PublicKey:
		if _, ok := cryptoHash(o.hash); !ok {
			return false, errInvalidDigest
		}
		if !o.p1363 {
			return ecdsa.VerifyASN1(k, o.digested, sig), nil
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return false, nil
		}
		r := new(big.Int).SetBytes(sig[:n])
		s := new(big.Int).SetBytes(sig[n:])
		return ecdsa.Verify(k, o.digested, r, s), nil
	case ed25519.PublicKey:
		if o.hash != "" {
			return false, errInvalidDigest
		}
		return ed25519.Verify(k, o.digested, sig), nil
	case *cfrg.Ed448PublicKey:
		if o.hash != "" {
			return false, errInvalidDigest
		}
		return k.Verify(o.digested, sig), nil
	}
	return false, errKeyTypeOp
}

// SignOptions are Node's signing options, as JavaScript checked them.
type SignOptions struct {
	// Hash is the digest's name; "" for Ed25519 and Ed448.
	Hash string
	// Padding is the RSA padding (Node's RSA_*_PADDING); 0: the key's
	// default.
	Padding int
	// SaltLength is the PSS salt length when HasSaltLength is set (-1
	// the digest's length, -2 the longest, or >= 0).
	SaltLength    int
	HasSaltLength bool
	// P1363 asks for (EC)DSA signatures as r || s instead of DER.
	P1363 bool
}

// signArgs takes the key (operand 0) and digest (operand 1) of a sign
// or verify operation.
func (s *State) signArgs(o SignOptions) (signOpts, any, error) {
	der := s.take(0)
	so := signOpts{hash: o.Hash, padding: o.Padding, saltLen: o.SaltLength, hasSalt: o.HasSaltLength, p1363: o.P1363, digested: s.take(1)}
	k, err := s.keyFromDER(der)
	return so, k, err
}

// rsaRaw computes m^e mod n, the public RSA operation without padding.
func rsaRaw(k *rsa.PublicKey, in []byte) ([]byte, error) {
	out, err := rsakey.Public(k, in)
	if err != nil {
		return nil, rsaErr(err, errRSATooLarge)
	}
	return out, nil
}

// rsaCrypt runs publicEncrypt, privateDecrypt, privateEncrypt or
// publicDecrypt.
func rsaCrypt(op string, k any, padding int, hashName string, label, data []byte) ([]byte, error) {
	var priv *rsa.PrivateKey
	var pub *rsa.PublicKey
	switch k := k.(type) {
	case *rsa.PrivateKey:
		priv, pub = k, &k.PublicKey
	case *rsa.PublicKey:
		pub = k
	default:
		return nil, errKeyTypeOp
	}
	if pub.N.BitLen() < rsakey.MinBits {
		return nil, errRSATooShort
	}
	switch op {
	case "publicEncrypt":
		switch padding {
		case rsaOAEPPadding:
			h, ok := cryptoHash(hashName)
			if !ok {
				return nil, errInvalidDigest
			}
			out, err := rsakey.EncryptOAEP(h, rand.Reader, pub, data, label)
			if err != nil {
				return nil, rsaErr(err, errRSATooLarge)
			}
			return out, nil
		case rsaPKCS1Padding:
			// Node still offers PKCS #1 v1.5 encryption (Go deprecates
			// it); only its decryption is refused, as in Node.
			k := pub.Size()
			if len(data) > k-11 {
				return nil, errRSATooLarge
			}
			em := make([]byte, k)
			em[1] = 2
			ps := em[2 : k-len(data)-1]
			if _, err := rand.Read(ps); err != nil {
				return nil, errRSATooLarge
			}
			for i := range ps {
				for ps[i] == 0 {
					var b [1]byte
					_, _ = rand.Read(b[:])
					ps[i] = b[0]
				}
			}
			copy(em[k-len(data):], data)
			return rsaRaw(pub, em)
		case rsaNoPadding:
			if len(data) != pub.Size() {
				return nil, errRSATooLarge
			}
			return rsaRaw(pub, data)
		}
	case "privateDecrypt":
		if priv == nil {
			return nil, errKeyTypeOp
		}
		switch padding {
		case rsaOAEPPadding:
			h, ok := cryptoHash(hashName)
			if !ok {
				return nil, errInvalidDigest
			}
			out, err := rsakey.DecryptOAEP(h, rand.Reader, priv, data, label)
			if err != nil {
				return nil, rsaErr(err, errOAEPDecode)
			}
			return out, nil
		}
	case "privateEncrypt":
		if priv == nil {
			return nil, errKeyTypeOp
		}
		if padding == rsaPKCS1Padding {
			// Hash 0 signs the bytes as given: PKCS #1 type 1 padding.
			out, err := rsakey.SignPKCS1v15(rand.Reader, priv, 0, data)
			if err != nil {
				return nil, rsaErr(err, errRSATooLarge)
			}
			return out, nil
		}
	case "publicDecrypt":
		if padding == rsaPKCS1Padding {
			if len(data) != pub.Size() {
				return nil, errRSATooLarge
			}
			em, err := rsaRaw(pub, data)
			if err != nil {
				return nil, err
			}
			// 00 01 FF..FF 00 message
			if em[0] != 0 || em[1] != 1 {
				return nil, errBlockTypeNot01
			}
			i := 2
			for i < len(em) && em[i] == 0xff {
				i++
			}
			if i < 10 || i >= len(em) || em[i] != 0 {
				return nil, errBlockTypeNot01
			}
			return em[i+1:], nil
		}
	}
	return nil, errBadPadding
}

// ecdhCurve maps createECDH's curve names.
func ecdhCurve(name string) (ecdh.Curve, elliptic.Curve) {
	switch name {
	case "prime256v1", "secp256r1":
		return ecdh.P256(), elliptic.P256()
	case "secp384r1":
		return ecdh.P384(), elliptic.P384()
	case "secp521r1":
		return ecdh.P521(), elliptic.P521()
	}
	return nil, nil
}

// ecdhPublic reads a public point in any of the encodings Node accepts
// (uncompressed, compressed, hybrid) as an ECDH key.
func ecdhPublic(c ecdh.Curve, ec elliptic.Curve, b []byte) (*ecdh.PublicKey, error) {
	size := (ec.Params().BitSize + 7) / 8
	switch {
	case len(b) == 1+size && (b[0] == 2 || b[0] == 3):
		x, y := elliptic.UnmarshalCompressed(ec, b)
		if x == nil {
			return nil, errECDHPublic
		}
		pt := make([]byte, 1+2*size)
		pt[0] = 4
		x.FillBytes(pt[1 : 1+size])
		y.FillBytes(pt[1+size:])
		b = pt
	case len(b) == 1+2*size && (b[0] == 6 || b[0] == 7):
		b = append([]byte{4}, b[1:]...)
	}
	k, err := c.NewPublicKey(b)
	if err != nil {
		return nil, errECDHPublic
	}
	return k, nil
}

func compressPoint(pt []byte) []byte {
	size := (len(pt) - 1) / 2
	out := make([]byte, 1+size)
	out[0] = 2 | pt[len(pt)-1]&1
	copy(out[1:], pt[1:1+size])
	return out
}

// toECDH converts a key of a KeyObject for crypto.diffieHellman.
func toECDH(k any) (any, string) {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		e, err := k.ECDH()
		if err != nil {
			return nil, ""
		}
		return e, "ec"
	case *ecdsa.PublicKey:
		e, err := k.ECDH()
		if err != nil {
			return nil, ""
		}
		return e, "ec"
	case *ecdh.PrivateKey:
		return k, "x25519"
	case *ecdh.PublicKey:
		return k, "x25519"
	}
	return nil, ""
}

// SignDigest signs the digest (for Ed25519 and Ed448 the message) in
// operand 1 with the private key of the canonical DER in operand 0.
func (s *State) SignDigest(o SignOptions) ([]byte, error) {
	so, k, err := s.signArgs(o)
	if err != nil {
		return nil, err
	}
	if !isPrivate(k) {
		return nil, newError("ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", "Invalid key object type public, expected private.")
	}
	return signWith(k, so)
}

// VerifyDigest verifies the signature in operand 2 of the digest in
// operand 1 with the key (or a private key's public half) of the
// canonical DER in operand 0: false for a bad signature, an error for a
// key or options that cannot verify.
func (s *State) VerifyDigest(o SignOptions) (bool, error) {
	so, k, err := s.signArgs(o)
	sig := s.take(2)
	if err != nil {
		return false, err
	}
	return verifyWith(publicOf(k), so, sig)
}

// RSACrypt runs op (publicEncrypt, privateDecrypt, privateEncrypt or
// publicDecrypt) with the key of the canonical DER in operand 0 over the
// data in operand 1, with padding (Node's RSA_*_PADDING) and, for OAEP,
// the digest hashName and the label in operand 2.
func (s *State) RSACrypt(op string, padding int, hashName string) ([]byte, error) {
	der, data, label := s.take(0), s.take(1), s.take(2)
	k, err := s.keyFromDER(der)
	if err != nil {
		return nil, err
	}
	return rsaCrypt(op, k, padding, hashName, label, data)
}

// ECDHKeys returns the public point (uncompressed) of the curve's
// private key in operand 0, or of a new one when generate is set; the
// private key goes to result slot 0.
func (s *State) ECDHKeys(curve string, generate bool) ([]byte, error) {
	c, _ := ecdhCurve(curve)
	priv := s.take(0)
	if c == nil {
		return nil, newError("ERR_CRYPTO_INVALID_CURVE", "Invalid EC curve name")
	}
	var k *ecdh.PrivateKey
	var err error
	if generate {
		k, err = c.GenerateKey(rand.Reader)
	} else {
		k, err = c.NewPrivateKey(priv)
	}
	if err != nil {
		return nil, newError("ERR_CRYPTO_INVALID_KEYTYPE", "Private key is not valid for specified curve.")
	}
	s.out[0] = k.Bytes()
	return k.PublicKey().Bytes(), nil
}

// ECDHCompute returns the shared secret of the curve's private key in
// operand 0 and the peer's public point (any encoding Node accepts) in
// operand 1.
func (s *State) ECDHCompute(curve string) ([]byte, error) {
	priv, peer := s.take(0), s.take(1)
	c, ec := ecdhCurve(curve)
	if c == nil {
		return nil, newError("ERR_CRYPTO_INVALID_CURVE", "Invalid EC curve name")
	}
	k, err := c.NewPrivateKey(priv)
	if err != nil {
		return nil, newError("ERR_CRYPTO_INVALID_KEYTYPE", "Private key is not valid for specified curve.")
	}
	pub, err := ecdhPublic(c, ec, peer)
	if err != nil {
		return nil, err
	}
	secret, err := k.ECDH(pub)
	if err != nil {
		return nil, errECDHPublic
	}
	return secret, nil
}

// ECDHConvert re-encodes the curve's public point in operand 0 as format
// "compressed", "hybrid" or (anything else) uncompressed.
func (s *State) ECDHConvert(curve, format string) ([]byte, error) {
	in := s.take(0)
	c, ec := ecdhCurve(curve)
	if c == nil {
		return nil, newError("ERR_CRYPTO_INVALID_CURVE", "Invalid EC curve name")
	}
	pub, err := ecdhPublic(c, ec, in)
	if err != nil {
		return nil, err
	}
	pt := pub.Bytes()
	switch format {
	case "compressed":
		pt = compressPoint(pt)
	case "hybrid":
		pt = append([]byte{6 | pt[len(pt)-1]&1}, pt[1:]...)
	}
	return pt, nil
}

// DiffieHellman returns the shared secret of the private key and the
// peer's key (crypto.diffieHellman), the canonical DERs in operands 0
// and 1.
func (s *State) DiffieHellman() ([]byte, error) {
	pder, qder := s.take(0), s.take(1)
	pk, err1 := s.keyFromDER(pder)
	qk, err2 := s.keyFromDER(qder)
	if err1 != nil || err2 != nil {
		return nil, errno.EINVAL
	}
	if p, ok := pk.(*cfrg.X448PrivateKey); ok {
		q, ok := publicOf(qk).(*cfrg.X448PublicKey)
		if !ok {
			return nil, newError("ERR_CRYPTO_INCOMPATIBLE_KEY", "")
		}
		secret, err := p.Shared(q)
		if err != nil {
			return nil, newError("ERR_CRYPTO_OPERATION_FAILED", "Failed to compute the shared secret")
		}
		return secret, nil
	}
	priv, pkind := toECDH(pk)
	pub, qkind := toECDH(publicOf(qk))
	p, ok1 := priv.(*ecdh.PrivateKey)
	q, ok2 := pub.(*ecdh.PublicKey)
	if !ok1 || !ok2 || pkind != qkind || p.Curve() != q.Curve() {
		return nil, newError("ERR_CRYPTO_INCOMPATIBLE_KEY", "")
	}
	secret, err := p.ECDH(q)
	if err != nil {
		return nil, newError("ERR_CRYPTO_OPERATION_FAILED", "Failed to compute the shared secret")
	}
	return secret, nil
}
