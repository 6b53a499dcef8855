package ncrypto

import (
	"crypto/hmac"
	_ "crypto/md5"
	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/sha3"
	_ "crypto/sha512"
	"hash"

	"github.com/secexec/secexec/kernel/errno"
)

// newHashFunc returns the constructor of the digest Node names alg
// (cryptoHash; the blank imports above link each one in).
func newHashFunc(alg string) (func() hash.Hash, bool) {
	h, ok := cryptoHash(alg)
	if !ok {
		return nil, false
	}
	return h.New, true
}

// NewHash starts a hash of the digest alg, or an HMAC with key when
// isHMAC is set, and returns its id.
func (s *State) NewHash(alg string, key []byte, isHMAC bool) (int, error) {
	newH, ok := newHashFunc(alg)
	if !ok {
		return 0, errno.EINVAL
	}
	if !isHMAC {
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
