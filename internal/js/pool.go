package js

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The warm pool holds parked isolates: created on a background goroutine
// with the bootstrap already evaluated, so a process start that claims
// one skips the most expensive phases. Isolates are keyed by what boot
// fixed in them, the bootstrap (its digest) and the heap limit; a process
// claims with the key it needs, and a miss (no parked isolate, or a key
// the pool does not keep) takes the lazy path. A claimed isolate is never
// returned: every process gets a virgin one, and the pool refills that key
// in the background.
//
// The engine's own key (its bootstrap and heap limit) is warmed at start
// and kept. Any other key (a VM whose memory limit gives a different heap)
// becomes warm at its first miss and is drained, its isolates disposed,
// once no process claimed from it for Config.WarmDrainAfter. At most
// maxPoolKeys keys are kept and keys × capacity stays within maxParked,
// so the pool never holds more than maxParked isolates (≈ 3 MiB each).
type pool struct {
	e          *Engine
	capacity   int // parked isolates per key
	maxKeys    int
	drainAfter time.Duration
	own        poolKey

	mu     sync.Mutex
	keys   map[poolKey]*keyPool
	closed bool

	// wake tells the refillers that a key may need an isolate.
	wake chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup

	hits, misses, drained atomic.Int64

	// active counts processes between claim and exit; idle is signalled
	// when it drops to zero. Refilling waits for that (unless the key is
	// empty), so that booting the next isolate does not compete for the
	// CPU with the process that just claimed one.
	active atomic.Int64
	idle   chan struct{}
}

// poolKey is what a parked isolate was booted with, and what a process
// needs of the isolate it claims.
type poolKey struct {
	digest string // of the bootstrap bundle
	heap   uint64 // heap limit in bytes
}

// keyPool is the state of one key. Its fields are guarded by pool.mu.
type keyPool struct {
	key      poolKey
	parked   []*rt
	booting  int       // isolates being booted for this key
	lastUsed time.Time // of the last claim, hit or miss
	retryAt  time.Time // after a failed boot
	// own marks the engine's own key, which is never drained.
	own bool
	// gone is set when the key was drained: an isolate booted for it
	// meanwhile is disposed instead of parked.
	gone bool
}

// Bounds of the pool.
const (
	// maxParked bounds the parked isolates of an engine, over all keys,
	// and so the capacity per key.
	maxParked = 64
	// maxPoolKeys bounds the number of keys kept warm.
	maxPoolKeys = 8
	// refillWorkers is how many isolates boot at once. One: on a busy
	// host a second boot competes with the processes themselves.
	refillWorkers = 1
	// maxRefillDelay bounds how long refilling waits for an idle moment.
	maxRefillDelay = 50 * time.Millisecond
	// bootRetryDelay spaces the boots of a key after one failed.
	bootRetryDelay = time.Second
	// DefaultWarmDrainAfter is how long a key other than the engine's own
	// stays warm without claims unless Config.WarmDrainAfter says
	// otherwise.
	DefaultWarmDrainAfter = 30 * time.Second
)

// DefaultWarmIsolates is the pool capacity per key unless
// SECEXEC_V8_WARM_ISOLATES or Config.WarmIsolates says otherwise.
const DefaultWarmIsolates = 2

func warmCapacity(cfg Config) int {
	if cfg.WarmIsolates != 0 {
		return min(max(cfg.WarmIsolates, 0), maxParked)
	}
	if s := os.Getenv("SECEXEC_V8_WARM_ISOLATES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return min(n, maxParked)
		}
	}
	return DefaultWarmIsolates
}

// extLimitFor is the external-memory limit of an isolate with the given
// heap limit: the engine's for its own heap limit, else twice the heap.
func (e *Engine) extLimitFor(heap uint64) uint64 {
	if heap == e.cfg.HeapLimitBytes {
		return e.cfg.ExternalLimitBytes
	}
	return 2 * heap
}

// poolMaxKeys is how many keys a pool of the given capacity per key
// keeps: maxPoolKeys, fewer when that many would hold more than maxParked
// isolates, and always the engine's own.
func poolMaxKeys(capacity int) int {
	return min(maxPoolKeys, max(1, maxParked/capacity))
}

func newPool(e *Engine, capacity int) *pool {
	p := &pool{
		e:          e,
		capacity:   capacity,
		maxKeys:    poolMaxKeys(capacity),
		drainAfter: e.cfg.WarmDrainAfter,
		own:        poolKey{digest: e.bundle.Digest, heap: e.cfg.HeapLimitBytes},
		keys:       map[poolKey]*keyPool{},
		wake:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
		idle:       make(chan struct{}, 1),
	}
	if p.drainAfter <= 0 {
		p.drainAfter = DefaultWarmDrainAfter
	}
	p.keys[p.own] = &keyPool{key: p.own, own: true, lastUsed: time.Now()}
	for range refillWorkers {
		p.wg.Add(1)
		go p.refill()
	}
	return p
}

func (p *pool) begin() { p.active.Add(1) }

func (p *pool) end() {
	if p.active.Add(-1) == 0 {
		select {
		case p.idle <- struct{}{}:
		default:
		}
	}
}

