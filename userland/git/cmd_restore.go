package main

import (
	"fmt"
	"strings"
)

// cmdRestore: git restore [--source=<tree>] [--staged] [--worktree] [--] <pathspec>...
// The worktree is restored from the index (or --source), the index
// (--staged) from HEAD (or --source); a path the source lacks is
// removed.
func cmdRestore(e *env, args []string) error {
	staged, worktree, source := false, false, ""
	var paths []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			paths = append(paths, args[i+1:]...)
			i = len(args)
		case a == "-S" || a == "--staged":
			staged = true
		case a == "-W" || a == "--worktree":
			worktree = true
		case a == "-q" || a == "--quiet" || a == "--no-overlay":
		case (a == "-s" || a == "--source") && i+1 < len(args):
			source = args[i+1]
			i++
		case strings.HasPrefix(a, "--source="):
			source = strings.TrimPrefix(a, "--source=")
		case strings.HasPrefix(a, "-s") && len(a) > 2:
			source = a[2:]
		case strings.HasPrefix(a, "-") && a != "-":
			return optionError("restore", a)
		default:
			paths = append(paths, a)
		}
	}
	if !staged {
		worktree = true
	}
	if len(paths) == 0 {
		return fatalf("you must specify path(s) to restore")
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	specs, err := pathspecs(rp, paths)
	if err != nil {
		return err
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	var src snapshot
	if source != "" || staged {
		rev := source
		if rev == "" {
			rev = "HEAD"
		}
		c, err := rp.resolveCommit(rev)
		if err != nil {
			if source != "" {
				return fatalf("could not resolve %s", source)
			}
			return err
		}
		if src, err = treeSnapshot(rp, c); err != nil {
			return err
		}
	} else {
		src = idx
	}
	m := newSpecMatcher(specs)
	var matched []string
	if staged {
		matched = unionPaths(m, src, idx)
	} else {
		matched = unionPaths(m, src, idx)
		if source == "" {
			matched = unionPaths(m, idx)
		}
	}
	if i := m.unmatched(); i >= 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("error: pathspec '%s' did not match any file(s) known to git", paths[i])}
	}
	if staged {
		if err := setIndexEntries(rp, matched, src); err != nil {
			return err
		}
	}
	if worktree {
		return checkoutPaths(rp, matched, src)
	}
	return nil
}
