//go:build linux && amd64

package server

import "golang.org/x/sys/unix"

const (
	auditArch    = unix.AUDIT_ARCH_X86_64
	syscallLimit = 0x40000000 // __X32_SYSCALL_BIT
)

var archDenied = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_MODIFY_LDT, unix.SYS_USELIB,
	unix.SYS_CREATE_MODULE, unix.SYS__SYSCTL, unix.SYS_USTAT, unix.SYS_SYSFS, unix.SYS_NFSSERVCTL}
