package js

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// newLimitedVM is newVM with the kernel limits of the VM set.
func newLimitedVM(t testing.TB, e *Engine, lim kernel.Limits) *testVM {
	t.Helper()
	m, err := vm.New(context.Background(), vm.Config{
		Policy: policy.AllowAll(),
		Lowers: []vfs.FileSystem{e.Layer()},
		Limits: lim,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Kernel.RegisterLoader(e.Loader())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("vm close: %v", err)
		}
	})
	return &testVM{t: t, vm: m, e: e}
}

// waitFor polls cond until it holds; it fails the test past a generous
// deadline. It waits on a condition, it does not time anything.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitPoolFull waits until the engine's pool holds its capacity of
// parked isolates.
func waitPoolFull(t testing.TB, e *Engine) {
	t.Helper()
	waitFor(t, "the warm pool to fill", func() bool { return len(e.pool.ch) == cap(e.pool.ch) })
}

// hookRuntimes records every process runtime (not parked pool isolates)
// the engine disposes. It must be called before the engine runs anything.
type hookRuntimes struct {
	mu  sync.Mutex
	rts []*rt
	// heap holds each runtime's heap limit, read before disposal.
	heap []uint64
}

func (h *hookRuntimes) install(e *Engine) {
	e.testHook = func(r *rt) {
		if r.p == nil {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.rts = append(h.rts, r)
		h.heap = append(h.heap, r.heapLimit)
	}
}

func (h *hookRuntimes) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.rts)
}

const poolProbe = `console.log(6 * 7, typeof globalThis.x)`
const poolProbeOut = "42 undefined\n"

func TestWarmCapacity(t *testing.T) {
	cases := []struct {
		name string
		cfg  int
		env  string
		want int
	}{
		{"default", 0, "", DefaultWarmIsolates},
		{"configured", 3, "", 3},
		{"configWinsOverEnv", 1, "5", 1},
		{"negativeDisables", -1, "5", 0},
		{"env", 0, "4", 4},
		{"envZeroDisables", 0, "0", 0},
		{"envCapped", 0, "100000", 64},
		{"envNegativeIgnored", 0, "-3", DefaultWarmIsolates},
		{"envGarbageIgnored", 0, "many", DefaultWarmIsolates},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("SECEXEC_V8_WARM_ISOLATES", c.env)
			if got := warmCapacity(Config{WarmIsolates: c.cfg}); got != c.want {
				t.Errorf("warmCapacity(%d, env %q) = %d, want %d", c.cfg, c.env, got, c.want)
			}
		})
	}
}

// A paced exec claims a parked isolate: the hit counter rises, and the
// phase report says the isolate came from the pool, so no isolate was
// created or bootstrapped on the process's path.
func TestPoolHit(t *testing.T) {
	t.Setenv("SECEXEC_SESSION_PHASES", "1")
	var recs phaseRecords
	e := newEngine(t, Config{WarmIsolates: 2, Logger: slog.New(&recs)})
	var hook hookRuntimes
	hook.install(e)
	v := newVM(t, e)
	const runs = 3
	for i := range runs {
		waitPoolFull(t, e)
		before := e.Stats()
		if r := v.node(poolProbe); r.code != 0 || r.stdout != poolProbeOut || r.stderr != "" {
			t.Fatalf("exec %d: %+v", i, r)
		}
		after := e.Stats()
		if after.PoolHits != before.PoolHits+1 || after.PoolMisses != before.PoolMisses {
			t.Fatalf("exec %d: stats went from %+v to %+v, want one hit", i, before, after)
		}
	}
	// The phase reports follow the (asynchronous) teardown.
	waitFor(t, "phase reports", func() bool {
		recs.mu.Lock()
		defer recs.mu.Unlock()
		return len(recs.recs) == runs
	})
	recs.mu.Lock()
	defer recs.mu.Unlock()
	for i, a := range recs.recs {
		if !a["pool_hit"].Bool() || a["warm_worker"].String() != "warm_worker_hit" {
			t.Errorf("report %d: pool_hit %v, warm_worker %v", i, a["pool_hit"], a["warm_worker"])
		}
	}
	for _, h := range hook.heap {
		if h != e.cfg.HeapLimitBytes {
			t.Errorf("pooled isolate has heap limit %d, want the engine's %d", h, e.cfg.HeapLimitBytes)
		}
	}
}

// An empty pool sends the process down the lazy path, which produces the
// same output as a warm isolate.
func TestPoolMiss(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 1})
	v := newVM(t, e)
	waitPoolFull(t, e)
	warm := v.node(poolProbe)
	if warm.code != 0 || warm.stdout != poolProbeOut || warm.stderr != "" {
		t.Fatalf("warm exec: %+v", warm)
	}
	if st := e.Stats(); st.PoolHits != 1 || st.PoolMisses != 0 {
		t.Fatalf("after a warm exec: %+v", st)
	}
	// Stopping the refiller leaves the pool drained for good, which makes
	// the miss deterministic. Engine.Close must not stop it twice.
	p := e.pool
	p.close()
	t.Cleanup(func() { e.pool = nil })
	for i := range 3 {
		cold := v.node(poolProbe)
		if cold != warm {
			t.Fatalf("cold exec %d: %+v, warm exec gave %+v", i, cold, warm)
		}
	}
	if st := e.Stats(); st.PoolHits != 1 || st.PoolMisses != 3 {
		t.Fatalf("after three execs on a drained pool: %+v, want 1 hit and 3 misses", st)
	}
}

