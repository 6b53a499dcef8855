package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-git/v6/config"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// maxTrackingWalk bounds the commits counted for "ahead"/"behind": past it the
// counts are what was seen, and the walk stops rather than hold an
// unbounded set.
const maxTrackingWalk = 1 << 20

// trackingRef is the remote-tracking ref of branch's upstream, or "".
func trackingRef(rp *repo, branch string) plumbing.ReferenceName {
	remote, merge := branchUpstream(rp, branch)
	if remote == "" || merge == "" {
		return ""
	}
	if remote == "." {
		return plumbing.ReferenceName(merge)
	}
	cfg, err := rp.loadRepoConfig()
	if err != nil {
		return ""
	}
	r, ok := findRemote(cfg, remote)
	if !ok {
		return ""
	}
	for _, s := range r.fetch {
		rs := configRefSpec(s)
		if rs != nil && rs.Match(plumbing.ReferenceName(merge)) {
			return rs.Dst(plumbing.ReferenceName(merge))
		}
	}
	return ""
}

// ancestors lists the commits reachable from h (at most maxTrackingWalk).
func ancestors(rp *repo, h plumbing.Hash) map[plumbing.Hash]bool {
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{h}
	for len(stack) > 0 && len(seen) < maxTrackingWalk {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		co, err := rp.r.CommitObject(c)
		if err != nil {
			continue // a shallow clone's boundary
		}
		stack = append(stack, co.ParentHashes...)
	}
	return seen
}

// aheadBehind counts the commits of a not in b and of b not in a.
func aheadBehind(rp *repo, a, b plumbing.Hash) (ahead, behind int) {
	sa, sb := ancestors(rp, a), ancestors(rp, b)
	for h := range sa {
		if !sb[h] {
			ahead++
		}
	}
	for h := range sb {
		if !sa[h] {
			behind++
		}
	}
	return ahead, behind
}

// trackingText is git's paragraph about the branch's upstream (status
// follows it with an empty line, checkout does not), or "".
func trackingText(rp *repo, branch string, head *object.Commit) string {
	up := trackingRef(rp, branch)
	if up == "" || head == nil {
		return ""
	}
	name := prettyRef(up)
	ref, err := rp.r.Storer.Reference(up)
	if err != nil {
		return fmt.Sprintf("Your branch is based on '%s', but the upstream is gone.\n  (use \"git branch --unset-upstream\" to fixup)\n", name)
	}
	ahead, behind := aheadBehind(rp, head.Hash, ref.Hash())
	switch {
	case ahead == 0 && behind == 0:
		return fmt.Sprintf("Your branch is up to date with '%s'.\n", name)
	case behind == 0:
		return fmt.Sprintf("Your branch is ahead of '%s' by %d %s.\n  (use \"git push\" to publish your local commits)\n", name, ahead, plural(ahead, "commit", "commits"))
	case ahead == 0:
		return fmt.Sprintf("Your branch is behind '%s' by %d %s, and can be fast-forwarded.\n  (use \"git pull\" to update your local branch)\n", name, behind, plural(behind, "commit", "commits"))
	}
	return fmt.Sprintf("Your branch and '%s' have diverged,\nand have %d and %d different commits each, respectively.\n  (use \"git pull\" to merge the remote branch into yours)\n", name, ahead, behind)
}

// branchTracking is trackingText for the current branch.
func branchTracking(rp *repo) string {
	branch, attached, err := rp.branch()
	if err != nil || !attached {
		return ""
	}
	head, err := rp.head()
	if err != nil {
		return ""
	}
	return trackingText(rp, branch, head)
}

// statusTracking is git status's upstream paragraph.
func statusTracking(w io.Writer, rp *repo) {
	if t := branchTracking(rp); t != "" {
		fmt.Fprint(w, t+"\n")
	}
}

// checkoutTracking is what git checkout says of the upstream after a
// switch.
func checkoutTracking(w io.Writer, rp *repo) { fmt.Fprint(w, branchTracking(rp)) }

// checkoutRemoteBranch is git checkout NAME's fallback when there is no
// branch NAME: if exactly one remote has a branch NAME, a branch NAME
// is made from it, tracking it, and checked out. It reports whether it
// applied.
func checkoutRemoteBranch(e *env, rp *repo, name string) (bool, error) {
	cfg, err := rp.loadRepoConfig()
	if err != nil {
		return false, nil
	}
	var found []string
	var hash plumbing.Hash
	for _, r := range remotes(cfg) {
		ref, err := rp.r.Storer.Reference(plumbing.NewRemoteReferenceName(r.name, name))
		if err == nil && ref.Type() == plumbing.HashReference {
			found = append(found, r.name)
			hash = ref.Hash()
		}
	}
	if len(found) != 1 || plumbing.NewBranchReferenceName(name).Validate() != nil {
		return false, nil
	}
	if err := rp.r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), hash)); err != nil {
		return true, err
	}
	if err := switchTo(rp, name); err != nil {
		_ = rp.r.Storer.RemoveReference(plumbing.NewBranchReferenceName(name))
		return true, err
	}
	cfg, err = rp.loadRepoConfig()
	if err != nil {
		return true, err
	}
	setInPlace(cfg, "branch", name, "remote", found[0])
	setInPlace(cfg, "branch", name, "merge", plumbing.NewBranchReferenceName(name).String())
	if err := saveConfig(rp.configFile(), cfg); err != nil {
		return true, err
	}
	fmt.Fprintf(e.stdout, "branch '%s' set up to track '%s/%s'.\n", name, found[0], name)
	fmt.Fprintf(e.stderr, "Switched to a new branch '%s'\n", name)
	return true, nil
}

// listBranches prints git branch -a (all) or -r (remote-tracking only).
func listBranches(w io.Writer, rp *repo, local, remote bool) error {
	cur, attached, err := rp.branch()
	if err != nil {
		return err
	}
	iter, err := rp.r.Storer.IterReferences()
	if err != nil {
		return err
	}
	var heads, remotes []*plumbing.Reference
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		switch {
		case r.Name().IsBranch():
			heads = append(heads, r)
		case r.Name().IsRemote():
			remotes = append(remotes, r)
		}
		return nil
	})
	byName := func(a, b *plumbing.Reference) int { return strings.Compare(a.Name().String(), b.Name().String()) }
	slices.SortFunc(heads, byName)
	slices.SortFunc(remotes, byName)
	if local {
		for _, r := range heads {
			mark := "  "
			if attached && r.Name().Short() == cur {
				mark = "* "
			}
			fmt.Fprintf(w, "%s%s\n", mark, r.Name().Short())
		}
	}
	if remote {
		prefix := ""
		if local {
			prefix = "remotes/"
		}
		for _, r := range remotes {
			n := strings.TrimPrefix(r.Name().String(), "refs/remotes/")
			if r.Type() == plumbing.SymbolicReference {
				fmt.Fprintf(w, "  %s%s -> %s\n", prefix, n, strings.TrimPrefix(r.Target().String(), "refs/remotes/"))
				continue
			}
			fmt.Fprintf(w, "  %s%s\n", prefix, n)
		}
	}
	return nil
}

// configRefSpec parses a configured refspec, or returns nil.
func configRefSpec(s string) *config.RefSpec {
	rs := config.RefSpec(s)
	if rs.Validate() != nil {
		return nil
	}
	return &rs
}
