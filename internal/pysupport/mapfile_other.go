//go:build !linux

package pysupport

import (
	"io"
	"os"
)

// mapFile reads a bytecode file whole (linux maps it instead).
func mapFile(f *os.File, size int64) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}

// unmapFile releases a buffer of mapFile that is not used.
func unmapFile([]byte) {}
