package shcorpus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

func TestMain(m *testing.M) { vmtest.Main(m) }

var updateKnown = flag.Bool("update-known-failures", false,
	"rewrite testdata/known-failures.txt with the scripts that mismatch today instead of failing on them")

// minPassRate is the share of runs (bash and sh) that must match host
// bash: the rate secexec's own shell measures, rounded down (0.9502 when
// it replaced brush, which measured 0.6203; 604 of 604 now, 602 of 604
// when both flaky runs mismatch). Issue #20 asks for 0.98; raise it as
// the known failures are fixed.
const minPassRate = 0.99

// minRuns guards against losing scripts (issue #20 asks for 300).
const minRuns = 300

// hostBash is the oracle: GNU bash 5.2, as the issue specifies.
const hostBash = "/bin/bash"

// knownFile lists the runs that do not match today.
const knownFile = "testdata/known-failures.txt"

// scriptTimeout bounds one script on either side; corpus scripts take
// milliseconds, so hitting it is itself a finding.
const scriptTimeout = 10 * time.Second

// outcome is what one run printed and how it ended.
type outcome struct {
	stdout, stderr string
	code           int
}

// run is one script under one shell: "bash" runs every script as
// `bash s.sh`; "sh" runs the #!/bin/sh scripts as `sh s.sh`, compared
// with `bash --posix s.sh` on the host (the VM's sh is the same program
// as its bash, and sh scripts are written for POSIX mode).
type run struct {
	shell  string
	script string // path under testdata, slash-separated
}

// key is how known-failures.txt names a run.
func (r run) key() string {
	if r.shell == "bash" {
		return r.script
	}
	return r.shell + ":" + r.script
}

// env is the whole environment on both sides; HOME need not exist, the
// scripts do not use it.
var env = []string{"PATH=/usr/bin:/bin", "HOME=/home/user", "LANG=C.UTF-8", "TZ=UTC"}

// corpus lists the runs, sorted.
func corpus(t *testing.T) []run {
	t.Helper()
	var runs []run
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sh") {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, "testdata"+string(filepath.Separator)))
		runs = append(runs, run{"bash", rel})
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, []byte("#!/bin/sh\n")) {
			runs = append(runs, run{"sh", rel})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].key() < runs[j].key() })
	return runs
}

// knownEntry is one line of known-failures.txt.
type knownEntry struct {
	reason string
	// flaky marks a run whose outcome varies between runs today (a race
	// in the shell): it may match or not without failing the test.
	flaky bool
}

