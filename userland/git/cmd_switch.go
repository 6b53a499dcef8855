package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// cmdSwitch: git switch [-q] <branch> | -c|-C <new> [<start>] |
// --detach [<commit>] | -.
func cmdSwitch(e *env, args []string) error {
	create, forceCreate, detach, quiet, orphan := "", false, false, false, ""
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-c" || a == "-C" || a == "--create" || a == "--force-create") && i+1 < len(args):
			create, forceCreate = args[i+1], a == "-C" || a == "--force-create"
			i++
		case a == "-c" || a == "-C" || a == "--create" || a == "--force-create":
			return usagef("error: switch `%s' requires a value", strings.TrimLeft(a, "-")[:1])
		case a == "-d" || a == "--detach":
			detach = true
		case a == "--orphan" && i+1 < len(args):
			orphan = args[i+1]
			i++
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--no-guess" || a == "--guess" || a == "--no-track":
		case a == "-":
			rest = append(rest, "@{-1}")
		case strings.HasPrefix(a, "-"):
			return optionError("switch", a)
		default:
			rest = append(rest, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return fatalf("only one reference expected")
	}
	oldHead, err := rp.head()
	if err != nil {
		return err
	}
	oldBranch, attached, err := rp.branch()
	if err != nil {
		return err
	}
	from := oldBranch
	if !attached && oldHead != nil {
		from = oldHead.Hash.String()
	}
	var out bytes.Buffer
	switch {
	case orphan != "":
		// A new unborn branch: HEAD moves to it and HEAD's files go from
		// the index and the worktree, as a checkout of an empty tree.
		if len(rest) > 0 {
			return fatalf("'--orphan' cannot take <start-point>")
		}
		if !validRefName(orphan) {
			return fatalf("'%s' is not a valid branch name", orphan)
		}
		if _, err := rp.r.Reference(plumbing.NewBranchReferenceName(orphan), false); err == nil {
			return fatalf("a branch named '%s' already exists", orphan)
		}
		from, err := treeSnapshot(rp, oldHead)
		if err != nil {
			return err
		}
		if err := moveBetween(rp, from, snapshot{}); err != nil {
			return err
		}
		if err := rp.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(orphan))); err != nil {
			return err
		}
		if !quiet {
			fmt.Fprintf(e.stderr, "Switched to a new branch '%s'\n", orphan)
		}
		return nil
	case create != "":
		start := "HEAD"
		if len(rest) == 1 {
			start = rest[0]
		}
		verb := "Switched to a new branch"
		if forceCreate {
			if _, err := rp.r.Reference(plumbing.NewBranchReferenceName(create), false); err == nil {
				verb = "Reset branch"
				c, err := rp.resolveCommit(start)
				if err != nil {
					return err
				}
				if err := moveTo(rp, c); err != nil {
					return err
				}
				if err := rp.r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(create), c.Hash)); err != nil {
					return err
				}
				if err := rp.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(create))); err != nil {
					return err
				}
				fmt.Fprintf(&out, "%s '%s'\n", verb, create)
				return finishSwitch(e, rp, quiet, oldHead, from, create, &out)
			}
		}
		if oldHead == nil && start == "HEAD" {
			if err := rp.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(create))); err != nil {
				return err
			}
		} else {
			if err := createBranch(rp, create, start); err != nil {
				return err
			}
			if err := switchTo(rp, create); err != nil {
				return err
			}
		}
		fmt.Fprintf(&out, "Switched to a new branch '%s'\n", create)
		return finishSwitch(e, rp, quiet, oldHead, from, create, &out)
	case detach:
		rev := "HEAD"
		if len(rest) == 1 {
			rev = rest[0]
		}
		c, err := rp.resolveCommit(rev)
		if err != nil {
			return fatalf("invalid reference: %s", rev)
		}
		if err := checkoutDetached(rp, c); err != nil {
			return err
		}
		if !attached && oldHead != nil && oldHead.Hash != c.Hash {
			fmt.Fprintf(&out, "Previous HEAD position was %s %s\n", short(oldHead.Hash), subjectOf(oldHead.Message))
		}
		fmt.Fprintf(&out, "HEAD is now at %s %s\n", short(c.Hash), subjectOf(c.Message))
		return finishSwitch(e, rp, quiet, oldHead, from, c.Hash.String(), &out)
	case len(rest) == 0:
		return fatalf("missing branch or commit argument")
	}
	name := rest[0]
	if name == "@{-1}" || strings.HasPrefix(name, "@{-") {
		n := 1
		fmt.Sscanf(name, "@{-%d}", &n)
		prev, ok := previousBranch(rp, n)
		if !ok {
			return fatalf("invalid reference: %s", name)
		}
		name = prev
	}
	if _, err := rp.r.Reference(plumbing.NewBranchReferenceName(name), false); err != nil {
		// As git: a branch of the one remote that has NAME is made and
		// tracked.
		te := e
		if quiet {
			te = &env{stdout: io.Discard, stderr: io.Discard, getenv: e.getenv}
		}
		if ok, err := checkoutRemoteBranch(te, rp, name); ok {
			return err
		}
		if _, rerr := resolve(rp, name); rerr == nil {
			return fatalf("a branch is expected, got %s\nhint: If you want to detach HEAD at the commit, try again with the --detach option.", describeRef(rp, name))
		}
		return fatalf("invalid reference: %s", name)
	}
	if attached && oldBranch == name {
		fmt.Fprintf(&out, "Already on '%s'\n", name)
		return switchTracking(e, rp, quiet, finishSwitch(e, rp, quiet, oldHead, "", "", &out))
	}
	if err := switchTo(rp, name); err != nil {
		return err
	}
	if !attached && oldHead != nil {
		fmt.Fprintf(&out, "Previous HEAD position was %s %s\n", short(oldHead.Hash), subjectOf(oldHead.Message))
	}
	fmt.Fprintf(&out, "Switched to branch '%s'\n", name)
	return switchTracking(e, rp, quiet, finishSwitch(e, rp, quiet, oldHead, from, name, &out))
}

