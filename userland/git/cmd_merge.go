package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/plumbing/storer"
)

// mergeOptions are git merge's options, shared with pull.
type mergeOptions struct {
	noFF, ffOnly, noCommit bool
	squash                 bool     // update the index and worktree only, and write SQUASH_MSG
	message                []string // -m paragraphs; none: the default message
	defaultMsg             string   // replaces "Merge branch 'x'" (pull names the remote)
	quiet                  bool
	noStat                 bool
	allowUnrelated         bool // merge histories without a common commit
}

// resolveRev resolves a revision to a commit hash with git's revision
// rules (resolveRevision); the history commands word their own errors.
func resolveRev(rp *repo, rev string) (plumbing.Hash, error) {
	c, err := resolveCommitRevision(rp, rev)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.Hash, nil
}

// cmdMerge: git merge [--no-ff|--ff-only] [-m MSG] [--no-edit] [--no-commit] [-q] BRANCH | --abort | --continue.
func cmdMerge(e *env, args []string) error {
	args = expandShort(args, "m")
	var opts mergeOptions
	var revs []string
	abort, cont := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--no-ff":
			opts.noFF, opts.ffOnly = true, false
		case a == "--ff":
			opts.noFF, opts.ffOnly = false, false
		case a == "--ff-only":
			opts.ffOnly, opts.noFF = true, false
		case (a == "-m" || a == "--message") && i+1 < len(args):
			opts.message = append(opts.message, args[i+1])
			i++
		case strings.HasPrefix(a, "--message="):
			opts.message = append(opts.message, strings.TrimPrefix(a, "--message="))
		case a == "--squash":
			opts.squash = true
		case a == "--allow-unrelated-histories":
			opts.allowUnrelated = true
		case a == "--no-squash":
			opts.squash = false
		case a == "--no-edit" || a == "--edit" || a == "-e" || a == "--commit":
		case a == "--no-commit":
			opts.noCommit = true
		case a == "-q" || a == "--quiet":
			opts.quiet = true
		case a == "-n" || a == "--no-stat":
			opts.noStat = true
		case a == "--stat":
			opts.noStat = false
		case a == "--abort":
			abort = true
		case a == "--continue":
			cont = true
		case strings.HasPrefix(a, "-"):
			return usagef("error: unknown option `%s'\nusage: git merge [<options>] [<commit>...]", strings.TrimLeft(a, "-"))
		default:
			revs = append(revs, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	mergeHead := strings.TrimSpace(refFile(rp, "MERGE_HEAD"))
	switch {
	case abort:
		if mergeHead == "" {
			return fatalf("There is no merge to abort (MERGE_HEAD missing).")
		}
		return abortOperation(rp, "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE")
	case cont:
		if mergeHead == "" {
			return fatalf("There is no merge in progress (MERGE_HEAD missing).")
		}
		return cmdCommit(e, []string{"--no-edit"})
	}
	if mergeHead != "" {
		if un, err := unmergedPaths(rp); err == nil && len(un) > 0 {
			return unmergedError("Merging")
		}
		return fatalf("You have not concluded your merge (MERGE_HEAD exists).\nPlease, commit your changes before you merge.")
	}
	if un, err := unmergedPaths(rp); err == nil && len(un) > 0 {
		return unmergedError("Merging")
	}
	if len(revs) == 0 {
		return fatalf("No remote for the current branch.")
	}
	if len(revs) > 1 {
		return fatalf("merging more than one commit (an octopus merge) is not supported here")
	}
	theirs, err := resolveRev(rp, revs[0])
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("merge: %s - not something we can merge", revs[0])}
	}
	code, err := mergeInto(e, rp, theirs, revs[0], opts)
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// unmergedError is git's refusal to go on with conflicts in the index;
// what is "Merging", "Committing", "Cherry-picking", ...
func unmergedError(what string) error {
	return &exitError{code: 128, msg: "error: " + what + " is not possible because you have unmerged files.\n" +
		"hint: Fix them up in the work tree, and then use 'git add/rm <file>'\n" +
		"hint: as appropriate to mark resolution and make a commit.\n" +
		"fatal: Exiting because of an unresolved conflict."}
}

