//go:build !wasip1

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// These tests run tools.wasm built from this source (what users run) in a
// real VM, under
// each command name, and the same shell command with the host's Debian
// tools (the reference) on an identical copy of the input files, then
// compare standard output, standard error, the exit status and the
// files left behind.

func TestMain(m *testing.M) { vmtest.Main(m) }

// fixture is a directory to start from: a name ending in "/" is a
// directory, content starting with "->" a symbolic link, a name starting
// with "+x " an executable file.
type fixture map[string]string

// diffCase is one shell command run on both sides.
type diffCase struct {
	files  fixture
	script string
	stdin  string
	// stderr compares standard error too.
	stderr bool
	// files compares the directory afterwards.
	tree bool
	// normalize, if set, rewrites both outputs before comparing.
	normalize func(string) string
	// name names the subtest; the script does when it is empty.
	name string
}

// hostTools are the reference programs; .ci/run installs them.
var hostTools = []string{"xxd", "hexdump", "file", "tree", "zip", "unzip", "bzip2", "xz", "patch", "diff", "gzip", "tar"}

func makeFixture(t *testing.T, dir string, f fixture) {
	t.Helper()
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		content := f[n]
		mode := os.FileMode(0o644)
		if rest, ok := strings.CutPrefix(n, "+x "); ok {
			n, mode = rest, 0o755
		}
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(n, "/"):
			err := os.MkdirAll(p, 0o755)
			if err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(content, "->"):
			if err := os.Symlink(content[2:], p); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// snapshot lists a directory tree: files with their content, links with
// their targets, directories by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := make(map[string]string)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "-> " + target
		case d.IsDir():
			m[rel+"/"] = ""
		case strings.HasSuffix(p, ".bz2") || strings.HasSuffix(p, ".xz"):
			// Encoders differ in their bytes: what counts is that the
			// reference decompressor restores the input.
			prog := "/usr/bin/xz"
			if strings.HasSuffix(p, ".bz2") {
				prog = "/bin/bzip2"
			}
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			cmd := exec.Command(prog, "-dc")
			cmd.Stdin = in
			out, err := cmd.CombinedOutput()
			if err != nil {
				m[rel] = fmt.Sprintf("%s -dc: %v: %s", prog, err, out)
			} else {
				m[rel] = "decompressed: " + string(out)
			}
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type result struct {
	stdout, stderr string
	code           int
}

// hostSh runs script with the host's tools in dir.
func hostSh(t *testing.T, dir, script, stdin string) result {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC"}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// vmSh runs script in the VM in dir (a guest path).
func vmSh(t *testing.T, h *vmhost.Host, dir, script, stdin string) result {
	t.Helper()
	r := vmtest.Run(t, h, stdin, []string{"TZ=UTC"}, "sh", "-c", "cd "+dir+" && "+script)
	return result{r.Stdout, r.Stderr, r.Exit.Code}
}

func checkHostTools(t *testing.T, tools []string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(filepath.Join("/usr/bin", tool)); err != nil {
			if _, err := exec.LookPath(filepath.Join("/bin", tool)); err != nil {
				t.Fatalf("host %s (the reference; .ci/run installs it): %v", tool, err)
			}
		}
	}
}

// runCases runs each case on the host and in the VM, each in a fresh
// copy of its fixture, and compares.
func runCases(t *testing.T, cases []diffCase) { runCasesWith(t, hostTools, cases) }

// runCasesWith is runCases with the host programs the cases need.
func runCasesWith(t *testing.T, tools []string, cases []diffCase) {
	checkHostTools(t, tools)
	want, got := t.TempDir(), t.TempDir()
	h := vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: got}}})
	for i, tc := range cases {
		title := tc.name
		if title == "" {
			title = tc.script
		}
		t.Run(title, func(t *testing.T) {
			name := fmt.Sprintf("c%d", i)
			wd, gd := filepath.Join(want, name), filepath.Join(got, name)
			for _, d := range []string{wd, gd} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			makeFixture(t, wd, tc.files)
			makeFixture(t, gd, tc.files)
			w := hostSh(t, wd, tc.script, tc.stdin)
			g := vmSh(t, h, "/mnt/host/"+name, tc.script, tc.stdin)
			if tc.normalize != nil {
				w.stdout, g.stdout = tc.normalize(w.stdout), tc.normalize(g.stdout)
				w.stderr, g.stderr = tc.normalize(w.stderr), tc.normalize(g.stderr)
			}
			if g.stdout != w.stdout {
				t.Errorf("stdout differs%s", firstDiff(g.stdout, w.stdout))
			}
			if g.code != w.code {
				t.Errorf("exit = %d, want %d (stderr %q, want %q)", g.code, w.code, g.stderr, w.stderr)
			}
			if tc.stderr && g.stderr != w.stderr {
				t.Errorf("stderr differs%s", firstDiff(g.stderr, w.stderr))
			}
			if tc.tree {
				ws, gs := snapshot(t, wd), snapshot(t, gd)
				for k, v := range ws {
					if gv, ok := gs[k]; !ok {
						t.Errorf("%s: missing in the VM's result", k)
					} else if gv != v {
						t.Errorf("%s differs\n got: %q\nwant: %q", k, gv, v)
					}
				}
				for k := range gs {
					if _, ok := ws[k]; !ok {
						t.Errorf("%s: only in the VM's result", k)
					}
				}
			}
		})
	}
}

