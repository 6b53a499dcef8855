package ncrypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/secexec/secexec/kernel/errno"
)

// cipherSpec describes one cipher name Node (OpenSSL) knows and we run.
type cipherSpec struct {
	mode   string // cbc, ecb, ctr, cfb, ofb, gcm, chacha20, chacha20-poly1305
	keyLen int
	ivLen  int // -1: any length from 1 (GCM)
	// des: Triple DES (EDE; a 16-byte key is two-key EDE), in the block
	// modes only; otherwise AES.
	des bool
}

// blockSize is the cipher's block size for the block modes.
func (s cipherSpec) blockSize() int {
	if s.des || s.mode == "wrap" || s.mode == "wrappad" {
		return des.BlockSize
	}
	return aes.BlockSize
}

// newBlock returns the block cipher of spec with key.
func newBlock(spec cipherSpec, key []byte) (cipher.Block, error) {
	if !spec.des {
		return aes.NewCipher(key)
	}
	if len(key) == 16 {
		key = append(append(make([]byte, 0, 24), key...), key[:8]...)
	}
	return des.NewTripleDESCipher(key)
}

var cipherSpecs = func() map[string]cipherSpec {
	m := map[string]cipherSpec{
		"chacha20":          {"chacha20", 32, 16, false},
		"chacha20-poly1305": {"chacha20-poly1305", 32, 12, false},
	}
	for _, bits := range []int{128, 192, 256} {
		k := bits / 8
		p := fmt.Sprintf("aes-%d-", bits)
		m[p+"cbc"] = cipherSpec{"cbc", k, 16, false}
		m[p+"ecb"] = cipherSpec{"ecb", k, 0, false}
		m[p+"ctr"] = cipherSpec{"ctr", k, 16, false}
		m[p+"cfb"] = cipherSpec{"cfb", k, 16, false}
		m[p+"ofb"] = cipherSpec{"ofb", k, 16, false}
		m[p+"gcm"] = cipherSpec{"gcm", k, -1, false}
		m[fmt.Sprintf("aes%d", bits)] = cipherSpec{"cbc", k, 16, false}
		m[fmt.Sprintf("id-aes%d-gcm", bits)] = cipherSpec{"gcm", k, -1, false}
		// AES key wrap: RFC 3394 (the IV is the 8-byte initial value) and
		// RFC 5649 with padding (the IV is the 4-byte prefix).
		m[fmt.Sprintf("id-aes%d-wrap", bits)] = cipherSpec{"wrap", k, 8, false}
		m[fmt.Sprintf("aes%d-wrap", bits)] = cipherSpec{"wrap", k, 8, false}
		m[fmt.Sprintf("id-aes%d-wrap-pad", bits)] = cipherSpec{"wrappad", k, 4, false}
		m[fmt.Sprintf("aes%d-wrap-pad", bits)] = cipherSpec{"wrappad", k, 4, false}
	}
	// The Triple DES ciphers OpenSSL 3's default provider has (single DES
	// is legacy).
	for _, n := range []string{"des-ede3-cbc", "des3"} {
		m[n] = cipherSpec{"cbc", 24, 8, true}
	}
	for _, n := range []string{"des-ede3", "des-ede3-ecb"} {
		m[n] = cipherSpec{"ecb", 24, 0, true}
	}
	m["des-ede-cbc"] = cipherSpec{"cbc", 16, 8, true}
	for _, n := range []string{"des-ede", "des-ede-ecb"} {
		m[n] = cipherSpec{"ecb", 16, 0, true}
	}
	return m
}()

// CipherStateLen is the fixed part of a cipher's state. A cipher keeps
// no state in Go between calls: the caller (JavaScript) holds the key and
// an opaque state string (chaining block, keystream position, held back
// input) and passes both with each update, so an abandoned cipher object
// costs the host nothing. For AEAD modes JavaScript also keeps the AAD
// and the plaintext, from which the tag is computed at the end.
//
// State layout: chain[16] ks[16] pos[1] ctr[4] cpos[1] part[0..16].
//   - chain: CBC's previous block; the counter block (CTR, GCM); CFB's
//     register.
//   - ks, pos: the current keystream block and how much of it is used
//     (CTR, GCM, CFB, OFB; OFB's feedback is ks itself).
//   - ctr, cpos: ChaCha20's block counter and the bytes used of its block.
//   - part: input held back by the block modes (CBC, ECB).
const CipherStateLen = 16 + 16 + 1 + 4 + 1

