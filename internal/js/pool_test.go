package js

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
)

// newLimitedVM is newVM with the kernel limits of the VM set.
func newLimitedVM(t testing.TB, e *Engine, lim kernel.Limits) *testVM {
	t.Helper()
	return newConfiguredVM(t, e, vm.Config{Limits: lim})
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

// waitPoolFull waits until the engine's own key (its heap limit) holds
// the pool's capacity of parked isolates.
func waitPoolFull(t testing.TB, e *Engine) {
	t.Helper()
	waitKeyFull(t, e, e.cfg.HeapLimitBytes)
}

// waitKeyFull waits until the key of heap limit heap holds the pool's
// capacity of parked isolates.
func waitKeyFull(t testing.TB, e *Engine, heap uint64) {
	t.Helper()
	waitFor(t, "the warm pool to fill", func() bool { return parked(e, heap) == e.pool.capacity })
}

// parked returns the number of isolates parked under heap limit heap, -1
// when the pool does not keep that key.
func parked(e *Engine, heap uint64) int {
	for _, k := range e.Stats().PoolKeys {
		if k.HeapLimit == heap {
			return k.Parked
		}
	}
	return -1
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

// runPhases runs poolProbe in v and waits for the run's phase report
// (reports follow the asynchronous teardown), which it returns. recs must
// be the engine's logger and SECEXEC_SESSION_PHASES=1 set.
func runPhases(t *testing.T, v *testVM, recs *phaseRecords) map[string]slog.Value {
	t.Helper()
	recs.mu.Lock()
	n := len(recs.recs)
	recs.mu.Unlock()
	if r := v.node(poolProbe); r.code != 0 || r.stdout != poolProbeOut || r.stderr != "" {
		t.Fatalf("exec: %+v", r)
	}
	waitFor(t, "the phase report", func() bool {
		recs.mu.Lock()
		defer recs.mu.Unlock()
		return len(recs.recs) > n
	})
	recs.mu.Lock()
	defer recs.mu.Unlock()
	return recs.recs[n]
}

// checkHitPhases fails unless a phase report says the isolate came from
// the pool: no isolate, context or bootstrap on the process's path.
func checkHitPhases(t *testing.T, what string, a map[string]slog.Value) {
	t.Helper()
	if !a["pool_hit"].Bool() || a["warm_worker"].String() != "warm_worker_hit" {
		t.Errorf("%s: pool_hit %v, warm_worker %v", what, a["pool_hit"], a["warm_worker"])
	}
	for _, k := range []string{"isolate_new", "context_new", "bootstrap"} {
		if d := a[k].Duration(); d != 0 {
			t.Errorf("%s: phase %s took %v on a hit", what, k, d)
		}
	}
}

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
		{"configCapped", 1000, "", maxParked},
		{"env", 0, "4", 4},
		{"envZeroDisables", 0, "0", 0},
		{"envCapped", 0, "100000", maxParked},
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
	for i := range 3 {
		waitPoolFull(t, e)
		before := e.Stats()
		a := runPhases(t, v, &recs)
		after := e.Stats()
		if after.PoolHits != before.PoolHits+1 || after.PoolMisses != before.PoolMisses {
			t.Fatalf("exec %d: stats went from %+v to %+v, want one hit", i, before, after)
		}
		checkHitPhases(t, "exec "+strconv.Itoa(i), a)
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
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
	// the miss deterministic.
	e.pool.close()
	for i := range 3 {
		cold := v.node(poolProbe)
		if cold != warm {
			t.Fatalf("cold exec %d: %+v, warm exec gave %+v", i, cold, warm)
		}
	}
	if st := e.Stats(); st.PoolHits != 1 || st.PoolMisses != 3 || st.PoolParked != 0 {
		t.Fatalf("after three execs on a drained pool: %+v, want 1 hit and 3 misses", st)
	}
}

// A VM with its own memory limit needs isolates with that heap limit: its
// first process misses (and gets the same output from an isolate made for
// it), the pool warms that key, and later processes hit it with isolates
// of the right heap limit, without taking the engine's own isolates.
func TestPoolKeyedByHeapLimit(t *testing.T) {
	t.Setenv("SECEXEC_SESSION_PHASES", "1")
	var recs phaseRecords
	e := newEngine(t, Config{WarmIsolates: 2, Logger: slog.New(&recs)})
	var hook hookRuntimes
	hook.install(e)
	cases := []struct {
		name     string
		mem      int64
		wantHeap uint64
		own      bool // the engine's own key: warm from the start
	}{
		{"smaller", 64 << 20, 64 << 20, false},
		{"larger", 256 << 20, 256 << 20, false},
		{"belowMinimum", 1 << 20, minHeapLimit, false},
		{"sameAsEngine", int64(e.cfg.HeapLimitBytes), e.cfg.HeapLimitBytes, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newLimitedVM(t, e, kernel.Limits{MemoryBytes: c.mem})
			// heapOf returns the heap limit of the isolate that ran the
			// process reported in a.
			heapOf := func(a map[string]slog.Value) uint64 {
				hook.mu.Lock()
				defer hook.mu.Unlock()
				for i, r := range hook.rts {
					if r.p.PID() == int(a["pid"].Int64()) && r.p.Kernel() == v.vm.Kernel {
						return hook.heap[i]
					}
				}
				t.Fatalf("no runtime for pid %v", a["pid"])
				return 0
			}
			waitPoolFull(t, e)
			if !c.own {
				if n := parked(e, c.wantHeap); n != -1 {
					t.Fatalf("key %d kept warm (%d parked) before its first use", c.wantHeap, n)
				}
				before := e.Stats()
				a := runPhases(t, v, &recs)
				after := e.Stats()
				if after.PoolMisses != before.PoolMisses+1 || after.PoolHits != before.PoolHits {
					t.Errorf("first exec: stats went from %+v to %+v, want one miss", before, after)
				}
				if a["pool_hit"].Bool() || a["isolate_new"].Duration() == 0 {
					t.Errorf("first exec: pool_hit %v, isolate_new %v", a["pool_hit"], a["isolate_new"])
				}
				if h := heapOf(a); h != c.wantHeap {
					t.Errorf("first exec: isolate heap limit %d, want %d", h, c.wantHeap)
				}
			}
			for i := range 3 {
				waitKeyFull(t, e, c.wantHeap)
				waitPoolFull(t, e)
				before := e.Stats()
				a := runPhases(t, v, &recs)
				after := e.Stats()
				if after.PoolHits != before.PoolHits+1 || after.PoolMisses != before.PoolMisses {
					t.Errorf("warm exec %d: stats went from %+v to %+v, want one hit", i, before, after)
				}
				checkHitPhases(t, "warm exec "+strconv.Itoa(i), a)
				if h := heapOf(a); h != c.wantHeap {
					t.Errorf("warm exec %d: isolate heap limit %d, want %d", i, h, c.wantHeap)
				}
				if !c.own {
					if n := parked(e, e.cfg.HeapLimitBytes); n != e.pool.capacity {
						t.Errorf("warm exec %d: the engine's own key holds %d isolates, want %d", i, n, e.pool.capacity)
					}
				}
			}
		})
	}
}

// Two VMs with different memory limits, used alternately, both get warm
// isolates once their keys are warm.
func TestPoolTwoKeysAlternate(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 2})
	vms := []*testVM{
		newLimitedVM(t, e, kernel.Limits{MemoryBytes: 64 << 20}),
		newLimitedVM(t, e, kernel.Limits{MemoryBytes: 96 << 20}),
	}
	heaps := []uint64{64 << 20, 96 << 20}
	for i, v := range vms {
		if r := v.node(poolProbe); r.code != 0 || r.stdout != poolProbeOut {
			t.Fatalf("first exec on VM %d: %+v", i, r)
		}
	}
	st0 := e.Stats()
	if st0.PoolMisses != 2 || st0.PoolHits != 0 {
		t.Fatalf("after the first exec of each VM: %+v, want 2 misses", st0)
	}
	const runs = 10
	for i := range runs {
		waitKeyFull(t, e, heaps[i%2])
		if r := vms[i%2].node(poolProbe); r.code != 0 || r.stdout != poolProbeOut || r.stderr != "" {
			t.Fatalf("exec %d: %+v", i, r)
		}
	}
	st := e.Stats()
	if st.PoolHits != runs || st.PoolMisses != st0.PoolMisses {
		t.Errorf("stats %+v, want %d hits and no more misses", st, runs)
	}
	if len(st.PoolKeys) != 3 {
		t.Errorf("pool keys %+v, want the engine's and the two VMs'", st.PoolKeys)
	}
	for _, k := range st.PoolKeys {
		if k.Bootstrap != e.bundle.Digest {
			t.Errorf("key %+v: bootstrap %q, want %q", k, k.Bootstrap, e.bundle.Digest)
		}
	}
}

