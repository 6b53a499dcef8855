// Package bench measures secexec's exec path through the public API: the
// latency of warm execs on one VM, evaluate calls, VM creation, memory
// per idle VM and per live isolate, and sustained throughput. Its rows
// match those of the upstream comparison (shared/bench) so both can be
// read side by side; Gate turns them into a regression check.
package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/secexec/secexec"
)

// Units of a Row.
const (
	UnitMs      = "ms"
	UnitMiB     = "MiB"
	UnitPerSec  = "execs/s"
	UnitPercent = "%"
)

// Row is one measured figure. Latency rows fill P50 and P95 (of N
// samples); memory, throughput and ratio rows fill Value.
type Row struct {
	ID    string  `json:"id"`
	Label string  `json:"label"`
	Unit  string  `json:"unit"`
	N     int     `json:"n"`
	P50   float64 `json:"p50,omitempty"`
	P95   float64 `json:"p95,omitempty"`
	Value float64 `json:"value"`
	// Note says how a row was measured when it differs from the run's
	// configuration (say, in process when the run uses an engine).
	Note string `json:"note,omitempty"`
}

// Latency reports whether the row is a latency (P50/P95) row.
func (r Row) Latency() bool { return r.Unit == UnitMs }

// Config configures Run. The zero value measures every row with N=30 in
// the shared engine.
type Config struct {
	// N is the number of samples per latency row (and of VMs or isolates
	// held by the memory rows, capped); 0 means 30.
	N int
	// Engine is where the VMs of the exec rows run. The memory and
	// hit-rate rows always run in process: they read this process's RSS
	// and its V8 engine's phase reports.
	Engine secexec.EngineMode
	// Rows selects rows by ID (see RowIDs); empty means all.
	Rows []string
	// Sustain is how long a throughput row runs; 0 means 2s.
	Sustain time.Duration
	// NoPool, if set, measures the throughput rows with the V8 warm pool
	// disabled. The pool's capacity is fixed when a process's engine
	// starts, so this is typically another process (the CLI re-executes
	// itself with SECEXEC_V8_WARM_ISOLATES=0). Without it those rows are
	// left out.
	NoPool func(ctx context.Context, rowIDs []string) ([]Row, error)
	// Phases, if set, is the recorder installed as the host's default
	// logger so that the hit-rate row can count warm-pool hits. The
	// caller must have set SECEXEC_SESSION_PHASES=1 before the first
	// in-process VM was created. Without it the hit-rate row is left out.
	Phases *Recorder
	// Progress, if set, is called before each row is measured.
	Progress func(id string)
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger

	// gate is set by Gate: slow rows take fewer samples (rowDef.gateN).
	gate bool
}

// rowDef describes one row.
type rowDef struct {
	id, label string
	kind      rowKind
	cmd       string // for exec rows
	// setup runs once (untimed, in the exec VM) before the row.
	setup string
	// pace is the pause (not timed) before each exec of a row.
	pace time.Duration
	// maxN caps the samples of a slow row; 0 means Config.N.
	maxN int
	// gateN caps the samples of a slow row when Gate measures it (three
	// rounds); 0 means maxN.
	gateN int
	// prepare readies a VM for a cold row's command (untimed).
	prepare func(ctx context.Context, vm *secexec.VM) error
}

type rowKind int

const (
	kindExec rowKind = iota
	kindEval
	kindContextEval
	kindOneShot
	kindCreate
	kindMemVM
	kindMemIsolate
	kindHitRate
	kindSustain
	kindSustainNoPool
	kindFetch
	kindGuestHTTP
	kindTSC
	kindFork
	kindCold
)

