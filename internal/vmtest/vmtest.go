// Package vmtest is test support: VMs with the real WebAssembly engine,
// the real userland from the shared test cache, secexec's own commands
// and the python3 support layer — what internal/guest assembles, without
// V8 — for tests that run real guest programs through vmhost.
package vmtest

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/pysupport"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
	userwasm "github.com/secexec/secexec/userland/wasm"
)

// The caches every test binary of the repository shares: packages are
// fetched and modules compiled once per machine.
var (
	SoftwareDir = filepath.Join(os.TempDir(), "secexec-test-software")
	WASMDir     = filepath.Join(os.TempDir(), "secexec-test-wasm-cache")
	// CacheDir is the cache root whose userland/ holds the builds of
	// secexec's own commands (userland/wasm.Ensure).
	CacheDir = filepath.Join(os.TempDir(), "secexec-test-cache")
	// PythonDir holds python3's bytecode sets (pysupport.EnsureBytecode).
	PythonDir = filepath.Join(CacheDir, "python")
)

// Runtime is a vmhost.Runtime over one WebAssembly engine and store.
type Runtime struct {
	Engine *wasm.Engine
	Store  *software.Store
	layers []vfs.FileSystem
	// bytecode says whether the support layer has the standard library's
	// bytecode.
	bytecode bool
}

// Configure adds the software and python support layers.
func (r *Runtime) Configure(_ context.Context, cfg *vm.Config) error {
	cfg.Lowers = append(append([]vfs.FileSystem(nil), r.layers...), cfg.Lowers...)
	return nil
}

// Attach registers the WebAssembly loader.
func (r *Runtime) Attach(_ context.Context, m *vm.VM) error {
	m.Kernel.RegisterLoader(r.Engine.Loader())
	return nil
}

var (
	once   sync.Once
	shared *Runtime
	err    error
)

// Shared returns the runtime of this test binary, making it on first use
// (every pinned package installed, python3 included). Use Main as the
// package's TestMain to release it.
func Shared(t testing.TB) *Runtime {
	t.Helper()
	once.Do(func() {
		ctx := context.Background()
		store, e := software.Open(ctx, software.Options{Dir: SoftwareDir})
		if e != nil {
			err = e
			return
		}
		if e := store.Ensure(ctx); e != nil {
			err = e
			return
		}
		dir, e := userwasm.Ensure(ctx, CacheDir, nil)
		if e != nil {
			err = e
			return
		}
		if e := userwasm.Install(store, dir); e != nil {
			err = e
			return
		}
		eng, e := wasm.NewEngine(ctx, wasm.Config{CacheDir: WASMDir})
		if e != nil {
			err = e
			return
		}
		bc, _, e := pysupport.EnsureBytecode(ctx, pysupport.BytecodeOptions{Dir: PythonDir, Engine: eng, Store: store})
		if e != nil {
			_ = eng.Close(ctx)
			err = e
			return
		}
		py := pysupport.LayerWith(bc)
		if e := pysupport.Park(ctx, eng, store, py, bc != nil); e != nil {
			_ = eng.Close(ctx)
			err = e
			return
		}
		shared = &Runtime{Engine: eng, Store: store, layers: []vfs.FileSystem{eng.SoftwareLayer(store), py}, bytecode: bc != nil}
	})
	if err != nil {
		t.Fatalf("test runtime: %v", err)
	}
	return shared
}

// Fresh returns a runtime on an engine of its own, with the shared
// store and support layer and python3 parked, for tests of an engine's
// life; the caller closes the engine after its VMs.
func Fresh(t testing.TB) *Runtime {
	t.Helper()
	sh := Shared(t)
	ctx := context.Background()
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: WASMDir})
	if err != nil {
		t.Fatal(err)
	}
	py := sh.layers[1]
	if err := pysupport.Park(ctx, eng, sh.Store, py, sh.bytecode); err != nil {
		_ = eng.Close(ctx)
		t.Fatal(err)
	}
	return &Runtime{Engine: eng, Store: sh.Store, layers: []vfs.FileSystem{eng.SoftwareLayer(sh.Store), py}, bytecode: sh.bytecode}
}

// Module returns secexec's own module name ("jq", "bash", ...), built from
// this source into the shared test cache on first use.
func Module(t testing.TB, name string) []byte {
	t.Helper()
	dir, err := userwasm.Ensure(context.Background(), CacheDir, nil)
	if err != nil {
		t.Fatalf("building the userland: %v", err)
	}
	b, err := userwasm.Module(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Main is a TestMain: it runs the tests, releases the shared runtime if
// one was made, and exits with the tests' status.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = shared.Engine.Close(context.Background())
		_ = shared.Store.Close()
	}
	os.Exit(code)
}

// NewHost builds a VM on the shared runtime, closed when the test ends.
// A nil cfg.Policy allows everything.
func NewHost(t testing.TB, cfg vmhost.Config) *vmhost.Host {
	t.Helper()
	return NewHostOn(t, Shared(t), cfg)
}

// NewHostOn builds a VM on rt, closed when the test ends (or before, by
// the test). A nil cfg.Policy allows everything.
func NewHostOn(t testing.TB, rt *Runtime, cfg vmhost.Config) *vmhost.Host {
	t.Helper()
	cfg.Runtime = rt
	if cfg.Policy == nil {
		cfg.Policy = policy.AllowAll()
	}
	h, err := vmhost.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Close(ctx)
	})
	return h
}

// Env is the environment Run gives programs.
var Env = []string{"HOME=" + vm.UserHome, "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "USER=" + vm.UserName}

// Result is the outcome of Run.
type Result struct {
	Stdout, Stderr string
	Exit           *vmhost.Exit
}

// Run runs argv in h with stdin (none if empty) and the environment Env
// plus extra, and fails the test if it cannot be run.
func Run(t testing.TB, h *vmhost.Host, stdin string, extra []string, argv ...string) Result {
	t.Helper()
	var out, errb bytes.Buffer
	var in io.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	spec := vmhost.RunSpec{Argv: argv, Env: append(append([]string(nil), Env...), extra...),
		Stdin: in, Stdout: &out, Stderr: &errb, Timeout: 60 * time.Second}
	ex, err := h.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("run %q: %v", argv, err)
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Exit: ex}
}