// A VM with its own memory limit needs an isolate with that heap limit:
// it bypasses the pool (neither a hit nor a miss, no parked isolate
// taken) and gets the same output from an isolate made for it.
func TestPoolWrongHint(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 2})
	var hook hookRuntimes
	hook.install(e)
	plain := newVM(t, e)
	waitPoolFull(t, e)
	want := plain.node(poolProbe)
	if want.code != 0 || want.stdout != poolProbeOut {
		t.Fatalf("plain exec: %+v", want)
	}
	// Disposal is asynchronous: wait for it so each case below sees only
	// its own runtime.
	waitFor(t, "the runtime's disposal", func() bool { return hook.len() == 1 })
	cases := []struct {
		name     string
		mem      int64
		wantHeap uint64
		pooled   bool
	}{
		{"smaller", 64 << 20, 64 << 20, false},
		{"larger", 256 << 20, 256 << 20, false},
		{"belowMinimum", 1 << 20, minHeapLimit, false},
		{"sameAsEngine", int64(e.cfg.HeapLimitBytes), e.cfg.HeapLimitBytes, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newLimitedVM(t, e, kernel.Limits{MemoryBytes: c.mem})
			waitPoolFull(t, e)
			before := e.Stats()
			n := hook.len()
			if got := v.node(poolProbe); got != want {
				t.Fatalf("exec: %+v, want %+v", got, want)
			}
			after := e.Stats()
			wantHits := before.PoolHits
			if c.pooled {
				wantHits++
			} else if l := len(e.pool.ch); l != cap(e.pool.ch) {
				t.Errorf("pool holds %d isolates after a bypassing exec, want %d", l, cap(e.pool.ch))
			}
			if after.PoolHits != wantHits || after.PoolMisses != before.PoolMisses {
				t.Errorf("stats went from %+v to %+v (pooled %v)", before, after, c.pooled)
			}
			waitFor(t, "the runtime's disposal", func() bool { return hook.len() > n })
			hook.mu.Lock()
			got := hook.heap[n]
			hook.mu.Unlock()
			if got != c.wantHeap {
				t.Errorf("isolate heap limit %d, want %d", got, c.wantHeap)
			}
		})
	}
}

// With the pool disabled every process boots its isolate lazily and the
// output is unchanged.
func TestPoolDisabled(t *testing.T) {
	cases := []struct {
		name string
		cfg  int
		env  string
	}{
		{"configNegative", -1, ""},
		{"envZero", 0, "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("SECEXEC_V8_WARM_ISOLATES", c.env)
			e := newEngine(t, Config{WarmIsolates: c.cfg})
			if e.pool != nil {
				t.Fatalf("pool of capacity %d exists", cap(e.pool.ch))
			}
			v := newVM(t, e)
			for i := range 3 {
				if r := v.node(poolProbe); r.code != 0 || r.stdout != poolProbeOut || r.stderr != "" {
					t.Fatalf("exec %d: %+v", i, r)
				}
			}
			if st := e.Stats(); st != (Stats{}) {
				t.Errorf("stats of a poolless engine: %+v", st)
			}
		})
	}
}

// After claims the pool refills to capacity in the background, also
// after a burst that drained it.
func TestPoolRefill(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 3})
	v := newVM(t, e)
	waitPoolFull(t, e)
	if r := v.node(poolProbe); r.stdout != poolProbeOut {
		t.Fatalf("exec: %+v", r)
	}
	if st := e.Stats(); st.PoolHits != 1 {
		t.Fatalf("stats %+v, want one hit", st)
	}
	waitPoolFull(t, e)
	// A concurrent burst larger than the pool.
	const burst = 6
	var wg sync.WaitGroup
	outs := make([]result, burst)
	for i := range burst {
		wg.Go(func() { outs[i] = v.node(poolProbe) })
	}
	wg.Wait()
	for i, r := range outs {
		if r.code != 0 || r.stdout != poolProbeOut {
			t.Errorf("burst exec %d: %+v", i, r)
		}
	}
	if st := e.Stats(); st.PoolHits+st.PoolMisses != 1+burst {
		t.Errorf("stats %+v, want %d claims", st, 1+burst)
	}
	waitPoolFull(t, e)
}

// A claimed isolate is never reused: a global (or a polluted prototype)
// one guest leaves behind is invisible to the next, over 20 execs across
// two VMs, each of them a pool hit on a distinct runtime.
func TestPoolNeverReused(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 2})
	var hook hookRuntimes
	hook.install(e)
	vms := []*testVM{newVM(t, e), newVM(t, e)}
	const runs = 20
	for i := range runs {
		waitPoolFull(t, e)
		r := vms[i%2].node(`console.log(typeof globalThis.x, typeof Object.prototype.polluted, typeof globalThis.x2);
globalThis.x = 1; Object.prototype.polluted = 1; globalThis.x2 = ` + strconv.Itoa(i))
		if r.code != 0 || r.stdout != "undefined undefined undefined\n" || r.stderr != "" {
			t.Fatalf("exec %d saw a previous guest's globals: %+v", i, r)
		}
	}
	if st := e.Stats(); st.PoolHits != runs || st.PoolMisses != 0 {
		t.Errorf("stats %+v, want %d hits", st, runs)
	}
	waitFor(t, "every runtime's disposal", func() bool { return hook.len() == runs })
	hook.mu.Lock()
	defer hook.mu.Unlock()
	seen := map[*rt]bool{}
	for _, r := range hook.rts {
		if seen[r] {
			t.Fatal("a runtime ran two processes")
		}
		seen[r] = true
	}
}
