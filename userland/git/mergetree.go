package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/format/index"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// This file merges trees (what git's "ort" strategy does, without rename
// detection) and writes a merge's outcome to the index and worktree.
// merge, cherry-pick, revert, rebase and stash share it.

// stages are a conflicted path's versions: base, ours, theirs (nil
// where the path is absent).
type stages [3]*entry

// treeMerge is the outcome of merging three trees.
type treeMerge struct {
	clean     snapshot          // resolved paths
	conflicts map[string]stages // unresolved paths
	work      map[string][]byte // worktree contents of conflicted paths (nil: ours is left)
	messages  []string          // what git prints, in path order
	said      []pathMsg         // messages as they come, with their path
}

// pathMsg is a message git files under a path, to print in path order.
type pathMsg struct{ path, text string }

// say records messages about path p.
func (m *treeMerge) say(p string, texts ...string) {
	for _, t := range texts {
		m.said = append(m.said, pathMsg{p, t})
	}
}

func sameEntry(a, b *entry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.hash.Equal(b.hash) && a.mode == b.mode
}

func lookup(s snapshot, p string) *entry {
	if e, ok := s[p]; ok {
		return &e
	}
	return nil
}

// mergeTrees merges ours and theirs, both derived from base.
func mergeTrees(rp *repo, base, ours, theirs snapshot, labels mergeLabels) (*treeMerge, error) {
	res := &treeMerge{clean: snapshot{}, conflicts: map[string]stages{}, work: map[string][]byte{}}
	paths := map[string]bool{}
	for _, s := range []snapshot{base, ours, theirs} {
		for p := range s {
			paths[p] = true
		}
	}
	handled, err := mergeRenames(rp, res, base, ours, theirs, labels)
	if err != nil {
		return nil, err
	}
	for _, p := range slices.Sorted(mapKeys(paths)) {
		if handled[p] {
			continue
		}
		b, o, t := lookup(base, p), lookup(ours, p), lookup(theirs, p)
		switch {
		case sameEntry(o, t), sameEntry(b, t):
			if o != nil {
				res.clean[p] = *o
			}
		case sameEntry(b, o):
			if t != nil {
				res.clean[p] = *t
			}
		case o != nil && t != nil:
			if err := mergeFile(rp, res, p, b, o, t, labels); err != nil {
				return nil, err
			}
		case o == nil:
			res.conflicts[p] = stages{b, nil, t}
			res.say(p, fmt.Sprintf("CONFLICT (modify/delete): %s deleted in %s and modified in %s.  Version %s of %s left in tree.", p, labels.ours, labels.theirs, labels.theirs, p))
			data, err := t.load()
			if err != nil {
				return nil, err
			}
			res.work[p] = data
		default:
			res.conflicts[p] = stages{b, o, nil}
			res.say(p, fmt.Sprintf("CONFLICT (modify/delete): %s deleted in %s and modified in %s.  Version %s of %s left in tree.", p, labels.theirs, labels.ours, labels.ours, p))
		}
	}
	sort.SliceStable(res.said, func(i, j int) bool { return res.said[i].path < res.said[j].path })
	for _, m := range res.said {
		res.messages = append(res.messages, m.text)
	}
	return res, nil
}

