package ncrypto

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"hash"

	"github.com/secexec/secexec/kernel/errno"
)

// newHashFunc returns the constructor of the digest Node names alg.
func newHashFunc(alg string) (func() hash.Hash, bool) {
	switch alg {
	case "md5":
		return md5.New, true
	case "sha1":
		return sha1.New, true
	case "sha224":
		return sha256.New224, true
	case "sha256":
		return sha256.New, true
	case "sha384":
		return sha512.New384, true
	case "sha512":
		return sha512.New, true
	case "sha512-224":
		return sha512.New512_224, true
	case "sha512-256":
		return sha512.New512_256, true
	case "sha3-224":
		return func() hash.Hash { return sha3.New224() }, true
	case "sha3-256":
		return func() hash.Hash { return sha3.New256() }, true
	case "sha3-384":
		return func() hash.Hash { return sha3.New384() }, true
	case "sha3-512":
		return func() hash.Hash { return sha3.New512() }, true
	}
	return nil, false
}

// NewHash starts a hash of the digest alg, an HMAC with key when hmac is
// set, and returns its id.
func (s *State) NewHash(alg string, key []byte, hmacKey bool) (int, error) {
	newH, ok := newHashFunc(alg)
	if !ok {
		return 0, errno.EINVAL
	}
	if !hmacKey {
		return s.addHash(newH())
	}
	return s.addHash(hmac.New(newH, append([]byte(nil), key...)))
}

func (s *State) addHash(h hash.Hash) (int, error) {
	if len(s.hashes) >= MaxHashes {
		return 0, ErrTooManyHashes
	}
	s.nextHash++
	s.hashes[s.nextHash] = h
	return s.nextHash, nil
}

// HashUpdate adds b to hash id.
func (s *State) HashUpdate(id int, b []byte) error {
	h, ok := s.hashes[id]
	if !ok {
		return errno.EINVAL
	}
	h.Write(b)
	return nil
}

// HashDigest ends hash id and returns its digest.
func (s *State) HashDigest(id int) ([]byte, error) {
	h, ok := s.hashes[id]
	if !ok {
		return nil, errno.EINVAL
	}
	delete(s.hashes, id)
	return h.Sum(nil), nil
}

// HashCopy starts a copy of hash id in its current state and returns the
// copy's id.
func (s *State) HashCopy(id int) (int, error) {
	h, ok := s.hashes[id]
	if !ok {
		return 0, errno.EINVAL
	}
	c, ok := h.(hash.Cloner)
	if !ok {
		return 0, errno.ENOSYS
	}
	n, err := c.Clone()
	if err != nil {
		return 0, errno.ENOSYS
	}
	return s.addHash(n)
}
