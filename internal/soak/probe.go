package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/bench"
	"github.com/secexec/secexec/internal/engine/metrics"
	"github.com/secexec/secexec/internal/js/bootjs"
)

// Live are the shared engine's live-object gauges (docs/protocol.md).
type Live struct {
	VMs, Processes, Isolates, Warm int
}

// State is an idle snapshot: no VM of the run is open.
type State struct {
	ClientFDs, EngineFDs int
	Goroutines           int
	EnginePID            int
	Engines, Zombies     int
	Live                 Live
}

func (s State) String() string {
	return fmt.Sprintf("client %d fds, %d goroutines; engine pid %d, %d fds; %d engine processes (%d zombies); vms %d procs %d isolates %d (warm %d)",
		s.ClientFDs, s.Goroutines, s.EnginePID, s.EngineFDs, s.Engines, s.Zombies, s.Live.VMs, s.Live.Processes, s.Live.Isolates, s.Live.Warm)
}

// leaks compares the idle state after the load with the one before it.
func (s State) leaks(before State) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if s.EnginePID != before.EnginePID {
		add("the shared engine changed from pid %d to %d: it died under the load", before.EnginePID, s.EnginePID)
	}
	if s.Live.VMs != 0 {
		add("leaked VMs: %d open in the engine after every VM was closed", s.Live.VMs)
	}
	if s.Live.Processes != 0 {
		add("leaked guest processes: %d", s.Live.Processes)
	}
	if s.Live.Isolates != s.Live.Warm {
		add("leaked isolates: %d alive, %d of them parked warm", s.Live.Isolates, s.Live.Warm)
	}
	if s.Engines != 1 || s.Zombies != 0 {
		add("leaked engine processes: %d children (%d zombies), want the shared engine alone", s.Engines, s.Zombies)
	}
	if s.ClientFDs > before.ClientFDs {
		add("leaked client descriptors: %d open, %d before the load", s.ClientFDs, before.ClientFDs)
	}
	if s.EngineFDs > before.EngineFDs {
		add("leaked engine descriptors: %d open, %d before the load", s.EngineFDs, before.EngineFDs)
	}
	return out
}

// probe observes this process and its shared engine.
type probe struct {
	self int
}

// newProbe returns a probe of this process, which must have no child
// processes yet: every child it later sees is an engine of the run.
func newProbe(context.Context) (*probe, error) {
	p := &probe{self: os.Getpid()}
	if kids, _ := p.children(); len(kids) != 0 {
		return nil, fmt.Errorf("soak: this process already has %d child processes; run soak on its own", len(kids))
	}
	return p, nil
}

// prime runs every operation of the load once on a VM of its own and
// closes it, so that caches and lazily opened files exist before the
// idle baseline is taken.
func (p *probe) prime(ctx context.Context, cfg Config) error {
	w, err := newWorker(ctx, cfg)
	if err != nil {
		return err
	}
	defer w.close()
	for _, o := range allOps {
		if err := o.run(ctx, w); err != nil {
			return fmt.Errorf("soak: priming %s: %w", o.name, err)
		}
	}
	return nil
}

// child is a child process of this one.
type child struct {
	pid    int
	zombie bool
	start  uint64 // start time in clock ticks after boot
}

func (p *probe) children() ([]child, error) { return childrenOf(p.self) }

// childrenOf returns the child processes of ppid, oldest first.
func childrenOf(ppid int) ([]child, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []child
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		// After the name: state ppid ... starttime (field 22, index 19 here).
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 20 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		start, _ := strconv.ParseUint(f[19], 10, 64)
		out = append(out, child{pid: pid, zombie: f[0] == "Z", start: start})
	}
	slices.SortFunc(out, func(a, b child) int { return int(a.start) - int(b.start) })
	return out, nil
}

// sharedEngine is the oldest living child: the shared engine, started
// before any per-VM engine of the crash loop.
func (p *probe) sharedEngine() int {
	kids, _ := p.children()
	for _, k := range kids {
		if !k.zombie {
			return k.pid
		}
	}
	return 0
}

func countFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

func (p *probe) live(ctx context.Context) (Live, error) {
	var buf bytes.Buffer
	if err := secexec.Metrics(ctx, &buf); err != nil {
		return Live{}, err
	}
	v, err := metrics.Values(&buf)
	if err != nil {
		return Live{}, err
	}
	var l Live
	for _, g := range []struct {
		name string
		to   *int
	}{{"secexec_live_vms{}", &l.VMs}, {"secexec_live_processes{}", &l.Processes}, {"secexec_live_isolates{}", &l.Isolates}, {"secexec_warm_isolates{}", &l.Warm}} {
		f, ok := v[g.name]
		if !ok {
			return Live{}, fmt.Errorf("soak: the engine reports no %s", g.name)
		}
		*g.to = int(f)
	}
	return l, nil
}

func (p *probe) sample(ctx context.Context, t time.Duration, execs int64) Sample {
	s := Sample{T: t, Execs: execs, Goroutines: runtime.NumGoroutine(), ClientFDs: countFDs(p.self)}
	s.ClientRSS, _ = bench.RSS(p.self)
	if pid := p.sharedEngine(); pid != 0 {
		s.EngineRSS, _ = bench.RSS(pid)
		s.EngineFDs = countFDs(pid)
	}
	kids, _ := p.children()
	s.Engines = len(kids)
	s.Live, _ = p.live(ctx)
	return s
}

// idle waits (up to 30s) for the engine to settle — VMs closed,
// processes reaped, isolates disposed, crashed engines reaped — and
// returns what is left.
func (p *probe) idle(ctx context.Context) (State, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var s State
		var err error
		s.Live, err = p.live(ctx)
		if err != nil {
			return s, err
		}
		kids, _ := p.children()
		for _, k := range kids {
			if k.zombie {
				s.Zombies++
			}
		}
		s.Engines = len(kids)
		s.EnginePID = p.sharedEngine()
		s.EngineFDs = countFDs(s.EnginePID)
		s.ClientFDs = countFDs(p.self)
		s.Goroutines = runtime.NumGoroutine()
		settled := s.Live.VMs == 0 && s.Live.Processes == 0 && s.Live.Isolates == s.Live.Warm && s.Engines == 1 && s.Zombies == 0
		if settled || time.Now().After(deadline) {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// findNodeModules returns the node_modules of the polyfill packages
// secexec installed at set-up that holds the npm package qs.
func findNodeModules() (string, error) {
	dir, err := bootjs.DefaultCacheDir()
	if err != nil {
		return "", err
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "polyfills-*", "node_modules", "qs", "package.json"))
	var best string
	var bestT time.Time
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.ModTime().After(bestT) {
			best, bestT = filepath.Dir(filepath.Dir(m)), st.ModTime()
		}
	}
	if best == "" {
		return "", errors.New("soak: no node_modules with the npm package qs in the set-up cache (" + dir + "); pass --node-modules")
	}
	return best, nil
}