// mergeRenames handles the files one side renamed and the other kept
// (changed or not) at the old path, as ort does: the result is at the
// new path, merged from the three versions. It returns the paths it
// settled. Renames on both sides, and renames the other side deleted or
// collided with, are left to the path-by-path merge.
func mergeRenames(rp *repo, res *treeMerge, base, ours, theirs snapshot, labels mergeLabels) (map[string]bool, error) {
	handled := map[string]bool{}
	rOurs, rTheirs := renamesBetween(base, ours), renamesBetween(base, theirs)
	renamedBy := func(rs []rename) map[string]rename {
		m := map[string]rename{}
		for _, r := range rs {
			m[r.from] = r
		}
		return m
	}
	oursFrom, theirsFrom := renamedBy(rOurs), renamedBy(rTheirs)
	type side struct {
		rs          []rename
		other       snapshot
		otherFrom   map[string]rename
		renamedOurs bool
	}
	// Renamed differently on each side (git's rename/rename 1to2): the
	// old path is left at stage 1, each new one at its side's stage.
	for _, r := range rOurs {
		rt, both := theirsFrom[r.from]
		if !both || rt.to == r.to {
			continue
		}
		if _, clash := theirs[r.to]; clash {
			continue
		}
		if _, clash := ours[rt.to]; clash {
			continue
		}
		b, o, t := lookup(base, r.from), lookup(ours, r.to), lookup(theirs, rt.to)
		handled[r.from], handled[r.to], handled[rt.to] = true, true, true
		res.conflicts[r.from] = stages{b, nil, nil}
		res.conflicts[r.to] = stages{nil, o, nil}
		res.conflicts[rt.to] = stages{nil, nil, t}
		data, err := t.load()
		if err != nil {
			return nil, err
		}
		res.work[rt.to] = data
		res.say(r.from, fmt.Sprintf("CONFLICT (rename/rename): %s renamed to %s in %s and to %s in %s.", r.from, r.to, labels.ours, rt.to, labels.theirs))
	}
	for _, sd := range []side{{rOurs, theirs, theirsFrom, true}, {rTheirs, ours, oursFrom, false}} {
		for _, r := range sd.rs {
			if _, both := sd.otherFrom[r.from]; both || handled[r.from] || handled[r.to] {
				continue
			}
			kept, ok := sd.other[r.from]
			if !ok {
				// Renamed on one side, deleted on the other.
				if _, clash := sd.other[r.to]; clash {
					continue
				}
				handled[r.from], handled[r.to] = true, true
				renamer, deleter := labels.ours, labels.theirs
				if sd.renamedOurs {
					res.conflicts[r.to] = stages{lookup(base, r.from), lookup(ours, r.to), nil}
				} else {
					renamer, deleter = labels.theirs, labels.ours
					t := lookup(theirs, r.to)
					res.conflicts[r.to] = stages{lookup(base, r.from), nil, t}
					data, err := t.load()
					if err != nil {
						return nil, err
					}
					res.work[r.to] = data
				}
				res.say(r.to, fmt.Sprintf("CONFLICT (rename/delete): %s renamed to %s in %s, but deleted in %s.", r.from, r.to, renamer, deleter))
				continue
			}
			if _, clash := sd.other[r.to]; clash {
				continue
			}
			b := lookup(base, r.from)
			var o, t *entry
			var l mergeLabels
			if sd.renamedOurs {
				o, t = lookup(ours, r.to), &kept
				l = mergeLabels{ours: labels.ours + ":" + r.to, theirs: labels.theirs + ":" + r.from}
			} else {
				o, t = &kept, lookup(theirs, r.to)
				l = mergeLabels{ours: labels.ours + ":" + r.from, theirs: labels.theirs + ":" + r.to}
			}
			handled[r.from], handled[r.to] = true, true
			switch {
			case sameEntry(o, t), sameEntry(b, t):
				res.clean[r.to] = *o
			case sameEntry(b, o):
				res.clean[r.to] = *t
			default:
				if err := mergeFile(rp, res, r.to, b, o, t, l); err != nil {
					return nil, err
				}
			}
		}
	}
	return handled, nil
}

