package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/index"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// git stash keeps its entries as git does: refs/stash points at the
// newest "WIP" commit (parents: HEAD, the index commit and, with -u, the
// untracked-files commit) and the reflog logs/refs/stash lists them all,
// newest last, which is what stash@{n} counts back through.

const stashRef = plumbing.ReferenceName("refs/stash")

// maxStashLog bounds the stash reflog read.
const maxStashLog = 4 << 20

// stashEntry is one line of the stash reflog.
type stashEntry struct {
	old, new plumbing.Hash
	ident    string // "Name <email> unix tz"
	msg      string
}

func stashLogPath(rp *repo) string { return filepath.Join(rp.gitDir(), "logs", "refs", "stash") }

// readStashLog returns the stash entries, newest first.
func readStashLog(rp *repo) ([]stashEntry, error) {
	f, err := os.Open(stashLogPath(rp))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, maxStashLog+1)
	n, _ := readFull(f, buf)
	if n > maxStashLog {
		return nil, fatalf("%s: stash log too large", stashLogPath(rp))
	}
	var out []stashEntry
	for _, l := range strings.Split(string(buf[:n]), "\n") {
		head, msg, ok := strings.Cut(l, "\t")
		fields := strings.SplitN(head, " ", 3)
		if !ok || len(fields) < 3 || len(fields[0]) != 40 || len(fields[1]) != 40 {
			continue
		}
		out = append([]stashEntry{{old: plumbing.NewHash(fields[0]), new: plumbing.NewHash(fields[1]), ident: fields[2], msg: msg}}, out...)
	}
	return out, nil
}

