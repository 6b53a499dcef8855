package main

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// git rebase UPSTREAM replays the current branch's commits onto
// UPSTREAM as git's default ("merge") backend does: one cherry-pick per
// commit on a detached HEAD, the branch moved at the end. Its state is
// kept in .git/rebase-merge in git's own file names, so git status here
// and host git both see a rebase in progress.

const rebaseDir = "rebase-merge"

// maxRebaseCommits bounds the commits one rebase replays.
const maxRebaseCommits = 10000

func rebasePath(rp *repo, name string) string { return filepath.Join(rp.gitDir(), rebaseDir, name) }

func readRebaseFile(rp *repo, name string) string {
	return strings.TrimSpace(readBounded(rebasePath(rp, name)))
}

func writeRebaseFile(rp *repo, name, content string) error {
	return os.WriteFile(rebasePath(rp, name), []byte(content), 0o644)
}

// todoLines reads git-rebase-todo or done: "pick HASH subject" lines.
func todoLines(rp *repo, name string) []string {
	var out []string
	for _, l := range strings.Split(readRebaseFile(rp, name), "\n") {
		if strings.HasPrefix(l, "pick ") {
			out = append(out, l)
		}
	}
	return out
}

func todoText(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// cmdRebase: git rebase [--onto NEWBASE] UPSTREAM | --continue | --abort | --skip | --quit.
func cmdRebase(e *env, args []string) error {
	var revs []string
	action, onto, quiet := "", "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--onto" && i+1 < len(args):
			onto = args[i+1]
			i++
		case strings.HasPrefix(a, "--onto="):
			onto = strings.TrimPrefix(a, "--onto=")
		case a == "--continue" || a == "--abort" || a == "--skip" || a == "--quit":
			action = a
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--merge" || a == "-m":
		case strings.HasPrefix(a, "-"):
			return usagef("error: unknown option `%s'\nusage: git rebase [<upstream>] | --continue | --abort | --skip", strings.TrimLeft(a, "-"))
		default:
			revs = append(revs, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	inProgress := gitFileExists(rp, rebaseDir)
	if action != "" {
		if !inProgress {
			return fatalf("No rebase in progress?")
		}
		switch action {
		case "--abort":
			orig := plumbing.NewHash(readRebaseFile(rp, "orig-head"))
			s, _, err := commitSnapshot(rp, orig)
			if err != nil {
				return err
			}
			if err := resetHard(rp, s); err != nil {
				return err
			}
			if err := restoreRebaseHead(rp, orig); err != nil {
				return err
			}
			return endRebase(rp)
		case "--quit":
			return endRebase(rp)
		case "--skip":
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
			removeGitFiles(rp, "MERGE_MSG", "AUTO_MERGE")
			return rebaseLoop(e, rp)
		}
		return rebaseContinue(e, rp)
	}
	if inProgress {
		return fatalf("%s", "It seems that there is already a rebase-merge directory, and\n"+
			"I wonder if you are in the middle of another rebase.  If that is the\n"+
			"case, please try\n\tgit rebase (--continue | --abort | --skip)\n"+
			"If that is not the case, please\n\trm -fr \""+filepath.ToSlash(filepath.Join(rp.display(".git"), rebaseDir))+"\"\n"+
			"and run me again.  I am stopping in case you still have something\nvaluable there.\n")
	}
	if len(revs) == 0 {
		// The branch's upstream (branch.NAME.remote and .merge), as git.
		branch, attached, err := rp.branch()
		if err != nil {
			return err
		}
		if !attached {
			fmt.Fprint(e.stdout, "You are not currently on a branch.\nPlease specify which branch you want to rebase against.\nSee git-rebase(1) for details.\n\n    git rebase '<branch>'\n\n")
			return &exitError{code: 1}
		}
		if _, err := resolveRev(rp, "@{upstream}"); err != nil {
			fmt.Fprint(e.stdout, "There is no tracking information for the current branch.\nPlease specify which branch you want to rebase against.\nSee git-rebase(1) for details.\n\n    git rebase '<branch>'\n\n"+
				"If you wish to set tracking information for this branch you can do so with:\n\n    git branch --set-upstream-to=<remote>/<branch> "+branch+"\n\n")
			return &exitError{code: 1}
		}
		revs = []string{"@{upstream}"}
	}
	if len(revs) != 1 {
		return usagef("usage: git rebase [--onto <newbase>] [<upstream>]")
	}
	upstream, err := resolveRev(rp, revs[0])
	if err != nil {
		return fatalf("invalid upstream '%s'", revs[0])
	}
	base := upstream
	if onto != "" {
		if base, err = resolveRev(rp, onto); err != nil {
			return fatalf("Does not point to a valid commit '%s'", onto)
		}
	}
	return rebaseStart(e, rp, upstream, base, quiet)
}

// rebaseStart checks the worktree, lists the commits to replay (those
// not in upstream) and replays them onto onto.
func rebaseStart(e *env, rp *repo, upstream, onto plumbing.Hash, quiet bool) error {
	head, err := rp.head()
	if err != nil {
		return err
	}
	if head == nil {
		return fatalf("no commits to rebase")
	}
	headSnap, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	var unstaged bool
	for p, ie := range idx {
		w, ok, err := worktreeFile(rp, p)
		if err != nil {
			return err
		}
		if !ok || !w.hash.Equal(ie.hash) {
			unstaged = true
		}
	}
	if unstaged || len(compare(headSnap, idx)) > 0 {
		what := "You have unstaged changes."
		if !unstaged {
			what = "Your index contains uncommitted changes."
		}
		return &exitError{code: 1, msg: "error: cannot rebase: " + what + "\nerror: Please commit or stash them."}
	}
	up, err := rp.r.CommitObject(upstream)
	if err != nil {
		return err
	}
	branch, attached, err := rp.branch()
	if err != nil {
		return err
	}
	bases, err := head.MergeBase(up)
	if err != nil {
		return err
	}
	if len(bases) > 0 && bases[0].Hash.Equal(upstream) && onto.Equal(upstream) {
		name := branch
		if !attached {
			name = "HEAD"
		}
		if !quiet {
			fmt.Fprintf(e.stdout, "Current branch %s is up to date.\n", name)
		}
		return nil
	}
	picks, skipped, err := rebaseCommits(rp, head, up)
	if err != nil {
		return err
	}
	for _, c := range skipped {
		fmt.Fprintf(e.stderr, "warning: skipped previously applied commit %s\n", short(c.Hash))
	}
	if len(skipped) > 0 {
		fmt.Fprint(e.stderr, "hint: use --reapply-cherry-picks to include skipped commits\n"+
			"hint: Disable this message with \"git config advice.skippedCherryPicks false\"\n")
	}
	headName := "detached HEAD"
	if attached {
		headName = plumbing.NewBranchReferenceName(branch).String()
	}
	if err := os.MkdirAll(filepath.Join(rp.gitDir(), rebaseDir), 0o755); err != nil {
		return err
	}
	var todo []string
	for _, c := range picks {
		subject, _, _ := strings.Cut(c.Message, "\n")
		todo = append(todo, fmt.Sprintf("pick %s %s", c.Hash, subject))
	}
	if quiet {
		// git keeps -q for --continue in this file.
		if err := writeRebaseFile(rp, "quiet", ""); err != nil {
			return err
		}
	}
	for name, content := range map[string]string{
		"head-name": headName + "\n", "onto": onto.String() + "\n", "orig-head": head.Hash.String() + "\n",
		"git-rebase-todo": todoText(todo), "done": "", "msgnum": "0\n", "end": strconv.Itoa(len(todo)) + "\n", "interactive": "",
	} {
		if err := writeRebaseFile(rp, name, content); err != nil {
			return err
		}
	}
	_ = writeGitFile(rp, "ORIG_HEAD", head.Hash.String()+"\n")
	ontoSnap, _, err := commitSnapshot(rp, onto)
	if err != nil {
		return err
	}
	if err := applyMerge(rp, headSnap, &treeMerge{clean: ontoSnap}); err != nil {
		return err
	}
	if err := rp.r.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, onto)); err != nil {
		return err
	}
	return rebaseLoop(e, rp)
}

