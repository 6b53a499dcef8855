package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// maxCandidates is how many tags describe weighs, as git's default.
const maxCandidates = 10

// tagName is a tag that names a commit for describe.
type tagName struct {
	name      string
	annotated bool
	when      int64
}

// cmdDescribe: git describe [--tags] [--always] [--long] [--abbrev=<n>]
// [--dirty[=<mark>]] [<commit-ish>...].
func cmdDescribe(e *env, args []string) error {
	tags, always, long, dirty := false, false, false, ""
	abbrev := 7
	var revs, match, exclude []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "--match" || a == "--exclude") && i+1 < len(args) {
			a += "=" + args[i+1]
			i++
		}
		switch {
		case a == "--tags":
			tags = true
		case a == "--always":
			always = true
		case a == "--long":
			long = true
		case a == "--dirty":
			dirty = "-dirty"
		case strings.HasPrefix(a, "--dirty="):
			dirty = strings.TrimPrefix(a, "--dirty=")
		case strings.HasPrefix(a, "--match="):
			match = append(match, strings.TrimPrefix(a, "--match="))
		case strings.HasPrefix(a, "--exclude="):
			exclude = append(exclude, strings.TrimPrefix(a, "--exclude="))
		case strings.HasPrefix(a, "--abbrev="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "--abbrev="))
			if err != nil {
				return usagef("error: option `abbrev' expects a numerical value")
			}
			abbrev = n
			if abbrev != 0 {
				abbrev = max(4, min(abbrev, 40))
			}
		case strings.HasPrefix(a, "-") && a != "-":
			return optionError("describe", a)
		default:
			revs = append(revs, a)
		}
	}
	if dirty != "" && len(revs) > 0 {
		return fatalf("option '--dirty' and commit-ishes cannot be used together")
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	names, unannotated, err := describeNames(rp, tags, match, exclude)
	if err != nil {
		return err
	}
	if len(names) == 0 && !always && !unannotated {
		return fatalf("No names found, cannot describe anything.")
	}
	if len(revs) == 0 {
		revs = []string{"HEAD"}
	}
	for _, rev := range revs {
		h, err := resolve(rp, rev)
		if err != nil {
			return fatalf("Not a valid object name %s", rev)
		}
		c, err := peelCommit(rp, h)
		if err != nil {
			return fatalf("%s is neither a commit nor blob", rev)
		}
		out, err := describeCommit(rp, c, names, abbrev, long)
		if err != nil {
			return err
		}
		if out == "" {
			if !always {
				if unannotated && !tags {
					return fatalf("No annotated tags can describe '%s'.\nHowever, there were unannotated tags: try --tags.", c.Hash)
				}
				return fatalf("No tags can describe '%s'.\nTry --always, or create some tags.", c.Hash)
			}
			out = c.Hash.String()[:max(abbrev, 7)]
			if abbrev == 0 {
				out = c.Hash.String()
			}
		}
		if dirty != "" {
			d, err := isDirty(rp, c)
			if err != nil {
				return err
			}
			if d {
				out += dirty
			}
		}
		fmt.Fprintln(e.stdout, out)
	}
	return nil
}

// describeNames maps commits to the tag that names each: annotated
// tags first, then the newer, as git prefers them.
func describeNames(rp *repo, lightweight bool, match, exclude []string) (map[plumbing.Hash]tagName, bool, error) {
	names := map[plumbing.Hash]tagName{}
	unannotated := false
	refs, err := rp.r.Tags()
	if err != nil {
		return nil, false, err
	}
	err = refs.ForEach(func(r *plumbing.Reference) error {
		t := tagName{name: r.Name().Short()}
		if len(match) > 0 && !slices.ContainsFunc(match, func(p string) bool { return wildMatch(p, t.name) }) ||
			slices.ContainsFunc(exclude, func(p string) bool { return wildMatch(p, t.name) }) {
			return nil
		}
		target := r.Hash()
		if tag, err := rp.r.TagObject(r.Hash()); err == nil {
			t.annotated, t.when, t.name = true, tag.Tagger.When.Unix(), tag.Name
		} else {
			unannotated = true
			if !lightweight {
				return nil
			}
		}
		c, err := peelCommit(rp, target)
		if err != nil {
			return nil
		}
		old, ok := names[c.Hash]
		if !ok || t.annotated && !old.annotated || t.annotated == old.annotated && t.when > old.when {
			names[c.Hash] = t
		}
		return nil
	})
	return names, unannotated, err
}

// describeCommit names c after the nearest tag: the candidate with the
// fewest commits between, by git's measure (commits reachable from c
// and not from the tag).
func describeCommit(rp *repo, c *object.Commit, names map[plumbing.Hash]tagName, abbrev int, long bool) (string, error) {
	suffix := func(name string, depth int, h plumbing.Hash) string {
		if abbrev == 0 {
			return name
		}
		return fmt.Sprintf("%s-%d-g%s", name, depth, h.String()[:abbrev])
	}
	if t, ok := names[c.Hash]; ok {
		if long {
			return suffix(t.name, 0, c.Hash), nil
		}
		return t.name, nil
	}
	w, err := newWalker(rp, []plumbing.Hash{c.Hash}, nil)
	if err != nil {
		return "", err
	}
	var candidates []plumbing.Hash
	for len(candidates) < maxCandidates {
		x, err := w.next()
		if err != nil {
			return "", err
		}
		if x == nil {
			break
		}
		if _, ok := names[x.Hash]; ok {
			candidates = append(candidates, x.Hash)
		}
	}
	if len(candidates) == 0 {
		return "", nil
	}
	all, err := reachable(rp, c.Hash)
	if err != nil {
		return "", err
	}
	best, bestDepth := plumbing.ZeroHash, -1
	for _, cand := range candidates {
		from, err := reachable(rp, cand)
		if err != nil {
			return "", err
		}
		depth := 0
		for h := range all {
			if !from[h] {
				depth++
			}
		}
		if bestDepth < 0 || depth < bestDepth {
			best, bestDepth = cand, depth
		}
	}
	return suffix(names[best].name, bestDepth, c.Hash), nil
}

// reachable is the set of commits reachable from h, h included.
func reachable(rp *repo, h plumbing.Hash) (map[plumbing.Hash]bool, error) {
	w, err := newWalker(rp, []plumbing.Hash{h}, nil)
	if err != nil {
		return nil, err
	}
	seen := map[plumbing.Hash]bool{}
	for {
		c, err := w.next()
		if err != nil {
			return nil, err
		}
		if c == nil {
			return seen, nil
		}
		seen[c.Hash] = true
	}
}

// isDirty says whether the index or the worktree's tracked files differ
// from c.
func isDirty(rp *repo, c *object.Commit) (bool, error) {
	tree, err := treeSnapshot(rp, c)
	if err != nil {
		return false, err
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return false, err
	}
	if len(compare(tree, idx)) > 0 {
		return true, nil
	}
	wt, err := worktreeSnapshot(rp, idx)
	if err != nil {
		return false, err
	}
	return len(compare(idx, wt)) > 0, nil
}