// poolLog records the warm pool's debug logs: message and attributes.
type poolLog struct {
	mu   sync.Mutex
	recs []poolLogRec
}

type poolLogRec struct {
	msg   string
	level slog.Level
	attrs map[string]slog.Value
}

func (l *poolLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *poolLog) Handle(_ context.Context, rec slog.Record) error {
	if !strings.HasPrefix(rec.Message, "js: warm") {
		return nil
	}
	attrs := map[string]slog.Value{}
	rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, poolLogRec{rec.Message, rec.Level, attrs})
	return nil
}
func (l *poolLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *poolLog) WithGroup(string) slog.Handler      { return l }

// of returns the messages logged about the key of heap limit heap.
func (l *poolLog) of(heap uint64) []poolLogRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []poolLogRec
	for _, r := range l.recs {
		if r.attrs["heap_limit"].Uint64() == heap {
			out = append(out, r)
		}
	}
	return out
}

// A key no process claimed from for WarmDrainAfter is drained: its
// parked isolates are disposed of and it is no longer kept; the engine's
// own key stays. The next process of that VM misses and warms it again.
// Every transition is logged at debug level with the key and size.
func TestPoolDrain(t *testing.T) {
	var log poolLog
	// The drain period leaves ample time for the key to fill first.
	e := newEngine(t, Config{WarmIsolates: 2, WarmDrainAfter: 2 * time.Second, Logger: slog.New(&log)})
	var disposed atomic.Int64
	e.testHook = func(r *rt) {
		if r.p == nil && r.heapLimit == 64<<20 {
			disposed.Add(1)
		}
	}
	v := newLimitedVM(t, e, kernel.Limits{MemoryBytes: 64 << 20})
	if r := v.node(poolProbe); r.code != 0 || r.stdout != poolProbeOut {
		t.Fatalf("exec: %+v", r)
	}
	waitFor(t, "the key to fill, then drain", func() bool { return parked(e, 64<<20) == 2 })
	waitFor(t, "the key to drain", func() bool {
		st := e.Stats()
		return st.PoolDrained == 2 && parked(e, 64<<20) == -1
	})
	st := e.Stats()
	if n := disposed.Load(); n != 2 {
		t.Errorf("%d parked isolates of the key disposed, want 2", n)
	}
	if len(st.PoolKeys) != 1 || st.PoolKeys[0].HeapLimit != e.cfg.HeapLimitBytes {
		t.Errorf("pool keys after the drain: %+v, want the engine's only", st.PoolKeys)
	}
	waitPoolFull(t, e)
	// The key is warmed again by its next miss.
	if r := v.node(poolProbe); r.code != 0 || r.stdout != poolProbeOut {
		t.Fatalf("exec after the drain: %+v", r)
	}
	if after := e.Stats(); after.PoolMisses != st.PoolMisses+1 {
		t.Errorf("exec after the drain: stats %+v, want one more miss than %+v", after, st)
	}
	count := map[string]int{}
	for _, r := range log.of(64 << 20) {
		if r.level != slog.LevelDebug {
			t.Errorf("%q logged at %v", r.msg, r.level)
		}
		if _, ok := r.attrs["bootstrap"]; !ok {
			t.Errorf("%q logged without the key's bootstrap", r.msg)
		}
		if _, ok := r.attrs["size"]; !ok {
			t.Errorf("%q logged without the size", r.msg)
		}
		count[r.msg]++
	}
	// Each isolate booted for the key before the drain was either parked
	// (refilled, then disposed with the key) or, booted after the key was
	// drained, discarded: either way it was logged.
	if count["js: warm pool key added"] != 2 || count["js: warm pool key drained"] < 1 ||
		count["js: warm pool refilled"]+count["js: warm isolate discarded"] < 2 {
		t.Errorf("transitions logged: %v", count)
	}
}

