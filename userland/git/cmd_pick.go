package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// cherry-pick and revert apply one commit's change (or its reverse) to
// HEAD with the tree merge of git merge, as git's sequencer does for a
// single commit.

// pickKind is "cherry-pick" or "revert".
type pickKind string

// pickOpts are cherry-pick's and revert's options.
type pickOpts struct {
	x        bool // note the picked commit in the message
	noCommit bool // -n: change the index and worktree only
}

// cmdCherryPick: git cherry-pick [-x] [-n] REV... | A..B | --continue | --abort | --skip | --quit.
func cmdCherryPick(e *env, args []string) error { return pickCommand(e, "cherry-pick", args) }

// cmdRevert: git revert [--no-edit] [-n] REV... | --continue | --abort | --skip | --quit.
func cmdRevert(e *env, args []string) error { return pickCommand(e, "revert", args) }

func pickCommand(e *env, kind pickKind, args []string) error {
	var revs []string
	var opts pickOpts
	action := ""
	for _, a := range args {
		switch {
		case a == "-x" && kind == "cherry-pick":
			opts.x = true
		case a == "-n" || a == "--no-commit":
			opts.noCommit = true
		case a == "--no-edit" || a == "--edit":
		case a == "--continue" || a == "--abort" || a == "--skip" || a == "--quit":
			action = a
		case strings.HasPrefix(a, "-"):
			return usagef("error: unknown option `%s'\nusage: git %s [<options>] <commit-ish>...", strings.TrimLeft(a, "-"), kind)
		default:
			revs = append(revs, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	headFile := pickHeadFile(kind)
	sequencing := gitFileExists(rp, sequencerDir)
	inProgress := strings.TrimSpace(refFile(rp, headFile)) != "" || sequencing
	if action != "" {
		if !inProgress {
			what := "cherry-pick or revert"
			if action == "--skip" {
				what = string(kind)
			}
			return &exitError{code: 128, msg: fmt.Sprintf("error: no %s in progress\nfatal: %s failed", what, kind)}
		}
		switch action {
		case "--abort":
			if sequencing {
				return abortSequence(rp, headFile)
			}
			return abortOperation(rp, headFile, "MERGE_MSG", "AUTO_MERGE")
		case "--quit":
			removeGitFiles(rp, headFile, "MERGE_MSG", "AUTO_MERGE")
			return os.RemoveAll(filepath.Join(rp.gitDir(), sequencerDir))
		case "--skip":
			if err := abortOperation(rp, headFile, "MERGE_MSG", "AUTO_MERGE"); err != nil {
				return err
			}
		default:
			if strings.TrimSpace(refFile(rp, headFile)) != "" {
				if err := continuePick(e); err != nil {
					return err
				}
			}
		}
		if !sequencing {
			return nil
		}
		return runSequence(e, rp, kind, opts)
	}
	if len(revs) == 0 {
		return usagef("usage: git %s [<options>] <commit-ish>...", kind)
	}
	if un, err := unmergedPaths(rp); err != nil {
		return err
	} else if len(un) > 0 {
		what := "Cherry-picking"
		if kind == "revert" {
			what = "Reverting"
		}
		return &exitError{code: 128, msg: "error: " + what + " is not possible because you have unmerged files.\n" +
			"hint: Fix them up in the work tree, and then use 'git add/rm <file>'\n" +
			"hint: as appropriate to mark resolution and make a commit.\n" +
			"fatal: " + string(kind) + " failed"}
	}
	var picks []*object.Commit
	for _, rev := range revs {
		cs, err := pickRange(rp, rev)
		if err != nil {
			return err
		}
		picks = append(picks, cs...)
	}
	if len(picks) == 0 {
		return &exitError{code: 128, msg: "error: empty commit set passed\nfatal: " + string(kind) + " failed"}
	}
	if len(picks) == 1 {
		code, err := pickOne(e, rp, kind, picks[0], opts)
		if err != nil {
			return err
		}
		if code != 0 {
			return &exitError{code: code}
		}
		return nil
	}
	// Several commits: git's sequencer keeps the list in .git/sequencer
	// so that --continue, --skip and --abort can go on or back. (A
	// single pick does not check for one in progress, as in git.)
	if sequencing {
		skip := ""
		if strings.TrimSpace(refFile(rp, headFile)) != "" {
			skip = "--skip | "
		}
		return &exitError{code: 128, msg: fmt.Sprintf("error: %s is already in progress\nhint: try \"git %s (--continue | %s--abort | --quit)\"\nfatal: %s failed", kind, kind, skip, kind)}
	}
	head, err := rp.head()
	if err != nil {
		return err
	}
	if head == nil {
		return fatalf("cannot %s onto an unborn branch here", kind)
	}
	if err := os.MkdirAll(filepath.Join(rp.gitDir(), sequencerDir), 0o755); err != nil {
		return err
	}
	var todo []string
	for _, c := range picks {
		subject, _, _ := strings.Cut(c.Message, "\n")
		verb := "pick"
		if kind == "revert" {
			verb = "revert"
		}
		todo = append(todo, fmt.Sprintf("%s %s %s", verb, short(c.Hash), subject))
	}
	if err := writeGitFile(rp, sequencerDir+"/head", head.Hash.String()+"\n"); err != nil {
		return err
	}
	if err := writeGitFile(rp, sequencerDir+"/todo", todoText(todo)); err != nil {
		return err
	}
	return runSequence(e, rp, kind, opts)
}

// sequencerDir holds a multi-commit cherry-pick or revert.
const sequencerDir = "sequencer"

// runSequence picks the commits left in .git/sequencer/todo.
func runSequence(e *env, rp *repo, kind pickKind, opts pickOpts) error {
	for {
		var todo []string
		for _, l := range strings.Split(refFile(rp, sequencerDir+"/todo"), "\n") {
			if f := strings.Fields(l); len(f) >= 2 {
				todo = append(todo, l)
			}
		}
		if len(todo) == 0 {
			return os.RemoveAll(filepath.Join(rp.gitDir(), sequencerDir))
		}
		h, err := resolveRev(rp, strings.Fields(todo[0])[1])
		if err != nil {
			return fatalf("could not parse '%s' in the sequencer's todo list", todo[0])
		}
		c, err := rp.r.CommitObject(h)
		if err != nil {
			return err
		}
		if err := writeGitFile(rp, sequencerDir+"/todo", todoText(todo[1:])); err != nil {
			return err
		}
		code, err := pickOne(e, rp, kind, c, opts)
		if err != nil {
			return err
		}
		if code != 0 {
			return &exitError{code: code}
		}
		if head, err := rp.head(); err == nil && head != nil {
			_ = writeGitFile(rp, sequencerDir+"/abort-safety", head.Hash.String()+"\n")
		}
	}
}

// abortSequence puts HEAD, index and worktree back to where the
// multi-commit pick started.
func abortSequence(rp *repo, headFile string) error {
	start := plumbing.NewHash(strings.TrimSpace(refFile(rp, sequencerDir+"/head")))
	s, _, err := commitSnapshot(rp, start)
	if err != nil {
		return err
	}
	if err := resetHard(rp, s); err != nil {
		return err
	}
	if err := setHead(rp, start); err != nil {
		return err
	}
	removeGitFiles(rp, headFile, "MERGE_MSG", "AUTO_MERGE")
	return os.RemoveAll(filepath.Join(rp.gitDir(), sequencerDir))
}

// pickRange lists the commits a cherry-pick argument names: one, or
// for A..B those reachable from B along first parents and not from A,
// oldest first.
func pickRange(rp *repo, rev string) ([]*object.Commit, error) {
	from, to, isRange := strings.Cut(rev, "..")
	if !isRange {
		h, err := resolveRev(rp, rev)
		if err != nil {
			return nil, fatalf("bad revision '%s'", rev)
		}
		c, err := rp.r.CommitObject(h)
		if err != nil {
			return nil, err
		}
		return []*object.Commit{c}, nil
	}
	if from == "" {
		from = "HEAD"
	}
	if to == "" {
		to = "HEAD"
	}
	fh, err := resolveRev(rp, from)
	if err != nil {
		return nil, fatalf("bad revision '%s'", rev)
	}
	th, err := resolveRev(rp, to)
	if err != nil {
		return nil, fatalf("bad revision '%s'", rev)
	}
	fc, err := rp.r.CommitObject(fh)
	if err != nil {
		return nil, err
	}
	var out []*object.Commit
	for h := th; !h.IsZero() && len(out) < maxRebaseCommits; {
		c, err := rp.r.CommitObject(h)
		if err != nil {
			return nil, err
		}
		if c.Hash.Equal(fc.Hash) {
			break
		}
		if in, err := c.IsAncestor(fc); err != nil || in {
			break
		}
		out = append(out, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	slices.Reverse(out)
	return out, nil
}

// pickMessage is the new commit's message.
func pickMessage(kind pickKind, c *object.Commit, x bool) string {
	if kind == "revert" {
		subject, _, _ := strings.Cut(c.Message, "\n")
		return fmt.Sprintf("Revert \"%s\"\n\nThis reverts commit %s.\n", subject, c.Hash)
	}
	if x {
		return strings.TrimRight(c.Message, "\n") + fmt.Sprintf("\n\n(cherry picked from commit %s)\n", c.Hash)
	}
	return c.Message
}

// pickMerge merges commit c's change (reversed for revert) into HEAD's
// tree; the caller writes it out.
func pickMerge(rp *repo, kind pickKind, c *object.Commit, ours snapshot) (*treeMerge, error) {
	if len(c.ParentHashes) > 1 {
		return nil, &exitError{code: 128, msg: fmt.Sprintf("error: commit %s is a merge but no -m option was given.\nfatal: %s failed", c.Hash, kind)}
	}
	var parent plumbing.Hash
	if len(c.ParentHashes) == 1 {
		parent = c.ParentHashes[0]
	}
	parentSnap, _, err := commitSnapshot(rp, parent)
	if err != nil {
		return nil, err
	}
	cs, err := treeSnapshot(rp, c)
	if err != nil {
		return nil, err
	}
	subject, _, _ := strings.Cut(c.Message, "\n")
	label := fmt.Sprintf("%s (%s)", short(c.Hash), subject)
	base, theirs := parentSnap, cs
	if kind == "revert" {
		base, theirs = cs, parentSnap
		label = "parent of " + label
	}
	return mergeTrees(rp, base, ours, theirs, mergeLabels{ours: "HEAD", theirs: label})
}

// pickOne cherry-picks or reverts c onto HEAD: a new commit, or
// conflicts left for --continue (status 1).
func pickOne(e *env, rp *repo, kind pickKind, c *object.Commit, opts pickOpts) (int, error) {
	head, err := rp.head()
	if err != nil {
		return 0, err
	}
	if head == nil {
		return 0, fatalf("cannot %s onto an unborn branch here", kind)
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return 0, err
	}
	headSnap, err := treeSnapshot(rp, head)
	if err != nil {
		return 0, err
	}
	// With -n the change goes onto the index, which need not match HEAD.
	ours := headSnap
	if opts.noCommit {
		ours = idx
	} else if len(compare(headSnap, idx)) > 0 {
		return 0, &exitError{code: 128, msg: fmt.Sprintf("error: your local changes would be overwritten by %s.\nhint: commit your changes or stash them to proceed.\nfatal: %s failed", kind, kind)}
	}
	m, err := pickMerge(rp, kind, c, ours)
	if err != nil {
		return 0, err
	}
	if err := checkOverwrite(rp, ours, m, "merge"); err != nil {
		var xe *exitError
		if errors.As(err, &xe) {
			return 0, &exitError{code: 128, msg: xe.msg + "\nfatal: " + string(kind) + " failed"}
		}
		return 0, err
	}
	for _, l := range m.messages {
		fmt.Fprintln(e.stdout, l)
	}
	if err := applyMerge(rp, ours, m); err != nil {
		return 0, err
	}
	msg := pickMessage(kind, c, opts.x)
	subject, _, _ := strings.Cut(c.Message, "\n")
	if len(m.conflicts) > 0 {
		headFile, verb := pickHeadFile(kind), "apply"
		if kind == "revert" {
			verb = "revert"
		}
		_ = writeGitFile(rp, "ORIG_HEAD", head.Hash.String()+"\n")
		if !opts.noCommit {
			if err := writeGitFile(rp, headFile, c.Hash.String()+"\n"); err != nil {
				return 0, err
			}
		}
		if err := writeGitFile(rp, "MERGE_MSG", msg+conflictsNote(m)); err != nil {
			return 0, err
		}
		if opts.noCommit {
			// Without a commit to go on with, git's hint is the short one.
			fmt.Fprintf(e.stderr, "error: could not %s %s... %s\n"+
				"hint: after resolving the conflicts, mark the corrected paths\n"+
				"hint: with 'git add <paths>' or 'git rm <paths>'\n", verb, short(c.Hash), subject)
			return 1, nil
		}
		fmt.Fprintf(e.stderr, "error: could not %s %s... %s\n"+
			"hint: After resolving the conflicts, mark them with\n"+
			"hint: \"git add/rm <pathspec>\", then run\n"+
			"hint: \"git %s --continue\".\n"+
			"hint: You can instead skip this commit with \"git %s --skip\".\n"+
			"hint: To abort and get back to the state before \"git %s\",\n"+
			"hint: run \"git %s --abort\".\n", verb, short(c.Hash), subject, kind, kind, kind, kind)
		return 1, nil
	}
	if opts.noCommit {
		// The message waits in MERGE_MSG for git commit.
		return 0, writeGitFile(rp, "MERGE_MSG", msg)
	}
	if len(compare(ours, m.clean)) == 0 {
		// Nothing left to commit: git stops as after a conflict.
		if err := writeGitFile(rp, pickHeadFile(kind), c.Hash.String()+"\n"); err != nil {
			return 0, err
		}
		if err := writeGitFile(rp, "MERGE_MSG", msg); err != nil {
			return 0, err
		}
		s, err := readState(rp)
		if err != nil {
			return 0, err
		}
		s.writeLong(e.stdout, rp)
		fmt.Fprintf(e.stderr, "The previous %s is now empty, possibly due to conflict resolution.\n"+
			"If you wish to commit it anyway, use:\n\n    git commit --allow-empty\n\n"+
			"Otherwise, please use 'git %s --skip'\n", kind, kind)
		return 1, nil
	}
	var author *object.Signature
	if kind == "cherry-pick" {
		a := c.Author
		author = &a
	}
	h, err := commitTree(e, rp, m.clean, msg, author, head.Hash)
	if err != nil {
		return 0, err
	}
	if err := setHead(rp, h); err != nil {
		return 0, err
	}
	return 0, printCommitSummary(e, rp, head, h, true)
}

// conflictsNote is the "# Conflicts:" list git adds to MERGE_MSG.
func conflictsNote(m *treeMerge) string {
	s := "\n# Conflicts:\n"
	for _, p := range slices.Sorted(mapKeys(m.conflicts)) {
		s += "#\t" + p + "\n"
	}
	return s
}

// continuePick commits the resolved index with the prepared message,
// as if the editor git opens had been closed unchanged.
func continuePick(e *env) error {
	return cmdCommit(e, []string{"--cleanup=strip"})
}

// printCommitSummary prints what git prints after the sequencer (or
// commit) makes a commit: "[branch abbrev] subject", the author when it
// is not the committer, the author date if asked, and the diffstat.
func printCommitSummary(e *env, rp *repo, parent *object.Commit, h plumbing.Hash, showDate bool) error {
	c, err := rp.r.CommitObject(h)
	if err != nil {
		return err
	}
	branch, attached, err := rp.branch()
	if err != nil {
		return err
	}
	if !attached {
		branch = "detached HEAD"
	}
	subject, _, _ := strings.Cut(c.Message, "\n")
	fmt.Fprintf(e.stdout, "[%s %s] %s\n", branch, short(h), subject)
	if c.Author.Name != c.Committer.Name || c.Author.Email != c.Committer.Email {
		fmt.Fprintf(e.stdout, " Author: %s <%s>\n", c.Author.Name, c.Author.Email)
	}
	if showDate {
		fmt.Fprintf(e.stdout, " Date: %s\n", gitDate(c.Author))
	}
	from, err := treeSnapshot(rp, parent)
	if err != nil {
		return err
	}
	to, err := treeSnapshot(rp, c)
	if err != nil {
		return err
	}
	return writeShortstat(e, from, to)
}

// writeShortstat is the summary git prints after a commit: the
// "N files changed" line, then created, deleted and renamed files.
func writeShortstat(e *env, from, to snapshot) error {
	changes := detectRenames(compare(from, to))
	stats, err := statChanges(changes)
	if err != nil {
		return err
	}
	if len(stats) == 0 {
		// git still prints the line for an empty commit.
		writeStatTotals(e.stdout, 0, 0, 0)
	}
	writeStatSummary(e.stdout, stats)
	writeChangeSummary(e.stdout, changes)
	return nil
}

// stripComments drops the lines starting with '#', as git's "strip"
// clean-up does.
func stripComments(msg string) string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// pickHeadFile is the file naming the commit being picked or reverted.
func pickHeadFile(kind pickKind) string {
	if kind == "revert" {
		return "REVERT_HEAD"
	}
	return "CHERRY_PICK_HEAD"
}
