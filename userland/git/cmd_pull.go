package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

const noTrackingPull = `There is no tracking information for the current branch.
Please specify which branch you want to merge with.
See git-pull(1) for details.

    git pull <remote> <branch>

If you wish to set tracking information for this branch you can do so with:

    git branch --set-upstream-to=%s/<branch> %s
`

// divergentPull is git's refusal to pull divergent branches when
// neither the command line nor pull.rebase / pull.ff says how.
const divergentPull = `hint: You have divergent branches and need to specify how to reconcile them.
hint: You can do so by running one of the following commands sometime before
hint: your next pull:
hint: 
hint:   git config pull.rebase false  # merge
hint:   git config pull.rebase true   # rebase
hint:   git config pull.ff only       # fast-forward only
hint: 
hint: You can replace "git config" with "git config --global" to set a default
hint: preference for all repositories. You can also pass --rebase, --no-rebase,
hint: or --ff-only on the command line to override the configured default per
hint: invocation.
fatal: Need to specify how to reconcile divergent branches.`

// cmdPull: git pull [-q] [--ff-only|--ff|--no-ff] [-r|--rebase|--no-rebase]
// [REMOTE [BRANCH]]: fetch, then fast-forward, merge (mergeInto) or
// rebase (rebaseStart).
func cmdPull(e *env, args []string) error {
	quiet, ffOnly, noFF, chosen := false, false, false, false
	rebase := ""
	var rest []string
	for _, a := range args {
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--ff-only":
			ffOnly, noFF, chosen = true, false, true
		case a == "--ff":
			ffOnly, noFF, chosen = false, false, true
		case a == "--no-ff":
			ffOnly, noFF, chosen = false, true, true
		case a == "--no-rebase" || a == "--rebase=false":
			chosen, rebase = true, "false"
		case a == "-r" || a == "--rebase" || a == "--rebase=true":
			chosen, rebase = true, "true"
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return usagef("error: unknown option `%s'\nusage: git pull [-q] [--ff-only] [<repository> [<refspec>...]]", strings.TrimLeft(a, "-"))
		default:
			rest = append(rest, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	// The configured way to reconcile, where the command line said none.
	if rebase == "" {
		rebase = strings.ToLower(configValue(rp, "pull", "rebase"))
	}
	switch rebase {
	case "merges", "interactive", "i", "m":
		return fatalf("pull.rebase=%s: rebasing merges or interactively is not supported here", rebase)
	case "":
	default:
		chosen = true
	}
	if ff := strings.ToLower(configValue(rp, "pull", "ff")); ff != "" && !chosen {
		chosen = true
		ffOnly, noFF = ff == "only", ff == "false"
	}
	branch, attached, err := rp.branch()
	if err != nil {
		return err
	}
	var out io.Writer = e.stderr
	if quiet {
		out = io.Discard
	}
	var theirs plumbing.Hash
	theirsName, remoteName := "", ""
	if len(rest) > 0 {
		hashes, err := fetchWithHeads(rp, out, rest[0], rest[1:], false, false, 0)
		if err != nil {
			return fetchFailed(err)
		}
		if len(hashes) == 0 {
			// git pull REMOTE: the upstream of the branch, if it is there.
			upRemote, upMerge := branchUpstream(rp, branch)
			if upRemote != rest[0] || upMerge == "" {
				return &exitError{code: 1, msg: "You asked to pull from the remote '" + rest[0] + "', but did not specify\na branch. Because this is not the default configured remote\nfor your current branch, you must specify a branch on the command line."}
			}
			h, err := trackingHash(rp, upRemote, upMerge)
			if err != nil {
				return err
			}
			theirs, theirsName = h, upMerge
		} else {
			theirs, theirsName = hashes[0], rest[1]
		}
		remoteName = rest[0]
	} else {
		upRemote, upMerge := "", ""
		if attached {
			upRemote, upMerge = branchUpstream(rp, branch)
		}
		if upRemote == "" || upMerge == "" {
			if _, err := fetchWithHeads(rp, out, orDefault(upRemote, "origin"), nil, false, false, 0); err != nil {
				return fetchFailed(err)
			}
			name := branch
			if !attached {
				name = "<branch>"
			}
			return &exitError{code: 1, msg: strings.TrimSuffix(fmt.Sprintf(noTrackingPull, orDefault(upRemote, "origin"), name), "\n")}
		}
		if _, err := fetchWithHeads(rp, out, upRemote, nil, false, false, 0); err != nil {
			return fetchFailed(err)
		}
		h, err := trackingHash(rp, upRemote, upMerge)
		if err != nil {
			return err
		}
		theirs, theirsName, remoteName = h, upMerge, upRemote
	}
	head, err := rp.head()
	if err != nil {
		return err
	}
	other, err := rp.r.CommitObject(theirs)
	if err != nil {
		return err
	}
	if head == nil {
		return fastForward(e, rp, nil, other, quiet)
	}
	if rebase == "true" && !isAncestor(rp, head.Hash, theirs) {
		// git pull --rebase: the local commits onto the fetched one (up
		// to date: rebase's own message).
		return rebaseStart(e, rp, theirs, theirs, quiet)
	}
	if isAncestor(rp, theirs, head.Hash) {
		if !quiet {
			fmt.Fprintln(e.stdout, "Already up to date.")
		}
		return nil
	}
	if isAncestor(rp, head.Hash, theirs) && !noFF {
		return fastForward(e, rp, head, other, quiet)
	}
	if ffOnly {
		return fatalf("Not possible to fast-forward, aborting.")
	}
	if !chosen {
		return &exitError{code: 128, msg: divergentPull}
	}
	// git pull merges the fetched commit by its hash (the conflict
	// markers name it), with fmt-merge-msg's message for FETCH_HEAD.
	kind := "branch"
	if strings.HasPrefix(theirsName, "refs/tags/") {
		kind = "tag"
	}
	name := strings.TrimPrefix(strings.TrimPrefix(theirsName, "refs/heads/"), "refs/tags/")
	msg := "Merge " + kind + " '" + name + "'"
	if _, u, _, err := resolveRemote(rp, remoteName); err == nil {
		msg += " of " + fetchDisplayURL(u)
	}
	code, err := mergeInto(e, rp, theirs, theirs.String(), mergeOptions{noFF: noFF, quiet: quiet, defaultMsg: msg})
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// fetchFailed is pull's status when its fetch failed: git pull runs git
// fetch and ends with 1 whatever fetch's status was.
func fetchFailed(err error) error {
	var xe *exitError
	if errors.As(err, &xe) {
		return &exitError{code: 1, msg: xe.msg}
	}
	return &exitError{code: 1, msg: "fatal: " + errText(err)}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// trackingHash is the commit the remote-tracking ref of a merge ref
// names after a fetch.
func trackingHash(rp *repo, remote, merge string) (plumbing.Hash, error) {
	_, _, specs, err := resolveRemote(rp, remote)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, s := range specs {
		if s.Match(plumbing.ReferenceName(merge)) {
			if ref, err := rp.r.Storer.Reference(s.Dst(plumbing.ReferenceName(merge))); err == nil {
				return ref.Hash(), nil
			}
		}
	}
	return plumbing.ZeroHash, fatalf("couldn't find remote ref %s", merge)
}

// fastForward moves the current branch (and worktree) from head to to,
// refusing like git when a file it changes has local changes.
func fastForward(e *env, rp *repo, head, to *object.Commit, quiet bool) error {
	a, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	b, err := treeSnapshot(rp, to)
	if err != nil {
		return err
	}
	changes := compare(a, b)
	st, err := rp.wt.Status()
	if err != nil {
		return err
	}
	var blocked, untracked []string
	for _, c := range changes {
		fs, ok := st[c.path]
		switch {
		case !ok:
		case fs.Worktree == git.Untracked && fs.Staging == git.Untracked:
			if c.to != nil {
				untracked = append(untracked, c.path)
			}
		case fs.Worktree != git.Unmodified || fs.Staging != git.Unmodified:
			blocked = append(blocked, c.path)
		}
	}
	if head != nil && !quiet {
		fmt.Fprintf(e.stdout, "Updating %s..%s\n", short(head.Hash), short(to.Hash))
	}
	if len(blocked) > 0 {
		return &exitError{code: 1, msg: "error: Your local changes to the following files would be overwritten by merge:\n\t" +
			strings.Join(blocked, "\n\t") + "\nPlease commit your changes or stash them before you merge.\nAborting"}
	}
	if len(untracked) > 0 {
		return &exitError{code: 1, msg: "error: The following untracked working tree files would be overwritten by merge:\n\t" +
			strings.Join(untracked, "\n\t") + "\nPlease move or remove them before you merge.\nAborting"}
	}
	if head == nil {
		// An unborn branch is born at the fetched commit.
		ref, err := rp.r.Storer.Reference(plumbing.HEAD)
		if err != nil {
			return err
		}
		target := plumbing.HEAD
		if ref.Type() == plumbing.SymbolicReference {
			target = ref.Target()
		}
		if err := rp.r.Storer.SetReference(plumbing.NewHashReference(target, to.Hash)); err != nil {
			return err
		}
	}
	if err := rp.wt.Reset(&git.ResetOptions{Commit: to.Hash, Mode: git.MergeReset}); err != nil {
		return err
	}
	if head == nil || quiet {
		return nil
	}
	fmt.Fprintln(e.stdout, "Fast-forward")
	return writeStatBetween(e, a, b)
}