// mergeFile merges one path both sides changed.
func mergeFile(rp *repo, res *treeMerge, p string, b, o, t *entry, labels mergeLabels) error {
	var base []byte
	var err error
	if b != nil {
		if base, err = b.load(); err != nil {
			return err
		}
	}
	ours, err := o.load()
	if err != nil {
		return err
	}
	theirs, err := t.load()
	if err != nil {
		return err
	}
	mode := o.mode
	if b != nil && o.mode == b.mode {
		mode = t.mode
	}
	kind := "content"
	if b == nil {
		kind = "add/add"
	}
	if isBinary(base) || isBinary(ours) || isBinary(theirs) || o.mode == filemode.Symlink || t.mode == filemode.Symlink {
		res.say(p, fmt.Sprintf("warning: Cannot merge binary files: %s (%s vs. %s)", p, labels.ours, labels.theirs),
			"Auto-merging "+p, fmt.Sprintf("CONFLICT (%s): Merge conflict in %s", kind, p))
		res.conflicts[p] = stages{b, o, t}
		return nil
	}
	res.say(p, "Auto-merging "+p)
	merged, n := merge3(string(base), string(ours), string(theirs), labels)
	if n > 0 {
		res.say(p, fmt.Sprintf("CONFLICT (%s): Merge conflict in %s", kind, p))
		res.conflicts[p] = stages{b, o, t}
		res.work[p] = []byte(merged)
		return nil
	}
	h, err := writeBlob(rp, []byte(merged))
	if err != nil {
		return err
	}
	data := []byte(merged)
	res.clean[p] = entry{hash: h, mode: mode, load: func() ([]byte, error) { return data, nil }}
	return nil
}

// writeBlob stores data as a blob.
func writeBlob(rp *repo, data []byte) (plumbing.Hash, error) {
	obj := rp.r.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return rp.r.Storer.SetEncodedObject(obj)
}

// writeTree stores the trees of a snapshot and returns the root's hash.
func writeTree(rp *repo, s snapshot) (plumbing.Hash, error) {
	type dir struct {
		files map[string]entry
		dirs  map[string]*dir
	}
	newDir := func() *dir { return &dir{files: map[string]entry{}, dirs: map[string]*dir{}} }
	root := newDir()
	for p, e := range s {
		d := root
		parts := strings.Split(p, "/")
		for _, name := range parts[:len(parts)-1] {
			sub, ok := d.dirs[name]
			if !ok {
				sub = newDir()
				d.dirs[name] = sub
			}
			d = sub
		}
		d.files[parts[len(parts)-1]] = e
	}
	var store func(d *dir) (plumbing.Hash, error)
	store = func(d *dir) (plumbing.Hash, error) {
		t := &object.Tree{}
		for name, e := range d.files {
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: e.hash})
		}
		for name, sub := range d.dirs {
			h, err := store(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// git orders a directory as if its name ended in '/'.
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
		obj := rp.r.Storer.NewEncodedObject()
		if err := t.Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return rp.r.Storer.SetEncodedObject(obj)
	}
	return store(root)
}

// writeCommit stores a commit and returns its hash.
func writeCommit(rp *repo, c *object.Commit) (plumbing.Hash, error) {
	obj := rp.r.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return rp.r.Storer.SetEncodedObject(obj)
}

// blockedPaths lists the paths an update from the snapshot from to the
// snapshot to (and conflicts) would overwrite although they have local
// changes: in the index (compared with from) or in the worktree
// (compared with the index); and untracked files in the way.
func blockedPaths(rp *repo, from snapshot, touched []string) (dirty, untracked []string, err error) {
	idx, err := indexSnapshot(rp)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range touched {
		ie, inIndex := idx[p]
		fe, inFrom := from[p]
		w, onDisk, err := worktreeFile(rp, p)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case !inIndex && !inFrom:
			if onDisk {
				untracked = append(untracked, p)
			}
		case inIndex != inFrom || inIndex && (!ie.hash.Equal(fe.hash) || ie.mode != fe.mode):
			dirty = append(dirty, p)
		case inIndex && (!onDisk || !w.hash.Equal(ie.hash)):
			dirty = append(dirty, p)
		}
	}
	return dirty, untracked, nil
}

// touchedPaths lists the paths where to (and conflicts) differ from from.
func touchedPaths(from snapshot, m *treeMerge) []string {
	set := map[string]bool{}
	for _, c := range compare(from, m.clean) {
		if _, ok := m.conflicts[c.path]; !ok {
			set[c.path] = true
		}
	}
	for p := range m.conflicts {
		set[p] = true
	}
	return slices.Sorted(mapKeys(set))
}

