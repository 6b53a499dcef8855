package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegisterGauge adds a gauge read from f at every scrape, for figures the
// engine already keeps (live VMs, processes, isolates) rather than counts
// it would have to mirror. A second gauge of the same name is ignored.
func (s *Set) RegisterGauge(name, help string, f func() float64) {
	_ = s.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}
