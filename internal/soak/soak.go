// Package soak runs a mixed load against secexec for a chosen duration —
// shell pipelines, node with an npm package, limits hit on purpose, VMs
// created and closed, engine processes killed on purpose — while it
// samples the memory, descriptors and live objects of the client and the
// engine, and then checks that nothing leaked and that memory stayed flat.
// `secexec soak` is its command; docs/threat-model.md says how to read it.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec"
)

// Config configures a soak run.
type Config struct {
	// Duration is how long the load runs (required).
	Duration time.Duration
	// Interval is the time between samples; 0 picks Duration/40, within
	// [1s, 15s].
	Interval time.Duration
	// Workers is the number of goroutines running the load, each with a
	// VM of its own (default 2).
	Workers int
	// CrashEvery is the time between engine processes killed on purpose
	// (default Duration/6, at least 5s); negative kills none.
	CrashEvery time.Duration
	// NodeModules is a host node_modules directory holding the npm
	// package "qs"; empty finds the polyfill packages secexec fetched at
	// set-up.
	NodeModules string
	// RSSTolerance is the growth of the late RSS median over the early one
	// that still counts as flat (default 0.10).
	RSSTolerance float64
	// Progress, if set, receives a line per sample as the run goes.
	Progress io.Writer
}

// Report is the outcome of a run.
type Report struct {
	Duration time.Duration
	Warmup   time.Duration
	// Ops counts completed operations by kind; Execs all programs run.
	Ops   map[string]int64
	Execs int64
	// Crashes counts engine processes killed and recovered from.
	Crashes int64
	// Samples are taken every Interval, the last one after the load.
	Samples []Sample
	// Idle and End are the idle states before the load and after it.
	Idle, End State
	// Failures are operations whose result was not the expected one.
	Failures []string
	// Violations are failed assertions: leaks, RSS growth, failures.
	Violations []string
}

// Sample is one observation during the run.
type Sample struct {
	T                    time.Duration
	ClientRSS, EngineRSS int64
	ClientFDs, EngineFDs int
	Goroutines           int
	Engines              int // engine processes alive (children of this process)
	Live                 Live
	Execs                int64
}

// ErrViolated is returned (wrapped) by Run when an assertion failed.
var ErrViolated = errors.New("soak: assertions failed")

// op is one kind of operation of the load.
type op struct {
	name string
	run  func(ctx context.Context, w *worker) error
}

type worker struct {
	vm    *secexec.VM
	ops   int
	execs *atomic.Int64
}

func (c *Config) defaults() error {
	if c.Duration <= 0 {
		return errors.New("soak: duration must be positive")
	}
	if c.Interval <= 0 {
		c.Interval = min(max(c.Duration/40, time.Second), 15*time.Second)
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.CrashEvery == 0 {
		c.CrashEvery = max(c.Duration/6, 5*time.Second)
	}
	if c.RSSTolerance <= 0 {
		c.RSSTolerance = 0.10
	}
	return nil
}

// Run runs the soak. The returned Report is complete even when the error
// is ErrViolated; other errors mean the run could not be made.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	p, err := newProbe(ctx)
	if err != nil {
		return nil, err
	}
	// The first VM sets up the caches and starts the shared engine.
	first, err := secexec.NewVM(ctx, secexec.Options{})
	if err != nil {
		return nil, err
	}
	_ = first.Close()
	if cfg.NodeModules == "" {
		if cfg.NodeModules, err = findNodeModules(); err != nil {
			return nil, err
		}
	}
	// A copy of its own: the set-up cache is shared with other programs,
	// which may replace it while the run goes on.
	mods, err := os.MkdirTemp("", "secexec-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(mods)
	if err := os.CopyFS(filepath.Join(mods, "node_modules"), os.DirFS(cfg.NodeModules)); err != nil {
		return nil, fmt.Errorf("soak: copying %s: %w", cfg.NodeModules, err)
	}
	cfg.NodeModules = filepath.Join(mods, "node_modules")
	if err := p.prime(ctx, cfg); err != nil {
		return nil, err
	}
	rep := &Report{Duration: cfg.Duration, Warmup: cfg.Duration / 5, Ops: map[string]int64{}}
	if rep.Idle, err = p.idle(ctx); err != nil {
		return nil, err
	}

	var (
		mu    sync.Mutex
		execs atomic.Int64
	)
	record := func(name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		rep.Ops[name]++
		if err != nil && len(rep.Failures) < 100 {
			rep.Failures = append(rep.Failures, fmt.Sprintf("%s: %v", name, err))
		}
	}
	loadCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	for i := 0; i < cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWorker(loadCtx, cfg, i, &execs, record)
		}()
	}
	if cfg.CrashEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(cfg.CrashEvery)
			defer t.Stop()
			for {
				select {
				case <-loadCtx.Done():
					return
				case <-t.C:
				}
				err := crashEngine(loadCtx, p, &execs)
				if loadCtx.Err() != nil {
					return
				}
				record("engine-crash", err)
				if err == nil {
					mu.Lock()
					rep.Crashes++
					mu.Unlock()
				}
			}
		}()
	}
	start := time.Now()
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
sampling:
	for {
		select {
		case <-loadCtx.Done():
			break sampling
		case <-tick.C:
		}
		s := p.sample(ctx, time.Since(start), execs.Load())
		rep.Samples = append(rep.Samples, s)
		if cfg.Progress != nil {
			fmt.Fprintln(cfg.Progress, s.line())
		}
	}
	wg.Wait()
	rep.Execs = execs.Load()
	if rep.End, err = p.idle(ctx); err != nil {
		return rep, err
	}
	rep.check(cfg)
	if len(rep.Violations) > 0 {
		return rep, fmt.Errorf("%w: %d", ErrViolated, len(rep.Violations))
	}
	return rep, nil
}

