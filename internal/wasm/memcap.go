package wasm

import "github.com/tetratelabs/wazero/experimental"

// cappedAllocator enforces a VM's per-process memory limit (kernel
// Limits.MemoryBytes) below the engine-wide page limit: a memory never
// grows past max, so memory.grow fails in the guest (which reports its
// own out-of-memory error), and a module whose initial memory is already
// larger cannot be instantiated.
type cappedAllocator struct {
	inner experimental.MemoryAllocator
	max   uint64
}

func (a cappedAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	if capacity > a.max {
		return refusedMemory{}
	}
	if max > a.max {
		max = a.max
	}
	return cappedMemory{LinearMemory: a.inner.Allocate(capacity, max), max: a.max}
}

// cappedMemory refuses to grow past max whatever the inner memory allows
// (the heap fallback has no reservation to stop it).
type cappedMemory struct {
	experimental.LinearMemory
	max uint64
}

func (m cappedMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	return m.LinearMemory.Reallocate(size)
}

// refusedMemory is the memory of a module too big for the limit.
type refusedMemory struct{}

func (refusedMemory) Reallocate(uint64) []byte { return nil }
func (refusedMemory) Free()                    {}
