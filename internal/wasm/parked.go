package wasm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/secexec/secexec/internal/wasm/syscalls"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/fs/overlay"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

// CPython for WASI is a command module (it exports _start, not
// _initialize), and most of a short run is its own start-up: about 90 ms
// of interpreter initialisation and imports against a few ms to
// instantiate the 26 MB module. A memory snapshot cannot be shared: the
// interpreter's hash secret and random state are made during start-up
// and must be each process's own. So the engine parks one independently
// started instance instead, which exactly one process claims.
//
// The instance starts on a goroutine of its own, in the init process of
// a template kernel whose root holds only the read-only layers of the
// ParkSpec (the Python support files and standard library bytecode): it
// never sees a tenant's files. Its program (the spec's Argv) finishes
// start-up and then reads descriptor 0, where it waits (syscalls
// park.go). A process that qualifies (ParkSpec.Eligible: a command line
// and environment that cannot change what start-up did) claims it: the
// instance's State is rebound to the process — its descriptors, "/" at
// PrestartRootFD as at start-up, its arguments and environment — its
// memory is charged to the process from then on, the process's CPU
// clock becomes the instance's thread's, and its cancellation cancels
// the instance. The read then returns the claim's payload, which the
// program applies before it runs the process's program. Instances are
// never reused. One waits per engine; a claim starts the next, and one
// left unclaimed for parkedIdle is discarded.

// ParkSpec describes a command whose instances the engine starts ahead
// of need (see Engine.SetParked).
type ParkSpec struct {
	// Module is the fingerprint of the command's module; processes that
	// run other modules never claim its instances.
	Module software.Fingerprint
	// Layers are the read-only filesystems of the template's root,
	// topmost first.
	Layers []vfs.FileSystem
	// Argv and Env are the instance's command line and environment at
	// start-up.
	Argv, Env []string
	// Dirs are directories that start-up read: a process claims an
	// instance only when its VM shows each of them as the layers do
	// (same mode and times: not changed by the tenant).
	Dirs []string
	// Eligible reports whether a process started with argv and env may
	// run on an instance: what start-up read from them must be the same.
	Eligible func(argv, env []string) bool
	// Payload encodes what the instance's program reads at claim.
	Payload func(argv, env []string, cwd string) []byte
	// Key identifies everything start-up depends on besides the module
	// (support layer contents, secexec's version, configuration): a
	// SetParked with the module and key of the current spec keeps it and
	// its parked instance.
	Key string
}

// errParkLost ends a process whose parked instance ended before its
// claim: reported as an internal error.
var errParkLost = errors.New("wasm: parked instance ended before its claim")

// ErrParkSpec is returned by SetParked for an incomplete spec.
var ErrParkSpec = errors.New("wasm: incomplete park spec")

// SetParked makes processes of spec.Module that spec.Eligible accepts
// start on parked instances. A later call replaces the spec and discards
// the instance parked under the old one.
func (e *Engine) SetParked(ctx context.Context, spec ParkSpec) error {
	if len(spec.Argv) == 0 || spec.Eligible == nil || spec.Payload == nil || len(spec.Layers) == 0 {
		return ErrParkSpec
	}
	pp := e.parks
	pp.mu.Lock()
	same := pp.tmpl != nil && spec.Key != "" && pp.tmpl.spec.Key == spec.Key && pp.tmpl.spec.Module == spec.Module
	pp.mu.Unlock()
	if same {
		return nil
	}
	upper := memfs.New(memfs.Options{ReadOnly: true})
	root, err := overlay.New(upper, spec.Layers...)
	if err != nil {
		return fmt.Errorf("wasm: park template: %w", err)
	}
	v, err := vfs.New(ctx, root, vfs.Options{})
	if err != nil {
		return fmt.Errorf("wasm: park template: %w", err)
	}
	k, err := kernel.New(kernel.Config{VFS: v, Logger: e.log})
	if err != nil {
		return fmt.Errorf("wasm: park template: %w", err)
	}
	if err := syscalls.TemplateFiles(ctx, k.Init()); err != nil {
		_ = k.Shutdown(ctx)
		return fmt.Errorf("wasm: park template: %w", err)
	}
	t := &parkTemplate{spec: spec, k: k}
	for _, d := range spec.Dirs {
		st, err := v.Lstat(ctx, k.Init().Caller(), d)
		if err != nil {
			_ = k.Shutdown(ctx)
			return fmt.Errorf("wasm: park template: %w", err)
		}
		t.dirs = append(t.dirs, st)
	}
	pp.mu.Lock()
	if pp.closed {
		pp.mu.Unlock()
		_ = k.Shutdown(ctx)
		return ErrClosed
	}
	old, oldReady := pp.tmpl, pp.ready
	pp.tmpl, pp.ready = t, nil
	pp.mu.Unlock()
	if oldReady != nil {
		oldReady.discard()
	}
	if old != nil {
		old.retire(ctx)
	}
	return nil
}

