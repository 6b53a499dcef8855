package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v6/plumbing/format/index"
)

// git diff shows a conflicted path as a combined diff ("diff --cc") of
// the worktree file against our and their versions. This file ports the
// parts of git's combine-diff.c that take: a diff against each parent,
// lost lines shared by both parents coalesced, hunks where the result
// just took one side left out (--cc is "dense"), three lines of
// context.

// maxCoalesce bounds the LCS table of lost lines (cells).
const maxCoalesce = 1 << 22

// lostLine is a parent's line the result does not have.
type lostLine struct {
	line      string // without its newline
	parentMap uint
}

// sLine is one line of the result, with the lines lost before it.
type sLine struct {
	line        string // without its newline
	flag        uint
	lost, plost []lostLine
	pLno        [2]int
}

// unmergedStages reads the conflicted paths' stages 1-3 from the index.
func unmergedStages(rp *repo) (map[string]stages, error) {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return nil, err
	}
	out := map[string]stages{}
	for _, e := range idx.Entries {
		if e.Stage < index.AncestorMode || e.Stage > index.TheirMode {
			continue
		}
		st := out[e.Name]
		st[e.Stage-1] = &entry{hash: e.Hash, mode: e.Mode, load: blobLoader(rp, e.Hash)}
		out[e.Name] = st
	}
	return out, nil
}

