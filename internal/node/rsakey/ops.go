package rsakey

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/subtle"
	"encoding/asn1"
	"errors"
	"io"
	"math/big"
)

// Go's crypto/rsa refuses every operation with a modulus shorter than
// 1024 bits unless GODEBUG rsa1024min=0, a process-wide switch that would
// weaken TLS certificate checks too. Node (OpenSSL) still uses such keys,
// so for them alone the operations below run their own PKCS #1 (RFC 8017)
// encodings on math/big. Keys of GoMinBits and more always go through
// crypto/rsa. Constant time is moot for keys this short (they are
// factorable); the private operation is still blinded and checked.

// GoMinBits is the shortest modulus crypto/rsa uses.
const GoMinBits = 1024

// MinBits is the shortest modulus generated or used at all, OpenSSL's
// bound for generation.
const MinBits = 512

// Salt lengths of SignPSS and VerifyPSS besides explicit ones, Node's
// RSA_PSS_SALTLEN_DIGEST and RSA_PSS_SALTLEN_MAX_SIGN / _AUTO.
const (
	SaltLengthDigest = -1 // the digest's length
	SaltLengthMax    = -2 // signing: the longest that fits; verifying: any
)

// Errors of the operations, each one OpenSSL reason Node reports.
var (
	ErrTooShort     = errors.New("rsakey: modulus too short")
	ErrDataTooLarge = errors.New("rsakey: data too large for key size")
	ErrDigestTooBig = errors.New("rsakey: digest too big for rsa key")
	ErrDecryption   = errors.New("rsakey: decryption error")
	ErrVerification = errors.New("rsakey: verification error")
	ErrHash         = errors.New("rsakey: unsupported hash")
)

func small(k *rsa.PublicKey) bool { return k.N.BitLen() < GoMinBits }

func usable(k *rsa.PublicKey) error {
	if k == nil || k.N == nil || k.N.BitLen() < MinBits || k.E < 3 {
		return ErrTooShort
	}
	return nil
}

// Public computes in^e mod n, the public RSA operation without padding,
// on a block of at most the key's size whose value is below n.
func Public(k *rsa.PublicKey, in []byte) ([]byte, error) {
	if err := usable(k); err != nil {
		return nil, err
	}
	size := k.Size()
	if len(in) > size {
		return nil, ErrDataTooLarge
	}
	m := new(big.Int).SetBytes(in)
	if m.Cmp(k.N) >= 0 {
		return nil, ErrDataTooLarge
	}
	c := new(big.Int).Exp(m, big.NewInt(int64(k.E)), k.N)
	return c.FillBytes(make([]byte, size)), nil
}

// private computes in^d mod n, blinded by a random r (c·r^e)^d·r⁻¹, and
// checks the result with the public operation so that a fault never
// releases a wrong result.
func private(random io.Reader, k *rsa.PrivateKey, in []byte) ([]byte, error) {
	if err := usable(&k.PublicKey); err != nil {
		return nil, err
	}
	size := k.Size()
	c := new(big.Int).SetBytes(in)
	if len(in) > size || c.Cmp(k.N) >= 0 {
		return nil, ErrDataTooLarge
	}
	E := big.NewInt(int64(k.E))
	var r, rInv *big.Int
	for {
		b := make([]byte, size)
		if _, err := io.ReadFull(random, b); err != nil {
			return nil, err
		}
		r = new(big.Int).Mod(new(big.Int).SetBytes(b), k.N)
		if r.Sign() == 0 {
			continue
		}
		if rInv = new(big.Int).ModInverse(r, k.N); rInv != nil {
			break
		}
	}
	blinded := new(big.Int).Mul(c, new(big.Int).Exp(r, E, k.N))
	blinded.Mod(blinded, k.N)
	m := new(big.Int).Exp(blinded, k.D, k.N)
	m.Mul(m, rInv).Mod(m, k.N)
	if new(big.Int).Exp(m, E, k.N).Cmp(c) != 0 {
		return nil, ErrDecryption
	}
	return m.FillBytes(make([]byte, size)), nil
}