// rebaseCommits lists the commits of head not in upstream, oldest
// first, leaving out merges and the commits whose change upstream
// already has (git compares patch ids).
func rebaseCommits(rp *repo, head, up *object.Commit) (picks, skipped []*object.Commit, err error) {
	// As git's default (no --rebase-merges): every commit of HEAD's
	// history that upstream lacks, merges left out, oldest first in
	// topological order.
	w, err := newWalker(rp, []plumbing.Hash{head.Hash}, []plumbing.Hash{up.Hash})
	if err != nil {
		return nil, nil, err
	}
	var mine []*object.Commit
	for {
		c, err := w.next()
		if err != nil {
			return nil, nil, err
		}
		if c == nil {
			break
		}
		if len(mine) >= maxRebaseCommits {
			return nil, nil, fatalf("more than %d commits to rebase", maxRebaseCommits)
		}
		mine = append(mine, c)
	}
	mine = topoSort(mine)
	// Patch ids of upstream's own commits since the fork (git's
	// --cherry-pick over upstream...HEAD).
	upIDs := map[string]bool{}
	uw, err := newWalker(rp, []plumbing.Hash{up.Hash}, []plumbing.Hash{head.Hash})
	if err != nil {
		return nil, nil, err
	}
	for n := 0; n < 100*maxRebaseCommits; n++ {
		c, err := uw.next()
		if err != nil {
			return nil, nil, err
		}
		if c == nil {
			break
		}
		if len(c.ParentHashes) == 1 {
			if id, err := patchID(rp, c); err == nil {
				upIDs[id] = true
			}
		}
	}
	for i := len(mine) - 1; i >= 0; i-- {
		c := mine[i]
		if len(c.ParentHashes) > 1 {
			continue
		}
		if id, err := patchID(rp, c); err == nil && upIDs[id] {
			skipped = append(skipped, c)
			continue
		}
		picks = append(picks, c)
	}
	return picks, skipped, nil
}

