package server

import (
	"github.com/secexec/secexec/internal/vmhost"
)

// LiveIsolates is implemented by a Runtime that runs V8 isolates: the
// isolates alive (running a process, booting or parked) and those parked
// in the warm pool. The server exports them as gauges, so a soak run can
// tell a leaked isolate from a warm one.
type LiveIsolates interface {
	LiveIsolates() (live, parked int)
}

// track records a VM this server hosts until untrack.
func (s *Server) track(h *vmhost.Host) {
	s.mu.Lock()
	s.hosts[h] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) untrack(h *vmhost.Host) {
	s.mu.Lock()
	delete(s.hosts, h)
	s.mu.Unlock()
}

// registerLive exports the live VMs, guest processes and isolates.
func (s *Server) registerLive() {
	s.cfg.Metrics.RegisterGauge("secexec_live_vms", "VMs this engine hosts.", func() float64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return float64(len(s.hosts))
	})
	s.cfg.Metrics.RegisterGauge("secexec_live_processes", "Guest processes (live and zombie, not counting each VM's init) in this engine's VMs.", func() float64 {
		s.mu.Lock()
		hosts := make([]*vmhost.Host, 0, len(s.hosts))
		for h := range s.hosts {
			hosts = append(hosts, h)
		}
		s.mu.Unlock()
		n := 0
		for _, h := range hosts {
			n += max(h.VM().Kernel.NumProcesses()-1, 0)
		}
		return float64(n)
	})
	li, ok := s.cfg.Runtime.(LiveIsolates)
	if !ok {
		return
	}
	s.cfg.Metrics.RegisterGauge("secexec_live_isolates", "V8 isolates alive in this engine: running, booting or parked.", func() float64 {
		live, _ := li.LiveIsolates()
		return float64(live)
	})
	s.cfg.Metrics.RegisterGauge("secexec_warm_isolates", "V8 isolates parked in this engine's warm pool.", func() float64 {
		_, parked := li.LiveIsolates()
		return float64(parked)
	})
}
