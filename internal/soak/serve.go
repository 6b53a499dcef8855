package soak

// The two-tenant soak: a real `secexec serve` subprocess, tenant B
// (steady) running a mix of every kind of API request that must all
// succeed, tenant A (hostile) rotating through attacks from issue 19.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/engine/metrics"
)

// ServeConfig configures a two-tenant soak through `secexec serve`.
type ServeConfig struct {
	// Duration is how long the load runs (required).
	Duration time.Duration
	// Interval is the time between samples; 0 picks Duration/40, within
	// [1s, 15s].
	Interval time.Duration
	// Workers is the number of tenant B goroutines, each with a VM of
	// its own (default 2).
	Workers int
	// Hostile names the attacks tenant A rotates through (AttackNames);
	// empty: tenant A stays idle.
	Hostile []string
	// Pause is the time between two attacks (default 2s), so that tenant
	// B's operations meet both attacks and their aftermath.
	Pause time.Duration
	// Command is the secexec binary run as `Command serve ...` (default:
	// this executable).
	Command string
	// ServerEnv is added to the server's environment.
	ServerEnv []string
	// ServerFlags are added to the server's command line.
	ServerFlags []string
	// NodeModules is a host node_modules directory holding the npm
	// package "qs" and its dependencies, which tenant B uploads; empty
	// finds the polyfill packages secexec fetched at set-up.
	NodeModules string
	// RSSTolerance is the growth of the late RSS median over the early one
	// that still counts as flat (default 0.10).
	RSSTolerance float64
	// Progress, if set, receives a line per sample and per finding as
	// the run goes.
	Progress io.Writer
}

func (c *ServeConfig) defaults() error {
	if c.Duration <= 0 {
		return errors.New("soak: duration must be positive")
	}
	if c.Interval <= 0 {
		c.Interval = min(max(c.Duration/40, time.Second), 15*time.Second)
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.Pause <= 0 {
		c.Pause = 2 * time.Second
	}
	if c.RSSTolerance <= 0 {
		c.RSSTolerance = 0.10
	}
	for _, n := range c.Hostile {
		if attackByName(n) == nil {
			return fmt.Errorf("%w %q", ErrUnknownAttack, n)
		}
	}
	if c.Command == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("soak: finding this executable: %w", err)
		}
		c.Command = exe
	}
	return nil
}

// serveRun is one run's shared state.
type serveRun struct {
	cfg   *ServeConfig
	srv   *serverProc
	a, b  *apiClient
	start time.Time
	rep   *ServeReport

	mu      sync.Mutex // guards rep's maps and lists during the load
	hostile hostileState
	engines engineTracker
}