// firstDiff shows the whole outputs when they are short, else the first
// line that differs, with its number.
func firstDiff(got, want string) string {
	if len(got)+len(want) < 2000 {
		return fmt.Sprintf("\n got: %q\nwant: %q", got, want)
	}
	g, w := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf(" at line %d\n got: %q\nwant: %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf(": %d lines, want %d", len(g), len(w))
}

// hostMade runs a host command in a scratch directory holding files and
// returns the bytes of the file it leaves at out.
func hostMade(t *testing.T, files fixture, script, out string) string {
	t.Helper()
	dir := t.TempDir()
	makeFixture(t, dir, files)
	if r := hostSh(t, dir, script, ""); r.code != 0 {
		t.Fatalf("%s: %d %s", script, r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var sample = "hello world, this is a test of xxd\x00\x01\xff\n" + strings.Repeat("0123456789abcdef", 5) + "tail"

func TestXxdHexdump(t *testing.T) {
	files := fixture{"x.bin": sample, "z.bin": strings.Repeat("\x00", 64) + "x", "e": "", "my-file.1": "abc"}
	dump := hostMade(t, files, "xxd x.bin > x.hex && xxd -p x.bin > x.p", "x.hex")
	plain := hostMade(t, files, "xxd -p x.bin > x.p", "x.p")
	files["x.hex"], files["x.p"] = dump, plain
	files["odd.p"] = "6162\n6 3zz64\nzz\n41 42\n"
	files["gap.hex"] = "0010: 41 42\n0004: 43\n"
	files["back.hex"] = "0010: 41 42\n0020: 43\n"
	var cases []diffCase
	for _, args := range []string{"", "-g1 -c10", "-g3", "-g 0 -u", "-p", "-i", "-s 5 -l 7", "-c 4 -p", "-C -i", "-i -n name", "-u -i", "-c 300", "-p -c 0", "-l 0", "-s 100", "-s -5", "-s +3 -l 20", "-c 0"} {
		cases = append(cases, diffCase{files: files, script: "xxd " + args + " x.bin", stderr: true})
	}
	cases = append(cases,
		diffCase{files: files, script: "xxd my-file.1; xxd -i my-file.1; xxd e; xxd -i e"},
		diffCase{files: files, script: "xxd -i < x.bin", stderr: true},
		diffCase{files: files, script: "xxd z.bin"},
		diffCase{files: files, script: "xxd nonexist", stderr: true},
		// This xxd's usage lists only the options it has.
		diffCase{files: files, script: "xxd -Z"},
		diffCase{files: files, script: "xxd -r x.hex | xxd -p"},
		diffCase{files: files, script: "xxd -r -p x.p | xxd"},
		diffCase{files: files, script: "xxd -r -p odd.p | xxd -p"},
		diffCase{files: files, script: "xxd -r gap.hex | xxd -p"},
		diffCase{files: files, script: "xxd -r -s 3 gap.hex | xxd -p"},
		diffCase{files: files, script: "xxd -r gap.hex out.bin", tree: true},
		diffCase{files: files, script: "xxd -r back.hex out.bin", tree: true},
		diffCase{files: files, script: "xxd -r -p x.p out.bin && xxd x.bin dump", tree: true},
		diffCase{files: files, script: "xxd -r -c 8 x.hex | xxd -p"},
	)
	for _, args := range []string{"", "-C", "-n 5 -s 3", "-C -n 5 -s 3", "-s 100", "-C -s 100", "-n 0", "-C -v"} {
		for _, f := range []string{"x.bin", "z.bin", "e"} {
			cases = append(cases, diffCase{files: files, script: "hexdump " + args + " " + f, stderr: true})
		}
	}
	cases = append(cases,
		diffCase{files: files, script: "hexdump -C < x.bin"},
		diffCase{files: files, script: "hexdump -C x.bin z.bin"},
		diffCase{files: files, script: "hexdump nonexist", stderr: true},
		diffCase{files: files, script: "hexdump -C nonexist x.bin", stderr: true},
	)
	runCases(t, cases)
}

func TestFile(t *testing.T) {
	elfBytes, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	text := fixture{"ascii.txt": "hello\n"}
	files := fixture{
		"ascii.txt": "hello\n", "utf8.txt": "h\xc3\xa9llo\n", "empty": "", "dir/": "",
		"link": "->ascii.txt", "broken": "->nowhere", "elf": string(elfBytes),
		"img.png":  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x08\x08\x06\x00\x00\x00",
		"gray.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x00\x20\x01\x00\x00\x00\x01",
		"img.jpg":  "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xc0\x00\x11\x08\x00\x08\x00\x10\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01\xff\xd9",
		"img.gif":  "GIF89a\x10\x00\x08\x00\x80\x00\x00",
		"a.gz":     hostMade(t, text, "gzip -c ascii.txt > a.gz", "a.gz"),
		"n.gz":     hostMade(t, text, "gzip -n -9 -c ascii.txt > n.gz", "n.gz"),
		"a.bz2":    hostMade(t, text, "bzip2 -c ascii.txt > a.bz2", "a.bz2"),
		"a.xz":     hostMade(t, text, "xz -c ascii.txt > a.xz", "a.xz"),
		"a.zip":    hostMade(t, text, "zip -q a.zip ascii.txt", "a.zip"),
		"b.zip":    hostMade(t, fixture{"t": strings.Repeat("text ", 100)}, "zip -q b.zip t", "b.zip"),
		"a.tar":    hostMade(t, text, "tar cf a.tar ascii.txt", "a.tar"),
		"p.tar":    hostMade(t, text, "tar --format=posix -cf p.tar ascii.txt", "p.tar"),
		"j.json":   "{\"a\": [1, 2]}\n", "arr.json": "[1, 2]", "num": "1\n", "badj": "{\"a\":\n",
		"+x s.sh": "#!/bin/sh\necho hi\n", "b.sh": "#!/bin/bash\necho\n", "eb": "#!/usr/bin/env bash\necho\n",
		"es": "#!/usr/bin/env sh\necho\n", "py": "#!/usr/bin/env python3\nprint(1)\n", "py2": "#!/usr/bin/python3\nx\n",
		"pl": "#!/usr/bin/perl\nprint 1\n", "nd": "#!/usr/bin/env node\nx\n", "su": "#!/bin/sh\n\xc3\xa9\n",
		"m.wasm": "\x00asm\x01\x00\x00\x00", "crlf.txt": "a\r\nb\r\n", "nonl": "no newline", "cr": "a\rb\r",
		"bin": "\x00\x01\x02binary", "long": strings.Repeat("0", 400) + "\n", "latin": "a\xe9b\n",
		"esc": "\x1b[1mhi\n", "sp ace": "line\n",
	}
	cases := []diffCase{
		{files: files, script: "file *", stderr: true},
		{files: files, script: "file -b *"},
		{files: files, script: "file --mime-type *"},
		{files: files, script: "file -i *; file --mime -b ascii.txt"},
		{files: files, script: "file -b --mime-type * nonexist"},
		{files: files, script: "file -L link broken"},
		{files: files, script: "file nonexist; echo $?", stderr: true},
		{files: files, script: "file - < elf; file - < ascii.txt"},
		{files: files, script: "file"},
	}
	runCases(t, cases)
}

func TestTree(t *testing.T) {
	files := fixture{
		"a/b/c/": "", "e/": "", "a/x": "", "a/b/y": "", ".hid": "", "a/.h2": "", "+x z": "",
		"link": "->a/x", "broken": "->nowhere", "dlink": "->a", "empty2/": "",
		"s/B": "", "s/a": "", "s/_c": "", "s/C": "", "s/10": "", "s/9": "", "s/é": "",
	}
	var cases []diffCase
	for _, args := range []string{"", "-a", "-F", "-a -F", "-d", "-L 1", "-L 2 a", "-d -L 1", "-I 'b|x'", "-I '*.h*' -a", "--noreport", "--noreport -d a",
		"a", "s", "empty2", "nonexist", "a e", "-L 0", "-L x"} {
		cases = append(cases, diffCase{files: files, script: "tree " + args, stderr: true})
	}
	runCases(t, cases)
}

// adding normalizes zip's "adding:" lines: Go's deflate saves a different
// number of bytes than Info-ZIP's, and Info-ZIP adds files in directory
// order while this zip sorts them.
func adding(s string) string {
	s = regexp.MustCompile(`\(deflated \d+%\)`).ReplaceAllString(s, "(deflated)")
	return sortLines(s)
}

// dates hides the times of unzip -l: the two sides' input files were
// written at slightly different times.
func dates(s string) string {
	return regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`).ReplaceAllString(s, "DATE")
}

func sortLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}

func TestZipUnzip(t *testing.T) {
	src := fixture{"d/a.txt": "hello hello hello hello hello\n", "d/sub/b": "x", "d/empty": "", "d/big": strings.Repeat("line of text\n", 5000), "top": "top\n"}
	hostZip := hostMade(t, src, "zip -q -r o.zip d top", "o.zip")
	hostJunk := hostMade(t, src, "zip -q -j j.zip d/a.txt d/sub/b", "j.zip")
	slip := hostMade(t, nil, `python3 -c "
import zipfile
z = zipfile.ZipFile('s.zip', 'w')
z.writestr('../evil', 'x')
z.writestr('/abs/f', 'y')
z.writestr('ok/../../e2', 'z')
z.close()"`, "s.zip")
	// zip rounds an odd second up in the DOS time (10:21:00) and keeps
	// the exact one (10:20:59) in the extended timestamp, which unzip -l
	// shows.
	odd := hostMade(t, fixture{"t59": "x"}, "touch -d '2026-01-02 10:20:59' t59 && zip -q r.zip t59", "r.zip")
	withZips := fixture{"o.zip": hostZip, "j.zip": hostJunk, "bad.zip": "junk", "t/s.zip": slip, "r.zip": odd}
	for k, v := range src {
		withZips["src/"+k] = v
	}
	cases := []diffCase{
		// Our zip, the host's unzip: the round trip must restore the tree.
		{files: src, script: "zip -r o.zip d top > /dev/null && mkdir x && cd x && unzip -q ../o.zip && cd .. && rm o.zip", tree: true},
		{files: src, script: "zip -r o.zip d top", normalize: adding},
		{files: src, script: "zip -q -j j.zip d/a.txt d/sub/b && unzip -l j.zip", normalize: dates},
		{files: src, script: "zip -r o.zip d > /dev/null && zip o.zip top d/a.txt", normalize: adding},
		{files: src, script: "zip o.zip nonexist; echo $?", stderr: true},
		{files: src, script: "zip o.zip top nonexist", stderr: true},
		// The host's zip, our unzip.
		{files: withZips, script: "unzip -l o.zip", stderr: true},
		{files: withZips, script: "unzip -l o.zip d/a.txt 'd/sub/*'", stderr: true},
		{files: withZips, script: "unzip -l j.zip", stderr: true},
		{files: withZips, script: "unzip -l r.zip", stderr: true},
		{files: withZips, script: "unzip -t o.zip; unzip -tq j.zip; unzip -t o.zip top 'd/*'; unzip -l o.zip '*b' 'd/[ae]*'", stderr: true},
		{files: src, script: "zip -q -r o.zip d top && unzip -t o.zip", normalize: sortLines},
		{files: withZips, script: "unzip o.zip", stderr: true, tree: true},
		{files: withZips, script: "unzip -q o.zip", stderr: true, tree: true},
		{files: withZips, script: "unzip -d out o.zip", stderr: true, tree: true},
		{files: withZips, script: "unzip -o -d out o.zip d/a.txt", stderr: true, tree: true},
		{files: withZips, script: "unzip -q o.zip && unzip -o o.zip && unzip -n o.zip", stderr: true, tree: true},
		{files: withZips, script: "unzip -q o.zip && unzip -q o.zip < /dev/null; echo $?", tree: true},
		{files: withZips, script: "unzip -p o.zip d/a.txt top"},
		// Entry names never leave the target directory.
		{files: withZips, script: "cd t && unzip s.zip; echo $?", stderr: true, tree: true},
		{files: withZips, script: "unzip -j -q j.zip", tree: true},
		{files: withZips, script: "unzip -o o.zip nomatch; echo $?", stderr: true},
		{files: withZips, script: "unzip nope.zip; echo $?", stderr: true},
		{files: withZips, script: "unzip bad.zip; echo $?", stderr: true},
		{files: withZips, script: "unzip -l o; echo $?", stderr: true},
	}
	runCases(t, cases)
}

func TestBzip2Xz(t *testing.T) {
	big := strings.Repeat("some text that repeats\n", 20000)
	text := fixture{"a": "hello\n", "big": big}
	base := fixture{
		"a": "hello\n", "b": "bye\n", "big": big, "dd/": "", "j.bz2": "junk", "j.xz": "junk",
		"h.bz2":   hostMade(t, text, "bzip2 -c big > h.bz2", "h.bz2"),
		"h.xz":    hostMade(t, text, "xz -c big > h.xz", "h.xz"),
		"two.bz2": hostMade(t, text, "bzip2 -c a > two.bz2 && bzip2 -c a >> two.bz2", "two.bz2"),
		"two.xz":  hostMade(t, text, "xz -c a > two.xz && xz -c a >> two.xz", "two.xz"),
		"h1.xz":   hostMade(t, text, "xz -1 -C crc32 -c big > h1.xz", "h1.xz"),
		"t.bz2":   hostMade(t, text, "bzip2 -c big | head -c 300 > t.bz2", "t.bz2"),
		"t.xz":    hostMade(t, text, "xz -c big | head -c 300 > t.xz", "t.xz"),
	}
	var cases []diffCase
	for _, z := range []struct{ prog, un, cat, ext string }{{"bzip2", "bunzip2", "bzcat", "bz2"}, {"xz", "unxz", "xzcat", "xz"}} {
		r := strings.NewReplacer("PROG", z.prog, "UN", z.un, "CAT", z.cat, "EXT", z.ext)
		for _, s := range []string{
			"PROG nonexist; echo $?",
			"PROG -k a; echo $?; PROG -k a; echo $?; PROG -f a; echo $?",
			"PROG a b && PROG -d a.EXT && UN b.EXT",
			"PROG -dk h.EXT && cmp h big",
			"CAT h.EXT | cmp - big",
			"CAT two.EXT",
			"PROG -dc two.EXT a.EXT nonexist; echo $?",
			"PROG -d j.EXT; echo $?",
			"PROG -d < j.EXT; echo $?",
			"PROG -d t.EXT; echo $?",
			"CAT t.EXT > /dev/null; echo $?",
			"cp a c; UN c; echo $?",
			"PROG -d a; echo $?",
			"PROG dd; echo $?",
			"PROG -k a && PROG a.EXT; echo $?",
			// Our compressor, the reference decompressor (in the next
			// case) and the other way round: these leave files the
			// tree comparison checks.
			"PROG -c big > big.EXT && PROG -9 -k b && PROG -1 < a > a1.EXT",
		} {
			cases = append(cases, diffCase{files: base, script: r.Replace(s), stderr: true, tree: !strings.Contains(s, "PROG -c big") && !strings.Contains(s, "PROG -9")})
		}
	}
	cases = append(cases,
		diffCase{files: base, script: "xz -T0 -c a | xz -dc; xz -T 2 -k b; echo $?", tree: true},
		diffCase{files: base, script: "xz -dk h1.xz 2>&1; cmp h1 big"},
		diffCase{files: base, script: "bzip2 -T2 a; echo $?"},
	)
	runCases(t, cases)
}

// TestCompressRoundTrip checks what this bzip2 and xz write with the
// host's decompressors, and what this zip writes with Info-ZIP's unzip -t.
func TestCompressRoundTrip(t *testing.T) {
	checkHostTools(t, hostTools)
	dir := t.TempDir()
	h := vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: dir}}})
	big := strings.Repeat("some text that repeats\n", 20000) + "\x00\xff binary tail"
	makeFixture(t, dir, fixture{"big": big, "d/a": "hello\n", "d/sub/b": big, "d/e": ""})
	for _, level := range []string{"-1", "-6", "-9"} {
		r := vmSh(t, h, "/mnt/host", "bzip2 "+level+" -c big > big.bz2 && xz "+level+" -c big > big.xz && zip -q "+level+" -r o"+level+".zip d", "")
		if r.code != 0 {
			t.Fatalf("%s: %d %s", level, r.code, r.stderr)
		}
		for _, check := range []string{"bzip2 -dc big.bz2 | cmp - big", "xz -dc big.xz | cmp - big", "unzip -tq o" + level + ".zip", "rm -rf x && mkdir x && cd x && unzip -q ../o" + level + ".zip && diff -r d ../d"} {
			if w := hostSh(t, dir, check, ""); w.code != 0 {
				t.Errorf("%s %s: %d %s %s", level, check, w.code, w.stdout, w.stderr)
			}
		}
	}
}

