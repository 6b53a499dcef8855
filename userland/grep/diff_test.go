package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gnuGrep is the differential oracle: GNU grep 3.x, run in the C.UTF-8
// locale (the locale this implementation assumes).
const gnuGrep = "/usr/bin/grep"

var diffTree = map[string]string{
	"a.txt":       "foo bar\nbaz\nFoo qux\nfoobar\nbar foo\n\nlast line foo",
	"b.txt":       "one\ntwo foo\nthree\nfour\nfive\nsix foo\nseven\neight\nnine\nten foo\n",
	"w.txt":       "foo_bar foo-baz xfoo foo\n-foo- a-b\nfoobar foofoo\nété xété\n",
	"code.go":     "package main\n\nfunc main() {\n\tfmt.Println(\"hi\") // TODO: x\n}\n",
	"enc.txt":     "a\xff\na\nb\n",
	"bin.dat":     "bin\x00foo\n",
	"crlf.txt":    "l1\r\nfoo\r\n",
	"pats":        "baz\nqux\n",
	"empty":       "",
	"z.dat":       "a\x00b foo\x00c\x00foo d\x00",
	"d/x.go":      "x foo\n",
	"d/sub/y.txt": "y foo\n",
	"d/sub/z.go":  "z foo\nz bar\n",
	"d/.hid/h.go": "h foo\n",
	"d/bin.dat":   "bin\x00foo\n",
}

type diffCase struct {
	args      []string
	stdin     string
	stderr    bool // compare standard error too
	sortLines bool // recursive output: GNU lists directories in readdir order
}