type cipherRun struct {
	spec  cipherSpec
	dec   bool
	chain [16]byte
	ks    [16]byte
	pos   int
	ctr   uint32
	cpos  int
	part  []byte
}

func (c *cipherRun) marshal() []byte {
	b := make([]byte, CipherStateLen, CipherStateLen+len(c.part))
	copy(b[0:16], c.chain[:])
	copy(b[16:32], c.ks[:])
	b[32] = byte(c.pos)
	binary.BigEndian.PutUint32(b[33:37], c.ctr)
	b[37] = byte(c.cpos)
	return append(b, c.part...)
}

func unmarshalCipher(spec cipherSpec, dec bool, b []byte) (*cipherRun, error) {
	if len(b) < CipherStateLen || len(b) > CipherStateLen+16 || b[32] > 16 || b[37] > 63 {
		return nil, errno.EINVAL
	}
	c := &cipherRun{spec: spec, dec: dec}
	copy(c.chain[:], b[0:16])
	copy(c.ks[:], b[16:32])
	c.pos = int(b[32])
	c.ctr = binary.BigEndian.Uint32(b[33:37])
	c.cpos = int(b[37])
	c.part = append([]byte(nil), b[CipherStateLen:]...)
	return c, nil
}

func lookupCipher(name string) (cipherSpec, error) {
	spec, ok := cipherSpecs[strings.ToLower(name)]
	if !ok {
		return spec, newError("ERR_CRYPTO_UNKNOWN_CIPHER", "")
	}
	return spec, nil
}

func isAEAD(mode string) bool { return mode == "gcm" || mode == "chacha20-poly1305" }

// initCipher checks key and IV and returns the cipher's first state.
func initCipher(spec cipherSpec, dec bool, key, iv []byte) (*cipherRun, error) {
	if len(key) != spec.keyLen {
		return nil, newError("ERR_CRYPTO_INVALID_KEYLEN", "")
	}
	if (spec.ivLen >= 0 && len(iv) != spec.ivLen) || (spec.ivLen < 0 && (len(iv) == 0 || len(iv) > maxCryptoIV)) {
		return nil, newError("ERR_CRYPTO_INVALID_IV", "")
	}
	c := &cipherRun{spec: spec, dec: dec, pos: 16}
	switch spec.mode {
	case "chacha20":
		// OpenSSL's IV: a 32-bit little-endian counter, then the nonce.
		c.ctr = binary.LittleEndian.Uint32(iv[:4])
		copy(c.chain[:12], iv[4:])
	case "chacha20-poly1305":
		c.ctr = 1
		copy(c.chain[:12], iv)
	case "cbc", "ctr", "cfb", "wrap", "wrappad":
		copy(c.chain[:], iv)
	case "ofb":
		copy(c.ks[:], iv)
	case "gcm":
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, newError("ERR_CRYPTO_INVALID_KEYLEN", "")
		}
		g, err := cipher.NewGCMWithNonceSize(b, len(iv))
		if err != nil {
			return nil, newError("ERR_CRYPTO_INVALID_IV", "")
		}
		// The first counter block, inc32(J0), is what GCM encrypts the
		// first plaintext block with: seal one zero block and undo the
		// block cipher on it. This also covers IVs that are not 96 bits
		// long, whose J0 is a GHASH of the IV.
		var zero [16]byte
		ct := g.Seal(nil, iv, zero[:], nil)
		b.Decrypt(c.chain[:], ct[:16])
	}
	return c, nil
}

// maxCryptoIV bounds GCM's IV (any length is valid; OpenSSL takes up to
// 2^61 bits, which no one uses).
const maxCryptoIV = 1024