func readFull(f *os.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// writeStashLog rewrites the reflog and refs/stash from entries (newest
// first); none removes both.
func writeStashLog(rp *repo, entries []stashEntry) error {
	if len(entries) == 0 {
		_ = os.Remove(stashLogPath(rp))
		if err := rp.r.Storer.RemoveReference(stashRef); err != nil {
			return err
		}
		return nil
	}
	var b strings.Builder
	prev := plumbing.ZeroHash
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		fmt.Fprintf(&b, "%s %s %s\t%s\n", prev, e.new, e.ident, e.msg)
		prev = e.new
	}
	if err := os.MkdirAll(filepath.Dir(stashLogPath(rp)), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(stashLogPath(rp), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return rp.r.Storer.SetReference(plumbing.NewHashReference(stashRef, entries[0].new))
}

// cmdStash: git stash [push [-m MSG] [-u] [-k] [-q]] | list | show [-p] | apply | pop | drop | clear.
func cmdStash(e *env, args []string) error {
	sub := "push"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	switch sub {
	case "push", "save":
		return stashPush(e, rp, args)
	case "list":
		entries, err := readStashLog(rp)
		if err != nil {
			return err
		}
		for i, s := range entries {
			fmt.Fprintf(e.stdout, "stash@{%d}: %s\n", i, s.msg)
		}
		return nil
	case "show":
		return stashShow(e, rp, args)
	case "apply", "pop":
		return stashApply(e, rp, args, sub == "pop")
	case "drop":
		quiet, rest := stashFlags(args)
		n, name, err := stashIndex(rp, rest)
		if err != nil {
			return err
		}
		return stashDrop(e, rp, n, name, quiet)
	case "clear":
		return writeStashLog(rp, nil)
	}
	return usagef("usage: git stash list\n   or: git stash show [-p] [<stash>]\n   or: git stash drop [-q] [<stash>]\n" +
		"   or: git stash ( pop | apply ) [--index] [-q] [<stash>]\n   or: git stash clear\n   or: git stash [push [-k] [-u] [-q] [-m <message>]]")
}

func stashFlags(args []string) (bool, []string) {
	quiet := false
	var rest []string
	for _, a := range args {
		if a == "-q" || a == "--quiet" {
			quiet = true
			continue
		}
		rest = append(rest, a)
	}
	return quiet, rest
}

// stashIndex resolves "stash@{N}", "N" or nothing (the newest) to an
// entry number, and the name git prints for it.
func stashIndex(rp *repo, args []string) (int, string, error) {
	entries, err := readStashLog(rp)
	if err != nil {
		return 0, "", err
	}
	if len(args) > 1 {
		return 0, "", fatalf("Too many revisions specified: '%s'", strings.Join(args, "' '"))
	}
	if len(entries) == 0 {
		return 0, "", &exitError{code: 1, msg: "No stash entries found."}
	}
	if len(args) == 0 {
		return 0, "refs/stash@{0}", nil
	}
	arg := args[0]
	num := arg
	if strings.HasPrefix(arg, "stash@{") && strings.HasSuffix(arg, "}") {
		num = arg[len("stash@{") : len(arg)-1]
	} else if isDigits(arg) {
		arg = "stash@{" + arg + "}"
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, "", &exitError{code: 1, msg: fmt.Sprintf("error: %s is not a valid reference", args[0])}
	}
	if n >= len(entries) {
		return 0, "", &exitError{code: 1, msg: fmt.Sprintf("error: %s is not a valid reference", arg)}
	}
	return n, arg, nil
}

func stashDrop(e *env, rp *repo, n int, name string, quiet bool) error {
	entries, err := readStashLog(rp)
	if err != nil {
		return err
	}
	dropped := entries[n]
	entries = append(entries[:n:n], entries[n+1:]...)
	if err := writeStashLog(rp, entries); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(e.stdout, "Dropped %s (%s)\n", name, dropped.new)
	}
	return nil
}

// stashPush saves the index and the tracked files' changes (and with -u
// the untracked files) as a stash entry, then resets to HEAD.
func stashPush(e *env, rp *repo, args []string) error {
	args = expandShort(args, "m")
	var msgs, specs []string
	untracked, keepIndex, quiet := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-m" || a == "--message") && i+1 < len(args):
			msgs = append(msgs, args[i+1])
			i++
		case a == "-u" || a == "--include-untracked":
			untracked = true
		case a == "-k" || a == "--keep-index":
			keepIndex = true
		case a == "--no-keep-index":
			keepIndex = false
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--":
			specs = append(specs, args[i+1:]...)
			i = len(args)
		case !strings.HasPrefix(a, "-"):
			specs = append(specs, a)
		default:
			return usagef("error: unknown option `%s'\nusage: git stash [push [-k] [-u] [-q] [-m <message>]] [--] [<pathspec>...]", strings.TrimLeft(a, "-"))
		}
	}
	head, err := rp.head()
	if err != nil {
		return err
	}
	if head == nil {
		return fatalf("You do not have the initial commit yet")
	}
	if un, err := unmergedPaths(rp); err != nil {
		return err
	} else if len(un) > 0 {
		var b strings.Builder
		for _, p := range un {
			fmt.Fprintf(&b, "%s: needs merge\n", p)
		}
		return &exitError{code: 1, msg: b.String() + "error: could not write index"}
	}
	headSnap, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	// Pathspecs limit what is stashed (and reset) to the paths they
	// name; the index commit still records the whole index.
	var rels []string
	for _, sp := range specs {
		r, err := rp.rel(sp)
		if err != nil {
			return err
		}
		rels = append(rels, r)
	}
	match := func(p string) bool {
		if len(rels) == 0 {
			return true
		}
		for _, r := range rels {
			if r == "." || p == r || strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
	// The worktree commit: the index, with the tracked files the
	// pathspecs take as they are on disk.
	work := snapshot{}
	for p, ent := range idx {
		work[p] = ent
	}
	var taken []string
	seen := map[string]bool{}
	for _, s := range []snapshot{headSnap, idx} {
		for p := range s {
			if !match(p) || seen[p] {
				continue
			}
			seen[p] = true
			taken = append(taken, p)
			w, ok, err := worktreeFile(rp, p)
			if err != nil {
				return err
			}
			if !ok {
				delete(work, p)
				continue
			}
			if ie, in := idx[p]; !in || !ie.hash.Equal(w.hash) {
				data, err := w.load()
				if err != nil {
					return err
				}
				if w.hash, err = writeBlob(rp, data); err != nil {
					return err
				}
			}
			work[p] = w
		}
	}
	var untrackedFiles []string
	if untracked {
		st, err := rp.wt.Status()
		if err != nil {
			return err
		}
		for p, fs := range st {
			if fs.Worktree == git.Untracked && fs.Staging == git.Untracked && match(p) {
				untrackedFiles = append(untrackedFiles, p)
			}
		}
		slices.Sort(untrackedFiles)
	}
	for i, r := range rels {
		found := r == "."
		for _, p := range append(slices.Clone(taken), untrackedFiles...) {
			found = found || p == r || strings.HasPrefix(p, r+"/")
		}
		if !found {
			// git names the pathspec with the length of the
			// directory it was given in.
			prefix := 0
			if r := filepath.ToSlash(mustRel(rp.root, rp.cwd)); r != "." {
				prefix = len(r) + 1
			}
			return &exitError{code: 1, msg: fmt.Sprintf("error: pathspec ':(,prefix:%d)%s' did not match any file(s) known to git\nDid you forget to 'git add'?", prefix, specs[i])}
		}
	}
	staged := 0
	for _, c := range compare(headSnap, idx) {
		if match(c.path) {
			staged++
		}
	}
	if staged == 0 && len(compare(idx, work)) == 0 && len(untrackedFiles) == 0 {
		fmt.Fprintln(e.stdout, "No local changes to save")
		return nil
	}
	branch, attached, err := rp.branch()
	if err != nil {
		return err
	}
	if !attached {
		branch = "(no branch)"
	}
	subject, _, _ := strings.Cut(head.Message, "\n")
	desc := fmt.Sprintf("%s: %s %s", branch, short(head.Hash), subject)
	iHash, err := commitTree(e, rp, idx, "index on "+desc+"\n", nil, head.Hash)
	if err != nil {
		return err
	}
	parents := []plumbing.Hash{head.Hash, iHash}
	if len(untrackedFiles) > 0 {
		us := snapshot{}
		for _, p := range untrackedFiles {
			w, ok, err := worktreeFile(rp, p)
			if err != nil || !ok {
				continue
			}
			data, err := w.load()
			if err != nil {
				return err
			}
			if w.hash, err = writeBlob(rp, data); err != nil {
				return err
			}
			us[p] = w
		}
		uHash, err := commitTree(e, rp, us, "untracked files on "+desc+"\n", nil)
		if err != nil {
			return err
		}
		parents = append(parents, uHash)
	}
	msg := "WIP on " + desc
	if len(msgs) > 0 {
		msg = "On " + branch + ": " + strings.TrimRight(cleanMessage(msgs), "\n")
	}
	wHash, err := commitTree(e, rp, work, msg, nil, parents...) // git ends this message without a newline
	if err != nil {
		return err
	}
	committer, err := identity(e, rp, "COMMITTER")
	if err != nil {
		return err
	}
	entries, err := readStashLog(rp)
	if err != nil {
		return err
	}
	ident := fmt.Sprintf("%s <%s> %d %s", committer.Name, committer.Email, committer.When.Unix(), committer.When.Format("-0700"))
	entries = append([]stashEntry{{new: wHash, ident: ident, msg: msg}}, entries...)
	if err := writeStashLog(rp, entries); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(e.stdout, "Saved working directory and index state %s\n", msg)
	}
	if len(rels) > 0 {
		if err := resetPaths(rp, headSnap, taken); err != nil {
			return err
		}
	} else if err := resetHard(rp, headSnap); err != nil {
		return err
	}
	for _, p := range untrackedFiles {
		if err := os.Remove(filepath.Join(rp.root, filepath.FromSlash(p))); err == nil {
			removeEmptyDirs(rp.root, filepath.ToSlash(filepath.Dir(p)))
		}
	}
	if keepIndex {
		return resetHard(rp, idx)
	}
	return nil
}

