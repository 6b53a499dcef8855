package main

import (
	"fmt"
	"strings"
)

// cmdRm: git rm [-f] [-r] [-q] [--cached] [-n] [--] <pathspec>...
func cmdRm(e *env, args []string) error {
	args = expandShort(args, "")
	force, recursive, quiet, cached, dryRun, ignoreUnmatch := false, false, false, false, false, false
	var paths []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			paths = append(paths, args[i+1:]...)
			i = len(args)
		case a == "-f" || a == "--force":
			force = true
		case a == "-r":
			recursive = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--cached":
			cached = true
		case a == "-n" || a == "--dry-run":
			dryRun = true
		case a == "--ignore-unmatch":
			ignoreUnmatch = true
		case strings.HasPrefix(a, "-") && a != "-":
			return optionError("rm", a)
		default:
			paths = append(paths, a)
		}
	}
	if len(paths) == 0 {
		return fatalf("No pathspec was given. Which files should I remove?")
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
	var matched []string
	for i, s := range specs {
		m := newSpecMatcher([]string{s})
		found := unionPaths(m, idx)
		if len(found) == 0 {
			if ignoreUnmatch {
				continue
			}
			return fatalf("pathspec '%s' did not match any files", paths[i])
		}
		if !recursive && !(len(found) == 1 && found[0] == s) && !strings.ContainsAny(s, "*?[") {
			return fatalf("not removing '%s' recursively without -r", paths[i])
		}
		matched = append(matched, found...)
	}
	if len(matched) == 0 {
		return nil
	}
	matched = unionPaths(newSpecMatcher(matched), idx)
	if !force {
		if err := rmSafety(rp, idx, matched, cached); err != nil {
			return err
		}
	}
	for _, p := range matched {
		if !quiet {
			fmt.Fprintf(e.stdout, "rm '%s'\n", p)
		}
	}
	if dryRun {
		return nil
	}
	if err := setIndexEntries(rp, matched, snapshot{}); err != nil {
		return err
	}
	if !cached {
		for _, p := range matched {
			if err := removeWorktreeFile(rp, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// rmSafety refuses, as git does without -f, to lose content that is
// only in the index or only in the worktree.
func rmSafety(rp *repo, idx snapshot, paths []string, cached bool) error {
	head, err := rp.head()
	if err != nil {
		return err
	}
	tree, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	var both, local, staged []string
	for _, p := range paths {
		ie := idx[p]
		he, inHead := tree[p]
		we, inWT, err := worktreeFile(rp, p)
		if err != nil {
			return err
		}
		stagedDiff := !inHead || he.hash != ie.hash || he.mode != ie.mode
		localDiff := inWT && (we.hash != ie.hash || we.mode != ie.mode)
		switch {
		case stagedDiff && localDiff && (!inHead || we.hash != he.hash):
			both = append(both, p)
		case cached:
		case localDiff:
			local = append(local, p)
		case stagedDiff && head != nil:
			staged = append(staged, p)
		}
	}
	var msgs []string
	list := func(files []string, one, many, hint string) {
		if len(files) == 0 {
			return
		}
		head := one
		if len(files) > 1 {
			head = many
		}
		msgs = append(msgs, "error: "+head+"\n    "+strings.Join(files, "\n    ")+"\n"+hint)
	}
	list(both, "the following file has staged content different from both the\nfile and the HEAD:",
		"the following files have staged content different from both the\nfile and the HEAD:", "(use -f to force removal)")
	list(staged, "the following file has changes staged in the index:",
		"the following files have changes staged in the index:", "(use --cached to keep the file, or -f to force removal)")
	list(local, "the following file has local modifications:",
		"the following files have local modifications:", "(use --cached to keep the file, or -f to force removal)")
	if len(msgs) > 0 {
		return &exitError{code: 1, msg: strings.Join(msgs, "\n")}
	}
	return nil
}
