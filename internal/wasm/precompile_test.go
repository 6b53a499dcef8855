package wasm_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/software"
)

// Precompile leaves the module compiled in the engine's cache (the next
// lookup is a hit), refuses on a closed engine, and reports a module that
// does not compile.
func TestPrecompile(t *testing.T) {
	ctx := context.Background()
	store, err := software.Open(ctx, software.Options{Dir: t.TempDir(), Pins: []software.Pin{}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mod := vmtest.Module(t, "jq")
	c, err := store.Register("jq", mod)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "wasm")
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Precompile(ctx, c); err != nil {
		t.Fatal(err)
	}
	if s := eng.Stats(); s.ModuleMisses != 1 || s.ModulesCached != 1 {
		t.Fatalf("after Precompile: %+v", s)
	}
	if err := eng.Precompile(ctx, c); err != nil || eng.Stats().ModuleHits != 1 {
		t.Fatalf("second Precompile: %v, %+v", err, eng.Stats())
	}
	if err := eng.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := eng.Precompile(ctx, c); !errors.Is(err, wasm.ErrClosed) {
		t.Fatalf("Precompile on a closed engine: %v", err)
	}

	bad, err := store.Register("bad", []byte("\x00asm\x01\x00\x00\x00\xff\xff"))
	if err != nil {
		t.Fatal(err)
	}
	eng2, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close(ctx)
	if err := eng2.Precompile(ctx, bad); err == nil {
		t.Fatal("a broken module precompiled")
	}
}
