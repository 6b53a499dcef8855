package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/format/index"
)

// git apply applies unified diffs (git's and diff -u's) to the worktree
// and/or the index, all or nothing, placing hunks as git does: at their
// line or the nearest one where the whole context matches, at the start
// of the file for a hunk that begins there and at its end for one
// without trailing context.

// maxPatch bounds a patch read.
const maxPatch = 64 << 20

// filePatch is one file's part of a patch.
type filePatch struct {
	oldName, newName string // "" for /dev/null
	isNew, isDelete  bool
	newMode          filemode.FileMode
	hunks            []applyHunk
	binary           bool
}

// name is the path git names the patch by.
func (p *filePatch) name() string {
	if p.newName != "" {
		return p.newName
	}
	return p.oldName
}

// applyHunk is one hunk: lines keep their ' ', '-' or '+' and their
// newline (none after a "\ No newline at end of file").
type applyHunk struct {
	oldStart, oldCount, newStart, newCount int
	lines                                  []string
}

// stripPath removes n leading components, as -p does.
func stripPath(p string, n int) string {
	p = strings.TrimSpace(p)
	if i := strings.IndexByte(p, '\t'); i >= 0 {
		p = p[:i]
	}
	if p == "/dev/null" {
		return ""
	}
	for ; n > 0; n-- {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return p
		}
		p = p[i+1:]
	}
	return p
}

// parseHunkRange parses "a,b" or "a" of a hunk header.
func parseHunkRange(s string) (int, int, error) {
	a, b, hasCount := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, fmt.Errorf("bad hunk range %q", s)
	}
	count := 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, fmt.Errorf("bad hunk range %q", s)
		}
	}
	return start, count, nil
}

// parsePatch reads the file patches of a unified diff.
func parsePatch(text string, strip int) ([]*filePatch, error) {
	lines := splitLines(text)
	var out []*filePatch
	var cur *filePatch
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\n")
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur = &filePatch{}
			out = append(out, cur)
			if f := strings.Fields(l); len(f) == 4 {
				cur.oldName, cur.newName = stripPath(f[2], strip), stripPath(f[3], strip)
			}
		case cur != nil && strings.HasPrefix(l, "new file mode "):
			cur.isNew, cur.oldName = true, ""
			cur.newMode = parseMode(strings.TrimPrefix(l, "new file mode "))
		case cur != nil && strings.HasPrefix(l, "deleted file mode "):
			cur.isDelete, cur.newName = true, ""
		case cur != nil && strings.HasPrefix(l, "new mode "):
			cur.newMode = parseMode(strings.TrimPrefix(l, "new mode "))
		case cur != nil && (strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch"):
			cur.binary = true
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			traditional := cur == nil || len(cur.hunks) > 0
			if traditional {
				cur = &filePatch{}
				out = append(out, cur)
			}
			cur.oldName = stripPath(l[4:], strip)
			cur.newName = stripPath(strings.TrimRight(lines[i+1], "\n")[4:], strip)
			cur.isNew = cur.isNew || cur.oldName == ""
			cur.isDelete = cur.isDelete || cur.newName == ""
			if traditional && !cur.isNew && !cur.isDelete {
				// One name for both sides: the new one, unless the old
				// is a prefix of it ("f" of "f.orig" is taken, as git
				// prefers the shorter).
				name := cur.newName
				if len(cur.oldName) < len(name) && strings.HasPrefix(name, cur.oldName) {
					name = cur.oldName
				}
				cur.oldName, cur.newName = name, name
			}
			i++
		case cur != nil && strings.HasPrefix(l, "@@ -"):
			f := strings.Fields(l)
			if len(f) < 4 || !strings.HasPrefix(f[2], "+") || f[3] != "@@" {
				return nil, fatalf("corrupt patch at line %d", i+1)
			}
			h := applyHunk{}
			var err error
			if h.oldStart, h.oldCount, err = parseHunkRange(f[1][1:]); err != nil {
				return nil, fatalf("corrupt patch at line %d", i+1)
			}
			if h.newStart, h.newCount, err = parseHunkRange(f[2][1:]); err != nil {
				return nil, fatalf("corrupt patch at line %d", i+1)
			}
			oldLeft, newLeft := h.oldCount, h.newCount
			for (oldLeft > 0 || newLeft > 0) && i+1 < len(lines) {
				i++
				b := lines[i]
				if b == "\n" {
					b = " \n" // an empty context line some tools write
				}
				switch b[0] {
				case ' ':
					oldLeft--
					newLeft--
				case '-':
					oldLeft--
				case '+':
					newLeft--
				case '\\':
					trimLastNewline(h.lines)
					continue
				default:
					return nil, fatalf("corrupt patch at line %d", i+1)
				}
				h.lines = append(h.lines, b)
			}
			if oldLeft != 0 || newLeft != 0 {
				return nil, fatalf("corrupt patch at line %d", i+1)
			}
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\") {
				trimLastNewline(h.lines)
				i++
			}
			cur.hunks = append(cur.hunks, h)
		}
	}
	var valid []*filePatch
	for _, p := range out {
		renamed := p.oldName != "" && p.newName != "" && p.oldName != p.newName
		if p.name() != "" && (len(p.hunks) > 0 || p.isNew || p.isDelete || p.newMode != 0 || p.binary || renamed) {
			valid = append(valid, p)
		}
	}
	return valid, nil
}

