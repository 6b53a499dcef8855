package kernel_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// spinHost spins on a host thread charged to p, as a bridge does for
// crypto, until the process is killed.
func spinHost(ctx context.Context, p *kernel.Process) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	end, err := p.BeginHostWork()
	if err != nil {
		return err
	}
	defer end()
	for ctx.Err() == nil {
	}
	return nil
}

// Host work counts against the process's CPU limit while it runs: a
// process that itself only waits is ended with SIGXCPU, and host work it
// asks for afterwards is refused.
func TestHostWorkChargedToCPULimit(t *testing.T) {
	var again error
	k := newKernel(t, kernel.Limits{CPUTime: 100 * time.Millisecond}, goLoader{
		"crypto": func(ctx context.Context, p *kernel.Process) int {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			clock, stop := kernel.ThreadCPUClock()
			defer stop()
			p.SetCPUClock(clock)
			done := make(chan error, 1)
			go func() { done <- spinHost(ctx, p) }()
			<-done
			again = spinHost(ctx, p)
			return 0
		},
	})
	if st, _ := run(t, k, "crypto"); st.Signal != kernel.SIGXCPU {
		t.Fatalf("status %+v, want SIGXCPU", st)
	}
	if !errors.Is(again, kernel.ErrCPUTime) {
		t.Fatalf("host work after the limit: %v, want ErrCPUTime", again)
	}
}

// The VM's CPU budget sums its processes: two spinners without their own
// limit end with SIGXCPU, and spawns fail with ErrVMCPUTime (EAGAIN).
func TestVMCPUBudget(t *testing.T) {
	k := newKernel(t, kernel.Limits{VMCPUTime: 200 * time.Millisecond}, goLoader{
		"spins": func(ctx context.Context, p *kernel.Process) int {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			clock, stop := kernel.ThreadCPUClock()
			defer stop()
			p.SetCPUClock(clock)
			for ctx.Err() == nil {
			}
			return 0
		},
		"true": func(context.Context, *kernel.Process) int { return 0 },
	})
	var ps []*kernel.Process
	for range 2 {
		p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"spins"}, Env: []string{"PATH=/bin"}})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		st, err := p.HostWait(context.Background())
		if err != nil || st.Signal != kernel.SIGXCPU {
			t.Fatalf("spinner: %+v %v, want SIGXCPU", st, err)
		}
	}
	if used := k.CPUUsed(); used < 200*time.Millisecond {
		t.Errorf("CPUUsed %v after the budget was spent", used)
	}
	_, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"true"}, Env: []string{"PATH=/bin"}})
	if !errors.Is(err, kernel.ErrVMCPUTime) || !errors.Is(err, errno.EAGAIN) {
		t.Fatalf("spawn after the budget: %v, want ErrVMCPUTime", err)
	}
}

// The VM's memory limit: the largest process is killed when a report
// takes the VM past it, and spawns fail with ENOMEM while it is full.
func TestVMMemoryLimit(t *testing.T) {
	hold := make(chan struct{})
	k := newKernel(t, kernel.Limits{VMMemoryBytes: 100 << 20}, goLoader{
		"big": func(ctx context.Context, p *kernel.Process) int {
			p.ReportMemory(80 << 20)
			<-ctx.Done()
			return 0
		},
		"small": func(ctx context.Context, p *kernel.Process) int {
			<-hold
			if !p.ReportMemory(30 << 20) {
				return 2
			}
			<-ctx.Done()
			return 0
		},
		"true": func(context.Context, *kernel.Process) int { return 0 },
	})
	spawn := func(name string) (*kernel.Process, error) {
		return k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{name}, Env: []string{"PATH=/bin"}})
	}
	big, err := spawn("big")
	if err != nil {
		t.Fatal(err)
	}
	small, err := spawn("small")
	if err != nil {
		t.Fatal(err)
	}
	for k.MemoryUsed() < 80<<20 {
		time.Sleep(time.Millisecond)
	}
	close(hold)
	// 80 + 30 MiB > 100 MiB: the largest (big) goes, small stays.
	st, _ := big.HostWait(context.Background())
	if st.Signal != kernel.SIGKILL {
		t.Fatalf("big: %+v, want SIGKILL", st)
	}
	if got := k.MemoryUsed(); got != 30<<20 {
		t.Fatalf("MemoryUsed %d after the kill, want 30 MiB", got)
	}
	small.ReportMemory(100 << 20) // now full
	if _, err := spawn("true"); !errors.Is(err, kernel.ErrVMMemory) || !errors.Is(err, errno.ENOMEM) {
		t.Fatalf("spawn in a full VM: %v, want ErrVMMemory", err)
	}
	small.ReportMemory(0)
	p, err := spawn("true")
	if err != nil {
		t.Fatalf("spawn after memory came back: %v", err)
	}
	_, _ = p.HostWait(context.Background())
	_ = small.Signal(kernel.SIGKILL)
	_, _ = small.HostWait(context.Background())
}

// TryMemory refuses what would take the VM past its limit and records
// nothing then; no process is ended for it.
func TestVMMemoryTry(t *testing.T) {
	k := newKernel(t, kernel.Limits{VMMemoryBytes: 100 << 20}, goLoader{
		"hold": func(ctx context.Context, p *kernel.Process) int {
			<-ctx.Done()
			return 0
		},
	})
	spawn := func() *kernel.Process {
		p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"hold"}, Env: []string{"PATH=/bin"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := spawn(), spawn()
	if !a.TryMemory(80 << 20) {
		t.Fatal("80 MiB of 100 refused")
	}
	if b.TryMemory(30 << 20) {
		t.Fatal("80 + 30 MiB of 100 allowed")
	}
	if got := k.MemoryUsed(); got != 80<<20 {
		t.Fatalf("MemoryUsed %d after a refusal, want 80 MiB", got)
	}
	if !b.TryMemory(20 << 20) {
		t.Fatal("80 + 20 MiB of 100 refused")
	}
	if a.TryMemory(90 << 20) {
		t.Fatal("growing a full VM allowed")
	}
	// Shrinking is always allowed, even in a full VM.
	if !a.TryMemory(10 << 20) {
		t.Fatal("shrinking refused")
	}
	if got := k.MemoryUsed(); got != 30<<20 {
		t.Fatalf("MemoryUsed %d, want 30 MiB", got)
	}
	for _, p := range []*kernel.Process{a, b} {
		_ = p.Signal(kernel.SIGKILL)
		if st, _ := p.HostWait(context.Background()); st.Signal != kernel.SIGKILL {
			t.Fatalf("%+v: only the test's SIGKILL may end it", st)
		}
	}
}
