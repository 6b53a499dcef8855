package api

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseTokens: any tokens file is parsed or refused with a
// *TokensError, never a panic; what is accepted is well formed.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte("alice sha256:" + strings.Repeat("ab", 32) + "\n# comment\n\nbob sha256:" + strings.Repeat("01", 32)))
	f.Add([]byte("alice sha256:xyz"))
	f.Add([]byte("-bad sha256:" + strings.Repeat("ab", 32)))
	f.Add([]byte(strings.Repeat("x", 5000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, err := ParseTokens(data)
		if err != nil {
			if !errors.Is(err, ErrBadTokens) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, tk := range toks {
			if !tenantName.MatchString(tk.Tenant) {
				t.Fatalf("accepted tenant %q", tk.Tenant)
			}
		}
	})
}

// FuzzParseVMID: an accepted VM id names a replica that is a DNS label,
// so forwarding cannot be pointed anywhere else.
func FuzzParseVMID(f *testing.F) {
	for _, s := range []string{newVMID("local"), newVMID("10-1-2-3"), "a-aaaaaaaaaaaaaaaa", "evil.com/x-aaaaaaaaaaaaaaaa", "-aaaaaaaaaaaaaaaa", "a-AAAAAAAAAAAAAAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		replica, ok := parseVMID(id)
		if !ok {
			return
		}
		if !replicaName.MatchString(replica) || strings.ContainsAny(replica, "./:@?#") {
			t.Fatalf("%q gave replica %q", id, replica)
		}
		if u, ok := PeerTemplate("http://{replica}.peers.svc:8080")(replica); !ok || !strings.HasPrefix(u, "http://"+replica+".peers.svc:8080") {
			t.Fatalf("peer URL %q", u)
		}
	})
}