// patchID identifies a commit's change independently of where it
// applies, like git patch-id: the diff with line numbers and
// whitespace left out.
func patchID(rp *repo, c *object.Commit) (string, error) {
	var parent plumbing.Hash
	if len(c.ParentHashes) > 0 {
		parent = c.ParentHashes[0]
	}
	a, _, err := commitSnapshot(rp, parent)
	if err != nil {
		return "", err
	}
	b, err := treeSnapshot(rp, c)
	if err != nil {
		return "", err
	}
	h := sha1.New()
	for _, ch := range compare(a, b) {
		var sb strings.Builder
		if err := writePatch(&sb, ch); err != nil {
			return "", err
		}
		for _, l := range strings.Split(sb.String(), "\n") {
			if strings.HasPrefix(l, "index ") || strings.HasPrefix(l, "@@") {
				continue
			}
			h.Write([]byte(strings.Join(strings.Fields(l), "")))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// clearLine is git's term_clear_line on standard error.
func clearLine(e *env) string {
	if t := e.getenv("TERM"); t == "" || t == "dumb" {
		cols := 80
		if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n > 0 && n < 1000 {
			cols = n
		}
		return "\r" + strings.Repeat(" ", cols) + "\r"
	}
	return "\r\033[K"
}

// rebaseLoop picks the remaining commits of the todo list.
func rebaseLoop(e *env, rp *repo) error {
	total, _ := strconv.Atoi(readRebaseFile(rp, "end"))
	quiet := fileExists(rebasePath(rp, "quiet"))
	for {
		todo := todoLines(rp, "git-rebase-todo")
		if len(todo) == 0 {
			break
		}
		line := todo[0]
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return fatalf("bad rebase todo line %q", line)
		}
		c, err := rp.r.CommitObject(plumbing.NewHash(fields[1]))
		if err != nil {
			return err
		}
		done := append(todoLines(rp, "done"), line)
		if err := writeRebaseFile(rp, "done", todoText(done)); err != nil {
			return err
		}
		if err := writeRebaseFile(rp, "git-rebase-todo", todoText(todo[1:])); err != nil {
			return err
		}
		if err := writeRebaseFile(rp, "msgnum", strconv.Itoa(len(done))+"\n"); err != nil {
			return err
		}
		if !quiet {
			fmt.Fprintf(e.stderr, "Rebasing (%d/%d)\r", len(done), total)
		}
		head, err := rp.head()
		if err != nil {
			return err
		}
		ours, err := treeSnapshot(rp, head)
		if err != nil {
			return err
		}
		m, err := pickMerge(rp, "cherry-pick", c, ours)
		if err != nil {
			return err
		}
		if len(m.conflicts) > 0 {
			// A rebase tells of a merge only when it stops.
			for _, l := range m.messages {
				fmt.Fprintln(e.stdout, l)
			}
		}
		if err := applyMerge(rp, ours, m); err != nil {
			return err
		}
		if len(m.conflicts) > 0 {
			subject, _, _ := strings.Cut(c.Message, "\n")
			_ = writeRebaseFile(rp, "stopped-sha", c.Hash.String()+"\n")
			_ = writeRebaseFile(rp, "message", c.Message)
			_ = writeRebaseFile(rp, "author-script", fmt.Sprintf("GIT_AUTHOR_NAME='%s'\nGIT_AUTHOR_EMAIL='%s'\nGIT_AUTHOR_DATE='@%d %s'\n",
				c.Author.Name, c.Author.Email, c.Author.When.Unix(), c.Author.When.Format("-0700")))
			if err := writeGitFile(rp, "MERGE_MSG", c.Message+conflictsNote(m)); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "error: could not apply %s... %s\n"+
				"hint: Resolve all conflicts manually, mark them as resolved with\n"+
				"hint: \"git add/rm <conflicted_files>\", then run \"git rebase --continue\".\n"+
				"hint: You can instead skip this commit: run \"git rebase --skip\".\n"+
				"hint: To abort and get back to the state before \"git rebase\", run \"git rebase --abort\".\n"+
				"Could not apply %s... %s\n", short(c.Hash), subject, short(c.Hash), subject)
			return &exitError{code: 1}
		}
		if len(compare(ours, m.clean)) == 0 {
			subject, _, _ := strings.Cut(c.Message, "\n")
			fmt.Fprintf(e.stderr, "dropping %s %s -- patch contents already upstream\n", c.Hash, subject)
			continue
		}
		a := c.Author
		h, err := commitTree(e, rp, m.clean, c.Message, &a, head.Hash)
		if err != nil {
			return err
		}
		if err := setHead(rp, h); err != nil {
			return err
		}
	}
	head, err := rp.head()
	if err != nil {
		return err
	}
	headName := readRebaseFile(rp, "head-name")
	if err := restoreRebaseHead(rp, head.Hash); err != nil {
		return err
	}
	if err := endRebase(rp); err != nil {
		return err
	}
	if !strings.HasPrefix(headName, "refs/") {
		headName = "HEAD"
	}
	if !quiet {
		fmt.Fprintf(e.stderr, "%sSuccessfully rebased and updated %s.\n", clearLine(e), headName)
	}
	return nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// restoreRebaseHead points the rebased branch at h and HEAD back at the
// branch (or leaves HEAD detached at h).
func restoreRebaseHead(rp *repo, h plumbing.Hash) error {
	headName := readRebaseFile(rp, "head-name")
	if !strings.HasPrefix(headName, "refs/heads/") {
		return rp.r.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, h))
	}
	ref := plumbing.ReferenceName(headName)
	if err := rp.r.Storer.SetReference(plumbing.NewHashReference(ref, h)); err != nil {
		return err
	}
	return rp.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref))
}

