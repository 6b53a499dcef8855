package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

// docsExample is the write-protected .git of docs/permissions.md as it
// was first written: only write denied.
func docsExample() *Policy {
	return DenyAll().AllowFS(nil, "/workspace/**").DenyFS([]FSOp{FSWrite}, "/workspace/.git/")
}

func TestRelocate(t *testing.T) {
	type move struct {
		from, to string
		tree     bool
		ok       bool
	}
	cases := []struct {
		name  string
		p     *Policy
		moves []move
	}{
		{"docs example", docsExample(), []move{
			{"/workspace/.git", "/workspace/g", true, false}, // mv .git g; write; mv g .git
			{"/workspace/g", "/workspace/.git", true, false}, // the way back in
			{"/workspace/.git/config", "/workspace/c", false, false},
			{"/workspace/c", "/workspace/.git/config", false, false}, // a writable name into .git
			{"/workspace/.git/objects", "/workspace/o", true, false},
			{"/workspace/.git/a", "/workspace/.git/b", false, true}, // alike inside
			{"/workspace/a", "/workspace/b", true, true},
			{"/workspace/src/a.js", "/workspace/lib/a.js", false, true},
			{"/workspace/node_modules/.staging/x", "/workspace/node_modules/x", true, true},
			{"/workspace", "/w2", true, false}, // nothing allowed at /w2
		}},
		{"read deny on a file", DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{FSRead}, "/w/secret"), []move{
			{"/w/secret", "/w/x", false, false}, // ln secret x; mv secret x
			{"/w/x", "/w/secret", false, false},
			{"/w", "/v", true, false},
			{"/w/d", "/w/e", true, true},
			{"/w/a", "/w/b", false, true},
		}},
		{"deny read on a file in a directory", DenyAll().AllowFS(nil, "/w/**").
			DenyFS([]FSOp{FSRead, FSLink, FSRename, FSSymlink, FSStat}, "/w/d/secret"), []move{
			{"/w/d", "/w/e", true, false}, // the parent's rename
			{"/w/e", "/w/d", true, false},
			{"/w/x", "/w/y", true, true},
		}},
		{"globs", DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{FSRead}, "/**/*.pem"), []move{
			{"/w/a", "/w/b", true, true},
			{"/w/a.pem", "/w/b", true, false}, // a directory that matches itself
			{"/w/k.pem", "/w/k", false, false},
			{"/w/k", "/w/k.pem", false, false},
			{"/w/a/b", "/w/c", true, true},
		}},
		{"star within a segment", DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{FSRead}, "/w/a*/secret"), []move{
			{"/w/ab", "/w/cd", true, false},
			{"/w/cd", "/w/ab", true, false},
			{"/w/ab", "/w/ac", true, true},
			{"/w/cd", "/w/ef", true, true},
			{"/w/ab/x", "/w/ab/y", true, true},
		}},
		{"globstar across", DenyAll().AllowFS(nil, "/w/**").DenyFS(WriteOps(), "/w/**/locked/**"), []move{
			{"/w/x", "/w/y", true, true},
			{"/w/x/locked", "/w/x/free", true, false},
			{"/w/free", "/w/x/locked", true, false},
			{"/w/locked/a", "/w/x/locked/b", true, true}, // both wholly locked
			{"/w/a/b/c", "/w/d", true, true},
		}},
		{"globstar in the middle", DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{FSRead}, "/w/**/a/secret"), []move{
			{"/w/x/a", "/w/x/c", true, false}, // both live in the NFA, in different states
			{"/w/x/c", "/w/x/a", true, false},
			{"/w/x/a", "/w/y/a", true, true},
			{"/w/x", "/w/y/z", true, true},
		}},
		{"overlapping allows", DenyAll().AllowFS(nil, "/**").AllowWrite("/home/u/project"), []move{
			{"/home/u/project", "/home/u/p2", true, true},
			{"/home/u/p2", "/home/u/project", true, true},
		}},
		{"exact rule beneath", DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{FSWrite}, "/w/a/b"), []move{
			{"/w/a", "/w/c", true, false},
			{"/w/x", "/w/c", true, true},
			{"/w/a/b", "/w/a/c", false, false},
		}},
		{"an allow inside a deny", DenyAll().DenyFS(nil, "/**").AllowFS(nil, "/w/**").
			DenyFS(nil, "/w/private/**").AllowFS(ReadOps(), "/w/private/pub"), []move{
			{"/w/private", "/w/p", true, false},
			{"/w/x", "/w/y", true, true},
			{"/w/private/a", "/w/private/b", true, true},
			{"/w/private/pub", "/w/private/b", true, false},
		}},
		{"allow all", AllowAll(), []move{
			{"/a", "/b", true, true},
			{"/", "/b", true, true},
			{"/a/b/c", "/x", false, true},
		}},
		{"deny all", DenyAll(), []move{
			{"/a", "/b", true, true}, // nothing is allowed either way
			{"/a", "/b", false, true},
		}},
	}
	for _, tc := range cases {
		c := mustCompile(t, tc.p)
		for _, m := range tc.moves {
			err := c.CheckFSRelocate(FSRename, m.from, m.to, m.tree)
			if (err == nil) != m.ok {
				t.Errorf("%s: %s -> %s (tree %v): err=%v, want ok=%v", tc.name, m.from, m.to, m.tree, err, m.ok)
			}
			if err != nil && !errors.Is(err, errno.EACCES) {
				t.Errorf("%s: %v does not match EACCES", tc.name, err)
			}
		}
	}
}

