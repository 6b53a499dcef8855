package secexec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// engineGone waits (up to 10 s) for process pid to exit.
func engineGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
	}
	t.Fatalf("engine %d still running", pid)
}

// A Host's VMs share an engine per group, never with another group or
// another Host; VMs asking for another warm pool get another engine; a
// named group's engine ends with its last VM; Close ends the rest.
func TestHostEngineGroups(t *testing.T) {
	ctx := context.Background()
	h := secexec.NewHost(secexec.HostOptions{})
	vm := func(o secexec.Options) *secexec.VM {
		t.Helper()
		o.Permissions = secexec.AllowAll()
		v, err := h.NewVM(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = v.Close() })
		return v
	}
	a1, a2 := vm(secexec.Options{EngineGroup: "a"}), vm(secexec.Options{EngineGroup: "a"})
	aWarm := vm(secexec.Options{EngineGroup: "a", WarmIsolates: -1})
	b := vm(secexec.Options{EngineGroup: "b"})
	d := vm(secexec.Options{})
	x := newEngineVM(t, secexec.EngineShared) // the default Host's
	pa, pb, pd := secexec.EnginePID(a1), secexec.EnginePID(b), secexec.EnginePID(d)
	if pa == 0 || secexec.EnginePID(a2) != pa {
		t.Fatalf("group a: engines %d %d", pa, secexec.EnginePID(a2))
	}
	pw := secexec.EnginePID(aWarm)
	distinct := map[int]bool{pa: true, pb: true, pd: true, pw: true, secexec.EnginePID(x): true}
	if len(distinct) != 5 {
		t.Fatalf("engines a %d, a with no warm pool %d, b %d, default %d, default Host %d: want all different",
			pa, pw, pb, pd, secexec.EnginePID(x))
	}
	for _, v := range []*secexec.VM{a1, a2, b, d, aWarm} {
		if r, err := v.Exec(ctx, "echo hi", nil); err != nil || string(r.Stdout) != "hi\n" {
			t.Fatalf("exec: %v %v", r, err)
		}
	}

	// Metrics reports the Host's engines as one: the five runs on four
	// engines add up.
	var buf bytes.Buffer
	if err := h.Metrics(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	runs := -1.0
	for _, line := range strings.Split(buf.String(), "\n") {
		if v, ok := strings.CutPrefix(line, `secexec_runs_total{outcome="succeeded"} `); ok {
			runs, _ = strconv.ParseFloat(v, 64)
		}
	}
	if runs < 5 {
		t.Errorf("the Host's engines report %v succeeded runs, want at least 5", runs)
	}

	// A named group's engine ends with its last VM; the default group's
	// stays.
	_ = a1.Close()
	if err := syscall.Kill(pa, 0); err != nil {
		t.Fatalf("group a's engine gone with a VM still on it: %v", err)
	}
	_ = a2.Close()
	engineGone(t, pa)
	_ = d.Close()
	time.Sleep(100 * time.Millisecond)
	if err := syscall.Kill(pd, 0); err != nil {
		t.Fatalf("the default group's engine ended with its VMs: %v", err)
	}

	// A killed engine is reported as killed.
	if err := secexec.KillEngine(b); err != nil {
		t.Fatal(err)
	}
	<-b.Done()
	var lost *secexec.EngineLostError
	if err := b.Err(); !errors.As(err, &lost) || lost.Reason != secexec.EngineKilled {
		t.Fatalf("killed engine: %v", err)
	}

	// Close ends the Host's engines and refuses new VMs; the default
	// Host is untouched.
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	engineGone(t, pd)
	if _, err := h.NewVM(ctx, secexec.Options{}); !errors.Is(err, secexec.ErrHostClosed) {
		t.Fatalf("NewVM after Close: %v", err)
	}
	if r, err := x.Exec(ctx, "echo hi", nil); err != nil || string(r.Stdout) != "hi\n" {
		t.Fatalf("the default Host's VM: %v %v", r, err)
	}
}

// VMs created at once in several groups: each group starts one engine,
// which all its VMs share, while the other groups start theirs.
func TestHostConcurrentGroups(t *testing.T) {
	ctx := context.Background()
	h := secexec.NewHost(secexec.HostOptions{})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	const groups, perGroup = 3, 4
	vms := make([][]*secexec.VM, groups)
	errs := make(chan error, groups*perGroup)
	var wg sync.WaitGroup
	for g := range groups {
		vms[g] = make([]*secexec.VM, perGroup)
		for i := range perGroup {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := h.NewVM(ctx, secexec.Options{EngineGroup: fmt.Sprint("g", g)})
				if err != nil {
					errs <- err
					return
				}
				vms[g][i] = v
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for g := range groups {
		for _, v := range vms[g] {
			t.Cleanup(func() { _ = v.Close() })
			pid := secexec.EnginePID(v)
			if first, ok := seen[pid]; ok && first != g {
				t.Fatalf("groups %d and %d share engine %d", first, g, pid)
			}
			seen[pid] = g
			if pid != secexec.EnginePID(vms[g][0]) {
				t.Fatalf("group %d has engines %d and %d", g, secexec.EnginePID(vms[g][0]), pid)
			}
		}
	}
	if len(seen) != groups {
		t.Fatalf("%d engines for %d groups", len(seen), groups)
	}
}
