package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing/format/index"
	"github.com/go-git/go-git/v6/storage"
)

// This file is what git status shows of conflicts and of a merge,
// cherry-pick, revert or rebase in progress.

// indexOverride is the repository's storage with another index, for
// go-git's status, which knows nothing of conflict stages.
type indexOverride struct {
	storage.Storer
	idx *index.Index
}

func (s indexOverride) Index() (*index.Index, error) { return s.idx, nil }

// worktreeStatus is go-git's status with each conflicted path standing
// at our version; it also returns the conflicted paths' stage masks
// (1: base, 2: ours, 4: theirs).
func worktreeStatus(rp *repo) (git.Status, map[string]int, error) {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return nil, nil, err
	}
	masks := map[string]int{}
	for _, e := range idx.Entries {
		if e.Stage != 0 {
			masks[e.Name] |= 1 << (e.Stage - 1)
		}
	}
	if len(masks) == 0 {
		st, err := rp.wt.Status()
		return st, nil, err
	}
	filtered := &index.Index{Version: idx.Version}
	for _, e := range idx.Entries {
		if e.Stage == 0 || e.Stage == index.OurMode {
			c := *e
			c.Stage = 0
			filtered.Entries = append(filtered.Entries, &c)
		}
	}
	r, err := git.Open(indexOverride{Storer: rp.r.Storer, idx: filtered}, rp.wt.Filesystem())
	if err != nil {
		return nil, nil, err
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, nil, err
	}
	st, err := wt.Status()
	if err != nil {
		return nil, nil, err
	}
	for p := range masks {
		delete(st, p)
	}
	return st, masks, nil
}

// unmergedLabel names a conflict as git status does, long and short.
func unmergedLabel(mask int) (string, string) {
	switch mask {
	case 1:
		return "both deleted:", "DD"
	case 2:
		return "added by us:", "AU"
	case 3:
		return "deleted by them:", "UD"
	case 4:
		return "added by them:", "UA"
	case 5:
		return "deleted by us:", "DU"
	case 6:
		return "both added:", "AA"
	}
	return "both modified:", "UU"
}

// inProgress is the operation git status announces, read from .git.
type inProgress struct {
	kind string // "merge", "cherry-pick", "revert", "rebase" or ""
	head string // the commit being picked or reverted, abbreviated

	// A rebase's onto commit (abbreviated), branch, and its done and
	// remaining "pick" lines with abbreviated hashes.
	onto, branch string
	done, todo   []string
}

// abbrevTodo abbreviates the hash of "pick HASH subject" lines.
func abbrevTodo(lines []string) []string {
	var out []string
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		if len(f) == 3 && len(f[1]) == 40 {
			l = f[0] + " " + f[1][:7] + " " + f[2]
		}
		out = append(out, l)
	}
	return out
}

func readInProgress(rp *repo) inProgress {
	switch {
	case gitFileExists(rp, rebaseDir):
		return inProgress{kind: "rebase", onto: abbrev(readRebaseFile(rp, "onto")), branch: strings.TrimPrefix(readRebaseFile(rp, "head-name"), "refs/heads/"),
			done: abbrevTodo(todoLines(rp, "done")), todo: abbrevTodo(todoLines(rp, "git-rebase-todo"))}
	case refFile(rp, "MERGE_HEAD") != "":
		return inProgress{kind: "merge"}
	case refFile(rp, "CHERRY_PICK_HEAD") != "" || refFile(rp, "REVERT_HEAD") != "" || gitFileExists(rp, sequencerDir):
		p := inProgress{kind: "cherry-pick", head: abbrev(refFile(rp, "CHERRY_PICK_HEAD"))}
		if refFile(rp, "REVERT_HEAD") != "" || strings.HasPrefix(refFile(rp, sequencerDir+"/todo"), "revert ") {
			p = inProgress{kind: "revert", head: abbrev(refFile(rp, "REVERT_HEAD"))}
		}
		// With several commits (git's sequencer), git status names none.
		if gitFileExists(rp, sequencerDir) {
			p.head = ""
		}
		return p
	}
	return inProgress{}
}

