package main

// This file is a port of the line diff git uses under its merges
// (xdiff's xdl_do_diff with the default flags, then xdl_change_compact
// and xdl_build_script): Myers' divide and conquer with xdiff's
// heuristics, its discarding of lines that cannot match, and its
// sliding of change groups. Where a change can be aligned more than one
// way, git's merge cuts its conflicts by this alignment, so the merge
// uses it rather than a diff that is merely correct.

const (
	xdlMaxEqLimit    = 1024
	xdlSimscanWindow = 100
	xdlKpdisRun      = 4
	xdlMaxCostMin    = 256
	xdlSnakeCnt      = 20
	xdlHeurMinCost   = 256
	xdlKHeur         = 4
	xdlLineMax       = int(^uint(0) >> 2)
)

// xdlBogosqrt is xdiff's integer square-root approximation.
func xdlBogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// xdfile is one side: its lines as class numbers, and which changed.
type xdfile struct {
	lines  []string
	ha     []int  // class of each line
	rchg   []bool // changed, with a false sentinel each side: rchg[i+1] is line i
	rindex []int  // lines kept for the Myers pass
	rha    []int  // their classes
}

func (f *xdfile) changed(i int) bool { return i >= -1 && i+1 < len(f.rchg) && f.rchg[i+1] }

func (f *xdfile) setChanged(i int, v bool) { f.rchg[i+1] = v }

// classify numbers the distinct lines of a then b in order of first
// appearance (xdiff's record classes) and counts each class per side.
func classify(a, b []string) (ha1, ha2, count1, count2 []int) {
	classes := map[string]int{}
	one := func(ls []string, counts *[]int) []int {
		ha := make([]int, len(ls))
		for i, l := range ls {
			c, ok := classes[l]
			if !ok {
				c = len(classes)
				classes[l] = c
				count1 = append(count1, 0)
				count2 = append(count2, 0)
			}
			(*counts)[c]++
			ha[i] = c
		}
		return ha
	}
	ha1 = one(a, &count1)
	ha2 = one(b, &count2)
	return ha1, ha2, count1, count2
}

// xdiffHunks diffs two line slices as git does: with the histogram
// algorithm (what git's "ort" merge uses) or Myers' (git's default
// elsewhere), then xdiff's compaction.
func xdiffHunks(a, b []string, histogram bool) []hunk { return xdiffHunksOpt(a, b, histogram, false) }

// xdiffHunksOpt is xdiffHunks with the choice of git's indent heuristic
// (on by default in git diff, off in merges).
func xdiffHunksOpt(a, b []string, histogram, indentHeuristic bool) []hunk {
	ha1, ha2, count1, count2 := classify(a, b)
	x1 := &xdfile{lines: a, ha: ha1, rchg: make([]bool, len(a)+2)}
	x2 := &xdfile{lines: b, ha: ha2, rchg: make([]bool, len(b)+2)}
	if histogram {
		h := &histDiff{x1: x1, x2: x2, a: a, b: b}
		h.diff(1, len(a), 1, len(b))
	} else {
		myersDiff(x1, x2, count1, count2)
	}
	xdlChangeCompact(x1, x2, indentHeuristic)
	xdlChangeCompact(x2, x1, indentHeuristic)
	return xdlBuildScript(x1, x2, len(a), len(b))
}

// myersRchg marks the lines of a and b Myers' diff finds changed.
func myersRchg(a, b []string) (r1, r2 []bool) {
	ha1, ha2, count1, count2 := classify(a, b)
	x1 := &xdfile{ha: ha1, rchg: make([]bool, len(a)+2)}
	x2 := &xdfile{ha: ha2, rchg: make([]bool, len(b)+2)}
	myersDiff(x1, x2, count1, count2)
	return x1.rchg[1 : len(a)+1], x2.rchg[1 : len(b)+1]
}

