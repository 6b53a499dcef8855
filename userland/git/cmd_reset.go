package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// cmdReset: git reset [--soft | --mixed | --hard] [-q] [<commit>] and
// git reset [-q] [<tree-ish>] [--] <pathspec>...
func cmdReset(e *env, args []string) error {
	mode, quiet := "", false
	var rest []string
	dashdash := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			dashdash = len(rest)
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case a == "--soft" || a == "--mixed" || a == "--hard":
			mode = a[2:]
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--no-refresh":
		case strings.HasPrefix(a, "-") && a != "-":
			return optionError("reset", a)
		default:
			rest = append(rest, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	rev := "HEAD"
	paths := rest
	switch {
	case dashdash > 0:
		rev, paths = rest[0], rest[1:]
		if dashdash > 1 {
			return fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.\n"+
				"Use '--' to separate paths from revisions, like this:\n"+
				"'git <command> [<revision>...] -- [<file>...]'", rest[1])
		}
	case dashdash < 0 && len(rest) > 0:
		if _, err := resolve(rp, rest[0]); err == nil {
			if _, serr := os.Lstat(filepath.Join(rp.cwd, rest[0])); serr == nil && len(rest) == 1 {
				return fatalf("ambiguous argument '%s': both revision and filename\n"+
					"Use '--' to separate paths from revisions, like this:\n"+
					"'git <command> [<revision>...] -- [<file>...]'", rest[0])
			}
			rev, paths = rest[0], rest[1:]
		} else {
			for _, p := range rest {
				if _, serr := os.Lstat(filepath.Join(rp.cwd, p)); serr != nil {
					return unknownRevision(p)
				}
			}
		}
	}
	target, err := rp.resolveCommit(rev)
	if err != nil {
		if dashdash > 0 {
			return fatalf("Failed to resolve '%s' as a valid tree.", rev)
		}
		return err
	}
	if len(paths) > 0 {
		if mode == "hard" || mode == "soft" {
			return fatalf("Cannot do %s reset with paths.", mode)
		}
		specs, err := pathspecs(rp, paths)
		if err != nil {
			return err
		}
		src, err := treeSnapshot(rp, target)
		if err != nil {
			return err
		}
		idx, err := indexSnapshot(rp)
		if err != nil {
			return err
		}
		if err := setIndexEntries(rp, unionPaths(newSpecMatcher(specs), src, idx), src); err != nil {
			return err
		}
		if !quiet {
			return listUnstaged(e.stdout, rp)
		}
		return nil
	}
	old, err := rp.head()
	if err != nil {
		return err
	}
	if old != nil {
		if err := writeOrigHead(rp, old.Hash); err != nil {
			return err
		}
	}
	switch mode {
	case "soft":
		return rp.wt.Reset(&git.ResetOptions{Commit: target.Hash, Mode: git.SoftReset})
	case "hard":
		if err := hardReset(rp, target); err != nil {
			return err
		}
		if !quiet {
			fmt.Fprintf(e.stdout, "HEAD is now at %s %s\n", short(target.Hash), subjectOf(target.Message))
		}
		return nil
	}
	if err := rp.wt.Reset(&git.ResetOptions{Commit: target.Hash, Mode: git.MixedReset}); err != nil {
		return err
	}
	if !quiet {
		return listUnstaged(e.stdout, rp)
	}
	return nil
}

// listUnstaged is reset's report of tracked files that differ from the
// index after it.
func listUnstaged(w io.Writer, rp *repo) error {
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	wt, err := worktreeSnapshot(rp, idx)
	if err != nil {
		return err
	}
	changes := compare(idx, wt)
	if len(changes) == 0 {
		return nil
	}
	fmt.Fprintln(w, "Unstaged changes after reset:")
	for _, c := range changes {
		code := "M"
		if c.to == nil {
			code = "D"
		}
		fmt.Fprintf(w, "%s\t%s\n", code, c.path)
	}
	return nil
}

// hardReset points HEAD at target and makes the index and the worktree
// match its tree. Unlike go-git's hard reset, which diffs the old HEAD's
// tree, it starts from the index, as git does: a file only added to the
// index goes, and a file only removed from it stays as an untracked one.
func hardReset(rp *repo, target *object.Commit) error {
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	want, err := treeSnapshot(rp, target)
	if err != nil {
		return err
	}
	if err := rp.wt.Reset(&git.ResetOptions{Commit: target.Hash, Mode: git.MixedReset}); err != nil {
		return err
	}
	return checkoutPaths(rp, unionPaths(newSpecMatcher(nil), idx, want), want)
}

// checkoutPaths makes the worktree files of paths match src: written
// where they differ, removed where src lacks them.
func checkoutPaths(rp *repo, paths []string, src snapshot) error {
	for _, p := range paths {
		ent, ok := src[p]
		if !ok {
			if err := removeWorktreeFile(rp, p); err != nil {
				return err
			}
			continue
		}
		cur, exists, err := worktreeFile(rp, p)
		if err != nil {
			return err
		}
		if exists && cur.hash == ent.hash && cur.mode == ent.mode {
			continue
		}
		if err := writeWorktreeFile(rp, p, ent); err != nil {
			return err
		}
	}
	return nil
}
