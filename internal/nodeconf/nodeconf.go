// Package nodeconf measures secexec's Node compatibility with Node's own
// test suite: it finds the tests of a Node test tree (test/parallel, with
// test/common and test/fixtures beside it), reads each test's "// Flags:",
// groups tests by module, and turns the outcomes of secexec and of a
// control (real Node) into a report and a list of passing tests that a
// later run is compared with. Node's tests are never part of this
// repository: developers fetch them and pass their path (see
// docs/node-conformance.md); what the repository keeps is the list of
// tests that pass (passing.txt), as Deno keeps its node_compat config.
//
// The method is the one the project measured with: each test is one
// process, run with its flags and NODE_SKIP_FLAG_CHECK=1 under a time
// limit, and passes when it exits 0. Tests that need --expose-internals
// (Node's internal modules) are left out, and so are tests the control
// fails on the same tree: they say nothing about secexec.
package nodeconf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Test is one test file of test/parallel.
type Test struct {
	// Name is the file name ("test-util-inspect.js").
	Name string
	// Flags are the node options its "// Flags:" lines ask for.
	Flags []string
	// Skip says why the test is left out ("" to run it).
	Skip string
}

// Group is the module a test belongs to: the word after "test-"
// ("test-http-agent.js" → "http", "test-child-process-fork.js" →
// "child-process", as the issue and Node's own directory names count
// them).
func (t Test) Group() string { return Group(t.Name) }

// twoWordGroups are the modules whose names have a dash.
var twoWordGroups = []string{"child-process", "string-decoder", "async-hooks", "diagnostics-channel",
	"worker-threads", "perf-hooks", "event-emitter", "abort-controller", "http2", "web-streams"}

// Group returns the module of a test file name; see Test.Group.
func Group(name string) string {
	s := strings.TrimPrefix(name, "test-")
	s = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, ".js"), ".mjs"), ".cjs")
	for _, g := range twoWordGroups {
		if s == g || strings.HasPrefix(s, g+"-") {
			return g
		}
	}
	if i := strings.IndexByte(s, '-'); i > 0 {
		return s[:i]
	}
	return s
}

// maxFlagsLines bounds how much of a test file is read for its flags:
// Node's runner looks at the file's leading comment block.
const maxFlagsLines = 200

// ParseFlags returns the options of a test's "// Flags:" lines, which
// Node's test runner passes to node.
func ParseFlags(src io.Reader) ([]string, error) {
	var flags []string
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 0; n < maxFlagsLines && sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "// Flags:")
		if !ok {
			continue
		}
		flags = append(flags, strings.Fields(rest)...)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return nil, err
	}
	return flags, nil
}

// ErrNoTests is returned for a directory without a parallel/ of tests.
var ErrNoTests = errors.New("nodeconf: no Node tests found")

// Tree is a Node test tree: parallel/, common/ and fixtures/.
type Tree struct {
	Parallel, Common, Fixtures string
}

// Open checks a test tree: root holds parallel/, common/ and fixtures/, as
// a Node checkout's test/ does. They must be real directories: Node
// resolves a test's ../common from the test file's real path.
func Open(root string) (Tree, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Parallel: filepath.Join(root, "parallel"), Common: filepath.Join(root, "common"), Fixtures: filepath.Join(root, "fixtures")}
	for _, d := range []string{t.Parallel, t.Common, t.Fixtures} {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			return Tree{}, fmt.Errorf("%w: %s is not a directory", ErrNoTests, d)
		}
	}
	if _, err := os.Stat(filepath.Join(t.Common, "index.js")); err != nil {
		return Tree{}, fmt.Errorf("%w: %s has no index.js (Node's test/common)", ErrNoTests, t.Common)
	}
	return t, nil
}