// myersDiff is xdl_do_diff's classic path: xdl_optimize_ctxs, then
// xdl_recs_cmp.
func myersDiff(x1, x2 *xdfile, count1, count2 []int) {
	n1, n2 := len(x1.ha), len(x2.ha)
	// xdl_trim_ends: common leading and trailing lines take no part.
	lim := min(n1, n2)
	start := 0
	for start < lim && x1.ha[start] == x2.ha[start] {
		start++
	}
	tail := 0
	for tail < lim-start && x1.ha[n1-1-tail] == x2.ha[n2-1-tail] {
		tail++
	}
	end1, end2 := n1-tail-1, n2-tail-1

	// xdl_cleanup_records: a line with no match on the other side is
	// changed outright; one with very many is left out of the search
	// when it sits among unmatched lines.
	cleanup := func(x *xdfile, n, end int, other []int) {
		mlim := min(xdlBogosqrt(n), xdlMaxEqLimit)
		dis := make([]byte, n+2)
		for i := start; i <= end; i++ {
			nm := other[x.ha[i]]
			switch {
			case nm == 0:
				dis[i] = 0
			case nm >= mlim:
				dis[i] = 2
			default:
				dis[i] = 1
			}
		}
		for i := start; i <= end; i++ {
			if dis[i] == 1 || dis[i] == 2 && !xdlCleanMmatch(dis, i, start, end) {
				x.rindex = append(x.rindex, i)
				x.rha = append(x.rha, x.ha[i])
			} else {
				x.setChanged(i, true)
			}
		}
	}
	cleanup(x1, n1, end1, count2)
	cleanup(x2, n2, end2, count1)

	ndiags := len(x1.rha) + len(x2.rha) + 3
	env := xdalgoenv{mxcost: max(xdlBogosqrt(ndiags), xdlMaxCostMin), snakeCnt: xdlSnakeCnt, heurMin: xdlHeurMinCost}
	off := len(x2.rha) + 1
	kvdf := make([]int, 2*ndiags+2)
	kvdb := make([]int, 2*ndiags+2)
	env.kvdf = func(d int) *int { return &kvdf[d+off] }
	env.kvdb = func(d int) *int { return &kvdb[d+off] }
	env.recsCmp(x1, 0, len(x1.rha), x2, 0, len(x2.rha), false)
}

// histDiff is xdiff's histogram diff (xhistogram.c) over 1-based line
// ranges.
type histDiff struct {
	x1, x2 *xdfile
	a, b   []string
}

// histRecord is one distinct line of the A range: its latest
// occurrence and how many there are.
type histRecord struct {
	ptr, cnt int
	next     *histRecord
}

type histIndex struct {
	records   []*histRecord
	lineMap   []*histRecord
	nextPtrs  []int
	tableBits uint
	ptrShift  int
	cnt       int
	hasCommon bool
}

const histMaxChain = 64

// xdlHashbits is the number of bits of a table for size entries.
func xdlHashbits(size int) uint {
	val, bits := 1, uint(0)
	for val < size && bits < 32 {
		val <<= 1
		bits++
	}
	if bits == 0 {
		return 1
	}
	return bits
}

func (h *histDiff) tableHash(idx *histIndex, side, line int) int {
	ha := h.x1.ha
	if side == 2 {
		ha = h.x2.ha
	}
	v := ha[line-1]
	return int((uint64(v) * 0x9e370001) >> (64 - idx.tableBits))
}

func (h *histDiff) cmp(s1, l1, s2, l2 int) bool {
	rec := func(s, l int) int {
		if s == 1 {
			return h.x1.ha[l-1]
		}
		return h.x2.ha[l-1]
	}
	return rec(s1, l1) == rec(s2, l2)
}

// scanA indexes the A range; false when a hash chain grows too long.
func (h *histDiff) scanA(idx *histIndex, line1, count1 int) bool {
	for ptr := line1 + count1 - 1; line1 <= ptr; ptr-- {
		chain := &idx.records[h.tableHash(idx, 1, ptr)]
		found := false
		chainLen := 0
		for rec := *chain; rec != nil; rec = rec.next {
			if h.cmp(1, rec.ptr, 1, ptr) {
				idx.nextPtrs[ptr-idx.ptrShift] = rec.ptr
				rec.ptr = ptr
				rec.cnt++
				idx.lineMap[ptr-idx.ptrShift] = rec
				found = true
				break
			}
			chainLen++
		}
		if found {
			continue
		}
		if chainLen == histMaxChain {
			return false
		}
		rec := &histRecord{ptr: ptr, cnt: 1, next: *chain}
		*chain = rec
		idx.lineMap[ptr-idx.ptrShift] = rec
	}
	return true
}

type histRegion struct{ begin1, end1, begin2, end2 int }

