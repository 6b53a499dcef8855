// Package metrics holds the Prometheus metrics of the engines of one
// process (the V8 and WebAssembly runtimes and the exec path) and feeds
// them from the engines' per-exec phase reports.
//
// The engines report each exec's phases as a log record (see
// PhasesEnv); Handler is a slog.Handler that decodes those records into
// a Set. An engine process installs it as its default logger, so that
// its metrics are always recorded and can be fetched over the engine
// protocol (the Metrics request, docs/protocol.md); `secexec bench
// --metrics` installs it in process.
//
// Metrics, all cheap to record (a counter increment, a histogram
// observation per phase):
//
//	secexec_execs_total{engine, warm_worker}       counter: program images run
//	secexec_exec_phase_seconds{engine, phase}      histogram: per-phase durations
//	secexec_wasm_module_cache_total{result}        counter: compiled-module cache hit/miss
//	secexec_runs_total{outcome}                    counter: Run requests (VM.Exec) by outcome
//	secexec_run_duration_seconds{outcome}          histogram: Run requests' wall time
//
// engine is "js" or "wasm"; warm_worker is "hit" or "miss" for JS (the
// V8 warm pool's hit and miss counters) and "none" for WebAssembly;
// phase is one of PhasesJS or PhasesWASM; result is "hit" or "miss";
// outcome is succeeded, failed, cancelled, timed_out or error (the
// request failed before or without running the program).
package metrics

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// PhasesEnv is the environment variable that turns on the per-exec phase
// reports of the V8 and WebAssembly engines (value "1"). Engines read it
// when they start, so it must be set before a process's first VM.
const PhasesEnv = "SECEXEC_SESSION_PHASES"

// The phases each engine reports, in the order they happen.
var (
	PhasesJS   = []string{"pool_claim", "isolate_new", "context_new", "bootstrap", "user_code", "teardown"}
	PhasesWASM = []string{"module_lookup", "compile", "instantiate", "run"}
)

// Outcomes of a Run request, as labelled.
var Outcomes = []string{"succeeded", "failed", "cancelled", "timed_out", "error"}

// Report is one exec's phase report, decoded from the engine's log record.
type Report struct {
	// Engine is "js" or "wasm".
	Engine string
	// Phases maps a phase name (see PhasesJS and PhasesWASM) to its
	// duration.
	Phases map[string]time.Duration
	// Hit is set for a JS exec that claimed a warm isolate.
	Hit bool
	// ModuleCache is "hit" or "miss" for a WebAssembly exec whose module
	// was looked up in the compiled-module cache, "" otherwise.
	ModuleCache string
}

// Set is the metrics of one process's engines. Its methods are safe for
// concurrent use.
type Set struct {
	reg      *prometheus.Registry
	execs    *prometheus.CounterVec
	phases   *prometheus.HistogramVec
	modCache *prometheus.CounterVec
	runs     *prometheus.CounterVec
	runTime  *prometheus.HistogramVec
}

// phaseBuckets span 10µs to ~10s: a pool claim takes microseconds, a
// cold compile seconds.
var phaseBuckets = prometheus.ExponentialBuckets(10e-6, 4, 11)

// New returns a Set registered in a registry of its own. A labelled
// series appears when it is first recorded; see ZeroSeries.
func New() *Set {
	s := &Set{
		reg: prometheus.NewRegistry(),
		execs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "secexec_execs_total",
			Help: "Program images run by the engines, by engine and V8 warm-pool outcome (warm_worker hit or miss for js, none for wasm).",
		}, []string{"engine", "warm_worker"}),
		phases: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "secexec_exec_phase_seconds",
			Help:    "Time spent in each phase of an exec.",
			Buckets: phaseBuckets,
		}, []string{"engine", "phase"}),
		modCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "secexec_wasm_module_cache_total",
			Help: "Lookups of the compiled WebAssembly module cache: hit, or miss (compiled, or loaded from the disk cache).",
		}, []string{"result"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "secexec_runs_total",
			Help: "Run requests (VM.Exec, VM.Run) by outcome.",
		}, []string{"outcome"}),
		runTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "secexec_run_duration_seconds",
			Help:    "Wall time of Run requests that ran their program, from spawn to exit, by outcome.",
			Buckets: phaseBuckets,
		}, []string{"outcome"}),
	}
	s.reg.MustRegister(s.execs, s.phases, s.modCache, s.runs, s.runTime)
	return s
}