// parkTemplate is a spec and the template kernel its instances start in.
type parkTemplate struct {
	spec ParkSpec
	k    *kernel.Kernel
	dirs []vfs.Stat // of spec.Dirs, as the layers show them
	// users counts instances started in k; the last one out of a
	// retired template shuts it down.
	mu      sync.Mutex
	users   int
	retired bool
}

func (t *parkTemplate) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.retired {
		return false
	}
	t.users++
	return true
}

func (t *parkTemplate) leave() {
	t.mu.Lock()
	t.users--
	done := t.retired && t.users == 0
	t.mu.Unlock()
	if done {
		_ = t.k.Shutdown(context.Background())
	}
}

func (t *parkTemplate) retire(ctx context.Context) {
	t.mu.Lock()
	t.retired = true
	done := t.users == 0
	t.mu.Unlock()
	if done {
		_ = t.k.Shutdown(ctx)
	}
}

// parkPool holds the engine's parked instance.
type parkPool struct {
	e       *Engine
	mu      sync.Mutex
	tmpl    *parkTemplate
	ready   *parkedCmd
	filling chan struct{} // closed when the fill in progress ends
	closed  bool
	wg      sync.WaitGroup

	claims, misses atomic.Uint64
	// live counts instances started and not yet ended.
	live atomic.Int64
}

// parkedCmd is a started instance waiting for, or running, its process.
type parkedCmd struct {
	pp     *parkPool
	t      *parkTemplate
	ent    *compiled
	mod    api.Module
	mem    *ownedMemory
	park   *syscalls.Park
	ctx    *parkCtx
	cancel context.CancelFunc
	idle   *time.Timer
	// result receives the error that ended _start, once, after a claim;
	// done is closed after that, when the instance has ended.
	result chan error
	done   chan struct{}
	// claimed is set (before the claim is sent) when a process took it.
	claimed atomic.Bool
	// clock is the instance thread's CPU clock since start-up, the
	// claiming process's; set before the instance waits for its claim.
	clock       kernel.CPUClock
	discardOnce sync.Once
}

// parkCtx is the context of a parked instance's calls: cancellation of
// its own, and the values of the process it runs for (the template's
// init until claimed), so that the kernel sees the claiming process as
// the caller.
type parkCtx struct {
	context.Context
	values atomic.Pointer[context.Context]
}

func (c *parkCtx) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return (*c.values.Load()).Value(key)
}

// specFor returns the template of ent's module, or nil.
func (pp *parkPool) specFor(ent *compiled) *parkTemplate {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.tmpl == nil || pp.closed || pp.tmpl.spec.Module != software.Fingerprint(ent.key) {
		return nil
	}
	return pp.tmpl
}

