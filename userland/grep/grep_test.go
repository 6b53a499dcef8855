package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree creates files (name -> content) under a new temp dir and makes it
// the working directory. A name ending in "/" is a directory; content
// starting with "->" makes a symbolic link.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir
}

func grep(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"grep"}, args...), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

var corpus = map[string]string{
	"a.txt":          "foo bar\nbaz\nFoo qux\nfoobar\nbar foo\n\nlast line foo",
	"b.txt":          "one\ntwo foo\nthree\nfour\nfive\nsix foo\nseven\neight\nnine\nten foo\n",
	"d/x.go":         "x foo\n",
	"d/sub/y.txt":    "y foo\n",
	"d/bin.dat":      "bin\x00foo\n",
	"d/link.txt":     "->../a.txt",
	"-dash":          "foo -dash\n",
	"enc.txt":        "a\xff\na\nb\n",
	"empty":          "",
	"pats":           "baz\nqux\n",
	"d/deep/er/z.go": "z foo\n",
}

func TestGrep(t *testing.T) {
	tree(t, corpus)
	tests := []struct {
		name    string
		stdin   string
		args    []string
		out     string
		errOut  string
		code    int
		errPart bool // errOut need only be contained in stderr
	}{
		{name: "basic", args: []string{"foo", "a.txt"}, out: "foo bar\nfoobar\nbar foo\nlast line foo\n"},
		{name: "no match", args: []string{"zzz", "a.txt"}, code: 1},
		{name: "line numbers", args: []string{"-n", "baz", "a.txt"}, out: "2:baz\n"},
		{name: "two files", args: []string{"-n", "qux", "a.txt", "b.txt"}, out: "a.txt:3:Foo qux\n"},
		{name: "ignore case", args: []string{"-ic", "FOO", "a.txt"}, out: "5\n"},
		{name: "invert count", args: []string{"-vc", "foo", "b.txt"}, out: "7\n"},
		{name: "count files", args: []string{"-c", "foo", "a.txt", "b.txt"}, out: "a.txt:4\nb.txt:3\n"},
		{name: "list", args: []string{"-l", "qux", "a.txt", "b.txt"}, out: "a.txt\n"},
		{name: "list without", args: []string{"-L", "qux", "a.txt", "b.txt"}, out: "b.txt\n"},
		{name: "list without none matched", args: []string{"-L", "zzz", "a.txt"}, out: "a.txt\n", code: 1},
		{name: "words", args: []string{"-w", "foo", "a.txt"}, out: "foo bar\nbar foo\nlast line foo\n"},
		{name: "whole line", args: []string{"-x", "baz", "a.txt"}, out: "baz\n"},
		{name: "only matching", args: []string{"-o", "fo*", "a.txt"}, out: "foo\nfoo\nfoo\nfoo\n"},
		{name: "ere", args: []string{"-E", "^(baz|Foo)", "a.txt"}, out: "baz\nFoo qux\n"},
		{name: "bre interval", args: []string{"-o", `o\{2\}b`, "a.txt"}, out: "oob\n"},
		{name: "bre literal plus", stdin: "a+b\nab\n", args: []string{"a+b"}, out: "a+b\n"},
		{name: "fixed", args: []string{"-F", "o b", "a.txt"}, out: "foo bar\n"},
		{name: "multiple e", args: []string{"-e", "baz", "-e", "qux", "a.txt"}, out: "baz\nFoo qux\n"},
		{name: "pattern file", args: []string{"-f", "pats", "a.txt"}, out: "baz\nFoo qux\n"},
		{name: "empty pattern file", args: []string{"-f", "empty", "a.txt"}, code: 1},
		{name: "empty pattern file inverted", args: []string{"-vc", "-f", "empty", "a.txt"}, out: "7\n"},
		{name: "newline separated", args: []string{"baz\nqux", "a.txt"}, out: "baz\nFoo qux\n"},
		{name: "max count", args: []string{"-m1", "foo", "b.txt"}, out: "two foo\n"},
		{name: "max count context", args: []string{"-n", "-m1", "-A2", "foo", "b.txt"}, out: "2:two foo\n3-three\n4-four\n"},
		{name: "after space arg", args: []string{"-A", "1", "six", "b.txt"}, out: "six foo\nseven\n"},
		{name: "context separators", args: []string{"-C1", "foo", "b.txt"},
			out: "one\ntwo foo\nthree\n--\nfive\nsix foo\nseven\n--\nnine\nten foo\n"},
		{name: "digit context", args: []string{"-1n", "six", "b.txt"}, out: "5-five\n6:six foo\n7-seven\n"},
		{name: "before context", args: []string{"-B2", "six", "b.txt"}, out: "four\nfive\nsix foo\n"},
		{name: "zero context separator", args: []string{"-A0", "foo", "b.txt"}, out: "two foo\n--\nsix foo\n--\nten foo\n"},
		{name: "group separator", args: []string{"--group-separator=##", "-A0", "foo", "b.txt"}, out: "two foo\n##\nsix foo\n##\nten foo\n"},
		{name: "no group separator", args: []string{"--no-group-separator", "-A0", "foo", "b.txt"}, out: "two foo\nsix foo\nten foo\n"},
		{name: "combined flags", args: []string{"-rnic", "FOO", "d/sub"}, out: "d/sub/y.txt:1\n"},
		{name: "options after operands", args: []string{"baz", "a.txt", "-n"}, out: "2:baz\n"},
		{name: "double dash", args: []string{"-n", "--", "-dash", "-dash"}, out: "1:foo -dash\n"},
		{name: "double dash pattern", args: []string{"--", "foo", "-dash"}, out: "foo -dash\n"},
		{name: "escaped dash pattern", args: []string{`\-dash`, "--", "-dash"}, out: "foo -dash\n"},
		{name: "regexp option", args: []string{"-e", "-dash", "--", "-dash"}, out: "foo -dash\n"},
		{name: "dash operand is an option", args: []string{"foo", "-dash"}, code: 2, errOut: "grep: invalid argument ‘ash’ for ‘--directories’", errPart: true},
		{name: "recursive", args: []string{"-r", "foo", "d"}, out: "d/deep/er/z.go:z foo\nd/sub/y.txt:y foo\nd/x.go:x foo\n",
			errOut: "grep: d/bin.dat: binary file matches\n"},
		{name: "recursive include", args: []string{"-r", "--include=*.go", "foo", "d"}, out: "d/deep/er/z.go:z foo\nd/x.go:x foo\n"},
		{name: "recursive exclude dir", args: []string{"-r", "--exclude-dir=deep", "--exclude=*.dat", "foo", "d"}, out: "d/sub/y.txt:y foo\nd/x.go:x foo\n"},
		{name: "recursive cwd", args: []string{"-rl", "y foo"}, out: "d/sub/y.txt\n"},
		{name: "recursive single file", args: []string{"-r", "x", "d/x.go"}, out: "x foo\n"},
		{name: "recursive follows command line link", args: []string{"-rc", "qux", "d/link.txt"}, out: "1\n"},
		{name: "dereference", args: []string{"-Rl", "qux", "d"}, out: "d/link.txt\n"},
		{name: "directory without r", args: []string{"foo", "d"}, errOut: "grep: d: Is a directory\n", code: 2},
		{name: "directory skip", args: []string{"-d", "skip", "foo", "d"}, code: 1},
		{name: "binary file", args: []string{"foo", "d/bin.dat"}, errOut: "grep: d/bin.dat: binary file matches\n"},
		{name: "binary count", args: []string{"-c", "foo", "d/bin.dat"}, out: "1\n"},
		{name: "binary text", args: []string{"-a", "foo", "d/bin.dat"}, out: "bin\x00foo\n"},
		{name: "binary without match", args: []string{"-I", "foo", "d/bin.dat"}, code: 1},
		{name: "encoding error line", args: []string{"-n", "a", "enc.txt"}, out: "2:a\n", errOut: "grep: enc.txt: binary file matches\n"},
		{name: "stdin", stdin: "x\nfoo\n", args: []string{"-H", "foo"}, out: "(standard input):foo\n"},
		{name: "stdin dash label", stdin: "foo\n", args: []string{"--label=in", "-c", "foo", "-", "b.txt"}, out: "in:1\nb.txt:3\n"},
		{name: "missing file", args: []string{"foo", "nope", "a.txt"}, out: "a.txt:foo bar\na.txt:foobar\na.txt:bar foo\na.txt:last line foo\n",
			errOut: "grep: nope: No such file or directory\n", code: 2},
		{name: "missing file silent", args: []string{"-s", "foo", "nope"}, code: 2},
		{name: "quiet wins over error", args: []string{"-q", "foo", "nope", "a.txt"}, errOut: "grep: nope: No such file or directory\n"},
		{name: "quiet no match", args: []string{"-q", "zzz", "a.txt"}, code: 1},
		{name: "no filename", args: []string{"-h", "qux", "a.txt", "b.txt"}, out: "Foo qux\n"},
		{name: "with filename", args: []string{"-H", "qux", "a.txt"}, out: "a.txt:Foo qux\n"},
		{name: "null after name", args: []string{"-lZ", "qux", "a.txt"}, out: "a.txt\x00"},
		{name: "byte offset", args: []string{"-bo", "baz", "a.txt"}, out: "8:baz\n"},
		{name: "null data", stdin: "a\nfoo\x00bar\x00", args: []string{"-z", "foo"}, out: "a\nfoo\x00"},
		{name: "color accepted", args: []string{"--color=never", "baz", "a.txt"}, out: "baz\n"},
		{name: "warning", stdin: "a\n", args: []string{"-E", "*a"}, out: "a\n", errOut: "grep: warning: * at start of expression\n"},
		{name: "bad regex", args: []string{"a\\{1", "a.txt"}, errOut: "grep: Unmatched \\{\n", code: 2},
		{name: "backref unsupported", args: []string{`\(a\)\1`, "a.txt"}, errOut: "grep: back-references are not supported\n", code: 2},
		{name: "bad option", args: []string{"-k", "x"}, errOut: "grep: invalid option -- 'k'\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", code: 2},
		{name: "unknown long", args: []string{"--frob", "x"}, errOut: "grep: unrecognized option '--frob'\n", code: 2, errPart: true},
		{name: "ambiguous long", args: []string{"--co", "x"}, errOut: "grep: option '--co' is ambiguous; possibilities: '--context' '--color' '--colour' '--count'\n", code: 2, errPart: true},
		{name: "abbreviated long", args: []string{"--coun", "foo", "b.txt"}, out: "3\n"},
		{name: "missing argument", args: []string{"-e"}, errOut: "grep: option requires an argument -- 'e'\n", code: 2, errPart: true},
		{name: "no pattern", errOut: "Usage: grep [OPTION]... PATTERNS [FILE]...\n", code: 2, errPart: true},
		{name: "bad context", args: []string{"-A", "x", "y"}, errOut: "grep: x: invalid context length argument\n", code: 2},
		{name: "bad max count", args: []string{"-m", "x", "y"}, errOut: "grep: invalid max count\n", code: 2},
		{name: "conflicting matchers", args: []string{"-E", "-F", "x"}, errOut: "grep: conflicting matchers specified\n", code: 2},
		{name: "perl", stdin: "a1\nb\n", args: []string{"-P", `\d`}, out: "a1\n"},
		{name: "help", args: []string{"--help"}, out: helpText},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := grep(t, tc.stdin, tc.args...)
			if out != tc.out {
				t.Errorf("stdout = %q, want %q", out, tc.out)
			}
			if tc.errPart {
				if !strings.Contains(errOut, tc.errOut) {
					t.Errorf("stderr = %q, want it to contain %q", errOut, tc.errOut)
				}
			} else if errOut != tc.errOut {
				t.Errorf("stderr = %q, want %q", errOut, tc.errOut)
			}
			if code != tc.code {
				t.Errorf("exit = %d, want %d", code, tc.code)
			}
		})
	}
}