// mgf1XOR masks out with MGF1 over seed.
func mgf1XOR(out []byte, h crypto.Hash, seed []byte) {
	var counter [4]byte
	done := 0
	for done < len(out) {
		d := h.New()
		d.Write(seed)
		d.Write(counter[:])
		for _, b := range d.Sum(nil) {
			if done == len(out) {
				break
			}
			out[done] ^= b
			done++
		}
		for i := 3; i >= 0; i-- {
			counter[i]++
			if counter[i] != 0 {
				break
			}
		}
	}
}

// digestOIDs are the AlgorithmIdentifiers of PKCS #1 v1.5's DigestInfo.
var digestOIDs = map[crypto.Hash]asn1.ObjectIdentifier{
	crypto.MD5:        {1, 2, 840, 113549, 2, 5},
	crypto.SHA1:       {1, 3, 14, 3, 2, 26},
	crypto.SHA256:     {2, 16, 840, 1, 101, 3, 4, 2, 1},
	crypto.SHA384:     {2, 16, 840, 1, 101, 3, 4, 2, 2},
	crypto.SHA512:     {2, 16, 840, 1, 101, 3, 4, 2, 3},
	crypto.SHA224:     {2, 16, 840, 1, 101, 3, 4, 2, 4},
	crypto.SHA512_224: {2, 16, 840, 1, 101, 3, 4, 2, 5},
	crypto.SHA512_256: {2, 16, 840, 1, 101, 3, 4, 2, 6},
	crypto.SHA3_224:   {2, 16, 840, 1, 101, 3, 4, 2, 7},
	crypto.SHA3_256:   {2, 16, 840, 1, 101, 3, 4, 2, 8},
	crypto.SHA3_384:   {2, 16, 840, 1, 101, 3, 4, 2, 9},
	crypto.SHA3_512:   {2, 16, 840, 1, 101, 3, 4, 2, 10},
}

// pkcs1v15EM is EMSA-PKCS1-v1_5: 00 01 FF..FF 00 T, T the DER DigestInfo
// of digest, or digest itself when h is 0 (Node's privateEncrypt).
func pkcs1v15EM(size int, h crypto.Hash, digest []byte) ([]byte, error) {
	t := digest
	if h != 0 {
		oid, ok := digestOIDs[h]
		if !ok {
			return nil, ErrHash
		}
		if len(digest) != h.Size() {
			return nil, ErrVerification
		}
		var err error
		t, err = asn1.Marshal(struct {
			Alg struct {
				OID    asn1.ObjectIdentifier
				Params asn1.RawValue
			}
			Digest []byte
		}{struct {
			OID    asn1.ObjectIdentifier
			Params asn1.RawValue
		}{oid, asn1.NullRawValue}, digest})
		if err != nil {
			return nil, err
		}
	}
	if len(t)+11 > size {
		if h == 0 {
			return nil, ErrDataTooLarge
		}
		return nil, ErrDigestTooBig
	}
	em := make([]byte, size)
	em[1] = 1
	for i := 2; i < size-len(t)-1; i++ {
		em[i] = 0xff
	}
	copy(em[size-len(t):], t)
	return em, nil
}

// SignPKCS1v15 signs digest (made with h; h 0 signs the bytes as given)
// with PKCS #1 v1.5 padding.
func SignPKCS1v15(random io.Reader, k *rsa.PrivateKey, h crypto.Hash, digest []byte) ([]byte, error) {
	if err := usable(&k.PublicKey); err != nil {
		return nil, err
	}
	if !small(&k.PublicKey) {
		return rsa.SignPKCS1v15(random, k, h, digest)
	}
	em, err := pkcs1v15EM(k.Size(), h, digest)
	if err != nil {
		return nil, err
	}
	return private(random, k, em)
}

