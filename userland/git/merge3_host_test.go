//go:build !wasip1

package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
)

// These tests check the line diff and the line merge against host git
// on random texts made of a few short lines, where many alignments are
// possible and only git's exact algorithm picks git's.

// randomText makes up to n lines from a small alphabet.
func randomText(r *rand.Rand, n int) []string {
	alpha := []string{"a", "b", "c", "", "}", "x y", "\tindented", "  two"}
	var out []string
	for i := r.Intn(n + 1); i > 0; i-- {
		out = append(out, alpha[r.Intn(len(alpha))])
	}
	return out
}

// randomEdit deletes, replaces and inserts lines of base at random.
func randomEdit(r *rand.Rand, base []string) []string {
	alpha := []string{"a", "b", "c", "", "}", "x y"}
	var out []string
	for _, l := range base {
		switch r.Intn(8) {
		case 0:
		case 1:
			out = append(out, alpha[r.Intn(len(alpha))])
		case 2:
			out = append(out, l, alpha[r.Intn(len(alpha))])
		default:
			out = append(out, l)
		}
	}
	if r.Intn(4) == 0 {
		out = append(out, alpha[r.Intn(len(alpha))])
	}
	return out
}

func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

func hostGitIn(t *testing.T, dir string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(hostGit, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}, identityEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out)
}

// hunkHeader is a -U0 hunk's "-a,b +c,d" as git writes it.
func hunkHeader(h hunk) string {
	r := func(i, c int) string {
		switch c {
		case 0:
			return fmt.Sprintf("%d,0", i)
		case 1:
			return fmt.Sprint(i + 1)
		}
		return fmt.Sprintf("%d,%d", i+1, c)
	}
	return "-" + r(h.i1, h.chg1) + " +" + r(h.i2, h.chg2)
}

// The Myers and histogram diffs place every change where git diff
// places it, with and without the indent heuristic.
func TestXdiffMatchesHost(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 200; i++ {
		a := randomText(r, 14)
		b := randomEdit(r, a)
		if err := os.WriteFile(filepath.Join(dir, "a"), []byte(joinLines(a)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "b"), []byte(joinLines(b)), 0o644); err != nil {
			t.Fatal(err)
		}
		for mode := 0; mode < 3; mode++ {
			// Myers and histogram as merges run them, and Myers with
			// the indent heuristic, as git diff runs it.
			histogram, heuristic := mode == 1, mode == 2
			args := []string{"diff", "--no-index", "-U0", "a", "b"}
			if !heuristic {
				args = append(args, "--no-indent-heuristic")
			}
			if histogram {
				args = append(args, "--histogram")
			}
			var want []string
			for _, l := range strings.Split(hostGitIn(t, dir, "", args...), "\n") {
				if f := strings.Fields(l); len(f) >= 3 && f[0] == "@@" {
					want = append(want, f[1]+" "+f[2])
				}
			}
			var got []string
			for _, h := range xdiffHunksOpt(splitLines(joinLines(a)), splitLines(joinLines(b)), histogram, heuristic) {
				got = append(got, hunkHeader(h))
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("diff (histogram %v, indent heuristic %v) of %q and %q:\ngit:  %v\nours: %v", histogram, heuristic, a, b, want, got)
			}
		}
	}
}

// merge3 gives what git merge-tree (the "ort" merge) writes for the
// file, conflict markers included.
func TestMerge3MatchesHost(t *testing.T) {
	dir := t.TempDir()
	hostGitIn(t, dir, "", "init", "-q")
	commit := func(text, parent string) string {
		blob := strings.TrimSpace(hostGitIn(t, dir, text, "hash-object", "-w", "--stdin"))
		tree := strings.TrimSpace(hostGitIn(t, dir, "100644 blob "+blob+"\tf\n", "mktree"))
		args := []string{"commit-tree", tree, "-m", "x"}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		return strings.TrimSpace(hostGitIn(t, dir, "", args...))
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		base := randomText(r, 12)
		ours, theirs := randomEdit(r, base), randomEdit(r, base)
		b := commit(joinLines(base), "")
		o, th := commit(joinLines(ours), b), commit(joinLines(theirs), b)
		tree, _, _ := strings.Cut(hostGitIn(t, dir, "", "merge-tree", "--write-tree", o, th), "\n")
		want := hostGitIn(t, dir, "", "cat-file", "blob", tree+":f")
		got, n := merge3(joinLines(base), joinLines(ours), joinLines(theirs), mergeLabels{ours: o, theirs: th})
		if got != want {
			t.Fatalf("merge of %q and %q from %q:\ngit:\n%s\nours (%d conflicts):\n%s", ours, theirs, base, want, n, got)
		}
	}
}

