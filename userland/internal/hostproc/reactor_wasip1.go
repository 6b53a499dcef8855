//go:build wasip1

package hostproc

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
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
	resetLocalTime()
	return args
}

// Run is a reactor module's secexec_main: it makes the module the calling
// process (Reactor), gives the standard descriptors back their blocking
// mode (Go's start-up made them non-blocking, and the programs a command
// starts share them), runs main with the arguments and exits with its
// status.
func Run(main func(args []string) int) int32 {
	deferFirstGC()
	args := Reactor()
	for fd := 0; fd <= 2; fd++ {
		_ = syscall.SetNonblock(fd, false)
	}
	code := main(args)
	os.Exit(code)
	return int32(code)
}

// startGCPercent is the collector's setting until its first cycle.
const startGCPercent = 200

// deferFirstGC keeps a short process from collecting garbage at all. A
// command's initialisation leaves the heap near Go's first goal (4 MiB),
// so even `sh -c true` used to start a collection — a mark of every
// table the initialisation built, about a millisecond on one WebAssembly
// thread, more than the rest of the run. Until its first cycle the
// collector runs at GOGC=200 (an 8 MiB first goal: a run allocating less
// never collects, and its memory, which ends with the process, is never
// scanned); after that cycle it is back at Go's default (GOGC=100 unless
// the process's GOGC says otherwise), so a long-running program's heap
// stays within twice what it uses, as it would have. The first goal is
// kept modest because a process under a small memory limit fails with
// "out of memory" when memory.grow is refused, where an earlier
// collection could have made room.
func deferFirstGC() {
	normal := debug.SetGCPercent(startGCPercent)
	if normal == startGCPercent {
		return
	}
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) { debug.SetGCPercent(normal) })
}

// resetLocalTime makes time.Local the process's zone, as on Linux: TZ
// (a zone name, ":name" or a file), else /etc/localtime, else UTC. Go's
// wasip1 port leaves Local at UTC whatever TZ says (it expects the host
// to manage zones), and fixes it the first time it is used, which an
// initialisation before any process may already have done; VMs keep the
// zone files at /usr/share/zoneinfo (internal/tzdata).
func resetLocalTime() {
	tz, ok := syscall.Getenv("TZ")
	tz = strings.TrimPrefix(tz, ":")
	var file string
	switch {
	case !ok:
		file = "/etc/localtime"
	case tz == "" || tz == "UTC":
		time.Local = time.UTC
		return
	case strings.HasPrefix(tz, "/"):
		file = tz
	case !strings.Contains(tz, ".."):
		file = "/usr/share/zoneinfo/" + tz
	}
	if file != "" {
		if data, err := os.ReadFile(file); err == nil {
			if loc, err := time.LoadLocationFromTZData("Local", data); err == nil {
				time.Local = loc
				return
			}
		}
	}
	time.Local = time.UTC
}