var rowDefs = []rowDef{
	{id: "node", label: "node -e ''", kind: kindExec, cmd: "node -e ''"},
	// The same exec after a pause (not timed) in which the warm pool
	// refills: the latency of a warm exec when execs are not back to back.
	{id: "node-paced", label: "node -e '' (paced: warm hit)", kind: kindExec, cmd: "node -e ''", pace: pacedGap},
	{id: "true", label: "true", kind: kindExec, cmd: "true"},
	{id: "pwd", label: "pwd", kind: kindExec, cmd: "pwd"},
	{id: "printf", label: "printf ''", kind: kindExec, cmd: "printf ''"},
	{id: "date", label: "date", kind: kindExec, cmd: "date"},
	{id: "ls", label: "ls (empty dir)", kind: kindExec, cmd: "ls " + emptyDir},
	{id: "pipe", label: "echo hello | wc -c", kind: kindExec, cmd: "echo hello | wc -c"},
	// The same pipeline under the published userland's shell (brush),
	// which secexec's own sh replaced: the comparison the shell must not
	// lose, measured in the same run.
	{id: "pipe-brush", label: "brush -c 'echo hello | wc -c'", kind: kindExec, cmd: "brush -c 'echo hello | wc -c'"},
	{id: "sh-c", label: "sh -c 'echo hello; pwd'", kind: kindExec, cmd: "sh -c 'echo hello; pwd'"},
	{id: "sh-true", label: "sh -c true", kind: kindExec, cmd: "sh -c true"},
	{id: "brush-true", label: "brush -c true", kind: kindExec, cmd: "brush -c true"},
	{id: "sh-wc", label: "sh -c 'wc -c /dev/null'", kind: kindExec, cmd: "sh -c 'wc -c /dev/null'"},
	{id: "brush-wc", label: "brush -c 'wc -c /dev/null'", kind: kindExec, cmd: "brush -c 'wc -c /dev/null'"},
	{id: "sh-c-brush", label: "brush -c 'echo hello; pwd'", kind: kindExec, cmd: "brush -c 'echo hello; pwd'"},
	// The pipeline with the warm pools refilled between execs (not
	// timed): the latency when execs are not back to back.
	{id: "pipe-paced", label: "echo hello | wc -c (paced)", kind: kindExec, cmd: "echo hello | wc -c", pace: pacedGap},
	{id: "pipe-brush-paced", label: "brush -c 'echo hello | wc -c' (paced)", kind: kindExec, cmd: "brush -c 'echo hello | wc -c'", pace: pacedGap},
	{id: "python", label: "python3 -c pass", kind: kindExec, cmd: "python3 -c pass"},
	// The same exec after a pause (not timed) long enough for the engine
	// to start the next parked interpreter (internal/wasm parked.go,
	// ~100 ms of CPU): the latency of a pooled start when execs are not
	// back to back.
	{id: "python-paced", label: "python3 -c pass (paced: parked interpreter)", kind: kindExec, cmd: "python3 -c pass", pace: pythonPacedGap},
	// The interpreter plus the support layer's socket and ssl modules,
	// which urllib.request imports: what a script that fetches pays.
	{id: "python-urllib", label: "python3 -c 'import urllib.request'", kind: kindExec, cmd: "python3 -c 'import urllib.request'"},
	{id: "jq", label: "jq -n 1", kind: kindExec, cmd: "jq -n 1"},
	{id: "grep-pipe", label: "echo x | grep x", kind: kindExec, cmd: "echo x | grep x"},
	{id: "git-status", label: "git status (small repo)", kind: kindExec, cmd: "git -C " + benchRepo + " status", setup: benchRepoSetup},
	// A local clone: objects copied through go-git's file transport,
	// refs, config, index and checkout. $RANDOM names a fresh directory
	// without another process.
	{id: "git-clone", label: "git clone (small local repo)", kind: kindExec, cmd: "git clone -q " + benchCloneSrc + " /tmp/bench-clones/c$RANDOM$RANDOM", setup: benchCloneSetup},
	{id: "eval", label: "JS evaluate 1+1", kind: kindEval},
	// Evaluate on a live persistent context: no process start at all.
	{id: "context-eval", label: "context evaluate 1+1", kind: kindContextEval},
	{id: "oneshot", label: "one-shot evaluate", kind: kindOneShot},
	{id: "create", label: "VM create+close", kind: kindCreate},
	// A copy-on-write fork of a VM and closing it. The fork shares the
	// parent's whole inode table and copies nothing, so the two rows, 50
	// times apart in files, must cost the same.
	{id: "fork", label: "VM fork+close (2000 files)", kind: kindFork, setup: forkSetup},
	{id: "fork-100k", label: "VM fork+close (100000 files)", kind: kindFork, setup: forkSetup100k},
	{id: "mem-vm", label: "memory per idle VM", kind: kindMemVM},
	{id: "mem-isolate", label: "memory per live isolate", kind: kindMemIsolate},
	{id: "hitrate", label: "V8 warm pool hit rate (paced)", kind: kindHitRate, cmd: "node -e ''", pace: hitRatePace},
	{id: "hitrate-burst", label: "V8 warm pool hit rate (back to back)", kind: kindHitRate, cmd: "node -e ''"},
	{id: "fetch", label: "node fetch of a loopback URL (whole exec)", kind: kindFetch},
	{id: "guest-http", label: "guest HTTP server, requests from the host", kind: kindGuestHTTP},
	{id: "tsc", label: "tsc --noEmit, small project (whole exec)", kind: kindTSC, maxN: 10},
	// Cold rows: each sample is the first exec of a fresh engine process
	// (a VM of its own, started untimed), which finds only what the
	// host's on-disk caches kept from earlier engines.
	{id: "node-cold", label: "node -e '' (fresh engine process)", kind: kindCold, cmd: "node -e ''", gateN: 5},
	{id: "tsc-cold", label: "tsc --noEmit, small project (fresh engine process)", kind: kindCold,
		cmd: "tsc --noEmit -p " + tscProject, prepare: writeTSProject, gateN: 3},
	{id: "sustained-true", label: "sustained true", kind: kindSustain, cmd: "true"},
	{id: "sustained-node", label: "sustained node -e ''", kind: kindSustain, cmd: "node -e ''"},
	{id: "sustained-true-nopool", label: "sustained true (no warm pool)", kind: kindSustainNoPool, cmd: "true"},
	{id: "sustained-node-nopool", label: "sustained node -e '' (no warm pool)", kind: kindSustainNoPool, cmd: "node -e ''"},
}

