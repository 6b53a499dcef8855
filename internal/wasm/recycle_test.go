package wasm_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel"
)

// recyclingVM is a VM on an engine of its own that recycles the test
// reactor (a guest file, which a normal engine never recycles).
func recyclingVM(t *testing.T, cfg vm.Config) (*wasm.Engine, *testVM) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("instances are recycled on Linux only (memfd images)")
	}
	env := setup(t)
	eng := ownEngine(t)
	wasm.TrustAllReactors(eng)
	v := newVMWith(t, eng, eng.SoftwareLayer(env.store), cfg)
	v.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	return eng, v
}

// ownEngine is an engine of the test's own, closed when it ends.
func ownEngine(t testing.TB) *wasm.Engine {
	t.Helper()
	ctx := context.Background()
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: wasmDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close(ctx) })
	return eng
}

// waitFor waits up to 10 s for cond, failing with what.
func waitFor(t *testing.T, eng *wasm.Engine, what string, cond func(wasm.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(eng.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %+v", what, eng.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

// waitRecycled waits until eng has recycled more than n instances.
func waitRecycled(t *testing.T, eng *wasm.Engine, n uint64) {
	t.Helper()
	waitFor(t, eng, "no instance recycled", func(s wasm.Stats) bool { return s.Recycled > n })
}

// waitParked waits until eng has an instance parked.
func waitParked(t *testing.T, eng *wasm.Engine) {
	t.Helper()
	waitFor(t, eng, "nothing parked", func(s wasm.Stats) bool { return s.Parked > 0 })
}

// reactorRunner runs the test reactor in v with args.
func reactorRunner(t *testing.T, v *testVM) func(args ...string) result {
	return func(args ...string) result {
		t.Helper()
		return v.exec(context.Background(), append([]string{"/workspace/reactor.wasm"}, args...), runOpts{})
	}
}

// An instance recycled after a process holds nothing of it: the next
// process's fresh allocations, which Go hands out unzeroed (it trusts
// new memory to be zero), are the very pages the last one filled with
// its secret, and must read as zero; its globals are the snapshot's.
// That holds whether the process returned or ended through proc_exit.
func TestRecycledInstanceHoldsNothingOfEarlierProcesses(t *testing.T) {
	eng, v := recyclingVM(t, vm.Config{})
	run := reactorRunner(t, v)
	// The first run takes the snapshot; later ones use recycled instances.
	if r := run("state"); r.code != 0 {
		t.Fatalf("state: exit %d stderr %q", r.code, r.stderr)
	}
	for i := range 10 {
		before := eng.Stats().Recycled
		if i%2 == 0 {
			if r := run("mark", "16k"); string(r.stdout) != "marked 16k\n" {
				t.Fatalf("mark: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
		} else if r := run("exit", "3"); r.code != 3 {
			t.Fatalf("exit 3: exit %d stderr %q", r.code, r.stderr)
		}
		waitRecycled(t, eng, before)
		if r := run("scan", "16k"); string(r.stdout) != "nonzero=0 marker=false\n" {
			t.Fatalf("round %d: a later process saw %q (stderr %q)", i, r.stdout, r.stderr)
		}
		if r := run("state"); !strings.HasSuffix(string(r.stdout), " runs=1\n") {
			t.Fatalf("round %d: state %q, want the snapshot's globals (runs=1)", i, r.stdout)
		}
	}
	if st := eng.Stats(); st.Recycled < 20 {
		t.Fatalf("%d instances recycled in 30 runs, want most: %+v", st.Recycled, st)
	}
}

// A process that grows the memory takes the new pages from the end of
// the snapshot's memory, and so does the next one's Go runtime (it knows
// only the snapshot's end of memory), on a recycled instance the very
// same pages: they must be zero again.
func TestRecycledGrownMemoryIsZeroed(t *testing.T) {
	for round := range 2 {
		eng, v := recyclingVM(t, vm.Config{})
		run := reactorRunner(t, v)
		run("state") // takes the snapshot; parks a fresh instance
		waitParked(t, eng)
		before := eng.Stats().Recycled
		if r := run("mark", "1"); string(r.stdout) != "marked 1\n" {
			t.Fatalf("mark 1 MiB: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		waitRecycled(t, eng, before)
		if r := run("scan", "1"); string(r.stdout) != "nonzero=0 marker=false\n" {
			t.Fatalf("round %d: a later process saw %q (stderr %q)", round, r.stdout, r.stderr)
		}
	}
}

// An instance whose memory grew past the bound is discarded (wazero
// cannot shrink a memory); after it, and after a killed process, the next
// process is correct.
func TestGrownOrKilledInstances(t *testing.T) {
	eng, v := recyclingVM(t, vm.Config{})
	run := reactorRunner(t, v)
	run("state")
	before := eng.Stats().Recycled
	run("state")
	waitRecycled(t, eng, before)

	// 16 MiB is past the bound on growth (maxRecycledGrowth).
	waitParked(t, eng)
	before = eng.Stats().Recycled
	if r := run("mark", "16"); string(r.stdout) != "marked 16\n" {
		t.Fatalf("mark 16 MiB: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	waitParked(t, eng)
	if n := eng.Stats().Recycled - before; n != 0 {
		t.Fatalf("%d instances recycled after a process grew the memory by 16 MiB", n)
	}
	if r := run("scan", "16"); string(r.stdout) != "nonzero=0 marker=false\n" {
		t.Fatalf("after a grown instance: %q (stderr %q)", r.stdout, r.stderr)
	}

	waitParked(t, eng)
	tctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	r := v.exec(tctx, []string{"/workspace/reactor.wasm", "sleep"}, runOpts{})
	cancel()
	if !r.timedOut {
		t.Fatalf("sleep: exit %d, want timed out", r.code)
	}
	// The killed process ended inside a host call (its instance is
	// intact and may be recycled) or its instance was closed (and is
	// discarded); the next process finds nothing of it either way.
	if r := run("scan", "16k"); string(r.stdout) != "nonzero=0 marker=false\n" {
		t.Fatalf("after a killed process: %q (stderr %q)", r.stdout, r.stderr)
	}
	if r := run("state"); !strings.HasSuffix(string(r.stdout), " runs=1\n") {
		t.Fatalf("after a killed process: state %q stderr %q", r.stdout, r.stderr)
	}
}

// A recycled instance's memory is charged to the process that claims it,
// within that process's limits: a VM whose per-process limit is below the
// instance's size is refused it, and a running process's memory counts
// in its VM until it ends.
func TestRecycledMemoryIsChargedPerProcess(t *testing.T) {
	eng, v := recyclingVM(t, vm.Config{})
	ctx := context.Background()
	run := reactorRunner(t, v)
	for range 3 {
		if r := run("state"); r.code != 0 {
			t.Fatalf("state: exit %d stderr %q", r.code, r.stderr)
		}
	}
	waitParked(t, eng)
	if eng.Stats().Recycled == 0 {
		t.Fatalf("nothing recycled: %+v", eng.Stats())
	}

	env := setup(t)
	small := newVMWith(t, eng, eng.SoftwareLayer(env.store), vm.Config{Limits: kernel.Limits{MemoryBytes: 2 << 20}})
	small.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	if r := small.exec(ctx, []string{"/workspace/reactor.wasm", "state"}, runOpts{}); r.code == 0 || len(r.stdout) != 0 {
		t.Fatalf("2 MiB limit: exit %d stdout %q, want the recycled instance refused", r.code, r.stdout)
	}

	waitParked(t, eng)
	done := make(chan result, 1)
	go func() {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		done <- v.exec(tctx, []string{"/workspace/reactor.wasm", "sleep"}, runOpts{})
	}()
	k := v.vm.Kernel
	deadline := time.Now().Add(900 * time.Millisecond)
	for k.MemoryUsed() < 2<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("a running process on a recycled instance: VM memory %d, want its instance's", k.MemoryUsed())
		}
		time.Sleep(time.Millisecond)
	}
	<-done
	for k.MemoryUsed() != 0 {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("VM memory %d after the process ended", k.MemoryUsed())
		}
		time.Sleep(time.Millisecond)
	}
}

// A guest's own reactor is never recycled by a normal engine: its code
// could change its function table, which a reset does not restore.
func TestGuestReactorsAreNotRecycled(t *testing.T) {
	env := setup(t)
	eng := ownEngine(t)
	v := newVMWith(t, eng, eng.SoftwareLayer(env.store), vm.Config{})
	v.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	run := reactorRunner(t, v)
	for range 5 {
		if r := run("state"); r.code != 0 {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	}
	if st := eng.Stats(); st.Recycled != 0 || st.Restored == 0 {
		t.Fatalf("guest reactor: %+v, want restored from the snapshot, never recycled", st)
	}
}
