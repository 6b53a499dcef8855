package main

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// change is one path's state in a status.
type change struct {
	path, from string // from: the old name of a rename
	code       git.StatusCode
}

// state is a worktree status split the way git reports it.
type state struct {
	staged, unstaged []change
	untracked        []string // collapsed to "dir/" where a whole directory is untracked
	noCommits        bool
	unmerged         []unmergedPath
	op               inProgress
	branch           string
	attached         bool
	headShort        string
}

// unmergedPath is a conflicted path and its stage mask.
type unmergedPath struct {
	path string
	mask int
}

// readState computes the status of rp.
func readState(rp *repo) (*state, error) {
	st, masks, err := worktreeStatus(rp)
	if err != nil {
		return nil, err
	}
	head, err := rp.head()
	if err != nil {
		return nil, err
	}
	s := &state{noCommits: head == nil, op: readInProgress(rp)}
	for _, p := range slices.Sorted(mapKeys(masks)) {
		s.unmerged = append(s.unmerged, unmergedPath{p, masks[p]})
	}
	if head != nil {
		s.headShort = short(head.Hash)
	}
	if s.branch, s.attached, err = rp.branch(); err != nil {
		return nil, err
	}
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return nil, err
	}
	tracked := make(map[string]bool, len(idx.Entries))
	for _, e := range idx.Entries {
		for d := path.Dir(e.Name); d != "."; d = path.Dir(d) {
			tracked[d+"/"] = true
		}
	}
	untracked := map[string]bool{}
	inIndex := make(map[string]bool, len(idx.Entries))
	for _, e := range idx.Entries {
		inIndex[e.Name] = true
	}
	var headTree *object.Tree
	if head != nil {
		headTree, _ = head.Tree()
	}
	inHead := func(p string) bool {
		if headTree == nil {
			return false
		}
		_, err := headTree.FindEntry(p)
		return err == nil
	}
	for p, fs := range st {
		if fs.Worktree == git.Untracked && fs.Staging == git.Untracked && !inIndex[p] && inHead(p) {
			// go-git reports a file removed from the index but still on
			// disk as untracked only; git also shows the staged deletion.
			s.staged = append(s.staged, change{path: p, code: git.Deleted})
		}
		if fs.Worktree == git.Untracked && fs.Staging == git.Untracked {
			// The outermost directory holding nothing tracked stands for
			// everything in it, as git shows it.
			u := p
			for d := path.Dir(p); d != "."; d = path.Dir(d) {
				if !tracked[d+"/"] {
					u = d + "/"
				}
			}
			untracked[u] = true
			continue
		}
		if fs.Staging != git.Unmodified && fs.Staging != git.Untracked {
			s.staged = append(s.staged, change{path: p, from: fs.Extra, code: fs.Staging})
		}
		if fs.Worktree != git.Unmodified && fs.Worktree != git.Untracked {
			s.unstaged = append(s.unstaged, change{path: p, code: fs.Worktree})
		}
	}
	byPath := func(a, b change) int { return strings.Compare(a.path, b.path) }
	slices.SortFunc(s.staged, byPath)
	slices.SortFunc(s.unstaged, byPath)
	for u := range untracked {
		s.untracked = append(s.untracked, u)
	}
	slices.Sort(s.untracked)
	return s, nil
}

var statusLabels = map[git.StatusCode]string{
	git.Added: "new file:", git.Modified: "modified:", git.Deleted: "deleted:",
	git.Renamed: "renamed:", git.Copied: "copied:", git.UpdatedButUnmerged: "both modified:",
}