func TestPatch(t *testing.T) {
	checkHostTools(t, hostTools)
	lines := func(from, to int, edit map[int]string) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			if s, ok := edit[i]; ok {
				b.WriteString(s)
				continue
			}
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	oldTree := fixture{
		"old/a":       lines(1, 30, nil),
		"old/del":     "gone\n",
		"old/nonl":    "x\n",
		"old/sub/s":   "keep\nchange\n",
		"+x old/run":  "#!/bin/sh\necho one\n",
		"old/same":    "same\n",
		"old/eofnonl": "a\nb",
	}
	newTree := fixture{
		"new/a":       lines(1, 30, map[int]string{5: "five\nfive and a half\n", 25: "twentyfive\n"}),
		"new/add":     "fresh\n",
		"new/nonl":    "x\ny",
		"new/sub/s":   "keep\nchanged\n",
		"new/sub/n/t": "deep new file\n",
		"+x new/run":  "#!/bin/sh\necho two\n",
		"new/same":    "same\n",
		"new/eofnonl": "a\nc",
	}
	both := fixture{}
	for k, v := range oldTree {
		both[k] = v
	}
	for k, v := range newTree {
		both[k] = v
	}
	dir := t.TempDir()
	makeFixture(t, dir, both)
	diffOut := func(script string) string {
		r := hostSh(t, dir, script, "")
		if r.code > 1 {
			t.Fatalf("%s: %d %s", script, r.code, r.stderr)
		}
		return r.stdout
	}
	full := diffOut("diff -ruN old new")
	single := diffOut("diff -u old/a new/a")
	gitDiff := diffOut("git diff --no-index old new")
	// The tree the patches apply to, as the working directory.
	work := func(extra fixture) fixture {
		f := fixture{"p.diff": full, "a.diff": single, "g.diff": gitDiff, "garbage": "not a patch\n",
			"bad.diff": "--- a\n+++ a\n@@ -1,2 +1,2 @@\n-x\nbad\n",
			// The first file is patched before the second's bad hunk.
			"bad2.diff": single + "--- old/same\n+++ new/same\n@@ -1,2 +1,2 @@\n-same\nbad\n"}
		for k, v := range oldTree {
			f[strings.Replace(k, "old/", "w/", 1)] = v
		}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	shifted := work(fixture{"w/a": "0\n00\n000\n" + lines(1, 30, nil)})
	conflict := work(fixture{"w/a": lines(1, 30, map[int]string{25: "XX\n"})})
	applied := fixture{"p.diff": full, "g.diff": gitDiff}
	for k, v := range newTree {
		applied[strings.Replace(k, "new/", "w/", 1)] = v
	}
	cases := []diffCase{
		{files: work(nil), script: "cd w && patch -p1 < ../p.diff", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch -p1 -i ../p.diff && ls -l run | cut -c1-10", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch --dry-run -p1 < ../p.diff", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch -p1 -i ../g.diff", stderr: true, tree: true},
		{files: work(nil), script: "patch -p0 < a.diff", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch < ../a.diff", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch -o out.txt -p1 < ../a.diff", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch -p1 a < ../a.diff", stderr: true, tree: true},
		{files: shifted, script: "cd w && patch -p1 < ../a.diff", stderr: true, tree: true},
		{files: conflict, script: "cd w && patch -p1 < ../a.diff", stderr: true, tree: true},
		{files: conflict, script: "cd w && patch --dry-run -p1 < ../a.diff", stderr: true, tree: true},
		{files: applied, script: "cd w && patch -R -p1 < ../p.diff", stderr: true, tree: true},
		{files: applied, script: "cd w && patch -p1 -R -i ../g.diff", stderr: true, tree: true},
		{files: applied, script: "cd w && patch -p1 < ../p.diff", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch -p1 -R < ../p.diff", stderr: true, tree: true},
		{files: work(nil), script: "patch -p1 < p.diff", stderr: true, tree: true},
		{files: work(nil), script: "patch -p1 -i nonexist", stderr: true, tree: true},
		{files: work(nil), script: "patch < garbage", stderr: true, tree: true},
		{files: work(nil), script: "patch < /dev/null", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch -p9 < ../a.diff", stderr: true, tree: true},
		{files: work(nil), script: "patch < bad.diff", stderr: true, tree: true},
		{files: work(nil), script: "cd w && patch -p1 < ../bad2.diff", stderr: true, tree: true},
		{files: shifted, script: "cd w && patch -p1 --dry-run < ../p.diff", stderr: true, tree: true},
	}
	runCases(t, cases)
}
