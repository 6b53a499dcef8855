package wasmbin

import (
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// globalsModule assembles a module with three globals (mutable i32 5,
// immutable i64 7, mutable i64 -1) and a function "bump" that adds one
// to the first.
func globalsModule() []byte {
	sec := func(id byte, body []byte) []byte { return AppendSection(nil, id, body) }
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sec(1, []byte{1, 0x60, 0, 0})...) // type 0: () -> ()
	m = append(m, sec(3, []byte{1, 0})...)          // func 0: type 0
	m = append(m, sec(6, []byte{3,
		0x7f, 1, 0x41, 5, 0x0b,
		0x7e, 0, 0x42, 7, 0x0b,
		0x7e, 1, 0x42, 0x7f, 0x0b})...)
	m = append(m, sec(7, append([]byte{1, 4}, append([]byte("bump"), 0, 0)...))...)
	// global.get 0, i32.const 1, i32.add, global.set 0
	body := []byte{0, 0x23, 0, 0x41, 1, 0x6a, 0x24, 0, 0x0b}
	m = append(m, sec(10, append([]byte{1, byte(len(body))}, body...))...)
	return m
}

func TestExportGlobals(t *testing.T) {
	out, err := ExportGlobals(globalsModule())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	mod, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	count := mod.ExportedGlobal(GlobalCountExport)
	if count == nil || count.Get() != 2 {
		t.Fatalf("%s = %v, want 2", GlobalCountExport, count)
	}
	g0, ok0 := mod.ExportedGlobal(GlobalExportPrefix + "0").(api.MutableGlobal)
	g1, ok1 := mod.ExportedGlobal(GlobalExportPrefix + "1").(api.MutableGlobal)
	if !ok0 || !ok1 || g0.Get() != 5 || g1.Get() != ^uint64(0) {
		t.Fatalf("exported globals %v %v", g0, g1)
	}
	if mod.ExportedGlobal(GlobalExportPrefix+"2") != nil {
		t.Fatal("the immutable global was exported as mutable state")
	}
	bump := mod.ExportedFunction("bump")
	if _, err := bump.Call(ctx); err != nil || g0.Get() != 6 {
		t.Fatalf("after bump: %d (%v)", g0.Get(), err)
	}
	// The export is the global itself: a value set from outside is what
	// the module sees.
	g0.Set(41)
	if _, err := bump.Call(ctx); err != nil || g0.Get() != 42 {
		t.Fatalf("after set and bump: %d (%v)", g0.Get(), err)
	}
	if _, err := ExportGlobals(out); !errors.Is(err, ErrUnsupportedGlobals) {
		t.Fatalf("exporting twice = %v, want ErrUnsupportedGlobals", err)
	}
}

// A module without global or export sections gets both, in order.
func TestExportGlobalsAddsSections(t *testing.T) {
	out, err := ExportGlobals([]byte("\x00asm\x01\x00\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	mod, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if g := mod.ExportedGlobal(GlobalCountExport); g == nil || g.Get() != 0 {
		t.Fatalf("count global %v", g)
	}
}

func FuzzExportGlobals(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add(globalsModule())
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x02\x09\x01\x01e\x01g\x03\x7f\x00"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x06\x06\x01\x7f\x01\x41\x00\x0b"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := ExportGlobals(b)
		if err != nil {
			return
		}
		ctx := context.Background()
		r := wazero.NewRuntime(ctx)
		defer r.Close(ctx)
		if _, err := r.CompileModule(ctx, b); err != nil {
			return
		}
		// A valid module stays valid.
		if _, err := r.CompileModule(ctx, out); err != nil {
			t.Fatalf("input compiles, output does not: %v", err)
		}
	})
}
