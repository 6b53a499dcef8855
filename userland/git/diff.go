package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	format "github.com/go-git/go-git/v6/plumbing/format/config"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// entry is one file of a tree, the index or the worktree.
type entry struct {
	hash plumbing.Hash
	mode filemode.FileMode
	load func() ([]byte, error)
}

// snapshot maps slash paths to files.
type snapshot map[string]entry

// maxBlob bounds the bytes of one file a diff reads.
const maxBlob = 64 << 20

func blobLoader(rp *repo, h plumbing.Hash) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := rp.r.BlobObject(h)
		if err != nil {
			return nil, err
		}
		if b.Size > maxBlob {
			return nil, fatalf("%s: blob too large to diff", h)
		}
		rd, err := b.Reader()
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		return io.ReadAll(rd)
	}
}

// treeSnapshot lists a commit's files; a nil commit has none.
func treeSnapshot(rp *repo, c *object.Commit) (snapshot, error) {
	s := snapshot{}
	if c == nil {
		return s, nil
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	err = t.Files().ForEach(func(f *object.File) error {
		s[f.Name] = entry{hash: f.Hash, mode: f.Mode, load: blobLoader(rp, f.Hash)}
		return nil
	})
	return s, err
}

// indexSnapshot lists the index.
func indexSnapshot(rp *repo) (snapshot, error) {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return nil, err
	}
	s := snapshot{}
	for _, e := range idx.Entries {
		// A conflicted path stands at our version (stage 2), if any.
		if e.Stage == 1 || e.Stage == 3 {
			continue
		}
		s[e.Name] = entry{hash: e.Hash, mode: e.Mode, load: blobLoader(rp, e.Hash)}
	}
	return s, nil
}

// worktreeFile reads a file of the worktree as git would store it.
func worktreeFile(rp *repo, p string) (entry, bool, error) {
	return readEntry(filepath.Join(rp.root, filepath.FromSlash(p)), p)
}

// readEntry reads the file at full as git would store it (a symlink as
// its target); name is how errors call it. A missing file or one that is
// neither regular nor a symlink is no entry.
func readEntry(full, name string) (entry, bool, error) {
	fi, err := os.Lstat(full)
	if os.IsNotExist(err) {
		return entry{}, false, nil
	}
	if err != nil {
		return entry{}, false, err
	}
	var data []byte
	mode := filemode.Regular
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(full)
		if err != nil {
			return entry{}, false, err
		}
		data, mode = []byte(t), filemode.Symlink
	case fi.Mode().IsRegular():
		if fi.Size() > maxBlob {
			return entry{}, false, fatalf("%s: file too large to diff", name)
		}
		if data, err = os.ReadFile(full); err != nil {
			return entry{}, false, err
		}
		if fi.Mode()&0o111 != 0 {
			mode = filemode.Executable
		}
	default:
		return entry{}, false, nil
	}
	hs := plumbing.NewHasher(format.SHA1, plumbing.BlobObject, int64(len(data)))
	hs.Write(data)
	return entry{hash: hs.Sum(), mode: mode, load: func() ([]byte, error) { return data, nil }}, true, nil
}

// fileChange is one path that differs between two snapshots.
type fileChange struct {
	path     string
	from, to *entry
	oldPath  string // the source of a rename (see detectRenames), else ""
	score    int    // a rename's similarity, out of maxScore
	aPath    string // diff --no-index: the first side's name when it differs
	unmerged bool   // a conflicted path of the index (git's "U"), from and to nil
}

// compare lists the paths whose content or mode differ, sorted.
func compare(a, b snapshot) []fileChange {
	var out []fileChange
	for p, ea := range a {
		eb, ok := b[p]
		switch {
		case !ok:
			out = append(out, fileChange{path: p, from: &ea})
		case !ea.hash.Equal(eb.hash) || ea.mode != eb.mode:
			out = append(out, fileChange{path: p, from: &ea, to: &eb})
		}
	}
	for p, eb := range b {
		if _, ok := a[p]; !ok {
			out = append(out, fileChange{path: p, to: &eb})
		}
	}
	slices.SortFunc(out, func(x, y fileChange) int { return strings.Compare(x.path, y.path) })
	return out
}

