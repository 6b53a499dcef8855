//go:build linux && arm64

package server

import "golang.org/x/sys/unix"

const (
	auditArch    = unix.AUDIT_ARCH_AARCH64
	syscallLimit = 0
)

var archDenied = []uintptr{unix.SYS_NFSSERVCTL}
