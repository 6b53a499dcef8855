package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// detectRenames pairs each deleted file with an added file of the same
// content into one rename, as git's default rename detection does for
// exact renames (similarity 100%). Renames with changes stay a deletion
// and an addition: git's similarity scoring is not reproduced.
func detectRenames(changes []fileChange) []fileChange {
	var deleted []int
	for i, c := range changes {
		if c.to == nil {
			deleted = append(deleted, i)
		}
	}
	if len(deleted) == 0 {
		return changes
	}
	used := map[int]bool{}
	var out []fileChange
	for i, c := range changes {
		if c.from != nil || c.to == nil {
			continue
		}
		for _, d := range deleted {
			if used[d] {
				continue
			}
			if changes[d].from.hash == c.to.hash && isLink(changes[d].from) == isLink(c.to) {
				used[d], used[i] = true, true
				out = append(out, fileChange{path: c.path, oldPath: changes[d].path, from: changes[d].from, to: c.to})
				break
			}
		}
	}
	if len(out) == 0 {
		return changes
	}
	for i, c := range changes {
		if !used[i] {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b fileChange) int { return strings.Compare(a.path, b.path) })
	return out
}

func isLink(e *entry) bool { return e.mode == 0o120000 }

// writeRenamePatch is a rename's header (with no hunks: the content is
// the same).
func writeRenamePatch(w io.Writer, c fileChange) error {
	fmt.Fprintf(w, "diff --git %s %s\n", quotePath("a/"+c.oldPath), quotePath("b/"+c.path))
	if c.from.mode != c.to.mode {
		fmt.Fprintf(w, "old mode %o\nnew mode %o\n", c.from.mode, c.to.mode)
	}
	fmt.Fprintf(w, "similarity index 100%%\nrename from %s\nrename to %s\n", quotePath(c.oldPath), quotePath(c.path))
	return nil
}

// renameName is git's compact "a => b" name of a rename in a stat, with
// the common leading directories and trailing path outside braces:
// "{d => f}/x", "src/{a.go => b.go}".
func renameName(a, b string) string {
	if needsQuote(a) || needsQuote(b) {
		return quotePath(a) + " => " + quotePath(b)
	}
	pfx := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			pfx = i + 1
		}
	}
	at := func(s string, i int) byte {
		if i >= len(s) {
			return 0
		}
		return s[i]
	}
	adjust := 0
	if pfx > 0 {
		adjust = 1
	}
	sfx := 0
	for i, j := len(a), len(b); i >= pfx-adjust && j >= pfx-adjust && at(a, i) == at(b, j); i, j = i-1, j-1 {
		if at(a, i) == '/' {
			sfx = len(a) - i
		}
	}
	aMid := max(len(a)-pfx-sfx, 0)
	bMid := max(len(b)-pfx-sfx, 0)
	if pfx+sfx == 0 {
		return a[pfx:pfx+aMid] + " => " + b[pfx:pfx+bMid]
	}
	return a[:pfx] + "{" + a[pfx:pfx+aMid] + " => " + b[pfx:pfx+bMid] + "}" + a[len(a)-sfx:]
}

// needsQuote says whether git (core.quotePath, on by default) prints a
// path C-quoted: it has a control character, a byte outside ASCII, a
// double quote or a backslash.
func needsQuote(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return true
		}
	}
	return false
}

// quotePath is a path as git prints it: as it is, or in double quotes
// with C escapes and octal for bytes outside ASCII.
func quotePath(p string) string {
	if !needsQuote(p) {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
