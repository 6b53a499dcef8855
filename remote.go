package secexec

// [engine] The engine process: where VMs run unless Options.Engine says
// otherwise, and the glue between the VM handle and internal/engine.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/engine/server"
	"github.com/secexec/secexec/internal/vmhost"
)

// EngineMode selects where a VM's kernel and runtimes run.
//
// An engine process isolates the embedding program from the VM: a guest
// that crashes the runtime (V8 aborts the whole process on some
// out-of-memory paths) takes down at most the engine, and no guest code
// runs in the embedding program's address space. The engine is this
// program re-executed (or Options.EnginePath), so main must begin with
//
//	if secexec.IsEngine() { secexec.EngineMain() }
type EngineMode int

// Engine modes.
const (
	// EngineShared runs the VM in an engine process shared by every VM
	// of this program that uses it, started on first use and replaced
	// when it dies. It is the default.
	EngineShared EngineMode = iota
	// EnginePerVM runs the VM in an engine process of its own, which
	// exits when the VM is closed.
	EnginePerVM
	// EngineInProcess runs the VM in this process: no process start and
	// no protocol, for tests and trusted code only.
	EngineInProcess
)

func (m EngineMode) String() string {
	switch m {
	case EngineShared:
		return "shared"
	case EnginePerVM:
		return "per-vm"
	case EngineInProcess:
		return "in-process"
	}
	return fmt.Sprintf("EngineMode(%d)", int(m))
}

// ErrEngineLost is matched (errors.Is) by the error of every call that
// failed because the VM's engine process died (killed, crashed, or
// aborted by V8). The VM is then unusable; NewVM starts a fresh engine.
var ErrEngineLost = client.ErrLost

// EngineLostError says how an engine was lost; it matches ErrEngineLost.
// Its Reason (an EngineLostReason) is safe to show to whoever owns the
// VM; its Cause, which holds what the engine last wrote on stderr (host
// addresses, source paths), is for the embedder's logs only.
type EngineLostError = client.LostError

// EngineLostReason classifies how an engine was lost, from how its
// process ended (exit status or signal, and whether its runtime reported
// running out of memory), never from text it wrote.
type EngineLostReason = client.LostReason

// The reasons of an EngineLostError.
const (
	// EngineOutOfMemory: the engine's runtime ran out of memory (a V8
	// fatal out-of-memory error), which ends the whole process.
	EngineOutOfMemory = client.LostOutOfMemory
	// EngineKilled: a signal sent to the engine killed it (SIGKILL,
	// SIGTERM): an operator, the system's OOM killer.
	EngineKilled = client.LostKilled
	// EngineProtocolViolation: the engine broke the protocol and was
	// killed (a guest may have taken it over).
	EngineProtocolViolation = client.LostProtocolViolation
	// EngineCrashed: any other end (a fatal signal, a Go panic, an
	// unexpected exit).
	EngineCrashed = client.LostCrashed
)

// IsEngine reports whether this process was started as a secexec engine.
// Programs that create VMs in engine processes call it first thing in
// main (and test binaries in TestMain):
//
//	if secexec.IsEngine() { secexec.EngineMain() }
func IsEngine() bool { return server.IsEngine() }

// EngineMain serves as an engine process and exits; it never returns.
// Call it only when IsEngine reports true.
func EngineMain() {
	log := server.Logger()
	h := NewHost(HostOptions{Logger: log})
	engineMain(h, h.engineRuntime(log), log)
}

