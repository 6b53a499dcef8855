//go:build linux

package wasm

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memImage is a snapshot's whole linear memory in a sealed memfd. An
// instance is brought back to the snapshot's state by mapping the image
// privately over its memory (mmapMemory.resetTo): the kernel discards
// every page the last process dirtied and the next one reads the image's
// pages shared, copying only those it writes. That costs one mmap and the
// faults of the pages a run touches, instead of instantiating the module
// (a copy of its data segments, megabytes for a Go program) and writing
// the snapshot's pages again.
//
// The image's pages are shared by every instance mapped from it; the
// seals make the file immutable, so no mapping and no descriptor can
// change what the next instance starts from.
type memImage struct {
	mu     sync.RWMutex // held for reading while the fd is mapped
	fd     int          // -1 once closed
	size   uint64
	stored int // bytes of non-zero pages written into the file
}

// newMemImage copies mem into a sealed memfd. Zero pages are left as
// holes: they cost nothing and read as zero.
func newMemImage(mem []byte) (*memImage, error) {
	fd, err := unix.MemfdCreate("secexec-snapshot", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("wasm: memory image: %w", err)
	}
	im := &memImage{fd: fd, size: uint64(len(mem))}
	fail := func(err error) (*memImage, error) {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("wasm: memory image: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(len(mem))); err != nil {
		return fail(err)
	}
	// Write runs of non-zero pages.
	for off := 0; off < len(mem); {
		if isZero(mem[off:min(off+snapshotPage, len(mem))]) {
			off += snapshotPage
			continue
		}
		end := off + snapshotPage
		for end < len(mem) && !isZero(mem[end:min(end+snapshotPage, len(mem))]) {
			end += snapshotPage
		}
		end = min(end, len(mem))
		for w := off; w < end; {
			n, err := unix.Pwrite(fd, mem[w:end], int64(w))
			if err != nil {
				return fail(err)
			}
			if n == 0 {
				return fail(errors.New("short write"))
			}
			w += n
		}
		im.stored += end - off
		off = end
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		return fail(err)
	}
	return im, nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// mapAt maps the image privately (copy-on-write) at addr, replacing
// whatever was mapped there. A failed MAP_FIXED may leave the range
// unmapped: the caller must then never run the instance again.
func (im *memImage) mapAt(addr unsafe.Pointer) error {
	im.mu.RLock()
	defer im.mu.RUnlock()
	if im.fd < 0 {
		return errImageClosed
	}
	got, err := unix.MmapPtr(im.fd, 0, addr, uintptr(im.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED)
	if err != nil {
		return err
	}
	if got != addr {
		return fmt.Errorf("wasm: image mapped at %p, not %p", got, addr)
	}
	return nil
}

// close releases the file; instances mapped from it keep their mappings
// (the kernel holds the file for them), later resets fail.
func (im *memImage) close() {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.fd >= 0 {
		_ = unix.Close(im.fd)
		im.fd = -1
	}
}

var errImageClosed = errors.New("wasm: memory image closed")

// resetTo maps im over the memory: the memory is then exactly the image,
// whatever the last process left in it, followed by zero pages up to the
// memory's size if the process grew it (wazero cannot shrink a memory).
func (m *mmapMemory) resetTo(im *memImage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reserved == nil || m.size < im.size || im.size == 0 {
		return fmt.Errorf("wasm: memory of %d bytes, image of %d", m.size, im.size)
	}
	base := unsafe.Pointer(unsafe.SliceData(m.reserved))
	if m.size > im.size {
		tail := unsafe.Add(base, im.size)
		got, err := unix.MmapPtr(-1, 0, tail, uintptr(m.size-im.size), unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED)
		if err != nil {
			return err
		}
		if got != tail {
			return fmt.Errorf("wasm: zero pages mapped at %p, not %p", got, tail)
		}
	}
	return im.mapAt(base)
}