// overwriteError is git's refusal to lose local changes; op is "merge",
// "checkout", ...
func overwriteError(op string, dirty, untracked []string) error {
	var b strings.Builder
	if len(dirty) > 0 {
		fmt.Fprintf(&b, "error: Your local changes to the following files would be overwritten by %s:\n\t%s\n", op, strings.Join(dirty, "\n\t"))
		fmt.Fprintf(&b, "Please commit your changes or stash them before you %s.\n", op)
	}
	if len(untracked) > 0 {
		fmt.Fprintf(&b, "error: The following untracked working tree files would be overwritten by %s:\n\t%s\n", op, strings.Join(untracked, "\n\t"))
		fmt.Fprintf(&b, "Please move or remove them before you %s.\n", op)
	}
	b.WriteString("Aborting")
	return &exitError{code: 1, msg: b.String()}
}

// applyMerge makes the index and worktree, which match from, show m:
// resolved paths at stage 0, conflicted ones at stages 1-3 with their
// worktree files holding the conflict.
func applyMerge(rp *repo, from snapshot, m *treeMerge) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	touched := touchedPaths(from, m)
	drop := map[string]bool{}
	for _, p := range touched {
		drop[p] = true
	}
	var kept []*index.Entry
	for _, e := range idx.Entries {
		if !drop[e.Name] {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
	for _, p := range touched {
		full := filepath.Join(rp.root, filepath.FromSlash(p))
		if st, ok := m.conflicts[p]; ok {
			if data := m.work[p]; data != nil {
				mode := filemode.Regular
				if st[1] != nil {
					mode = st[1].mode
				} else if st[2] != nil {
					mode = st[2].mode
				}
				if err := writeWorkFile(rp, p, data, mode); err != nil {
					return err
				}
			}
			for i, e := range st {
				if e != nil {
					idx.Entries = append(idx.Entries, &index.Entry{Name: p, Hash: e.hash, Mode: e.mode, Stage: index.Stage(i + 1)})
				}
			}
			continue
		}
		e, ok := m.clean[p]
		if !ok {
			if err := os.Remove(full); err != nil && !os.IsNotExist(err) {
				return err
			}
			removeEmptyDirs(rp.root, path.Dir(p))
			continue
		}
		data, err := e.load()
		if err != nil {
			return err
		}
		if err := writeWorkFile(rp, p, data, e.mode); err != nil {
			return err
		}
		idx.Entries = append(idx.Entries, statEntry(rp, p, e))
	}
	sortIndex(idx)
	return rp.r.Storer.SetIndex(idx)
}

// sortIndex orders entries as git's index has them: by name, then stage.
func sortIndex(idx *index.Index) {
	sort.SliceStable(idx.Entries, func(i, j int) bool {
		a, b := idx.Entries[i], idx.Entries[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Stage < b.Stage
	})
}

// writeWorkFile writes one worktree file, replacing what is there.
func writeWorkFile(rp *repo, p string, data []byte, mode filemode.FileMode) error {
	full := filepath.Join(rp.root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	_ = os.Remove(full)
	if mode == filemode.Symlink {
		if err := os.Symlink(string(data), full); err == nil {
			return nil
		}
	}
	perm := os.FileMode(0o644)
	if mode == filemode.Executable {
		perm = 0o755
	}
	return os.WriteFile(full, data, perm)
}

// removeEmptyDirs removes dir and its parents inside root while empty.
func removeEmptyDirs(root, dir string) {
	for dir != "." && dir != "/" && dir != "" {
		if os.Remove(filepath.Join(root, filepath.FromSlash(dir))) != nil {
			return
		}
		dir = path.Dir(dir)
	}
}

// unmergedPaths lists the index's conflicted paths.
func unmergedPaths(rp *repo) ([]string, error) {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range idx.Entries {
		if e.Stage != 0 && (len(out) == 0 || out[len(out)-1] != e.Name) {
			out = append(out, e.Name)
		}
	}
	return out, nil
}

// resetHard makes the index and worktree match target, as git reset
// --hard does: tracked files not in target go, the others are
// rewritten where they differ, conflicts are dropped.
func resetHard(rp *repo, target snapshot) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	for _, e := range idx.Entries {
		if _, ok := target[e.Name]; !ok {
			if err := os.Remove(filepath.Join(rp.root, filepath.FromSlash(e.Name))); err != nil && !os.IsNotExist(err) {
				return err
			}
			removeEmptyDirs(rp.root, path.Dir(e.Name))
		}
	}
	idx.Entries = nil
	for _, p := range slices.Sorted(mapKeys(target)) {
		e := target[p]
		w, ok, err := worktreeFile(rp, p)
		if err != nil {
			return err
		}
		if !ok || !w.hash.Equal(e.hash) {
			data, err := e.load()
			if err != nil {
				return err
			}
			if err := writeWorkFile(rp, p, data, e.mode); err != nil {
				return err
			}
		}
		idx.Entries = append(idx.Entries, statEntry(rp, p, e))
	}
	return rp.r.Storer.SetIndex(idx)
}

// statEntry is an index entry for a file just written.
func statEntry(rp *repo, p string, e entry) *index.Entry {
	ne := &index.Entry{Name: p, Hash: e.hash, Mode: e.mode}
	if fi, err := os.Lstat(filepath.Join(rp.root, filepath.FromSlash(p))); err == nil {
		ne.ModifiedAt, ne.Size = fi.ModTime(), uint32(fi.Size())
	}
	return ne
}

// maxStateFile bounds what is read of a state file of .git (MERGE_MSG,
// the rebase todo list...).
const maxStateFile = 4 << 20

// refFile reads a file of .git such as MERGE_HEAD ("" if missing).
func refFile(rp *repo, name string) string { return readBounded(filepath.Join(rp.gitDir(), name)) }

// readBounded reads at most maxStateFile bytes of a file ("" if
// missing).
func readBounded(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxStateFile))
	return string(b)
}