func trimLastNewline(ls []string) {
	if n := len(ls); n > 0 {
		ls[n-1] = strings.TrimSuffix(ls[n-1], "\n")
	}
}

func parseMode(s string) filemode.FileMode {
	m, err := filemode.New(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return m
}

// reversed is the patch that undoes p.
func (p *filePatch) reversed() *filePatch {
	r := &filePatch{oldName: p.newName, newName: p.oldName, isNew: p.isDelete, isDelete: p.isNew, binary: p.binary}
	for _, h := range p.hunks {
		rh := applyHunk{oldStart: h.newStart, oldCount: h.newCount, newStart: h.oldStart, newCount: h.oldCount}
		for _, l := range h.lines {
			switch l[0] {
			case '-':
				l = "+" + l[1:]
			case '+':
				l = "-" + l[1:]
			}
			rh.lines = append(rh.lines, l)
		}
		r.hunks = append(r.hunks, rh)
	}
	return r
}

// applyHunks applies p's hunks to old; it fails with the failing hunk's
// old start line.
func applyHunks(old string, hunks []applyHunk) (string, int, bool) {
	img := splitLines(old)
	for _, h := range hunks {
		var pre, post []string
		leading, trailing, seenChange := 0, 0, false
		for _, l := range h.lines {
			body := l[1:]
			switch l[0] {
			case ' ':
				pre = append(pre, body)
				post = append(post, body)
				if seenChange {
					trailing++
				} else {
					leading++
				}
			case '-':
				pre = append(pre, body)
				seenChange, trailing = true, 0
			case '+':
				post = append(post, body)
				seenChange, trailing = true, 0
			}
		}
		matchBeginning := h.oldStart == 0 || h.oldStart == 1
		matchEnd := trailing == 0
		pos := 0
		if h.newStart > 0 {
			pos = h.newStart - 1
		}
		switch {
		case matchBeginning:
			pos = 0
		case matchEnd:
			pos = len(img) - len(pre)
		}
		at := findHunk(img, pre, pos, matchBeginning, matchEnd)
		if at < 0 {
			return "", h.oldStart, false
		}
		next := make([]string, 0, len(img)-len(pre)+len(post))
		next = append(next, img[:at]...)
		next = append(next, post...)
		next = append(next, img[at+len(pre):]...)
		img = next
	}
	return strings.Join(img, ""), 0, true
}

// findHunk finds pre in img trying pos, pos+1, pos-1, pos+2, ... as git
// does; -1 when it is nowhere.
func findHunk(img, pre []string, pos int, beginning, end bool) int {
	matches := func(at int) bool {
		if at < 0 || at+len(pre) > len(img) || beginning && at != 0 || end && at+len(pre) != len(img) {
			return false
		}
		for i, l := range pre {
			if img[at+i] != l {
				return false
			}
		}
		return true
	}
	if pos > len(img) {
		pos = len(img)
	}
	if pos < 0 {
		pos = 0
	}
	for back, fwd := pos, pos; ; {
		if matches(fwd) {
			return fwd
		}
		if back != fwd && matches(back) {
			return back
		}
		if back <= 0 && fwd >= len(img) {
			return -1
		}
		if fwd < len(img) {
			fwd++
		}
		if back > 0 {
			back--
		}
	}
}

// cmdApply: git apply [--check] [--stat] [--numstat] [--cached|--index] [-R] [-p N] [PATCH...].
func cmdApply(e *env, args []string) error {
	check, stat, numstat, cached, useIndex, reverse, doApply := false, false, false, false, false, false, false
	strip := 1
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--check":
			check = true
		case a == "--stat":
			stat = true
		case a == "--numstat":
			numstat = true
		case a == "--apply":
			doApply = true
		case a == "--cached":
			cached = true
		case a == "--index":
			useIndex = true
		case a == "-R" || a == "--reverse":
			reverse = true
		case a == "-p" && i+1 < len(args):
			i++
			a = "-p" + args[i]
			fallthrough
		case strings.HasPrefix(a, "-p") && len(a) > 2:
			n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(a, "-p"), "="))
			if err != nil || n < 0 {
				return usagef("error: option `p' expects a numerical value")
			}
			strip = n
		case a == "-v" || a == "--verbose" || a == "-q" || a == "--quiet":
		case a == "-" || !strings.HasPrefix(a, "-"):
			files = append(files, a)
		default:
			return usagef("error: unknown option `%s'\nusage: git apply [--check] [--stat] [--cached|--index] [-R] [-p<n>] [<patch>...]", strings.TrimLeft(a, "-"))
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	var patches []*filePatch
	for _, f := range files {
		text, err := readPatch(f)
		if err != nil {
			return err
		}
		ps, err := parsePatch(text, strip)
		if err != nil {
			return err
		}
		patches = append(patches, ps...)
	}
	if len(patches) == 0 {
		return &exitError{code: 128, msg: "error: No valid patches in input (allow with \"--allow-empty\")"}
	}
	if reverse {
		for i, p := range patches {
			patches[i] = p.reversed()
		}
	}
	if stat || numstat {
		writeApplyStat(e, patches, numstat)
		if !doApply && !check {
			return nil
		}
	}
	var rp *repo
	needRepo := cached || useIndex
	rp, err := openRepo()
	if err != nil {
		if needRepo {
			return err
		}
		rp = nil
	}
	return applyPatches(e, rp, patches, check, cached, useIndex)
}

