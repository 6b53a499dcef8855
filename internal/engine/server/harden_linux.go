//go:build linux

package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Harden restricts the engine process before it serves, in this order:
//
//   - descriptors it inherited by accident (any without close-on-exec
//     above keepFD; every descriptor this process opened itself has
//     close-on-exec) are closed;
//   - no core dumps (RLIMIT_CORE 0) and not dumpable (PR_SET_DUMPABLE 0:
//     no ptrace attach by same-user processes, /proc/PID files owned by
//     root), so its memory cannot be read from outside;
//   - PR_SET_NO_NEW_PRIVS, so nothing it runs gains privileges;
//   - a seccomp filter (see seccompDenied) on every thread.
func Harden(keepFD int) error {
	if err := closeInherited(keepFD); err != nil {
		return fmt.Errorf("engine: closing inherited descriptors: %w", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("engine: RLIMIT_CORE: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("engine: PR_SET_DUMPABLE: %w", err)
	}
	// no_new_privs is per thread; the seccomp call below spreads it, with
	// the filter, to every thread (SECCOMP_FILTER_FLAG_TSYNC), so both
	// must happen on the same thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("engine: PR_SET_NO_NEW_PRIVS: %w", err)
	}
	if auditArch == 0 {
		return nil // no filter for this architecture
	}
	prog := seccompProgram()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		if e == unix.EINVAL || e == unix.ENOSYS {
			return nil // a kernel without seccomp filters: nothing to add
		}
		return fmt.Errorf("engine: seccomp: %w", e)
	}
	return nil
}

func closeInherited(keep int) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= keep {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // gone (the directory's own fd), or opened here
		}
		_ = unix.Close(fd)
	}
	return nil
}

// seccompDenied are the system calls the engine never needs and that
// would widen what a guest who took over the engine could do to the host:
// debugging and reading other processes, loading kernel code, changing
// mounts, namespaces, time, keys or the system's identity, io_uring
// (whose operations seccomp cannot see), and executing programs. They
// fail with EPERM. Everything else stays allowed: the Go runtime, wazero
// and V8 need memory management, threads, signals, timers, files (host
// mounts) and sockets (the client connection; guest networking later),
// and an allowlist that tight would break with each runtime update. This
// is defence in depth on top of the VM's own kernel, not the sandbox.
var seccompDenied = append([]uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP,
	unix.SYS_PIDFD_GETFD, unix.SYS_PROCESS_MADVISE,
	unix.SYS_EXECVE, unix.SYS_EXECVEAT,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE,
	unix.SYS_DELETE_MODULE, unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_FSOPEN,
	unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_MOUNT_SETATTR, unix.SYS_SETNS, unix.SYS_UNSHARE,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_ACCT, unix.SYS_QUOTACTL,
	unix.SYS_SYSLOG, unix.SYS_VHANGUP, unix.SYS_PERSONALITY,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_FANOTIFY_INIT,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
}, archDenied...)

// Classic BPF over struct seccomp_data: nr at offset 0, arch at 4.
const (
	seccompRetKillProcess = 0x80000000
	offNr                 = 0
	offArch               = 4
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// seccompProgram builds: a foreign architecture (another syscall ABI,
// such as 32-bit calls on x86-64) kills the process; a denied number
// returns EPERM; anything else is allowed.
func seccompProgram() []unix.SockFilter {
	n := len(seccompDenied)
	prog := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, auditArch, 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, seccompRetKillProcess),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
	}
	if syscallLimit != 0 {
		// x32 system calls (numbers with bit 30 set) share x86-64's
		// architecture value: refuse them all.
		prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, syscallLimit, uint8(n+1), 0))
	}
	for i, nr := range seccompDenied {
		prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, uint32(nr), uint8(n-i), 0))
	}
	return append(prog,
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)),
	)
}
