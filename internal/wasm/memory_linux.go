//go:build linux

package wasm

import (
	"sync"
	"syscall"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapAllocator backs guest linear memories with private anonymous
// mappings instead of the Go heap. Each memory reserves its maximum size
// as address space up front (PROT_NONE, no swap reserved) and makes pages
// accessible as the guest grows, so
//
//   - memory.grow never copies (wazero's default allocator appends to a
//     slice, copying the whole memory on every reallocation),
//   - instantiation does not zero the initial pages (the kernel hands out
//     zero pages on first touch), and
//   - guest memory is not Go heap: it neither inflates the collector's
//     heap goal nor needs scanning, and is returned to the system the
//     moment the instance closes.
//
// The price is that a memory must not be touched after Free: wazero frees
// it when the instance is closed, which the runner does on the guest's own
// goroutine after the last call returned, and Engine.Close waits for
// running programs before it closes the runtime.
type mmapAllocator struct{}

func newAllocator() experimental.MemoryAllocator { return mmapAllocator{} }

func (mmapAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	if max < capacity {
		max = capacity
	}
	if max == 0 {
		max = 1
	}
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		// Out of address space: fall back to the Go heap, as wazero would.
		return &heapMemory{}
	}
	return &mmapMemory{reserved: b}
}

// mmapMemory is one reserved region; the first size bytes are accessible.
type mmapMemory struct {
	mu       sync.Mutex
	reserved []byte
	size     uint64
}

func (m *mmapMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reserved == nil || size > uint64(len(m.reserved)) {
		return nil
	}
	if size > m.size {
		// Pages are made accessible in whole pages; the tail of the last
		// page beyond size stays unreachable through the returned slice.
		if err := syscall.Mprotect(m.reserved[m.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return unsafe.Slice(unsafe.SliceData(m.reserved), size)
}

func (m *mmapMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reserved != nil {
		_ = syscall.Munmap(m.reserved)
		m.reserved = nil
		m.size = 0
	}
}

// heapMemory is the fallback: a Go slice grown by appending.
type heapMemory struct{ b []byte }

func (h *heapMemory) Reallocate(size uint64) []byte {
	if n := uint64(len(h.b)); size > n {
		h.b = append(h.b, make([]byte, size-n)...)
	}
	return h.b[:size]
}

func (h *heapMemory) Free() { h.b = nil }