// writeWorktreeDiff writes git diff's output for changes (worktree
// against index) with the conflicted paths as combined diffs, in path
// order; false when there is no conflict (the caller writes changes).
func writeWorktreeDiff(w io.Writer, rp *repo, changes []fileChange, keep func(string) bool) (bool, error) {
	un, err := unmergedStages(rp)
	if err != nil || len(un) == 0 {
		return false, err
	}
	var names []string
	byPath := map[string]fileChange{}
	for _, c := range changes {
		if _, ok := un[c.path]; !ok {
			names = append(names, c.path)
			byPath[c.path] = c
		}
	}
	for p := range un {
		if keep(p) {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	// git writes the combined diffs as it meets them, and queues the
	// other paths (a conflict missing a side is "* Unmerged path") to
	// write after them.
	var rest []string
	for _, p := range names {
		if _, ok := byPath[p]; ok {
			rest = append(rest, p)
			continue
		}
		if st := un[p]; st[1] == nil || st[2] == nil {
			rest = append(rest, p)
			continue
		}
		if err := writeCombined(w, rp, p, un[p]); err != nil {
			return true, err
		}
	}
	for _, p := range rest {
		if c, ok := byPath[p]; ok {
			if err := writePatch(w, c); err != nil {
				return true, err
			}
			continue
		}
		fmt.Fprintf(w, "* Unmerged path %s\n", p)
	}
	return true, nil
}

// writeCombined writes one conflicted path's "diff --cc".
func writeCombined(w io.Writer, rp *repo, p string, st stages) error {
	ours, theirs := st[1], st[2]
	data, err := os.ReadFile(filepath.Join(rp.root, filepath.FromSlash(p)))
	if ours == nil || theirs == nil || err != nil || len(data) > maxBlob {
		fmt.Fprintf(w, "* Unmerged path %s\n", p)
		return nil
	}
	var parents [2][]string
	for i, e := range []*entry{ours, theirs} {
		b, err := e.load()
		if err != nil {
			return err
		}
		parents[i] = splitLines(string(b))
	}
	result := splitLines(string(data))
	fmt.Fprintf(w, "diff --cc %s\nindex %s,%s..%s\n--- a/%s\n+++ b/%s\n", p, short(ours.hash), short(theirs.hash), zeroShort, p, p)
	if isBinary(data) {
		return nil
	}
	cnt := len(result)
	sl := make([]sLine, cnt+2)
	for i, l := range result {
		sl[i].line = strings.TrimSuffix(l, "\n")
	}
	for n := range parents {
		combineParent(sl, cnt, parents[n], result, n)
	}
	if !makeHunks(sl, cnt, 2) {
		return nil
	}
	dumpSlines(w, sl, cnt, 2)
	return nil
}

// combineParent is combine_diff for parent n: the result's lines it
// lacks are flagged, its lines the result lacks are lost lines hung
// before the result line they precede.
func combineParent(sl []sLine, cnt int, parent, result []string, n int) {
	mask := uint(1) << n
	for _, h := range xdiffHunksOpt(parent, result, false, true) {
		bucket := h.i2
		for _, l := range parent[h.i1 : h.i1+h.chg1] {
			sl[bucket].plost = append(sl[bucket].plost, lostLine{line: strings.TrimSuffix(l, "\n"), parentMap: mask})
		}
		for k := h.i2; k < h.i2+h.chg2; k++ {
			sl[k].flag |= mask
		}
	}
	pLno := 1
	for lno := 0; lno <= cnt; lno++ {
		sl[lno].pLno[n] = pLno
		if len(sl[lno].plost) > 0 {
			sl[lno].lost = coalesceLines(sl[lno].lost, sl[lno].plost, n)
			sl[lno].plost = nil
		}
		for _, ll := range sl[lno].lost {
			if ll.parentMap&mask != 0 {
				pLno++
			}
		}
		if lno < cnt && sl[lno].flag&mask == 0 {
			pLno++
		}
	}
	sl[cnt+1].pLno[n] = pLno
}

// coalesceLines merges parent n's lost lines into those already there
// along their longest common subsequence, as git does.
func coalesceLines(base, newl []lostLine, parent int) []lostLine {
	if len(newl) == 0 {
		return base
	}
	if len(base) == 0 {
		return newl
	}
	if len(base)*len(newl) > maxCoalesce {
		// Too big a table to build: the lines are listed, not shared.
		return append(base, newl...)
	}
	const (
		dirBase = iota
		dirNew
		dirMatch
	)
	lcs := make([][]int, len(base)+1)
	dir := make([][]int, len(base)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(newl)+1)
		dir[i] = make([]int, len(newl)+1)
		dir[i][0] = dirBase
	}
	for j := 1; j <= len(newl); j++ {
		dir[0][j] = dirNew
	}
	for i := 1; i <= len(base); i++ {
		for j := 1; j <= len(newl); j++ {
			switch {
			case base[i-1].line == newl[j-1].line:
				lcs[i][j] = lcs[i-1][j-1] + 1
				dir[i][j] = dirMatch
			case lcs[i][j-1] >= lcs[i-1][j]:
				lcs[i][j] = lcs[i][j-1]
				dir[i][j] = dirNew
			default:
				lcs[i][j] = lcs[i-1][j]
				dir[i][j] = dirBase
			}
		}
	}
	// Walk back, building the merged list from its end.
	var rev []lostLine
	i, j := len(base), len(newl)
	for i != 0 || j != 0 {
		switch dir[i][j] {
		case dirMatch:
			b := base[i-1]
			b.parentMap |= 1 << parent
			rev = append(rev, b)
			i--
			j--
		case dirNew:
			rev = append(rev, newl[j-1])
			j--
		default:
			rev = append(rev, base[i-1])
			i--
		}
	}
	slices.Reverse(rev)
	return rev
}

func interestingSline(s *sLine, allMask uint) bool { return s.flag&allMask != 0 || len(s.lost) > 0 }

// adjustHunkTail drops a last line interesting only for lost lines.
func adjustHunkTail(sl []sLine, allMask uint, hunkBegin, i int) int {
	if hunkBegin+1 <= i && sl[i-1].flag&allMask == 0 {
		i--
	}
	return i
}

func findNext(sl []sLine, mark uint, i, cnt int, uninteresting bool) int {
	for i <= cnt {
		if (sl[i].flag&mark == 0) == uninteresting {
			return i
		}
		i++
	}
	return i
}

// makeHunks is make_hunks for --cc; false when nothing is shown.
func makeHunks(sl []sLine, cnt, numParent int) bool {
	allMask := uint(1)<<numParent - 1
	mark := uint(1) << numParent
	for i := 0; i <= cnt; i++ {
		if interestingSline(&sl[i], allMask) {
			sl[i].flag |= mark
		} else {
			sl[i].flag &^= mark
		}
	}
	for i := 0; i <= cnt; {
		for i <= cnt && sl[i].flag&mark == 0 {
			i++
		}
		if cnt < i {
			break
		}
		hunkBegin := i
		j := i + 1
		for ; j <= cnt; j++ {
			if sl[j].flag&mark != 0 {
				continue
			}
			la := adjustHunkTail(sl, allMask, hunkBegin, j)
			la = min(la+context, cnt+1)
			contin := false
			for la > 0 {
				la--
				if la < j {
					break
				}
				if sl[la].flag&mark != 0 {
					contin = true
					break
				}
			}
			if !contin {
				break
			}
			j = la
		}
		hunkEnd := j
		// A hunk where the result took one side's lines is not shown.
		var sameDiff uint
		interesting := false
		for k := i; k < hunkEnd && !interesting; k++ {
			if this := sl[k].flag & allMask; this != 0 {
				if sameDiff == 0 {
					sameDiff = this
				} else if sameDiff != this {
					interesting = true
					break
				}
			}
			for _, ll := range sl[k].lost {
				if interesting {
					break
				}
				// Lost from these parents: the result differs from them.
				this := ll.parentMap
				if sameDiff == 0 {
					sameDiff = this
				} else if sameDiff != this {
					interesting = true
				}
			}
		}
		if !interesting && sameDiff != allMask {
			for k := hunkBegin; k < hunkEnd; k++ {
				sl[k].flag &^= mark
			}
		}
		i = hunkEnd
	}
	return giveContext(sl, cnt, numParent)
}

// giveContext paints context lines around the interesting ones.
func giveContext(sl []sLine, cnt, numParent int) bool {
	allMask := uint(1)<<numParent - 1
	mark := uint(1) << numParent
	noPreDelete := uint(2) << numParent
	i := findNext(sl, mark, 0, cnt, false)
	if cnt < i {
		return false
	}
	for i <= cnt {
		j := max(i-context, 0)
		for ; j < i; j++ {
			if sl[j].flag&mark == 0 {
				sl[j].flag |= noPreDelete
			}
			sl[j].flag |= mark
		}
		for {
			j = findNext(sl, mark, i, cnt, true)
			if cnt < j {
				return true
			}
			k := findNext(sl, mark, j, cnt, false)
			j = adjustHunkTail(sl, allMask, i, j)
			if k < j+context {
				for ; j < k; j++ {
					sl[j].flag |= mark
				}
				i = k
				continue
			}
			i = k
			end := min(j+context, cnt+1)
			for ; j < end; j++ {
				sl[j].flag |= mark
			}
			break
		}
	}
	return true
}

// hunkCommentLine is git's test for a line to name a combined hunk by.
func hunkCommentLine(l string) bool {
	if l == "" {
		return false
	}
	c := l[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

// dumpSlines is dump_sline: the hunks with their "@@@" headers.
func dumpSlines(w io.Writer, sl []sLine, cnt, numParent int) {
	mark := uint(1) << numParent
	noPreDelete := uint(2) << numParent
	lno := 0
	for {
		comment := ""
		for lno <= cnt && sl[lno].flag&mark == 0 {
			if lno < cnt && hunkCommentLine(sl[lno].line) {
				comment = sl[lno].line
			}
			lno++
		}
		if cnt < lno {
			return
		}
		hunkEnd := lno + 1
		for hunkEnd <= cnt && sl[hunkEnd].flag&mark != 0 {
			hunkEnd++
		}
		rlines := hunkEnd - lno
		if cnt < hunkEnd {
			rlines--
		}
		var hdr strings.Builder
		hdr.WriteString("@@@")
		for n := 0; n < numParent; n++ {
			fmt.Fprintf(&hdr, " -%d,%d", sl[lno].pLno[n], sl[hunkEnd].pLno[n]-sl[lno].pLno[n])
		}
		fmt.Fprintf(&hdr, " +%d,%d @@@", lno+1, rlines)
		if comment != "" {
			// git prints the name up to, not including, its last
			// non-blank character among the first 40.
			end := 0
			for i := 0; i < 40 && i < len(comment); i++ {
				if c := comment[i]; c != ' ' && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' {
					end = i
				}
			}
			if end > 0 {
				hdr.WriteString(" " + comment[:end])
			}
		}
		fmt.Fprintln(w, hdr.String())
		for lno < hunkEnd {
			s := &sl[lno]
			lno++
			if s.flag&noPreDelete == 0 {
				for _, ll := range s.lost {
					var b strings.Builder
					for n := 0; n < numParent; n++ {
						if ll.parentMap&(1<<n) != 0 {
							b.WriteByte('-')
						} else {
							b.WriteByte(' ')
						}
					}
					fmt.Fprintf(w, "%s%s\n", b.String(), ll.line)
				}
			}
			if cnt < lno {
				break
			}
			var b strings.Builder
			for n := 0; n < numParent; n++ {
				if s.flag&(1<<n) != 0 {
					b.WriteByte('+')
				} else {
					b.WriteByte(' ')
				}
			}
			fmt.Fprintf(w, "%s%s\n", b.String(), s.line)
		}
	}
}