func (h *histDiff) tryLCS(idx *histIndex, lcs *histRegion, bPtr, line1, count1, line2, count2 int) int {
	bNext := bPtr + 1
	end1, end2 := line1+count1-1, line2+count2-1
	for rec := idx.records[h.tableHash(idx, 2, bPtr)]; rec != nil; rec = rec.next {
		if rec.cnt > idx.cnt {
			if !idx.hasCommon {
				idx.hasCommon = h.cmp(1, rec.ptr, 2, bPtr)
			}
			continue
		}
		as := rec.ptr
		if !h.cmp(1, as, 2, bPtr) {
			continue
		}
		idx.hasCommon = true
		for {
			np := idx.nextPtrs[as-idx.ptrShift]
			bs := bPtr
			ae, be := as, bs
			rc := rec.cnt
			for line1 < as && line2 < bs && h.cmp(1, as-1, 2, bs-1) {
				as--
				bs--
				if 1 < rc {
					rc = min(rc, idx.lineMap[as-idx.ptrShift].cnt)
				}
			}
			for ae < end1 && be < end2 && h.cmp(1, ae+1, 2, be+1) {
				ae++
				be++
				if 1 < rc {
					rc = min(rc, idx.lineMap[ae-idx.ptrShift].cnt)
				}
			}
			if bNext <= be {
				bNext = be + 1
			}
			if lcs.end1-lcs.begin1 < ae-as || rc < idx.cnt {
				*lcs = histRegion{begin1: as, begin2: bs, end1: ae, end2: be}
				idx.cnt = rc
			}
			if np == 0 {
				break
			}
			stop := false
			for np <= ae {
				np = idx.nextPtrs[np-idx.ptrShift]
				if np == 0 {
					stop = true
					break
				}
			}
			if stop {
				break
			}
			as = np
		}
	}
	return bNext
}

// findLCS returns 1 to fall back to Myers' diff, 0 with lcs set (or
// empty), -1 when the index could not be built (also Myers here).
func (h *histDiff) findLCS(lcs *histRegion, line1, count1, line2, count2 int) int {
	idx := &histIndex{tableBits: xdlHashbits(count1), ptrShift: line1}
	idx.records = make([]*histRecord, 1<<idx.tableBits)
	idx.lineMap = make([]*histRecord, count1)
	idx.nextPtrs = make([]int, count1)
	if !h.scanA(idx, line1, count1) {
		return -1
	}
	idx.cnt = histMaxChain + 1
	for bPtr := line2; bPtr <= line2+count2-1; {
		bPtr = h.tryLCS(idx, lcs, bPtr, line1, count1, line2, count2)
	}
	if idx.hasCommon && histMaxChain < idx.cnt {
		return 1
	}
	return 0
}

func (h *histDiff) diff(line1, count1, line2, count2 int) {
	for {
		if count1 <= 0 && count2 <= 0 {
			return
		}
		if count1 == 0 {
			for ; count2 > 0; count2-- {
				h.x2.setChanged(line2-1, true)
				line2++
			}
			return
		}
		if count2 == 0 {
			for ; count1 > 0; count1-- {
				h.x1.setChanged(line1-1, true)
				line1++
			}
			return
		}
		var lcs histRegion
		switch h.findLCS(&lcs, line1, count1, line2, count2) {
		case 1, -1:
			r1, r2 := myersRchg(h.a[line1-1:line1-1+count1], h.b[line2-1:line2-1+count2])
			for i, c := range r1 {
				h.x1.setChanged(line1-1+i, c)
			}
			for i, c := range r2 {
				h.x2.setChanged(line2-1+i, c)
			}
			return
		}
		if lcs.begin1 == 0 && lcs.begin2 == 0 {
			for ; count1 > 0; count1-- {
				h.x1.setChanged(line1-1, true)
				line1++
			}
			for ; count2 > 0; count2-- {
				h.x2.setChanged(line2-1, true)
				line2++
			}
			return
		}
		h.diff(line1, lcs.begin1-line1, line2, lcs.begin2-line2)
		end1, end2 := line1+count1-1, line2+count2-1
		count1, line1 = end1-lcs.end1, lcs.end1+1
		count2, line2 = end2-lcs.end2, lcs.end2+1
	}
}

// xdlCleanMmatch is xdiff's test for discarding a many-match line.
func xdlCleanMmatch(dis []byte, i, s, e int) bool {
	if i-s > xdlSimscanWindow {
		s = i - xdlSimscanWindow
	}
	if e-i > xdlSimscanWindow {
		e = i + xdlSimscanWindow
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*xdlKpdisRun < rpdis1+rdis1
}

type xdalgoenv struct {
	mxcost, snakeCnt, heurMin int
	kvdf, kvdb                func(d int) *int
}

type xdpsplit struct {
	i1, i2       int
	minLo, minHi bool
}

// recsCmp is xdl_recs_cmp over the kept lines [off1, lim1) and
// [off2, lim2).
func (env *xdalgoenv) recsCmp(x1 *xdfile, off1, lim1 int, x2 *xdfile, off2, lim2 int, needMin bool) {
	ha1, ha2 := x1.rha, x2.rha
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			x2.setChanged(x2.rindex[off2], true)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			x1.setChanged(x1.rindex[off1], true)
		}
	default:
		spl := env.split(ha1, off1, lim1, ha2, off2, lim2, needMin)
		env.recsCmp(x1, off1, spl.i1, x2, off2, spl.i2, spl.minLo)
		env.recsCmp(x1, spl.i1, lim1, x2, spl.i2, lim2, spl.minHi)
	}
}

