package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/nodeconf"
)

// Where a test tree is mounted in each VM: Node's tests find common/ and
// fixtures/ beside their own directory.
const (
	nodeconfRoot    = "/node/test"
	nodeconfTmp     = "/tmp/node-test-root"
	nodeconfDefault = "internal/nodeconf/passing.txt"
)

func newNodeconfCmd() *cobra.Command {
	var (
		tests, control  string
		run             string
		jobs            int
		timeout         time.Duration
		jsonOut, expect string
		update, quiet   bool
	)
	c := &cobra.Command{
		Use:   "nodeconf --tests DIR [flags]",
		Short: "Run Node's own test suite (test/parallel) in VMs and report the pass rate",
		Long: `Run each test of a Node test tree's parallel/ directory in a fresh VM
(node with the test's "// Flags:", NODE_SKIP_FLAG_CHECK=1, pass = exit 0),
and with --control also under real Node on the host, leaving out the tests
the control fails and those that need --expose-internals. Prints the pass
rate over the counted tests, per group, and the commonest first error
lines; compares the passing tests with the list in --expect (the
repository's internal/nodeconf/passing.txt) and exits 1 when a listed test
fails. --update rewrites that list from this run. Node's tests are not in
this repository: see docs/node-conformance.md for where to fetch them.`,
		Example: `  secexec nodeconf --tests ~/node-tests --control ~/node22/bin/node
  secexec nodeconf --tests ~/node-tests --run '^test-util-' --json util.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tests == "" {
				return &usageError{err: errors.New("--tests DIR is required")}
			}
			if jobs < 1 || jobs > 64 {
				return &usageError{err: fmt.Errorf("--jobs %d out of range", jobs)}
			}
			var match *regexp.Regexp
			if run != "" {
				var err error
				if match, err = regexp.Compile(run); err != nil {
					return &usageError{err: fmt.Errorf("--run: %w", err)}
				}
			}
			tree, err := nodeconf.Open(tests)
			if err != nil {
				return err
			}
			list, err := tree.Tests(match)
			if err != nil {
				return err
			}
			r := &confRunner{tree: tree, control: control, timeout: timeout}
			report := r.runAll(cmd.Context(), list, jobs, func(done int, o nodeconf.Outcome) {
				if !quiet {
					mark := "FAIL"
					switch {
					case o.Skip != "":
						mark = "skip"
					case o.Pass:
						mark = "ok  "
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "[%d/%d] %s %s\n", done, len(list), mark, o.Name)
				}
			})
			if jsonOut != "" {
				b, err := json.MarshalIndent(report, "", " ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
			sum := report.Summarize(15)
			if err := sum.WriteText(cmd.OutOrStdout(), 1); err != nil {
				return err
			}
			return r.compare(cmd, report, expect, update, run != "")
		},
	}
	f := c.Flags()
	f.StringVar(&tests, "tests", "", "the test tree: a directory with parallel/, common/ and fixtures/ (docs/node-conformance.md)")
	f.StringVar(&control, "control", "", "a real node binary (Node 22) to run each test with too; tests it fails are left out")
	f.StringVar(&run, "run", "", "run only the tests whose file names match this regular expression")
	f.IntVar(&jobs, "jobs", 2, "tests run at once")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "time limit of each test run")
	f.StringVar(&jsonOut, "json", "", "write every outcome to this JSON file")
	f.StringVar(&expect, "expect", nodeconfDefault, "the list of tests that passed before (empty: no comparison)")
	f.BoolVar(&update, "update", false, "rewrite --expect with the tests that pass now")
	f.BoolVar(&quiet, "quiet", false, "no line per test on stderr")
	return c
}

type confRunner struct {
	tree    nodeconf.Tree
	control string
	timeout time.Duration
}

// runAll runs the tests, jobs at a time, in order of the list; progress
// is called after each one, in completion order.
func (r *confRunner) runAll(ctx context.Context, tests []nodeconf.Test, jobs int, progress func(int, nodeconf.Outcome)) nodeconf.Report {
	out := make([]nodeconf.Outcome, len(tests))
	idx := make(chan int)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				o := r.one(ctx, tests[i])
				out[i] = o
				mu.Lock()
				done++
				progress(done, o)
				mu.Unlock()
			}
		}()
	}
	for i := range tests {
		if ctx.Err() != nil {
			break
		}
		idx <- i
	}
	close(idx)
	wg.Wait()
	var rep nodeconf.Report
	for i, o := range out {
		if o.Name == "" { // not run: cancelled
			o = nodeconf.Outcome{Name: tests[i].Name, Skip: "not run"}
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	return rep
}

// one runs a test in a fresh VM, and under the control.
func (r *confRunner) one(ctx context.Context, t nodeconf.Test) nodeconf.Outcome {
	o := nodeconf.Outcome{Name: t.Name, Skip: t.Skip}
	if t.Skip != "" {
		return o
	}
	if r.control != "" {
		ok := r.runControl(ctx, t)
		o.Control = &ok
		if !ok {
			// Left out: the VM run would say nothing.
			return o
		}
	}
	start := time.Now()
	res, err := r.runVM(ctx, t)
	o.Millis = time.Since(start).Milliseconds()
	switch {
	case err != nil:
		o.Error = "secexec: " + err.Error()
	case res.Outcome == secexec.TimedOut:
		o.TimedOut = true
		o.Error = "(timed out)"
	case res.ExitCode == 0:
		o.Pass = true
	default:
		o.Error = nodeconf.FirstError(res.Stderr, res.Stdout)
	}
	return o
}

func (r *confRunner) env() map[string]string {
	return map[string]string{
		"NODE_SKIP_FLAG_CHECK": "1",
		"NODE_TEST_DIR":        nodeconfTmp,
		"HOME":                 "/home/user",
		"PATH":                 "/usr/local/bin:/usr/bin:/bin",
	}
}

func (r *confRunner) runVM(ctx context.Context, t nodeconf.Test) (*secexec.Result, error) {
	vm, err := secexec.NewVM(ctx, secexec.Options{
		Permissions: secexec.AllowAll(),
		Mounts: []secexec.Mount{
			{Path: nodeconfRoot + "/parallel", HostDir: r.tree.Parallel, ReadOnly: true},
			{Path: nodeconfRoot + "/common", HostDir: r.tree.Common, ReadOnly: true},
			{Path: nodeconfRoot + "/fixtures", HostDir: r.tree.Fixtures, ReadOnly: true},
		},
		Env:         r.env(),
		Cwd:         nodeconfRoot,
		EngineGroup: "nodeconf",
	})
	if err != nil {
		return nil, err
	}
	defer vm.Close()
	if err := vm.FS().MkdirAll(ctx, nodeconfTmp, 0o755); err != nil {
		return nil, err
	}
	argv := append(append([]string{"node"}, t.Flags...), nodeconfRoot+"/parallel/"+t.Name)
	return vm.Exec(ctx, shellJoin(argv), &secexec.ExecOptions{Timeout: r.timeout, MaxOutput: 1 << 20})
}

// runControl runs t under the control node on the host, in the tree
// itself (Node resolves a test's ../common from its real path), with a
// temporary directory of its own.
func (r *confRunner) runControl(ctx context.Context, t nodeconf.Test) bool {
	tmp, err := os.MkdirTemp("", "nodeconf-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(tmp)
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	args := append(append([]string{}, t.Flags...), filepath.Join(r.tree.Parallel, t.Name))
	cmd := exec.CommandContext(cctx, r.control, args...)
	cmd.Dir = filepath.Dir(r.tree.Parallel)
	cmd.Env = append(os.Environ(), "NODE_SKIP_FLAG_CHECK=1", "NODE_TEST_DIR="+tmp)
	cmd.WaitDelay = time.Second
	return cmd.Run() == nil
}

// compare checks the run against the list of tests that passed before.
func (r *confRunner) compare(cmd *cobra.Command, rep nodeconf.Report, expect string, update, partial bool) error {
	if expect == "" {
		return nil
	}
	var listed []string
	if f, err := os.Open(expect); err == nil {
		listed, err = nodeconf.ReadList(f)
		f.Close()
		if err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) || !update {
		return fmt.Errorf("nodeconf: %w (--expect \"\" runs without a list)", err)
	}
	regressions, added := nodeconf.Compare(rep, listed)
	w := cmd.OutOrStdout()
	if len(added) > 0 {
		fmt.Fprintf(w, "\n%d tests pass that %s does not list: %s\n", len(added), expect, strings.Join(added, " "))
	}
	if update {
		names := rep.Passing()
		if partial {
			// Keep what this run did not cover.
			ran := map[string]bool{}
			for _, o := range rep.Outcomes {
				ran[o.Name] = true
			}
			for _, n := range listed {
				if !ran[n] {
					names = append(names, n)
				}
			}
		}
		var b bytes.Buffer
		header := "Node's test/parallel files that pass in secexec (secexec nodeconf; docs/node-conformance.md).\nA test listed here that fails is a regression: nodeconf exits 1."
		sortStrings(names)
		if err := nodeconf.WriteList(&b, header, names); err != nil {
			return err
		}
		if err := os.WriteFile(expect, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %d tests to %s\n", len(names), expect)
		return nil
	}
	if len(regressions) > 0 {
		return fmt.Errorf("nodeconf: %d tests listed in %s fail now: %s", len(regressions), expect, strings.Join(regressions, " "))
	}
	return nil
}

// shellJoin writes argv as a command line of plain words (Exec runs it
// without a shell).
func shellJoin(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,+@%") == "" {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}

func sortStrings(s []string) { slices.Sort(s) }
