package main

import (
	"bytes"
	"testing"
)

// A diff this git writes applies with git apply's hunk placement, and
// its reverse undoes it.
func FuzzApplyHunks(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("x\ny", "")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\nX\n4\n5\n6\n7\n8\nY\n10\n")
	f.Fuzz(func(t *testing.T, old, neu string) {
		if len(old) > 4096 || len(neu) > 4096 {
			return
		}
		var buf bytes.Buffer
		buf.WriteString("--- a/f\n+++ b/f\n")
		writeHunks(&buf, lineOps(old, neu), splitLines(old))
		ps, err := parsePatch(buf.String(), 1)
		if err != nil {
			t.Fatalf("patch %q: %v", buf.String(), err)
		}
		if old == neu {
			return
		}
		if len(ps) != 1 {
			t.Fatalf("patch %q: %d file patches", buf.String(), len(ps))
		}
		got, line, ok := applyHunks(old, ps[0].hunks)
		if !ok || got != neu {
			t.Fatalf("patch %q on %q: %q (ok %v, line %d), want %q", buf.String(), old, got, ok, line, neu)
		}
		back, _, ok := applyHunks(neu, ps[0].reversed().hunks)
		if !ok || back != old {
			t.Fatalf("reverse of %q on %q: %q (ok %v), want %q", buf.String(), neu, back, ok, old)
		}
	})
}

// Arbitrary patch text never panics the parser or the applier.
func FuzzParsePatch(f *testing.F) {
	f.Add("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n", "a\nb")
	f.Add("--- f.orig\n+++ f\n@@ -0,0 +1 @@\n+x\n", "")
	f.Add("@@ -1 +1 @@\n-\n", "x\n")
	f.Fuzz(func(t *testing.T, patch, content string) {
		if len(patch) > 8192 || len(content) > 8192 {
			return
		}
		ps, err := parsePatch(patch, 1)
		if err != nil {
			return
		}
		for _, p := range ps {
			applyHunks(content, p.hunks)
			applyHunks(content, p.reversed().hunks)
		}
	})
}
