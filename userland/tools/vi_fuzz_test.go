package main

import (
	"io"
	"strings"
	"testing"
)

// fuzzEditor is an editor on a small buffer that draws to nowhere and
// writes no files.
func fuzzEditor(text string) *editor {
	e := newEditor()
	e.setText(text)
	e.file = "fuzz.txt"
	e.screen, e.out = io.Discard, io.Discard
	e.rows, e.cols = 8, 20
	e.writeFile = func(string, string, bool) error { return nil }
	e.limit = 1 << 20
	return e
}

// checkEditor checks the invariants every command must keep.
func checkEditor(t *testing.T, e *editor) {
	t.Helper()
	if len(e.lines) == 0 {
		t.Fatal("no lines")
	}
	if e.cy < 0 || e.cy >= len(e.lines) || e.cx < 0 || e.cx > len(e.lines[e.cy]) {
		t.Fatalf("cursor %d,%d outside the buffer (%d lines)", e.cy, e.cx, len(e.lines))
	}
	if e.noLines && (len(e.lines) != 1 || len(e.lines[0]) != 0) {
		t.Fatal("an empty buffer holds text")
	}
	size := 0
	for _, l := range e.lines {
		size += len(l) + lineCost
	}
	if size != e.size && !e.noLines {
		t.Fatalf("size %d, counted %d", e.size, size)
	}
	if size > e.limit+maxText {
		t.Fatalf("the buffer grew to %d", size)
	}
}

const fuzzText = "one two\n\tthree (four) \"five\"\n\nsix seven eight\nnine\n"

// FuzzViKeys types arbitrary keys at vi: it must never panic, keep the
// cursor in the buffer, and stay bounded on huge counts (the fuzzer
// reports an input that hangs). Seeds live in
// testdata/fuzz/FuzzViKeys.
func FuzzViKeys(f *testing.F) {
	for _, s := range []string{
		"999999999dd", "999999999x", "999999999p", "yy999999999p", "999999999ia\x1b", "99999ia\x1b",
		"999999999ox\x1b", "999999999J", "999999999w", "999999999}", "999999999n", "/e\r999999999n",
		"999999999.", "x999999999.", "999999999u", "999999999\x12", "999999999>>", "999999999~",
		"dwjP.u\x12", "ciwX\x1b", "di(", "da\"", "vjd", "Vjy3p", "qq", ":%s/e/E/g\r", ":g/e/d\r",
		":%norm Ax\r", ":normal :normal x\r\r", "3ihi\x1bj.", "R xyz\x1b", "\x1b[A\x1b[B\x1bOC", "gg=G",
		"999999999\x06", "999999999\x02", "999999999\x04", "999999999\x15", "999999999G", "999999999|",
		"mxjd'x", "`x", "f(;,t)", "*#", "999999999:d\r", "ZZ", ":q!\r", ":e! other\r", "ddddddddddu",
		"qaxq999999999@a", "qa@aq@a", "\"ayy\"Ap\"_dd\"0P", "qqq@q", "@:", "999999999@@", "2x..",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, keys string) {
		e := fuzzEditor(fuzzText)
		if err := e.runKeys(keys); err != nil && err != errInterrupted {
			if _, ok := err.(viError); !ok {
				t.Fatalf("%q: %v", keys, err)
			}
		}
		e.revertIfTooBig()
		e.clampCursor()
		checkEditor(t, e)
		e.render()
	})
}

// FuzzExLine runs arbitrary ex command lines, in ex mode with an input
// of more lines for :append: no panic, and the buffer stays sound.
// Seeds live in testdata/fuzz/FuzzExLine.
func FuzzExLine(f *testing.F) {
	for _, s := range []string{
		"%s/o/0/g", "g/e/d", "v/e/s/^/#/", "1,$j", "2;+1d", "/six/,$m0", "$a", "0i", "2c", "1t$", "%>",
		"s/\\v(\\w+) (\\w+)/\\2 \\1/", "%s/x*/-/g", "%s/$/\\r/g", "%s/e/\\U&/g", "%norm 999999999ia",
		"g/e/norm dd", "k a|'a,$d", "set nu ts=4 sw=2 et", "set foo", "999999999d", "d 999999999",
		"%s/\\{999999999}/x/", "s/[/x/", "s/\\(/x/", "%s/./&&&&&&&&/g", "w", "w other", "wq", "x", "q",
		"e other", "r other", "u|red", "=", "%p", "%#", "%l", "1,2y|$pu", "'<,'>d", "\"comment", "|||",
		"s//x/", "&&", "~", "g//", "s/a/b/ 999999999", "-999999999", "+999999999d", "2,1d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e := fuzzEditor(fuzzText)
		e.exMode, e.silent = true, true
		more := []string{"added", "lines", "."}
		e.exInput = func() (string, bool) {
			if len(more) == 0 {
				return "", false
			}
			l := more[0]
			more = more[1:]
			return l, true
		}
		for _, l := range strings.Split(line, "\n") {
			e.snapped = false
			_ = e.exLine(l)
			e.revertIfTooBig()
			if !e.noLines {
				e.clampCursor()
			}
			checkEditor(t, e)
		}
	})
}

// FuzzPagerLine: less's rendering of any line (with -R's colour
// sequences kept apart) never panics and gives every cell its prefix.
func FuzzPagerLine(f *testing.F) {
	for _, s := range []string{"\x1b[31mred\x1b[m", "a\tb\x01\xff", "\x1b[", "\x1b[1;2", "é\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cells, pre, _ := expandSGR(s, true)
		if len(pre) != len(cells) {
			t.Fatalf("%d cells, %d prefixes", len(cells), len(pre))
		}
		if plain := expand(s); len(plain) < len(cells) {
			t.Fatalf("colours took room: %d cells, %d plain", len(cells), len(plain))
		}
	})
}
