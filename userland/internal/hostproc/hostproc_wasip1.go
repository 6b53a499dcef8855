//go:build wasip1

package hostproc

import (
	"syscall"
	"unsafe"
)

// proc_waitpid_v2 options: WNOHANG (agentOS ABI §7.2) and secexec's
// WNOPARK extension.
const (
	wnohang = 1
	wnopark = 2
)

//go:wasmimport host_process proc_spawn_v3
func procSpawnV3(path unsafe.Pointer, pathLen uint32, argv unsafe.Pointer, argvLen uint32,
	envp unsafe.Pointer, envpLen uint32, acts unsafe.Pointer, actsLen uint32,
	cwd unsafe.Pointer, cwdLen uint32, attrFlags uint32, sigdefLo, sigdefHi uint32,
	sigmaskLo, sigmaskHi uint32, pgroup uint32, retPid unsafe.Pointer) uint32

//go:wasmimport host_process proc_waitpid_v2
func procWaitpidV2(pid int32, options uint32, retCode, retSig, retPid, retCore unsafe.Pointer) uint32

//go:wasmimport host_process proc_kill
func procKill(pid int32, sig uint32) uint32

//go:wasmimport host_process fd_pipe
func fdPipe(retR, retW unsafe.Pointer) uint32

//go:wasmimport host_process fd_setfd
func fdSetfd(fd uint32, flags uint32) uint32

//go:wasmimport host_process fd_dup
func fdDup(fd uint32, ret unsafe.Pointer) uint32

//go:wasmimport host_process proc_getpid
func procGetpid(ret unsafe.Pointer) uint32

//go:wasmimport host_process umask
func procUmask(mask, set uint32, ret unsafe.Pointer) uint32

// Umask sets the process's file creation mask when set is true and
// returns the previous one; with set false it only reads it.
func Umask(mask int, set bool) (int, error) {
	var old uint32
	flag := uint32(0)
	if set {
		flag = 1
	}
	if e := procUmask(uint32(mask), flag, unsafe.Pointer(&old)); e != 0 {
		return 0, syscall.Errno(e)
	}
	return int(old), nil
}

//go:wasmimport host_process proc_exec
func procExec(path unsafe.Pointer, pathLen uint32, argv unsafe.Pointer, argvLen uint32,
	envp unsafe.Pointer, envpLen uint32, cloexec unsafe.Pointer, cloexecCount uint32) uint32

//go:wasmimport host_user isatty
func hostIsatty(fd uint32, ret unsafe.Pointer) uint32

// Exec replaces the process's image with path (agentOS ABI §7.12): on
// success it does not return.
func Exec(path string, argv, env []string) error {
	a, err := encodeList(argv)
	if err != nil {
		return err
	}
	e, err := encodeList(env)
	if err != nil {
		return err
	}
	p := []byte(path)
	return errnoErr(procExec(ptr(p), uint32(len(p)), ptr(a), uint32(len(a)), ptr(e), uint32(len(e)), nil, 0))
}

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd int) bool {
	var v uint32
	if hostIsatty(uint32(fd), unsafe.Pointer(&v)) != 0 {
		return false
	}
	return v != 0
}

//go:wasmimport host_process proc_getppid
func procGetppid(ret unsafe.Pointer) uint32