func endRebase(rp *repo) error {
	removeGitFiles(rp, "MERGE_MSG", "AUTO_MERGE")
	return os.RemoveAll(filepath.Join(rp.gitDir(), rebaseDir))
}

// rebaseContinue commits the resolved pick, if it changed anything,
// and goes on with the rest.
func rebaseContinue(e *env, rp *repo) error {
	un, err := unmergedPaths(rp)
	if err != nil {
		return err
	}
	if len(un) > 0 {
		var b strings.Builder
		for _, p := range un {
			fmt.Fprintf(&b, "%s: needs merge\n", p)
		}
		fmt.Fprint(e.stdout, b.String()+"You must edit all merge conflicts and then\nmark them as resolved using git add\n")
		return &exitError{code: 1}
	}
	head, err := rp.head()
	if err != nil {
		return err
	}
	headSnap, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	if stopped := readRebaseFile(rp, "stopped-sha"); stopped != "" && len(compare(headSnap, idx)) > 0 {
		c, err := rp.r.CommitObject(plumbing.NewHash(stopped))
		if err != nil {
			return err
		}
		msg := cleanMessage([]string{stripComments(c.Message)})
		a := c.Author
		h, err := commitTree(e, rp, idx, msg, &a, head.Hash)
		if err != nil {
			return err
		}
		if err := setHead(rp, h); err != nil {
			return err
		}
		if err := printCommitSummary(e, rp, head, h, false); err != nil {
			return err
		}
	}
	_ = os.Remove(rebasePath(rp, "stopped-sha"))
	removeGitFiles(rp, "MERGE_MSG", "AUTO_MERGE")
	return rebaseLoop(e, rp)
}
