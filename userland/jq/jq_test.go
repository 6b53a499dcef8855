package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func jqRun(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"jq"}, args...), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

const hint = "Use jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://jqlang.github.io/jq\n"

func TestJQ(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f1 := write("f1.json", `{"x":[1,2]}`+"\n")
	f2 := write("f2.json", `"s"`+"\n")
	prog := write("prog.jq", "#!/usr/bin/env jq -f\n.x[]\n")
	raw := write("raw.txt", "line1\nline2\n")
	missing := filepath.Join(dir, "missing.json")

	doc := `{"b":[1,2,{"c":null}],"a":1,"d":"x\ty","e":{},"f":[]}`
	tests := []struct {
		name   string
		stdin  string
		args   []string
		out    string
		errOut string
		code   int
	}{
		{name: "pretty", stdin: doc, args: []string{"."},
			out: "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2,\n    {\n      \"c\": null\n    }\n  ],\n  \"d\": \"x\\ty\",\n  \"e\": {},\n  \"f\": []\n}\n"},
		{name: "default program", stdin: "[1]", out: "[\n  1\n]\n"},
		{name: "compact", stdin: doc, args: []string{"-c", "."}, out: `{"a":1,"b":[1,2,{"c":null}],"d":"x\ty","e":{},"f":[]}` + "\n"},
		{name: "tab", stdin: `{"a":[1]}`, args: []string{"--tab", "."}, out: "{\n\t\"a\": [\n\t\t1\n\t]\n}\n"},
		{name: "indent 1", stdin: `{"a":[1]}`, args: []string{"--indent", "1", "."}, out: "{\n \"a\": [\n  1\n ]\n}\n"},
		{name: "indent 0 is compact", stdin: `{"a":[1]}`, args: []string{"--indent", "0", "."}, out: "{\"a\":[1]}\n"},
		{name: "compact then indent", stdin: `[1]`, args: []string{"-c", "--indent", "3", "."}, out: "[\n   1\n]\n"},
		{name: "indent too big", args: []string{"--indent", "8", "."}, errOut: "jq: --indent takes a number between -1 and 7\n" + hint, code: 2},
		{name: "raw", stdin: doc, args: []string{"-r", ".d, .a"}, out: "x\ty\n1\n"},
		{name: "join", stdin: doc, args: []string{"-j", ".d, .a, .f"}, out: "x\ty1[]"},
		{name: "stacked short options", stdin: doc, args: []string{"-rc", ".b"}, out: "[1,2,{\"c\":null}]\n"},
		{name: "ascii", args: []string{"-n", "-a", `"é😀\u0001"`}, out: `"\u00e9\ud83d\ude00\u0001"` + "\n"},
		{name: "escapes", args: []string{"-n", `"\u0000\u001f\u007f\"\\/é"`}, out: `"\u0000\u001f\u007f\"\\/é"` + "\n"},
		{name: "numbers", args: []string{"-nc", `[1.5, 3.0, 1e17, 1e15, 0.00001, 0.0001, 1e1000, -1e1000, 0.1+0.2, 1/3, 1e-7, nan]`},
			out: "[1.5,3,1e+17,1000000000000000,1e-05,0.0001,1.7976931348623157e+308,-1.7976931348623157e+308,0.30000000000000004,0.3333333333333333,1e-07,null]\n"},
		{name: "number literals kept", stdin: "[1.000, 100000000000000000000001]", args: []string{"-c", "."}, out: "[1.000,100000000000000000000001]\n"},
		{name: "slurp", stdin: "1 2 3", args: []string{"-sc", "."}, out: "[1,2,3]\n"},
		{name: "slurp empty", args: []string{"-sc", "."}, out: "[]\n"},
		{name: "null input inputs", stdin: "1 2 3", args: []string{"-nc", "[inputs]"}, out: "[1,2,3]\n"},
		{name: "input", stdin: "1 2 3 4", args: []string{"-c", "[., input]"}, out: "[1,2]\n[3,4]\n"},
		{name: "raw input", stdin: "a\nb", args: []string{"-R", "."}, out: "\"a\"\n\"b\"\n"},
		{name: "raw slurp", stdin: "a\nb\n", args: []string{"-Rs", "."}, out: "\"a\\nb\\n\"\n"},
		{name: "arg argjson", args: []string{"-nc", "--arg", "x", "1", "--argjson", "y", `{"a":2}`, "$x, $y, $ARGS.named"},
			out: "\"1\"\n{\"a\":2}\n{\"x\":\"1\",\"y\":{\"a\":2}}\n"},
		{name: "first arg wins", args: []string{"-nc", "$a", "--arg", "a", "1", "--arg", "a", "2"}, out: "\"1\"\n"},
		{name: "args", args: []string{"-nc", "--args", "$ARGS.positional", "a", "b"}, out: "[\"a\",\"b\"]\n"},
		{name: "jsonargs", args: []string{"-nc", "--jsonargs", "$ARGS.positional", "1", `{"a":2}`}, out: "[1,{\"a\":2}]\n"},
		{name: "slurpfile rawfile", args: []string{"-nc", "--slurpfile", "s", f1, "--rawfile", "r", raw, "$s, $r"}, out: "[{\"x\":[1,2]}]\n\"line1\\nline2\\n\"\n"},
		{name: "slurpfile missing", args: []string{"-n", "--slurpfile", "s", missing, "$s"},
			errOut: "jq: Bad JSON in --slurpfile s " + missing + ": Could not open " + missing + ": No such file or directory\n", code: 2},
		{name: "files", args: []string{"-c", ".", f1, f2}, out: "{\"x\":[1,2]}\n\"s\"\n"},
		{name: "input_filename", args: []string{"input_filename", f1}, out: "\"" + f1 + "\"\n"},
		{name: "input_filename stdin", stdin: "1", args: []string{"input_filename"}, out: "\"<stdin>\"\n"},
		{name: "from file", args: []string{"-f", prog, f1}, out: "1\n2\n"},
		{name: "from file missing", args: []string{"-f", missing}, errOut: "jq: Could not open " + missing + ": No such file or directory\n", code: 2},
		{name: "missing input", args: []string{".", missing, f2}, out: "\"s\"\n", errOut: "jq: error: Could not open " + missing + ": No such file or directory\n", code: 2},
		{name: "exit status false", stdin: "1", args: []string{"-e", "false"}, out: "false\n", code: 1},
		{name: "exit status null", stdin: "1", args: []string{"-e", "null"}, out: "null\n", code: 1},
		{name: "exit status true", stdin: "1", args: []string{"-e", "."}, out: "1\n"},
		{name: "exit status no output", stdin: "1", args: []string{"-e", "empty"}, code: 4},
		{name: "exit status last input wins", stdin: "1 2", args: []string{"-e", "if . == 1 then false else empty end"}, out: "false\n", code: 1},
		{name: "runtime error", stdin: "{\"a\":1}\n", args: []string{".a.b"}, errOut: "jq: error (at <stdin>:1): expected an object but got: number (1)\n", code: 5},
		{name: "error line numbers", stdin: "{\"a\":1}\n\n\n{\"a\":\n2}\n", args: []string{".a.b"},
			errOut: "jq: error (at <stdin>:1): expected an object but got: number (1)\njq: error (at <stdin>:5): expected an object but got: number (2)\n", code: 5},
		{name: "status from last input", stdin: "1 {\"a\":2}", args: []string{".a"}, out: "2\n", errOut: "jq: error (at <stdin>:0): expected an object but got: number (1)\n"},
		{name: "error string", args: []string{"-n", `error("x")`}, errOut: "jq: error (at <unknown>): x\n", code: 5},
		{name: "error object", args: []string{"-n", `{"a":1} | error`}, errOut: "jq: error (at <unknown>) (not a string): {\"a\":1}\n", code: 5},
		{name: "try catch", args: []string{"-n", `try error("x") catch .`}, out: "\"x\"\n"},
		{name: "halt", args: []string{"-n", "1, halt, 2"}, out: "1\n"},
		{name: "halt_error string", args: []string{"-n", `"bye\n" | halt_error`}, errOut: "bye\n", code: 5},
		{name: "halt_error object", args: []string{"-n", `{"a":1} | halt_error(3)`}, errOut: "{\"a\":1}\n", code: 3},
		{name: "halt stops inputs", stdin: "1 2 3", args: []string{"if . == 2 then halt else . end"}, out: "1\n"},
		{name: "debug stderr", args: []string{"-nc", `"x" | debug | stderr`}, out: "\"x\"\n", errOut: "[\"DEBUG:\",\"x\"]\nx"},
		{name: "parse error", stdin: "{\"a\":1", args: []string{"."}, errOut: "jq: parse error: Unfinished JSON term at EOF at line 1, column 6\n", code: 5},
		{name: "parse error after output", stdin: "1 [", args: []string{"."}, out: "1\n", errOut: "jq: parse error: Unfinished JSON term at EOF at line 1, column 3\n", code: 5},
		{name: "syntax error", args: []string{"-n", "1 +"}, errOut: "jq: error: syntax error, unexpected EOF at <top-level>, line 1:\n1 +\njq: 1 compile error\n", code: 3},
		{name: "undefined function", args: []string{"-n", "foo"}, errOut: "jq: error: function not defined: foo/0\njq: 1 compile error\n", code: 3},
		{name: "unknown option", args: []string{"-x", "."}, errOut: "jq: Unknown option -x\n" + hint, code: 2},
		{name: "unknown long option", args: []string{"--frob", "."}, errOut: "jq: Unknown option --frob\n" + hint, code: 2},
		{name: "arg needs two", args: []string{"--arg", "x"}, errOut: "jq: --arg takes two parameters (e.g. --arg varname value)\n" + hint, code: 2},
		{name: "bad argjson", args: []string{"--argjson", "x", "{", "."}, errOut: "jq: invalid JSON text passed to --argjson\n" + hint, code: 2},
		{name: "double dash", stdin: "1", args: []string{"--", "-."}, out: "-1\n"},
		{name: "version", args: []string{"--version"}, out: "jq-1.7.1\n"},
		{name: "seq", args: []string{"-nc", "--seq", "1, [2]"}, out: "\x1e1\n\x1e[2]\n"},
		{name: "raw output0", args: []string{"-n", "--raw-output0", `"a", "b"`}, out: "a\x00b\x00"},
		{name: "raw output0 nul", args: []string{"-n", "--raw-output0", `"a\u0000"`}, errOut: "jq: error (at <unknown>): Cannot dump a string containing NUL with --raw-output0 option\n", code: 5},
		{name: "invalid utf8 input", stdin: "\"a\xffb\"", args: []string{"."}, out: "\"a\uFFFDb\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := jqRun(t, tc.stdin, tc.args...)
			if out != tc.out {
				t.Errorf("stdout = %q, want %q", out, tc.out)
			}
			if errOut != tc.errOut {
				t.Errorf("stderr = %q, want %q", errOut, tc.errOut)
			}
			if code != tc.code {
				t.Errorf("exit = %d, want %d", code, tc.code)
			}
		})
	}
}