// The pool keeps at most maxKeys keys: a miss on another key leaves it
// cold (the process still runs).
func TestPoolKeyBound(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 1})
	if e.pool.maxKeys != maxPoolKeys {
		t.Fatalf("maxKeys %d with capacity 1, want %d", e.pool.maxKeys, maxPoolKeys)
	}
	for i := range maxPoolKeys {
		mem := int64(16+i) << 20
		v := newLimitedVM(t, e, kernel.Limits{MemoryBytes: mem})
		if r := v.node(poolProbe); r.code != 0 || r.stdout != poolProbeOut {
			t.Fatalf("exec with %d bytes: %+v", mem, r)
		}
		keys := len(e.Stats().PoolKeys)
		if want := min(i+2, maxPoolKeys); keys != want {
			t.Errorf("after a miss on key %d: %d keys, want %d", i, keys, want)
		}
	}
	if n := parked(e, (16+maxPoolKeys-1)<<20); n != -1 {
		t.Errorf("the key past the bound is kept (%d parked)", n)
	}
}

// The number of keys shrinks with the capacity so that the pool holds at
// most maxParked isolates; the engine's own key is always kept.
func TestPoolMaxKeys(t *testing.T) {
	for _, c := range []struct{ capacity, want int }{
		{1, maxPoolKeys}, {2, maxPoolKeys}, {8, maxPoolKeys}, {16, 4}, {32, 2}, {33, 1}, {maxParked, 1},
	} {
		if got := poolMaxKeys(c.capacity); got != c.want || (got > 1 && got*c.capacity > maxParked) {
			t.Errorf("poolMaxKeys(%d) = %d, want %d", c.capacity, got, c.want)
		}
	}
}