// take returns t's parked instance, waiting for one being started, and
// starts the next; nil when there is none (the caller starts cold).
func (pp *parkPool) take(ctx context.Context, t *parkTemplate, ent *compiled) *parkedCmd {
	pp.mu.Lock()
	pk := pp.claimLocked(t, ent)
	done := pp.filling
	pp.mu.Unlock()
	if pk != nil || !waitFor(ctx, done) {
		return pk
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.claimLocked(t, ent)
}

// claimLocked takes the parked instance when it is t's of ent, and sees
// that the next one is on its way.
func (pp *parkPool) claimLocked(t *parkTemplate, ent *compiled) *parkedCmd {
	pk := pp.ready
	if pk != nil && pk.t == t && pk.ent == ent {
		pp.ready = nil
		pk.idle.Stop()
	} else {
		pk = nil
	}
	pp.fillLocked(t, ent)
	return pk
}

// waitFor waits until done is closed; false when there is nothing to
// wait for (nil) or ctx ends first.
func waitFor(ctx context.Context, done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// fillLocked starts an instance of ent in t unless one is parked or on
// its way.
func (pp *parkPool) fillLocked(t *parkTemplate, ent *compiled) {
	if pp.closed || pp.ready != nil || pp.filling != nil || pp.tmpl != t {
		return
	}
	if !pp.e.mods.retain(ent) {
		return
	}
	if !t.enter() {
		pp.e.mods.release(ent)
		return
	}
	done := make(chan struct{})
	pp.filling = done
	pp.wg.Add(1)
	pp.live.Add(1)
	go func() {
		pk := pp.start(t, ent)
		pp.mu.Lock()
		pp.filling = nil
		keep := pk != nil && !pp.closed && pp.ready == nil && pp.tmpl == t
		if keep {
			pp.ready = pk
			pk.idle = time.AfterFunc(parkedIdle, func() { pp.expire(pk) })
		}
		close(done)
		pp.mu.Unlock()
		if pk != nil && !keep {
			pk.discard()
		}
	}()
}

// expire discards pk if it is still the parked instance.
func (pp *parkPool) expire(pk *parkedCmd) {
	pp.mu.Lock()
	if pp.ready != pk {
		pp.mu.Unlock()
		return
	}
	pp.ready = nil
	pp.mu.Unlock()
	pk.discard()
}

// start instantiates ent in t and runs it up to its wait for a claim; it
// returns nil (and has cleaned up) when the instance ended before. It
// owns one pp.wg count, a reference on ent and one on t, which pass to
// the instance's goroutine.
func (pp *parkPool) start(t *parkTemplate, ent *compiled) *parkedCmd {
	e := pp.e
	t0 := time.Now()
	fail := func(what string, err error) *parkedCmd {
		e.log.Debug("wasm: park "+what, "err", err)
		t.leave()
		e.mods.release(ent)
		pp.live.Add(-1)
		pp.wg.Done()
		return nil
	}
	init := t.k.Init()
	st, park, err := syscalls.NewParkedState(context.Background(), init, t.spec.Argv, t.spec.Env)
	if err != nil {
		return fail("state", err)
	}
	base, cancel := context.WithCancel(syscalls.WithState(context.Background(), st))
	pc := &parkCtx{Context: base}
	ictx := init.Context()
	pc.values.Store(&ictx)
	var om *ownedMemory
	alloc := ownedAllocator{inner: e.alloc, out: &om}
	mod, err := e.rt.InstantiateModule(experimental.WithMemoryAllocator(pc, alloc), ent.cm, e.modCfg)
	if err != nil || om == nil {
		cancel()
		st.Close()
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		return fail("instantiate", err)
	}
	pk := &parkedCmd{pp: pp, t: t, ent: ent, mod: mod, mem: om, park: park, ctx: pc, cancel: cancel, result: make(chan error, 1), done: make(chan struct{})}
	go pk.run(st)
	select {
	case <-park.Ready():
		e.log.Debug("wasm: parked", "took", time.Since(t0), "memory", om.size)
		return pk
	case <-pk.done:
		return nil
	}
}

// run runs the instance's _start on a thread of its own (the claiming
// process's CPU clock reads it) until the program ends, then cleans up.
func (pk *parkedCmd) run(st *syscalls.State) {
	pp := pk.pp
	defer pp.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The process that claims the instance is charged its start-up too,
	// as a cold start would be: its CPU clock is this thread's from here.
	clock, stopClock := kernel.ThreadCPUClock()
	pk.clock = clock
	_, err := pk.mod.ExportedFunction("_start").Call(pk.ctx)
	stopClock()
	// The memory is freed (and uncharged) before the process learns the
	// status, as when a process closes its own instance.
	_ = pk.mod.Close(context.Background())
	st.Close()
	pk.cancel()
	if pk.claimed.Load() {
		pk.result <- err
	} else {
		pp.e.log.Debug("wasm: parked instance ended unclaimed", "err", err)
	}
	close(pk.done)
	pk.t.leave()
	pp.e.mods.release(pk.ent)
	pp.live.Add(-1)
}

// discard ends an instance no process claimed.
func (pk *parkedCmd) discard() {
	pk.discardOnce.Do(func() {
		if pk.idle != nil {
			pk.idle.Stop()
		}
		pk.park.Close()
		pk.cancel()
	})
}

// close discards the parked instance and waits for every instance's
// goroutine, then shuts the template down. Claimed instances end with
// their processes, which Engine.Close waited for.
func (pp *parkPool) close() {
	pp.mu.Lock()
	pp.closed = true
	ready, t := pp.ready, pp.tmpl
	pp.ready, pp.tmpl = nil, nil
	pp.mu.Unlock()
	if ready != nil {
		ready.discard()
	}
	// A fill in progress ends at its instance's wait; close discards it
	// (fillLocked's goroutine sees closed).
	pp.wg.Wait()
	if t != nil {
		t.retire(context.Background())
	}
}

// runParked runs the process on a parked instance when its command line
// and environment qualify; ok is false when it did not start (the caller
// starts the process cold).
func (pr *program) runParked(ctx context.Context, p *kernel.Process, argv, env []string, ph *phases) (int, *syscalls.ExecRequest, bool) {
	pp := pr.e.parks
	t := pp.specFor(pr.mod)
	if t == nil || !t.spec.Eligible(argv, env) {
		return 0, nil, false
	}
	if f, err := p.File(syscalls.PrestartRootFD); err == nil {
		// The instance's libc knows "/" at that descriptor only.
		f.DecRef()
		return 0, nil, false
	}
	for i, d := range t.spec.Dirs {
		st, err := p.Kernel().VFS().Lstat(ctx, p.Caller(), d)
		want := t.dirs[i]
		if err != nil || st.Mode != want.Mode || !st.Mtime.Equal(want.Mtime) || !st.Ctime.Equal(want.Ctime) {
			return 0, nil, false
		}
	}
	pk := pp.take(ctx, t, pr.mod)
	if pk == nil {
		pp.misses.Add(1)
		return 0, nil, false
	}
	st, ok := syscalls.NewPrestartedState(ctx, p, argv, env)
	if !ok {
		pk.discard()
		pp.misses.Add(1)
		return 0, nil, false
	}
	if !pk.mem.claim(p) {
		st.Close()
		pk.discard()
		pp.misses.Add(1)
		return 0, nil, false
	}
	pp.claims.Add(1)
	ph.prestarted = true
	pk.ctx.values.Store(&ctx)
	stop := context.AfterFunc(ctx, pk.cancel)
	defer stop()
	pk.claimed.Store(true)
	t1 := time.Now()
	p.SetCPUClock(pk.clock)
	pk.park.Claim(syscalls.Claim{State: st, Payload: t.spec.Payload(argv, env, p.Cwd())})
	<-pk.done
	var err error
	select {
	case err = <-pk.result:
	default:
		// It ended before the claim reached it (it cannot while it
		// waits, but the process must not wait for a status never sent).
		err = errParkLost
	}
	ph.run = time.Since(t1)
	pr.e.reportPhases(ph, p.PID(), argv)
	code, req := pr.exitOf(ctx, p, argv, err)
	return code, req, true
}
