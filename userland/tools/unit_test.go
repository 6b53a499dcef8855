package main

import (
	"bufio"
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/userland/internal/wasmbuild"
)

// run runs a tool in-process and returns what it printed.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestToolsAreTheModuleAliases(t *testing.T) {
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := slices.Clone(wasmbuild.Aliases["tools"])
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, wasmbuild.Aliases[\"tools\"] %v", names, want)
	}
	for _, argv0 := range [][]string{{"xxd", "-p"}, {"/bin/xxd", "-p"}, {"tools", "xxd", "-p"}, {"/usr/bin/tools", "/bin/xxd", "-p"}} {
		if out, _, code := run(t, "ab", argv0...); out != "6162\n" || code != 0 {
			t.Errorf("%q: %q %d", argv0, out, code)
		}
	}
	if _, errText, code := run(t, "", "nope"); code != 127 || !strings.Contains(errText, "unknown command") {
		t.Errorf("unknown command: %q %d", errText, code)
	}
}

func TestXxdLayout(t *testing.T) {
	in := "hello world, this is a test of xxd\x00\x01\xff"
	tests := []struct {
		args []string
		want string
	}{
		{nil, "00000000: 6865 6c6c 6f20 776f 726c 642c 2074 6869  hello world, thi\n" +
			"00000010: 7320 6973 2061 2074 6573 7420 6f66 2078  s is a test of x\n" +
			"00000020: 7864 0001 ff                             xd...\n"},
		{[]string{"-g3", "-l", "16"}, "00000000: 68656c 6c6f20 776f72 6c642c 207468 69  hello world, thi\n"},
		{[]string{"-g0", "-u", "-c", "8", "-s", "0x20"}, "00000020: 78640001FF        xd...\n"},
		{[]string{"-i", "-c", "4", "-l", "5"}, "  0x68, 0x65, 0x6c, 0x6c,\n  0x6f\n"},
		{[]string{"-p", "-l", "3"}, "68656c\n"},
	}
	for _, tc := range tests {
		out, errText, code := run(t, in, append([]string{"xxd"}, tc.args...)...)
		if out != tc.want || code != 0 {
			t.Errorf("xxd %q = %q (%q, %d), want %q", tc.args, out, errText, code, tc.want)
		}
	}
}

func TestXxdRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	data := make([]byte, 3000)
	rng.Read(data)
	for _, args := range [][]string{nil, {"-c", "7"}, {"-g", "1"}, {"-c", "256", "-g", "0"}} {
		dump, _, _ := run(t, string(data), append([]string{"xxd"}, args...)...)
		rev := []string{"xxd", "-r"}
		if len(args) > 0 && args[0] == "-c" {
			rev = append(rev, "-c", args[1])
		}
		back, errText, code := run(t, dump, rev...)
		if back != string(data) || code != 0 {
			t.Errorf("xxd %q then -r: %d bytes back (%q, %d)", args, len(back), errText, code)
		}
	}
	plain, _, _ := run(t, string(data), "xxd", "-p")
	if back, _, _ := run(t, plain, "xxd", "-r", "-p"); back != string(data) {
		t.Errorf("xxd -p then -r -p: %d bytes back", len(back))
	}
	// Addresses going back on a pipe: xxd's status 5.
	if _, errText, code := run(t, "0010: 41\n0000: 42\n", "xxd", "-r"); code != 5 || !strings.Contains(errText, "cannot seek backwards") {
		t.Errorf("backwards: %q %d", errText, code)
	}
}

func TestHexdump(t *testing.T) {
	out, _, _ := run(t, strings.Repeat("\x00", 40)+"ab", "hexdump", "-C")
	want := "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n" +
		"00000020  00 00 00 00 00 00 00 00  61 62                    |........ab|\n0000002a\n"
	if out != want {
		t.Errorf("hexdump -C = %q, want %q", out, want)
	}
	if out, _, _ := run(t, "abc", "hexdump"); out != "0000000 6261 0063                              \n0000003\n" {
		t.Errorf("hexdump = %q", out)
	}
}

func TestParseDiff(t *testing.T) {
	const d = `Some commit message
diff -ruN old/a new/a
--- old/a	2024-01-01 00:00:00.000000000 +0000
+++ new/a	2024-01-02 00:00:00.000000000 +0000
@@ -1,3 +1,3 @@ func x
 one
-two
+TWO
 three
--- /dev/null
+++ b/created
@@ -0,0 +1 @@
+new
\ No newline at end of file
trailing garbage
`
	files, sawText, err := parseDiff(strings.NewReader(d))
	if err != nil || !sawText || len(files) != 2 {
		t.Fatalf("parseDiff: %d files, %v, %v", len(files), sawText, err)
	}
	a := files[0]
	if a.oldName != "old/a" || a.newName != "new/a" || a.oldTime != "2024-01-01 00:00:00.000000000 +0000" || len(a.hunks) != 1 {
		t.Errorf("first file: %+v", a)
	}
	h := a.hunks[0]
	if h.oldStart != 1 || h.oldLines != 3 || h.newStart != 1 || h.newLines != 3 || h.section != "func x" || len(h.lines) != 4 {
		t.Errorf("hunk: %+v", h)
	}
	c := files[1]
	if !c.isCreation() || c.isDeletion() || c.hunks[0].lines[0] != (diffLine{'+', "new"}) {
		t.Errorf("second file: %+v", c)
	}
	if got, ok := stripName("b/created", 1); got != "created" || !ok {
		t.Errorf("stripName = %q %v", got, ok)
	}
	for _, bad := range []string{"--- a\n+++ a\n@@ -1,2 +1,2 @@\n-x\nbad\n", "--- a\n+++ a\n@@ -1,2 +1,2 @@\n-x\n", "--- a\n+++ a\n@@ -1 +1 @@\n-x\n-y\n+z\n"} {
		if _, _, err := parseDiff(strings.NewReader(bad)); err == nil {
			t.Errorf("parseDiff(%q) took it", bad)
		}
	}
}