// signal wakes a refiller.
func (p *pool) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// claim returns a parked runtime booted with key k, or nil (a miss). A
// miss on a key the pool does not keep makes it warm, within the bounds.
func (p *pool) claim(k poolKey) *rt {
	p.mu.Lock()
	kp := p.keys[k]
	if kp == nil {
		added := !p.closed && len(p.keys) < p.maxKeys
		if added {
			kp = &keyPool{key: k, lastUsed: time.Now()}
			p.keys[k] = kp
		}
		n := len(p.keys)
		p.mu.Unlock()
		p.misses.Add(1)
		if added {
			p.logKey("js: warm pool key added", k, slog.Int("size", 0), slog.Int("keys", n))
			p.signal()
		} else {
			p.logKey("js: warm pool miss, key not kept warm", k, slog.Int("keys", n))
		}
		return nil
	}
	kp.lastUsed = time.Now()
	n := len(kp.parked)
	if n == 0 {
		p.mu.Unlock()
		p.misses.Add(1)
		p.logKey("js: warm pool empty", k, slog.Int("size", 0))
		return nil
	}
	r := kp.parked[n-1]
	kp.parked[n-1] = nil
	kp.parked = kp.parked[:n-1]
	p.mu.Unlock()
	p.hits.Add(1)
	p.logKey("js: warm isolate claimed", k, slog.Int("size", n-1))
	p.signal()
	return r
}

// refill boots isolates for the keys that lack them, until stopped. It
// also drains the keys that went unused.
func (p *pool) refill() {
	defer p.wg.Done()
	// V8 binds an isolate's stack limit to the thread that created it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		kp, wait := p.next()
		if kp == nil {
			if !p.sleep(wait) {
				return
			}
			continue
		}
		if !p.waitIdle(kp) {
			p.unbook(kp, false)
			return
		}
		r := newRT(p.e)
		r.heapLimit, r.extLimit = kp.key.heap, p.e.extLimitFor(kp.key.heap)
		if err := r.boot(); err != nil {
			p.e.log.Error("js: warm isolate failed to boot", "heap_limit", kp.key.heap, "err", err)
			r.dispose()
			p.unbook(kp, true)
			continue
		}
		p.park(kp, r)
	}
}

// sleep waits until woken or, if d > 0, for d. It reports false when
// the pool was stopped.
func (p *pool) sleep(d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-p.wake:
	case <-timer:
	case <-p.stop:
		return false
	}
	return true
}

// next drains the keys unused for drainAfter and picks the key to boot an
// isolate for, booked: the emptiest, the most recently used among equals.
// With none to boot it returns how long the refiller may sleep (0: until
// woken).
func (p *pool) next() (*keyPool, time.Duration) {
	now := time.Now()
	var wait time.Duration
	soon := func(d time.Duration) {
		if d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	}
	var gone []*keyPool
	var best *keyPool
	p.mu.Lock()
	if p.closed {
		// close disposes of the parked isolates once the refillers
		// returned: they sleep until it stops them.
		p.mu.Unlock()
		return nil, 0
	}
	for k, kp := range p.keys {
		if !kp.own {
			if idle := now.Sub(kp.lastUsed); idle >= p.drainAfter {
				delete(p.keys, k)
				kp.gone = true
				gone = append(gone, kp)
				continue
			} else {
				soon(p.drainAfter - idle)
			}
		}
		if len(kp.parked)+kp.booting >= p.capacity {
			continue
		}
		if now.Before(kp.retryAt) {
			soon(kp.retryAt.Sub(now))
			continue
		}
		if best == nil || fuller(best, kp) {
			best = kp
		}
	}
	if best != nil {
		best.booting++
	}
	// The drained keys' isolates are disposed outside the lock.
	var dispose [][]*rt
	for _, kp := range gone {
		dispose = append(dispose, kp.parked)
		kp.parked = nil
	}
	p.mu.Unlock()
	for i, kp := range gone {
		for _, r := range dispose[i] {
			r.dispose()
		}
		p.drained.Add(int64(len(dispose[i])))
		p.logKey("js: warm pool key drained", kp.key, slog.Int("discarded", len(dispose[i])), slog.Int("size", 0))
	}
	return best, wait
}

// fuller reports whether a should be refilled after b.
func fuller(a, b *keyPool) bool {
	na, nb := len(a.parked)+a.booting, len(b.parked)+b.booting
	if na != nb {
		return na > nb
	}
	return a.lastUsed.Before(b.lastUsed)
}

// waitIdle waits until no process is running, kp has no parked isolate,
// or maxRefillDelay passed. It reports false when the pool was stopped.
func (p *pool) waitIdle(kp *keyPool) bool {
	p.mu.Lock()
	empty := len(kp.parked) == 0
	p.mu.Unlock()
	if p.active.Load() == 0 || empty {
		return true
	}
	t := time.NewTimer(maxRefillDelay)
	defer t.Stop()
	select {
	case <-p.idle:
	case <-t.C:
	case <-p.stop:
		return false
	}
	return true
}

