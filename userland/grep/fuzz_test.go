package main

import (
	"bytes"
	"strings"
	"testing"
)

// fuzzFlags are the options FuzzGrep combines, one bit each.
var fuzzFlags = []string{"-v", "-n", "-c", "-o", "-l", "-L", "-i", "-w", "-x", "-E", "-F", "-b", "-q", "-A1", "-B2", "-C1", "-m2", "-z", "-a", "-H"}

// FuzzGrep runs whole invocations on hostile patterns and input: grep must
// never panic, must exit 0, 1 or 2, and must say why on stderr when it
// exits 2.
func FuzzGrep(f *testing.F) {
	f.Add(uint32(0), "foo", "foo\nbar\n")
	f.Add(uint32(1<<3|1<<7), `\(a\|b\)*`, "ab ba\x00\n")
	f.Add(uint32(1<<9|1<<13|1<<14), "x{2,}|y", "xx\ny\nz\nxxx\n")
	f.Add(uint32(1<<18|1<<1), "a", "a\xff\n\x00a")
	f.Fuzz(func(t *testing.T, mask uint32, pattern, input string) {
		if len(pattern) > 200 || len(input) > 4096 {
			return
		}
		args := []string{"grep"}
		for i, fl := range fuzzFlags {
			if mask&(1<<i) != 0 {
				args = append(args, fl)
			}
		}
		args = append(args, "-e", pattern)
		var out, errb bytes.Buffer
		code := runLimited(args, strings.NewReader(input), &out, &errb, 1<<20)
		switch code {
		case 0, 1:
		case 2:
			if !strings.HasPrefix(errb.String(), "grep: ") {
				t.Fatalf("exit 2 without a diagnostic: %q", errb.String())
			}
		default:
			t.Fatalf("exit %d", code)
		}
		if mask&(1<<12) != 0 && out.Len() != 0 {
			t.Fatalf("-q wrote %q", out.String())
		}
	})
}