// readKnown parses known-failures.txt: per line a run key, optionally
// preceded by "flaky " and followed by "#" and a reason.
func readKnown(t *testing.T) map[string]knownEntry {
	t.Helper()
	known := map[string]knownEntry{}
	f, err := os.Open(knownFile)
	if errors.Is(err, fs.ErrNotExist) {
		return known
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, reason, _ := strings.Cut(line, "#")
		k, flaky := strings.CutPrefix(strings.TrimSpace(k), "flaky ")
		known[strings.TrimSpace(k)] = knownEntry{strings.TrimSpace(reason), flaky}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return known
}

// checkHostBash fails unless the oracle is bash 5.2.
func checkHostBash(t *testing.T) {
	t.Helper()
	out, err := exec.Command(hostBash, "--version").Output()
	if err != nil {
		t.Fatalf("host bash (the oracle, %s): %v", hostBash, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if !strings.Contains(first, "version 5.2.") {
		t.Fatalf("the corpus oracle must be GNU bash 5.2; %s is %q", hostBash, first)
	}
}

// programNames are the names a shell may put before its error messages:
// the script as run, the shell by name or path. The issue compares
// stderr modulo the program name, so any of them reads "$0".
var programNames = []string{"$DIR/s.sh", "./s.sh", "s.sh", "/usr/bin/bash", "/bin/bash", "/usr/bin/sh", "/bin/sh", "bash", "sh"}

// normalize makes the two sides comparable: the run's directory (a host
// temporary directory or a VM path) becomes "$DIR", and a program name
// opening a line of stderr becomes "$0".
func normalize(o outcome, dir string) outcome {
	o.stdout = strings.ReplaceAll(o.stdout, dir, "$DIR")
	lines := strings.SplitAfter(strings.ReplaceAll(o.stderr, dir, "$DIR"), "\n")
	for i, l := range lines {
		for _, p := range programNames {
			if rest, ok := strings.CutPrefix(l, p+": "); ok {
				lines[i] = "$0: " + rest
				break
			}
		}
	}
	o.stderr = strings.Join(lines, "")
	return o
}

// hostRun runs the script on the host, in a fresh directory under base
// as s.sh.
func hostRun(base string, r run, script []byte) (outcome, error) {
	dir, err := os.MkdirTemp(base, "run")
	if err != nil {
		return outcome{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "s.sh"), script, 0o644); err != nil {
		return outcome{}, err
	}
	argv := []string{"s.sh"}
	if r.shell == "sh" {
		argv = []string{"--posix", "s.sh"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, hostBash, argv...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return outcome{}, fmt.Errorf("host bash %s: timed out; corpus scripts must end quickly", r.key())
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() { // as a shell reports it
			code = 128 + int(ws.Signal())
		}
	case err != nil:
		return outcome{}, fmt.Errorf("host bash %s: %w", r.key(), err)
	}
	return normalize(outcome{out.String(), errb.String(), code}, dir), nil
}

// vmRun runs the script in the VM, in a fresh directory as s.sh.
func vmRun(h *vmhost.Host, r run, script []byte) (outcome, error) {
	ctx := context.Background()
	dir := path.Join(vm.Workspace, r.shell+"-"+strings.NewReplacer("/", "-", ".sh", "").Replace(r.script))
	if err := h.MkdirAll(ctx, dir, 0o755); err != nil {
		return outcome{}, err
	}
	if err := h.WriteFile(ctx, path.Join(dir, "s.sh"), script, 0o644); err != nil {
		return outcome{}, err
	}
	var out, errb bytes.Buffer
	ex, err := h.Run(ctx, vmhost.RunSpec{Argv: []string{r.shell, "s.sh"}, Env: env, Cwd: dir,
		Stdout: &out, Stderr: &errb, Timeout: scriptTimeout})
	if err != nil {
		return outcome{}, fmt.Errorf("VM %s: %w", r.key(), err)
	}
	if len(ex.Note) > 0 { // a timeout: make it part of the mismatch
		errb.WriteString("[host note: " + string(ex.Note) + "]")
	}
	return normalize(outcome{out.String(), errb.String(), ex.Code}, dir), nil
}

// diff describes the first difference between the oracle and the VM.
func diff(want, got outcome) string {
	var b strings.Builder
	for _, s := range []struct {
		name      string
		want, got string
	}{{"stdout", want.stdout, got.stdout}, {"stderr", want.stderr, got.stderr}} {
		if s.want == s.got {
			continue
		}
		w, g := strings.SplitAfter(s.want, "\n"), strings.SplitAfter(s.got, "\n")
		for i := 0; i < max(len(w), len(g)); i++ {
			var wl, gl string
			if i < len(w) {
				wl = w[i]
			}
			if i < len(g) {
				gl = g[i]
			}
			if wl != gl {
				fmt.Fprintf(&b, "%s line %d: bash %q, VM %q\n", s.name, i+1, wl, gl)
				break
			}
		}
	}
	if want.code != got.code {
		fmt.Fprintf(&b, "exit: bash %d, VM %d\n", want.code, got.code)
	}
	return b.String()
}

// reason is a one-line summary of a mismatch for known-failures.txt.
func reason(want, got outcome) string {
	first, _, _ := strings.Cut(diff(want, got), "\n")
	if len(first) > 100 {
		first = first[:100] + "..."
	}
	return summary(want, got) + "; " + first
}

// summary names what differs.
func summary(want, got outcome) string {
	var parts []string
	if want.stdout != got.stdout {
		parts = append(parts, "stdout")
	}
	if want.stderr != got.stderr {
		parts = append(parts, "stderr")
	}
	if want.code != got.code {
		parts = append(parts, fmt.Sprintf("exit %d want %d", got.code, want.code))
	}
	return strings.Join(parts, ", ")
}

// TestCorpus runs every script under host bash 5.2 and under the VM's
// bash (and the #!/bin/sh ones under sh too) and compares stdout, stderr
// and exit status byte for byte.
func TestCorpus(t *testing.T) {
	checkHostBash(t)
	runs := corpus(t)
	if len(runs) < minRuns {
		t.Fatalf("the corpus has %d runs; issue #20 asks for at least %d", len(runs), minRuns)
	}
	known := readKnown(t)
	h := vmtest.NewHost(t, vmhost.Config{})

	// The runs mostly wait (on the VM, on sleeps), so more of them than
	// there are cores run at once; subtests then only report.
	base := t.TempDir()
	results := make([][2]outcome, len(runs))
	sem := make(chan struct{}, 4*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			script, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(r.script)))
			if err != nil {
				t.Error(err)
				return
			}
			want, err := hostRun(base, r, script)
			if err != nil {
				t.Error(err)
				return
			}
			got, err := vmRun(h, r, script)
			if err != nil {
				t.Error(err)
				return
			}
			if strings.Contains(want.stdout, "REACHED") {
				// The corpus convention: REACHED marks a line that must
				// not run (errexit, nounset...); the oracle proves it.
				t.Errorf("%s: host bash printed REACHED; the script does not test what it claims", r.key())
			}
			results[i] = [2]outcome{want, got}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	failing := map[string]string{} // key → reason
	t.Run("scripts", func(t *testing.T) {
		for i, r := range runs {
			t.Run(r.key(), func(t *testing.T) {
				want, got := results[i][0], results[i][1]
				entry, listed := known[r.key()]
				if want == got {
					if listed && !entry.flaky && !*updateKnown {
						t.Errorf("%s now matches host bash: remove it from %s", r.key(), knownFile)
					}
					return
				}
				failing[r.key()] = reason(want, got)
				if listed || *updateKnown {
					t.Logf("known mismatch:\n%s", diff(want, got))
				} else {
					t.Errorf("%s does not match host bash (a regression unless listed in %s):\n%s"+
						"-- bash stdout:\n%s-- bash stderr:\n%s-- VM stdout:\n%s-- VM stderr:\n%s",
						r.key(), knownFile, diff(want, got), want.stdout, want.stderr, got.stdout, got.stderr)
				}
			})
		}
	})
	for k := range known {
		if !slices.ContainsFunc(runs, func(r run) bool { return r.key() == k }) && !*updateKnown {
			t.Errorf("%s lists %s, which is not in the corpus", knownFile, k)
		}
	}
	rate := float64(len(runs)-len(failing)) / float64(len(runs))
	t.Logf("%d of %d runs match host bash: pass rate %.4f", len(runs)-len(failing), len(runs), rate)
	t.Log(byTopic(runs, failing))
	if *updateKnown {
		for k, e := range known { // flakiness is a human judgement: keep it
			if e.flaky && slices.ContainsFunc(runs, func(r run) bool { return r.key() == k }) {
				if _, ok := failing[k]; !ok {
					failing[k] = e.reason
				}
			}
		}
		if err := writeKnown(failing, known); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s with %d entries", knownFile, len(failing))
		return
	}
	if rate < minPassRate {
		t.Errorf("pass rate %.4f is below minPassRate %.4f", rate, minPassRate)
	}
}

// byTopic tabulates matches per topic directory, to show where a shell
// stands.
func byTopic(runs []run, failing map[string]string) string {
	type count struct{ pass, total int }
	counts := map[string]*count{}
	var topics []string
	for _, r := range runs {
		topic, _, _ := strings.Cut(r.script, "/")
		if r.shell != "bash" {
			topic = r.shell + ":*"
		}
		c := counts[topic]
		if c == nil {
			c = &count{}
			counts[topic] = c
			topics = append(topics, topic)
		}
		c.total++
		if _, bad := failing[r.key()]; !bad {
			c.pass++
		}
	}
	sort.Strings(topics)
	var b strings.Builder
	b.WriteString("matches per topic:")
	for _, topic := range topics {
		c := counts[topic]
		fmt.Fprintf(&b, "\n  %-10s %3d/%-3d", topic, c.pass, c.total)
	}
	return b.String()
}

// writeKnown rewrites known-failures.txt from the measured mismatches.
func writeKnown(failing map[string]string, known map[string]knownEntry) error {
	keys := make([]string, 0, len(failing))
	for k := range failing {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Corpus runs that do not match host bash 5.2 today (see doc.go).\n")
	b.WriteString("# Regenerate: go test ./internal/shcorpus -run TestCorpus -update-known-failures\n")
	b.WriteString("# A \"flaky\" entry may match or not; the update keeps those marks.\n")
	for _, k := range keys {
		if known[k].flaky {
			b.WriteString("flaky ")
		}
		fmt.Fprintf(&b, "%s # %s\n", k, failing[k])
	}
	if err := os.WriteFile(knownFile, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("known failures: %w", err)
	}
	return nil
}

func TestNormalize(t *testing.T) {
	in := outcome{
		stdout: "/tmp/x/run1/f\n",
		stderr: "s.sh: line 3: x: unbound variable\n/tmp/x/run1/s.sh: line 1: y\nbash: -c: line 2: syntax error\nls: cannot access 'a'\nsh: 1: z\n",
	}
	got := normalize(in, "/tmp/x/run1")
	want := outcome{
		stdout: "$DIR/f\n",
		stderr: "$0: line 3: x: unbound variable\n$0: line 1: y\n$0: -c: line 2: syntax error\nls: cannot access 'a'\n$0: 1: z\n",
	}
	if got != want {
		t.Fatalf("normalize:\n got %+v\nwant %+v", got, want)
	}
}