// abortOperation puts the index and worktree back to HEAD and forgets
// the operation's state files.
func abortOperation(rp *repo, files ...string) error {
	head, err := rp.head()
	if err != nil {
		return err
	}
	s, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	if err := resetHard(rp, s); err != nil {
		return err
	}
	removeGitFiles(rp, files...)
	return nil
}

// mergeMessage is git's default merge message for merging name.
func mergeMessage(rp *repo, name string) string {
	kind := "commit"
	switch {
	case refExists(rp, plumbing.NewBranchReferenceName(name)):
		kind = "branch"
	case refExists(rp, plumbing.NewTagReferenceName(name)):
		kind = "tag"
	case refExists(rp, plumbing.ReferenceName("refs/remotes/"+name)):
		kind = "remote-tracking branch"
	}
	msg := fmt.Sprintf("Merge %s '%s'", kind, name)
	if cur, attached, err := rp.branch(); err == nil && !attached {
		msg += " into HEAD"
	} else if err == nil && cur != "main" && cur != "master" {
		msg += " into " + cur
	}
	return msg
}

func refExists(rp *repo, name plumbing.ReferenceName) bool {
	_, err := rp.r.Storer.Reference(name)
	return err == nil
}

// mergeInto merges the commit theirs, named theirsName on the command
// line, into HEAD as git merge does: "Already up to date.", a
// fast-forward, a merge commit, or conflicts left in the index and
// worktree for git commit to conclude (exit status 1). pull calls it
// after fetching.
func mergeInto(e *env, rp *repo, theirs plumbing.Hash, theirsName string, opts mergeOptions) (int, error) {
	head, err := rp.head()
	if err != nil {
		return 0, err
	}
	theirsC, err := rp.r.CommitObject(theirs)
	if err != nil {
		return 0, err
	}
	if head == nil {
		// An unborn branch takes the commit as it is, silently, as in git.
		theirsSnap, err := treeSnapshot(rp, theirsC)
		if err != nil {
			return 0, err
		}
		m := &treeMerge{clean: theirsSnap}
		if err := checkOverwrite(rp, snapshot{}, m, "merge"); err != nil {
			return 0, err
		}
		if err := applyMerge(rp, snapshot{}, m); err != nil {
			return 0, err
		}
		return 0, setHead(rp, theirs)
	}
	upToDate := "Already up to date."
	if opts.squash {
		upToDate += " (nothing to squash)"
	}
	if theirs.Equal(head.Hash) {
		fmt.Fprintln(e.stdout, upToDate)
		return 0, nil
	}
	if up, err := theirsC.IsAncestor(head); err != nil {
		return 0, err
	} else if up {
		fmt.Fprintln(e.stdout, upToDate)
		return 0, nil
	}
	ffPossible, err := head.IsAncestor(theirsC)
	if err != nil {
		return 0, err
	}
	if opts.ffOnly && !ffPossible {
		return 0, fatalf("Not possible to fast-forward, aborting.")
	}
	ours, err := treeSnapshot(rp, head)
	if err != nil {
		return 0, err
	}
	theirsSnap, err := treeSnapshot(rp, theirsC)
	if err != nil {
		return 0, err
	}
	if ffPossible && !opts.noFF {
		m := &treeMerge{clean: theirsSnap}
		if !opts.quiet {
			fmt.Fprintf(e.stdout, "Updating %s..%s\n", short(head.Hash), short(theirs))
		}
		if err := checkOverwrite(rp, ours, m, "merge"); err != nil {
			return 0, err
		}
		if !opts.quiet {
			fmt.Fprintln(e.stdout, "Fast-forward")
		}
		if err := applyMerge(rp, ours, m); err != nil {
			return 0, err
		}
		if opts.squash {
			if err := writeSquashMsg(rp, head, theirsC); err != nil {
				return 0, err
			}
			fmt.Fprintln(e.stdout, "Squash commit -- not updating HEAD")
		} else if err := setHead(rp, theirs); err != nil {
			return 0, err
		}
		_ = writeGitFile(rp, "ORIG_HEAD", head.Hash.String()+"\n")
		if !opts.quiet && !opts.noStat {
			if err := writeStatBetween(e, ours, theirsSnap); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
	// The ort strategy wants the index to match HEAD.
	idx, err := indexSnapshot(rp)
	if err != nil {
		return 0, err
	}
	if staged := compare(ours, idx); len(staged) > 0 {
		var names []string
		for _, c := range staged {
			names = append(names, c.path)
		}
		fmt.Fprintf(e.stderr, "error: Your local changes to the following files would be overwritten by merge:\n  %s\n", strings.Join(names, " "))
		fmt.Fprintln(e.stderr, "Merge with strategy ort failed.")
		return 2, nil
	}
	bases, err := head.MergeBase(theirsC)
	if err != nil {
		return 0, err
	}
	if len(bases) == 0 && !opts.allowUnrelated {
		return 0, fatalf("refusing to merge unrelated histories")
	}
	var base snapshot = snapshot{}
	if len(bases) > 0 {
		if base, err = treeSnapshot(rp, bases[0]); err != nil {
			return 0, err
		}
	}
	m, err := mergeTrees(rp, base, ours, theirsSnap, mergeLabels{ours: "HEAD", theirs: theirsName})
	if err != nil {
		return 0, err
	}
	if err := checkOverwrite(rp, ours, m, "merge"); err != nil {
		var xe *exitError
		if errors.As(err, &xe) {
			fmt.Fprintln(e.stderr, xe.msg)
			fmt.Fprintln(e.stderr, "Merge with strategy ort failed.")
			return 2, nil
		}
		return 0, err
	}
	msg := opts.defaultMsg
	if msg == "" {
		msg = mergeMessage(rp, theirsName)
	}
	msg += "\n"
	if len(opts.message) > 0 {
		msg = cleanMessage(opts.message)
	}
	// git merge -q still prints the strategy's "Auto-merging" and
	// "CONFLICT" lines.
	for _, l := range m.messages {
		fmt.Fprintln(e.stdout, l)
	}
	if err := applyMerge(rp, ours, m); err != nil {
		return 0, err
	}
	_ = writeGitFile(rp, "ORIG_HEAD", head.Hash.String()+"\n")
	if opts.squash {
		if err := writeSquashMsg(rp, head, theirsC); err != nil {
			return 0, err
		}
		if len(m.conflicts) > 0 {
			fmt.Fprintln(e.stdout, "Squash commit -- not updating HEAD")
			fmt.Fprintln(e.stdout, "Automatic merge failed; fix conflicts and then commit the result.")
			return 1, nil
		}
		fmt.Fprintln(e.stdout, "Squash commit -- not updating HEAD")
		fmt.Fprintln(e.stderr, "Automatic merge went well; stopped before committing as requested")
		return 0, nil
	}
	if len(m.conflicts) > 0 || opts.noCommit {
		mode := ""
		if opts.noFF {
			mode = "no-ff"
		}
		if len(m.conflicts) > 0 {
			msg += "\n# Conflicts:\n"
			for _, p := range slices.Sorted(mapKeys(m.conflicts)) {
				msg += "#\t" + p + "\n"
			}
		}
		if err := writeGitFile(rp, "MERGE_HEAD", theirs.String()+"\n"); err != nil {
			return 0, err
		}
		if err := writeGitFile(rp, "MERGE_MSG", msg); err != nil {
			return 0, err
		}
		if err := writeGitFile(rp, "MERGE_MODE", mode); err != nil {
			return 0, err
		}
		if len(m.conflicts) > 0 {
			fmt.Fprintln(e.stdout, "Automatic merge failed; fix conflicts and then commit the result.")
			return 1, nil
		}
		fmt.Fprintln(e.stderr, "Automatic merge went well; stopped before committing as requested")
		return 0, nil
	}
	h, err := commitTree(e, rp, m.clean, msg, nil, head.Hash, theirs)
	if err != nil {
		return 0, err
	}
	if err := setHead(rp, h); err != nil {
		return 0, err
	}
	if !opts.quiet {
		fmt.Fprintln(e.stdout, "Merge made by the 'ort' strategy.")
		if !opts.noStat {
			if err := writeStatBetween(e, ours, m.clean); err != nil {
				return 0, err
			}
		}
	}
	return 0, nil
}

// checkOverwrite refuses an update that would lose local changes.
func checkOverwrite(rp *repo, from snapshot, m *treeMerge, op string) error {
	if m.conflicts == nil {
		m.conflicts = map[string]stages{}
	}
	dirty, untracked, err := blockedPaths(rp, from, touchedPaths(from, m))
	if err != nil {
		return err
	}
	if len(dirty) > 0 || len(untracked) > 0 {
		return overwriteError(op, dirty, untracked)
	}
	return nil
}

// commitTree stores the snapshot's tree and a commit of it with the
// given parents; author is the environment's or configuration's unless
// given.
func commitTree(e *env, rp *repo, s snapshot, msg string, author *object.Signature, parents ...plumbing.Hash) (plumbing.Hash, error) {
	tree, err := writeTree(rp, s)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if author == nil {
		if author, err = identity(e, rp, "AUTHOR"); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	committer, err := identity(e, rp, "COMMITTER")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return writeCommit(rp, &object.Commit{Author: *author, Committer: *committer, Message: msg, TreeHash: tree, ParentHashes: parents})
}

// writeStatBetween writes the diffstat and created/deleted files
// between two snapshots, as merge and pull print them.
func writeStatBetween(e *env, from, to snapshot) error {
	changes := detectRenames(compare(from, to))
	stats, err := statChanges(changes)
	if err != nil {
		return err
	}
	writeStat(e.stdout, stats)
	writeChangeSummary(e.stdout, changes)
	return nil
}

// pendingCommit is what git commit concludes: a merge (MERGE_HEAD) or
// a cherry-pick or revert stopped by conflicts.
type pendingCommit struct {
	parents []plumbing.Hash // beyond HEAD
	msg     string          // MERGE_MSG
	author  *object.Signature
	merge   bool
	files   []string // state files to remove once committed
}

// readPending reads the operation git commit would conclude, if any.
func readPending(rp *repo) (*pendingCommit, error) {
	p := &pendingCommit{msg: refFile(rp, "MERGE_MSG")}
	if mh := strings.TrimSpace(refFile(rp, "MERGE_HEAD")); mh != "" {
		h := plumbing.NewHash(mh)
		if _, err := rp.r.CommitObject(h); err != nil || len(mh) != 40 {
			return nil, fatalf("could not parse MERGE_HEAD: %s", mh)
		}
		p.parents = append(p.parents, h)
		p.merge = true
		p.files = []string{"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE"}
		return p, nil
	}
	for _, f := range []string{"CHERRY_PICK_HEAD", "REVERT_HEAD"} {
		if h := strings.TrimSpace(refFile(rp, f)); h != "" {
			if f == "CHERRY_PICK_HEAD" {
				c, err := rp.r.CommitObject(plumbing.NewHash(h))
				if err != nil {
					return nil, err
				}
				a := c.Author
				p.author = &a
			}
			p.files = []string{f, "MERGE_MSG", "AUTO_MERGE"}
			return p, nil
		}
	}
	if sq := refFile(rp, "SQUASH_MSG"); sq != "" {
		return &pendingCommit{msg: sq, files: []string{"SQUASH_MSG"}}, nil
	}
	if p.msg == "" {
		return nil, nil
	}
	p.files = []string{"MERGE_MSG"}
	return p, nil
}

func gitFileExists(rp *repo, name string) bool {
	_, err := os.Stat(filepath.Join(rp.gitDir(), name))
	return err == nil
}

// writeSquashMsg writes git merge --squash's SQUASH_MSG: the log of the
// commits merged.
func writeSquashMsg(rp *repo, head, theirs *object.Commit) error {
	var b strings.Builder
	b.WriteString("Squashed commit of the following:\n")
	iter, err := rp.r.Log(&git.LogOptions{From: theirs.Hash, Order: git.LogOrderCommitterTime})
	if err != nil {
		return err
	}
	n := 0
	err = iter.ForEach(func(c *object.Commit) error {
		if in, err := c.IsAncestor(head); err != nil || in || c.Hash.Equal(head.Hash) {
			return err
		}
		if n++; n > maxSquashCommits {
			return storer.ErrStop
		}
		fmt.Fprintf(&b, "\ncommit %s\nAuthor: %s <%s>\nDate:   %s\n\n", c.Hash, c.Author.Name, c.Author.Email, gitDate(c.Author))
		for _, l := range strings.Split(strings.TrimRight(c.Message, "\n"), "\n") {
			if l == "" {
				b.WriteString("\n")
			} else {
				b.WriteString("    " + l + "\n")
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeGitFile(rp, "SQUASH_MSG", b.String())
}

// maxSquashCommits bounds the log SQUASH_MSG holds.
const maxSquashCommits = 10000