// stashCommit reads the WIP commit of entry n.
func stashCommit(rp *repo, n int) (*object.Commit, error) {
	entries, err := readStashLog(rp)
	if err != nil {
		return nil, err
	}
	return rp.r.CommitObject(entries[n].new)
}

func stashShow(e *env, rp *repo, args []string) error {
	patch := false
	var rest []string
	for _, a := range args {
		switch a {
		case "-p", "--patch", "-u":
			patch = true
		case "--stat":
			patch = false
		default:
			rest = append(rest, a)
		}
	}
	n, _, err := stashIndex(rp, rest)
	if err != nil {
		return err
	}
	w, err := stashCommit(rp, n)
	if err != nil {
		return err
	}
	if len(w.ParentHashes) == 0 {
		return fatalf("'%s' is not a stash-like commit", w.Hash)
	}
	base, _, err := commitSnapshot(rp, w.ParentHashes[0])
	if err != nil {
		return err
	}
	ws, err := treeSnapshot(rp, w)
	if err != nil {
		return err
	}
	changes := compare(base, ws)
	if patch {
		for _, c := range changes {
			if err := writePatch(e.stdout, c); err != nil {
				return err
			}
		}
		return nil
	}
	stats, err := statChanges(changes)
	if err != nil {
		return err
	}
	writeStat(e.stdout, stats)
	return nil
}

