// Package keyenc encrypts and decrypts private keys with a passphrase as
// OpenSSL (and so Node) does: PKCS #8 EncryptedPrivateKeyInfo with PBES2
// (PBKDF2 and a CBC cipher, RFC 8018), and the legacy PEM encryption of
// PKCS #1 and SEC 1 keys ("Proc-Type: 4,ENCRYPTED" with "DEK-Info", key
// from EVP_BytesToKey with MD5). It works on bytes only (no V8).
//
// Decryption runs PBKDF2 with the iteration count the encrypted key
// names, which a guest controls: Cost reports that work before it is
// done, so that the caller can bound it and charge it.
package keyenc

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// Errors, each of which Node reports in its own way.
var (
	// ErrUnknownCipher: a cipher this package cannot encrypt keys with.
	ErrUnknownCipher = errors.New("keyenc: unknown cipher")
	// ErrBadDecrypt: the passphrase is wrong (or the data damaged).
	ErrBadDecrypt = errors.New("keyenc: bad decrypt")
	// ErrUnsupported: an encryption scheme this package does not read.
	ErrUnsupported = errors.New("keyenc: unsupported encryption")
	// ErrMalformed: the encrypted key is not well formed.
	ErrMalformed = errors.New("keyenc: malformed encrypted key")
)

// DefaultIterations is OpenSSL 3's PBKDF2 iteration count for PKCS #8.
const DefaultIterations = 2048

// cbcCipher is a CBC cipher a key may be encrypted with.
type cbcCipher struct {
	name    string // OpenSSL's name, lower case
	keyLen  int
	oid     asn1.ObjectIdentifier
	newBlk  func([]byte) (cipher.Block, error)
	blkSize int
}

var ciphers = []cbcCipher{
	{"aes-128-cbc", 16, asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}, aes.NewCipher, aes.BlockSize},
	{"aes-192-cbc", 24, asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}, aes.NewCipher, aes.BlockSize},
	{"aes-256-cbc", 32, asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}, aes.NewCipher, aes.BlockSize},
	{"des-ede3-cbc", 24, asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}, des.NewTripleDESCipher, des.BlockSize},
}

// cipherByName accepts OpenSSL's names and aliases in any case.
func cipherByName(name string) (cbcCipher, bool) {
	n := strings.ToLower(name)
	switch n {
	case "aes128":
		n = "aes-128-cbc"
	case "aes192":
		n = "aes-192-cbc"
	case "aes256":
		n = "aes-256-cbc"
	case "des3":
		n = "des-ede3-cbc"
	}
	for _, c := range ciphers {
		if c.name == n {
			return c, true
		}
	}
	return cbcCipher{}, false
}

// KnownCipher reports whether name is a cipher keys can be encrypted
// with here.
func KnownCipher(name string) bool {
	_, ok := cipherByName(name)
	return ok
}

var (
	oidPBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
)

// prfs are PBKDF2's pseudo-random functions by OID (hmacWithSHA*).
var prfs = []struct {
	oid asn1.ObjectIdentifier
	h   func() hash.Hash
}{
	{asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}, sha1.New},
	{asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}, sha256.New224},
	{asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}, sha256.New},
	{asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}, sha512.New384},
	{asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}, sha512.New},
}

