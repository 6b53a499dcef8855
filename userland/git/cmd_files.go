package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v6/osfs"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/gitignore"
	"github.com/go-git/go-git/v6/plumbing/format/index"
)

// cmdCatFile: git cat-file (-t | -s | -e | -p) <object> and git cat-file
// <type> <object>.
func cmdCatFile(e *env, args []string) error {
	if len(args) != 2 {
		// git's argument-count usage shows --mailmap's argument, unlike -h.
		u := strings.Replace(usageTexts["cat-file"], "--mailmap             alias", "--mailmap ...         alias", 1)
		return usagef("%s", strings.TrimSuffix(u, "\n"))
	}
	mode, spec := args[0], args[1]
	rp, err := openRepo()
	if err != nil {
		return err
	}
	h, err := resolve(rp, spec)
	if err != nil {
		return fatalf("Not a valid object name %s", spec)
	}
	o, err := rp.r.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		if mode == "-e" {
			// A well-formed name of a missing object: silent, status 1.
			return &exitError{code: 1}
		}
		return fatalf("Not a valid object name %s", spec)
	}
	switch mode {
	case "-e":
		return nil
	case "-t":
		fmt.Fprintln(e.stdout, o.Type())
		return nil
	case "-s":
		fmt.Fprintln(e.stdout, o.Size())
		return nil
	case "-p":
		if o.Type() == plumbing.TreeObject {
			t, err := rp.r.TreeObject(h)
			if err != nil {
				return err
			}
			for _, ent := range t.Entries {
				typ := "blob"
				switch {
				case ent.Mode == 0o40000:
					typ = "tree"
				case ent.Mode == 0o160000:
					typ = "commit"
				}
				fmt.Fprintf(e.stdout, "%06o %s %s\t%s\n", uint32(ent.Mode), typ, ent.Hash, quotePath(ent.Name))
			}
			return nil
		}
		return copyObject(e.stdout, o)
	case "blob", "tree", "commit", "tag":
		want, _ := plumbing.ParseObjectType(mode)
		// A commit or tag given where a tree or commit is asked for is
		// peeled to it, as git does.
		for o.Type() != want {
			switch {
			case o.Type() == plumbing.TagObject:
				t, err := rp.r.TagObject(o.Hash())
				if err != nil {
					return err
				}
				h = t.Target
			case o.Type() == plumbing.CommitObject && want == plumbing.TreeObject:
				c, err := rp.r.CommitObject(o.Hash())
				if err != nil {
					return err
				}
				h = c.TreeHash
			default:
				return fatalf("git cat-file %s: bad file", spec)
			}
			if o, err = rp.r.Storer.EncodedObject(plumbing.AnyObject, h); err != nil {
				return err
			}
		}
		return copyObject(e.stdout, o)
	}
	return optionError("cat-file", mode)
}

func copyObject(w io.Writer, o plumbing.EncodedObject) error {
	rd, err := o.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	_, err = io.Copy(w, rd)
	return err
}

// untracked is one file or directory that is not in the index.
type untracked struct {
	path    string // slash path; a directory ends with "/"
	ignored bool
}

// maxWalkEntries bounds the worktree entries one listing visits.
const maxWalkEntries = 1 << 21

// findUntracked lists the worktree's untracked files, and (dirs) the
// directories holding nothing tracked as "dir/" instead of their
// files, with whether .gitignore, info/exclude or core.excludesFile
// ignores each.
func findUntracked(rp *repo, idx snapshot, dirs bool) ([]untracked, error) {
	fs := osfs.New(rp.root, osfs.WithBoundOS())
	base, err := gitignore.RootPatterns(fs)
	if err != nil {
		return nil, err
	}
	if global, err := gitignore.LoadGlobalPatterns(osfs.New("/", osfs.WithBoundOS())); err == nil {
		base = append(global, base...)
	}
	trackedDir := map[string]bool{}
	for p := range idx {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			trackedDir[d] = true
		}
	}
	var out []untracked
	seen := 0
	var walk func(rel []string, scope *gitignore.Scope, collapse bool) error
	walk = func(rel []string, scope *gitignore.Scope, collapse bool) error {
		entries, err := os.ReadDir(filepath.Join(rp.root, filepath.Join(rel...)))
		if err != nil {
			return nil
		}
		for _, ent := range entries {
			if seen++; seen > maxWalkEntries {
				return fatalf("worktree too large to list")
			}
			name := ent.Name()
			if len(rel) == 0 && name == ".git" {
				continue
			}
			p := append(slices.Clone(rel), name)
			sp := strings.Join(p, "/")
			if ent.IsDir() {
				ignored := scope.Match(p, true)
				sub, err := scope.Descend(p, func() ([]gitignore.Pattern, error) { return gitignore.DirPatterns(fs, p) })
				if err != nil {
					return err
				}
				if dirs && !trackedDir[sp] {
					out = append(out, untracked{path: sp + "/", ignored: ignored})
					continue
				}
				if err := walk(p, sub, collapse); err != nil {
					return err
				}
				continue
			}
			if _, ok := idx[sp]; ok {
				continue
			}
			out = append(out, untracked{path: sp, ignored: scope.Match(p, false)})
		}
		return nil
	}
	if err := walk(nil, gitignore.NewScope(base), dirs); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b untracked) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

// underCwd keeps the paths under the working directory (and matching
// specs), as ls-files and clean list them.
func underCwd(rp *repo, p string, m *specMatcher) bool {
	rel, err := filepath.Rel(rp.root, rp.cwd)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	if rel != "." && !strings.HasPrefix(p, rel+"/") {
		return false
	}
	return m.match(strings.TrimSuffix(p, "/"))
}

