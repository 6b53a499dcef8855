//go:build !wasip1

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// grep -G (GNU grep 3.8 on the host) is the oracle for the translation
// of POSIX basic regular expressions that git grep uses.
func TestBREMatchesHostGrep(t *testing.T) {
	if _, err := os.Stat("/usr/bin/grep"); err != nil {
		t.Fatalf("host grep (the oracle): %v", err)
	}
	lines := []string{"alpha(1)", "beta two", "Two words", "twofold", "a+b", "a?b", "aab", "ab", "x{2}", "xx", "a|b", "star*",
		"*lead", "^caret", "end$", "tab\there", "[bracket]", "back\\slash", "word two words", "two-two", ""}
	patterns := []string{`two`, `alpha(1)`, `alpha\(1\)`, `a+b`, `a\+b`, `a?b`, `a\?b`, `x{2}`, `x\{2\}`, `a|b`, `a\|b`,
		`*lead`, `star*`, `^t`, `o$`, `[[:upper:]]`, `[]b]`, `[^a-z]`, `\<two\>`, `t.o`, `\.`, `^*`, `\(a\)*b`,
		`back\\slash`, `[\]`, `a\{1,2\}b`, `^$`}
	input := strings.Join(lines, "\n") + "\n"
	for _, p := range patterns {
		cmd := exec.Command("/usr/bin/grep", "-G", "-n", "-e", p)
		cmd.Stdin = strings.NewReader(input)
		cmd.Env = []string{"LC_ALL=C"}
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 1 {
			t.Fatalf("host grep %q: %v", p, err)
		}
		re, err := regexp.Compile(breToRE2(p))
		if err != nil {
			t.Errorf("pattern %q: translated %q does not compile: %v", p, breToRE2(p), err)
			continue
		}
		var got bytes.Buffer
		for i, l := range lines {
			if re.MatchString(l) {
				got.WriteString(strconv.Itoa(i+1) + ":" + l + "\n")
			}
		}
		if got.String() != string(out) {
			t.Errorf("pattern %q (as %q):\nhost grep:\n%s\nours:\n%s", p, breToRE2(p), out, got.String())
		}
	}
}

// Host git names renames in --stat; renameName must agree for paths
// that share leading directories, trailing parts, both or neither.
func TestRenameNameMatchesHostGit(t *testing.T) {
	pairs := [][2]string{{"a", "b"}, {"d/x", "f/x"}, {"src/a.go", "src/b.go"}, {"a/b/c", "a/c"}, {"a/c", "a/b/c"},
		{"x/y/z.txt", "q/y/z.txt"}, {"top", "dir/top"}, {"dir/top", "top"}, {"a/b/c/d", "a/x/c/d"}, {"ab/c", "abc/c"}}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(hostGit, args...)
		cmd.Dir = dir
		cmd.Env = append([]string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}, identityEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	for i, p := range pairs {
		full := filepath.Join(dir, filepath.FromSlash(p[0]))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(strings.Repeat("content ", i+1)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", ".")
		git("commit", "-qm", "add")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, filepath.FromSlash(p[1]))), 0o755); err != nil {
			t.Fatal(err)
		}
		git("mv", p[0], p[1])
		stat := git("diff", "--cached", "-M", "--stat=200")
		name, _, _ := strings.Cut(strings.TrimSpace(strings.SplitN(stat, "\n", 2)[0]), " |")
		if got := renameName(p[0], p[1]); got != strings.TrimSpace(name) {
			t.Errorf("renameName(%q, %q) = %q, host git %q", p[0], p[1], got, name)
		}
		git("commit", "-qm", "mv")
		git("rm", "-rq", ".")
		git("commit", "-qm", "clean")
	}
}

// Bad revisions never panic and never hang: every spec either resolves
// or fails with an error.
func FuzzResolveRevision(f *testing.F) {
	for _, s := range []string{"HEAD", "HEAD~1", "HEAD^2", "@{u}", "@{-1}", ":/msg", "HEAD:a", ":a", "v1^{}", "HEAD^{tree}",
		"main@{upstream}", "abcd", "HEAD~99999999999", "^{", "@{", "~", "^", ":", "::", "a..b", "a...b", "^HEAD", "HEAD^{/(}"} {
		f.Add(s)
	}
	dir := f.TempDir()
	cmd := exec.Command("/bin/sh", "-c", "git init -q -b main && echo a > a && git add a && git commit -qm msg && git tag -a -m t v1 && echo b >> a && git commit -qam two && git checkout -q -b side && git checkout -q main")
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}, identityEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		f.Fatalf("%v: %s", err, out)
	}
	f.Chdir(dir)
	rp, err := openRepo()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if h, err := resolveRevision(rp, spec); err == nil && h.IsZero() {
			t.Fatalf("%q resolved to the zero hash", spec)
		}
		_ = isRevision(rp, spec)
		_, _, _ = splitRevsPaths(rp, []string{spec})
	})
}

// Globs and regular expressions from the command line never panic.
func FuzzPatterns(f *testing.F) {
	for _, s := range []string{"*.go", "[a-", "[!x]", `\(a\)\{2\}`, "[[:alpha:]]", `[\]`, "a**b", "?"} {
		f.Add(s, "src/x.go")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		_ = globMatch(pattern, name)
		_ = wildMatch(pattern, name)
		_, _ = regexp.Compile(breToRE2(pattern))
		_ = renameName(pattern, name)
	})
}

// Any history draws without panicking: the fuzzer picks each commit's
// parents among the older ones (or none), and which commits are shown.
func FuzzGraph(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 0, 3, 2, 1, 255, 4, 0, 2})
	f.Add([]byte{0, 0, 0, 5, 4, 3, 2, 1, 7, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 300 {
			return
		}
		var commits []*object.Commit
		for i := 0; i < len(data); i++ {
			c := &object.Commit{Message: "m\n"}
			c.Hash = plumbing.NewHash(fmt.Sprintf("%040x", i+1))
			np := int(data[i] % 4)
			for k := 0; k < np && i+1+k < len(data) && len(commits) > 0; k++ {
				c.ParentHashes = append(c.ParentHashes, commits[int(data[i+1+k])%len(commits)].Hash)
			}
			commits = append(commits, c)
		}
		shown := map[plumbing.Hash]bool{}
		var list []*object.Commit
		for i := len(commits) - 1; i >= 0; i-- {
			if data[i]%7 != 6 {
				shown[commits[i].Hash] = true
				list = append(list, commits[i])
			}
		}
		g := newGraph(shown, len(data)%2 == 0)
		for i, c := range topoSort(list) {
			if err := g.write(io.Discard, c, graphEntry{separator: i > 0, header: "x\ny\n", terminator: i%2 == 0}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