// RunServe runs the two-tenant soak. The returned report is complete
// even when the error is ErrViolated; other errors mean the run could
// not be made.
func RunServe(ctx context.Context, cfg ServeConfig) (*ServeReport, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.NodeModules == "" {
		var err error
		if cfg.NodeModules, err = findNodeModules(); err != nil {
			return nil, err
		}
	}
	mods, err := npmTar(cfg.NodeModules)
	if err != nil {
		return nil, err
	}
	internal, err := startInternalService()
	if err != nil {
		return nil, err
	}
	defer internal.close()
	srv, tokens, err := startServer(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	r := &serveRun{cfg: &cfg, srv: srv,
		a: newAPIClient(srv.url, TenantHostile, tokens[TenantHostile]),
		b: newAPIClient(srv.url, TenantSteady, tokens[TenantSteady]),
		rep: &ServeReport{Duration: cfg.Duration, Warmup: cfg.Duration / 5, Hostile: cfg.Hostile, ServerPID: srv.pid,
			Steady: map[string]*OpStats{}, Attacks: map[string]*AttackStats{}},
	}
	r.engines.lives = map[int]*EngineLife{}
	env := &attackEnv{c: r.a, internal: internal}
	if err := r.prime(ctx, env, mods); err != nil {
		return nil, err
	}
	r.start = time.Now()
	if r.rep.Idle, err = r.idle(ctx, nil); err != nil {
		return nil, err
	}
	r.engines.observe(pids(r.rep.Idle.Engines), 0, "", false)

	loadCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	go func() {
		select {
		case <-srv.exited:
			stop() // nothing left to soak
		case <-loadCtx.Done():
		}
	}()
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runSteady(loadCtx, &steadyWorker{c: r.b, mods: mods}, i*3, r.recordSteady)
		}()
	}
	if len(cfg.Hostile) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runHostile(loadCtx, env)
		}()
	}
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
sampling:
	for {
		select {
		case <-loadCtx.Done():
			break sampling
		case <-tick.C:
		}
		s := r.sample(ctx)
		r.mu.Lock()
		r.rep.Samples = append(r.rep.Samples, s)
		r.mu.Unlock()
		r.progress("%s", s.line())
	}
	wg.Wait()
	if !srv.alive() {
		r.rep.ServerExit = srv.exitStatus()
		r.rep.ServerLog = srv.logs.lines()
	} else {
		r.rep.End, err = r.idle(ctx, &r.rep.Idle)
		if err != nil {
			return r.rep, err
		}
		r.engines.observe(pids(r.rep.End.Engines), time.Since(r.start), "", false)
		if err := srv.stop(); err != nil {
			r.rep.ShutdownError = err.Error()
			r.rep.ServerLog = srv.logs.lines()
		}
	}
	r.rep.Engines = r.engines.list()
	r.rep.check(cfg.RSSTolerance)
	if len(r.rep.Violations) > 0 {
		return r.rep, fmt.Errorf("%w: %d", ErrViolated, len(r.rep.Violations))
	}
	return r.rep, nil
}

func (r *serveRun) progress(format string, a ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, format+"\n", a...)
	}
}

// prime runs every tenant B operation once and creates (and deletes)
// tenant A's kinds of VM, so that caches, lazily opened files and
// engines exist before the idle baseline is taken.
func (r *serveRun) prime(ctx context.Context, env *attackEnv, mods []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	w := &steadyWorker{c: r.b, mods: mods}
	if err := w.open(ctx); err != nil {
		return fmt.Errorf("soak: priming tenant B: %w", err)
	}
	for _, o := range steadyOps {
		if err := o.run(ctx, w); err != nil {
			_ = w.close(ctx)
			return fmt.Errorf("soak: priming tenant B's %s: %w", o.name, err)
		}
	}
	if err := w.close(ctx); err != nil {
		return fmt.Errorf("soak: priming tenant B: %w", err)
	}
	for _, name := range r.cfg.Hostile {
		a := attackByName(name)
		id, _, err := createAttackVM(ctx, env, a)
		if err != nil || id == "" {
			continue // the attack's run reports it
		}
		if _, err := env.c.exec(ctx, id, map[string]any{"argv": []string{"true"}}); err != nil {
			return fmt.Errorf("soak: priming tenant A's %s VM: %w", name, err)
		}
		if err := env.c.deleteVM(ctx, id); err != nil {
			return fmt.Errorf("soak: priming tenant A: %w", err)
		}
	}
	return nil
}

