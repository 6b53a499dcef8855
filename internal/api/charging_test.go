package api_test

import (
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
)

// VM create limits: memory_bytes is accepted up to the server's maximum
// (it was refused whatever its value), and the VM-wide fields are capped
// by --max-memory and --max-cpu-time as the per-process ones are.
func TestCreateVMLimitsCaps(t *testing.T) {
	s := newServer(t, api.Config{MaxLimits: secexec.Limits{
		MemoryBytes: 64 << 20, VMMemoryBytes: 256 << 20, CPUTime: 2 * time.Second, VMCPUTime: 10 * time.Second,
	}})
	for _, c := range []struct {
		limits map[string]any
		status int
	}{
		{map[string]any{"memory_bytes": 32 << 20, "vm_memory_bytes": 128 << 20, "cpu_time_ms": 1000, "vm_cpu_time_ms": 5000}, 201},
		{map[string]any{"memory_bytes": 128 << 20}, 400},
		{map[string]any{"vm_memory_bytes": 512 << 20}, 400},
		{map[string]any{"cpu_time_ms": 5000}, 400},
		{map[string]any{"vm_cpu_time_ms": 20000}, 400},
		{map[string]any{"vm_cpu_time_ms": -1}, 400},
	} {
		r := s.do(alice, "POST", "/v1/vms", map[string]any{"limits": c.limits})
		if r.status != c.status {
			t.Errorf("%v: %d %s, want %d", c.limits, r.status, r.body, c.status)
		}
		if r.status == 201 {
			var vm struct {
				ID string `json:"id"`
			}
			r.json(t, &vm)
			if d := s.do(alice, "DELETE", "/v1/vms/"+vm.ID, nil); d.status != 204 {
				t.Errorf("delete: %d %s", d.status, d.body)
			}
		}
	}
	// The defaults: a process may have up to the VM's memory (1 GiB).
	d := newServer(t, api.Config{})
	if r := d.do(alice, "POST", "/v1/vms", map[string]any{"limits": map[string]any{"memory_bytes": 64 << 20}}); r.status != 201 {
		t.Errorf("memory_bytes 64 MiB with the default maximum: %d %s", r.status, r.body)
	}
}