// keystream XORs src into dst with the counter (CTR: 128-bit increment;
// GCM: 32-bit), CFB or OFB keystream.
func (c *cipherRun) keystream(b cipher.Block, dst, src []byte) {
	for i := 0; i < len(src); {
		if c.pos == 16 {
			switch c.spec.mode {
			case "ofb":
				b.Encrypt(c.ks[:], c.ks[:])
			case "cfb":
				b.Encrypt(c.ks[:], c.chain[:])
			default:
				b.Encrypt(c.ks[:], c.chain[:])
				if c.spec.mode == "gcm" {
					binary.BigEndian.PutUint32(c.chain[12:], binary.BigEndian.Uint32(c.chain[12:])+1)
				} else {
					for j := 15; j >= 0; j-- {
						c.chain[j]++
						if c.chain[j] != 0 {
							break
						}
					}
				}
			}
			c.pos = 0
		}
		if c.spec.mode == "cfb" {
			in := src[i]
			out := in ^ c.ks[c.pos]
			dst[i] = out
			if c.dec {
				c.chain[c.pos] = in
			} else {
				c.chain[c.pos] = out
			}
			c.pos++
			i++
			continue
		}
		n := subtle.XORBytes(dst[i:], src[i:], c.ks[c.pos:])
		c.pos += n
		i += n
	}
}

var errChaChaCounter = newError("ERR_OUT_OF_RANGE", "ChaCha20 block counter overflow")

func (c *cipherRun) chacha(key, dst, src []byte) error {
	// The 32-bit block counter must not wrap (x/crypto panics when it
	// would; OpenSSL would carry into the nonce).
	if need := (uint64(c.cpos) + uint64(len(src)) + 63) / 64; uint64(c.ctr)+need > 1<<32 {
		return errChaChaCounter
	}
	s, err := chacha20.NewUnauthenticatedCipher(key, c.chain[:12])
	if err != nil {
		return errno.EINVAL
	}
	s.SetCounter(c.ctr)
	if c.cpos > 0 {
		var skip [64]byte
		s.XORKeyStream(skip[:c.cpos], skip[:c.cpos])
	}
	s.XORKeyStream(dst, src)
	total := uint64(c.cpos) + uint64(len(src))
	c.ctr += uint32(total / 64)
	c.cpos = int(total % 64)
	return nil
}

// run processes in; with final, it also ends the cipher (padding for the
// block modes). pad is setAutoPadding's value.
func (c *cipherRun) run(key, in []byte, pad, final bool) ([]byte, error) {
	switch c.spec.mode {
	case "chacha20", "chacha20-poly1305":
		out := make([]byte, len(in))
		if err := c.chacha(key, out, in); err != nil {
			return nil, err
		}
		return out, nil
	}
	b, err := newBlock(c.spec, key)
	if err != nil {
		return nil, newError("ERR_CRYPTO_INVALID_KEYLEN", "")
	}
	switch c.spec.mode {
	case "ctr", "gcm", "cfb", "ofb":
		out := make([]byte, len(in))
		c.keystream(b, out, in)
		return out, nil
	case "wrap", "wrappad":
		// As OpenSSL, each update wraps or unwraps its whole input; the
		// end adds nothing.
		if len(in) == 0 {
			return nil, nil
		}
		return c.wrap(b, in)
	}
	// Block modes: as OpenSSL, a decrypting cipher with padding holds
	// back the last whole block, which final unpads.
	bs := c.spec.blockSize()
	data := append(c.part, in...)
	keep := len(data) % bs
	if c.dec && pad && keep == 0 && len(data) > 0 {
		keep = bs
	}
	n := len(data) - keep
	out := make([]byte, n, n+bs)
	c.blocks(b, out, data[:n])
	c.part = append([]byte(nil), data[n:]...)
	if !final {
		return out, nil
	}
	last, err := c.finish(b, pad)
	if err != nil {
		return nil, err
	}
	return append(out, last...), nil
}

func (c *cipherRun) blocks(b cipher.Block, dst, src []byte) {
	if len(src) == 0 {
		return
	}
	bs := b.BlockSize()
	if c.spec.mode == "cbc" {
		var m cipher.BlockMode
		if c.dec {
			m = cipher.NewCBCDecrypter(b, c.chain[:bs])
		} else {
			m = cipher.NewCBCEncrypter(b, c.chain[:bs])
		}
		m.CryptBlocks(dst, src)
		if c.dec {
			copy(c.chain[:bs], src[len(src)-bs:])
		} else {
			copy(c.chain[:bs], dst[len(dst)-bs:])
		}
		return
	}
	for i := 0; i < len(src); i += bs {
		if c.dec {
			b.Decrypt(dst[i:i+bs], src[i:i+bs])
		} else {
			b.Encrypt(dst[i:i+bs], src[i:i+bs])
		}
	}
}

