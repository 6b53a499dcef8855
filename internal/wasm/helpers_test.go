package wasm_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

// The tests run the real agentOS userland. Packages are fetched once into
// a cache shared by every test binary of the repository, and compiled
// code is kept in a compilation cache beside it, so only the first run on
// a machine pays for npm and for compiling coreutils.
var (
	softwareDir = filepath.Join(os.TempDir(), "secexec-test-software")
	wasmDir     = filepath.Join(os.TempDir(), "secexec-test-wasm-cache")
)

type testEnv struct {
	eng   *wasm.Engine
	store *software.Store
	layer vfs.FileSystem
}

var (
	envOnce sync.Once
	env     testEnv
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env.eng != nil {
		_ = env.eng.Close(context.Background())
		_ = env.store.Close()
	}
	os.Exit(code)
}

// setup returns the engine and software layer shared by all tests.
func setup(t testing.TB) testEnv {
	t.Helper()
	envOnce.Do(func() {
		ctx := context.Background()
		store, err := software.Open(ctx, software.Options{Dir: softwareDir})
		if err != nil {
			envErr = err
			return
		}
		if err := store.Ensure(ctx); err != nil {
			envErr = err
			return
		}
		eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: wasmDir})
		if err != nil {
			envErr = err
			return
		}
		env = testEnv{eng: eng, store: store, layer: eng.SoftwareLayer(store)}
	})
	if envErr != nil {
		t.Fatalf("test environment: %v", envErr)
	}
	return env
}

// testVM is one VM with the WebAssembly runtime and the userland.
type testVM struct {
	t  testing.TB
	vm *vm.VM

	netguestOnce sync.Once // netguest's module is written once
}

func newVM(t testing.TB, cfg vm.Config) *testVM {
	t.Helper()
	e := setup(t)
	return newVMWith(t, e.eng, e.layer, cfg)
}

// newVMWith builds a VM on a given engine and software layer.
func newVMWith(t testing.TB, eng *wasm.Engine, layer vfs.FileSystem, cfg vm.Config) *testVM {
	t.Helper()
	if cfg.Policy == nil {
		cfg.Policy = policy.AllowAll()
	}
	cfg.Lowers = append([]vfs.FileSystem{layer}, cfg.Lowers...)
	m, err := vm.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Kernel.RegisterLoader(eng.Loader())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close VM: %v", err)
		}
	})
	return &testVM{t: t, vm: m}
}

// defaultEnv is the environment of a top-level command, like upstream's
// (agentOS ABI §5.1) with this VM's user.
var defaultEnv = []string{
	"CHARSET=UTF-8",
	"HOME=" + vm.UserHome,
	"HOSTNAME=secexec",
	"LANG=C.UTF-8",
	"LC_COLLATE=C",
	"LOGNAME=" + vm.UserName,
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"PWD=" + vm.Workspace,
	"SHELL=/bin/sh",
	"TMPDIR=/tmp",
	"USER=" + vm.UserName,
}

type result struct {
	stdout, stderr []byte
	status         kernel.WaitStatus
	code           int
	// timedOut is set when the deadline killed the process group.
	timedOut bool
	// pid is the process's id, and its process group's.
	pid int
}

type runOpts struct {
	stdin []byte
	cwd   string
	env   []string
	// files are inherited as descriptors 3, 4, ...
	files []vfs.File
}

// sh runs "sh -c cmd" as the conformance checklist does.
func (v *testVM) sh(ctx context.Context, cmd string) result {
	v.t.Helper()
	return v.exec(ctx, []string{"sh", "-c", cmd}, runOpts{})
}

// exec spawns argv with pipes on stdio, collects the output, and waits. At
// ctx's deadline the whole process group is killed, as the Exec layer
// does with its CPU and wall limits.
func (v *testVM) exec(ctx context.Context, argv []string, o runOpts) result {
	v.t.Helper()
	k := v.vm.Kernel
	pipes := func() (vfs.File, vfs.File) {
		r, w, err := k.NewPipe()
		if err != nil {
			v.t.Fatal(err)
		}
		return r, w
	}
	inR, inW := pipes()
	outR, outW := pipes()
	errR, errW := pipes()
	if o.cwd == "" {
		o.cwd = vm.Workspace
	}
	if o.env == nil {
		o.env = defaultEnv
	}
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{
		Argv: argv, Env: o.env, Cwd: o.cwd, NewGroup: true,
		Files: append([]vfs.File{inR, outW, errW}, o.files...),
		Creds: &kernel.Creds{UID: vm.UserUID, GID: vm.UserGID},
	})
	inR.DecRef()
	outW.DecRef()
	errW.DecRef()
	if err != nil {
		inW.DecRef()
		outR.DecRef()
		errR.DecRef()
		v.t.Fatalf("spawn %q: %v", argv, err)
	}
	go func() {
		defer inW.DecRef()
		b := o.stdin
		for len(b) > 0 {
			n, err := inW.Write(context.Background(), b)
			if err != nil {
				return
			}
			b = b[n:]
		}
	}()
	var wg sync.WaitGroup
	res := result{pid: p.PID()}
	collect := func(r vfs.File, into *[]byte) {
		defer wg.Done()
		defer r.DecRef()
		var buf bytes.Buffer
		b := make([]byte, 64<<10)
		for {
			n, err := r.Read(context.Background(), b)
			buf.Write(b[:n])
			if n == 0 || err != nil {
				break
			}
		}
		*into = buf.Bytes()
	}
	wg.Add(2)
	go collect(outR, &res.stdout)
	go collect(errR, &res.stderr)
	done := make(chan struct{})
	go func() {
		defer close(done)
		res.status, _ = p.HostWait(context.Background())
	}()
	select {
	case <-done:
	case <-ctx.Done():
		res.timedOut = true
		_ = k.Init().Kill(-p.PID(), kernel.SIGKILL)
		<-done
	}
	// Background jobs may still hold the output pipes; they die with the
	// group when the caller's context ends.
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		res.timedOut = true
		_ = k.Init().Kill(-p.PID(), kernel.SIGKILL)
		<-waited
	}
	res.code = res.status.ShellCode()
	return res
}