// check turns the run into violations.
func (r *Report) check(cfg Config) {
	for _, f := range r.Failures {
		r.Violations = append(r.Violations, "unexpected result: "+f)
	}
	if r.Execs == 0 {
		r.Violations = append(r.Violations, "no program ran")
	}
	if cfg.CrashEvery > 0 && r.Duration >= 2*cfg.CrashEvery && r.Crashes == 0 {
		r.Violations = append(r.Violations, "no engine was crashed and recovered from")
	}
	r.Violations = append(r.Violations, r.End.leaks(r.Idle)...)
	post := r.postWarmup()
	if len(post) < 6 {
		r.Violations = append(r.Violations, fmt.Sprintf("only %d samples after warm-up: run longer or sample more often", len(post)))
		return
	}
	for _, m := range []struct {
		name string
		get  func(Sample) int64
	}{{"client RSS", func(s Sample) int64 { return s.ClientRSS }}, {"engine RSS", func(s Sample) int64 { return s.EngineRSS }}} {
		early, late := Flatness(post, m.get)
		if float64(late) > float64(early)*(1+cfg.RSSTolerance) {
			r.Violations = append(r.Violations, fmt.Sprintf("%s grew: median %s in the first third after warm-up, %s in the last (limit +%.0f%%)",
				m.name, mib(early), mib(late), cfg.RSSTolerance*100))
		}
	}
}

// postWarmup returns the samples taken after the warm-up.
func (r *Report) postWarmup() []Sample {
	i := slices.IndexFunc(r.Samples, func(s Sample) bool { return s.T >= r.Warmup })
	if i < 0 {
		return nil
	}
	return r.Samples[i:]
}

// Flatness returns the medians of a figure over the first and the last
// third of samples: the statistic the RSS assertion compares. Medians of
// thirds, not single samples, so that one garbage-collection cycle
// neither hides growth nor fakes it.
func Flatness(samples []Sample, get func(Sample) int64) (early, late int64) {
	return flatness(samples, get)
}

// flatness is Flatness over samples of any kind.
func flatness[S any](samples []S, get func(S) int64) (early, late int64) {
	n := len(samples) / 3
	if n == 0 {
		return 0, 0
	}
	med := func(ss []S) int64 {
		v := make([]int64, len(ss))
		for i, s := range ss {
			v[i] = get(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return med(samples[:n]), med(samples[len(samples)-n:])
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func (s Sample) line() string {
	return fmt.Sprintf("%7.1fs  client %9s %4d fds  engine %9s %4d fds  %5d goroutines  %d engines  vms %d procs %d isolates %d (warm %d)  %d execs",
		s.T.Seconds(), mib(s.ClientRSS), s.ClientFDs, mib(s.EngineRSS), s.EngineFDs, s.Goroutines, s.Engines,
		s.Live.VMs, s.Live.Processes, s.Live.Isolates, s.Live.Warm, s.Execs)
}

// WriteText writes the report for people: the samples over time, the idle
// states, the operations and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("soak: %v (warm-up %v), %d execs, %.1f execs/s, %d engines crashed on purpose\n",
		r.Duration, r.Warmup, r.Execs, float64(r.Execs)/r.Duration.Seconds(), r.Crashes)
	ew.printf("\nsamples:\n")
	for _, s := range r.Samples {
		ew.printf("  %s\n", s.line())
	}
	post := r.postWarmup()
	if len(post) >= 3 {
		for _, m := range []struct {
			name string
			get  func(Sample) int64
		}{{"client RSS", func(s Sample) int64 { return s.ClientRSS }}, {"engine RSS", func(s Sample) int64 { return s.EngineRSS }}} {
			early, late := Flatness(post, m.get)
			ew.printf("%s after warm-up: median %s (first third) -> %s (last third), %+.1f%%\n",
				m.name, mib(early), mib(late), 100*(float64(late)/float64(max(early, 1))-1))
		}
	}
	ew.printf("\nidle before: %s\nidle after:  %s\n", r.Idle, r.End)
	names := make([]string, 0, len(r.Ops))
	for n := range r.Ops {
		names = append(names, n)
	}
	slices.Sort(names)
	ew.printf("\noperations:")
	for _, n := range names {
		ew.printf(" %s=%d", n, r.Ops[n])
	}
	ew.printf("\n")
	if len(r.Violations) == 0 {
		ew.printf("\nPASS: no leaked fds, processes, isolates, VMs or engines; RSS flat\n")
	} else {
		ew.printf("\nFAIL:\n")
		for _, v := range r.Violations {
			ew.printf("  %s\n", v)
		}
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