// Tests lists the tests of parallel/ whose names match (all when match is
// nil), sorted, with their flags and why any are left out.
func (t Tree) Tests(match *regexp.Regexp) ([]Test, error) {
	entries, err := os.ReadDir(t.Parallel)
	if err != nil {
		return nil, err
	}
	var tests []Test
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, "test-") ||
			!(strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".mjs") || strings.HasSuffix(name, ".cjs")) {
			continue
		}
		if match != nil && !match.MatchString(name) {
			continue
		}
		f, err := os.Open(filepath.Join(t.Parallel, name))
		if err != nil {
			return nil, err
		}
		flags, err := ParseFlags(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("nodeconf: %s: %w", name, err)
		}
		test := Test{Name: name, Flags: flags}
		if slices.Contains(flags, "--expose-internals") || slices.Contains(flags, "--expose_internals") {
			test.Skip = "needs --expose-internals"
		}
		tests = append(tests, test)
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoTests, t.Parallel)
	}
	sort.Slice(tests, func(i, j int) bool { return tests[i].Name < tests[j].Name })
	return tests, nil
}

// Outcome is how one test ended.
type Outcome struct {
	Name string `json:"name"`
	// Pass: secexec's run exited 0.
	Pass bool `json:"pass"`
	// Control: the control's run exited 0 (nil: no control run).
	Control *bool `json:"control,omitempty"`
	// Skip says why the test was left out.
	Skip string `json:"skip,omitempty"`
	// TimedOut: secexec's run hit the time limit.
	TimedOut bool `json:"timed_out,omitempty"`
	// Error is the first error line of a failed run's output.
	Error string `json:"error,omitempty"`
	// Millis is how long secexec's run took.
	Millis int64 `json:"ms"`
}

// Counted reports whether the outcome counts: not left out, and passed
// by the control if there was one.
func (o Outcome) Counted() bool {
	return o.Skip == "" && (o.Control == nil || *o.Control)
}