// cmdLsFiles: git ls-files [-c] [-s] [-m] [-d] [-o [--exclude-standard]
// [--directory]] [-z] [--] [<pathspec>...].
func cmdLsFiles(e *env, args []string) error {
	args = expandShort(args, "")
	var stage, modified, deleted, others, excludeStd, directory, cached, nul bool
	var paths []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--":
			paths = append(paths, args[i+1:]...)
			i = len(args)
		case "-c", "--cached":
			cached = true
		case "-s", "--stage":
			stage = true
		case "-m", "--modified":
			modified = true
		case "-d", "--deleted":
			deleted = true
		case "-o", "--others":
			others = true
		case "--exclude-standard":
			excludeStd = true
		case "--directory":
			directory = true
		case "-z":
			nul = true
		default:
			if strings.HasPrefix(a, "-") {
				return optionError("ls-files", a)
			}
			paths = append(paths, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	specs, err := pathspecs(rp, paths)
	if err != nil {
		return err
	}
	m := newSpecMatcher(specs)
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	term := "\n"
	name := func(p string) string { return quotePath(rp.display(p)) }
	if nul {
		term = "\x00"
		name = rp.display
	}
	if !modified && !deleted && !others {
		cached = true
	}
	// The index's entries as stored: a conflicted path has one per
	// stage, and git lists each.
	raw, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	entries := slices.Clone(raw.Entries)
	slices.SortStableFunc(entries, func(a, b *index.Entry) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return int(a.Stage) - int(b.Stage)
	})
	stagesOf := map[string]int{}
	for _, ie := range entries {
		if ie.Stage != 0 {
			stagesOf[ie.Name]++
		}
	}
	if cached || stage {
		for _, ie := range entries {
			if !underCwd(rp, ie.Name, m) {
				continue
			}
			if stage {
				fmt.Fprintf(e.stdout, "%06o %s %d\t%s%s", uint32(ie.Mode), ie.Hash, ie.Stage, name(ie.Name), term)
			} else {
				fmt.Fprint(e.stdout, name(ie.Name)+term)
			}
		}
	}
	if deleted || modified {
		// git's order: entry by entry, "deleted" then "modified"; an
		// unmerged entry (one per stage) always counts as modified.
		wt, err := worktreeSnapshot(rp, idx)
		if err != nil {
			return err
		}
		changed := map[string]bool{}
		for _, c := range compare(idx, wt) {
			changed[c.path] = true
		}
		for _, ie := range entries {
			if !underCwd(rp, ie.Name, m) {
				continue
			}
			gone, differs := false, changed[ie.Name]
			if stagesOf[ie.Name] > 0 {
				// Each stage is compared with the file on its own.
				f, there, err := worktreeFile(rp, ie.Name)
				if err != nil {
					return err
				}
				gone, differs = !there, !there || f.hash != ie.Hash || f.mode != ie.Mode
			} else {
				_, there := wt[ie.Name]
				gone = !there
			}
			if deleted && gone {
				fmt.Fprint(e.stdout, name(ie.Name)+term)
			}
			if modified && differs {
				fmt.Fprint(e.stdout, name(ie.Name)+term)
			}
		}
	}
	if others {
		list, err := findUntracked(rp, idx, directory)
		if err != nil {
			return err
		}
		for _, u := range list {
			if excludeStd && u.ignored || !underCwd(rp, u.path, m) {
				continue
			}
			fmt.Fprint(e.stdout, name(u.path)+term)
		}
	}
	return nil
}

// cmdClean: git clean [-n] [-f] [-q] [-d] [-x | -X] [--] [<pathspec>...].
func cmdClean(e *env, args []string) error {
	args = expandShort(args, "")
	var dryRun, force, quiet, dirs, withIgnored, onlyIgnored bool
	var paths []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--":
			paths = append(paths, args[i+1:]...)
			i = len(args)
		case "-n", "--dry-run":
			dryRun = true
		case "-f", "--force":
			force = true
		case "-q", "--quiet":
			quiet = true
		case "-d":
			dirs = true
		case "-x":
			withIgnored = true
		case "-X":
			onlyIgnored = true
		default:
			if strings.HasPrefix(a, "-") {
				return optionError("clean", a)
			}
			paths = append(paths, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	if !force && !dryRun && configValue(rp, "clean", "requireForce") != "false" {
		return fatalf("clean.requireForce defaults to true and neither -i, -n, nor -f given; refusing to clean")
	}
	if withIgnored && onlyIgnored {
		return fatalf("-x and -X cannot be used together")
	}
	specs, err := pathspecs(rp, paths)
	if err != nil {
		return err
	}
	m := newSpecMatcher(specs)
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	list, err := findUntracked(rp, idx, true)
	if err != nil {
		return err
	}
	for _, u := range list {
		isDir := strings.HasSuffix(u.path, "/")
		switch {
		case !underCwd(rp, u.path, m):
			continue
		case onlyIgnored && !u.ignored, !onlyIgnored && !withIgnored && u.ignored:
			continue
		case isDir && !dirs:
			continue
		}
		if dryRun {
			fmt.Fprintf(e.stdout, "Would remove %s\n", quotePath(rp.display(u.path)))
			continue
		}
		if !quiet {
			fmt.Fprintf(e.stdout, "Removing %s\n", quotePath(rp.display(u.path)))
		}
		full := filepath.Join(rp.root, filepath.FromSlash(strings.TrimSuffix(u.path, "/")))
		if err := os.RemoveAll(full); err != nil {
			fmt.Fprintf(e.stderr, "warning: failed to remove %s: %s\n", u.path, errText(err))
		}
	}
	return nil
}
