//go:build !linux

package wasm

import "github.com/tetratelabs/wazero/experimental"

// newAllocator returns nil: elsewhere guest memories live on the Go heap,
// wazero's default.
func newAllocator() experimental.MemoryAllocator { return nil }
