// Command reactor is a WASI reactor of secexec's convention (exports
// _initialize and secexec_main) for the prestart pool's tests. It re-reads
// its arguments and environment as secexec's userland does, then, by its
// first argument:
//
//	show        print its arguments, $X, its working directory and the
//	            first line of ./hello.txt
//	grow N      allocate and touch N MiB, then print "grew"
//	sleep       mark 16 KiB, then sleep until killed
//	state       print what init computed and how often secexec_main ran
//	            in this instance (always 1: an instance runs one process)
//	mark N      fill N MiB with a marker pattern (a secret of this process)
//	scan N      allocate N MiB and report whether any of it is not zero
//	            or holds the marker (memory of an earlier process)
//	            (N may end in "k": KiB, which fits in the memory the
//	            initialisation left, so the memory does not grow)
//	exit N      mark 16 KiB, then end through os.Exit(N) (proc_exit)
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

func main() {}

// initState is computed by the package's initialisation (_initialize):
// an instance started from a snapshot must have it without running init.
var initState = func() string {
	h := uint32(2166136261)
	for i := range 100000 {
		h = (h ^ uint32(i)) * 16777619
	}
	return strconv.FormatUint(uint64(h), 16)
}()

// runs counts secexec_main calls in this instance.
var runs int

// marker is what "mark" writes and "scan" looks for.
const marker = "SECRET-OF-AN-EARLIER-PROCESS-"

//go:wasmimport wasi_snapshot_preview1 args_sizes_get
func argsSizesGet(count, size unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 args_get
func argsGet(argv, buf unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 environ_sizes_get
func environSizesGet(count, size unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 environ_get
func environGet(env, buf unsafe.Pointer) uint32

func list(sizes func(count, size unsafe.Pointer) uint32, get func(list, buf unsafe.Pointer) uint32) []string {
	var count, size uint32
	if sizes(unsafe.Pointer(&count), unsafe.Pointer(&size)) != 0 || count == 0 {
		return nil
	}
	ptrs := make([]uint32, count)
	buf := make([]byte, size)
	get(unsafe.Pointer(&ptrs[0]), unsafe.Pointer(&buf[0]))
	base := uint32(uintptr(unsafe.Pointer(&buf[0])))
	out := make([]string, count)
	for i, p := range ptrs {
		s := string(buf[p-base:])
		out[i], _, _ = strings.Cut(s, "\x00")
	}
	return out
}

//go:wasmexport secexec_main
func secexecMain() int32 {
	args := list(argsSizesGet, argsGet)
	os.Clearenv()
	for _, kv := range list(environSizesGet, environGet) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	_ = os.Chdir(os.Getenv("PWD"))
	runs++
	if len(args) < 2 {
		return 2
	}
	switch args[1] {
	case "state":
		fmt.Printf("init=%s runs=%d\n", initState, runs)
	case "mark":
		b := make([]byte, size(args[2]))
		for i := 0; i+len(marker) <= len(b); i += len(marker) {
			copy(b[i:], marker)
		}
		fmt.Println("marked", args[2])
	case "exit":
		b := make([]byte, 16<<10)
		for i := 0; i+len(marker) <= len(b); i += len(marker) {
			copy(b[i:], marker)
		}
		n, _ := strconv.Atoi(args[2])
		os.Exit(n)
	case "scan":
		b := make([]byte, size(args[2]))
		nonzero := 0
		for _, c := range b {
			if c != 0 {
				nonzero++
			}
		}
		fmt.Printf("nonzero=%d marker=%v\n", nonzero, strings.Contains(string(b), marker))
	case "show":
		wd, _ := os.Getwd()
		b, err := os.ReadFile("hello.txt")
		line, _, _ := strings.Cut(string(b), "\n")
		fmt.Printf("args=%q X=%q wd=%s hello=%q err=%v\n", args[1:], os.Getenv("X"), wd, line, err)
	case "grow":
		n, _ := strconv.Atoi(args[2])
		b := make([]byte, n<<20)
		for i := range b {
			b[i] = 1
		}
		fmt.Println("grew", len(b)>>20)
	case "sleep":
		b := make([]byte, 16<<10)
		for i := 0; i+len(marker) <= len(b); i += len(marker) {
			copy(b[i:], marker)
		}
		for {
			time.Sleep(time.Hour)
		}
	}
	return 0
}

// size is N MiB, or N KiB for "Nk".
func size(arg string) int {
	if k, ok := strings.CutSuffix(arg, "k"); ok {
		n, _ := strconv.Atoi(k)
		return n << 10
	}
	n, _ := strconv.Atoi(arg)
	return n << 20
}
