package secexec

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/secexec/secexec/internal/guest"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/software"
)

// The guest runtime (package store, WebAssembly and V8 engines with their
// caches) is shared by every VM of a process, in the embedding program
// for in-process VMs and in the engine process for the others. It is
// created on first use; a failed creation (say, the userland could not be
// fetched) is reported to that VM and retried by the next.
var defaultRuntime lazyRuntime

type lazyRuntime struct {
	mu sync.Mutex
	rt *guest.Runtime
}

// get returns the runtime, creating it with warm (Options.WarmIsolates)
// if there is none yet.
func (l *lazyRuntime) get(ctx context.Context, warm int) (*guest.Runtime, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rt != nil {
		return l.rt, nil
	}
	rt, err := guest.New(ctx, guest.Config{Progress: progressWriter(nil), WarmIsolates: warm})
	if err != nil {
		return nil, err
	}
	l.rt = rt
	return rt, nil
}

// vmRuntime is the shared runtime as a VM with some options uses it:
// the first VM to need it creates it with its options.
type vmRuntime struct {
	l    *lazyRuntime
	warm int
}

// Configure adds the runtime's layers to a VM being built.
func (r vmRuntime) Configure(ctx context.Context, cfg *vm.Config) error {
	rt, err := r.l.get(ctx, r.warm)
	if err != nil {
		return err
	}
	return rt.Configure(ctx, cfg)
}

// Attach registers the runtime's program loaders with a built VM.
func (r vmRuntime) Attach(ctx context.Context, m *vm.VM) error {
	rt, err := r.l.get(ctx, r.warm)
	if err != nil {
		return err
	}
	return rt.Attach(ctx, m)
}

// progressWriter is where a first run's userland installation reports:
// w if set, else this process's stderr when it is a terminal, else
// nowhere.
func progressWriter(w io.Writer) io.Writer {
	if w != nil {
		return w
	}
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		return os.Stderr
	}
	return nil
}

// ensureSoftware installs missing userland packages in this process, so
// that the progress of a first run shows here rather than in an engine
// process that has no terminal.
func ensureSoftware(ctx context.Context, progress io.Writer) error {
	opts := software.Options{}
	if w := progressWriter(progress); w != nil {
		opts.Progress = software.ProgressWriter(w)
	}
	st, err := software.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Ensure(ctx)
}