// forkSetup fills the fork row's parent with 2000 files of 1 KiB in
// 20 directories (~2 MB).
const forkSetup = `for d in $(seq 1 20); do mkdir -p /workspace/fork/d$d; for f in $(seq 1 100); do ` +
	`head -c 1024 /dev/zero > /workspace/fork/d$d/f$f; done; done`

// forkSetup100k fills the fork-100k row's parent with 100000 files of
// 1 KiB in 1000 directories (~100 MB), from one node process: a shell
// loop would start 100000 processes.
const forkSetup100k = `node -e 'const fs = require("fs"); const b = Buffer.alloc(1024); ` +
	`for (let d = 0; d < 1000; d++) { const p = "/workspace/fork/d" + d; fs.mkdirSync(p, {recursive: true}); ` +
	`for (let f = 0; f < 100; f++) fs.writeFileSync(p + "/f" + f, b); }'`

// emptyDir is the directory the ls row lists.
const emptyDir = "/tmp/bench-empty"

// benchRepo is the git-status row's repository: 20 committed files in
// two directories, one of them modified and one untracked.
const (
	benchRepo      = "/tmp/bench-repo"
	benchRepoSetup = "mkdir -p " + benchRepo + "/src && cd " + benchRepo + " && git init -q && " +
		"for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i > f$i.txt; echo code $i > src/c$i.go; done && " +
		"git add -A && GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com " +
		"GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com git commit -q -m init && " +
		"echo more >> f1.txt && echo new > untracked.txt"
)

