package js

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The warm pool holds isolates created on a background goroutine with
// the bootstrap already evaluated, so a process start skips the most
// expensive phases. A claimed isolate is never returned: every process
// gets a virgin one, and the pool refills in the background. All isolates
// of one Engine share its bootstrap and heap limit, so the pool has one
// key.
type pool struct {
	e      *Engine
	ch     chan *rt
	stop   chan struct{}
	wg     sync.WaitGroup
	hits   atomic.Int64
	misses atomic.Int64

	// active counts processes between claim and exit; idle is signalled
	// when it drops to zero. Refilling waits for that (unless the pool is
	// empty), so that booting the next isolate does not compete for the
	// CPU with the process that just claimed one.
	active atomic.Int64
	idle   chan struct{}
}

// maxRefillDelay bounds how long refilling waits for an idle moment.
const maxRefillDelay = 50 * time.Millisecond

func (p *pool) begin() { p.active.Add(1) }

func (p *pool) end() {
	if p.active.Add(-1) == 0 {
		select {
		case p.idle <- struct{}{}:
		default:
		}
	}
}

// waitIdle waits until no process is running, the pool is empty, or
// maxRefillDelay passed.
func (p *pool) waitIdle() {
	if p.active.Load() == 0 || len(p.ch) == 0 {
		return
	}
	t := time.NewTimer(maxRefillDelay)
	defer t.Stop()
	select {
	case <-p.idle:
	case <-t.C:
	case <-p.stop:
	}
}

// DefaultWarmIsolates is the pool capacity unless SECEXEC_V8_WARM_ISOLATES
// or Config.WarmIsolates says otherwise.
const DefaultWarmIsolates = 2

func warmCapacity(cfg Config) int {
	if cfg.WarmIsolates != 0 {
		return max(cfg.WarmIsolates, 0)
	}
	if s := os.Getenv("SECEXEC_V8_WARM_ISOLATES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return min(n, 64)
		}
	}
	return DefaultWarmIsolates
}

func newPool(e *Engine, capacity int) *pool {
	p := &pool{e: e, ch: make(chan *rt, capacity), stop: make(chan struct{}), idle: make(chan struct{}, 1)}
	p.wg.Add(1)
	go p.fill()
	return p
}

// fill keeps the pool full until stopped.
func (p *pool) fill() {
	defer p.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		p.waitIdle()
		r := newRT(p.e)
		err := r.boot()
		if err != nil {
			p.e.log.Error("js: warm isolate failed to boot", "err", err)
			r.dispose()
			select {
			case <-p.stop:
				return
			case <-time.After(time.Second):
			}
			continue
		}
		select {
		case p.ch <- r:
			p.e.log.Debug("js: warm pool refilled", "size", len(p.ch))
		case <-p.stop:
			r.dispose()
			return
		}
	}
}

// claim returns a warm runtime, or nil when the pool is empty.
func (p *pool) claim() *rt {
	select {
	case r := <-p.ch:
		p.hits.Add(1)
		p.e.log.Debug("js: warm isolate claimed", "left", len(p.ch))
		return r
	default:
		p.misses.Add(1)
		p.e.log.Debug("js: warm pool empty")
		return nil
	}
}

func (p *pool) close() {
	close(p.stop)
	p.wg.Wait()
	for {
		select {
		case r := <-p.ch:
			r.dispose()
		default:
			return
		}
	}
}

// Stats are the engine's counters.
type Stats struct {
	// PoolHits and PoolMisses count process starts that found a warm
	// isolate and those that created one.
	PoolHits, PoolMisses int64
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	if e.pool == nil {
		return Stats{}
	}
	return Stats{PoolHits: e.pool.hits.Load(), PoolMisses: e.pool.misses.Load()}
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
