package js

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/subtle"
	"math/big"
)

// RSA-PSS without salt (saltLength 0), which Web Crypto and Node allow and
// Go's crypto/rsa cannot express (it reads 0 as "automatic"). The encoding
// is RFC 8017's EMSA-PSS with an empty salt, so the signature is
// deterministic.

// mgf1XOR masks out with MGF1 over seed.
func mgf1XOR(out []byte, h crypto.Hash, seed []byte) {
	var counter [4]byte
	done := 0
	for done < len(out) {
		d := h.New()
		d.Write(seed)
		d.Write(counter[:])
		block := d.Sum(nil)
		for i := 0; i < len(block) && done < len(out); i++ {
			out[done] ^= block[i]
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

// pss0Hash is H = Hash(0x00*8 || mHash), the salt being empty.
func pss0Hash(h crypto.Hash, mHash []byte) []byte {
	d := h.New()
	d.Write(make([]byte, 8))
	d.Write(mHash)
	return d.Sum(nil)
}

// signPSS0 signs digest with an empty salt. The private operation checks
// its result with the public one, as crypto/rsa does, so that a fault
// never leaks a wrong signature.
func signPSS0(k *rsa.PrivateKey, h crypto.Hash, digest []byte) ([]byte, error) {
	hLen := h.Size()
	if len(digest) != hLen {
		return nil, errRSATooLarge
	}
	emBits := k.N.BitLen() - 1
	emLen := (emBits + 7) / 8
	if emLen < hLen+2 {
		return nil, errRSATooLarge
	}
	em := make([]byte, emLen)
	db := em[:emLen-hLen-1]
	db[len(db)-1] = 1
	hh := pss0Hash(h, digest)
	mgf1XOR(db, h, hh)
	db[0] &= 0xff >> (8*emLen - emBits)
	copy(em[emLen-hLen-1:], hh)
	em[emLen-1] = 0xbc
	m := new(big.Int).SetBytes(em)
	s := new(big.Int).Exp(m, k.D, k.N)
	sig := s.FillBytes(make([]byte, k.Size()))
	back, err := rsaRaw(&k.PublicKey, sig)
	if err != nil || !bytes.Equal(back[len(back)-emLen:], em) {
		return nil, errRSATooLarge
	}
	return sig, nil
}

// verifyPSS0 checks a signature made with an empty salt (and nothing
// else: a salted signature does not verify, as in OpenSSL).
func verifyPSS0(k *rsa.PublicKey, h crypto.Hash, digest, sig []byte) bool {
	hLen := h.Size()
	if len(sig) != k.Size() || len(digest) != hLen {
		return false
	}
	m, err := rsaRaw(k, sig)
	if err != nil {
		return false
	}
	emBits := k.N.BitLen() - 1
	emLen := (emBits + 7) / 8
	for _, b := range m[:len(m)-emLen] {
		if b != 0 {
			return false
		}
	}
	em := m[len(m)-emLen:]
	if emLen < hLen+2 || em[emLen-1] != 0xbc || em[0]&^(0xff>>(8*emLen-emBits)) != 0 {
		return false
	}
	db := append([]byte(nil), em[:emLen-hLen-1]...)
	hh := em[emLen-hLen-1 : emLen-1]
	mgf1XOR(db, h, hh)
	db[0] &= 0xff >> (8*emLen - emBits)
	for _, b := range db[:len(db)-1] {
		if b != 0 {
			return false
		}
	}
	return db[len(db)-1] == 1 && subtle.ConstantTimeCompare(hh, pss0Hash(h, digest)) == 1
}
