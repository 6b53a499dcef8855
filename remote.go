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
	"github.com/secexec/secexec/internal/guest"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
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
type EngineLostError = client.LostError

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
	engineMain(engineRuntime(log), log)
}

func engineMain(rt vmhost.Runtime, log *slog.Logger) {
	err := server.Main(context.Background(), rt, log)
	// Programs still tearing down write their last records (phase
	// reports) before the process ends; the client reads them until the
	// engine exits.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_ = defaultRuntime.close(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "secexec engine:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Shutdown closes the shared engine processes this program started and
// waits (until ctx ends) for each to exit, so that everything they logged
// has reached Options.Logger. A later NewVM starts a new engine. Programs
// that log engine records (the CLI with --log-level) call it before
// exiting.
func Shutdown(ctx context.Context) {
	sharedEngines.closeAll(ctx)
}

// runtimeFor returns the program loaders of an in-process VM with opts.
func runtimeFor(opts Options) vmhost.Runtime {
	if opts.runtime != nil {
		return opts.runtime
	}
	return vmRuntime{l: &defaultRuntime, cfg: guest.Config{Progress: progressWriter(), WarmIsolates: opts.WarmIsolates, Logger: opts.Logger}}
}

// newBackend creates the VM where opts.Engine says.
func newBackend(ctx context.Context, opts Options) (backend, error) {
	switch opts.Engine {
	case EngineInProcess:
		return newLocalBackend(ctx, opts)
	case EngineShared, EnginePerVM:
		return newRemoteBackend(ctx, opts)
	}
	return nil, fmt.Errorf("secexec: Options.Engine %v: %w", opts.Engine, errno.EINVAL)
}

func newRemoteBackend(ctx context.Context, opts Options) (backend, error) {
	cfg := client.VMConfig{
		Policy:   opts.Permissions,
		Audit:    opts.Audit,
		Limits:   opts.Limits,
		Cwd:      opts.Cwd,
		Hostname: opts.Hostname,
		Clock:    opts.Clock,
		Tools:    toolHost(opts.Tools),
	}
	cfg.Mounts = hostConfig(opts).Mounts
	dirs, err := ensureSetUp(ctx, opts.Logger)
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
		return &apiBackend{api: ownedVM{v}}, nil
	}
	// A shared engine may have died since its last use without anyone
	// noticing yet: one retry on a fresh engine covers that.
	for attempt := 0; ; attempt++ {
		c, err := sharedEngines.get(ctx, copts)
		if err != nil {
			return nil, err
		}
		v, err := c.NewVM(ctx, cfg)
		if err == nil {
			return &apiBackend{api: v}, nil
		}
		if !errors.Is(err, ErrEngineLost) || attempt > 0 {
			return nil, apiErr(err)
		}
	}
}

// ownedVM is a VM whose engine process is its own: closing the VM ends
// the engine too.
type ownedVM struct{ *client.VM }

func (o ownedVM) Close(ctx context.Context) error {
	err := o.VM.Close(ctx)
	_ = o.Conn().Close()
	return err
}

// enginePool holds the shared engines, one per executable and set of
// cache directories. It is the one piece of process-wide state: VMs
// created independently share an engine by design, as they would share a
// thread pool.
type enginePool struct {
	mu    sync.Mutex
	conns map[string]*client.Conn
}

var sharedEngines = &enginePool{conns: make(map[string]*client.Conn)}

// get returns the live shared engine for opts.Path and opts.Env, starting one if there
// is none or the last one was lost.
func (p *enginePool) get(ctx context.Context, opts client.Options) (*client.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := opts.Path + "\x00" + strings.Join(opts.Env, "\x00")
	if c := p.conns[key]; c != nil && c.Err() == nil {
		return c, nil
	}
	c, err := client.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	p.conns[key] = c
	return c, nil
}

// closeAll closes every shared engine and waits for them to exit.
func (p *enginePool) closeAll(ctx context.Context) {
	p.mu.Lock()
	conns := p.conns
	p.conns = make(map[string]*client.Conn)
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.CloseContext(ctx)
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
