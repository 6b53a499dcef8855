package ncrypto

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/node/hostnode"
)

// TestCiphersAgainstHostNode encrypts with every cipher, in two updates
// of uneven size through the state the caller keeps, and compares the
// output (and an AEAD cipher's tag) with host node's createCipheriv; the
// output then decrypts back.
func TestCiphersAgainstHostNode(t *testing.T) {
	names := make([]string, 0, len(cipherSpecs))
	for n := range cipherSpecs {
		names = append(names, n)
	}
	slices.Sort(names)
	msg := []byte("thirty-seven bytes of plain text, ok!")
	aad := []byte("additional data")
	var lines, want strings.Builder
	for _, name := range names {
		mode, keyLen, ivLen, _, err := CipherInfo(name)
		if err != nil {
			t.Fatal(err)
		}
		if ivLen < 0 {
			ivLen = 12
		}
		key := bytes.Repeat([]byte{0x5a}, keyLen)
		iv := make([]byte, ivLen)
		for i := range iv {
			iv[i] = byte(i * 7)
		}
		if mode == "wrap" || mode == "wrappad" {
			// Node's key wrap takes its input in one update; RFC 3394's
			// IV is A6A6A6A6A6A6A6A6, RFC 5649's A65959A6.
			iv = []byte{0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}[:ivLen]
			if mode == "wrappad" {
				iv = []byte{0xa6, 0x59, 0x59, 0xa6}
			}
		}
		parts := [][]byte{msg[:5], msg[5:]}
		if mode == "wrap" {
			parts = [][]byte{msg[:24]}
		} else if mode == "wrappad" {
			parts = [][]byte{msg}
		}
		st, err := CipherInit(name, false, key, iv)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ct []byte
		for i, p := range parts {
			var out []byte
			st, out, err = CipherUpdate(name, false, true, false, key, st, p)
			if err != nil {
				t.Fatalf("%s: update %d: %v", name, i, err)
			}
			ct = append(ct, out...)
		}
		_, out, err := CipherUpdate(name, false, true, true, key, st, nil)
		if err != nil {
			t.Fatalf("%s: final: %v", name, err)
		}
		ct = append(ct, out...)
		tag := "-"
		if isAEAD(mode) {
			s := NewState(nil)
			for i, b := range [][]byte{key, iv, aad, bytes.Join(parts, nil)} {
				if err := s.SetOperand(i, b); err != nil {
					t.Fatal(err)
				}
			}
			tb, err := s.AEADTag(name)
			if err != nil {
				t.Fatalf("%s: tag: %v", name, err)
			}
			tag = hex.EncodeToString(tb)
		}
		fmt.Fprintf(&lines, "%s %s %s %s %s %s\n", name, hex.EncodeToString(key), hex.EncodeToString(iv),
			hex.EncodeToString(bytes.Join(parts, nil)), hex.EncodeToString(ct), tag)
		// And back.
		st, err = CipherInit(name, true, key, iv)
		if err != nil {
			t.Fatal(err)
		}
		st, plain, err := CipherUpdate(name, true, true, false, key, st, ct)
		if err != nil {
			t.Fatalf("%s: decrypt: %v", name, err)
		}
		_, rest, err := CipherUpdate(name, true, true, true, key, st, nil)
		if err != nil {
			t.Fatalf("%s: decrypt final: %v", name, err)
		}
		if got := append(plain, rest...); !bytes.Equal(got, bytes.Join(parts, nil)) {
			t.Errorf("%s: decrypted %q", name, got)
		}
		want.WriteString(name + " ok\n")
	}
	out := hostnode.Run(t, `
const c = require('crypto'), aad = Buffer.from('additional data');
for (const l of require('fs').readFileSync(0, 'utf8').trim().split('\n')) {
  const [name, key, iv, msg, ct, tag] = l.split(' ');
  const h = (x) => Buffer.from(x, 'hex');
  const aead = /gcm|poly1305/.test(name);
  const e = c.createCipheriv(name, h(key), h(iv), aead ? { authTagLength: 16 } : undefined);
  if (aead) e.setAAD(aad);
  const got = Buffer.concat([e.update(h(msg)), e.final()]).toString('hex');
  const gotTag = aead ? e.getAuthTag().toString('hex') : '-';
  console.log(name, got === ct && gotTag === tag ? 'ok' : 'node: ' + got + ' ' + gotTag + ' ours: ' + ct + ' ' + tag);
}
`, lines.String())
	if string(out) != want.String() {
		t.Fatalf("host node says\n%s", out)
	}
}

// A state the caller made up is refused or runs, never panics, and key
// and IV lengths are checked.
func TestCipherHostileState(t *testing.T) {
	key := make([]byte, 16)
	if _, _, err := CipherUpdate("aes-128-cbc", false, true, false, key, make([]byte, CipherStateLen+17), nil); err == nil {
		t.Error("a state with more than a block held back was taken")
	}
	if _, _, err := CipherUpdate("aes-128-cbc", false, true, false, make([]byte, 15), make([]byte, CipherStateLen), nil); err == nil {
		t.Error("a short key was taken")
	}
	var ce *Error
	if _, err := CipherInit("aes-128-gcm", false, key, nil); !errorsAs(err, &ce) || ce.Code != "ERR_CRYPTO_INVALID_IV" {
		t.Errorf("empty GCM IV: %v", err)
	}
	if _, err := CipherInit("aes-128-gcm", false, key, make([]byte, maxCryptoIV+1)); !errorsAs(err, &ce) || ce.Code != "ERR_CRYPTO_INVALID_IV" {
		t.Errorf("huge GCM IV: %v", err)
	}
	if _, _, _, _, err := CipherInfo("rot13"); !errorsAs(err, &ce) || ce.Code != "ERR_CRYPTO_UNKNOWN_CIPHER" {
		t.Errorf("unknown cipher: %v", err)
	}
	// ChaCha20's 32-bit block counter does not wrap: a state at the
	// last block refuses more than one block.
	st := make([]byte, CipherStateLen)
	st[32], st[33], st[34], st[35], st[36] = 16, 0xff, 0xff, 0xff, 0xff
	if _, _, err := CipherUpdate("chacha20", false, true, false, make([]byte, 32), st, make([]byte, 65)); !errorsAs(err, &ce) || ce.Code != "ERR_OUT_OF_RANGE" {
		t.Errorf("counter overflow: %v", err)
	}
}
