package bench

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/secexec/secexec/internal/engine/metrics"
)

// Metrics turns the engines' phase reports into Prometheus metrics, the
// same ones an engine process records (see internal/engine/metrics):
//
//	secexec_execs_total{engine, warm_worker}       counter
//	secexec_exec_phase_seconds{engine, phase}      histogram
//	secexec_warm_worker_total{result}              counter
//	secexec_wasm_module_cache_total{result}        counter
//
// engine is "js" or "wasm"; warm_worker is "hit" or "miss" for JS and
// "none" for WebAssembly. Feed it by passing Observe to NewRecorder.
type Metrics struct{ set *metrics.Set }

// NewMetrics returns the metrics, registered in a registry of their own.
func NewMetrics() *Metrics { return &Metrics{set: metrics.New()} }

// Registry returns the registry holding the metrics, to serve (promhttp)
// or to gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.set.Registry() }

// Observe records one report.
func (m *Metrics) Observe(r Report) { m.set.Observe(r) }
