package wasm

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/secexec/secexec/internal/wasm/syscalls"
	"github.com/secexec/secexec/kernel"
)

// A Go program compiled to WASI spends most of a short run starting up:
// instantiating a module of a few MiB, then the Go runtime's and its
// packages' initialisation. secexec's own Go userland is therefore built
// as a reactor: it exports _initialize (that start-up) and secexec_main
// (the program, which reads its arguments and environment itself). The
// prestart pool keeps one initialised instance of each such module
// parked; a process that runs the program claims it, binds its memory to
// the process's limits and runs only secexec_main. The pool refills in
// the background; an instance of a trusted module goes back to the pool
// after its process, reset to the module's snapshot (recycle.go).
//
// The parked instance's initialisation saw no process (syscalls
// WithPrestart): no arguments, no environment, no descriptors, and "/" as
// its only preopen at descriptor 3, which NewPrestartedState reproduces
// for the claiming process. Its memory counts against no process until
// claimed; at most one instance per reactor module is parked, and one
// refill runs per claim, so the engine's uncharged work is bounded by the
// guests' own rate of starting programs, which they pay for.
//
// Refills after the first start from a snapshot instead of running
// _initialize again (snapshot.go): a few hundred microseconds instead of
// milliseconds, which is what back-to-back `sh -c` execs wait for.

// isReactor reports whether cm is a reactor of this convention.
func isReactor(cm wazero.CompiledModule) bool {
	fns := cm.ExportedFunctions()
	init, ok1 := fns["_initialize"]
	main, ok2 := fns["secexec_main"]
	if !ok1 || !ok2 {
		return false
	}
	return len(init.ParamTypes()) == 0 && len(init.ResultTypes()) == 0 &&
		len(main.ParamTypes()) == 0 && slices.Equal(main.ResultTypes(), []api.ValueType{api.ValueTypeI32})
}

// parked is an initialised instance waiting for a process.
type parked struct {
	mod  api.Module
	mem  *ownedMemory
	idle *time.Timer // expires it (see parkedIdle)
	// out is set while a process holds the instance and it is counted in
	// prestartPool.out.
	out bool
}

// parkedIdle is how long an instance stays parked unclaimed. An engine
// that ran each of secexec's Go commands once would otherwise hold an
// initialised instance of each (several MiB apiece) for as long as it
// lives; after a quiet spell the next process restores its own instance
// from the snapshot instead (about a millisecond more).
var parkedIdle = 30 * time.Second

// expire discards pk if it is still ent's parked instance.
func (pp *prestartPool) expire(ent *compiled, pk *parked) {
	pp.mu.Lock()
	if pp.ready[ent] != pk {
		pp.mu.Unlock()
		return
	}
	delete(pp.ready, ent)
	pp.mu.Unlock()
	pk.close()
	pp.e.mods.release(ent)
}

// prestartPool holds parked instances by module.
type prestartPool struct {
	e       *Engine
	mu      sync.Mutex
	ready   map[*compiled]*parked
	filling map[*compiled]chan struct{} // closed when that fill ends
	// out counts instances of each recyclable module that processes
	// hold (recycle.go).
	out    map[*compiled]int
	closed bool
	wg     sync.WaitGroup
	snaps  snapshots

	claims, misses, recycled atomic.Uint64
}

func newPrestartPool(e *Engine) *prestartPool {
	return &prestartPool{e: e, ready: map[*compiled]*parked{}, filling: map[*compiled]chan struct{}{}, out: map[*compiled]int{},
		snaps: snapshots{byMod: map[*compiled]*snapshot{}, tried: map[*compiled]bool{}}}
}