// stashApply merges a stash entry into the worktree (git stash apply),
// and drops it when that went without conflicts (pop).
func stashApply(e *env, rp *repo, args []string, pop bool) error {
	quiet, rest := stashFlags(args)
	var revs []string
	withIndex := false
	for _, a := range rest {
		if a == "--index" {
			withIndex = true
			continue
		}
		revs = append(revs, a)
	}
	n, name, err := stashIndex(rp, revs)
	if err != nil {
		return err
	}
	w, err := stashCommit(rp, n)
	if err != nil {
		return err
	}
	if len(w.ParentHashes) < 2 {
		return fatalf("'%s' is not a stash-like commit", w.Hash)
	}
	if un, err := unmergedPaths(rp); err != nil {
		return err
	} else if len(un) > 0 {
		var b strings.Builder
		for _, p := range un {
			fmt.Fprintf(&b, "%s: needs merge\n", p)
		}
		return &exitError{code: 1, msg: b.String() + "error: Cannot apply a stash in the middle of a merge"}
	}
	base, _, err := commitSnapshot(rp, w.ParentHashes[0])
	if err != nil {
		return err
	}
	theirs, err := treeSnapshot(rp, w)
	if err != nil {
		return err
	}
	cur, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	// --index: the stash's staged changes go onto the current index, as
	// git applies their diff with apply --cached.
	var newIndex snapshot
	if withIndex {
		istash, _, err := commitSnapshot(rp, w.ParentHashes[1])
		if err != nil {
			return err
		}
		if len(compare(base, istash)) > 0 && len(compare(cur, istash)) > 0 {
			im, err := mergeTrees(rp, base, cur, istash, mergeLabels{})
			if err != nil {
				return err
			}
			if len(im.conflicts) > 0 {
				return &exitError{code: 1, msg: "error: conflicts in index. Try without --index."}
			}
			newIndex = im.clean
		}
	}
	labels := mergeLabels{ours: "Updated upstream", theirs: "Stashed changes"}
	if len(compare(base, cur)) == 0 {
		labels.ours = "Version stash was based on"
	}
	m, err := mergeTrees(rp, base, cur, theirs, labels)
	if err != nil {
		return err
	}
	if err := checkOverwrite(rp, cur, m, "merge"); err != nil {
		// git counts this a failed merge: it still shows the status.
		var xe *exitError
		if !errors.As(err, &xe) {
			return err
		}
		fmt.Fprintln(e.stderr, xe.msg)
		if !quiet {
			s, err := readState(rp)
			if err != nil {
				return err
			}
			s.writeLong(e.stdout, rp)
		}
		if pop {
			fmt.Fprintln(e.stdout, "The stash entry is kept in case you need it again.")
		}
		return &exitError{code: 1}
	}
	var untracked snapshot
	if len(w.ParentHashes) > 2 {
		if untracked, _, err = commitSnapshot(rp, w.ParentHashes[2]); err != nil {
			return err
		}
		for p := range untracked {
			if _, ok, _ := worktreeFile(rp, p); ok {
				return &exitError{code: 1, msg: fmt.Sprintf("%s already exists, no checkout\nerror: could not restore untracked files from stash", p)}
			}
		}
	}
	// git prints the merge's messages even with -q.
	for _, l := range m.messages {
		fmt.Fprintln(e.stdout, l)
	}
	if err := applyMerge(rp, cur, m); err != nil {
		return err
	}
	switch {
	case len(m.conflicts) > 0:
		if withIndex {
			fmt.Fprintln(e.stderr, "Index was not unstashed.")
		}
	case newIndex != nil:
		if err := setIndex(rp, newIndex); err != nil {
			return err
		}
	default:
		if err := unstageUnlessNew(rp, cur); err != nil {
			return err
		}
	}
	for p, ent := range untracked {
		data, err := ent.load()
		if err != nil {
			return err
		}
		if err := writeWorkFile(rp, p, data, ent.mode); err != nil {
			return err
		}
	}
	if !quiet {
		s, err := readState(rp)
		if err != nil {
			return err
		}
		s.writeLong(e.stdout, rp)
	}
	if len(m.conflicts) > 0 {
		if pop {
			fmt.Fprintln(e.stdout, "The stash entry is kept in case you need it again.")
		}
		return &exitError{code: 1}
	}
	if pop {
		return stashDrop(e, rp, n, name, quiet)
	}
	return nil
}

