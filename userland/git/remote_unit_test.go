//go:build !wasip1

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"
)

// refNames are ref names a server might send, hostile ones among them.
var refNames = []string{
	"refs/heads/main", "refs/heads/feature/x", "refs/tags/v1.0", "refs/remotes/origin/HEAD", "refs/heads/a-b_c",
	"refs/heads/../../evil", "refs/heads/..", "refs/heads/a..b", "refs/heads/.hidden", "refs/heads/x/.y",
	"refs/heads/x.lock", "refs/heads/x.lock/y", "refs/heads/a//b", "refs/heads/", "refs/heads/x/",
	"refs/heads/a b", "refs/heads/a~1", "refs/heads/a^", "refs/heads/a:b", "refs/heads/a?", "refs/heads/a*",
	"refs/heads/a[b", "refs/heads/a\\b", "refs/heads/a@{1}", "refs/heads/@", "refs/heads/x.", "refs/heads/\x7f",
	"refs/heads/\x01", "refs/heads/é", "refs//heads", "refs/heads/a/./b", "/refs/heads/x", "refs/heads/x\n",
}

// validRemoteRef refuses every name host git's check-ref-format refuses
// (the reference), so nothing git would not store is stored.
func TestValidRemoteRefAgainstGit(t *testing.T) {
	for _, n := range refNames {
		gitOK := exec.Command(hostGit, "check-ref-format", n).Run() == nil
		if ours := validRemoteRef(plumbing.ReferenceName(n)); ours && !gitOK {
			t.Errorf("%q: accepted here, refused by git check-ref-format", n)
		} else if !ours && gitOK && !strings.Contains(n, "@") {
			// Stricter than git only where documented ("@" forms).
			t.Errorf("%q: refused here, accepted by git check-ref-format", n)
		}
	}
}

// No name, however odd, makes validRemoteRef panic or accept a name
// whose path leaves refs/.
func FuzzValidRemoteRef(f *testing.F) {
	for _, n := range refNames {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n string) {
		if !validRemoteRef(plumbing.ReferenceName(n)) || n == "HEAD" {
			return
		}
		for _, c := range strings.Split(n, "/") {
			if c == ".." || c == "." || c == "" {
				t.Fatalf("%q accepted", n)
			}
		}
		if !strings.HasPrefix(n, "refs/") {
			t.Fatalf("%q accepted outside refs/", n)
		}
	})
}

// A password in a remote URL never reaches what is printed, even from
// a URL that does not parse (a bad port).
func FuzzDisplayURLHidesPassword(f *testing.F) {
	f.Add("user", "s3cret", "/r.git")
	f.Add("", "pw", "")
	f.Fuzz(func(t *testing.T, user, pw, path string) {
		// A user or password with URL delimiters in it is not one: the
		// URL means something else.
		if len(pw) < 4 || strings.ContainsAny(pw+user, "@/:?#%[] \t\r\n") || strings.Contains(path, "@") {
			return
		}
		u := "http://" + user + ":" + pw + "@127.0.0.1:8080" + path
		if got, want := displayURL(u), "http://127.0.0.1:8080"+path; got != want {
			t.Fatalf("displayURL(%q) = %q, want %q", u, got, want)
		}
		if got := redact("failed: "+u, u); strings.Contains(got, user+":"+pw+"@") {
			t.Fatalf("redact kept the user information: %q", got)
		}
		if got := fetchDisplayURL(u); strings.Contains(got, user+":"+pw+"@") {
			t.Fatalf("fetchDisplayURL kept the user information: %q", got)
		}
	})
}