// zeroShort is the abbreviated hash of a missing side.
const zeroShort = "0000000"

// writePatch writes one change in git's unified format with 3 lines of
// context.
func writePatch(w io.Writer, c fileChange) error {
	if c.unmerged {
		_, err := fmt.Fprintf(w, "* Unmerged path %s\n", quotePath(c.path))
		return err
	}
	if c.oldPath != "" {
		return writeRenamePatch(w, c)
	}
	aPath := c.path
	if c.aPath != "" {
		aPath = c.aPath
	}
	fmt.Fprintf(w, "diff --git %s %s\n", quotePath(srcPrefix+aPath), quotePath(dstPrefix+c.path))
	var a, b []byte
	var err error
	if c.from != nil {
		if a, err = c.from.load(); err != nil {
			return err
		}
	}
	if c.to != nil {
		if b, err = c.to.load(); err != nil {
			return err
		}
	}
	oldName, newName := quotePath(srcPrefix+aPath), quotePath(dstPrefix+c.path)
	switch {
	case c.from == nil:
		fmt.Fprintf(w, "new file mode %o\nindex %s..%s\n", c.to.mode, zeroShort, short(c.to.hash))
		oldName = "/dev/null"
	case c.to == nil:
		fmt.Fprintf(w, "deleted file mode %o\nindex %s..%s\n", c.from.mode, short(c.from.hash), zeroShort)
		newName = "/dev/null"
	default:
		if c.from.mode != c.to.mode {
			fmt.Fprintf(w, "old mode %o\nnew mode %o\n", c.from.mode, c.to.mode)
		}
		if c.from.hash.Equal(c.to.hash) {
			return nil
		}
		fmt.Fprintf(w, "index %s..%s", short(c.from.hash), short(c.to.hash))
		if c.from.mode == c.to.mode {
			fmt.Fprintf(w, " %o", c.to.mode)
		}
		fmt.Fprintln(w)
	}
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	if isBinary(a) || isBinary(b) {
		fmt.Fprintf(w, "Binary files %s and %s differ\n", oldName, newName)
		return nil
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", oldName, newName)
	writeHunks(w, lineOps(string(a), string(b)), splitLines(string(a)))
	return nil
}

// isBinary applies git's test: a NUL in the first 8000 bytes.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// op is one line of a line diff: ' ', '-' or '+'.
type op struct {
	kind byte
	line string // with its newline, if it has one
}

// lineOps is the line diff git diff makes: xdiff's Myers with its
// indent heuristic (xdiff.go), so changes that could be placed several
// ways are placed where git places them.
func lineOps(a, b string) []op {
	al, bl := splitLines(a), splitLines(b)
	var ops []op
	pos := 0
	for _, h := range xdiffHunksOpt(al, bl, false, true) {
		for _, l := range al[pos:h.i1] {
			ops = append(ops, op{' ', l})
		}
		for _, l := range al[h.i1 : h.i1+h.chg1] {
			ops = append(ops, op{'-', l})
		}
		for _, l := range bl[h.i2 : h.i2+h.chg2] {
			ops = append(ops, op{'+', l})
		}
		pos = h.i1 + h.chg1
	}
	for _, l := range al[pos:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// context is the number of context lines around a change: 3, or -U<n>
// / --unified=<n> for this run.
var context = 3

// writeHunks groups ops into hunks as git does: 3 lines of context, hunks
// closer than twice that merged, and a function line (git's default: the
// nearest line above starting with a letter, '_' or '$') in the header.
func writeHunks(w io.Writer, ops []op, oldLines []string) {
	funcLine, funcLimit := "", -1
	for i := 0; i < len(ops); {
		// Find the next change.
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i >= len(ops) {
			return
		}
		start := max(0, i-context)
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run < len(ops) && run-end <= 2*context {
				end = run
				continue
			}
			end = min(end+context, len(ops))
			break
		}
		// Line numbers of the hunk's first old and new lines.
		oldLine, newLine := 0, 0
		for _, o := range ops[:start] {
			if o.kind != '+' {
				oldLine++
			}
			if o.kind != '-' {
				newLine++
			}
		}
		oldCount, newCount := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				oldCount++
			}
			if o.kind != '-' {
				newCount++
			}
		}
		for l := oldLine - 1; l > funcLimit && l >= 0; l-- {
			if f, ok := funcName(oldLines[l]); ok {
				funcLine = f
				break
			}
		}
		funcLimit = oldLine - 1
		hdr := fmt.Sprintf("@@ -%s +%s @@", hunkRange(oldLine, oldCount), hunkRange(newLine, newCount))
		if funcLine != "" {
			hdr += " " + funcLine
		}
		fmt.Fprintln(w, hdr)
		for _, o := range ops[start:end] {
			fmt.Fprintf(w, "%c%s", o.kind, o.line)
			if !strings.HasSuffix(o.line, "\n") {
				fmt.Fprint(w, "\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
}

func hunkRange(line, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", line)
	case 1:
		return fmt.Sprint(line + 1)
	}
	return fmt.Sprintf("%d,%d", line+1, count)
}

// funcName is git's default function-line rule (xdiff's def_ff).
func funcName(line string) (string, bool) {
	if line == "" {
		return "", false
	}
	c := line[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$') {
		return "", false
	}
	line = line[:min(len(line), 80)]
	return strings.TrimRight(line, " \t\n\v\f\r"), true
}

// cmdDiff: git diff [options] [--cached|--staged] [<commit> [<commit>] | <a>..<b> | <a>...<b>] [--] [<path>...].
func cmdDiff(e *env, args []string) error {
	cached, quiet, exitCode, noIndex, reverse := false, false, false, false, false
	var f diffFormat
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case f.flag(a):
		case a == "--cached" || a == "--staged":
			cached = true
		case a == "--quiet":
			quiet, exitCode = true, true
		case a == "--exit-code":
			exitCode = true
		case a == "--no-index":
			noIndex = true
		case a == "-R":
			reverse = true
		case a == "--no-color" || a == "--color=never" || a == "--no-ext-diff" || a == "--no-renames":
		case strings.HasPrefix(a, "-") && a != "-":
			return usagef("error: invalid option: %s", a)
		default:
			rest = append(rest, a)
		}
	}
	if !f.any() {
		f.patch = true
	}
	if noIndex {
		return diffNoIndex(e, f, quiet, slices.DeleteFunc(rest, func(s string) bool { return s == "--" }))
	}
	rp, err := openRepo()
	if err != nil {
		if len(rest) == 2 {
			// Outside a repository, two paths are compared as files.
			return diffNoIndex(e, f, quiet, rest)
		}
		return err
	}
	revs, paths, err := splitRevsPaths(rp, rest)
	if err != nil {
		return err
	}
	if len(revs) == 1 {
		if r := parseRange(revs[0]); r.dots != 0 {
			from := r.from
			if r.dots == 3 {
				a, err := rp.resolveCommit(r.from)
				if err != nil {
					return err
				}
				b, err := rp.resolveCommit(r.to)
				if err != nil {
					return err
				}
				bases, err := a.MergeBase(b)
				if err != nil {
					return err
				}
				if len(bases) == 0 {
					return fatalf("%s: no merge base", revs[0])
				}
				from = bases[0].Hash.String()
			}
			revs = []string{from, r.to}
		}
	}
	var from, to snapshot
	switch {
	case len(revs) > 2 || (cached && len(revs) > 1):
		return usagef("usage: git diff [<options>] [<commit>] [--] [<path>...]")
	case len(revs) == 2:
		a, err := rp.resolveCommit(revs[0])
		if err != nil {
			return err
		}
		b, err := rp.resolveCommit(revs[1])
		if err != nil {
			return err
		}
		if from, err = treeSnapshot(rp, a); err != nil {
			return err
		}
		if to, err = treeSnapshot(rp, b); err != nil {
			return err
		}
	case cached:
		var c *object.Commit
		if len(revs) == 1 {
			c, err = rp.resolveCommit(revs[0])
		} else {
			c, err = rp.head()
		}
		if err != nil {
			return err
		}
		if from, err = treeSnapshot(rp, c); err != nil {
			return err
		}
		if to, err = indexSnapshot(rp); err != nil {
			return err
		}
	default:
		// The worktree against the index, or against a commit: tracked
		// files only, as git shows them.
		idx, err := indexSnapshot(rp)
		if err != nil {
			return err
		}
		from = idx
		if len(revs) == 1 {
			c, err := rp.resolveCommit(revs[0])
			if err != nil {
				return err
			}
			if from, err = treeSnapshot(rp, c); err != nil {
				return err
			}
		}
		if to, err = worktreeSnapshot(rp, idx); err != nil {
			return err
		}
	}
	specs, err := pathspecs(rp, paths)
	if err != nil {
		return err
	}
	if reverse {
		from, to = to, from
		srcPrefix, dstPrefix = dstPrefix, srcPrefix
	}
	changes := filterChanges(compare(from, to), specs)
	shown := false
	plainPatch := f.patch && !f.stat && !f.shortstat && !f.numstat && !f.nameOnly && !f.nameStatus
	if !quiet && !cached && !reverse && len(revs) == 0 && plainPatch {
		// Conflicted paths are shown as git's combined diffs.
		kept, keepU := changes, func(p string) bool { return matchSpec(specs, p) }
		if f.filter != "" {
			kept = filterStatus(kept, f.filter)
			// git shows a conflicted path's combined diff for "U" and
			// for the "M" of its worktree file.
			u := filterStatus([]fileChange{{unmerged: true}}, f.filter)
			m := filterStatus([]fileChange{{from: &entry{}, to: &entry{}}}, f.filter)
			if len(u) == 0 && len(m) == 0 {
				keepU = func(string) bool { return false }
			}
		}
		if shown, err = writeWorktreeDiff(e.stdout, rp, kept, keepU); err != nil {
			return err
		}
	}
	if len(revs) == 0 && !shown {
		// Against the index, a conflicted path is also git's "U" entry,
		// before any change of its stage-2 version.
		un, err := unmergedStages(rp)
		if err != nil {
			return err
		}
		var all []fileChange
		for _, p := range slices.Sorted(mapKeys(un)) {
			if matchSpec(specs, p) {
				all = append(all, fileChange{path: p, unmerged: true})
			}
		}
		if len(all) > 0 {
			all = append(all, changes...)
			slices.SortStableFunc(all, func(a, b fileChange) int { return strings.Compare(a.path, b.path) })
			changes = all
		}
	}
	if !quiet && !shown {
		if err := writeDiff(e.stdout, f, changes); err != nil {
			return err
		}
	}
	if exitCode && len(changes) > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// worktreeSnapshot reads the worktree's versions of the files in idx
// (a deleted file is absent).
func worktreeSnapshot(rp *repo, idx snapshot) (snapshot, error) {
	to := snapshot{}
	for p, ie := range idx {
		ent, ok, err := worktreeFile(rp, p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if ent.hash.Equal(ie.hash) && ent.mode == ie.mode {
			// Unchanged: the index's loader avoids holding the data.
			ent.load = ie.load
		}
		to[p] = ent
	}
	return to, nil
}
