//go:build !linux

package wasm

import "errors"

// memImage is the copy-on-write memory image of a snapshot, which only
// Linux builds make (memfd); elsewhere instances are never recycled.
type memImage struct {
	size   uint64
	stored int
}

func newMemImage([]byte) (*memImage, error) {
	return nil, errors.New("wasm: memory images need Linux")
}

func (*memImage) close() {}