// FirstError picks the line of a failed test's output that says why: the
// first line naming an error (thrown errors and assertion failures print
// one), else the first naming an error code or a node: location, else the
// first non-empty line; at most 200 bytes.
func FirstError(stderr, stdout []byte) string {
	pick := func(b []byte) string {
		var first, hint string
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if first == "" {
				first = line
			}
			if errorLine.MatchString(line) {
				return line
			}
			if hint == "" && hintLine.MatchString(line) {
				hint = line
			}
		}
		if hint != "" {
			return hint
		}
		return first
	}
	s := pick(stderr)
	if s == "" {
		s = pick(stdout)
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

var (
	errorLine = regexp.MustCompile(`^(Uncaught )?([A-Z][A-Za-z]*Error|Error)( \[[A-Z_0-9]+\])?:`)
	hintLine  = regexp.MustCompile(`^node:[a-z_/]+:\d+|ERR_[A-Z_]+`)
)

// Report is a run's outcomes.
type Report struct {
	Outcomes []Outcome `json:"outcomes"`
}

// Summary counts a report: over the counted tests, and per group.
type Summary struct {
	Counted, Passed int
	Groups          []GroupSummary
	// Errors are the commonest first error lines of failed counted tests.
	Errors []ErrorCount
}

// GroupSummary is one group's count.
type GroupSummary struct {
	Group           string
	Counted, Passed int
}

// ErrorCount is how many failed tests a first error line ended.
type ErrorCount struct {
	Line  string
	Tests int
}

// Rate is Passed/Counted, 0 when nothing counted.
func (s Summary) Rate() float64 {
	if s.Counted == 0 {
		return 0
	}
	return float64(s.Passed) / float64(s.Counted)
}

// Summarize counts r; topErrors bounds Summary.Errors.
func (r Report) Summarize(topErrors int) Summary {
	var s Summary
	groups := map[string]*GroupSummary{}
	errs := map[string]int{}
	for _, o := range r.Outcomes {
		if !o.Counted() {
			continue
		}
		g := groups[Group(o.Name)]
		if g == nil {
			g = &GroupSummary{Group: Group(o.Name)}
			groups[g.Group] = g
		}
		s.Counted++
		g.Counted++
		if o.Pass {
			s.Passed++
			g.Passed++
		} else {
			errs[normalizeError(o)]++
		}
	}
	for _, g := range groups {
		s.Groups = append(s.Groups, *g)
	}
	sort.Slice(s.Groups, func(i, j int) bool {
		if s.Groups[i].Counted != s.Groups[j].Counted {
			return s.Groups[i].Counted > s.Groups[j].Counted
		}
		return s.Groups[i].Group < s.Groups[j].Group
	})
	for line, n := range errs {
		s.Errors = append(s.Errors, ErrorCount{Line: line, Tests: n})
	}
	sort.Slice(s.Errors, func(i, j int) bool {
		if s.Errors[i].Tests != s.Errors[j].Tests {
			return s.Errors[i].Tests > s.Errors[j].Tests
		}
		return s.Errors[i].Line < s.Errors[j].Line
	})
	if len(s.Errors) > topErrors {
		s.Errors = s.Errors[:topErrors]
	}
	return s
}

// normalizeError makes first error lines of different tests comparable:
// paths and numbers vary per test.
func normalizeError(o Outcome) string {
	if o.TimedOut {
		return "(timed out)"
	}
	s := pathRE.ReplaceAllString(o.Error, "PATH")
	return numberRE.ReplaceAllString(s, "N")
}

var (
	pathRE   = regexp.MustCompile(`(/[^\s'":()]+)+`)
	numberRE = regexp.MustCompile(`\b\d+\b`)
)

// WriteText writes the summary as the note reports it: the total, the
// groups, the commonest first errors.
func (s Summary) WriteText(w io.Writer, minGroup int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "passed %d of %d = %.1f%%\n\n", s.Passed, s.Counted, 100*s.Rate())
	fmt.Fprintf(&b, "%-24s %7s %7s %7s\n", "group", "passed", "tests", "rate")
	for _, g := range s.Groups {
		if g.Counted < minGroup {
			continue
		}
		fmt.Fprintf(&b, "%-24s %7d %7d %6.1f%%\n", g.Group, g.Passed, g.Counted, 100*float64(g.Passed)/float64(g.Counted))
	}
	if len(s.Errors) > 0 {
		fmt.Fprintf(&b, "\n%7s  %s\n", "tests", "first error")
		for _, e := range s.Errors {
			fmt.Fprintf(&b, "%7d  %s\n", e.Tests, e.Line)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Passing returns the names of the counted tests that passed, sorted.
func (r Report) Passing() []string {
	var names []string
	for _, o := range r.Outcomes {
		if o.Counted() && o.Pass {
			names = append(names, o.Name)
		}
	}
	sort.Strings(names)
	return names
}

// ReadList reads a list of test names, one a line; "#" starts a comment.
func ReadList(r io.Reader) ([]string, error) {
	var names []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		names = append(names, line)
	}
	return names, sc.Err()
}

// WriteList writes names as ReadList reads them, under a header comment.
func WriteList(w io.Writer, header string, names []string) error {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimSpace(header), "\n") {
		fmt.Fprintf(&b, "# %s\n", l)
	}
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Compare sets a run against the list of tests that passed before: the
// listed tests that ran and now fail (regressions), and the tests that
// pass and are not listed (new). Listed tests the run did not include are
// neither.
func Compare(r Report, listed []string) (regressions, added []string) {
	was := map[string]bool{}
	for _, n := range listed {
		was[n] = true
	}
	for _, o := range r.Outcomes {
		switch {
		case was[o.Name] && !o.Pass && o.Skip == "":
			regressions = append(regressions, o.Name)
		case !was[o.Name] && o.Pass && o.Counted():
			added = append(added, o.Name)
		}
	}
	sort.Strings(regressions)
	sort.Strings(added)
	return regressions, added
}
