//go:build !wasip1

package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// numbered is lines "line 1" to "line n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func needHost(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("host %s (the reference; .ci/run installs it): %v", p, err)
		}
	}
}

// With standard output not a terminal, less and more copy their input
// like Debian's: the same bytes, messages and statuses.
func TestPagerNotATerminal(t *testing.T) {
	needHost(t, "less", "more")
	files := fixture{"a.txt": "hi\n", "b.txt": "B\n", "f5": "1\n2\n3\n4\n5", "dd/": "", "tab": "a\tb\x01c\n"}
	var cases []diffCase
	for _, args := range []string{
		"nope", "a.txt", "a.txt b.txt", "a.txt nope b.txt", "nope a.txt", "a.txt nope a.txt", "dd", "a.txt dd b.txt",
		"-N f5", "-S -N +3 f5", "+2 f5", "-Z a.txt", "--foo f5", "-", "tab", "", "-p 3 f5 a.txt",
	} {
		cases = append(cases,
			diffCase{files: files, script: "less " + args + "; echo rc=$?", stderr: true},
			diffCase{files: files, script: "cat f5 | less " + args + "; echo rc=$?", stderr: true},
		)
	}
	for _, args := range []string{
		"nope", "a.txt", "a.txt b.txt", "a.txt nope b.txt", "nope nope", "dd", "a.txt dd b.txt", "+2 f5", "-d a.txt",
		"-s f5", "-n 2 f5", "-Z a.txt", "-", "", "tab", "+/3 f5",
	} {
		cases = append(cases,
			diffCase{files: files, script: "more " + args + "; echo rc=$?", stderr: true},
			diffCase{files: files, script: "more " + args + " < a.txt; echo rc=$?", stderr: true},
		)
	}
	runDiff(t, cases)
}