// VerifyPKCS1v15 checks a PKCS #1 v1.5 signature of digest.
func VerifyPKCS1v15(k *rsa.PublicKey, h crypto.Hash, digest, sig []byte) error {
	if err := usable(k); err != nil {
		return err
	}
	if !small(k) {
		return rsa.VerifyPKCS1v15(k, h, digest, sig)
	}
	if len(sig) != k.Size() {
		return ErrVerification
	}
	em, err := Public(k, sig)
	if err != nil {
		return ErrVerification
	}
	want, err := pkcs1v15EM(k.Size(), h, digest)
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(em, want) != 1 {
		return ErrVerification
	}
	return nil
}

// pssHash is H = Hash(0x00*8 || mHash || salt).
func pssHash(h crypto.Hash, digest, salt []byte) []byte {
	d := h.New()
	d.Write(make([]byte, 8))
	d.Write(digest)
	d.Write(salt)
	return d.Sum(nil)
}

// SignPSS signs digest with RSASSA-PSS (MGF1 with h) and a salt of
// saltLen bytes, SaltLengthDigest or SaltLengthMax. crypto/rsa signs for
// long keys unless saltLen is 0, which it reads as "automatic".
func SignPSS(random io.Reader, k *rsa.PrivateKey, h crypto.Hash, digest []byte, saltLen int) ([]byte, error) {
	if err := usable(&k.PublicKey); err != nil {
		return nil, err
	}
	if !h.Available() {
		return nil, ErrHash
	}
	if saltLen < SaltLengthMax {
		return nil, ErrDataTooLarge
	}
	if !small(&k.PublicKey) && saltLen != 0 {
		return rsa.SignPSS(random, k, h, digest, &rsa.PSSOptions{SaltLength: goSalt(saltLen)})
	}
	hLen := h.Size()
	emBits := k.N.BitLen() - 1
	emLen := (emBits + 7) / 8
	if len(digest) != hLen {
		return nil, ErrDataTooLarge
	}
	switch saltLen {
	case SaltLengthDigest:
		saltLen = hLen
	case SaltLengthMax:
		saltLen = emLen - hLen - 2
	}
	if saltLen < 0 || emLen < hLen+saltLen+2 {
		return nil, ErrDataTooLarge
	}
	salt := make([]byte, saltLen)
	if _, err := io.ReadFull(random, salt); err != nil {
		return nil, err
	}
	em := make([]byte, emLen)
	db := em[:emLen-hLen-1]
	db[len(db)-saltLen-1] = 1
	copy(db[len(db)-saltLen:], salt)
	hh := pssHash(h, digest, salt)
	mgf1XOR(db, h, hh)
	db[0] &= 0xff >> (8*emLen - emBits)
	copy(em[emLen-hLen-1:], hh)
	em[emLen-1] = 0xbc
	return private(random, k, em)
}

// goSalt maps Node's salt lengths to crypto/rsa's.
func goSalt(saltLen int) int {
	switch saltLen {
	case SaltLengthDigest:
		return rsa.PSSSaltLengthEqualsHash
	case SaltLengthMax:
		return rsa.PSSSaltLengthAuto
	}
	return saltLen
}

