package main

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// Rename scores are out of maxScore, git's MAX_SCORE; a pair is a
// rename from minScore (50%), git's default.
const (
	maxScore = 60000
	minScore = 30000
	// candidatesPerDst is how many sources git keeps per destination.
	candidatesPerDst = 4
	// maxRenamePairs bounds the similarity estimates of one diff, as
	// git's rename limit does.
	maxRenamePairs = 1000 * 1000
)

// detectRenames pairs deleted and added files into renames as git's
// default rename detection does: identical content first, then by git's
// similarity estimate (the bytes of the new file that come from the old
// one, counted over line chunks), 50% or more, best pairs first.
func detectRenames(changes []fileChange) []fileChange {
	var srcs, dsts []int
	for i, c := range changes {
		switch {
		case c.unmerged:
		case c.to == nil:
			srcs = append(srcs, i)
		case c.from == nil:
			dsts = append(dsts, i)
		}
	}
	if len(srcs) == 0 || len(dsts) == 0 {
		return changes
	}
	used := map[int]bool{}
	var out []fileChange
	// Exact renames; of several sources with the content, git takes
	// one with the same base name.
	for _, i := range dsts {
		c := changes[i]
		best := -1
		for _, d := range srcs {
			if used[d] || changes[d].from.hash != c.to.hash || isLink(changes[d].from) != isLink(c.to) {
				continue
			}
			if best < 0 || sameBase(changes[d].path, c.path) > sameBase(changes[best].path, c.path) {
				best = d
			}
		}
		if best >= 0 {
			used[best], used[i] = true, true
			out = append(out, fileChange{path: c.path, oldPath: changes[best].path, from: changes[best].from, to: c.to, score: maxScore})
		}
	}
	out = append(out, inexactRenames(changes, srcs, dsts, used)...)
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

// rename is one detected rename, as the tree merge looks them up.
type rename struct {
	from, to string
	score    int
}

// renamesBetween is the renames from snapshot a to b, sorted by
// destination.
func renamesBetween(a, b snapshot) []rename {
	var out []rename
	for _, c := range detectRenames(compare(a, b)) {
		if c.oldPath != "" {
			out = append(out, rename{from: c.oldPath, to: c.path, score: c.score})
		}
	}
	return out
}

// candidate is one possible rename: source and destination indexes into
// the changes, the similarity, and whether the base names agree.
type candidate struct {
	src, dst  int
	score     int
	nameScore int
}

// better is git's score_compare: a negative result puts a first.
func better(a, b candidate) int {
	switch {
	case a.dst < 0:
		if b.dst >= 0 {
			return 1
		}
		return 0
	case b.dst < 0:
		return -1
	case a.score == b.score:
		return b.nameScore - a.nameScore
	}
	return b.score - a.score
}

func inexactRenames(changes []fileChange, srcs, dsts []int, used map[int]bool) []fileChange {
	var freeSrc, freeDst []int
	for _, i := range srcs {
		if !used[i] && changes[i].from.mode.IsRegular() {
			freeSrc = append(freeSrc, i)
		}
	}
	for _, i := range dsts {
		if !used[i] && changes[i].to.mode.IsRegular() {
			freeDst = append(freeDst, i)
		}
	}
	if len(freeSrc) == 0 || len(freeDst) == 0 || len(freeSrc)*len(freeDst) > maxRenamePairs {
		return nil
	}
	load := func(e *entry) []byte {
		b, err := e.load()
		if err != nil {
			return nil
		}
		return b
	}
	spans := map[int]map[uint32]int{}
	spansOf := func(i int, e *entry) (map[uint32]int, int) {
		data := load(e)
		if _, ok := spans[i]; !ok {
			spans[i] = hashChunks(data, !isBinary(data))
		}
		return spans[i], len(data)
	}
	var all []candidate
	for _, d := range freeDst {
		best := make([]candidate, candidatesPerDst)
		for k := range best {
			best[k].dst = -1
		}
		for _, sIdx := range freeSrc {
			c := candidate{src: sIdx, dst: d, nameScore: sameBase(changes[sIdx].path, changes[d].path)}
			c.score = similarity(changes[sIdx].from, changes[d].to, func(e *entry, i int) (map[uint32]int, int) { return spansOf(i, e) }, sIdx, d)
			worst := 0
			for k := 1; k < len(best); k++ {
				if better(best[k], best[worst]) > 0 {
					worst = k
				}
			}
			if better(best[worst], c) > 0 {
				best[worst] = c
			}
		}
		all = append(all, best...)
	}
	slices.SortStableFunc(all, better)
	var out []fileChange
	for _, c := range all {
		if c.dst < 0 || c.score < minScore {
			break
		}
		if used[c.dst] || used[c.src] {
			continue
		}
		used[c.dst], used[c.src] = true, true
		out = append(out, fileChange{path: changes[c.dst].path, oldPath: changes[c.src].path, from: changes[c.src].from, to: changes[c.dst].to, score: c.score})
	}
	return out
}

func sameBase(a, b string) int {
	if path.Base(a) == path.Base(b) {
		return 1
	}
	return 0
}

// similarity is git's estimate_similarity of two regular files.
func similarity(src, dst *entry, spansOf func(*entry, int) (map[uint32]int, int), si, di int) int {
	s, sSize := spansOf(src, si)
	d, dSize := spansOf(dst, di)
	maxSize, baseSize := max(sSize, dSize), min(sSize, dSize)
	if maxSize*(maxScore-minScore) < (maxSize-baseSize)*maxScore {
		return 0
	}
	if dSize == 0 {
		return 0
	}
	copied := 0
	for h, n := range s {
		copied += min(n, d[h])
	}
	return int(int64(copied) * maxScore / int64(maxSize))
}

// hashChunks is git's hash_chars: the file cut after each newline or
// 64 bytes, each chunk's hash counting its bytes (a CR before a LF does
// not count in a text file).
func hashChunks(data []byte, text bool) map[uint32]int {
	const hashBase = 107927
	out := map[uint32]int{}
	var acc1, acc2 uint32
	n := 0
	for i := 0; i < len(data); i++ {
		c := uint32(data[i])
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue
		}
		old1 := acc1
		acc1 = (acc1 << 7) ^ (acc2 >> 25)
		acc2 = (acc2 << 7) ^ (old1 >> 25)
		acc1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		out[(acc1+acc2*0x61)%hashBase] += n
		n, acc1, acc2 = 0, 0, 0
	}
	if n > 0 {
		out[(acc1+acc2*0x61)%hashBase] += n
	}
	return out
}

