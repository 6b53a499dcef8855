package ncrypto

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/node/hostnode"
)

// TestHashesAgainstHostNode: every digest Node names, as a hash, a copy
// of it taken halfway and an HMAC, gives host node's bytes.
func TestHashesAgainstHostNode(t *testing.T) {
	algs := []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512-224", "sha512-256",
		"sha3-224", "sha3-256", "sha3-384", "sha3-512"}
	s := NewState(nil)
	var lines strings.Builder
	for _, alg := range algs {
		var sums []string
		for _, hmacKey := range []bool{false, true} {
			id, err := s.NewHash(alg, []byte("key"), hmacKey)
			if err != nil {
				t.Fatalf("%s: %v", alg, err)
			}
			if err := s.HashUpdate(id, []byte("half")); err != nil {
				t.Fatal(err)
			}
			// Node's Hmac has no copy(); its Hash has.
			cp := -1
			if !hmacKey {
				if cp, err = s.HashCopy(id); err != nil {
					t.Fatalf("%s: copy: %v", alg, err)
				}
			}
			_ = s.HashUpdate(id, []byte(" and the rest"))
			for _, h := range []int{id, cp} {
				if h < 0 {
					continue
				}
				d, err := s.HashDigest(h)
				if err != nil {
					t.Fatal(err)
				}
				sums = append(sums, hex.EncodeToString(d))
			}
		}
		fmt.Fprintf(&lines, "%s %s\n", alg, strings.Join(sums, " "))
	}
	want := hostnode.Run(t, `
const c = require('crypto');
for (const alg of require('fs').readFileSync(0, 'utf8').trim().split(',')) {
  const sums = [];
  for (const h of [() => c.createHash(alg), () => c.createHmac(alg, 'key')]) {
    sums.push(h().update('half and the rest').digest('hex'));
  }
  sums.splice(1, 0, c.createHash(alg).update('half').digest('hex'));
  console.log(alg, sums.join(' '));
}
`, strings.Join(algs, ","))
	if lines.String() != string(want) {
		t.Fatalf("ours:\n%s\nhost node:\n%s", lines.String(), want)
	}
}
