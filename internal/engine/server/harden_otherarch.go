//go:build linux && !amd64 && !arm64

package server

// No seccomp filter is built for this architecture (its system call
// numbers are not listed here); the other restrictions still apply.
const (
	auditArch    = 0
	syscallLimit = 0
)

var archDenied []uintptr