type encryptedPrivateKeyInfo struct {
	Algo          pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KDF    pkix.AlgorithmIdentifier
	Scheme pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// EncryptPKCS8 wraps the PKCS #8 der in an EncryptedPrivateKeyInfo as
// OpenSSL 3 writes one: PBES2, PBKDF2 with hmacWithSHA256, an 8-byte salt
// and 2048 iterations, and the named CBC cipher.
func EncryptPKCS8(rand io.Reader, der []byte, cipherName string, pass []byte) ([]byte, error) {
	c, ok := cipherByName(cipherName)
	if !ok {
		return nil, ErrUnknownCipher
	}
	salt := make([]byte, 8) // OpenSSL's PKCS5_SALT_LEN
	iv := make([]byte, c.blkSize)
	if _, err := io.ReadFull(rand, salt); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(rand, iv); err != nil {
		return nil, err
	}
	key, err := pbkdf2.Key(sha256.New, string(pass), salt, DefaultIterations, c.keyLen)
	if err != nil {
		return nil, err
	}
	ct, err := cbcEncrypt(c, key, iv, der)
	if err != nil {
		return nil, err
	}
	null := asn1.RawValue{FullBytes: []byte{5, 0}}
	kdf, err := asn1.Marshal(pbkdf2Params{Salt: salt, Iterations: DefaultIterations,
		PRF: pkix.AlgorithmIdentifier{Algorithm: prfs[2].oid, Parameters: null}})
	if err != nil {
		return nil, err
	}
	ivDER, err := asn1.Marshal(iv)
	if err != nil {
		return nil, err
	}
	params, err := asn1.Marshal(pbes2Params{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdf}},
		Scheme: pkix.AlgorithmIdentifier{Algorithm: c.oid, Parameters: asn1.RawValue{FullBytes: ivDER}},
	})
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(encryptedPrivateKeyInfo{
		Algo:          pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: params}},
		EncryptedData: ct,
	})
}

// PKCS8Decrypter is a parsed EncryptedPrivateKeyInfo, ready to decrypt.
type PKCS8Decrypter struct {
	c          cbcCipher
	prf        func() hash.Hash
	salt, iv   []byte
	iterations int
	data       []byte
}

// IsEncryptedPKCS8 reports whether der looks like an
// EncryptedPrivateKeyInfo (of any scheme).
func IsEncryptedPKCS8(der []byte) bool {
	var e encryptedPrivateKeyInfo
	rest, err := asn1.Unmarshal(der, &e)
	return err == nil && len(rest) == 0 && len(e.EncryptedData) > 0 && len(e.Algo.Algorithm) > 0
}

// ParsePKCS8 reads an EncryptedPrivateKeyInfo. Only PBES2 with PBKDF2
// and the CBC ciphers above is read (what OpenSSL 3 and Node write).
func ParsePKCS8(der []byte) (*PKCS8Decrypter, error) {
	var e encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &e); err != nil || len(rest) != 0 {
		return nil, ErrMalformed
	}
	if !e.Algo.Algorithm.Equal(oidPBES2) {
		return nil, ErrUnsupported
	}
	var p pbes2Params
	if rest, err := asn1.Unmarshal(e.Algo.Parameters.FullBytes, &p); err != nil || len(rest) != 0 {
		return nil, ErrMalformed
	}
	if !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, ErrUnsupported
	}
	var k pbkdf2Params
	if rest, err := asn1.Unmarshal(p.KDF.Parameters.FullBytes, &k); err != nil || len(rest) != 0 || k.Iterations < 1 {
		return nil, ErrMalformed
	}
	d := &PKCS8Decrypter{salt: k.Salt, iterations: k.Iterations, data: e.EncryptedData}
	d.prf = sha1.New // PBKDF2's default PRF
	if len(k.PRF.Algorithm) > 0 {
		d.prf = nil
		for _, p := range prfs {
			if p.oid.Equal(k.PRF.Algorithm) {
				d.prf = p.h
			}
		}
		if d.prf == nil {
			return nil, ErrUnsupported
		}
	}
	found := false
	for _, c := range ciphers {
		if c.oid.Equal(p.Scheme.Algorithm) {
			d.c, found = c, true
		}
	}
	if !found {
		return nil, ErrUnsupported
	}
	if k.KeyLength != 0 && k.KeyLength != d.c.keyLen {
		return nil, ErrMalformed
	}
	if rest, err := asn1.Unmarshal(p.Scheme.Parameters.FullBytes, &d.iv); err != nil || len(rest) != 0 || len(d.iv) != d.c.blkSize {
		return nil, ErrMalformed
	}
	if len(d.data) == 0 || len(d.data)%d.c.blkSize != 0 {
		return nil, ErrMalformed
	}
	return d, nil
}

// Cost is PBKDF2's work for this key: iterations times output blocks.
func (d *PKCS8Decrypter) Cost() int64 {
	size := d.prf().Size()
	return int64(d.iterations) * int64((d.c.keyLen+size-1)/size)
}

