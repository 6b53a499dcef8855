package main

import (
	"path"

	"github.com/go-git/go-git/v6/plumbing/filemode"
	"slices"
	"sort"
	"strings"
)

// Rename detection as git's diffcore-rename does it by default: a file
// deleted and one added form a rename when their contents are the same,
// or when at least half the added file's bytes come from the deleted
// one (git's span-hash similarity, diffcore-delta.c).

const (
	maxScore      = 60000
	minRenameScr  = 30000 // 50%, git's default
	spanHashBase  = 107927
	maxRenameSize = 8 << 20 // files larger than this are compared by hash only
	maxRenamePair = 1 << 20 // bounds the deleted × added comparisons
)

// spanCount is the bytes of content per span hash.
type spanCount struct {
	hash uint32
	cnt  int
}

// spanHashes is diffcore-delta's hash_chars: the content cut after each
// newline or every 64 bytes, each piece hashed, bytes summed per hash.
func spanHashes(buf []byte) []spanCount {
	text := !isBinary(buf)
	counts := map[uint32]int{}
	var accum1, accum2 uint32
	n := 0
	for i := 0; i < len(buf); i++ {
		c := uint32(buf[i])
		if text && c == '\r' && i+1 < len(buf) && buf[i+1] == '\n' {
			continue
		}
		old1 := accum1
		accum1 = (accum1 << 7) ^ (accum2 >> 25)
		accum2 = (accum2 << 7) ^ (old1 >> 25)
		accum1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		counts[(accum1+accum2*0x61)%spanHashBase] += n
		n, accum1, accum2 = 0, 0, 0
	}
	if n > 0 {
		counts[(accum1+accum2*0x61)%spanHashBase] += n
	}
	out := make([]spanCount, 0, len(counts))
	for h, c := range counts {
		out = append(out, spanCount{h, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].hash < out[j].hash })
	return out
}

// similarity is git's estimate_similarity of src renamed to dst, from
// 0 to maxScore.
func similarity(srcSize, dstSize int, srcSpans, dstSpans []spanCount) int {
	maxSize, baseSize := max(srcSize, dstSize), min(srcSize, dstSize)
	delta := maxSize - baseSize
	if maxSize*(maxScore-minRenameScr) < delta*maxScore {
		return 0
	}
	if dstSize == 0 || maxSize == 0 {
		return 0
	}
	copied := 0
	s := 0
	for _, d := range dstSpans {
		for s < len(srcSpans) && srcSpans[s].hash < d.hash {
			s++
		}
		srcCnt := 0
		if s < len(srcSpans) && srcSpans[s].hash == d.hash {
			srcCnt = srcSpans[s].cnt
			s++
		}
		copied += min(srcCnt, d.cnt)
	}
	return copied * maxScore / maxSize
}

// rename is one detected rename.
type rename struct {
	from, to string
	score    int
}

