package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// limitWriter fails after n bytes, so that a dump with a far address
// (which xxd -r fills with zeros, as xxd does) ends the fuzz run quickly.
type limitWriter struct {
	w io.Writer
	n int
}

var errFull = errors.New("output limit")

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.n {
		return 0, errFull
	}
	l.n -= len(p)
	return l.w.Write(p)
}

// FuzzXxdRevert feeds xxd -r arbitrary dumps: it must end with bytes or
// an error, never panic. Seeds live in testdata/fuzz/FuzzXxdRevert.
func FuzzXxdRevert(f *testing.F) {
	f.Add([]byte("00000000: 6865 6c6c 6f0a                           hello.\n"), false, uint8(16))
	f.Add([]byte("6162\n6 3zz64\n"), true, uint8(30))
	f.Fuzz(func(t *testing.T, dump []byte, plain bool, cols uint8) {
		var out bytes.Buffer
		w := &seekWriter{w: bufio.NewWriter(&limitWriter{w: &out, n: 1 << 16})}
		err := xxdRevert(bufio.NewReader(bytes.NewReader(dump)), w, int(cols)+1, plain, 0)
		if err == nil {
			err = w.w.Flush()
		}
		if err != nil && !errors.Is(err, errFull) && !errors.Is(err, errSeekBackwards) && err.Error() != "address too large" {
			t.Fatalf("unexpected error %v", err)
		}
		if plain && err == nil && out.Len() > len(dump)/2+1 {
			t.Fatalf("-r -p made %d bytes from %d characters", out.Len(), len(dump))
		}
	})
}

// FuzzPatch parses arbitrary diffs and applies what it parsed to a file
// made of the hunks' own old lines: no panic, and a parsed hunk always
// has as many lines as its header counts.
func FuzzPatch(f *testing.F) {
	f.Add([]byte("--- a\t2024-01-01 00:00:00 +0000\n+++ b\n@@ -1,3 +1,3 @@\n x\n-y\n+z\n w\n"))
	f.Add([]byte("diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+new\n\\ No newline at end of file\n"))
	f.Add([]byte("--- a\n+++ a\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n"))
	f.Fuzz(func(t *testing.T, diff []byte) {
		files, _, _ := parseDiff(bytes.NewReader(diff))
		for _, fp := range files {
			var content []string
			for _, h := range fp.hunks {
				oldN, newN := 0, 0
				for _, l := range h.lines {
					if l.op != '+' {
						oldN++
						content = append(content, l.text)
					}
					if l.op != '-' {
						newN++
					}
				}
				if oldN != h.oldLines || newN != h.newLines {
					t.Fatalf("hunk %+v has %d/%d lines", h, oldN, newN)
				}
			}
			w := bufio.NewWriter(io.Discard)
			applyHunks(content, fp.hunks, w)
			reversePatch(fp)
			applyHunks(content, fp.hunks, w)
			_ = strings.Join(content, "")
		}
	})
}
