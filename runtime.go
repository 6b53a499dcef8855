package secexec

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/secexec/secexec/internal/guest"
	"github.com/secexec/secexec/internal/setup"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
)

// lazyRuntime is the guest runtime (package store, WebAssembly and V8
// engines with their caches) shared by the VMs of a Host in this process,
// or by every VM of an engine process. It is created on first use; a
// failed creation (say, the userland could not be fetched) is reported to
// that VM and retried by the next.
type lazyRuntime struct {
	mu sync.Mutex
	rt *guest.Runtime
}

// get returns the runtime, creating it with cfg if there is none yet.
func (l *lazyRuntime) get(ctx context.Context, cfg guest.Config) (*guest.Runtime, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rt != nil {
		return l.rt, nil
	}
	rt, err := guest.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l.rt = rt
	return rt, nil
}

// close stops the runtime, if there is one: it waits (until ctx ends) for
// the engines' running programs and their teardown, whose phase reports
// are logged then.
func (l *lazyRuntime) close(ctx context.Context) error {
	l.mu.Lock()
	rt := l.rt
	l.rt = nil
	l.mu.Unlock()
	if rt == nil {
		return nil
	}
	return rt.Close(ctx)
}

// vmRuntime is the shared runtime as a VM with some options uses it:
// the first VM to need it creates it with its options.
type vmRuntime struct {
	l   *lazyRuntime
	cfg guest.Config
}

// LiveIsolates reports the V8 isolates alive and parked in this
// process's runtime (server.LiveIsolates), zero before it started.
func (r vmRuntime) LiveIsolates() (live, parked int) {
	r.l.mu.Lock()
	rt := r.l.rt
	r.l.mu.Unlock()
	if rt == nil || rt.JS() == nil {
		return 0, 0
	}
	st := rt.JS().Stats()
	return int(st.LiveIsolates), st.PoolParked
}

// Configure adds the runtime's layers to a VM being built.
func (r vmRuntime) Configure(ctx context.Context, cfg *vm.Config) error {
	rt, err := r.l.get(ctx, r.cfg)
	if err != nil {
		return err
	}
	return rt.Configure(ctx, cfg)
}

// Attach registers the runtime's program loaders with a built VM.
func (r vmRuntime) Attach(ctx context.Context, m *vm.VM) error {
	rt, err := r.l.get(ctx, r.cfg)
	if err != nil {
		return err
	}
	return rt.Attach(ctx, m)
}

// engineRuntime is the runtime of an engine process: offline, since an
// engine may not run npm (its client set the caches up and passed their
// directories in the environment), and logging to the engine's logger.
func (h *Host) engineRuntime(log *slog.Logger) vmRuntime {
	return vmRuntime{l: &h.runtime, cfg: guest.Config{Offline: true, Logger: log}}
}

// inProcessRuntime returns the program loaders of an in-process VM with
// opts: the Host's runtime, which the first VM to need it creates with
// its WarmIsolates and Logger.
func (h *Host) inProcessRuntime(opts Options) vmhost.Runtime {
	if h.inProcess != nil {
		return h.inProcess
	}
	return vmRuntime{l: &h.runtime, cfg: guest.Config{Progress: progressWriter(), WarmIsolates: opts.WarmIsolates, Logger: opts.Logger}}
}

// progressWriter is where a first run's set-up reports: this process's
// stderr when its stdout is a terminal (a person is watching), else
// nowhere.
func progressWriter() io.Writer {
	if st, err := os.Stdout.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		return os.Stderr
	}
	return nil
}

// SetUpError is a failed first-run set-up: fetching and verifying the
// userland packages and the node polyfills with npm, which happens in
// this process before the first engine starts. Its message is one line
// that says what is missing and how to fix it; it wraps the cause, and
// nothing half-written is left in the caches.
type SetUpError = setup.Error

// ErrNPMNotFound is matched (errors.Is) by a SetUpError when npm, needed
// once to fetch the pinned packages, is not on PATH.
var ErrNPMNotFound = setup.ErrNPMNotFound

// ensureSetUp sets up the caches an engine process will use, here in the
// client: an engine cannot run npm, and its progress would have no
// terminal to show on. It returns the directories to give the engine.
func (h *Host) ensureSetUp(ctx context.Context, log *slog.Logger) (setup.Dirs, error) {
	dirs, err := setup.DefaultDirs()
	if err != nil {
		return dirs, err
	}
	if _, ok := h.setUp.Load(dirs); ok {
		return dirs, nil
	}
	if err := setup.Ensure(ctx, setup.Options{Dirs: dirs, Progress: progressWriter(), Logger: log}); err != nil {
		return dirs, err
	}
	h.setUp.Store(dirs, struct{}{})
	return dirs, nil
}