func TestRelocateInvalid(t *testing.T) {
	c := mustCompile(t, AllowAll())
	var nilChecker *Checker
	for _, tc := range []struct {
		c        *Checker
		op       FSOp
		from, to string
	}{
		{nilChecker, FSRename, "/a", "/b"},
		{c, FSRename, "a", "/b"},
		{c, FSRename, "/a", "/b/../c"},
		{c, FSLink, "/a\x00", "/b"},
		{c, "bogus", "/a", "/b"},
		{c, FSAll, "/a", "/b"},
	} {
		if err := tc.c.CheckFSRelocate(tc.op, tc.from, tc.to, true); !errors.Is(err, errno.EACCES) {
			t.Errorf("%q %q -> %q: err=%v, want EACCES", tc.op, tc.from, tc.to, err)
		}
	}
	// Repeated and trailing slashes are ignored, as by CheckFS.
	if err := c.CheckFSRelocate(FSRename, "//a/", "/b//c", true); err != nil {
		t.Errorf("non-canonical but valid paths: %v", err)
	}
}

func TestRelocateErrorAndAudit(t *testing.T) {
	var events []Event
	c := mustCompile(t, docsExample()).WithAudit(func(e Event) { events = append(events, e) }, AuditAll)
	err := c.CheckFSRelocate(FSRename, "/workspace/.git", "/workspace/g", true)
	var de *DeniedError
	if !errors.As(err, &de) || de.Op != "rename" || de.Target != "/workspace/.git" || de.To != "/workspace/g" || de.Rule != -1 {
		t.Fatalf("err = %#v", err)
	}
	want := "permission denied: fs rename /workspace/.git -> /workspace/g: the policy decides differently at the new name"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if err := c.CheckFSRelocate(FSLink, "/workspace/a", "/workspace/b", false); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Allowed || events[0].To != "/workspace/g" || !events[1].Allowed || events[1].Op != "link" {
		t.Errorf("events %+v", events)
	}
	// A plain denial has no To and reads as before.
	if err := c.CheckFS(FSWrite, "/workspace/.git/x"); strings.Contains(err.Error(), "->") {
		t.Errorf("CheckFS message %q", err)
	}
}

// FuzzRelocate checks that CheckFSRelocate never allows a move on which
// the policy decides some path differently: for a policy of up to four
// rules over the fuzzed patterns, if a directory move from -> to is
// allowed, every op on from/S and to/S must be decided alike for each
// suffix S tried (the fuzzed one and suffixes the patterns themselves
// suggest); a file move must decide ObjectOps alike. A move onto itself
// is always allowed.
func FuzzRelocate(f *testing.F) {
	f.Add("/w/**\n/w/.git/", uint8(2), "/w/.git", "/w/g", "config")
	f.Add("/w/**\n/w/d/secret", uint8(2), "/w/d", "/w/e", "secret")
	f.Add("/**\n/**/*.pem\n/w/pub/**", uint8(10), "/w/a", "/w/pub", "k.pem")
	f.Add("/w/**\n/w/a*/s?\n/w/**/x/**", uint8(6), "/w/ab", "/w/ac", "sx/x/y")
	f.Add("/w/a/b/c\n/w/*/b/**\n/w/**/c", uint8(3), "/w/a", "/w/z", "b/c")
	f.Add("/**/x/**/y\n/a/**", uint8(1), "/a/x", "/a/y", "y")
	f.Add("/\n/a", uint8(1), "/", "/a", "")
	f.Fuzz(func(t *testing.T, pats string, effects uint8, from, to, suffix string) {
		p := DenyAll()
		lines := strings.Split(pats, "\n")
		if len(lines) > 4 {
			lines = lines[:4]
		}
		for i, pat := range lines {
			ops := []FSOp(nil)
			if effects&(16<<i) != 0 {
				ops = []FSOp{FSRead, FSStat}
			}
			if effects&(1<<i) != 0 {
				p.AllowFS(ops, pat)
			} else {
				p.DenyFS(ops, pat)
			}
		}
		c, err := Compile(p)
		if err != nil {
			return
		}
		if err := c.CheckFSRelocate(FSRename, from, from, true); err != nil {
			if _, ok := canonPath(from); ok {
				t.Fatalf("moving %q onto itself refused: %v", from, err)
			}
		}
		suffixes := []string{"", suffix}
		concrete := strings.NewReplacer("**", "x/y", "*", "z", "?", "q", `\`, "")
		for _, pat := range lines {
			cp := concrete.Replace(pat)
			for _, dir := range []string{from, to} {
				if rest, ok := strings.CutPrefix(cp, strings.TrimRight(dir, "/")+"/"); ok {
					suffixes = append(suffixes, rest)
				}
			}
		}
		join := func(dir, s string) string {
			if s == "" {
				return dir
			}
			return strings.TrimRight(dir, "/") + "/" + s
		}
		if c.CheckFSRelocate(FSRename, from, to, true) == nil {
			for _, s := range suffixes {
				for _, op := range AllFSOps() {
					a, b := c.CheckFS(op, join(from, s)) == nil, c.CheckFS(op, join(to, s)) == nil
					if a != b {
						t.Fatalf("tree move %q -> %q allowed, but %s %q is %v and %q is %v",
							from, to, op, join(from, s), a, join(to, s), b)
					}
				}
			}
		}
		if c.CheckFSRelocate(FSLink, from, to, false) == nil {
			for _, op := range ObjectOps() {
				if a, b := c.CheckFS(op, from) == nil, c.CheckFS(op, to) == nil; a != b {
					t.Fatalf("file move %q -> %q allowed, but %s is %v vs %v", from, to, op, a, b)
				}
			}
		}
	})
}