func readPatch(name string) (string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", &exitError{code: 128, msg: fmt.Sprintf("error: can't open patch '%s': %s", name, errText(err))}
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPatch+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxPatch {
		return "", fatalf("patch too large (over %d bytes)", maxPatch)
	}
	return string(b), nil
}

// writeApplyStat is git apply's --stat (or --numstat).
func writeApplyStat(e *env, patches []*filePatch, numstat bool) {
	maxLen, maxChange := 0, 0
	type counts struct{ add, del int }
	var cs []counts
	for _, p := range patches {
		c := counts{}
		for _, h := range p.hunks {
			for _, l := range h.lines {
				switch l[0] {
				case '+':
					c.add++
				case '-':
					c.del++
				}
			}
		}
		cs = append(cs, c)
		maxLen = max(maxLen, len(p.name()))
		maxChange = max(maxChange, c.add+c.del)
	}
	if numstat {
		for i, p := range patches {
			if p.binary {
				fmt.Fprintf(e.stdout, "-\t-\t%s\n", p.name())
				continue
			}
			fmt.Fprintf(e.stdout, "%d\t%d\t%s\n", cs[i].add, cs[i].del, p.name())
		}
		return
	}
	width := min(maxLen, 50)
	adds, dels := 0, 0
	for i, p := range patches {
		name := p.name()
		if len(name) > width {
			cut := len(name) + 3 - width
			if j := strings.IndexByte(name[cut:], '/'); j >= 0 {
				cut += j
			}
			name = "..." + name[cut:]
		}
		if p.binary {
			fmt.Fprintf(e.stdout, " %-*s |  Bin\n", width, name)
			continue
		}
		graph := maxChange
		if width+maxChange > 70 {
			graph = 70 - width
		}
		add, del := cs[i].add, cs[i].del
		if maxChange > 0 {
			total := ((add+del)*graph + maxChange/2) / maxChange
			add = (add*graph + maxChange/2) / maxChange
			del = total - add
		}
		adds += cs[i].add
		dels += cs[i].del
		fmt.Fprintf(e.stdout, " %-*s |%5d %s%s\n", width, name, cs[i].add+cs[i].del, strings.Repeat("+", add), strings.Repeat("-", del))
	}
	writeStatTotals(e.stdout, len(patches), adds, dels)
}

// applied is one file's outcome, written once every patch applies.
type applied struct {
	path    string
	data    []byte
	mode    filemode.FileMode
	deleted bool
}