// errWrapState is OpenSSL's refusal of key-wrap input it cannot take
// (Node gives it no code).
var errWrapState error = &OpenSSLError{Message: "Trying to add data in unsupported state"}

// wrap runs RFC 3394 key wrap (RFC 5649 with padding for wrappad) over
// in, with the IV kept in chain.
func (c *cipherRun) wrap(b cipher.Block, in []byte) ([]byte, error) {
	if len(in) > maxWrapInput {
		return nil, errWrapState
	}
	if c.spec.mode == "wrappad" {
		return c.wrapPad(b, in)
	}
	if len(in)%8 != 0 || len(in) < 16 || (c.dec && len(in) < 24) {
		return nil, errWrapState
	}
	if !c.dec {
		return kwWrap(b, c.chain[:8], in), nil
	}
	a, r := kwUnwrap(b, in)
	if subtle.ConstantTimeCompare(a, c.chain[:8]) != 1 {
		return nil, errWrapState
	}
	return r, nil
}

func (c *cipherRun) wrapPad(b cipher.Block, in []byte) ([]byte, error) {
	if !c.dec {
		aiv := make([]byte, 8)
		copy(aiv, c.chain[:4])
		binary.BigEndian.PutUint32(aiv[4:], uint32(len(in)))
		p := make([]byte, (len(in)+7)/8*8)
		copy(p, in)
		if len(p) == 8 {
			out := make([]byte, 16)
			b.Encrypt(out, append(aiv, p...))
			return out, nil
		}
		return kwWrap(b, aiv, p), nil
	}
	if len(in)%8 != 0 || len(in) < 16 {
		return nil, errWrapState
	}
	var a, p []byte
	if len(in) == 16 {
		blk := make([]byte, 16)
		b.Decrypt(blk, in)
		a, p = blk[:8], blk[8:]
	} else {
		a, p = kwUnwrap(b, in)
	}
	mli := int(binary.BigEndian.Uint32(a[4:]))
	if subtle.ConstantTimeCompare(a[:4], c.chain[:4]) != 1 || mli <= len(p)-8 || mli > len(p) {
		return nil, errWrapState
	}
	for _, x := range p[mli:] {
		if x != 0 {
			return nil, errWrapState
		}
	}
	return p[:mli], nil
}

// maxWrapInput bounds one key-wrap call (the keys it is meant for are
// tens of bytes; RFC 5649's length field has 32 bits).
const maxWrapInput = 1 << 24

// kwWrap is RFC 3394's wrapping of p (a multiple of 8 bytes, two blocks
// or more) with initial value a.
func kwWrap(b cipher.Block, a, p []byte) []byte {
	n := len(p) / 8
	out := make([]byte, 8+len(p))
	copy(out[8:], p)
	var blk [16]byte
	copy(blk[:8], a)
	for j := 0; j < 6; j++ {
		for i := 1; i <= n; i++ {
			copy(blk[8:], out[8*i:8*i+8])
			b.Encrypt(blk[:], blk[:])
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(blk[:8], binary.BigEndian.Uint64(blk[:8])^t)
			copy(out[8*i:8*i+8], blk[8:])
		}
	}
	copy(out[:8], blk[:8])
	return out
}

// kwUnwrap undoes kwWrap, returning the initial value and the data.
func kwUnwrap(b cipher.Block, c []byte) ([]byte, []byte) {
	n := len(c)/8 - 1
	r := make([]byte, len(c)-8)
	copy(r, c[8:])
	var blk [16]byte
	copy(blk[:8], c[:8])
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(blk[:8], binary.BigEndian.Uint64(blk[:8])^t)
			copy(blk[8:], r[8*(i-1):8*i])
			b.Decrypt(blk[:], blk[:])
			copy(r[8*(i-1):8*i], blk[8:])
		}
	}
	return append([]byte(nil), blk[:8]...), r
}