func writeGitFile(rp *repo, name, content string) error {
	return os.WriteFile(filepath.Join(rp.gitDir(), name), []byte(content), 0o644)
}

func removeGitFiles(rp *repo, names ...string) {
	for _, n := range names {
		_ = os.Remove(filepath.Join(rp.gitDir(), n))
	}
}

// setHead moves HEAD's branch, or a detached HEAD, to h.
func setHead(rp *repo, h plumbing.Hash) error {
	ref, err := rp.r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return err
	}
	name := plumbing.HEAD
	if ref.Type() == plumbing.SymbolicReference {
		name = ref.Target()
	}
	return rp.r.Storer.SetReference(plumbing.NewHashReference(name, h))
}

// commitSnapshot lists a commit's files (nil: none).
func commitSnapshot(rp *repo, h plumbing.Hash) (snapshot, *object.Commit, error) {
	if h.IsZero() {
		return snapshot{}, nil, nil
	}
	c, err := rp.r.CommitObject(h)
	if err != nil {
		return nil, nil, err
	}
	s, err := treeSnapshot(rp, c)
	return s, c, err
}

// resolveConflicts drops the conflict stages of the paths git add is
// about to stage (all of them for -A), which marks them resolved.
func resolveConflicts(rp *repo, specs []string, all bool) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	var rels []string
	for _, s := range specs {
		r, err := rp.rel(s)
		if err != nil {
			return err
		}
		rels = append(rels, r)
	}
	match := func(name string) bool {
		if all && len(specs) == 0 {
			return true
		}
		for _, r := range rels {
			if r == "." || r == name || strings.HasPrefix(name, r+"/") {
				return true
			}
		}
		return false
	}
	var kept []*index.Entry
	changed := false
	for _, e := range idx.Entries {
		if e.Stage != 0 && match(e.Name) {
			changed = true
			continue
		}
		kept = append(kept, e)
	}
	if !changed {
		return nil
	}
	idx.Entries = kept
	return rp.r.Storer.SetIndex(idx)
}