func TestAppendNumber(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {1, "1"}, {-2.5, "-2.5"}, {1e15, "1000000000000000"},
		{1e16, "1e+16"}, {1.2345678901234568e17, "123456789012345680"}, {0.0001, "0.0001"},
		{0.00001, "1e-05"}, {1e300, "1e+300"}, {5e-324, "5e-324"}, {1.5e-10, "1.5e-10"},
		{math.NaN(), "null"}, {math.Inf(1), "1.7976931348623157e+308"}, {123.456, "123.456"},
	}
	for _, tc := range tests {
		if got := string(appendNumber(nil, tc.f)); got != tc.want {
			t.Errorf("appendNumber(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// Hostile input: a value larger than the bound fails cleanly.
func TestInputBounded(t *testing.T) {
	big := "[" + strings.Repeat("1,", 100000) + "1]"
	var out, errb bytes.Buffer
	code := runLimited([]string{"jq", "length"}, strings.NewReader(big), &out, &errb, 1<<16)
	if code != 5 || !strings.Contains(errb.String(), "Exceeds input size limit") {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	// Many small values are fine: the bound is per value.
	many := strings.Repeat("[1,2,3]\n", 50000)
	code = runLimited([]string{"jq", "-c", "length"}, strings.NewReader(many), &out, &errb, 1<<16)
	if code != 0 || strings.Count(out.String(), "3\n") != 50000 {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
	// --slurp and -R lines are bounded too.
	code = runLimited([]string{"jq", "-s", "length"}, strings.NewReader(many), &out, &errb, 1<<16)
	if code != 5 {
		t.Fatalf("slurp: code %d", code)
	}
	code = runLimited([]string{"jq", "-R", "length"}, strings.NewReader(strings.Repeat("x", 1<<17)), &out, &errb, 1<<16)
	if code != 5 {
		t.Fatalf("raw: code %d", code)
	}
}

// Hostile input: nesting deeper than the decoder allows is a parse error,
// and a deep value built by the program prints a marker, not a crash.
func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	_, errOut, code := jqRun(t, deep, ".")
	if code != 5 || !strings.Contains(errOut, "jq: parse error:") {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
	out, _, code := jqRun(t, "", "-nc", "reduce range(10005) as $i (0; [.])")
	if code != 0 || !strings.Contains(out, "<skipped: too deep>") {
		t.Fatalf("code %d out %.100q", code, out)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, syscall.EIO
}

func TestWriteError(t *testing.T) {
	var errb bytes.Buffer
	w := &failWriter{}
	code := run([]string{"jq", "-n", "range(1000000)"}, strings.NewReader(""), w, &errb)
	if code != 2 || errb.String() != "jq: error: writing output failed: Input/output error\n" {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
	if w.n > 1 {
		t.Errorf("%d writes after the first failure", w.n-1)
	}
}
