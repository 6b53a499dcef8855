package main

import (
	"strings"
	"testing"
)

func FuzzMerge3(f *testing.F) {
	f.Add("1\n2\n3\n", "1\nA\n3\n", "1\n2\nB\n")
	f.Add("1\n2\n3\n", "1\nA\n3\n", "1\nB\n3\n")
	f.Add("", "x\n", "y")
	f.Add("a\nb", "a\nb\nc", "z\na\nb")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nX\nY\n5\n6\n7\n8\n9\n", "1\n2\nX\nZ\n5\n6\n7\n8\n9\nextra\n")
	f.Fuzz(func(t *testing.T, base, x, y string) {
		if len(base)+len(x)+len(y) > 4096 {
			return
		}
		labels := mergeLabels{ours: "HEAD", theirs: "other"}
		if got, n := merge3(base, x, x, labels); got != x || n != 0 {
			t.Fatalf("merging %q with itself over %q: %q, %d conflicts", x, base, got, n)
		}
		if got, n := merge3(base, x, base, labels); got != x || n != 0 {
			t.Fatalf("merging %q with unchanged base %q: %q, %d conflicts", x, base, got, n)
		}
		if got, n := merge3(base, base, x, labels); got != x || n != 0 {
			t.Fatalf("merging unchanged base %q with %q: %q, %d conflicts", base, x, got, n)
		}
		got, n := merge3(base, x, y, labels)
		if markers := strings.Count(got, "\n=======\n"); n == 0 && strings.Count(got, "<<<<<<< HEAD\n") > strings.Count(x+y, "<<<<<<< HEAD\n") {
			t.Fatalf("no conflicts reported but markers in %q (%d)", got, markers)
		}
		if n > 0 && !strings.Contains(got, ">>>>>>> other\n") {
			t.Fatalf("%d conflicts but no markers in %q", n, got)
		}
	})
}

// Non-overlapping edits merge cleanly; overlapping ones conflict with
// git's markers around just the differing lines.
func TestMerge3(t *testing.T) {
	labels := mergeLabels{ours: "HEAD", theirs: "feat"}
	got, n := merge3("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\nA\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\nB\n9\n", labels)
	if n != 0 || got != "1\nA\n3\n4\n5\n6\n7\nB\n9\n" {
		t.Fatalf("clean merge: %q, %d", got, n)
	}
	got, n = merge3("1\n2\n3\n", "1\nA\nsame\n3\n", "1\nB\nsame\n3\n", labels)
	if want := "1\n<<<<<<< HEAD\nA\n=======\nB\n>>>>>>> feat\nsame\n3\n"; n != 1 || got != want {
		t.Fatalf("conflict: %q, %d; want %q", got, n, want)
	}
}

// The hunks of both diffs turn a into b.
func FuzzXdiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("}\n\n}\n\n", "\n}\n}\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 4096 || len(b) > 4096 {
			return
		}
		al, bl := splitLines(a), splitLines(b)
		for _, histogram := range []bool{false, true} {
			var out []string
			pos := 0
			for _, h := range xdiffHunks(al, bl, histogram) {
				if h.i1 < pos || h.i1+h.chg1 > len(al) || h.i2+h.chg2 > len(bl) {
					t.Fatalf("histogram %v: bad hunk %+v", histogram, h)
				}
				out = append(out, al[pos:h.i1]...)
				out = append(out, bl[h.i2:h.i2+h.chg2]...)
				pos = h.i1 + h.chg1
			}
			out = append(out, al[pos:]...)
			if got := strings.Join(out, ""); got != b {
				t.Fatalf("histogram %v: hunks turn %q into %q, not %q", histogram, a, got, b)
			}
		}
	})
}