// engineMain serves with rt, the runtime of h (the engine process's only
// Host), and exits.
func engineMain(h *Host, rt vmhost.Runtime, log *slog.Logger) {
	err := server.Main(context.Background(), rt, log)
	// Programs still tearing down write their last records (phase
	// reports) before the process ends; the client reads them until the
	// engine exits.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_ = h.Close(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "secexec engine:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Shutdown closes the shared engine processes of the default Host and
// waits (until ctx ends) for each to exit, so that everything they logged
// has reached Options.Logger. A later NewVM starts a new engine. Programs
// that log engine records (the CLI with --log-level) call it before
// exiting.
func Shutdown(ctx context.Context) { defaultHost.Shutdown(ctx) }

func (h *Host) newRemoteBackend(ctx context.Context, opts Options, from *Snapshot) (backend, error) {
	cfg := h.clientConfig(opts)
	if from != nil {
		cfg.FromStore, cfg.FromID, cfg.FromCreds = from.Store.loc, from.ID, from.Store.credentials()
	}
	log := opts.Logger
	if log == nil {
		log = h.opts.Logger
	}
	dirs, err := h.ensureSetUp(ctx, log)
	if err != nil {
		return nil, err
	}
	copts := client.Options{Path: opts.EnginePath, Logger: opts.Logger, WarmIsolates: opts.WarmIsolates, Env: dirs.Env()}
	if opts.Engine == EnginePerVM {
		c, err := client.Start(ctx, copts)
		if err != nil {
			return nil, err
		}
		v, err := c.NewVM(ctx, cfg)
		if err != nil {
			_ = c.Close()
			return nil, apiErr(err)
		}
		return newAPIBackend(ownedVM{VM: v, ref: &connRef{n: 1, c: c}, once: new(sync.Once)}), nil
	}
	if h.opts.Logger != nil {
		copts.Logger = h.opts.Logger
	}
	// A shared engine may have died since its last use without anyone
	// noticing yet: one retry on a fresh engine covers that.
	for attempt := 0; ; attempt++ {
		c, release, err := h.engines.get(ctx, opts.EngineGroup, copts)
		if err != nil {
			return nil, err
		}
		v, err := c.NewVM(ctx, cfg)
		if err == nil {
			return newAPIBackend(pooledVM{VM: v, release: release}), nil
		}
		release()
		if !errors.Is(err, ErrEngineLost) || attempt > 0 {
			return nil, apiErr(err)
		}
	}
}

// ownedVM is a VM whose engine process is its own: closing the VM ends
// the engine too.
type ownedVM struct {
	*client.VM
	ref  *connRef
	once *sync.Once
}

func (o ownedVM) Close(ctx context.Context) error {
	err := o.VM.Close(ctx)
	o.once.Do(o.ref.release)
	return err
}

// clientConfig is the engine's description of a VM with opts.
func (h *Host) clientConfig(opts Options) client.VMConfig {
	cfg := client.VMConfig{
		Policy:   opts.Permissions,
		Audit:    opts.Audit,
		Limits:   opts.Limits,
		Cwd:      opts.Cwd,
		Hostname: opts.Hostname,
		Clock:    opts.Clock,
		Tools:    toolHost(opts.Tools),
	}
	cfg.Mounts = hostConfig(opts, nil).Mounts
	return cfg
}

// pooledVM is a VM in a shared engine of the pool: closing it releases
// its hold on the engine, which ends an idle engine of a named group.
type pooledVM struct {
	*client.VM
	release func()
}

func (p pooledVM) Close(ctx context.Context) error {
	err := p.VM.Close(ctx)
	p.release()
	return err
}

// enginePool holds a Host's shared engines, one per engine group,
// executable, warm pool size and set of cache directories, each with the
// count of VMs that hold it. An engine starts without the pool's lock
// held, so a slow start of one group's engine delays no other group.
type enginePool struct {
	mu      sync.Mutex
	engines map[poolKey]*pooledEngine
}

// poolKey says which VMs may share an engine.
type poolKey struct {
	group, path, env string
	warm             int
}

type pooledEngine struct {
	ready chan struct{} // closed once the start ended: conn or err is set
	conn  *client.Conn
	err   error
	vms   int // holds: VMs created on it and not closed, and gets under way
}

// usable reports whether e is starting or up (not failed or lost).
func (e *pooledEngine) usable() bool {
	select {
	case <-e.ready:
		return e.err == nil && e.conn.Err() == nil
	default:
		return true
	}
}

// get returns the live shared engine of group for opts (Path, Env and
// WarmIsolates), starting one if there is none or the last one was
// lost, and holds it until release is called (once). The engine of a
// named group is closed when its last hold is released; the default
// group's ("") stays up until closeAll.
func (p *enginePool) get(ctx context.Context, group string, opts client.Options) (*client.Conn, func(), error) {
	key := poolKey{group: group, path: opts.Path, env: strings.Join(opts.Env, "\x00"), warm: opts.WarmIsolates}
	for {
		p.mu.Lock()
		e := p.engines[key]
		starter := e == nil || !e.usable()
		if starter {
			e = &pooledEngine{ready: make(chan struct{})}
			if p.engines == nil {
				p.engines = make(map[poolKey]*pooledEngine)
			}
			p.engines[key] = e
		}
		e.vms++
		p.mu.Unlock()
		var once sync.Once
		release := func() { once.Do(func() { p.release(key, e) }) }
		if starter {
			c, err := client.Start(ctx, opts)
			p.mu.Lock()
			e.conn, e.err = c, err
			close(e.ready)
			p.mu.Unlock()
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			release()
			return nil, nil, ctx.Err()
		}
		if e.err == nil {
			return e.conn, release, nil
		}
		release()
		// A start that another caller began may have failed for a reason
		// of its own (its context ended): this caller starts its own.
		if starter {
			return nil, nil, e.err
		}
	}
}

// release drops one hold on e, closing it when it was the last hold of a
// named group's engine.
func (p *enginePool) release(key poolKey, e *pooledEngine) {
	p.mu.Lock()
	e.vms--
	idle := e.vms == 0 && (key.group != "" || e.err != nil)
	if idle && p.engines[key] == e {
		delete(p.engines, key)
	}
	p.mu.Unlock()
	if idle && e.conn != nil {
		_ = e.conn.Close()
	}
}

// live returns the shared engines that are up.
// hold takes one more hold on the pooled engine of conn, for a VM forked
// on it, and returns its release; nil if conn is no longer in the pool.
func (p *enginePool) hold(conn *client.Conn) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, e := range p.engines {
		select {
		case <-e.ready:
		default:
			continue
		}
		if e.conn == conn && e.err == nil {
			e.vms++
			var once sync.Once
			return func() { once.Do(func() { p.release(key, e) }) }
		}
	}
	return nil
}

func (p *enginePool) live() []*client.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*client.Conn
	for _, e := range p.engines {
		select {
		case <-e.ready:
			if e.err == nil && e.conn.Err() == nil {
				out = append(out, e.conn)
			}
		default:
		}
	}
	return out
}

// closeAll closes every shared engine (once started) and waits for them
// to exit, until ctx ends.
func (p *enginePool) closeAll(ctx context.Context) {
	p.mu.Lock()
	engines := p.engines
	p.engines = nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-e.ready:
			case <-ctx.Done():
				return
			}
			if e.conn != nil {
				_ = e.conn.CloseContext(ctx)
			}
		}()
	}
	wg.Wait()
}

// Done returns a channel that is closed when the VM is closed or lost
// with its engine process.
func (v *VM) Done() <-chan struct{} { return v.b.done() }

// Err returns nil while the VM is usable, ErrClosed after Close, and an
// error matching ErrEngineLost once its engine process died.
func (v *VM) Err() error { return v.b.err() }
