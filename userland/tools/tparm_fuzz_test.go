package main

import "testing"

// FuzzTparm runs arbitrary capability strings through tparm, the padding
// scanner and the parameter analysis: none may panic, and the output of
// tparm stays bounded by the string's length (each code prints at most a
// width-limited number), so a guest's terminfo cannot make tput allocate
// without bound. Seeds live in testdata/fuzz/FuzzTparm.
func FuzzTparm(f *testing.F) {
	f.Add("\x1b[%i%p1%d;%p2%dH", 5, 10, "x")
	f.Add("%?%p9%t\x1b(0%e\x1b(B%;\x1b[0%?%p6%t;1%;%?%p2%t;4%;%?%p1%p3%|%t;7%;m", 1, 0, "")
	f.Add("\x1b=%p1%' '%+%c%p2%' '%+%c", 0, 0, "")
	f.Add("%:-10000.10000s%p1%s%p1%l%d%PA%gA%Pz%gz%{65}%c%%$<5*/>$<x$<", 3, 4, "str")
	f.Add("%d;%dH%i", -1, 1<<31-1, "")
	f.Fuzz(func(t *testing.T, s string, a, b int, str string) {
		if len(s) > 256 {
			return
		}
		parsed, popped, _ := analyzeParams(s)
		if parsed < 0 || parsed > 2 || popped < 0 || popped > 9 {
			t.Fatalf("analyzeParams(%q) = %d, %d", s, parsed, popped)
		}
		out := tparm(s, []any{a, b, str, 0, 0, 0, 0, 0, 0})
		if limit := (len(s) + 1) * (maxFormatWidth + 16 + len(str)); len(out) > limit {
			t.Fatalf("tparm(%q) printed %d bytes", s, len(out))
		}
		if p := stripPadding(out); len(p) > len(out) {
			t.Fatalf("stripPadding grew %q", out)
		}
		e := &termEntry{strs: map[string]string{"pad": str}, bools: map[string]bool{}}
		if p := padded(out, e, 4000000, a); len(p) > len(out)+1<<20 {
			t.Fatalf("padded(%q) wrote %d bytes", out, len(p))
		}
	})
}