var diffCases = []diffCase{
	{args: []string{"foo", "a.txt"}},
	{args: []string{"-n", "foo", "a.txt", "b.txt"}},
	{args: []string{"-i", "foo", "a.txt"}},
	{args: []string{"-v", "foo", "a.txt"}},
	{args: []string{"-c", "foo", "a.txt", "b.txt"}},
	{args: []string{"-cv", "foo", "b.txt"}},
	{args: []string{"-l", "foo", "a.txt", "b.txt", "nonexist"}, stderr: true},
	{args: []string{"-L", "qux", "a.txt", "b.txt"}},
	{args: []string{"-L", "zzz", "a.txt"}},
	{args: []string{"-w", "foo", "a.txt", "w.txt"}},
	{args: []string{"-ow", "foo", "w.txt"}},
	{args: []string{"-ow", "foo.*", "w.txt"}},
	{args: []string{"-w", "-E", "foo|foobar", "w.txt"}},
	{args: []string{"-ow", "[a-z]*", "w.txt"}},
	{args: []string{"-ow", "été", "w.txt"}},
	{args: []string{"-x", "baz", "a.txt"}},
	{args: []string{"-x", "-e", "baz", "-e", "foo.*", "a.txt"}},
	{args: []string{"-x", "-w", "-o", "baz", "a.txt"}},
	{args: []string{"-o", "fo*", "a.txt"}},
	{args: []string{"-o", "-b", "o", "a.txt"}},
	{args: []string{"-bn", "foo", "a.txt"}},
	{args: []string{"-o", "b*", "a.txt"}},
	{args: []string{"-E", "fo+|ba[rz]", "a.txt"}},
	{args: []string{"-E", "^(baz|Foo)", "a.txt"}},
	{args: []string{"-oE", "a|ab", "-e", "fo{1,2}"}, stdin: "xab foooo\n"},
	{args: []string{"-F", "o b", "a.txt"}},
	{args: []string{"-F", "-x", "baz", "a.txt"}},
	{args: []string{"-Fw", "foo-baz", "w.txt"}},
	{args: []string{`fo\{2\}`, "a.txt"}},
	{args: []string{`\(foo\|baz\)$`, "a.txt"}},
	{args: []string{`a+?(){}|`}, stdin: "a+?(){}|\nab\n"},
	{args: []string{`^*x`}, stdin: "*x\nx\n"},
	{args: []string{`a^b$c`}, stdin: "a^b$c\nab\n"},
	{args: []string{"-o", `[]a-]*`}, stdin: "]a-b\n"},
	{args: []string{"-o", `[[:upper:]][[:lower:]]*`}, stdin: "Foo Été bar\n"},
	{args: []string{"-io", `[[:upper:]]x`}, stdin: "ax AX\n"},
	{args: []string{"-c", `\w\+`, "a.txt"}},
	{args: []string{"-E", "*a"}, stdin: "a\n*a\n", stderr: true},
	{args: []string{"-e", "foo", "-e", "baz", "a.txt"}},
	{args: []string{"foo\nbaz", "a.txt"}},
	{args: []string{"-f", "pats", "a.txt"}},
	{args: []string{"-F", "-f", "pats", "-o", "a.txt"}},
	{args: []string{"-f", "empty", "a.txt"}},
	{args: []string{"-v", "-f", "empty", "a.txt"}},
	{args: []string{"", "a.txt"}},
	{args: []string{"-v", "", "a.txt"}},
	{args: []string{"-w", "", "a.txt"}},
	{args: []string{"-n", "-C1", "foo", "b.txt"}},
	{args: []string{"-A1", "foo", "b.txt"}},
	{args: []string{"-B2", "-n", "foo", "b.txt"}},
	{args: []string{"-A0", "foo", "b.txt"}},
	{args: []string{"-C1", "foo", "a.txt", "b.txt"}},
	{args: []string{"-2", "six", "b.txt"}},
	{args: []string{"-o", "-C1", "foo", "b.txt"}},
	{args: []string{"-vn", "-A1", "foo", "b.txt"}},
	{args: []string{"--group-separator=XX", "-A1", "foo", "b.txt"}},
	{args: []string{"--no-group-separator", "-A1", "foo", "b.txt"}},
	{args: []string{"-m2", "foo", "b.txt"}},
	{args: []string{"-m1", "-A2", "-n", "foo", "b.txt"}},
	{args: []string{"-m1", "-c", "foo", "b.txt"}},
	{args: []string{"-m2", "-v", "foo", "b.txt"}},
	{args: []string{"-n", "-B1", "-A1", "-m2", "foo", "b.txt"}},
	{args: []string{"-h", "foo", "a.txt", "b.txt"}},
	{args: []string{"-H", "foo", "a.txt"}},
	{args: []string{"-Z", "-l", "foo", "a.txt", "b.txt"}},
	{args: []string{"-T", "-n", "foo", "a.txt"}},
	{args: []string{"-q", "foo", "nonexist", "a.txt"}},
	{args: []string{"-q", "zzz", "a.txt"}},
	{args: []string{"-s", "foo", "nonexist", "a.txt"}, stderr: true},
	{args: []string{"foo", "nonexist", "a.txt"}, stderr: true},
	{args: []string{"foo", "d"}, stderr: true},
	{args: []string{"-d", "skip", "foo", "d", "a.txt"}},
	{args: []string{"foo", "bin.dat"}, stderr: true},
	{args: []string{"-c", "foo", "bin.dat"}},
	{args: []string{"-a", "foo", "bin.dat"}},
	{args: []string{"-I", "foo", "bin.dat"}},
	{args: []string{"-n", "a", "enc.txt"}, stderr: true},
	{args: []string{"-C1", "b", "enc.txt"}},
	{args: []string{"foo", "crlf.txt"}},
	{args: []string{"-c", "foo$", "crlf.txt"}},
	{args: []string{"-z", "foo", "z.dat"}},
	{args: []string{"-r", "foo", "d"}, sortLines: true, stderr: true},
	{args: []string{"-rn", "foo"}, sortLines: true},
	{args: []string{"-rl", "foo", "."}, sortLines: true},
	{args: []string{"-rc", "foo", "d"}, sortLines: true},
	{args: []string{"-rL", "bar", "d"}, sortLines: true},
	{args: []string{"-r", "--include=*.go", "foo", "d"}, sortLines: true},
	{args: []string{"-r", "--exclude=*.go", "foo", "d"}, sortLines: true},
	{args: []string{"-r", "--exclude-dir=sub", "foo", "d"}, sortLines: true},
	{args: []string{"-r", "--exclude-dir=.*", "-l", "foo"}, sortLines: true},
	{args: []string{"-r", "--include=*.go", "--exclude=x*", "foo", "d"}, sortLines: true},
	{args: []string{"-rh", "foo", "d/sub"}, sortLines: true},
	{args: []string{"-r", "foo", "a.txt"}},
	{args: []string{"--include=*.go", "foo", "a.txt", "code.go"}},
	{args: []string{"-rni", "TODO", "."}, sortLines: true},
	{args: []string{"-A3", "func", "code.go"}},
	{args: []string{"-A", "3", "func", "code.go"}},
	{args: []string{"foo", "a.txt", "-n", "--", "-x"}},
	{args: []string{"-e", "-x", "--", "a.txt"}},
	{args: []string{"-H", "foo"}, stdin: "foo\nbar\n"},
	{args: []string{"--label=in", "-c", "foo", "-", "b.txt"}, stdin: "foo\n"},
	{args: []string{"--colour=never", "--color", "foo", "a.txt"}},
	{args: []string{"-k", "foo", "a.txt"}, stderr: true},
	{args: []string{"--frob", "a.txt"}, stderr: true},
	{args: []string{"--co", "foo", "a.txt"}, stderr: true},
	{args: []string{"--coun", "foo", "a.txt"}},
	{args: []string{"-A", "x", "foo", "a.txt"}, stderr: true},
	{args: []string{"-e"}, stderr: true},
	{stderr: true},
	{args: []string{`a\{1`, "a.txt"}, stderr: true},
	{args: []string{"-E", "a{1,2,3}", "a.txt"}, stderr: true},
	{args: []string{"[[:foo:]]", "a.txt"}, stderr: true},
	{args: []string{"[:space:]", "a.txt"}, stderr: true},
	{args: []string{"[z-a]", "a.txt"}, stderr: true},
	{args: []string{`\(`, "a.txt"}, stderr: true},
	{args: []string{"-E", "a)", "a.txt"}},
}

