//go:build wasip1

package hostproc

import (
	"os"
	"strings"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 args_sizes_get
func argsSizesGet(count, size unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 args_get
func argsGet(argv, buf unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 environ_sizes_get
func environSizesGet(count, size unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 environ_get
func environGet(env, buf unsafe.Pointer) uint32

func stringList(sizes func(count, size unsafe.Pointer) uint32, get func(list, buf unsafe.Pointer) uint32) []string {
	var count, size uint32
	if sizes(unsafe.Pointer(&count), unsafe.Pointer(&size)) != 0 || count == 0 {
		return nil
	}
	ptrs := make([]uint32, count)
	buf := make([]byte, size)
	if get(unsafe.Pointer(&ptrs[0]), unsafe.Pointer(&buf[0])) != 0 {
		return nil
	}
	base := uint32(uintptr(unsafe.Pointer(&buf[0])))
	out := make([]string, count)
	for i, p := range ptrs {
		s := buf[p-base:]
		if n := strings.IndexByte(string(s), 0); n >= 0 {
			s = s[:n]
		}
		out[i] = string(s)
	}
	return out
}

// Reactor prepares a reactor module's entry point (secexec_main) to run
// as the process that called it. secexec's engine may have run the
// module's initialisation before any process wanted it (its prestart
// pool), so what Go's start-up read then — arguments, environment,
// working directory — is re-read from the process now. It returns the
// arguments, which os.Args also holds.
func Reactor() []string {
	args := stringList(argsSizesGet, argsGet)
	env := stringList(environSizesGet, environGet)
	os.Args = args
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			_ = os.Setenv(k, v)
		}
	}
	if pwd := os.Getenv("PWD"); pwd != "" {
		_ = os.Chdir(pwd)
	}
	return args
}