func TestApplyHunks(t *testing.T) {
	lines := splitLines("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n")
	h := func(start int, body ...string) hunk {
		x := hunk{oldStart: start, newStart: start}
		for _, l := range body {
			x.lines = append(x.lines, diffLine{l[0], l[1:] + "\n"})
			if l[0] != '+' {
				x.oldLines++
			}
			if l[0] != '-' {
				x.newLines++
			}
		}
		return x
	}
	var msgs bytes.Buffer
	w := bufio.NewWriter(&msgs)
	got, failed, _, moved := applyHunks(lines, []hunk{h(1, " 2", "-3", "+three", " 4"), h(7, " 7", "-8", "+eight", " 9"), h(2, " x", "-y", " z")}, w)
	w.Flush()
	if strings.Join(got, "") != "0\n1\n2\nthree\n4\n5\n6\n7\neight\n9\n" || !slices.Equal(failed, []int{3}) || !moved {
		t.Errorf("applyHunks = %q, failed %v, moved %v", strings.Join(got, ""), failed, moved)
	}
	if want := "Hunk #1 succeeded at 3 (offset 2 lines).\nHunk #2 succeeded at 8 (offset 1 line).\nHunk #3 FAILED at 2.\n"; msgs.String() != want {
		t.Errorf("messages %q, want %q", msgs.String(), want)
	}
}

func TestCompressRoundTripInProcess(t *testing.T) {
	t.Chdir(t.TempDir())
	data := strings.Repeat("compress me ", 10000) + "\x00\xff"
	if err := os.WriteFile("f", []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ z, un, ext string }{{"bzip2", "bunzip2", ".bz2"}, {"xz", "unxz", ".xz"}} {
		if _, e, code := run(t, "", c.z, "-T1", "f"); code != 0 && c.z == "xz" {
			t.Fatalf("%s: %q %d", c.z, e, code)
		} else if c.z == "bzip2" {
			if _, e, code := run(t, "", c.z, "f"); code != 0 {
				t.Fatalf("%s: %q %d", c.z, e, code)
			}
		}
		if _, err := os.Stat("f"); err == nil {
			t.Errorf("%s kept its input", c.z)
		}
		if _, e, code := run(t, "", c.un, "f"+c.ext); code != 0 {
			t.Fatalf("%s: %q %d", c.un, e, code)
		}
		b, err := os.ReadFile("f")
		if err != nil || string(b) != data {
			t.Fatalf("%s round trip: %d bytes, %v", c.z, len(b), err)
		}
		if fi, _ := os.Stat("f"); fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, want 0640", c.z, fi.Mode())
		}
	}
}

func TestZipRoundTripInProcess(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{"d/a": "alpha\n", "d/sub/b": strings.Repeat("beta ", 1000), "d/empty": ""}
	for n, c := range files {
		os.MkdirAll(filepath.Dir(n), 0o755)
		os.WriteFile(n, []byte(c), 0o644)
	}
	if out, e, code := run(t, "", "zip", "-r", "o.zip", "d"); code != 0 || !strings.Contains(out, "  adding: d/sub/b (deflated") {
		t.Fatalf("zip: %q %q %d", out, e, code)
	}
	if out, e, code := run(t, "", "unzip", "-q", "-d", "x", "o.zip"); code != 0 || out != "" {
		t.Fatalf("unzip: %q %q %d", out, e, code)
	}
	for n, c := range files {
		if b, err := os.ReadFile(filepath.Join("x", n)); err != nil || string(b) != c {
			t.Errorf("%s: %q %v", n, b, err)
		}
	}
	if out, _, code := run(t, "", "unzip", "-p", "o.zip", "d/a"); out != "alpha\n" || code != 0 {
		t.Errorf("unzip -p: %q %d", out, code)
	}
}

func TestClassify(t *testing.T) {
	tests := map[string]string{
		"":                          "empty",
		"hi\n":                      "ASCII text",
		"{\"a\":1}":                 "JSON text data",
		"#!/bin/sh\nx\n":            "POSIX shell script, ASCII text executable",
		"\x00asm\x01\x00\x00\x00":   "WebAssembly (wasm) binary module version 0x1 (MVP)",
		"\x00\x01\x02":              "data",
		"GIF87a\x01\x00\x02\x00":    "GIF image data, version 87a, 1 x 2",
		"BZh9" + "1AY&SY":           "bzip2 compressed data, block size = 900k",
		"caf\xc3\xa9\r\nbar\r\n":    "Unicode text, UTF-8 text, with CRLF line terminators",
		"\x7fELF not really an elf": "ELF",
	}
	for in, want := range tests {
		if got, _ := classify([]byte(in), strings.NewReader(in), int64(len(in))); got != want {
			t.Errorf("classify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestXzDictionaryLimit(t *testing.T) {
	header := func(props byte) []byte {
		b := []byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46")
		return append(b, 0x02, 0x00, 0x21, 0x01, props, 0, 0, 0, 0, 0, 0, 0)
	}
	if err := checkXzDict(bufio.NewReader(bytes.NewReader(header(40)))); err != errXzMemory {
		t.Errorf("a 4 GiB dictionary: %v", err)
	}
	if err := checkXzDict(bufio.NewReader(bytes.NewReader(header(16)))); err != nil {
		t.Errorf("a 1 MiB dictionary: %v", err)
	}
	if _, errText, code := run(t, string(header(40)), "xz", "-d"); code != 1 || errText != "xz: (stdin): Memory usage limit reached\n" {
		t.Errorf("xz -d: %q %d", errText, code)
	}
}