func TestDifferential(t *testing.T) {
	out, err := exec.Command(gnuGrep, "--version").Output()
	if err != nil || !bytes.HasPrefix(out, []byte("grep (GNU grep) 3.")) {
		t.Fatalf("the differential oracle %s must be GNU grep 3.x (Debian package grep): %v %q", gnuGrep, err, out)
	}
	dir := tree(t, diffTree)
	for _, tc := range diffCases {
		name := strings.Join(tc.args, " ")
		if name == "" {
			name = "(no args)"
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(gnuGrep, tc.args...)
			cmd.Args[0] = "grep"
			cmd.Dir = dir
			cmd.Env = oracleEnv()
			cmd.Stdin = strings.NewReader(tc.stdin)
			var wantOut, wantErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
			wantCode := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				wantCode = ee.ExitCode()
			}
			gotOut, gotErr, gotCode := grep(t, tc.stdin, tc.args...)
			w, g := wantOut.String(), gotOut
			if tc.sortLines {
				w, g = sortedLines(w), sortedLines(g)
			}
			if g != w {
				t.Errorf("stdout differs\n got: %q\nwant: %q", g, w)
			}
			if gotCode != wantCode {
				t.Errorf("exit = %d, want %d", gotCode, wantCode)
			}
			if tc.stderr {
				we, ge := wantErr.String(), gotErr
				if tc.sortLines {
					we, ge = sortedLines(we), sortedLines(ge)
				}
				if ge != we {
					t.Errorf("stderr differs\n got: %q\nwant: %q", ge, we)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
}

// oracleEnv is the environment minus what changes GNU grep's behaviour
// (POSIXLY_CORRECT stops option permutation even when empty), plus the
// UTF-8 locale.
func oracleEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "POSIXLY_CORRECT" || strings.HasPrefix(k, "GREP_") || strings.HasPrefix(k, "LC_") || k == "LANG" || k == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C.UTF-8")
}

func sortedLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}