// writeInProgress writes the lines git status prints after "On branch".
func (s *state) writeInProgress(w io.Writer, rp *repo) {
	un := len(s.unmerged) > 0
	switch s.op.kind {
	case "rebase":
		s.writeRebase(w, rp)
	case "merge":
		if un {
			fmt.Fprint(w, "You have unmerged paths.\n  (fix conflicts and run \"git commit\")\n  (use \"git merge --abort\" to abort the merge)\n\n")
		} else {
			fmt.Fprint(w, "All conflicts fixed but you are still merging.\n  (use \"git commit\" to conclude merge)\n\n")
		}
	case "cherry-pick", "revert":
		verb, op := "cherry-picking", "cherry-pick"
		if s.op.kind == "revert" {
			verb, op = "reverting", "revert"
		}
		if s.op.head == "" {
			fmt.Fprintf(w, "%s currently in progress.\n", map[string]string{"cherry-pick": "Cherry-pick", "revert": "Revert"}[s.op.kind])
		} else {
			fmt.Fprintf(w, "You are currently %s commit %s.\n", verb, s.op.head)
		}
		switch {
		case un:
			fmt.Fprintf(w, "  (fix conflicts and run \"git %s --continue\")\n", op)
		case s.op.head == "":
			fmt.Fprintf(w, "  (run \"git %s --continue\" to continue)\n", op)
		default:
			fmt.Fprintf(w, "  (all conflicts fixed: run \"git %s --continue\")\n", op)
		}
		fmt.Fprintf(w, "  (use \"git %s --skip\" to skip this patch)\n", op)
		fmt.Fprintf(w, "  (use \"git %s --abort\" to cancel the %s operation)\n\n", op, op)
	}
}

// writeUnmerged writes the "Unmerged paths:" section.
func (s *state) writeUnmerged(w io.Writer, rp *repo) {
	if len(s.unmerged) == 0 {
		return
	}
	fmt.Fprint(w, "Unmerged paths:\n")
	bothDeleted, delMod, notDeleted := false, false, false
	for _, u := range s.unmerged {
		switch u.mask {
		case 1:
			bothDeleted = true
		case 3, 5:
			delMod = true
		default:
			notDeleted = true
		}
	}
	switch {
	case !s.fromCommit():
	case s.noCommits:
		fmt.Fprint(w, "  (use \"git rm --cached <file>...\" to unstage)\n")
	default:
		fmt.Fprint(w, "  (use \"git restore --staged <file>...\" to unstage)\n")
	}
	switch {
	case !bothDeleted && !delMod:
		fmt.Fprint(w, "  (use \"git add <file>...\" to mark resolution)\n")
	case !bothDeleted || delMod || notDeleted:
		fmt.Fprint(w, "  (use \"git add/rm <file>...\" as appropriate to mark resolution)\n")
	default:
		fmt.Fprint(w, "  (use \"git rm <file>...\" to mark resolution)\n")
	}
	for _, u := range s.unmerged {
		long, _ := unmergedLabel(u.mask)
		fmt.Fprintf(w, "\t%-17s%s\n", long, rp.display(u.path))
	}
	fmt.Fprintln(w)
}

// fromCommit is whether git status compares with HEAD in the usual way
// (wt_status's FROM_COMMIT): not during a merge, cherry-pick or revert,
// when it gives no hint on unstaging.
func (s *state) fromCommit() bool { return s.op.kind == "" || s.op.kind == "rebase" }

// writeRebase is git status's account of a rebase in progress.
func (s *state) writeRebase(w io.Writer, rp *repo) {
	const show = 2
	op := s.op
	if len(op.done) == 0 {
		fmt.Fprint(w, "No commands done.\n")
	} else {
		if len(op.done) == 1 {
			fmt.Fprint(w, "Last command done (1 command done):\n")
		} else {
			fmt.Fprintf(w, "Last commands done (%d commands done):\n", len(op.done))
		}
		for _, l := range op.done[max(0, len(op.done)-show):] {
			fmt.Fprintf(w, "   %s\n", l)
		}
		if len(op.done) > show {
			fmt.Fprintf(w, "  (see more in file %s)\n", filepath.ToSlash(filepath.Join(rp.display(".git"), rebaseDir, "done")))
		}
	}
	if len(op.todo) == 0 {
		fmt.Fprint(w, "No commands remaining.\n")
	} else {
		if len(op.todo) == 1 {
			fmt.Fprint(w, "Next command to do (1 remaining command):\n")
		} else {
			fmt.Fprintf(w, "Next commands to do (%d remaining commands):\n", len(op.todo))
		}
		for _, l := range op.todo[:min(show, len(op.todo))] {
			fmt.Fprintf(w, "   %s\n", l)
		}
		fmt.Fprint(w, "  (use \"git rebase --edit-todo\" to view and edit)\n")
	}
	where := "You are currently rebasing."
	if op.branch != "" && op.branch != "detached HEAD" {
		where = fmt.Sprintf("You are currently rebasing branch '%s' on '%s'.", op.branch, op.onto)
	}
	fmt.Fprintln(w, where)
	if len(s.unmerged) > 0 {
		fmt.Fprint(w, "  (fix conflicts and then run \"git rebase --continue\")\n"+
			"  (use \"git rebase --skip\" to skip this patch)\n"+
			"  (use \"git rebase --abort\" to check out the original branch)\n\n")
	} else {
		fmt.Fprint(w, "  (all conflicts fixed: run \"git rebase --continue\")\n\n")
	}
}

// abbrev shortens a hash read from a file of .git, whatever it holds.
func abbrev(h string) string {
	h = strings.TrimSpace(h)
	return h[:min(7, len(h))]
}