func errnoErr(e uint32) error {
	if e == 0 {
		return nil
	}
	return syscall.Errno(e)
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// Spawn starts path with argv (argv[0] included) and returns the child's
// PID. The child inherits every descriptor without FD_CLOEXEC, then the
// actions run; a path without a slash is looked up in the PATH of
// attr.Env.
func Spawn(path string, argv []string, attr Attr) (int, error) {
	a, err := encodeList(argv)
	if err != nil {
		return 0, err
	}
	e, err := encodeList(attr.Env)
	if err != nil {
		return 0, err
	}
	acts := encodeActions(attr.Actions)
	p := []byte(path)
	d := []byte(attr.Dir)
	var pid uint32
	errno := procSpawnV3(ptr(p), uint32(len(p)), ptr(a), uint32(len(a)), ptr(e), uint32(len(e)),
		ptr(acts), uint32(len(acts)), ptr(d), uint32(len(d)), 0, 0, 0, 0, 0, 0, unsafe.Pointer(&pid))
	if errno != 0 {
		return 0, syscall.Errno(errno)
	}
	return int(pid), nil
}

// Wait waits for child pid (-1: any child). With noHang it returns pid 0
// at once if no child has ended: it sets secexec's WNOPARK option too,
// which stops the host from parking the call until a child changes state
// (the park serves guests that spin on WNOHANG; a Go guest has other
// goroutines to run instead).
func Wait(pid int, noHang bool) (int, Status, error) {
	var code, sig, got, core uint32
	opts := uint32(0)
	if noHang {
		opts = wnohang | wnopark
	}
	e := procWaitpidV2(int32(pid), opts, unsafe.Pointer(&code), unsafe.Pointer(&sig), unsafe.Pointer(&got), unsafe.Pointer(&core))
	if e != 0 {
		return 0, Status{}, syscall.Errno(e)
	}
	if got == 0 {
		return 0, Status{}, nil
	}
	return int(got), Status{Code: int(code), Signal: int(sig)}, nil
}

// Kill sends signal sig to process pid.
func Kill(pid, sig int) error { return errnoErr(procKill(int32(pid), uint32(sig))) }

//go:wasmimport host_process proc_signal_mask_v2
func procSignalMaskV2(how, lo, hi uint32, oldLo, oldHi unsafe.Pointer) uint32

// proc_signal_mask_v2's SIG_BLOCK and SIG_UNBLOCK.
const (
	sigBlock   = 0
	sigUnblock = 1
)

// BlockSignal adds sig (1-32) to the process's blocked set: the kernel
// then keeps it pending instead of acting on it. Children started with
// Spawn begin with nothing blocked.
func BlockSignal(sig int) error {
	if sig < 1 || sig > 32 {
		return syscall.EINVAL
	}
	var lo, hi uint32
	return errnoErr(procSignalMaskV2(sigBlock, 1<<(sig-1), 0, unsafe.Pointer(&lo), unsafe.Pointer(&hi)))
}

// UnblockSignal removes sig (1-32) from the process's blocked set; a
// pending sig is then acted on.
func UnblockSignal(sig int) error {
	if sig < 1 || sig > 32 {
		return syscall.EINVAL
	}
	var lo, hi uint32
	return errnoErr(procSignalMaskV2(sigUnblock, 1<<(sig-1), 0, unsafe.Pointer(&lo), unsafe.Pointer(&hi)))
}

// Pipe makes an anonymous pipe and returns its read and write ends.
func Pipe() (r, w int, err error) {
	var rf, wf uint32
	if e := fdPipe(unsafe.Pointer(&rf), unsafe.Pointer(&wf)); e != 0 {
		return 0, 0, syscall.Errno(e)
	}
	return int(rf), int(wf), nil
}

// SetCloexec sets or clears fd's close-on-exec flag.
func SetCloexec(fd int, on bool) error {
	var f uint32
	if on {
		f = 1
	}
	return errnoErr(fdSetfd(uint32(fd), f))
}

// Dup duplicates fd onto the lowest free descriptor.
func Dup(fd int) (int, error) {
	var n uint32
	if e := fdDup(uint32(fd), unsafe.Pointer(&n)); e != 0 {
		return 0, syscall.Errno(e)
	}
	return int(n), nil
}

// Getpid returns the caller's process ID.
func Getpid() int {
	var pid uint32
	if procGetpid(unsafe.Pointer(&pid)) != 0 {
		return 0
	}
	return int(pid)
}

// Getppid returns the caller's parent process ID, or 0 if the host does
// not say.
func Getppid() int {
	var pid uint32
	if procGetppid(unsafe.Pointer(&pid)) != 0 {
		return 0
	}
	return int(pid)
}