// recordSteady records a tenant B operation.
func (r *serveRun) recordSteady(op string, err error) {
	where := ""
	if err != nil {
		where = r.blame()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.rep.Steady[op]
	if st == nil {
		st = &OpStats{}
		r.rep.Steady[op] = st
	}
	st.Runs++
	if err == nil {
		return
	}
	st.Failed++
	line := fmt.Sprintf("tenant B: %s failed at %s: %v", op, time.Since(r.start).Round(100*time.Millisecond), err)
	if where != "" {
		line += " (" + where + ")"
	}
	if st.First == "" {
		st.First = line
	}
	if len(r.rep.Failures) < 100 {
		r.rep.Failures = append(r.rep.Failures, line)
	}
	r.progress("%s", line)
}

// blame says what tenant A was doing when a tenant B operation failed,
// and which engine died last.
func (r *serveRun) blame() string {
	var parts []string
	cur, last, lastEnd := r.hostile.get()
	switch {
	case cur != "":
		parts = append(parts, "during tenant A's "+cur)
	case last != "" && time.Since(lastEnd) < time.Minute:
		parts = append(parts, since(lastEnd)+" after tenant A's "+last)
	}
	// Engines also end when the server retires them: only a death during
	// an attack that kills engines is worth naming.
	if d := r.engines.lastDeath(); d != nil && time.Since(r.start)-d.Last < time.Minute {
		s := fmt.Sprintf("engine pid %d died %s earlier", d.PID, (time.Since(r.start) - d.Last).Round(100*time.Millisecond))
		if d.During != "" {
			s += " during tenant A's " + d.During
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// hostileState is what tenant A is doing, for blaming.
type hostileState struct {
	mu            sync.Mutex
	current, last string
	lastEnd       time.Time
}

func (h *hostileState) begin(name string) {
	h.mu.Lock()
	h.current = name
	h.mu.Unlock()
}

func (h *hostileState) end() {
	h.mu.Lock()
	h.last, h.current, h.lastEnd = h.current, "", time.Now()
	h.mu.Unlock()
}

func (h *hostileState) get() (current, last string, lastEnd time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.current, h.last, h.lastEnd
}

// engineTracker follows the engine processes of the run.
type engineTracker struct {
	mu    sync.Mutex
	lives map[int]*EngineLife
	order []int
}

// observe records the engines alive at t: new ones are added, tracked
// ones missing have died (during the named attack, expected if that
// attack kills its engine).
func (t *engineTracker) observe(alive []int, at time.Duration, during string, expected bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, pid := range alive {
		l := t.lives[pid]
		if l == nil {
			l = &EngineLife{PID: pid, First: at}
			t.lives[pid] = l
			t.order = append(t.order, pid)
		}
		l.Last = at
	}
	for _, l := range t.lives {
		if !l.Died && !slices.Contains(alive, l.PID) {
			l.Died, l.During, l.Expected, l.Last = true, during, expected, at
		}
	}
}

// lastDeath returns the engine that ended last during an attack that
// kills engines, or nil.
func (t *engineTracker) lastDeath() *EngineLife {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out *EngineLife
	for _, l := range t.lives {
		if l.Died && l.Expected && (out == nil || l.Last > out.Last) {
			c := *l
			out = &c
		}
	}
	return out
}

func (t *engineTracker) list() []EngineLife {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]EngineLife, 0, len(t.order))
	for _, pid := range t.order {
		out = append(out, *t.lives[pid])
	}
	return out
}

func pids(ps []ProcSample) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	return out
}

// sample observes the server, its engines and both tenants.
func (r *serveRun) sample(ctx context.Context) ServeSample {
	s := ServeSample{T: time.Since(r.start), Server: observe(r.srv.pid), Goroutines: -1}
	alive, zombies := engines(r.srv.pid)
	for _, pid := range alive {
		p := observe(pid)
		s.Engines = append(s.Engines, p)
		s.EngineRSS += p.RSS
	}
	s.Zombies = zombies
	// An engine seen dead now died during the attack running, or during
	// the one that ended moments ago (its death may show late).
	cur, last, lastEnd := r.hostile.get()
	if cur == "" && last != "" && time.Since(lastEnd) < 15*time.Second {
		cur = last
	}
	kills := cur != "" && attackByName(cur).killsEngine
	r.engines.observe(alive, s.T, cur, kills)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	g, err := r.gauges(sctx)
	if err == nil {
		s.Live, s.APIVMs, s.Goroutines = g.live, g.apiVMs, g.goroutines
	}
	s.VMsA, s.ProcsA, _ = r.a.vmCount(sctx)
	s.VMsB, s.ProcsB, _ = r.b.vmCount(sctx)
	r.mu.Lock()
	for _, st := range r.rep.Steady {
		s.SteadyOps += st.Runs
	}
	for _, st := range r.rep.Attacks {
		s.Attacks += st.Runs
	}
	r.mu.Unlock()
	return s
}

type gauges struct {
	live               Live
	apiVMs, goroutines int
}

// gauges reads the server's /metrics (its own and its engines').
func (r *serveRun) gauges(ctx context.Context) (gauges, error) {
	g := gauges{goroutines: -1}
	v, err := r.metrics(ctx)
	if err != nil {
		return g, err
	}
	sum := func(name string) (int, bool) {
		total, ok := sumSeries(v, name)
		return int(total), ok
	}
	for _, m := range []struct {
		name string
		to   *int
	}{{"secexec_live_vms", &g.live.VMs}, {"secexec_live_processes", &g.live.Processes},
		{"secexec_live_isolates", &g.live.Isolates}, {"secexec_warm_isolates", &g.live.Warm}, {"secexec_api_vms", &g.apiVMs}} {
		n, ok := sum(m.name)
		if !ok {
			return g, fmt.Errorf("soak: the server's /metrics has no %s", m.name)
		}
		*m.to = n
	}
	// The engines' own goroutines: go_goroutines also counts the Go
	// runtime's workers, which come and go at rest (4 to 6 around 2 of
	// the engine's own, measured), and made a steady engine look leaky.
	if n, ok := sum("secexec_engine_goroutines"); ok {
		g.goroutines = n
	} else if n, ok := sum("go_goroutines"); ok {
		g.goroutines = n
	}
	return g, nil
}

// metrics reads the server's /metrics (its own and its engines').
func (r *serveRun) metrics(ctx context.Context) (map[string]float64, error) {
	data, _, err := r.b.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return nil, err
	}
	return metrics.Values(bytes.NewReader(data))
}