// take returns the parked instance of ent and starts a refill. When an
// instance is being initialised it waits for that one, which is sooner
// than initialising another; it returns nil if ctx ends first or there is
// none (the caller initialises its own). The caller holds a reference on
// ent.
func (pp *prestartPool) take(ctx context.Context, ent *compiled) *parked {
	pp.mu.Lock()
	if pp.closed {
		pp.mu.Unlock()
		return nil
	}
	if pk := pp.ready[ent]; pk != nil {
		pp.claimLocked(ent, pk)
		pp.mu.Unlock()
		return pk
	}
	done := pp.filling[ent]
	pp.fillLocked(ent)
	if done == nil {
		done = pp.filling[ent]
	}
	pp.mu.Unlock()
	if !waitFor(ctx, done) {
		return nil
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pk := pp.ready[ent]
	if pk != nil {
		pp.claimLocked(ent, pk)
	}
	return pk
}

// claimLocked hands ent's parked instance pk to a process and sees to
// the next one: an instance that will be recycled when its process ends
// (recycle.go) is the next one, unless another process already holds
// one of ent's, which says processes of ent overlap (a pipeline, a
// command running itself), and a fresh one is made for the next.
func (pp *prestartPool) claimLocked(ent *compiled, pk *parked) {
	delete(pp.ready, ent)
	pk.claimed()
	if pp.recyclableLocked(ent) {
		pk.out = true
		pp.out[ent]++
		if pp.out[ent] == 1 {
			return
		}
	}
	pp.fillLocked(ent)
}

// fillLocked starts initialising an instance of ent unless one is parked
// or on its way.
func (pp *prestartPool) fillLocked(ent *compiled) {
	if pp.ready[ent] != nil || pp.filling[ent] != nil || pp.closed {
		return
	}
	if !pp.e.mods.retain(ent) {
		return
	}
	done := make(chan struct{})
	pp.filling[ent] = done
	pp.wg.Add(1)
	go func() {
		defer pp.wg.Done()
		pk := pp.e.prestart(ent, &pp.snaps)
		pp.mu.Lock()
		delete(pp.filling, ent)
		keep := pk != nil && !pp.closed && pp.ready[ent] == nil
		if keep {
			pp.ready[ent] = pk
			pk.idle = time.AfterFunc(parkedIdle, func() { pp.expire(ent, pk) })
		}
		close(done)
		pp.mu.Unlock()
		if !keep {
			if pk != nil {
				pk.close()
			}
			pp.e.mods.release(ent)
		}
		// A kept instance keeps its reference on ent until it is
		// claimed (the claimer releases it) or the pool closes.
	}()
}

// close discards every parked instance.
func (pp *prestartPool) close() {
	pp.mu.Lock()
	pp.closed = true
	ready := pp.ready
	pp.ready = map[*compiled]*parked{}
	pp.mu.Unlock()
	pp.wg.Wait()
	for ent, pk := range ready {
		pk.claimed()
		pk.close()
		pp.e.mods.release(ent)
	}
	pp.snaps.close()
}

func (pk *parked) close() { _ = pk.mod.Close(context.Background()) }

// claimed stops pk's expiry: a process has it.
func (pk *parked) claimed() {
	if pk.idle != nil {
		pk.idle.Stop()
	}
}

// prestart instantiates ent and brings it to the state of an initialised
// instance outside any process: from ent's snapshot when snaps has one,
// else by running _initialize (and taking the snapshot, the first time).
func (e *Engine) prestart(ent *compiled, snaps *snapshots) *parked {
	t0 := time.Now()
	snap, take := snaps.get(ent)
	defer func() {
		e.log.Debug("wasm: prestarted", "took", time.Since(t0), "from_snapshot", snap != nil)
	}()
	var om *ownedMemory
	alloc := ownedAllocator{inner: e.alloc, out: &om}
	ctx := syscalls.WithPrestart(context.Background())
	mod, err := e.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, alloc), ent.cm, e.modCfg)
	if err != nil || om == nil {
		e.log.Debug("wasm: prestart instantiate", "err", err)
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		return nil
	}
	if snap != nil {
		if err := snaps.restore(snap, mod); err != nil {
			e.log.Debug("wasm: prestart restore", "err", err)
			_ = mod.Close(context.Background())
			return nil
		}
		return &parked{mod: mod, mem: om}
	}
	var pre []byte
	if take {
		pre = preInit(mod)
	}
	if _, err := mod.ExportedFunction("_initialize").Call(ctx); err != nil {
		e.log.Debug("wasm: prestart _initialize", "err", err)
		_ = mod.Close(context.Background())
		return nil
	}
	if pre != nil {
		s, err := takeSnapshot(mod, pre)
		if err != nil {
			e.log.Debug("wasm: no snapshot", "err", err)
		}
		snaps.put(ent, s)
		if s != nil {
			e.log.Debug("wasm: snapshot taken", "memory", s.size, "pages", len(s.pages), "globals", len(s.globals))
		}
	}
	return &parked{mod: mod, mem: om}
}

// ownedAllocator makes the memories of prestarted instances: owned by no
// process until claim gives them one.
type ownedAllocator struct {
	inner experimental.MemoryAllocator
	out   **ownedMemory
}

func (a ownedAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	m := &ownedMemory{inner: a.inner.Allocate(capacity, max), size: capacity}
	*a.out = m
	return m
}

// ownedMemory is a linear memory whose growth is charged to its owner, as
// cappedAllocator and reportingAllocator do for an ordinary instance.
type ownedMemory struct {
	inner experimental.LinearMemory
	mu    sync.Mutex
	owner *kernel.Process
	max   uint64 // the owner's per-process limit; 0 for none
	size  uint64
}

func (m *ownedMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.owner; p != nil {
		if m.max > 0 && size > m.max {
			return nil
		}
		if !p.TryMemory(int64(min(size, 1<<62))) {
			return nil
		}
	}
	b := m.inner.Reallocate(size)
	if b != nil {
		m.size = size
	}
	return b
}

func (m *ownedMemory) Free() {
	m.mu.Lock()
	p := m.owner
	m.mu.Unlock()
	if p != nil {
		p.ReportMemory(0)
	}
	m.inner.Free()
}

// claim gives the memory to p, within p's limits; false leaves it
// unowned (the caller discards the instance).
func (m *ownedMemory) claim(p *kernel.Process) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	lim := p.Kernel().Limits().MemoryBytes
	if lim > 0 && m.size > uint64(lim) {
		return false
	}
	if !p.TryMemory(int64(m.size)) {
		return false
	}
	m.owner = p
	if lim > 0 {
		m.max = uint64(lim)
	}
	return true
}
