package secexec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
)

// Host owns what the VMs created through it share: the engine processes
// they run in (one per engine group, see Options.EngineGroup), the guest
// runtime of in-process VMs (V8 and WebAssembly engines with their
// caches), and the record of which caches were set up. Nothing of it is
// process-wide: two Hosts share no engine and no runtime, and closing one
// leaves the other alone.
//
// The package functions (NewVM, Shutdown, Metrics, NPMRegistry) use a
// default Host, the only one most programs need. A Host's methods are
// safe for concurrent use.
type Host struct {
	opts    HostOptions
	engines enginePool
	runtime lazyRuntime

	// setUp holds the cache directories this host has set up, so that
	// only its first VM pays for the (cheap, but not free) check.
	setUp sync.Map // setup.Dirs -> struct{}
	// registry caches the npm registry set-up recorded: it changes only
	// when the caches are set up again, and NewVM should not read a file
	// each time.
	registry sync.Map // setup.Dirs -> string

	// inProcess, if set, replaces the program loaders of in-process VMs
	// (the tests' programs; see export_test.go).
	inProcess vmhost.Runtime

	closed atomic.Bool
}

// HostOptions configure a Host. The zero value is what the default Host
// uses.
type HostOptions struct {
	// Logger receives the log records of the Host's shared engine
	// processes (their own and the lines they write on stderr). Nil means
	// the Options.Logger of the VM that started each engine: an engine
	// is shared by many VMs, so a record cannot go to each VM's logger.
	// A VM's own Logger still receives its client-side records, and all
	// the records of an engine of its own (EnginePerVM).
	Logger *slog.Logger
}

// ErrHostClosed is returned by NewVM on a Host after Close.
var ErrHostClosed = errors.New("secexec: host is closed")

// NewHost returns a Host. Its engines start with its first VMs; Close
// ends them.
func NewHost(opts HostOptions) *Host {
	return &Host{opts: opts}
}

// defaultHost backs the package functions. It is the one piece of
// process-wide state of the package: VMs created independently by
// NewVM share its engine by design, as they would share a thread pool.
var defaultHost = NewHost(HostOptions{})

// NewVM creates a VM on this Host.
func (h *Host) NewVM(ctx context.Context, opts Options) (*VM, error) {
	var sd seed
	if opts.From != nil {
		sd.from = opts.From
		opts = applySnapshot(opts, opts.From)
		opts.From = nil
	}
	v, err := h.newVM(ctx, opts, sd)
	if err != nil {
		return nil, err
	}
	if sd.from != nil {
		if err := v.restartProcesses(ctx, sd.from); err != nil {
			_ = v.Close()
			return nil, err
		}
	}
	return v, nil
}

// newVM creates a VM whose filesystems start as sd says.
func (h *Host) newVM(ctx context.Context, opts Options, sd seed) (*VM, error) {
	if h.closed.Load() {
		return nil, ErrHostClosed
	}
	clk, err := clockOf(opts)
	if err != nil {
		return nil, err
	}
	opts.Clock, opts.RealTime = clk, false
	b, err := h.newBackend(ctx, opts, sd) // [engine] in process or in an engine process
	if err != nil {
		return nil, err
	}
	v := &VM{b: b, h: h, opts: opts, env: defaultEnv(opts, h.hostRegistry())}
	v.fs = &FS{b: b}
	return v, nil
}

// newBackend creates the VM where opts.Engine says (a fork: where its
// parent is).
func (h *Host) newBackend(ctx context.Context, opts Options, sd seed) (backend, error) {
	if sd.parent != nil {
		return h.forkBackend(ctx, opts, sd.parent)
	}
	switch opts.Engine {
	case EngineInProcess:
		return newLocalBackend(ctx, opts, h.inProcessRuntime(opts), sd.from)
	case EngineShared, EnginePerVM:
		return h.newRemoteBackend(ctx, opts, sd.from)
	}
	return nil, fmt.Errorf("secexec: Options.Engine %v: %w", opts.Engine, errno.EINVAL)
}

// Shutdown closes the Host's shared engine processes and waits (until ctx
// ends) for each to exit, so that everything they logged has reached its
// logger. Their VMs are lost; a later NewVM starts new engines. Programs
// that log engine records (the CLI with --log-level) call it before
// exiting.
func (h *Host) Shutdown(ctx context.Context) {
	h.engines.closeAll(ctx)
}

// Close shuts the Host down for good: its shared engines end as with
// Shutdown, its in-process runtime is stopped (waiting, until ctx ends,
// for the programs still running), and NewVM fails with ErrHostClosed
// from then on. Close the Host's in-process VMs first. VMs with an engine
// of their own (EnginePerVM) end when they are closed.
func (h *Host) Close(ctx context.Context) error {
	h.closed.Store(true)
	h.engines.closeAll(ctx)
	return h.runtime.close(ctx)
}
