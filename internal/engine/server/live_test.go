package server

import (
	"bytes"
	"context"
	"testing"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/engine/metrics"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmhost/vmhosttest"
	"github.com/secexec/secexec/kernel/policy"
)

// connect serves a new server made from cfg on a socket pair and returns
// a client connected to it, closed when the test ends.
func connect(t *testing.T, cfg Config) *client.Conn {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := serve(t, s)
	c, err := client.Handshake(context.Background(), ca, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// isolates is a Runtime that reports fixed isolate counts.
type isolates struct {
	vmhost.Runtime
	live, parked int
}

func (i isolates) LiveIsolates() (int, int) { return i.live, i.parked }

// The live gauges follow the VMs and guest processes of every connection
// and report the runtime's isolates.
func TestLiveGauges(t *testing.T) {
	ctx := context.Background()
	c := connect(t, Config{Token: token, Runtime: isolates{vmhosttest.New(nil), 5, 2}, Metrics: metrics.New()})
	live := func() map[string]float64 {
		t.Helper()
		var b bytes.Buffer
		if err := c.Metrics(ctx, &b); err != nil {
			t.Fatal(err)
		}
		m := scrape(t, b.Bytes())
		return map[string]float64{"vms": m["secexec_live_vms{}"], "procs": m["secexec_live_processes{}"],
			"isolates": m["secexec_live_isolates{}"], "warm": m["secexec_warm_isolates{}"]}
	}
	check := func(vms, procs float64) {
		t.Helper()
		got := live()
		if got["vms"] != vms || got["procs"] != procs || got["isolates"] != 5 || got["warm"] != 2 {
			t.Fatalf("live %v, want %v VMs and %v processes, 5 isolates, 2 warm", got, vms, procs)
		}
	}
	check(0, 0)
	pol, err := policy.Parse(allowExec)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := c.NewVM(ctx, client.VMConfig{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := c.NewVM(ctx, client.VMConfig{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v1.Spawn(ctx, vmhost.SpawnSpec{Argv: []string{"vt-sleep"}})
	if err != nil {
		t.Fatal(err)
	}
	check(2, 1)
	if err := p.Signal(9); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := v2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	check(1, 0)
	if err := v1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	check(0, 0)
}