// split is xdl_split: the middle snake of the box, or a good enough
// split point once the search grows too costly.
func (env *xdalgoenv) split(ha1 []int, off1, lim1 int, ha2 []int, off2, lim2 int, needMin bool) xdpsplit {
	kvdf, kvdb := env.kvdf, env.kvdb
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	*kvdf(fmid) = off1
	*kvdb(bmid) = lim1
	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			*kvdf(fmin - 1) = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			*kvdf(fmax + 1) = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if *kvdf(d - 1) >= *kvdf(d + 1) {
				i1 = *kvdf(d - 1) + 1
			} else {
				i1 = *kvdf(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1++
				i2++
			}
			if i1-prev1 > env.snakeCnt {
				gotSnake = true
			}
			*kvdf(d) = i1
			if odd && bmin <= d && d <= bmax && *kvdb(d) <= i1 {
				return xdpsplit{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}
		if bmin > dmin {
			bmin--
			*kvdb(bmin - 1) = xdlLineMax
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			*kvdb(bmax + 1) = xdlLineMax
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if *kvdb(d - 1) < *kvdb(d + 1) {
				i1 = *kvdb(d - 1)
			} else {
				i1 = *kvdb(d + 1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > env.snakeCnt {
				gotSnake = true
			}
			*kvdb(d) = i1
			if !odd && fmin <= d && d <= fmax && i1 <= *kvdf(d) {
				return xdpsplit{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}
		if needMin {
			continue
		}
		if gotSnake && ec > env.heurMin {
			best := 0
			var spl xdpsplit
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *kvdf(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > xdlKHeur*ec && v > best && off1+env.snakeCnt <= i1 && i1 < lim1 && off2+env.snakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == env.snakeCnt {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = true, false
				return spl
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *kvdb(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > xdlKHeur*ec && v > best && off1 < i1 && i1 <= lim1-env.snakeCnt && off2 < i2 && i2 <= lim2-env.snakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == env.snakeCnt-1 {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = false, true
				return spl
			}
		}
		if ec >= env.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(*kvdf(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := xdlLineMax, xdlLineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, *kvdb(d))
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return xdpsplit{i1: fbest1, i2: fbest - fbest1, minLo: true}
			}
			return xdpsplit{i1: bbest1, i2: bbest - bbest1, minHi: true}
		}
	}
}

// xdlGroup is a run of changed lines [start, end).
type xdlGroup struct{ start, end int }

func groupInit(x *xdfile) xdlGroup {
	g := xdlGroup{}
	for x.changed(g.end) {
		g.end++
	}
	return g
}

func groupNext(x *xdfile, n int, g *xdlGroup) bool {
	if g.end == n {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; x.changed(g.end); g.end++ {
	}
	return true
}

func groupPrevious(x *xdfile, g *xdlGroup) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; x.changed(g.start - 1); g.start-- {
	}
	return true
}

func groupSlideDown(x *xdfile, n int, g *xdlGroup) bool {
	if g.end < n && x.ha[g.start] == x.ha[g.end] {
		x.setChanged(g.start, false)
		g.start++
		x.setChanged(g.end, true)
		g.end++
		for x.changed(g.end) {
			g.end++
		}
		return true
	}
	return false
}

func groupSlideUp(x *xdfile, g *xdlGroup) bool {
	if g.start > 0 && x.ha[g.start-1] == x.ha[g.end-1] {
		g.start--
		x.setChanged(g.start, true)
		g.end--
		x.setChanged(g.end, false)
		for x.changed(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// xdlChangeCompact is xdl_change_compact without the indent heuristic
// (git's merges do not ask for it): each group of changes slides as far
// up as it can, then down, and back up to line up with a change on the
// other side if one can.
func xdlChangeCompact(x, o *xdfile, indentHeuristic bool) {
	n, no := len(x.ha), len(o.ha)
	g, gother := groupInit(x), groupInit(o)
	for {
		if g.end != g.start {
			var earliestEnd, endMatchingOther int
			for {
				groupsize := g.end - g.start
				endMatchingOther = -1
				for groupSlideUp(x, &g) {
					if !groupPrevious(o, &gother) {
						return // cannot happen: the groups are in step
					}
				}
				earliestEnd = g.end
				if gother.end > gother.start {
					endMatchingOther = g.end
				}
				for groupSlideDown(x, n, &g) {
					if !groupNext(o, no, &gother) {
						return
					}
					if gother.end > gother.start {
						endMatchingOther = g.end
					}
				}
				if groupsize == g.end-g.start {
					break
				}
			}
			groupsize := g.end - g.start
			switch {
			case g.end == earliestEnd:
			case endMatchingOther != -1:
				for gother.end == gother.start {
					if !groupSlideUp(x, &g) || !groupPrevious(o, &gother) {
						return
					}
				}
			case indentHeuristic:
				// Of the places the group can slide to, the one whose
				// two edges score best by indentation and blank lines.
				shift := max(earliestEnd, g.end-groupsize-1, g.end-indentMaxSliding)
				bestShift := -1
				var best splitScore
				for ; shift <= g.end; shift++ {
					var sc splitScore
					sc.add(measureSplit(x, shift))
					sc.add(measureSplit(x, shift-groupsize))
					if bestShift == -1 || sc.cmp(best) <= 0 {
						best, bestShift = sc, shift
					}
				}
				for g.end > bestShift {
					if !groupSlideUp(x, &g) || !groupPrevious(o, &gother) {
						return
					}
				}
			}
		}
		if !groupNext(x, n, &g) {
			break
		}
		if !groupNext(o, no, &gother) {
			break
		}
	}
}

// xdlBuildScript pairs the changed runs of both sides into hunks.
func xdlBuildScript(x1, x2 *xdfile, n1, n2 int) []hunk {
	var rev []hunk
	for i1, i2 := n1, n2; i1 >= 0 || i2 >= 0; i1, i2 = i1-1, i2-1 {
		if x1.changed(i1-1) || x2.changed(i2-1) {
			l1, l2 := i1, i2
			for x1.changed(i1 - 1) {
				i1--
			}
			for x2.changed(i2 - 1) {
				i2--
			}
			rev = append(rev, hunk{i1: i1, chg1: l1 - i1, i2: i2, chg2: l2 - i2})
		}
	}
	out := make([]hunk, len(rev))
	for i, h := range rev {
		out[len(rev)-1-i] = h
	}
	return out
}

// The indent heuristic's constants, as in xdiff.
const (
	indentMax              = 200
	indentMaxBlanks        = 20
	indentMaxSliding       = 100
	startOfFilePenalty     = 1
	endOfFilePenalty       = 21
	totalBlankWeight       = -30
	postBlankWeight        = 6
	relIndentPenalty       = -4
	relIndentBlankPenalty  = 10
	relOutdentPenalty      = 24
	relOutdentBlankPenalty = 17
	relDedentPenalty       = 23
	relDedentBlankPenalty  = 17
	indentWeight           = 60
)

func isXdlSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// lineIndent is a line's indentation (tabs to 8), -1 for a blank line.
func lineIndent(l string) int {
	ret := 0
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !isXdlSpace(c) {
			return ret
		}
		if c == ' ' {
			ret++
		} else if c == '\t' {
			ret += 8 - ret%8
		}
		if ret >= indentMax {
			return indentMax
		}
	}
	return -1
}

type splitMeasurement struct {
	endOfFile                   bool
	indent, preBlank, preIndent int
	postBlank, postIndent       int
}

func measureSplit(x *xdfile, split int) splitMeasurement {
	var m splitMeasurement
	n := len(x.lines)
	if split >= n {
		m.endOfFile, m.indent = true, -1
	} else {
		m.indent = lineIndent(x.lines[split])
	}
	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = lineIndent(x.lines[i]); m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == indentMaxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for i := split + 1; i < n; i++ {
		if m.postIndent = lineIndent(x.lines[i]); m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == indentMaxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

type splitScore struct{ effectiveIndent, penalty int }

func (s *splitScore) add(m splitMeasurement) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight*totalBlank + postBlankWeight*postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effectiveIndent += indent
	pick := func(blank, plain int) int {
		if anyBlanks {
			return blank
		}
		return plain
	}
	switch {
	case indent == -1, m.preIndent == -1, indent == m.preIndent:
	case indent > m.preIndent:
		s.penalty += pick(relIndentBlankPenalty, relIndentPenalty)
	case m.postIndent != -1 && m.postIndent > indent:
		s.penalty += pick(relOutdentBlankPenalty, relOutdentPenalty)
	default:
		s.penalty += pick(relDedentBlankPenalty, relDedentPenalty)
	}
}

func (s splitScore) cmp(o splitScore) int {
	c := 0
	if s.effectiveIndent > o.effectiveIndent {
		c = 1
	} else if s.effectiveIndent < o.effectiveIndent {
		c = -1
	}
	return indentWeight*c + (s.penalty - o.penalty)
}