// VerifyPSS checks an RSASSA-PSS signature of digest whose salt is
// saltLen bytes long, SaltLengthDigest, or SaltLengthMax for any length.
func VerifyPSS(k *rsa.PublicKey, h crypto.Hash, digest, sig []byte, saltLen int) error {
	if err := usable(k); err != nil {
		return err
	}
	if !h.Available() {
		return ErrHash
	}
	if !small(k) && saltLen != 0 {
		return rsa.VerifyPSS(k, h, digest, sig, &rsa.PSSOptions{SaltLength: goSalt(saltLen)})
	}
	hLen := h.Size()
	if len(sig) != k.Size() || len(digest) != hLen {
		return ErrVerification
	}
	if saltLen == SaltLengthDigest {
		saltLen = hLen
	}
	m, err := Public(k, sig)
	if err != nil {
		return ErrVerification
	}
	emBits := k.N.BitLen() - 1
	emLen := (emBits + 7) / 8
	// With emBits a multiple of 8 the block has one leading zero byte
	// more than the encoded message.
	for _, b := range m[:len(m)-emLen] {
		if b != 0 {
			return ErrVerification
		}
	}
	em := m[len(m)-emLen:]
	if emLen < hLen+2 || em[emLen-1] != 0xbc || em[0]&^(0xff>>(8*emLen-emBits)) != 0 {
		return ErrVerification
	}
	db := bytes.Clone(em[:emLen-hLen-1])
	hh := em[emLen-hLen-1 : emLen-1]
	mgf1XOR(db, h, hh)
	db[0] &= 0xff >> (8*emLen - emBits)
	one := bytes.IndexByte(db, 1)
	if one < 0 {
		return ErrVerification
	}
	for _, b := range db[:one] {
		if b != 0 {
			return ErrVerification
		}
	}
	salt := db[one+1:]
	if saltLen >= 0 && len(salt) != saltLen {
		return ErrVerification
	}
	if subtle.ConstantTimeCompare(hh, pssHash(h, digest, salt)) != 1 {
		return ErrVerification
	}
	return nil
}

// EncryptOAEP encrypts msg with RSAES-OAEP, h being both the label's
// hash and MGF1's (as in Node, which sets oaepHash for both).
func EncryptOAEP(h crypto.Hash, random io.Reader, k *rsa.PublicKey, msg, label []byte) ([]byte, error) {
	if err := usable(k); err != nil {
		return nil, err
	}
	if !h.Available() {
		return nil, ErrHash
	}
	if !small(k) {
		return rsa.EncryptOAEP(h.New(), random, k, msg, label)
	}
	size, hLen := k.Size(), h.Size()
	if len(msg) > size-2*hLen-2 {
		return nil, ErrDataTooLarge
	}
	em := make([]byte, size)
	seed, db := em[1:1+hLen], em[1+hLen:]
	lh := h.New()
	lh.Write(label)
	copy(db, lh.Sum(nil))
	db[len(db)-len(msg)-1] = 1
	copy(db[len(db)-len(msg):], msg)
	if _, err := io.ReadFull(random, seed); err != nil {
		return nil, err
	}
	mgf1XOR(db, h, seed)
	mgf1XOR(seed, h, db)
	return Public(k, em)
}

// DecryptOAEP decrypts an RSAES-OAEP ciphertext made with EncryptOAEP's
// conventions. Every malformed block gives the same ErrDecryption.
func DecryptOAEP(h crypto.Hash, random io.Reader, k *rsa.PrivateKey, ct, label []byte) ([]byte, error) {
	if err := usable(&k.PublicKey); err != nil {
		return nil, err
	}
	if !h.Available() {
		return nil, ErrHash
	}
	if !small(&k.PublicKey) {
		return rsa.DecryptOAEP(h.New(), random, k, ct, label)
	}
	size, hLen := k.Size(), h.Size()
	if len(ct) != size || size < 2*hLen+2 {
		return nil, ErrDecryption
	}
	em, err := private(random, k, ct)
	if err != nil {
		return nil, ErrDecryption
	}
	seed, db := em[1:1+hLen], em[1+hLen:]
	mgf1XOR(seed, h, db)
	mgf1XOR(db, h, seed)
	lh := h.New()
	lh.Write(label)
	good := subtle.ConstantTimeByteEq(em[0], 0) & subtle.ConstantTimeCompare(db[:hLen], lh.Sum(nil))
	// The message starts after the first 01 that follows the zero padding.
	rest := db[hLen:]
	idx, found, invalid := 0, 0, 0
	for i, b := range rest {
		isOne, isZero := subtle.ConstantTimeByteEq(b, 1), subtle.ConstantTimeByteEq(b, 0)
		idx = subtle.ConstantTimeSelect(isOne&^found, i, idx)
		invalid |= ^found & ^isZero & ^isOne & 1
		found |= isOne
	}
	if good&found&^invalid&1 != 1 {
		return nil, ErrDecryption
	}
	return bytes.Clone(rest[idx+1:]), nil
}