// setIndex makes the index hold s (the worktree is left as it is).
func setIndex(rp *repo, s snapshot) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	old := map[string]*index.Entry{}
	for _, e := range idx.Entries {
		old[e.Name] = e
	}
	idx.Entries = nil
	for p, e := range s {
		if o, ok := old[p]; ok && o.Hash.Equal(e.hash) && o.Mode == e.mode && o.Stage == 0 {
			idx.Entries = append(idx.Entries, o)
			continue
		}
		idx.Entries = append(idx.Entries, &index.Entry{Name: p, Hash: e.hash, Mode: e.mode})
	}
	sortIndex(idx)
	return rp.r.Storer.SetIndex(idx)
}

// unstageUnlessNew puts the index back to cur for every path cur has,
// keeping new files staged, as git stash apply leaves the stash's
// changes unstaged.
func unstageUnlessNew(rp *repo, cur snapshot) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var entries []*index.Entry
	for _, e := range idx.Entries {
		seen[e.Name] = true
		if c, ok := cur[e.Name]; ok {
			if !c.hash.Equal(e.Hash) || c.mode != e.Mode {
				e = &index.Entry{Name: e.Name, Hash: c.hash, Mode: c.mode}
			}
		}
		entries = append(entries, e)
	}
	for p, c := range cur {
		if !seen[p] {
			entries = append(entries, &index.Entry{Name: p, Hash: c.hash, Mode: c.mode})
		}
	}
	idx.Entries = entries
	sortIndex(idx)
	return rp.r.Storer.SetIndex(idx)
}

// resetPaths makes the given paths of the index and worktree match
// target (removing those target lacks), leaving the others alone.
func resetPaths(rp *repo, target snapshot, paths []string) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	reset := map[string]bool{}
	for _, p := range paths {
		reset[p] = true
	}
	var entries []*index.Entry
	for _, e := range idx.Entries {
		if !reset[e.Name] {
			entries = append(entries, e)
		}
	}
	for _, p := range paths {
		ent, ok := target[p]
		if !ok {
			if err := os.Remove(filepath.Join(rp.root, filepath.FromSlash(p))); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		data, err := ent.load()
		if err != nil {
			return err
		}
		if err := writeWorkFile(rp, p, data, ent.mode); err != nil {
			return err
		}
		entries = append(entries, statEntry(rp, p, ent))
	}
	idx.Entries = entries
	sortIndex(idx)
	return rp.r.Storer.SetIndex(idx)
}

// mustRel is filepath.Rel, or "." when the two are unrelated.
func mustRel(base, target string) string {
	r, err := filepath.Rel(base, target)
	if err != nil {
		return "."
	}
	return r
}
