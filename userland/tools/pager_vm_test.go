//go:build !wasip1

package main

import (
	"fmt"
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

// With standard output not a terminal, less and more copy their input
// like Debian's: the same bytes, messages and statuses.
func TestPagerNotATerminal(t *testing.T) {
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
	runCasesWith(t, []string{"less", "more"}, cases)
}

// less on a VM terminal: paging, line numbers, search, several files,
// a pipe as input (keys then come from /dev/tty), and q.
func TestLessOnTerminal(t *testing.T) {
	dir := t.TempDir()
	makeFixture(t, dir, fixture{"big": numbered(100), "small": "one\ntwo\n", "wide": strings.Repeat("x", 30) + "END\n",
		"col": "\x1b[31mred\x1b[m plain " + strings.Repeat("y", 20) + "\n"})
	h := termHost(t, dir)

	s := startTerm(t, h, "/mnt/host", "less -N big; echo less-rc=$?", 10, 40)
	sc := s.waitLast("big")
	if !strings.HasPrefix(sc, "      1 line 1\n") || !strings.Contains(sc, "      9 line 9\nbig") {
		t.Fatalf("first screen:\n%s", sc)
	}
	s.keys(" ")
	s.waitText("     18 line 18\n:")
	s.keys("b")
	s.waitText("      1 line 1\n")
	s.keys("3j")
	s.waitScreen("line 4 at the top", func(sc string) bool { return strings.HasPrefix(sc, "      4 line 4\n") })
	s.keys("/line 5\r")
	s.waitScreen("line 50 at the top", func(sc string) bool { return strings.HasPrefix(sc, "      5 line 5\n") })
	s.keys("n")
	s.waitScreen("line 50 at the top", func(sc string) bool { return strings.HasPrefix(sc, "     50 line 50\n") })
	s.keys("G")
	sc = s.waitLast("(END)")
	if !strings.Contains(sc, "    100 line 100\n(END)") {
		t.Fatalf("end screen:\n%s", sc)
	}
	s.keys("g")
	s.waitScreen("the top", func(sc string) bool { return strings.HasPrefix(sc, "      1 line 1\n") })
	s.keys("/nomatch\r")
	s.waitLast("Pattern not found")
	// A bigger window: the next redraw (any key; ^L) fills it.
	s.resize(20, 40)
	s.keys("\x0c")
	s.waitText("     19 line 19\n:")
	s.keys("q")
	s.waitText("less-rc=0")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	s = startTerm(t, h, "/mnt/host", "cat big | less +20; echo less-rc=$?", 6, 40)
	s.waitScreen("line 20 at the top", func(sc string) bool { return strings.HasPrefix(sc, "line 20\n") })
	s.keys("k")
	s.waitScreen("line 19 at the top", func(sc string) bool { return strings.HasPrefix(sc, "line 19\n") })
	s.keys("q")
	s.waitText("less-rc=0")

	s = startTerm(t, h, "/mnt/host", "less small wide; echo less-rc=$?", 6, 20)
	s.waitLast("small (file 1 of 2)")
	s.keys(":n")
	sc = s.waitText("END")
	if !strings.HasPrefix(sc, strings.Repeat("x", 20)+"\n"+strings.Repeat("x", 10)+"END\n") {
		t.Fatalf("wrapped line:\n%s", sc)
	}
	s.keys("-S")
	s.waitScreen("the line cut", func(sc string) bool { return strings.HasPrefix(sc, strings.Repeat("x", 20)+"\n~") })
	s.keys(":p")
	s.waitScreen("the first file again", func(sc string) bool { return strings.HasPrefix(sc, "one\ntwo\n") })
	s.keys("q")
	s.waitText("less-rc=0")

	// Colour sequences: shown as ^[ by default, as colours (taking no
	// room when the line wraps) with -R.
	s = startTerm(t, h, "/mnt/host", "less col; less -R col; echo less-rc=$?", 6, 20)
	s.waitText("^[[31mred^[[m plain\n")
	s.keys("q")
	s.waitText("red plain yyyyyyyyyy\nyyyyyyyyyy\n")
	s.keys("q")
	s.waitText("less-rc=0")
}

// more on a VM terminal: a prompt with the percentage, space to page,
// (of the bytes shown, as util-linux counts), and the end of the last
// file ends it; a short file is just printed.
func TestMoreOnTerminal(t *testing.T) {
	dir := t.TempDir()
	makeFixture(t, dir, fixture{"big": numbered(12), "small": "one\ntwo\n"})
	h := termHost(t, dir)
	s := startTerm(t, h, "/mnt/host", "more big; echo more-rc=$?", 6, 40)
	sc := s.waitLast("--More--(40%)")
	if !strings.HasPrefix(sc, "line 1\n") {
		t.Fatalf("first screen:\n%s", sc)
	}
	s.keys(" ")
	s.waitLast("--More--(81%)")
	s.keys(" ")
	s.waitLast("--More--(100%)")
	s.keys(" ")
	s.waitText("more-rc=0")

	s = startTerm(t, h, "/mnt/host", "more small; echo more-rc=$?", 6, 40)
	sc = s.waitText("more-rc=0")
	if !strings.HasPrefix(sc, "one\ntwo\nmore-rc=0") {
		t.Fatalf("short file:\n%s", sc)
	}
}
