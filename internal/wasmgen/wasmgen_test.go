package wasmgen

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// A module with an import, functions, data and signed constants
// compiles, links and computes what its instructions say.
func TestModule(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	var got []uint64
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, st []uint64) {
			got = append(got, st[0], st[1])
			b, _ := m.Memory().Read(uint32(st[0]), 3)
			st[0] = uint64(len(string(b)))
		}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI64}, []api.ValueType{api.ValueTypeI32}).
		Export("f").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	sig := Type{Params: []byte{I32, I64}, Results: []byte{I32}}
	bin := Module([]Import{{"env", "f", sig}}, []Func{
		{Type: Type{Results: []byte{I32}}, Body: append(append(I32Const(1024), I64Const(-300)...), Call(0)...), Export: "run"},
		{Type: sig, Body: append(append(LocalGet(0), LocalGet(1)...), Call(0)...), Export: "wrap"},
	}, 2, []Data{{Offset: 1024, Bytes: []byte("abc")}})
	mod, err := rt.Instantiate(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mod.ExportedFunction("run").Call(ctx)
	if err != nil || res[0] != 3 {
		t.Fatalf("run: %v %v", res, err)
	}
	if _, err := mod.ExportedFunction("wrap").Call(ctx, 7, 1<<40); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != 1024 || int64(got[1]) != -300 || got[2] != 7 || got[3] != 1<<40 {
		t.Fatalf("host saw %v", got)
	}
	if b, _ := mod.Memory().Read(1024, 3); string(b) != "abc" || mod.Memory().Size() != 2<<16 {
		t.Fatalf("memory %q, %d bytes", b, mod.Memory().Size())
	}
}
