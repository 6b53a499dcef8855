package syscalls

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// hostFunc is one host function of a module.
type hostFunc struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      api.GoModuleFunc
}

// sysFunc adapts a function returning a WASI errno to wazero's calling
// convention. A call from an instance the runner did not start (no State
// in its context) fails with ENOSYS instead of touching anything.
func sysFunc(f func(ctx context.Context, s *State, m mem, stack []uint64) Errno) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		s := StateOf(ctx)
		if s == nil {
			stack[0] = uint64(ENOSYS)
			return
		}
		stack[0] = uint64(f(ctx, s, mem{mod.Memory()}, stack))
		s.unwindIfKilled()
	}
}

// unwindIfKilled ends the guest's execution when its process was killed
// (by another process, or by a signal it sent itself): as on Linux, a
// fatal signal takes effect when the system call returns, so the guest
// runs none of its own code after it. The runner sees the cancelled
// process and reports the signal as its status.
func (s *State) unwindIfKilled() {
	if s.P.Context().Err() != nil {
		panic(sys.NewExitError(128 + 9))
	}
}

// valueFunc adapts a function that returns a plain value (host_fs.fd_mode
// and friends). Without a State it returns fallback.
func valueFunc(fallback uint64, f func(ctx context.Context, s *State, m mem, stack []uint64) uint64) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		s := StateOf(ctx)
		if s == nil {
			stack[0] = fallback
			return
		}
		stack[0] = f(ctx, s, mem{mod.Memory()}, stack)
		s.unwindIfKilled()
	}
}

func sig(n int) []api.ValueType {
	out := make([]api.ValueType, n)
	for i := range out {
		out[i] = i32
	}
	return out
}

var errnoResult = []api.ValueType{i32}

// Modules lists the names of the host modules Instantiate provides.
var Modules = []string{"wasi_snapshot_preview1", "host_process", "host_fs", "host_user", "host_tty", "host_net"}

// Instantiate defines every host module in rt. It is called once per
// runtime; the modules are shared by all guests of all VMs, which find
// their own process through the call context.
func Instantiate(ctx context.Context, rt wazero.Runtime) error {
	mods := map[string][]hostFunc{
		"wasi_snapshot_preview1": wasiFuncs(),
		"host_process":           processFuncs(),
		"host_fs":                fsFuncs(),
		"host_user":              userFuncs(),
		"host_tty":               ttyFuncs(),
		"host_net":               netFuncs(),
	}
	for _, name := range Modules {
		b := rt.NewHostModuleBuilder(name)
		for _, f := range mods[name] {
			b.NewFunctionBuilder().WithGoModuleFunction(withPrestart(f.name, f.results, f.fn), f.params, f.results).Export(f.name)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("wasm: host module %s: %w", name, err)
		}
	}
	return nil
}