// writeLong writes git's long status format.
func (s *state) writeLong(w io.Writer, rp *repo) {
	if s.attached {
		fmt.Fprintf(w, "On branch %s\n", s.branch)
		statusTracking(w, rp)
	} else if s.op.kind == "rebase" {
		fmt.Fprintf(w, "interactive rebase in progress; onto %s\n", s.op.onto)
	} else {
		fmt.Fprintf(w, "HEAD detached at %s\n", s.headShort)
	}
	s.writeInProgress(w, rp)
	if s.noCommits {
		fmt.Fprint(w, "\nNo commits yet\n\n")
	}
	if len(s.staged) > 0 {
		fmt.Fprint(w, "Changes to be committed:\n")
		switch {
		case !s.fromCommit():
			// git gives no hint while an operation is in progress.
		case s.noCommits:
			fmt.Fprint(w, "  (use \"git rm --cached <file>...\" to unstage)\n")
		default:
			fmt.Fprint(w, "  (use \"git restore --staged <file>...\" to unstage)\n")
		}
		for _, c := range s.staged {
			name := quotePath(rp.display(c.path))
			if c.code == git.Renamed && c.from != "" {
				name = quotePath(rp.display(c.from)) + " -> " + name
			}
			fmt.Fprintf(w, "\t%-12s%s\n", statusLabels[c.code], name)
		}
		fmt.Fprintln(w)
	}
	s.writeUnmerged(w, rp)
	if len(s.unstaged) > 0 {
		fmt.Fprint(w, "Changes not staged for commit:\n")
		verb := "add"
		for _, c := range s.unstaged {
			if c.code == git.Deleted {
				verb = "add/rm"
			}
		}
		fmt.Fprintf(w, "  (use \"git %s <file>...\" to update what will be committed)\n", verb)
		fmt.Fprint(w, "  (use \"git restore <file>...\" to discard changes in working directory)\n")
		for _, c := range s.unstaged {
			fmt.Fprintf(w, "\t%-12s%s\n", statusLabels[c.code], quotePath(rp.display(c.path)))
		}
		fmt.Fprintln(w)
	}
	if len(s.untracked) > 0 {
		fmt.Fprint(w, "Untracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n")
		for _, u := range s.untracked {
			fmt.Fprintf(w, "\t%s\n", quotePath(rp.display(u)))
		}
		fmt.Fprintln(w)
	}
	if len(s.staged) > 0 {
		return
	}
	switch {
	case len(s.unstaged) > 0 || len(s.unmerged) > 0:
		fmt.Fprint(w, "no changes added to commit (use \"git add\" and/or \"git commit -a\")\n")
	case len(s.untracked) > 0:
		fmt.Fprint(w, "nothing added to commit but untracked files present (use \"git add\" to track)\n")
	case s.noCommits:
		fmt.Fprint(w, "nothing to commit (create/copy files and use \"git add\" to track)\n")
	default:
		fmt.Fprint(w, "nothing to commit, working tree clean\n")
	}
}

// writeShort writes "XY path" lines (--short and --porcelain v1).
func (s *state) writeShort(w io.Writer, rp *repo, porcelain bool) {
	codes := map[string][2]byte{}
	from := map[string]string{}
	for _, c := range s.staged {
		v := codes[c.path]
		v[0] = byte(c.code)
		codes[c.path] = v
		from[c.path] = c.from
	}
	for _, c := range s.unstaged {
		v := codes[c.path]
		v[1] = byte(c.code)
		codes[c.path] = v
	}
	for _, u := range s.unmerged {
		_, xy := unmergedLabel(u.mask)
		codes[u.path] = [2]byte{xy[0], xy[1]}
	}
	name := func(p string) string {
		if porcelain {
			return quotePath(p)
		}
		return quotePath(rp.display(p))
	}
	for _, p := range slices.Sorted(mapKeys(codes)) {
		v := codes[p]
		for i := range v {
			if v[i] == 0 {
				v[i] = ' '
			}
		}
		n := name(p)
		if f := from[p]; v[0] == 'R' && f != "" {
			n = name(f) + " -> " + n
		}
		fmt.Fprintf(w, "%c%c %s\n", v[0], v[1], n)
	}
	for _, u := range s.untracked {
		fmt.Fprintf(w, "?? %s\n", name(u))
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// cmdStatus: git status [-s|--short] [--porcelain] [-b is not supported].
func cmdStatus(e *env, args []string) error {
	shortFmt, porcelain := false, false
	for _, a := range args {
		switch a {
		case "-s", "--short":
			shortFmt = true
		case "--porcelain", "--porcelain=v1":
			porcelain = true
		default:
			return usagef("error: unknown option `%s'\nusage: git status [-s|--short] [--porcelain]", strings.TrimLeft(a, "-"))
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	s, err := readState(rp)
	if err != nil {
		return err
	}
	if shortFmt || porcelain {
		s.writeShort(e.stdout, rp, porcelain)
		return nil
	}
	s.writeLong(e.stdout, rp)
	return nil
}
