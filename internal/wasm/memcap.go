package wasm

import (
	"github.com/tetratelabs/wazero/experimental"

	"github.com/secexec/secexec/kernel"
)

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

// reportingAllocator reports each linear memory's size to the kernel
// before it is allocated or grown (kernel Process.TryMemory), which
// bounds the VM's processes together (Limits.VMMemoryBytes): a memory
// that would take the VM past its limit is refused (the module does not
// start, memory.grow returns -1), and no other process pays for it.
type reportingAllocator struct {
	inner experimental.MemoryAllocator
	p     *kernel.Process
}

func (a reportingAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	if !a.p.TryMemory(int64(min(capacity, 1<<62))) {
		return refusedMemory{}
	}
	return reportingMemory{LinearMemory: a.inner.Allocate(capacity, max), p: a.p}
}

// reportingMemory reports every growth before it happens.
type reportingMemory struct {
	experimental.LinearMemory
	p *kernel.Process
}

func (m reportingMemory) Reallocate(size uint64) []byte {
	if !m.p.TryMemory(int64(min(size, 1<<62))) {
		return nil
	}
	return m.LinearMemory.Reallocate(size)
}

func (m reportingMemory) Free() {
	m.p.ReportMemory(0)
	m.LinearMemory.Free()
}
