package bench

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics turns the engines' phase reports into Prometheus metrics:
//
//	secexec_execs_total{engine, warm_worker}       counter
//	secexec_exec_phase_seconds{engine, phase}      histogram
//
// engine is "js" or "wasm"; warm_worker is "hit" or "miss" for JS and
// "none" for WebAssembly. Feed it by passing Observe to NewRecorder.
type Metrics struct {
	reg    *prometheus.Registry
	execs  *prometheus.CounterVec
	phases *prometheus.HistogramVec
}

// phaseBuckets span 10µs to ~5s: a pool claim takes microseconds, a
// cold compile seconds.
var phaseBuckets = prometheus.ExponentialBuckets(10e-6, 4, 11)

// NewMetrics returns the metrics, registered in a registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		execs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "secexec_execs_total",
			Help: "Execs reported by the engines, by engine and V8 warm-pool outcome.",
		}, []string{"engine", "warm_worker"}),
		phases: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "secexec_exec_phase_seconds",
			Help:    "Time spent in each phase of an exec.",
			Buckets: phaseBuckets,
		}, []string{"engine", "phase"}),
	}
	m.reg.MustRegister(m.execs, m.phases)
	return m
}

// Registry returns the registry holding the metrics, to serve (promhttp)
// or to gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Observe records one report.
func (m *Metrics) Observe(r Report) {
	warm := "none"
	if r.Engine == "js" {
		warm = "miss"
		if r.Hit {
			warm = "hit"
		}
	}
	m.execs.WithLabelValues(r.Engine, warm).Inc()
	for name, d := range r.Phases {
		if knownPhase(r.Engine, name) {
			m.phases.WithLabelValues(r.Engine, name).Observe(d.Seconds())
		}
	}
}

// knownPhase keeps label cardinality bounded whatever a report holds.
func knownPhase(engine, name string) bool {
	switch engine + "/" + name {
	case "js/pool_claim", "js/isolate_new", "js/context_new", "js/bootstrap", "js/user_code", "js/teardown",
		"wasm/module_lookup", "wasm/compile", "wasm/instantiate", "wasm/run":
		return true
	}
	return false
}