func TestSymlinkLoop(t *testing.T) {
	tree(t, map[string]string{"top/f": "foo\n", "top/loop": "->.."})
	out, errOut, code := grep(t, "", "-R", "foo", "top")
	if out != "top/f:foo\n" || code != 0 {
		t.Errorf("out %q code %d", out, code)
	}
	if !strings.Contains(errOut, "warning: recursive directory loop") {
		t.Errorf("stderr %q lacks the loop warning", errOut)
	}
	// -r never follows links found while recursing.
	out, errOut, code = grep(t, "", "-r", "foo", "top")
	if out != "top/f:foo\n" || errOut != "" || code != 0 {
		t.Errorf("-r: out %q err %q code %d", out, errOut, code)
	}
}

// Hostile input: a line longer than the bound fails cleanly instead of
// growing memory without limit.
func TestLongLineBounded(t *testing.T) {
	line := strings.Repeat("x", 1<<20)
	var out, errb bytes.Buffer
	code := runLimited([]string{"grep", "y"}, strings.NewReader(line), &out, &errb, 64<<10)
	if code != 2 || errb.String() != "grep: memory exhausted\n" {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
	// Within the bound the same line is fine.
	code = runLimited([]string{"grep", "-c", "x"}, strings.NewReader(line), &out, &errb, 2<<20)
	if code != 0 || out.String() != "1\n" {
		t.Fatalf("code %d stdout %q", code, out.String())
	}
}

// Hostile input: -B with a huge count keeps at most the bound in memory.
func TestBeforeContextBounded(t *testing.T) {
	in := strings.Repeat(strings.Repeat("y", 1000)+"\n", 200) + "x\n"
	var out, errb bytes.Buffer
	code := runLimited([]string{"grep", "-B", "999999999", "x"}, strings.NewReader(in), &out, &errb, 64<<10)
	if code != 2 || errb.String() != "grep: memory exhausted\n" {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
	out.Reset()
	code = runLimited([]string{"grep", "-c", "-B", "999999999", "x"}, strings.NewReader(in), &out, &errb, 64<<10)
	if code != 0 || out.String() != "1\n" {
		t.Fatalf("-c: code %d stdout %q", code, out.String())
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, syscall.EIO
}

func TestWriteError(t *testing.T) {
	in := strings.Repeat("foo\n", 100000)
	var errb bytes.Buffer
	w := &failWriter{}
	code := run([]string{"grep", "foo"}, strings.NewReader(in), w, &errb)
	if code != 2 || errb.String() != "grep: write error: Input/output error\n" {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
	if w.n > 1 {
		t.Errorf("%d writes after the first failure; grep should stop", w.n-1)
	}
}

func TestBrokenPipeIsQuiet(t *testing.T) {
	var errb bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { return 0, syscall.EPIPE })
	code := run([]string{"grep", "foo"}, strings.NewReader(strings.Repeat("foo\n", 100000)), w, &errb)
	if code != 2 || errb.Len() != 0 {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestReadError(t *testing.T) {
	var out, errb bytes.Buffer
	r := readerFunc(func([]byte) (int, error) { return 0, errors.New("boom") })
	code := run([]string{"grep", "x"}, r, &out, &errb)
	if code != 2 || errb.String() != "grep: (standard input): Input/output error\n" {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
