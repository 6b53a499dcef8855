package nodeconf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestGroup(t *testing.T) {
	for name, want := range map[string]string{
		"test-http-agent.js":           "http",
		"test-child-process-fork.js":   "child-process",
		"test-string-decoder.js":       "string-decoder",
		"test-string-decoder-end.js":   "string-decoder",
		"test-stringbytes-external.js": "stringbytes",
		"test-url.js":                  "url",
		"test-http2-server.mjs":        "http2",
		"test-fs-read.cjs":             "fs",
	} {
		if got := Group(name); got != want {
			t.Errorf("Group(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for src, want := range map[string][]string{
		"'use strict';\n// Flags: --expose-internals --no-warnings\nrequire('x');\n": {"--expose-internals", "--no-warnings"},
		"// Flags: --a\n// Flags:   --b=1  \n":                                       {"--a", "--b=1"},
		"// no flags here\n":                                                         nil,
		"  // Flags: --indented\n":                                                   {"--indented"},
		"//Flags: --not-a-flags-line\n":                                              nil,
	} {
		got, err := ParseFlags(strings.NewReader(src))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseFlags(%q) = %q, %v; want %q", src, got, err, want)
		}
	}
	// A very long first line does not hide the flags of a normal file,
	// and never fails the run.
	long := strings.Repeat("x", 2<<20) + "\n// Flags: --late\n"
	if _, err := ParseFlags(strings.NewReader(long)); err != nil {
		t.Errorf("long line: %v", err)
	}
}

func FuzzParseFlags(f *testing.F) {
	f.Add("// Flags: --expose-internals\n")
	f.Add("\n\n// Flags:\n")
	f.Fuzz(func(t *testing.T, src string) {
		flags, err := ParseFlags(strings.NewReader(src))
		if err != nil {
			return
		}
		for _, fl := range flags {
			if fl == "" || strings.ContainsAny(fl, " \t\n") {
				t.Fatalf("flag %q", fl)
			}
		}
	})
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestTreeTests(t *testing.T) {
	root := writeTree(t, map[string]string{
		"common/index.js":               "",
		"fixtures/a.txt":                "",
		"parallel/test-b-two.js":        "// Flags: --no-warnings\n",
		"parallel/test-a-one.mjs":       "",
		"parallel/test-c-internals.js":  "// Flags: --expose-internals\n",
		"parallel/not-a-test.js":        "",
		"parallel/test-d-data.json":     "",
		"parallel/test-e-dir/inside.js": "",
	})
	tree, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	tests, err := tree.Tests(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tc := range tests {
		names = append(names, tc.Name)
	}
	if want := []string{"test-a-one.mjs", "test-b-two.js", "test-c-internals.js"}; !slices.Equal(names, want) {
		t.Fatalf("tests %q, want %q", names, want)
	}
	if !slices.Equal(tests[1].Flags, []string{"--no-warnings"}) || tests[1].Skip != "" || tests[2].Skip == "" {
		t.Fatalf("flags/skip: %+v", tests)
	}
	only, err := tree.Tests(regexp.MustCompile(`^test-b-`))
	if err != nil || len(only) != 1 || only[0].Name != "test-b-two.js" {
		t.Fatalf("filtered: %+v %v", only, err)
	}
	if _, err := tree.Tests(regexp.MustCompile(`nothing`)); !errors.Is(err, ErrNoTests) {
		t.Fatalf("no match: %v", err)
	}
	if _, err := Open(filepath.Join(root, "parallel")); !errors.Is(err, ErrNoTests) {
		t.Fatalf("Open of a directory without the layout: %v", err)
	}
}

func TestFirstError(t *testing.T) {
	stderr := "node:internal/process/esm_loader:40\n      internalBinding('errors').triggerUncaughtException(\n\nAssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n1 !== 2\n"
	if got := FirstError([]byte(stderr), nil); got != "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:" {
		t.Errorf("FirstError = %q", got)
	}
	if got := FirstError([]byte("/x/test.js:3\n  throw e;\nTypeError: util.log is not a function\n"), nil); got != "TypeError: util.log is not a function" {
		t.Errorf("FirstError = %q", got)
	}
	if got := FirstError([]byte("node:internal/x:12\n  at y\n"), nil); got != "node:internal/x:12" {
		t.Errorf("FirstError = %q", got)
	}
	if got := FirstError(nil, []byte("\nnot ok 1 - x\n")); got != "not ok 1 - x" {
		t.Errorf("FirstError from stdout = %q", got)
	}
}

func TestReportCompareAndList(t *testing.T) {
	yes, no := true, false
	rep := Report{Outcomes: []Outcome{
		{Name: "test-a-1.js", Pass: true, Control: &yes},
		{Name: "test-a-2.js", Pass: false, Control: &yes, Error: "TypeError: x at /a/b.js:3"},
		{Name: "test-b-1.js", Pass: false, Control: &yes, Error: "TypeError: x at /c/d.js:7"},
		{Name: "test-b-2.js", Pass: true, Control: &no},
		{Name: "test-c-1.js", Skip: "needs --expose-internals"},
		{Name: "test-c-2.js", Pass: true},
	}}
	s := rep.Summarize(5)
	if s.Counted != 4 || s.Passed != 2 || len(s.Groups) != 3 || s.Groups[0].Group != "a" {
		t.Fatalf("summary %+v", s)
	}
	if len(s.Errors) != 1 || s.Errors[0].Tests != 2 {
		t.Fatalf("errors %+v: paths and numbers should not split one cause", s.Errors)
	}
	var text bytes.Buffer
	if err := s.WriteText(&text, 1); err != nil || !strings.HasPrefix(text.String(), "passed 2 of 4 = 50.0%\n") {
		t.Fatalf("text %q %v", text.String(), err)
	}
	regressions, added := Compare(rep, []string{"test-a-1.js", "test-a-2.js", "test-z-gone.js"})
	if !slices.Equal(regressions, []string{"test-a-2.js"}) || !slices.Equal(added, []string{"test-c-2.js"}) {
		t.Fatalf("regressions %q added %q", regressions, added)
	}
	var b bytes.Buffer
	if err := WriteList(&b, "a header\nof two lines", rep.Passing()); err != nil {
		t.Fatal(err)
	}
	back, err := ReadList(&b)
	if err != nil || !slices.Equal(back, []string{"test-a-1.js", "test-c-2.js"}) {
		t.Fatalf("list round trip: %q %v", back, err)
	}
}