// sumSeries sums every series of a metric: one per engine if the server
// labels them so.
func sumSeries(v map[string]float64, name string) (float64, bool) {
	total, ok := 0.0, false
	for k, x := range v {
		if strings.HasPrefix(k, name+"{") {
			total += x
			ok = true
		}
	}
	return total, ok
}

// heapWatch polls the engines' Go heap in use (go_memstats_heap_inuse_bytes
// of /metrics) until stopped, and returns its rise over the first
// reading. RSS alone misses an allocation that reuses heap a previous
// attack left resident; the heap in use does not.
func (r *serveRun) heapWatch(ctx context.Context) (stop func() int64) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan int64, 1)
	read := func() (float64, bool) {
		v, err := r.metrics(ctx)
		if err != nil {
			return 0, false
		}
		return sumSeries(v, "go_memstats_heap_inuse_bytes")
	}
	first, ok := read()
	go func() {
		peak := first
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- int64(max(0, peak-first))
				return
			case <-t.C:
			}
			if h, ok := read(); ok {
				peak = max(peak, h)
			}
		}
	}()
	return func() int64 {
		cancel()
		rise := <-done
		if !ok {
			return 0
		}
		return rise
	}
}

// idle waits (up to 30s for the baseline, 60s at the end) until the
// server settles — no VM of either tenant, no guest process, isolates
// back in the warm pool, no zombie, and at the end no more engines,
// server descriptors or engine goroutines than at the baseline — and
// returns its state.
func (r *serveRun) idle(ctx context.Context, base *ServeState) (ServeState, error) {
	wait := 30 * time.Second
	if base != nil {
		wait = time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		s, err := r.state(ctx)
		if err != nil {
			return s, err
		}
		settled := s.MetricsError == "" && s.Live.VMs == 0 && s.Live.Processes == 0 && s.Live.Isolates == s.Live.Warm &&
			s.APIVMs == 0 && s.VMsA == 0 && s.VMsB == 0 && s.Zombies == 0 &&
			(base == nil || len(s.Engines) <= len(base.Engines) && s.ServerFDs <= base.ServerFDs && s.Goroutines <= base.Goroutines)
		if settled || time.Now().After(deadline) {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// state observes the server at rest.
func (r *serveRun) state(ctx context.Context) (ServeState, error) {
	s := ServeState{ServerPID: r.srv.pid, Goroutines: -1}
	if !r.srv.alive() {
		return s, fmt.Errorf("%w: exited (%s)", ErrServer, r.srv.exitStatus())
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	g, err := r.gauges(sctx)
	if err != nil {
		s.MetricsError = err.Error()
	}
	s.Live, s.APIVMs, s.Goroutines = g.live, g.apiVMs, g.goroutines
	var errA, errB error
	s.VMsA, _, errA = r.a.vmCount(sctx)
	s.VMsB, _, errB = r.b.vmCount(sctx)
	if err := errors.Join(errA, errB); err != nil {
		s.MetricsError = err.Error()
	}
	// Our idle connections closed, and a moment for the server to see
	// it, so that its descriptors are its own.
	r.a.closeIdle()
	r.b.closeIdle()
	time.Sleep(200 * time.Millisecond)
	s.ServerFDs = countFDs(r.srv.pid)
	alive, zombies := engines(r.srv.pid)
	for _, pid := range alive {
		s.Engines = append(s.Engines, observe(pid))
	}
	s.Zombies = zombies
	return s, nil
}

// runHostile is tenant A: the attacks in turn until ctx ends.
func (r *serveRun) runHostile(ctx context.Context, env *attackEnv) {
	for i := 0; ctx.Err() == nil; i++ {
		a := attackByName(r.cfg.Hostile[i%len(r.cfg.Hostile)])
		r.hostile.begin(a.name)
		run := r.attack(ctx, env, a)
		r.hostile.end()
		if ctx.Err() != nil && run.cut {
			return // the end of the soak cut it short: not a result
		}
		r.recordAttack(a, run)
		pause(ctx, r.cfg.Pause)
	}
}

// attackRun is the result of one attack.
type attackRun struct {
	outcome      string
	seconds      float64
	serverGrowth int64
	engineGrowth int64
	findings     []*finding
	notes        []string
	cut          bool // the soak ended during it
}

// createAttackVM creates the attack's VM, dropping a memory_bytes limit
// the server refuses. A refusal the attack counts as its defence
// returns id "" and the refusal as the outcome.
func createAttackVM(ctx context.Context, e *attackEnv, a *attack) (id, note string, err error) {
	var body map[string]any
	if a.vm != nil {
		body = a.vm(e)
	}
	id, err = e.c.createVM(ctx, body)
	var ae *APIError
	if err != nil && errors.As(err, &ae) && ae.Code == "bad_request" && strings.Contains(ae.Message, "memory_bytes") {
		if l, ok := body["limits"].(map[string]any); ok {
			if _, has := l["memory_bytes"]; has {
				delete(l, "memory_bytes")
				note = "the server refuses memory_bytes (no --max-memory): ran with the server's default memory limit"
				id, err = e.c.createVM(ctx, body)
			}
		}
	}
	return id, note, err
}

// attack runs one attack: its VM, the attack within its bound with the
// peak RSS of the server and the engines measured, and the VM's deletion.
func (r *serveRun) attack(ctx context.Context, env *attackEnv, a *attack) attackRun {
	var run attackRun
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	id, note, err := createAttackVM(cctx, env, a)
	cancel()
	if note != "" {
		run.notes = append(run.notes, note)
	}
	var ae *APIError
	switch {
	case ctx.Err() != nil:
		run.cut = true
		return run
	case err != nil && a.refusalOK && errors.As(err, &ae) && ae.Status/100 == 4:
		run.outcome = fmt.Sprintf("VM refused: %d %s", ae.Status, ae.Code)
		return run
	case err != nil:
		run.findings = append(run.findings, found("vm-create", "creating its VM: %v", err))
		return run
	}

	before := map[int]int64{}
	alive0, _ := engines(r.srv.pid)
	for _, pid := range append([]int{r.srv.pid}, alive0...) {
		resetPeak(pid)
		before[pid] = observe(pid).RSS
	}
	heapRise := r.heapWatch(ctx)
	actx, cancel := context.WithTimeout(ctx, a.bound)
	t0 := time.Now()
	outcome, err := a.run(actx, env, id)
	run.seconds = time.Since(t0).Seconds()
	timedOut := actx.Err() != nil
	cancel()
	run.engineGrowth = heapRise()
	run.outcome = outcome
	switch {
	case ctx.Err() != nil:
		run.cut = true
	case timedOut:
		run.outcome = "not answered"
		run.findings = append(run.findings, found("unanswered", "not answered within %v; the request was given up", a.bound))
	case err != nil:
		run.findings = append(run.findings, findings(err)...)
	}
	if run.outcome == "" && err != nil {
		run.outcome = "error"
	}

	// The peaks: the server's, and the engines' together (a new engine
	// counts whole), or the rise of their Go heap if larger.
	alive1, _ := engines(r.srv.pid)
	if p := peakRSS(r.srv.pid); p > 0 {
		run.serverGrowth = max(0, p-before[r.srv.pid])
	}
	var rss int64
	for _, pid := range alive1 {
		if p := peakRSS(pid); p > 0 {
			rss += max(0, p-before[pid])
		}
	}
	run.engineGrowth = max(run.engineGrowth, rss)
	// Engines end for good reasons too (a server may retire a tenant's
	// engine with its last VM): a lost engine shows in the answer.
	r.engines.observe(alive1, time.Since(r.start), a.name, a.killsEngine)
	if !a.killsEngine && strings.Contains(run.outcome, "engine_lost") {
		run.findings = append(run.findings, found("engine-lost", "the attack lost its engine (%s), which only the oom attack may", run.outcome))
	}
	if lim := orDefault(a.serverGrowth, defaultServerGrowth); lim > 0 && run.serverGrowth > lim {
		run.findings = append(run.findings, found("server-memory", "the server's peak RSS rose by %s during the attack (bound %s)", mib(run.serverGrowth), mib(lim)))
	}
	if lim := orDefault(a.engineGrowth, defaultEngineGrowth); lim > 0 && run.engineGrowth > lim {
		run.findings = append(run.findings, found("engine-memory", "the engines' memory (peak RSS, or Go heap in use) rose by %s during the attack (bound %s)", mib(run.engineGrowth), mib(lim)))
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := env.c.deleteVM(dctx, id); err != nil {
		run.findings = append(run.findings, found("vm-delete", "deleting its VM: %v", err))
	}
	if !r.srv.alive() {
		run.findings = append(run.findings, found("server-died", "the server exited: %s", r.srv.exitStatus()))
	}
	return run
}

func orDefault(v, d int64) int64 {
	if v == 0 {
		return d
	}
	return v
}

// recordAttack adds one attack's result to the report.
func (r *serveRun) recordAttack(a *attack, run attackRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.rep.Attacks[a.name]
	if st == nil {
		st = &AttackStats{Outcomes: map[string]int{}}
		r.rep.Attacks[a.name] = st
	}
	st.Runs++
	st.MaxSeconds = max(st.MaxSeconds, run.seconds)
	st.MaxServerGrowth = max(st.MaxServerGrowth, run.serverGrowth)
	st.MaxEngineGrowth = max(st.MaxEngineGrowth, run.engineGrowth)
	if run.outcome != "" {
		st.Outcomes[outcomeKey(run.outcome)]++
	}
	for _, n := range run.notes {
		if !slices.Contains(st.Notes, n) {
			st.Notes = append(st.Notes, n)
		}
	}
	for _, f := range run.findings {
		i := slices.IndexFunc(st.Findings, func(x *Finding) bool { return x.Kind == f.kind })
		if i < 0 {
			st.Findings = append(st.Findings, &Finding{Kind: f.kind, First: f.detail})
			i = len(st.Findings) - 1
			r.progress("tenant A %s at %s: %s: %s", a.name, time.Since(r.start).Round(100*time.Millisecond), f.kind, f.detail)
		}
		st.Findings[i].Count++
	}
}

// findings turns an attack's error into findings: its findings as they
// are, anything else (a transport error: the server did not answer) as
// a "no-answer" finding.
func findings(err error) []*finding {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*finding
		for _, e := range j.Unwrap() {
			out = append(out, findings(e)...)
		}
		return out
	}
	var f *finding
	if errors.As(err, &f) {
		return []*finding{f}
	}
	return []*finding{found("no-answer", "%v", err)}
}

// varying matches the figures of an outcome that vary run to run.
var varying = regexp.MustCompile(`\d+(\.\d+)?s\b|\d+ (MiB|bytes)`)

// outcomeKey drops the figures of an outcome that vary run to run
// (durations, sizes), so that outcomes can be counted.
func outcomeKey(s string) string {
	return varying.ReplaceAllStringFunc(s, func(m string) string {
		if i := strings.IndexByte(m, ' '); i >= 0 {
			return "N" + m[i:]
		}
		return "Ns"
	})
}
