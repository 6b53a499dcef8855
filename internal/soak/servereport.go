package soak

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// ServeReport is the outcome of a two-tenant soak. It is JSON so that a
// run can be kept and checked again.
type ServeReport struct {
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	// Hostile are the attacks tenant A rotated through.
	Hostile   []string `json:"hostile"`
	ServerPID int      `json:"server_pid"`
	// ServerExit says how the server ended if it died during the run;
	// ShutdownError what went wrong when it was stopped at the end.
	ServerExit    string `json:"server_exit,omitempty"`
	ShutdownError string `json:"shutdown_error,omitempty"`
	// ServerLog holds the server's last stderr lines when it failed.
	ServerLog []string `json:"server_log,omitempty"`
	// Steady counts tenant B's operations by kind; Failures lists the
	// first 100 that failed, each saying what tenant A was doing.
	Steady   map[string]*OpStats `json:"steady"`
	Failures []string            `json:"failures,omitempty"`
	// Attacks are tenant A's results by attack.
	Attacks map[string]*AttackStats `json:"attacks"`
	// Samples are taken every interval.
	Samples []ServeSample `json:"samples"`
	// Idle and End are the idle states before the load (after warm-up)
	// and after it, once both tenants closed their VMs.
	Idle ServeState `json:"idle"`
	End  ServeState `json:"end"`
	// Engines are every engine process seen, oldest first.
	Engines []EngineLife `json:"engines"`
	// Violations are failed assertions.
	Violations []string `json:"violations,omitempty"`
}

// OpStats counts one kind of tenant B operation.
type OpStats struct {
	Runs   int    `json:"runs"`
	Failed int    `json:"failed"`
	First  string `json:"first_failure,omitempty"`
}