// switchTracking adds, after a switch to a branch that went well, how
// the branch stands against its upstream, as git does.
func switchTracking(e *env, rp *repo, quiet bool, err error) error {
	if err == nil && !quiet {
		checkoutTracking(e.stdout, rp)
	}
	return err
}

// describeRef is how git names a non-branch in "a branch is expected".
func describeRef(rp *repo, name string) string {
	if ref, _, ok := lookupRef(rp, name); ok {
		switch {
		case ref.IsTag():
			return "tag '" + name + "'"
		case ref.IsRemote():
			return "remote branch '" + name + "'"
		}
	}
	return "commit '" + name + "'"
}

// finishSwitch reports local changes (stdout) and the switch (stderr),
// and records the move in HEAD's reflog for "git switch -".
func finishSwitch(e *env, rp *repo, quiet bool, old *object.Commit, from, to string, msg *bytes.Buffer) error {
	if !quiet {
		if err := listLocalChanges(e.stdout, rp); err != nil {
			return err
		}
		_, _ = io.Copy(e.stderr, msg)
	}
	if from != "" && to != "" && old != nil {
		logCheckout(e, rp, old.Hash, from, to)
	}
	return nil
}

// checkoutDetached moves the worktree to c and detaches HEAD there.
func checkoutDetached(rp *repo, c *object.Commit) error {
	if err := moveTo(rp, c); err != nil {
		return err
	}
	return rp.r.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, c.Hash))
}

// moveTo carries the index and worktree from HEAD's tree to c's, as a
// checkout does: only the files that differ between the two trees
// change, and local changes elsewhere stay. Like git, it refuses (and
// changes nothing) when such a file has local changes.
func moveTo(rp *repo, c *object.Commit) error {
	head, err := rp.head()
	if err != nil {
		return err
	}
	from, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	to, err := treeSnapshot(rp, c)
	if err != nil {
		return err
	}
	return moveBetween(rp, from, to)
}

// moveBetween carries the index and worktree from tree from to tree to,
// refusing when a file that differs between them has local changes.
func moveBetween(rp *repo, from, to snapshot) error {
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	var paths, blocked []string
	for _, ch := range compare(from, to) {
		paths = append(paths, ch.path)
		ie, inIdx := idx[ch.path]
		we, inWT, err := worktreeFile(rp, ch.path)
		if err != nil {
			return err
		}
		// A file is clean when it is as in the old tree or already as
		// in the new one; missing is clean unless the new tree changes
		// a file the old one had.
		clean := func(e entry, ok bool) bool {
			if !ok {
				return ch.to == nil || ch.from == nil
			}
			if ch.from != nil && e.hash == ch.from.hash && e.mode == ch.from.mode {
				return true
			}
			return ch.to != nil && e.hash == ch.to.hash && e.mode == ch.to.mode
		}
		if !clean(ie, inIdx) || !clean(we, inWT) {
			blocked = append(blocked, ch.path)
		}
	}
	if len(blocked) > 0 {
		return &exitError{code: 1, msg: "error: Your local changes to the following files would be overwritten by checkout:\n\t" +
			strings.Join(blocked, "\n\t") + "\nPlease commit your changes or stash them before you switch branches.\nAborting"}
	}
	if err := setIndexEntries(rp, paths, to); err != nil {
		return err
	}
	return checkoutPaths(rp, paths, to)
}

// listLocalChanges is the "M\tpath" list git prints after switching
// with changes carried along: HEAD against the index and worktree.
func listLocalChanges(w io.Writer, rp *repo) error {
	head, err := rp.head()
	if err != nil {
		return err
	}
	tree, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	wt, err := worktreeSnapshot(rp, idx)
	if err != nil {
		return err
	}
	for _, c := range compare(tree, wt) {
		code := "M"
		switch {
		case c.from == nil:
			code = "A"
		case c.to == nil:
			code = "D"
		}
		fmt.Fprintf(w, "%s\t%s\n", code, c.path)
	}
	return nil
}

// logCheckout appends git's "checkout: moving from A to B" entry to
// HEAD's reflog, which @{-N} and "git switch -" read. A missing
// identity only means no entry.
func logCheckout(e *env, rp *repo, old plumbing.Hash, from, to string) {
	who, err := identity(e, rp, "COMMITTER")
	if err != nil {
		return
	}
	head, err := rp.head()
	if err != nil || head == nil {
		return
	}
	line := fmt.Sprintf("%s %s %s <%s> %d %s\tcheckout: moving from %s to %s\n",
		old, head.Hash, who.Name, who.Email, who.When.Unix(), who.When.Format("-0700"), from, to)
	dir := filepath.Join(rp.gitDir(), "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "HEAD"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(line)
}