// With the pool disabled every process boots its isolate lazily, with
// the engine's heap limit or a VM's own, and the output is unchanged.
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
				t.Fatalf("pool of capacity %d exists", e.pool.capacity)
			}
			vms := []*testVM{newVM(t, e), newLimitedVM(t, e, kernel.Limits{MemoryBytes: 64 << 20})}
			for i := range 4 {
				if r := vms[i%2].node(poolProbe); r.code != 0 || r.stdout != poolProbeOut || r.stderr != "" {
					t.Fatalf("exec %d: %+v", i, r)
				}
			}
			if st := e.Stats(); st.PoolHits != 0 || st.PoolMisses != 0 || st.PoolParked != 0 || st.PoolKeys != nil {
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
// one guest leaves behind is invisible to the next, over 30 execs across
// three VMs (two on the engine's key, one with a memory limit of its own),
// each of them a pool hit on a distinct runtime.
func TestPoolNeverReused(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 2})
	var hook hookRuntimes
	hook.install(e)
	const limited = 64 << 20
	vms := []*testVM{newVM(t, e), newVM(t, e), newLimitedVM(t, e, kernel.Limits{MemoryBytes: limited})}
	heaps := []uint64{e.cfg.HeapLimitBytes, e.cfg.HeapLimitBytes, limited}
	// The limited VM's key becomes warm at its first miss.
	if r := vms[2].node(poolProbe); r.stdout != poolProbeOut {
		t.Fatalf("warm-up exec: %+v", r)
	}
	st0 := e.Stats()
	const runs = 30
	for i := range runs {
		waitKeyFull(t, e, heaps[i%3])
		r := vms[i%3].node(`console.log(typeof globalThis.x, typeof Object.prototype.polluted, typeof globalThis.x2);
globalThis.x = 1; Object.prototype.polluted = 1; globalThis.x2 = ` + strconv.Itoa(i))
		if r.code != 0 || r.stdout != "undefined undefined undefined\n" || r.stderr != "" {
			t.Fatalf("exec %d saw a previous guest's globals: %+v", i, r)
		}
	}
	if st := e.Stats(); st.PoolHits != runs || st.PoolMisses != st0.PoolMisses {
		t.Errorf("stats %+v, want %d hits", st, runs)
	}
	waitFor(t, "every runtime's disposal", func() bool { return hook.len() == runs+1 })
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