// benchCloneSrc is the git-clone row's source: five commits of ten
// small files.
const (
	benchCloneSrc   = "/tmp/bench-clone-src"
	benchCloneSetup = "mkdir -p /tmp/bench-clones " + benchCloneSrc + "/src && cd " + benchCloneSrc + " && git init -q && " +
		"export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com && " +
		"for c in 1 2 3 4 5; do for i in 1 2 3 4 5; do echo line $c $i > f$i.txt; echo code $c $i > src/c$i.go; done; " +
		"git add -A && git commit -q -m commit$c; done"
)

// RowIDs returns the IDs of every row, in the order Run measures them.
func RowIDs() []string {
	ids := make([]string, len(rowDefs))
	for i, d := range rowDefs {
		ids[i] = d.id
	}
	return ids
}

// ErrUnknownRow is returned for a Config.Rows entry that names no row.
var ErrUnknownRow = errors.New("bench: unknown row")

func (c *Config) defaults() {
	if c.N <= 0 {
		c.N = 30
	}
	if c.Sustain <= 0 {
		c.Sustain = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// samples is how many samples row d takes.
func (c *Config) samples(d rowDef) int {
	n := c.N
	if d.maxN > 0 && n > d.maxN {
		n = d.maxN
	}
	if c.gate && d.gateN > 0 && n > d.gateN {
		n = d.gateN
	}
	return n
}

func (c *Config) selected() ([]rowDef, error) {
	if len(c.Rows) == 0 {
		return rowDefs, nil
	}
	var out []rowDef
	for _, id := range c.Rows {
		i := slices.IndexFunc(rowDefs, func(d rowDef) bool { return d.id == id })
		if i < 0 {
			return nil, fmt.Errorf("%w %q (rows: %s)", ErrUnknownRow, id, strings.Join(RowIDs(), ","))
		}
		if !slices.ContainsFunc(out, func(d rowDef) bool { return d.id == id }) {
			out = append(out, rowDefs[i])
		}
	}
	// Measure in the canonical order whatever order was asked for.
	sort.SliceStable(out, func(a, b int) bool { return rowIndex(out[a].id) < rowIndex(out[b].id) })
	return out, nil
}

func rowIndex(id string) int {
	return slices.IndexFunc(rowDefs, func(d rowDef) bool { return d.id == id })
}

// Run measures the selected rows. Each row is warmed up before it is
// measured; exec rows share one VM.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	cfg.defaults()
	defs, err := cfg.selected()
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg}
	defer r.close()
	var rows []Row
	var noPool []string
	for _, d := range defs {
		if d.kind == kindSustainNoPool {
			noPool = append(noPool, d.id)
			continue
		}
		if d.kind == kindHitRate && cfg.Phases == nil {
			continue
		}
		if cfg.Progress != nil {
			cfg.Progress(d.id)
		}
		row, err := r.measure(ctx, d)
		if err != nil {
			return rows, fmt.Errorf("bench: row %s: %w", d.id, err)
		}
		rows = append(rows, row)
	}
	if len(noPool) > 0 && cfg.NoPool != nil {
		if cfg.Progress != nil {
			cfg.Progress(strings.Join(noPool, ","))
		}
		more, err := cfg.NoPool(ctx, noPool)
		if err != nil {
			return rows, fmt.Errorf("bench: rows without the warm pool: %w", err)
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

// runner holds the VMs shared by the rows of one Run.
type runner struct {
	cfg Config
	vm  *secexec.VM        // exec rows, in cfg.Engine
	jsc *secexec.JSContext // the context-eval row's context, on vm
}

func (r *runner) close() {
	if r.jsc != nil {
		_ = r.jsc.Close()
	}
	if r.vm != nil {
		_ = r.vm.Close()
	}
}

func (r *runner) options(engine secexec.EngineMode) secexec.Options {
	return secexec.Options{Permissions: secexec.AllowAll(), Engine: engine, Logger: r.cfg.Logger}
}

func (r *runner) execVM(ctx context.Context) (*secexec.VM, error) {
	if r.vm != nil {
		return r.vm, nil
	}
	vm, err := secexec.NewVM(ctx, r.options(r.cfg.Engine))
	if err != nil {
		return nil, err
	}
	if err := vm.FS().MkdirAll(ctx, emptyDir, 0o755); err != nil {
		_ = vm.Close()
		return nil, err
	}
	r.vm = vm
	return vm, nil
}

// warmups is how many untimed runs precede a latency row.
const warmups = 3

func (r *runner) measure(ctx context.Context, d rowDef) (Row, error) {
	row := Row{ID: d.id, Label: d.label, Unit: UnitMs, N: r.cfg.N}
	var op func() error
	switch d.kind {
	case kindExec:
		vm, err := r.execVM(ctx)
		if err != nil {
			return row, err
		}
		if d.setup != "" {
			if err := execOK(ctx, vm, d.setup); err != nil {
				return row, fmt.Errorf("setup: %w", err)
			}
		}
		op = func() error { return execOK(ctx, vm, d.cmd) }
	case kindEval:
		vm, err := r.execVM(ctx)
		if err != nil {
			return row, err
		}
		op = func() error {
			v, err := vm.JS().Evaluate(ctx, "1+1", nil)
			if err == nil && string(v) != "2" {
				err = fmt.Errorf("evaluate 1+1 = %s", v)
			}
			return err
		}
	case kindContextEval:
		vm, err := r.execVM(ctx)
		if err != nil {
			return row, err
		}
		if r.jsc == nil {
			if r.jsc, err = vm.JS().NewContext(ctx, nil); err != nil {
				return row, err
			}
		}
		op = func() error {
			v, err := r.jsc.Evaluate(ctx, "1+1")
			if err == nil && string(v) != "2" {
				err = fmt.Errorf("context evaluate 1+1 = %s", v)
			}
			return err
		}
	case kindOneShot:
		o := &secexec.OneShot{VM: secexec.Options{Engine: r.cfg.Engine, Logger: r.cfg.Logger}}
		op = func() error {
			v, err := secexec.Evaluate(ctx, "1+1", o)
			if err == nil && string(v) != "2" {
				err = fmt.Errorf("evaluate 1+1 = %s", v)
			}
			return err
		}
	case kindCreate:
		op = func() error {
			vm, err := secexec.NewVM(ctx, r.options(r.cfg.Engine))
			if err != nil {
				return err
			}
			return vm.Close()
		}
	case kindFork:
		o := r.options(r.cfg.Engine)
		// Room for the 100k-file tree on both sides (a fork is charged
		// in full to its own VM).
		o.Limits = secexec.Limits{FSBytes: 256 << 20, FSInodes: 200000}
		parent, err := secexec.NewVM(ctx, o)
		if err != nil {
			return row, err
		}
		defer parent.Close()
		if err := execOK(ctx, parent, d.setup); err != nil {
			return row, fmt.Errorf("setup: %w", err)
		}
		op = func() error {
			child, err := parent.Fork(ctx)
			if err != nil {
				return err
			}
			return child.Close()
		}
	case kindMemVM:
		return r.memIdleVMs(ctx, row)
	case kindMemIsolate:
		return r.memLiveIsolates(ctx, row)
	case kindHitRate:
		return r.hitRate(ctx, d, row)
	case kindSustain:
		vm, err := r.execVM(ctx)
		if err != nil {
			return row, err
		}
		return Sustain(ctx, vm, d.id, d.label, d.cmd, r.cfg.Sustain)
	case kindFetch:
		f, err := r.fetchOp(ctx)
		if err != nil {
			return row, err
		}
		defer f.close()
		op = f.op
	case kindGuestHTTP:
		return r.guestHTTP(ctx, d)
	case kindCold:
		return r.cold(ctx, d)
	case kindTSC:
		vm, err := r.execVM(ctx)
		if err != nil {
			return row, err
		}
		if err := writeTSProject(ctx, vm); err != nil {
			return row, err
		}
		op = func() error { return execOK(ctx, vm, "tsc --noEmit -p "+tscProject) }
	default:
		return row, fmt.Errorf("row kind %d not measurable here", d.kind)
	}
	n := r.cfg.samples(d)
	row.N = n
	samples, err := sample(n, d.pace, op)
	if err != nil {
		return row, err
	}
	row.P50, row.P95 = percentile(samples, 50), percentile(samples, 95)
	return row, nil
}

// cold measures a cold row: each sample starts a VM in an engine
// process of its own (untimed), prepares it, and times d.cmd, the
// engine's first exec. One untimed sample first fills the host's on-disk
// caches, as any earlier engine on the host would have.
func (r *runner) cold(ctx context.Context, d rowDef) (Row, error) {
	row := Row{ID: d.id, Label: d.label, Unit: UnitMs, N: r.cfg.samples(d)}
	once := func() (time.Duration, error) {
		opts := r.options(secexec.EnginePerVM)
		vm, err := secexec.NewVM(ctx, opts)
		if err != nil {
			return 0, err
		}
		defer vm.Close()
		if d.prepare != nil {
			if err := d.prepare(ctx, vm); err != nil {
				return 0, err
			}
		}
		t := time.Now()
		err = execOK(ctx, vm, d.cmd)
		return time.Since(t), err
	}
	if _, err := once(); err != nil {
		return row, err
	}
	samples := make([]float64, 0, row.N)
	for range row.N {
		dt, err := once()
		if err != nil {
			return row, err
		}
		samples = append(samples, ms(dt))
	}
	row.P50, row.P95 = percentile(samples, 50), percentile(samples, 95)
	return row, nil
}

// pacedGap is the pause before each exec of a paced latency row: long
// enough for the pool to boot the isolate the previous exec claimed.
const pacedGap = 50 * time.Millisecond

// pythonPacedGap is the pause before each exec of python-paced: a parked
// CPython takes about 100 ms of CPU to start, which on two busy cores
// (load 15) is most of a second of wall time.
const pythonPacedGap = 1500 * time.Millisecond

// sample runs op warmups times untimed, then n times timed, each after
// a pause of pace (not timed), and returns the durations in
// milliseconds.
func sample(n int, pace time.Duration, op func() error) ([]float64, error) {
	for range warmups {
		if err := op(); err != nil {
			return nil, err
		}
	}
	out := make([]float64, 0, n)
	for range n {
		if pace > 0 {
			time.Sleep(pace)
		}
		t := time.Now()
		if err := op(); err != nil {
			return nil, err
		}
		out = append(out, ms(time.Since(t)))
	}
	return out, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// execOK runs cmdline and fails unless it exits 0.
func execOK(ctx context.Context, vm *secexec.VM, cmdline string) error {
	res, err := vm.Exec(ctx, cmdline, nil)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%q exited %d: %s", cmdline, res.ExitCode, bounded(res.Stderr))
	}
	return nil
}

func bounded(b []byte) string {
	const limit = 200
	if len(b) > limit {
		b = b[:limit]
	}
	return strings.TrimSpace(string(b))
}

// percentile returns the p-th percentile (nearest rank) of xs.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100+0.999999) - 1
	rank = min(max(rank, 0), len(s)-1)
	return s[rank]
}

// Sustain runs cmdline back to back on vm for about d (after a short
// warm-up) and returns the throughput row.
func Sustain(ctx context.Context, vm *secexec.VM, id, label, cmdline string, d time.Duration) (Row, error) {
	row := Row{ID: id, Label: label, Unit: UnitPerSec}
	for range warmups {
		if err := execOK(ctx, vm, cmdline); err != nil {
			return row, err
		}
	}
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		if err := execOK(ctx, vm, cmdline); err != nil {
			return row, err
		}
		n++
	}
	row.N = n
	row.Value = float64(n) / time.Since(start).Seconds()
	return row, nil
}