// detectRenames pairs the paths deleted from a with those added in b.
func detectRenames(a, b snapshot) ([]rename, error) {
	var deleted, added []string
	for p := range a {
		if _, ok := b[p]; !ok {
			deleted = append(deleted, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			added = append(added, p)
		}
	}
	if len(deleted) == 0 || len(added) == 0 {
		return nil, nil
	}
	slices.Sort(deleted)
	slices.Sort(added)
	var out []rename
	used := map[string]bool{}
	// Exact renames first; of several sources with the content, one
	// with the same base name is preferred.
	var rest []string
	for _, d := range added {
		var best string
		for _, s := range deleted {
			if used[s] || !a[s].hash.Equal(b[d].hash) || !sameKind(a[s], b[d]) {
				continue
			}
			if best == "" || path.Base(s) == path.Base(d) && path.Base(best) != path.Base(d) {
				best = s
			}
		}
		if best == "" {
			rest = append(rest, d)
			continue
		}
		used[best] = true
		out = append(out, rename{from: best, to: d, score: maxScore})
	}
	var srcs []string
	for _, s := range deleted {
		if !used[s] && isRegular(a[s].mode) {
			srcs = append(srcs, s)
		}
	}
	if len(srcs) == 0 || len(rest) == 0 || len(srcs)*len(rest) > maxRenamePair {
		return out, nil
	}
	type cand struct {
		src, dst   string
		score      int
		sameBase   bool
		srcI, dstI int
	}
	// Only sizes and span hashes are kept, not contents.
	load := func(e entry) (int, []spanCount, error) {
		data, err := e.load()
		if err != nil || len(data) > maxRenameSize {
			return 0, nil, err
		}
		return len(data), spanHashes(data), nil
	}
	srcSize := make([]int, len(srcs))
	srcSpans := make([][]spanCount, len(srcs))
	for i, s := range srcs {
		var err error
		if srcSize[i], srcSpans[i], err = load(a[s]); err != nil {
			return nil, err
		}
	}
	var cands []cand
	for j, d := range rest {
		if !isRegular(b[d].mode) {
			continue
		}
		size, spans, err := load(b[d])
		if err != nil {
			return nil, err
		}
		// git keeps the best few candidates per destination.
		var mine []cand
		for i, s := range srcs {
			sc := similarity(srcSize[i], size, srcSpans[i], spans)
			if sc < minRenameScr {
				continue
			}
			mine = append(mine, cand{src: s, dst: d, score: sc, sameBase: path.Base(s) == path.Base(d), srcI: i, dstI: j})
		}
		sort.SliceStable(mine, func(x, y int) bool { return mine[x].score > mine[y].score })
		if len(mine) > 4 {
			mine = mine[:4]
		}
		cands = append(cands, mine...)
	}
	sort.SliceStable(cands, func(x, y int) bool {
		if cands[x].score != cands[y].score {
			return cands[x].score > cands[y].score
		}
		if cands[x].sameBase != cands[y].sameBase {
			return cands[x].sameBase
		}
		if cands[x].dstI != cands[y].dstI {
			return cands[x].dstI < cands[y].dstI
		}
		return cands[x].srcI < cands[y].srcI
	})
	taken := map[string]bool{}
	for _, c := range cands {
		if used[c.src] || taken[c.dst] {
			continue
		}
		used[c.src], taken[c.dst] = true, true
		out = append(out, rename{from: c.src, to: c.dst, score: c.score})
	}
	slices.SortFunc(out, func(x, y rename) int { return strings.Compare(x.to, y.to) })
	return out, nil
}

// sameKind is whether two entries are both links or both not.
func sameKind(a, b entry) bool { return (a.mode == filemode.Symlink) == (b.mode == filemode.Symlink) }

// isRegular is S_ISREG for a tree entry's mode.
func isRegular(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
}

// renameName is git's pprint_rename: "dir/{a => b}" around what the two
// paths share.
func renameName(a, b string) string {
	pfx := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			pfx = i + 1
		}
	}
	sfx := 0
	adj := 0
	if pfx > 0 {
		adj = 1
	}
	for i, j := len(a)-1, len(b)-1; i >= pfx-adj && j >= pfx-adj && i >= 0 && j >= 0 && a[i] == b[j]; i, j = i-1, j-1 {
		if a[i] == '/' {
			sfx = len(a) - i
		}
	}
	amid, bmid := max(len(a)-pfx-sfx, 0), max(len(b)-pfx-sfx, 0)
	var sb strings.Builder
	if pfx+sfx > 0 {
		sb.WriteString(a[:pfx])
		sb.WriteByte('{')
	}
	sb.WriteString(a[pfx : pfx+amid])
	sb.WriteString(" => ")
	sb.WriteString(b[pfx : pfx+bmid])
	if pfx+sfx > 0 {
		sb.WriteByte('}')
		sb.WriteString(a[len(a)-sfx:])
	}
	return sb.String()
}