// Renames and their similarity come out as git diff -M reports them, in
// the diffstat and summary merge prints.
func TestRenameStatMatchesHost(t *testing.T) {
	dir := t.TempDir()
	hostGitIn(t, dir, "", "init", "-q")
	r := rand.New(rand.NewSource(3))
	words := []string{"alpha", "beta", "gamma", "delta", "a somewhat longer line of text", "", "}", "x"}
	blob := func(text string) entry {
		h := strings.TrimSpace(hostGitIn(t, dir, text, "hash-object", "-w", "--stdin"))
		data := []byte(text)
		return entry{hash: plumbing.NewHash(h), mode: filemode.Regular, load: func() ([]byte, error) { return data, nil }}
	}
	commit := func(files map[string]entry, parent string) string {
		var tree strings.Builder
		for _, p := range slices.Sorted(mapKeys(files)) {
			fmt.Fprintf(&tree, "100644 blob %s\t%s\n", files[p].hash, p)
		}
		// mktree wants one level: paths here have no slashes.
		th := strings.TrimSpace(hostGitIn(t, dir, tree.String(), "mktree"))
		args := []string{"commit-tree", th, "-m", "x"}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		return strings.TrimSpace(hostGitIn(t, dir, "", args...))
	}
	renames, partial := 0, 0
	for i := 0; i < 60; i++ {
		from, to := snapshot{}, snapshot{}
		for j := 0; j < 1+r.Intn(3); j++ {
			var lines []string
			for k := 0; k < 3+r.Intn(15); k++ {
				lines = append(lines, words[r.Intn(len(words))])
			}
			name := fmt.Sprintf("f%d", j)
			from[name] = blob(joinLines(lines))
			edited := randomEdit(r, lines)
			target := name
			if r.Intn(3) > 0 {
				target = fmt.Sprintf("g%d", r.Intn(4))
			}
			if _, taken := to[target]; taken {
				target = name
			}
			to[target] = blob(joinLines(edited))
		}
		a := commit(from, "")
		b := commit(to, a)
		want := hostGitIn(t, dir, "", "diff", "-M", "--stat", "--summary", a, b)
		renames += strings.Count(want, " rename ")
		partial += strings.Count(want, " rename ") - strings.Count(want, "(100%)")
		var got strings.Builder
		if err := writeStatBetween(&env{stdout: &got}, from, to); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Fatalf("stat of %v -> %v:\ngit:\n%s\nours:\n%s", slices.Sorted(mapKeys(from)), slices.Sorted(mapKeys(to)), want, got.String())
		}
	}
	// The cases must include renames, edited ones among them.
	if renames < 10 || partial < 5 {
		t.Fatalf("only %d renames, %d of them edited: the cases test too little", renames, partial)
	}
	t.Logf("%d renames, %d edited", renames, partial)
}

// git diff of a conflicted file, as merged and after random edits
// (partial resolutions), is git's combined diff.
func TestCombinedDiffMatchesHost(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(cwd)
	r := rand.New(rand.NewSource(4))
	shown := 0
	for i := 0; i < 60; i++ {
		dir := t.TempDir()
		base := randomText(r, 12)
		ours, theirs := randomEdit(r, base), randomEdit(r, base)
		hostGitIn(t, dir, "", "init", "-q", "-b", "main")
		write := func(lines []string) {
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte(joinLines(lines)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(base)
		hostGitIn(t, dir, "", "add", "f")
		hostGitIn(t, dir, "", "commit", "-q", "-m", "base")
		hostGitIn(t, dir, "", "checkout", "-q", "-b", "theirs")
		write(theirs)
		hostGitIn(t, dir, "", "commit", "-q", "-am", "theirs")
		hostGitIn(t, dir, "", "checkout", "-q", "main")
		write(ours)
		hostGitIn(t, dir, "", "commit", "-q", "-am", "ours")
		hostGitIn(t, dir, "", "merge", "-q", "theirs")
		if hostGitIn(t, dir, "", "ls-files", "-u") == "" {
			// No conflict: plain diffs are not what this tests.
			continue
		}
		for round := 0; round < 2; round++ {
			if round == 1 {
				data, err := os.ReadFile(filepath.Join(dir, "f"))
				if err != nil {
					t.Fatal(err)
				}
				write(randomEdit(r, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")))
			}
			want := hostGitIn(t, dir, "", "diff")
			var out, errb strings.Builder
			if code := run([]string{"-C", dir, "diff"}, &out, &errb, func(string) string { return "" }); code != 0 {
				t.Fatalf("diff: exit %d: %s", code, errb.String())
			}
			if err := os.Chdir(cwd); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("git diff of a conflict (base %q, ours %q, theirs %q):\ngit:\n%s\nours:\n%s", base, ours, theirs, want, out.String())
			}
			if strings.Contains(want, "@@@") {
				shown++
			}
		}
	}
	if shown < 10 {
		t.Fatalf("only %d combined diffs with hunks: the cases test too little", shown)
	}
	t.Logf("%d combined diffs with hunks", shown)
}