// applyPatches checks every patch and, if all apply, writes them.
func applyPatches(e *env, rp *repo, patches []*filePatch, check, cached, useIndex bool) error {
	var idx snapshot
	if cached || useIndex {
		var err error
		if idx, err = indexSnapshot(rp); err != nil {
			return err
		}
	}
	root := ""
	if rp != nil {
		root = rp.root
	}
	// A path relative to the current directory outside a repository, to
	// the worktree root inside one (as git's patches name files).
	full := func(p string) string {
		if root == "" {
			return filepath.FromSlash(p)
		}
		return filepath.Join(root, filepath.FromSlash(p))
	}
	var results []applied
	var errs []string
	// Later patches to the same file see the earlier ones' result.
	pending := map[string]applied{}
	for _, p := range patches {
		name := p.name()
		if p.binary {
			errs = append(errs, fmt.Sprintf("error: cannot apply binary patch to '%s' without full index line\nerror: %s: patch does not apply", name, name))
			continue
		}
		var old []byte
		mode := filemode.Regular
		exists := false
		src := p.oldName
		if p.isNew {
			src = p.newName
		}
		if prev, ok := pending[src]; ok {
			exists, old, mode = !prev.deleted, prev.data, prev.mode
		} else if cached || useIndex {
			if ie, ok := idx[src]; ok {
				data, err := ie.load()
				if err != nil {
					return err
				}
				exists, old, mode = true, data, ie.mode
			}
			if useIndex && !(p.isNew && exists) {
				data, err := os.ReadFile(full(src))
				if exists && (err != nil || string(data) != string(old)) {
					errs = append(errs, fmt.Sprintf("error: %s: does not match index", src))
					continue
				}
				if !exists && err == nil && p.isNew {
					errs = append(errs, fmt.Sprintf("error: %s: already exists in working directory", src))
					continue
				}
			}
		} else if data, err := os.ReadFile(full(src)); err == nil {
			exists, old = true, data
			if fi, err := os.Stat(full(src)); err == nil && fi.Mode()&0o111 != 0 {
				mode = filemode.Executable
			}
		}
		switch {
		case p.isNew && exists:
			where := "working directory"
			if cached || useIndex {
				where = "index"
			}
			errs = append(errs, fmt.Sprintf("error: %s: already exists in %s", src, where))
			continue
		case !p.isNew && !exists:
			if cached || useIndex {
				errs = append(errs, fmt.Sprintf("error: %s: does not exist in index", src))
			} else {
				errs = append(errs, fmt.Sprintf("error: %s: No such file or directory", src))
			}
			continue
		}
		out, failed, ok := applyHunks(string(old), p.hunks)
		if !ok {
			errs = append(errs, fmt.Sprintf("error: patch failed: %s:%d\nerror: %s: patch does not apply", src, failed, src))
			continue
		}
		if p.newMode != 0 {
			mode = p.newMode
		}
		a := applied{path: p.name(), data: []byte(out), mode: mode, deleted: p.isDelete}
		if p.isDelete && out != "" {
			errs = append(errs, fmt.Sprintf("error: removal patch leaves file contents\nerror: %s: patch does not apply", src))
			continue
		}
		if p.oldName != "" && p.newName != "" && p.oldName != p.newName {
			gone := applied{path: p.oldName, deleted: true}
			results = append(results, gone)
			pending[p.oldName] = gone
		}
		results = append(results, a)
		pending[a.path] = a
	}
	if len(errs) > 0 {
		return &exitError{code: 1, msg: strings.Join(errs, "\n")}
	}
	if check {
		return nil
	}
	if !cached {
		for _, a := range results {
			if a.deleted {
				if err := os.Remove(full(a.path)); err != nil && !os.IsNotExist(err) {
					return err
				}
				if rp != nil {
					removeEmptyDirs(rp.root, filepath.ToSlash(filepath.Dir(a.path)))
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(full(a.path)), 0o755); err != nil {
				return err
			}
			perm := os.FileMode(0o644)
			if a.mode == filemode.Executable {
				perm = 0o755
			}
			if err := os.WriteFile(full(a.path), a.data, perm); err != nil {
				return err
			}
			_ = os.Chmod(full(a.path), perm)
		}
	}
	if cached || useIndex {
		return writeAppliedIndex(rp, results, useIndex)
	}
	return nil
}

// writeAppliedIndex records applied files in the index.
func writeAppliedIndex(rp *repo, results []applied, withStat bool) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	byName := map[string]*index.Entry{}
	for _, e := range idx.Entries {
		byName[e.Name] = e
	}
	for _, a := range results {
		if a.deleted {
			delete(byName, a.path)
			continue
		}
		h, err := writeBlob(rp, a.data)
		if err != nil {
			return err
		}
		ent := entry{hash: h, mode: a.mode}
		if withStat {
			byName[a.path] = statEntry(rp, a.path, ent)
		} else {
			byName[a.path] = &index.Entry{Name: a.path, Hash: h, Mode: a.mode, Size: uint32(len(a.data))}
		}
	}
	idx.Entries = idx.Entries[:0]
	for _, e := range byName {
		idx.Entries = append(idx.Entries, e)
	}
	sortIndex(idx)
	return rp.r.Storer.SetIndex(idx)
}
