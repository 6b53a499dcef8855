package main

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// cmdMv: git mv [-f] [-k] [-n] <source>... <destination>: renames in the
// index and the worktree.
func cmdMv(e *env, args []string) error {
	force, skip, dryRun := false, false, false
	var paths []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			paths = append(paths, args[i+1:]...)
			i = len(args)
		case a == "-f" || a == "--force":
			force = true
		case a == "-k":
			skip = true
		case a == "-n" || a == "--dry-run":
			dryRun = true
		case a == "-v" || a == "--verbose":
		case strings.HasPrefix(a, "-") && a != "-":
			return optionError("mv", a)
		default:
			paths = append(paths, a)
		}
	}
	if len(paths) < 2 {
		return usagef("%s", strings.TrimSuffix(usageTexts["mv"], "\n"))
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	srcs, dstArg := paths[:len(paths)-1], paths[len(paths)-1]
	dst, err := rp.rel(dstArg)
	if err != nil {
		return fatalf("'%s' is outside repository at '%s'", dstArg, rp.root)
	}
	dstFull := filepath.Join(rp.root, filepath.FromSlash(dst))
	fi, statErr := os.Stat(dstFull)
	intoDir := statErr == nil && fi.IsDir()
	if len(srcs) > 1 && !intoDir {
		return fatalf("destination '%s' is not a directory", dstArg)
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	type move struct{ from, to string }
	var moves []move
	for _, s := range srcs {
		src, err := rp.rel(s)
		if err != nil {
			return fatalf("'%s' is outside repository at '%s'", s, rp.root)
		}
		to := dst
		if intoDir {
			to = path.Join(dst, path.Base(src))
		}
		fail := func(reason string) error {
			if skip {
				return nil
			}
			return fatalf("%s, source=%s, destination=%s", reason, src, to)
		}
		srcFull := filepath.Join(rp.root, filepath.FromSlash(src))
		sfi, err := os.Lstat(srcFull)
		switch {
		case err != nil:
			if err := fail("bad source"); err != nil {
				return err
			}
			continue
		case sfi.IsDir():
			under := unionPaths(newSpecMatcher([]string{src}), idx)
			if len(under) == 0 {
				if err := fail("source directory is empty"); err != nil {
					return err
				}
				continue
			}
			if _, err := os.Lstat(filepath.Join(rp.root, filepath.FromSlash(to))); err == nil {
				if err := fail("destination already exists"); err != nil {
					return err
				}
				continue
			}
		default:
			if _, ok := idx[src]; !ok {
				if err := fail("not under version control"); err != nil {
					return err
				}
				continue
			}
			if _, err := os.Lstat(filepath.Join(rp.root, filepath.FromSlash(to))); err == nil && !force {
				if err := fail("destination exists"); err != nil {
					return err
				}
				continue
			}
		}
		moves = append(moves, move{src, to})
	}
	if dryRun {
		return nil
	}
	for _, m := range moves {
		from := filepath.Join(rp.root, filepath.FromSlash(m.from))
		to := filepath.Join(rp.root, filepath.FromSlash(m.to))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(from, to); err != nil {
			return fatalf("renaming '%s' failed: %s", m.from, errText(err))
		}
		var changed []string
		next := snapshot{}
		for p, ent := range idx {
			if p == m.from || strings.HasPrefix(p, m.from+"/") {
				np := m.to + strings.TrimPrefix(p, m.from)
				next[np] = ent
				changed = append(changed, p, np)
			}
		}
		for p, ent := range idx {
			if _, moved := next[p]; !moved && !(p == m.from || strings.HasPrefix(p, m.from+"/")) {
				next[p] = ent
			}
		}
		if err := setIndexEntries(rp, changed, next); err != nil {
			return err
		}
		idx = next
	}
	return nil
}
