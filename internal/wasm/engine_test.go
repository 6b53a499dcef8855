package wasm_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// newEngine returns a private engine (own in-memory cache, shared disk
// cache) for tests of the caches themselves.
func newEngine(t *testing.T, cfg wasm.Config) *wasm.Engine {
	t.Helper()
	cfg.CacheDir = wasmDir
	eng, err := wasm.NewEngine(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := eng.Close(ctx); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	return eng
}

// Concurrent first execs of one module compile it once.
func TestCompileOnce(t *testing.T) {
	e := setup(t)
	eng := newEngine(t, wasm.Config{})
	layer := eng.SoftwareLayer(e.store)
	if eng.SoftwareLayer(e.store) != layer {
		t.Error("SoftwareLayer made a second layer for the same store")
	}
	v := newVMWith(t, eng, layer, vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	var wg sync.WaitGroup
	const n = 8
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := v.exec(ctx, []string{"basename", "/a/b"}, runOpts{}); string(r.stdout) != "b\n" {
				t.Errorf("basename: %q %q", r.stdout, r.stderr)
			}
		}()
	}
	wg.Wait()
	if s := eng.Stats(); s.ModuleMisses != 1 || s.ModuleHits != n-1 || s.ModulesCached != 1 {
		t.Errorf("stats %+v, want 1 miss and %d hits", s, n-1)
	}
}

// The in-memory cache is bounded: old modules are evicted (and closed once
// no program holds them) and compile again when needed.
func TestModuleCacheEviction(t *testing.T) {
	e := setup(t)
	eng := newEngine(t, wasm.Config{ModuleCacheSize: 2})
	v := newVMWith(t, eng, eng.SoftwareLayer(e.store), vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	for _, cmd := range []string{"basename /x/y", "dirname /x/y", "echo z", "basename /x/y"} {
		if r := v.sh(ctx, cmd); r.code != 0 {
			t.Fatalf("%s: %q", cmd, r.stderr)
		}
	}
	s := eng.Stats()
	if s.ModulesCached != 2 || s.ModuleEvictions == 0 {
		t.Errorf("stats %+v: want 2 cached and evictions", s)
	}
}

// Close waits for running programs; after it nothing starts.
func TestEngineClose(t *testing.T) {
	e := setup(t)
	eng, err := wasm.NewEngine(context.Background(), wasm.Config{CacheDir: wasmDir})
	if err != nil {
		t.Fatal(err)
	}
	v := newVMWith(t, eng, eng.SoftwareLayer(e.store), vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	k := v.vm.Kernel
	inR, inW, _ := k.NewPipe()
	outR, outW, _ := k.NewPipe()
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"cat"}, Files: []vfs.File{inR, outW, nil}})
	inR.DecRef()
	outW.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	// cat echoing a line proves it is running.
	_, _ = inW.Write(ctx, []byte("x\n"))
	if n, err := outR.Read(ctx, make([]byte, 2)); n != 2 || err != nil {
		t.Fatalf("cat: %d, %v", n, err)
	}
	short, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := eng.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close while cat runs: %v", err)
	}
	inW.DecRef() // EOF: cat exits
	if _, err := p.HostWait(ctx); err != nil {
		t.Fatal(err)
	}
	outR.DecRef()
	if err := eng.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	_, err = k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"true"}})
	if !errors.Is(err, wasm.ErrClosed) {
		t.Errorf("spawn after Close: %v", err)
	}
}