// unbook cancels a booking of next; failed delays the key's next boot.
func (p *pool) unbook(kp *keyPool, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kp.booting--
	if failed {
		kp.retryAt = time.Now().Add(bootRetryDelay)
	}
}

// park adds a booted runtime to its key, or disposes of it if the key was
// drained or the pool closed meanwhile.
func (p *pool) park(kp *keyPool, r *rt) {
	p.mu.Lock()
	kp.booting--
	keep := !kp.gone && !p.closed
	if keep {
		kp.parked = append(kp.parked, r)
	}
	n := len(kp.parked)
	p.mu.Unlock()
	if !keep {
		r.dispose()
		p.drained.Add(1)
		p.logKey("js: warm isolate discarded", kp.key, slog.Int("size", n))
		return
	}
	p.logKey("js: warm pool refilled", kp.key, slog.Int("size", n))
}

// close stops the refillers and disposes of the parked isolates. It may
// be called more than once.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	keys := p.keys
	p.keys = map[poolKey]*keyPool{}
	p.mu.Unlock()
	for _, kp := range keys {
		for _, r := range kp.parked {
			r.dispose()
		}
		if len(kp.parked) > 0 {
			p.logKey("js: warm pool closed", kp.key, slog.Int("discarded", len(kp.parked)))
		}
		kp.parked = nil
	}
}

// logKey logs a pool transition of key k at debug level.
func (p *pool) logKey(msg string, k poolKey, attrs ...slog.Attr) {
	ctx := context.Background()
	if !p.e.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	d := k.digest
	if len(d) > 12 {
		d = d[:12]
	}
	as := append([]slog.Attr{slog.Uint64("heap_limit", k.heap), slog.String("bootstrap", d)}, attrs...)
	p.e.log.LogAttrs(ctx, slog.LevelDebug, msg, as...)
}

// Stats are the engine's counters.
type Stats struct {
	// PoolHits and PoolMisses count process starts that found a warm
	// isolate and those that created one.
	PoolHits, PoolMisses int64
	// PoolDrained counts parked isolates disposed of unclaimed because
	// their key went unused (see Config.WarmDrainAfter).
	PoolDrained int64
	// PoolParked is the number of parked isolates over all keys.
	PoolParked int
	// PoolKeys are the keys kept warm, by heap limit.
	PoolKeys []PoolKeyStats
	// LiveIsolates counts isolates not yet disposed of: running a
	// process, booting or parked.
	LiveIsolates int64
	// DiskCache counts the on-disk code cache's lookups and writes.
	DiskCache DiskCacheStats
}

// PoolKeyStats describe one key of the warm pool.
type PoolKeyStats struct {
	// Bootstrap is the digest of the bootstrap the isolates evaluated.
	Bootstrap string
	// HeapLimit is the isolates' heap limit in bytes.
	HeapLimit uint64
	// Parked isolates are ready to be claimed; Booting ones are being
	// made.
	Parked, Booting int
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	p := e.pool
	if p == nil {
		return Stats{LiveIsolates: e.live.Load(), DiskCache: e.disk.stats()}
	}
	st := Stats{PoolHits: p.hits.Load(), PoolMisses: p.misses.Load(), PoolDrained: p.drained.Load(), LiveIsolates: e.live.Load(), DiskCache: e.disk.stats()}
	p.mu.Lock()
	for _, kp := range p.keys {
		st.PoolParked += len(kp.parked)
		st.PoolKeys = append(st.PoolKeys, PoolKeyStats{
			Bootstrap: kp.key.digest, HeapLimit: kp.key.heap, Parked: len(kp.parked), Booting: kp.booting,
		})
	}
	p.mu.Unlock()
	slices.SortFunc(st.PoolKeys, func(a, b PoolKeyStats) int {
		return cmp.Or(cmp.Compare(a.HeapLimit, b.HeapLimit), cmp.Compare(a.Bootstrap, b.Bootstrap))
	})
	return st
}

// phases times one process start, reported when SECEXEC_SESSION_PHASES=1.
type phases struct {
	claim, isolateNew, contextNew, bootstrap, userCode, teardown time.Duration
	hit                                                          bool
}

func (e *Engine) reportPhases(ph *phases, pid int) {
	if !e.phases {
		return
	}
	// The phases are for the host's operator: when the engine was given
	// no logger that shows them (guest.Runtime passes a discarding one),
	// they go to the host process's default logger. Never to the guest.
	ctx := context.Background()
	log := e.log
	if !log.Enabled(ctx, e.phaseLevel) {
		log = slog.Default()
	}
	warm := "warm_worker_miss"
	if ph.hit {
		warm = "warm_worker_hit"
	}
	log.LogAttrs(ctx, e.phaseLevel, "js: session phases",
		slogInt("pid", pid), slogBool("pool_hit", ph.hit), slog.String("warm_worker", warm),
		slogDur("pool_claim", ph.claim), slogDur("isolate_new", ph.isolateNew), slogDur("context_new", ph.contextNew),
		slogDur("bootstrap", ph.bootstrap), slogDur("user_code", ph.userCode), slogDur("teardown", ph.teardown))
}
