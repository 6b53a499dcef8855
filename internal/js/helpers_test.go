package js

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// The engine is shared by the tests of this package: building it installs
// and bundles the polyfills once (cached on disk across runs).
var (
	engineOnce sync.Once
	testEngine *Engine
	engineErr  error
)

func engine(t testing.TB) *Engine {
	t.Helper()
	engineOnce.Do(func() {
		testEngine, engineErr = NewEngine(context.Background(), Config{})
	})
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return testEngine
}

type testVM struct {
	t  testing.TB
	vm *vm.VM
	e  *Engine
}

// bridgeVM builds a VM on an engine of its own (no warm isolates) whose
// isolates expose the bridge as globalThis.__test_bridge, for tests that
// call bridge functions directly with hostile arguments.
func bridgeVM(t testing.TB) *testVM {
	t.Helper()
	e, err := NewEngine(context.Background(), Config{WarmIsolates: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.exposeBridge = true
	t.Cleanup(func() { e.Close() })
	return newVM(t, e)
}

// newVM builds a VM with every permission, the node layer and loader.
func newVM(t testing.TB, e *Engine, mounts ...vm.Mount) *testVM {
	t.Helper()
	if e == nil {
		e = engine(t)
	}
	return newConfiguredVM(t, e, vm.Config{Mounts: mounts})
}

// newConfiguredVM builds a VM from cfg (with every permission unless
// cfg.Policy says otherwise), the node layer and loader.
func newConfiguredVM(t testing.TB, e *Engine, cfg vm.Config) *testVM {
	t.Helper()
	if cfg.Policy == nil {
		cfg.Policy = policy.AllowAll()
	}
	cfg.Lowers = append([]vfs.FileSystem{e.Layer()}, cfg.Lowers...)
	m, err := vm.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Kernel.RegisterLoader(e.Loader())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("vm close: %v", err)
		}
	})
	return &testVM{t: t, vm: m, e: e}
}

type result struct {
	status kernel.WaitStatus
	code   int
	stdout string
	stderr string
}

func collect(k *kernel.Kernel, t testing.TB) (vfs.File, func() string) {
	r, w, err := k.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer r.DecRef()
		b := make([]byte, 64<<10)
		for {
			n, err := r.Read(context.Background(), b)
			buf.Write(b[:n])
			if n == 0 || err != nil {
				return
			}
		}
	}()
	return w, func() string { <-done; return buf.String() }
}

// run runs argv in the VM with stdin as input and returns its status and
// output.
func (v *testVM) run(stdin string, argv ...string) result {
	v.t.Helper()
	return v.runEnv(stdin, []string{"PATH=/usr/bin:/bin", "HOME=/home/user"}, argv...)
}

func (v *testVM) runEnv(stdin string, env []string, argv ...string) result {
	v.t.Helper()
	k := v.vm.Kernel
	outW, out := collect(k, v.t)
	errW, errOut := collect(k, v.t)
	inR, inW, err := k.NewPipe()
	if err != nil {
		v.t.Fatal(err)
	}
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{
		Argv: argv, Env: env, Cwd: "/workspace",
		Files: []vfs.File{inR, outW, errW},
	})
	inR.DecRef()
	outW.DecRef()
	errW.DecRef()
	if err != nil {
		inW.DecRef()
		v.t.Fatalf("spawn %q: %v", argv, err)
	}
	go func() {
		if stdin != "" {
			_, _ = inW.Write(context.Background(), []byte(stdin))
		}
		inW.DecRef()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := p.HostWait(ctx)
	if err != nil {
		v.t.Fatalf("wait %q: %v", argv, err)
	}
	return result{status: st, code: st.ShellCode(), stdout: out(), stderr: errOut()}
}

func (v *testVM) node(code string, args ...string) result {
	v.t.Helper()
	return v.run("", append([]string{"node", "-e", code}, args...)...)
}

func (v *testVM) writeFile(path, data string) {
	v.t.Helper()
	ctx := context.Background()
	f, err := v.vm.VFS.Open(ctx, vfs.Root, path, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o666)
	if err != nil {
		v.t.Fatal(err)
	}
	defer f.DecRef()
	if _, err := f.Write(ctx, []byte(data)); err != nil {
		v.t.Fatal(err)
	}
}

func mkdir(t testing.TB, v *testVM, dir string) {
	t.Helper()
	if err := v.vm.VFS.Mkdir(context.Background(), vfs.Root, dir, 0o777); err != nil {
		t.Fatal(err)
	}
}