// Decrypt gives the PKCS #8 PrivateKeyInfo inside.
func (d *PKCS8Decrypter) Decrypt(pass []byte) ([]byte, error) {
	key, err := pbkdf2.Key(d.prf, string(pass), d.salt, d.iterations, d.c.keyLen)
	if err != nil {
		return nil, ErrMalformed
	}
	return cbcDecrypt(d.c, key, d.iv, d.data)
}

// EncryptPEM is the legacy PEM encryption of der (a PKCS #1 or SEC 1
// key) under label, as OpenSSL writes it.
func EncryptPEM(rand io.Reader, label string, der []byte, cipherName string, pass []byte) (*pem.Block, error) {
	c, ok := cipherByName(cipherName)
	if !ok {
		return nil, ErrUnknownCipher
	}
	iv := make([]byte, c.blkSize)
	if _, err := io.ReadFull(rand, iv); err != nil {
		return nil, err
	}
	ct, err := cbcEncrypt(c, bytesToKey(pass, iv[:8], c.keyLen), iv, der)
	if err != nil {
		return nil, err
	}
	return &pem.Block{Type: label, Headers: map[string]string{
		"Proc-Type": "4,ENCRYPTED",
		"DEK-Info":  strings.ToUpper(c.name) + "," + strings.ToUpper(hex.EncodeToString(iv)),
	}, Bytes: ct}, nil
}

// IsEncryptedPEM reports whether b carries the legacy encryption headers.
func IsEncryptedPEM(b *pem.Block) bool {
	_, ok := b.Headers["Proc-Type"]
	return ok && strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED")
}

// DecryptPEM undoes EncryptPEM (the key derivation is one MD5 round:
// there is no work to bound).
func DecryptPEM(b *pem.Block, pass []byte) ([]byte, error) {
	info := b.Headers["DEK-Info"]
	name, ivHex, ok := strings.Cut(info, ",")
	if !ok {
		return nil, ErrMalformed
	}
	c, ok := cipherByName(name)
	if !ok {
		return nil, ErrUnsupported
	}
	iv, err := hex.DecodeString(ivHex)
	if err != nil || len(iv) != c.blkSize {
		return nil, ErrMalformed
	}
	if len(b.Bytes) == 0 || len(b.Bytes)%c.blkSize != 0 {
		return nil, ErrBadDecrypt
	}
	return cbcDecrypt(c, bytesToKey(pass, iv[:8], c.keyLen), iv, b.Bytes)
}

// bytesToKey is OpenSSL's EVP_BytesToKey with MD5 and one iteration.
func bytesToKey(pass, salt []byte, n int) []byte {
	var key, prev []byte
	for len(key) < n {
		h := md5.New()
		h.Write(prev)
		h.Write(pass)
		h.Write(salt)
		prev = h.Sum(nil)
		key = append(key, prev...)
	}
	return key[:n]
}

func cbcEncrypt(c cbcCipher, key, iv, plain []byte) ([]byte, error) {
	blk, err := c.newBlk(key)
	if err != nil {
		return nil, fmt.Errorf("keyenc: %w", err)
	}
	pad := c.blkSize - len(plain)%c.blkSize
	buf := append(append([]byte(nil), plain...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	cipher.NewCBCEncrypter(blk, iv).CryptBlocks(buf, buf)
	return buf, nil
}

func cbcDecrypt(c cbcCipher, key, iv, ct []byte) ([]byte, error) {
	blk, err := c.newBlk(key)
	if err != nil {
		return nil, ErrMalformed
	}
	buf := make([]byte, len(ct))
	cipher.NewCBCDecrypter(blk, iv).CryptBlocks(buf, ct)
	pad := int(buf[len(buf)-1])
	if pad == 0 || pad > c.blkSize {
		return nil, ErrBadDecrypt
	}
	want := bytes.Repeat([]byte{byte(pad)}, pad)
	if !hmac.Equal(buf[len(buf)-pad:], want) {
		return nil, ErrBadDecrypt
	}
	return buf[:len(buf)-pad], nil
}