// finish ends a block mode: the padded last block, or the unpadded one.
func (c *cipherRun) finish(b cipher.Block, pad bool) ([]byte, error) {
	if !pad {
		if len(c.part) != 0 {
			return nil, errWrongFinalBlock
		}
		return nil, nil
	}
	bs := b.BlockSize()
	out := make([]byte, bs)
	if !c.dec {
		k := bs - len(c.part)
		blk := append(c.part, make([]byte, k)...)
		for i := bs - k; i < bs; i++ {
			blk[i] = byte(k)
		}
		c.blocks(b, out, blk)
		return out, nil
	}
	if len(c.part) != bs {
		return nil, errWrongFinalBlock
	}
	c.blocks(b, out, c.part)
	k := int(out[bs-1])
	if k < 1 || k > bs {
		return nil, errBadDecrypt
	}
	for _, x := range out[bs-k:] {
		if int(x) != k {
			return nil, errBadDecrypt
		}
	}
	return out[:bs-k], nil
}

// aeadTag computes the (full, 16-byte) tag of plaintext plain with aad.
func aeadTag(spec cipherSpec, key, iv, aad, plain []byte) ([]byte, error) {
	var a cipher.AEAD
	switch spec.mode {
	case "gcm":
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, newError("ERR_CRYPTO_INVALID_KEYLEN", "")
		}
		if len(iv) == 0 || len(iv) > maxCryptoIV {
			return nil, newError("ERR_CRYPTO_INVALID_IV", "")
		}
		a, err = cipher.NewGCMWithNonceSize(b, len(iv))
		if err != nil {
			return nil, newError("ERR_CRYPTO_INVALID_IV", "")
		}
	case "chacha20-poly1305":
		var err error
		a, err = chacha20poly1305.New(key)
		if err != nil || len(iv) != a.NonceSize() {
			return nil, newError("ERR_CRYPTO_INVALID_IV", "")
		}
	default:
		return nil, errno.EINVAL
	}
	sealed := a.Seal(nil, iv, plain, aad)
	return sealed[len(plain):], nil
}

// CipherInfo describes the cipher Node names name: its mode (cbc, ecb,
// ctr, cfb, ofb, gcm, wrap, wrappad, chacha20, chacha20-poly1305), key
// and IV length (-1: any IV length from 1, GCM) and block size.
func CipherInfo(name string) (mode string, keyLen, ivLen, blockSize int, err error) {
	spec, err := lookupCipher(name)
	if err != nil {
		return "", 0, 0, 0, err
	}
	return spec.mode, spec.keyLen, spec.ivLen, spec.blockSize(), nil
}

// CipherInit checks key and IV for the cipher name and returns its first
// state, which the caller keeps and passes to CipherUpdate.
func CipherInit(name string, decrypt bool, key, iv []byte) ([]byte, error) {
	spec, err := lookupCipher(name)
	if err != nil {
		return nil, err
	}
	c, err := initCipher(spec, decrypt, key, iv)
	if err != nil {
		return nil, err
	}
	return c.marshal(), nil
}

// CipherUpdate runs the cipher name with key from state over data
// (ending it, with the padding of autoPadding, when final is set) and
// returns the new state and the output. A state not made by CipherInit
// or CipherUpdate for the same cipher is EINVAL or garbage out, never a
// panic.
func CipherUpdate(name string, decrypt, autoPadding, final bool, key, state, data []byte) (newState, out []byte, err error) {
	spec, err := lookupCipher(name)
	if err != nil {
		return nil, nil, err
	}
	if len(key) != spec.keyLen {
		return nil, nil, errno.EINVAL
	}
	c, err := unmarshalCipher(spec, decrypt, state)
	if err != nil {
		return nil, nil, err
	}
	out, err = c.run(key, data, autoPadding, final)
	if err != nil {
		return nil, nil, err
	}
	return c.marshal(), out, nil
}

// AEADTag computes the (full, 16-byte) tag of the AEAD cipher name from
// the key, IV, AAD and plaintext in operands 0 to 3.
func (s *State) AEADTag(name string) ([]byte, error) {
	key, iv, aad, plain := s.take(0), s.take(1), s.take(2), s.take(3)
	spec, err := lookupCipher(name)
	if err != nil {
		return nil, err
	}
	return aeadTag(spec, key, iv, aad, plain)
}
