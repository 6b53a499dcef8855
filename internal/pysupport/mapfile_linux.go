//go:build linux

package pysupport

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps a bytecode file read-only and shared: its pages are the
// page cache's, shared by every engine process of the host and counted
// only as they are touched, instead of a heap copy in each engine. The
// mapping lives as long as the process (an engine holds its layer that
// long). Set-up replaces a set only by rename and prunes by unlink, so
// the mapped file's contents never change under it.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

// unmapFile releases a mapping of mapFile that is not used.
func unmapFile(b []byte) {
	if b != nil {
		_ = unix.Munmap(b)
	}
}
