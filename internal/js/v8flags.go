package js

import (
	"strconv"
	"sync"

	v8 "github.com/tommie/v8go"
)

// V8's flags are process-wide and must be set before the first isolate.
var v8FlagsOnce sync.Once

// stackSizeKB is V8's --stack-size: how deep JavaScript may recurse
// before a RangeError. V8 measures it from where a thread first enters
// the isolate. Go runs cgo calls on the thread's system stack, which is
// at least 2 MiB on every platform Go supports with cgo (8 MiB on Linux
// by default); 984 KiB (V8's own default) leaves ample room for the C
// frames of bridge calls below the limit.
const stackSizeKB = 984

// v8Flags are the flags every isolate runs with. Code caches depend on
// them (V8 rejects a cache made under other flags), so the on-disk cache
// keys by them too.
var v8Flags = []string{
	// TurboFan's unrolled loops can miss TerminateExecution
	// (ARCHITECTURE.md "Facts measured"); a guest loop must always be
	// stoppable.
	"--no-turboshaft-loop-unrolling",
	"--stack-size=" + strconv.Itoa(stackSizeKB),
	// WebAssembly memories are not ArrayBuffer allocations V8 reports as
	// external memory: bound each one (256 MiB).
	"--wasm-max-mem-pages=4096",
}

func initV8() {
	v8FlagsOnce.Do(func() { v8.SetFlags(v8Flags...) })
}
