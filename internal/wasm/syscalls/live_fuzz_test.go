package syscalls

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/secexec/secexec/internal/wasmgen"
)

// liveGuest is a guest module that imports every host function of every
// module and exports a wrapper for each ("f0", "f1", ...), so that a host
// function runs with a real wazero caller: the guest's own linear memory
// (4 pages), bounds and all.
type liveGuest struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	fns      []hostFunc
}

func newLiveGuest(tb testing.TB) *liveGuest {
	tb.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	tb.Cleanup(func() { _ = rt.Close(ctx) })
	if err := Instantiate(ctx, rt); err != nil {
		tb.Fatal(err)
	}
	mods := map[string][]hostFunc{
		"wasi_snapshot_preview1": wasiFuncs(), "host_process": processFuncs(), "host_fs": fsFuncs(),
		"host_user": userFuncs(), "host_tty": ttyFuncs(), "host_net": netFuncs(),
	}
	g := &liveGuest{rt: rt}
	var imports []wasmgen.Import
	var funcs []wasmgen.Func
	for _, m := range Modules {
		for _, f := range mods[m] {
			t := wasmgen.Type{Params: valTypes(f.params), Results: valTypes(f.results)}
			var body []byte
			for i := range f.params {
				body = append(body, wasmgen.LocalGet(uint32(i))...)
			}
			body = append(body, wasmgen.Call(uint32(len(imports)))...)
			funcs = append(funcs, wasmgen.Func{Type: t, Body: body, Export: fmt.Sprintf("f%d", len(imports))})
			imports = append(imports, wasmgen.Import{Module: m, Name: f.name, Type: t})
			g.fns = append(g.fns, f)
		}
	}
	var err error
	if g.compiled, err = rt.CompileModule(ctx, wasmgen.Module(imports, funcs, 4, nil)); err != nil {
		tb.Fatal(err)
	}
	return g
}

func valTypes(ts []api.ValueType) []byte {
	out := make([]byte, len(ts))
	for i, t := range ts {
		out[i] = wasmgen.I32
		if t == api.ValueTypeI64 {
			out[i] = wasmgen.I64
		}
	}
	return out
}

// call instantiates the guest afresh, fills its memory from data, and
// calls one host function (data[0]) with arguments from data: the
// fuzzer's view of a hostile guest. A panic that is not an exit or an
// exec, or a call that outlives its context, is an error.
func (g *liveGuest) call(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	idx := int(data[0]) % len(g.fns)
	f := g.fns[idx]
	data = data[1:]
	args := make([]uint64, len(f.params))
	for i := range args {
		if len(data) < 4 {
			break
		}
		v := binary.LittleEndian.Uint32(data)
		data = data[4:]
		// Small values hit real descriptors and in-range pointers
		// often; the rest are arbitrary.
		if v&0x80 == 0 {
			v &= 0x3FFFF
		}
		args[i] = uint64(v)
		if f.params[i] == api.ValueTypeI64 && v&0x100 != 0 {
			args[i] = uint64(int64(int32(v))) // negative 64-bit values too
		}
	}
	mod, err := g.rt.InstantiateModule(ctx, g.compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return err
	}
	defer mod.Close(context.Background())
	mod.Memory().Write(0, data)
	_, err = mod.ExportedFunction(fmt.Sprintf("f%d", idx)).Call(ctx, args...)
	var exit *sys.ExitError
	var exec *ExecRequest
	// An exit (proc_exit, a signal, the deadline closing the instance)
	// and an exec are how calls may end besides returning.
	if err == nil || errors.As(err, &exit) || errors.As(err, &exec) {
		return nil
	}
	return fmt.Errorf("%s%v: %w", f.name, args, err)
}

// FuzzLiveHostCall calls every host function from a live wazero instance
// with arbitrary arguments and arbitrary guest memory: none may panic,
// and none may run past its context.
func FuzzLiveHostCall(f *testing.F) {
	g := newLiveGuest(f)
	for i := range g.fns {
		seed := []byte{byte(i)}
		for j := 0; j < 10; j++ {
			seed = binary.LittleEndian.AppendUint32(seed, uint32(j*64))
		}
		f.Add(append(seed, "/etc/passwd\x00user\x00"...))
		f.Add(append([]byte{byte(i)}, 0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f))
	}
	k := newKernel(f, testPasswd, testGroup)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		s := NewState(context.Background(), k.Init(), []string{"fuzz", "a"}, []string{"PATH=/bin"})
		defer s.Close()
		ctx, cancel := context.WithTimeout(WithState(context.Background(), s), 50*time.Millisecond)
		defer cancel()
		// A call that outlives its context by seconds is hung: crash the
		// fuzzing process, which records the input.
		hung := time.AfterFunc(5*time.Second, func() {
			panic(fmt.Sprintf("host call hung past its context: %s", g.fns[int(data[0])%len(g.fns)].name))
		})
		defer hung.Stop()
		if err := g.call(ctx, data); err != nil {
			t.Fatal(err)
		}
		for _, fd := range k.Init().FDs().FDs() {
			if s.preopens[0].fd != fd {
				_ = k.Init().Close(fd)
			}
		}
	})
}