func isLink(e *entry) bool { return e.mode == 0o120000 }

// writeRenamePatch is a rename's header, and the changes of an
// inexact one.
func writeRenamePatch(w io.Writer, c fileChange) error {
	fmt.Fprintf(w, "diff --git %s %s\n", quotePath(srcPrefix+c.oldPath), quotePath(dstPrefix+c.path))
	if c.from.mode != c.to.mode {
		fmt.Fprintf(w, "old mode %o\nnew mode %o\n", c.from.mode, c.to.mode)
	}
	fmt.Fprintf(w, "similarity index %d%%\nrename from %s\nrename to %s\n", c.score*100/maxScore, quotePath(c.oldPath), quotePath(c.path))
	if c.from.hash == c.to.hash {
		return nil
	}
	fmt.Fprintf(w, "index %s..%s", short(c.from.hash), short(c.to.hash))
	if c.from.mode == c.to.mode {
		fmt.Fprintf(w, " %o", c.to.mode)
	}
	fmt.Fprintln(w)
	a, err := c.from.load()
	if err != nil {
		return err
	}
	b, err := c.to.load()
	if err != nil {
		return err
	}
	oldName, newName := quotePath(srcPrefix+c.oldPath), quotePath(dstPrefix+c.path)
	if isBinary(a) || isBinary(b) {
		fmt.Fprintf(w, "Binary files %s and %s differ\n", oldName, newName)
		return nil
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", oldName, newName)
	writeHunks(w, lineOps(string(a), string(b)), splitLines(string(a)))
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