// AttackStats are one attack's results over the run.
type AttackStats struct {
	Runs int `json:"runs"`
	// MaxSeconds is the longest time to an answer.
	MaxSeconds float64 `json:"max_seconds"`
	// MaxServerGrowth and MaxEngineGrowth are the largest rises of the
	// peak RSS of the server and of the engines during one run.
	MaxServerGrowth int64 `json:"max_server_growth"`
	MaxEngineGrowth int64 `json:"max_engine_growth"`
	// Outcomes counts the answers by kind (figures dropped).
	Outcomes map[string]int `json:"outcomes"`
	// Findings are the defences that did not hold.
	Findings []*Finding `json:"findings,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
}

// Finding is a kind of failed defence, how often it happened and its
// first occurrence.
type Finding struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	First string `json:"first"`
}

// EngineLife is one engine process over the run: when it was first and
// last seen (since the baseline), and whether it ended (crashed, killed or
// retired by the server), during which attack, and whether that attack
// kills its engine on purpose.
type EngineLife struct {
	PID      int           `json:"pid"`
	First    time.Duration `json:"first"`
	Last     time.Duration `json:"last"`
	Died     bool          `json:"died,omitempty"`
	During   string        `json:"during,omitempty"`
	Expected bool          `json:"expected,omitempty"`
}

// ServeSample is one observation during the load.
type ServeSample struct {
	T       time.Duration `json:"t"`
	Server  ProcSample    `json:"server"`
	Engines []ProcSample  `json:"engines"`
	// EngineRSS is the RSS of every engine together.
	EngineRSS int64 `json:"engine_rss"`
	Zombies   int   `json:"zombies"`
	// Goroutines are the engines' own goroutines
	// (secexec_engine_goroutines of the server's /metrics, which carries
	// the engines'; go_goroutines where absent), -1 if neither is there.
	Goroutines int  `json:"goroutines"`
	Live       Live `json:"live"`
	// APIVMs is the server's own count; VMsA/B and ProcsA/B what each
	// tenant's listing shows.
	APIVMs    int `json:"api_vms"`
	VMsA      int `json:"vms_a"`
	VMsB      int `json:"vms_b"`
	ProcsA    int `json:"procs_a"`
	ProcsB    int `json:"procs_b"`
	SteadyOps int `json:"steady_ops"`
	Attacks   int `json:"attacks"`
}

// ServeState is the server at rest: no VM of either tenant open.
type ServeState struct {
	ServerPID int          `json:"server_pid"`
	ServerFDs int          `json:"server_fds"`
	Engines   []ProcSample `json:"engines"`
	Zombies   int          `json:"zombies"`
	// Goroutines are the engines' (see ServeSample), -1 if unknown.
	Goroutines int  `json:"goroutines"`
	Live       Live `json:"live"`
	APIVMs     int  `json:"api_vms"`
	VMsA       int  `json:"vms_a"`
	VMsB       int  `json:"vms_b"`
	// MetricsError is why the gauges or the listings could not be read.
	MetricsError string `json:"metrics_error,omitempty"`
}

func (s ServeState) String() string {
	var es []string
	for _, e := range s.Engines {
		es = append(es, fmt.Sprintf("pid %d %d fds", e.PID, e.FDs))
	}
	out := fmt.Sprintf("server pid %d %d fds; engines [%s] (%d zombies); vms %d (api %d, A %d, B %d) procs %d isolates %d (warm %d)",
		s.ServerPID, s.ServerFDs, strings.Join(es, ", "), s.Zombies, s.Live.VMs, s.APIVMs, s.VMsA, s.VMsB,
		s.Live.Processes, s.Live.Isolates, s.Live.Warm)
	if s.Goroutines >= 0 {
		out += fmt.Sprintf("; %d engine goroutines", s.Goroutines)
	}
	if s.MetricsError != "" {
		out += "; unreadable: " + s.MetricsError
	}
	return out
}

// leaks compares the idle state after the load with the baseline. An
// engine that replaced one lost on purpose is held to the baseline's
// largest descriptor count; the number of engines may not grow.
func (s ServeState) leaks(before ServeState) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if s.MetricsError != "" {
		add("the server's gauges or VM listings could not be read at the end: %s", s.MetricsError)
	}
	if s.Live.VMs != 0 {
		add("leaked VMs: %d live in the engines after both tenants closed theirs", s.Live.VMs)
	}
	if s.APIVMs != 0 || s.VMsA != 0 || s.VMsB != 0 {
		add("leaked VMs: the server holds %d (tenant A lists %d, tenant B %d) after both tenants deleted theirs", s.APIVMs, s.VMsA, s.VMsB)
	}
	if s.Live.Processes != 0 {
		add("leaked guest processes: %d", s.Live.Processes)
	}
	if s.Live.Isolates != s.Live.Warm {
		add("leaked isolates: %d alive, %d of them parked warm", s.Live.Isolates, s.Live.Warm)
	}
	if len(s.Engines) > len(before.Engines) {
		add("leaked engine processes: %d alive (pids %v), %d at the baseline (pids %v)", len(s.Engines), pids(s.Engines), len(before.Engines), pids(before.Engines))
	}
	if s.Zombies != 0 {
		add("leaked engine processes: %d zombies of the server", s.Zombies)
	}
	if s.Goroutines > before.Goroutines && before.Goroutines >= 0 {
		add("leaked engine goroutines: %d, %d at the baseline", s.Goroutines, before.Goroutines)
	}
	if s.ServerFDs > before.ServerFDs {
		add("leaked server descriptors: %d open, %d at the baseline", s.ServerFDs, before.ServerFDs)
	}
	maxFDs := 0
	for _, e := range before.Engines {
		maxFDs = max(maxFDs, e.FDs)
	}
	for _, e := range s.Engines {
		i := slices.IndexFunc(before.Engines, func(b ProcSample) bool { return b.PID == e.PID })
		switch {
		case i >= 0 && e.FDs > before.Engines[i].FDs:
			add("leaked engine descriptors: engine pid %d has %d open, %d at the baseline", e.PID, e.FDs, before.Engines[i].FDs)
		case i < 0 && e.FDs > maxFDs:
			add("leaked engine descriptors: engine pid %d (started during the load) has %d open, more than any engine at the baseline (%d)", e.PID, e.FDs, maxFDs)
		}
	}
	return out
}

// check turns the run into violations.
func (r *ServeReport) check(tolerance float64) {
	add := func(format string, a ...any) { r.Violations = append(r.Violations, fmt.Sprintf(format, a...)) }
	if r.ServerExit != "" {
		add("the server died during the run (%s); its last lines: %s", r.ServerExit, strings.Join(r.ServerLog, " | "))
	}
	if r.ShutdownError != "" {
		add("the server's shutdown at the end failed: %s", r.ShutdownError)
	}
	steady := 0
	for _, op := range slices.Sorted(maps.Keys(r.Steady)) {
		st := r.Steady[op]
		steady += st.Runs
		if st.Failed > 0 {
			add("tenant B: %s failed %d of %d times; first: %s", op, st.Failed, st.Runs, strings.TrimPrefix(st.First, "tenant B: "))
		}
	}
	if steady == 0 {
		add("tenant B ran no operation")
	}
	for _, name := range r.Hostile {
		st := r.Attacks[name]
		if st == nil {
			if r.Duration >= 2*time.Minute {
				add("tenant A never completed its %s attack", name)
			}
			continue
		}
		for _, f := range st.Findings {
			add("tenant A %s: %s in %d of %d runs; first: %s", name, f.Kind, f.Count, st.Runs, f.First)
		}
	}
	// An engine that ends is no violation by itself: a server may retire
	// a tenant's engine when the tenant has no VM left. A crash shows as
	// a lost VM: tenant B's failure, or tenant A's engine-lost finding.
	if r.ServerExit == "" {
		r.Violations = append(r.Violations, r.End.leaks(r.Idle)...)
	}
	post := r.postWarmup()
	if len(post) < 6 {
		add("only %d samples after warm-up: run longer or sample more often", len(post))
		return
	}
	for _, s := range flatSeries(post) {
		early, late := flatness(s.rss, func(v int64) int64 { return v })
		if float64(late) > float64(early)*(1+tolerance) {
			add("%s RSS grew: median %s in the first third after warm-up, %s in the last (limit +%.0f%%)", s.name, mib(early), mib(late), tolerance*100)
		}
	}
}

// flatSeries are the RSS series after warm-up the flatness rule applies
// to: the server's, and each engine's that lives through the whole of
// it (in the first and last samples and 90% of all). Engines that come
// and go — a tenant's engine retired with its last VM, one lost to the
// oom attack — are not series: their memory is bounded per attack.
func flatSeries(post []ServeSample) []series {
	out := []series{{name: "server"}}
	idx := map[int]int{}
	for _, smp := range post {
		out[0].t, out[0].rss = append(out[0].t, smp.T), append(out[0].rss, smp.Server.RSS)
		for _, e := range smp.Engines {
			i, ok := idx[e.PID]
			if !ok {
				i = len(out)
				idx[e.PID] = i
				out = append(out, series{name: fmt.Sprintf("engine pid %d", e.PID)})
			}
			out[i].t, out[i].rss = append(out[i].t, smp.T), append(out[i].rss, e.RSS)
		}
	}
	if len(post) == 0 {
		return out
	}
	first, last := post[0].T, post[len(post)-1].T
	return slices.DeleteFunc(out, func(s series) bool {
		return len(s.t) == 0 || s.t[0] != first || s.t[len(s.t)-1] != last || len(s.t)*10 < len(post)*9
	})
}

func (r *ServeReport) postWarmup() []ServeSample {
	i := slices.IndexFunc(r.Samples, func(s ServeSample) bool { return s.T >= r.Warmup })
	if i < 0 {
		return nil
	}
	return r.Samples[i:]
}

func (s ServeSample) line() string {
	var es []string
	for _, e := range s.Engines {
		es = append(es, fmt.Sprintf("%d:%s", e.PID, mib(e.RSS)))
	}
	g := ""
	if s.Goroutines >= 0 {
		g = fmt.Sprintf("  %d engine goroutines", s.Goroutines)
	}
	return fmt.Sprintf("%7.1fs  server %9s %4d fds %3d threads%s  engines %9s [%s] %d zombies  vms A %d B %d (engines %d) procs %d isolates %d (warm %d)  B ops %d  A attacks %d",
		s.T.Seconds(), mib(s.Server.RSS), s.Server.FDs, s.Server.Threads, g, mib(s.EngineRSS), strings.Join(es, " "), s.Zombies,
		s.VMsA, s.VMsB, s.Live.VMs, s.Live.Processes, s.Live.Isolates, s.Live.Warm, s.SteadyOps, s.Attacks)
}

// series is one process's RSS over the run.
type series struct {
	name string
	t    []time.Duration
	rss  []int64
}

// processSeries returns the RSS series of the server and of each engine.
func (r *ServeReport) processSeries() []series {
	out := []series{{name: fmt.Sprintf("server pid %d", r.ServerPID)}}
	idx := map[int]int{}
	for _, s := range r.Samples {
		out[0].t = append(out[0].t, s.T)
		out[0].rss = append(out[0].rss, s.Server.RSS)
		for _, e := range s.Engines {
			i, ok := idx[e.PID]
			if !ok {
				i = len(out)
				idx[e.PID] = i
				out = append(out, series{name: fmt.Sprintf("engine pid %d", e.PID)})
			}
			out[i].t = append(out[i].t, s.T)
			out[i].rss = append(out[i].rss, e.RSS)
		}
	}
	return out
}

// WriteText writes the report for people: the samples, each process's
// RSS series, the idle states, both tenants' results and the verdict.
func (r *ServeReport) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	hostile := "none"
	if len(r.Hostile) > 0 {
		hostile = strings.Join(r.Hostile, ",")
	}
	steady, attacks := 0, 0
	for _, st := range r.Steady {
		steady += st.Runs
	}
	for _, st := range r.Attacks {
		attacks += st.Runs
	}
	ew.printf("soak --serve: %v (warm-up %v), server pid %d; tenant B %d operations, tenant A %d attacks (%s)\n",
		r.Duration, r.Warmup, r.ServerPID, steady, attacks, hostile)
	ew.printf("\nsamples:\n")
	for _, s := range r.Samples {
		ew.printf("  %s\n", s.line())
	}
	ew.printf("\nRSS by process (MiB, one value per sample):\n")
	for _, s := range r.processSeries() {
		vals := make([]string, len(s.rss))
		for i, v := range s.rss {
			vals[i] = fmt.Sprintf("%.0f", float64(v)/(1<<20))
		}
		ew.printf("  %s (%.0fs-%.0fs): %s\n", s.name, s.t[0].Seconds(), s.t[len(s.t)-1].Seconds(), strings.Join(vals, " "))
	}
	if post := r.postWarmup(); len(post) >= 3 {
		for _, s := range flatSeries(post) {
			early, late := flatness(s.rss, func(v int64) int64 { return v })
			ew.printf("%s RSS after warm-up: median %s (first third) -> %s (last third), %+.1f%%\n",
				s.name, mib(early), mib(late), 100*(float64(late)/float64(max(early, 1))-1))
		}
	}
	ew.printf("\nengines:\n")
	for _, e := range r.Engines {
		state := "alive at the end"
		if e.Died {
			state = fmt.Sprintf("gone by %s", e.Last.Round(time.Second))
			if e.During != "" {
				state += " during tenant A's " + e.During
			}
			if e.Expected {
				state += " (which kills engines on purpose)"
			}
		}
		ew.printf("  pid %d: first seen %s, %s\n", e.PID, e.First.Round(time.Second), state)
	}
	ew.printf("\nidle before: %s\nidle after:  %s\n", r.Idle, r.End)
	ew.printf("\ntenant B (steady):")
	for _, op := range slices.Sorted(maps.Keys(r.Steady)) {
		st := r.Steady[op]
		ew.printf(" %s=%d", op, st.Runs)
		if st.Failed > 0 {
			ew.printf("(%d failed)", st.Failed)
		}
	}
	ew.printf("\n")
	if len(r.Hostile) > 0 {
		ew.printf("\ntenant A (hostile):\n")
	}
	for _, name := range r.Hostile {
		st := r.Attacks[name]
		if st == nil {
			ew.printf("  %-11s no run completed\n", name)
			continue
		}
		var outs []string
		for _, o := range slices.Sorted(maps.Keys(st.Outcomes)) {
			outs = append(outs, fmt.Sprintf("%dx %s", st.Outcomes[o], o))
		}
		ew.printf("  %-11s %d runs, longest %.1fs, peak RSS +%s server +%s engines; %s\n", name, st.Runs, st.MaxSeconds,
			mib(st.MaxServerGrowth), mib(st.MaxEngineGrowth), strings.Join(outs, "; "))
		for _, f := range st.Findings {
			ew.printf("      BROKEN %s (%d of %d): %s\n", f.Kind, f.Count, st.Runs, f.First)
		}
		for _, n := range st.Notes {
			ew.printf("      note: %s\n", n)
		}
	}
	if len(r.Failures) > 0 {
		ew.printf("\ntenant B failures (first %d):\n", len(r.Failures))
		for _, f := range r.Failures {
			ew.printf("  %s\n", f)
		}
	}
	if len(r.ServerLog) > 0 {
		ew.printf("\nthe server's last stderr lines:\n")
		for _, l := range r.ServerLog {
			ew.printf("  %s\n", l)
		}
	}
	if len(r.Violations) == 0 {
		ew.printf("\nPASS: tenant B unaffected, every attack answered in time, no leaked VMs, processes, isolates, engines or descriptors; RSS flat\n")
	} else {
		ew.printf("\nFAIL:\n")
		for _, v := range r.Violations {
			ew.printf("  %s\n", v)
		}
	}
	return ew.err
}