// ZeroSeries creates every labelled series at zero, so that a scrape
// shows them before the first exec (rates need the zero).
func (s *Set) ZeroSeries() {
	for _, p := range PhasesJS {
		s.phases.WithLabelValues("js", p)
	}
	for _, p := range PhasesWASM {
		s.phases.WithLabelValues("wasm", p)
	}
	s.execs.WithLabelValues("js", "hit")
	s.execs.WithLabelValues("js", "miss")
	s.execs.WithLabelValues("wasm", "none")
	s.modCache.WithLabelValues("hit")
	s.modCache.WithLabelValues("miss")
	for _, o := range Outcomes {
		s.runs.WithLabelValues(o)
		if o != "error" {
			s.runTime.WithLabelValues(o)
		}
	}
}

// RegisterProcess adds the Go runtime's and the process's own metrics
// (go_*, process_*: memory, CPU, descriptors), for an engine process.
func (s *Set) RegisterProcess() {
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "secexec_engine_goroutines",
			Help: "Goroutines of the engine's own code (runtime.NumGoroutine): unlike go_goroutines, which counts the Go runtime's own workers too and moves by a few at rest, it is steady when the engine is idle, so a leak shows.",
		}, func() float64 { return float64(runtime.NumGoroutine()) }))
}

// Registry returns the registry holding the metrics, to serve or gather.
func (s *Set) Registry() *prometheus.Registry { return s.reg }

// Observe records one phase report. Unknown engines, phases and cache
// results are ignored, which keeps the label sets bounded whatever a
// report holds.
func (s *Set) Observe(r Report) {
	warm := "none"
	switch r.Engine {
	case "js":
		warm = "miss"
		if r.Hit {
			warm = "hit"
		}
	case "wasm":
		if r.ModuleCache == "hit" || r.ModuleCache == "miss" {
			s.modCache.WithLabelValues(r.ModuleCache).Inc()
		}
	default:
		return
	}
	s.execs.WithLabelValues(r.Engine, warm).Inc()
	for name, d := range r.Phases {
		if knownPhase(r.Engine, name) {
			s.phases.WithLabelValues(r.Engine, name).Observe(d.Seconds())
		}
	}
}

func knownPhase(engine, name string) bool {
	switch engine + "/" + name {
	case "js/pool_claim", "js/isolate_new", "js/context_new", "js/bootstrap", "js/user_code", "js/teardown",
		"wasm/module_lookup", "wasm/compile", "wasm/instantiate", "wasm/run":
		return true
	}
	return false
}

// ObserveRun records the end of a Run request: its outcome (one of
// Outcomes; anything else counts as "error") and, when the program ran,
// its duration.
func (s *Set) ObserveRun(outcome string, d time.Duration) {
	if !slices.Contains(Outcomes, outcome) {
		outcome = "error"
	}
	s.runs.WithLabelValues(outcome).Inc()
	if outcome != "error" && d >= 0 {
		s.runTime.WithLabelValues(outcome).Observe(d.Seconds())
	}
}

// WriteText gathers the metrics and writes them in the Prometheus text
// exposition format (version 0.0.4).
func (s *Set) WriteText(w io.Writer) error {
	mfs, err := s.reg.Gather()
	if err != nil && len(mfs) == 0 {
		return fmt.Errorf("metrics: %w", err)
	}
	// A collector that failed (say, /proc unreadable) leaves out its own
	// metrics only.
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	return nil
}
