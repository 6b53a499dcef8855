package main

import "strings"

// This file is the line-based three-way merge (git's xdiff xdl_merge in
// its default configuration: "merge" conflict style, XDL_MERGE_ZEALOUS
// refinement). The structure follows xdiff's so that the hunks, the
// merging of touching changes and the trimming of lines both sides
// changed alike come out where git puts them.

// hunk is one change of a line diff: old lines [i1, i1+chg1) became new
// lines [i2, i2+chg2).
type hunk struct{ i1, chg1, i2, chg2 int }

// diffHunks lists the changes that turn a into b (line slices), as
// git's merge finds them: merge-ort uses the histogram diff.
func diffHunks(a, b []string) []hunk { return xdiffHunks(a, b, true) }

// mergeRegion is xdiff's xdmerge_t: base lines [i0, i0+chg0), ours
// [i1, i1+chg1), theirs [i2, i2+chg2). mode 0 is a conflict, 1 takes
// ours, 2 takes theirs, 4 is a change both sides made alike.
type mergeRegion struct {
	mode                         int
	i0, chg0, i1, chg1, i2, chg2 int
}

// appendRegion is xdl_append_merge: a change that touches the previous
// one joins it (and a mix of sides becomes a conflict).
func appendRegion(ms []mergeRegion, mode, i0, chg0, i1, chg1, i2, chg2 int) []mergeRegion {
	if n := len(ms); n > 0 {
		m := &ms[n-1]
		if i1 <= m.i1+m.chg1 || i2 <= m.i2+m.chg2 {
			if mode != m.mode {
				m.mode = 0
			}
			m.chg0 = i0 + chg0 - m.i0
			m.chg1 = i1 + chg1 - m.i1
			m.chg2 = i2 + chg2 - m.i2
			return ms
		}
	}
	return append(ms, mergeRegion{mode, i0, chg0, i1, chg1, i2, chg2})
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mergeLabels name the sides in conflict markers.
type mergeLabels struct{ ours, theirs string }

// merge3 merges ours and theirs, both derived from base, and returns the
// result and the number of conflicts left marked in it.
func merge3(base, ours, theirs string, labels mergeLabels) (string, int) {
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	x1, x2 := diffHunks(b, o), diffHunks(b, t)
	if len(x1) == 0 {
		return theirs, 0
	}
	if len(x2) == 0 {
		return ours, 0
	}
	var ms []mergeRegion
	for len(x1) > 0 && len(x2) > 0 {
		h1, h2 := x1[0], x2[0]
		if h1.i1+h1.chg1 < h2.i1 {
			ms = appendRegion(ms, 1, h1.i1, h1.chg1, h1.i2, h1.chg2, h2.i2-h2.i1+h1.i1, h1.chg1)
			x1 = x1[1:]
			continue
		}
		if h2.i1+h2.chg1 < h1.i1 {
			ms = appendRegion(ms, 2, h2.i1, h2.chg1, h1.i2-h1.i1+h2.i1, h2.chg1, h2.i2, h2.chg2)
			x2 = x2[1:]
			continue
		}
		if h1.i1 != h2.i1 || h1.chg1 != h2.chg1 || h1.chg2 != h2.chg2 ||
			!equalLines(o[h1.i2:h1.i2+h1.chg2], t[h2.i2:h2.i2+h2.chg2]) {
			off := h1.i1 - h2.i1
			ffo := off + h1.chg1 - h2.chg1
			i0, i1, i2 := h1.i1, h1.i2, h2.i2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := h1.i1 + h1.chg1 - i0
			chg1 := h1.i2 + h1.chg2 - i1
			chg2 := h2.i2 + h2.chg2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			ms = appendRegion(ms, 0, i0, chg0, i1, chg1, i2, chg2)
		}
		e1, e2 := h1.i1+h1.chg1, h2.i1+h2.chg1
		if e1 >= e2 {
			x2 = x2[1:]
		}
		if e2 >= e1 {
			x1 = x1[1:]
		}
	}
	for _, h1 := range x1 {
		ms = appendRegion(ms, 1, h1.i1, h1.chg1, h1.i2, h1.chg2, h1.i1+len(t)-len(b), h1.chg1)
	}
	for _, h2 := range x2 {
		ms = appendRegion(ms, 2, h2.i1, h2.chg1, h2.i1+len(o)-len(b), h2.chg1, h2.i2, h2.chg2)
	}
	ms = refineConflicts(ms, o, t)
	ms = simplifyNonConflicts(ms)
	return fillMerge(ms, o, t, labels)
}

// refineConflicts is xdl_refine_conflicts: a conflict is narrowed to the
// lines where the two sides really differ, one conflict per difference,
// and one whose sides are equal is no conflict.
func refineConflicts(ms []mergeRegion, o, t []string) []mergeRegion {
	var out []mergeRegion
	for _, m := range ms {
		if m.mode != 0 || m.chg1 == 0 || m.chg2 == 0 {
			out = append(out, m)
			continue
		}
		hs := diffHunks(o[m.i1:m.i1+m.chg1], t[m.i2:m.i2+m.chg2])
		if len(hs) == 0 {
			m.mode = 4
			out = append(out, m)
			continue
		}
		for _, h := range hs {
			// i0/chg0 stay those of the whole conflict, as in xdiff;
			// the "merge" style does not print the base.
			out = append(out, mergeRegion{0, m.i0, m.chg0, m.i1 + h.i1, h.chg1, m.i2 + h.i2, h.chg2})
		}
	}
	return out
}

// simplifyNonConflicts is xdl_simplify_non_conflicts (without the
// alphanumeric rule): conflicts at most three lines apart become one.
func simplifyNonConflicts(ms []mergeRegion) []mergeRegion {
	if len(ms) == 0 {
		return ms
	}
	out := []mergeRegion{ms[0]}
	for _, next := range ms[1:] {
		m := &out[len(out)-1]
		begin, end := m.i1+m.chg1, next.i1
		if m.mode != 0 || next.mode != 0 || end-begin > 3 {
			out = append(out, next)
			continue
		}
		m.chg0 = next.i0 + next.chg0 - m.i0
		m.chg1 = next.i1 + next.chg1 - m.i1
		m.chg2 = next.i2 + next.chg2 - m.i2
	}
	return out
}

// markerSize is git's default conflict-marker length.
const markerSize = 7

// fillMerge is xdl_fill_merge_buffer for the "merge" style.
func fillMerge(ms []mergeRegion, o, t []string, labels mergeLabels) (string, int) {
	var sb strings.Builder
	copyLines := func(ls []string, addNL bool) {
		for _, l := range ls {
			sb.WriteString(l)
		}
		if addNL && len(ls) > 0 && !strings.HasSuffix(ls[len(ls)-1], "\n") {
			sb.WriteByte('\n')
		}
	}
	conflicts, i := 0, 0
	for _, m := range ms {
		switch {
		case m.mode == 0:
			conflicts++
			copyLines(o[i:m.i1], false)
			sb.WriteString(strings.Repeat("<", markerSize) + marker(labels.ours) + "\n")
			copyLines(o[m.i1:m.i1+m.chg1], true)
			sb.WriteString(strings.Repeat("=", markerSize) + "\n")
			copyLines(t[m.i2:m.i2+m.chg2], true)
			sb.WriteString(strings.Repeat(">", markerSize) + marker(labels.theirs) + "\n")
		case m.mode&3 != 0:
			copyLines(o[i:m.i1], false)
			if m.mode&1 != 0 {
				copyLines(o[m.i1:m.i1+m.chg1], m.mode&2 != 0)
			}
			if m.mode&2 != 0 {
				copyLines(t[m.i2:m.i2+m.chg2], false)
			}
		default:
			continue
		}
		i = m.i1 + m.chg1
	}
	copyLines(o[i:], false)
	return sb.String(), conflicts
}

func marker(label string) string {
	if label == "" {
		return ""
	}
	return " " + label
}
