package syscalls

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// Prestarting runs a reactor module's _initialize (the Go runtime's and
// packages' initialisation) before any process asks for the program, so
// that a process later only runs the module's secexec_main (see
// internal/wasm's prestart pool). During that initialisation the instance
// belongs to no process: it sees an empty argument list and environment,
// the real clocks and random source, no descriptors, and one preopen,
// "/" at descriptor 3 — the layout NewPrestartedState gives the process
// that later claims it. Every other call fails with ENOSYS, so nothing an
// initialiser does can reach a kernel.

// PrestartRootFD is the descriptor number of the "/" preopen a prestarted
// instance was initialised with.
const PrestartRootFD = 3

type prestartKey struct{}

// WithPrestart returns ctx for the _initialize call of an instance that
// no process owns yet.
func WithPrestart(ctx context.Context) context.Context {
	return context.WithValue(ctx, prestartKey{}, true)
}

func isPrestart(ctx context.Context) bool {
	v, _ := ctx.Value(prestartKey{}).(bool)
	return v
}

// prestartFunc answers a call made during prestart initialisation.
func prestartFunc(name string, m mem, st []uint64) Errno {
	empty := &State{}
	switch name {
	case "args_sizes_get":
		return argsSizesGet(context.TODO(), empty, m, st)
	case "args_get":
		return argsGet(context.TODO(), empty, m, st)
	case "environ_sizes_get":
		return environSizesGet(context.TODO(), empty, m, st)
	case "environ_get":
		return environGet(context.TODO(), empty, m, st)
	case "random_get":
		return randomGet(context.TODO(), empty, m, st)
	case "clock_time_get":
		// Coarsened like every guest clock: the parked instance must not
		// carry a fine host timestamp into the process that claims it.
		var t uint64
		switch uint32(st[0]) {
		case clockRealtime:
			t = uint64(time.Now().Truncate(time.Millisecond).UnixNano())
		case clockMonotonic:
			t = uint64(time.Since(prestartEpoch).Truncate(time.Millisecond))
		default:
			return EINVAL
		}
		if !m.putU64(uint32(st[2]), t) {
			return EFAULT
		}
		return ESUCCESS
	case "fd_prestat_get":
		if uint32(st[0]) != PrestartRootFD {
			return EBADF
		}
		out, ok := m.bytes(uint32(st[1]), 8)
		if !ok {
			return EFAULT
		}
		clear(out)
		binary.LittleEndian.PutUint32(out[4:], 1)
		return ESUCCESS
	case "fd_prestat_dir_name":
		if uint32(st[0]) != PrestartRootFD {
			return EBADF
		}
		out, ok := m.bytes(uint32(st[1]), uint32(st[2]))
		if !ok {
			return EFAULT
		}
		if len(out) < 1 {
			return ENAMETOOLONG
		}
		out[0] = '/'
		return ESUCCESS
	case "fd_fdstat_get", "fd_fdstat_set_flags", "fd_filestat_get":
		return EBADF
	}
	return ENOSYS
}

var prestartEpoch = time.Now()

// withPrestart makes a host function answer prestart calls by name.
func withPrestart(name string, results []api.ValueType, fn api.GoModuleFunc) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		if StateOf(ctx) == nil && isPrestart(ctx) {
			if len(results) == 1 {
				stack[0] = uint64(prestartFunc(name, mem{mod.Memory()}, stack))
			}
			return
		}
		fn(ctx, mod, stack)
	}
}
