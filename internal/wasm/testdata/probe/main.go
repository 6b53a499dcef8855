// Command probe calls the host functions of secexec's WebAssembly runtime
// directly with hostile and edge-case arguments (out-of-range pointers,
// oversized counts, malformed records) and prints one "name=result" line
// per call. The test compares the lines with the errnos the ABI asks for;
// a host that panicked or hung would not get that far.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 fd_write
func fdWrite(fd, iovs, n, nwritten uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_read
func fdRead(fd, iovs, n, nread uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_seek
func fdSeek(fd uint32, off int64, whence, out uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_close
func fdClose(fd uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_readdir
func fdReaddir(fd, buf, n uint32, cookie uint64, used uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_prestat_get
func fdPrestatGet(fd, out uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_prestat_dir_name
func fdPrestatDirName(fd, buf, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_open
func pathOpen(fd, dirflags, path, n, oflags uint32, rb, ri uint64, fdflags, out uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_filestat_get
func pathFilestatGet(fd, flags, path, n, out uint32) uint32

//go:wasmimport wasi_snapshot_preview1 args_get
func argsGet(argv, buf uint32) uint32

//go:wasmimport wasi_snapshot_preview1 environ_sizes_get
func environSizesGet(n, size uint32) uint32

//go:wasmimport wasi_snapshot_preview1 random_get
func randomGet(buf, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 poll_oneoff
func pollOneoff(in, out, n, nevents uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_send
func sockSend(fd, data, n, flags, out uint32) uint32

//go:wasmimport host_process proc_spawn_v3
func procSpawn(exe, exeLen, argv, argvLen, envp, envpLen, acts, actsLen, cwd, cwdLen, attr, sdLo, sdHi, smLo, smHi, pgroup, retPid uint32) uint32

//go:wasmimport host_process proc_exec
func procExec(exe, exeLen, argv, argvLen, envp, envpLen, fds, nfds uint32) uint32

//go:wasmimport host_process proc_waitpid_v2
func procWaitpid(pid, options, code, sig, rpid, core uint32) uint32

//go:wasmimport host_process proc_kill
func procKill(pid, sig uint32) uint32

//go:wasmimport host_process proc_signal_mask_v2
func procSignalMask(how, lo, hi, oldLo, oldHi uint32) uint32

//go:wasmimport host_process fd_pipe
func fdPipe(r, w uint32) uint32

//go:wasmimport host_process fd_dup2
func fdDup2(from, to uint32) uint32

//go:wasmimport host_process umask
func umask(mask, set, old uint32) uint32

//go:wasmimport host_user getpwuid
func getpwuid(uid, buf, n, ret uint32) uint32

//go:wasmimport host_user getpwnam
func getpwnam(name, nameLen, buf, n, ret uint32) uint32

//go:wasmimport host_user getgrent
func getgrent(i, buf, n, ret uint32) uint32

//go:wasmimport host_fs path_mode
func pathMode(fd, path, n, follow uint32) uint32

//go:wasmimport host_fs fd_size
func fdSize(fd uint32) int64

//go:wasmimport host_fs path_statfs
func pathStatfs(fd, path, n, a, b, c, d, e uint32) uint32

//go:wasmimport host_net net_send
func netSend(fd, buf, n, flags, ret uint32) uint32

var (
	mem  [1 << 16]byte
	bad  = uint32(0xFFFFFF00)
	huge = uint32(1 << 30)
)

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(&b[0]))) }

// scratch returns a distinct slice of the scratch area.
func scratch(i, n int) []byte { return mem[i*1024 : i*1024+n] }

func str(i int, s string) (uint32, uint32) {
	b := scratch(i, len(s)+1)
	copy(b, s)
	return addr(b), uint32(len(s))
}

func out(name string, v any) { fmt.Printf("%s=%v\n", name, v) }

func main() {
	ret := addr(scratch(0, 64))
	iov := scratch(1, 8)
	msg := scratch(2, 8)
	copy(msg, "x")
	binary.LittleEndian.PutUint32(iov, addr(msg))
	binary.LittleEndian.PutUint32(iov[4:], 0)

	out("write_bad_iovs", fdWrite(1, bad, 1, ret))
	out("write_huge_count", fdWrite(1, addr(iov), huge, ret))
	out("write_bad_nwritten", fdWrite(1, addr(iov), 1, 0xFFFFFFFF))
	biov := scratch(3, 8)
	binary.LittleEndian.PutUint32(biov, bad)
	binary.LittleEndian.PutUint32(biov[4:], 0x1000)
	out("write_bad_buffer", fdWrite(1, addr(biov), 1, ret))
	out("read_bad_buffer", fdRead(0, addr(biov), 1, ret))
	out("seek_pipe", fdSeek(1, 0, 0, ret))

	p, n := str(4, "x")
	out("open_bad_path", pathOpen(0x40000003, 1, bad, 0x1000, 0, 2, 0, 0, ret))
	out("open_long_path", pathOpen(0x40000003, 1, p, 100000, 0, 2, 0, 0, ret))
	out("open_bad_out", pathOpen(0x40000004, 1, p, n, 0, 2, 0, 0, bad))
	out("args_bad", argsGet(bad, bad))
	out("environ_bad", environSizesGet(bad, ret))
	out("random_bad", randomGet(bad, 0x1000))
	out("poll_zero", pollOneoff(addr(scratch(5, 48)), addr(scratch(6, 32)), 0, ret))
	out("poll_huge", pollOneoff(addr(scratch(5, 48)), addr(scratch(6, 32)), 1000000, ret))
	out("poll_bad_out", pollOneoff(addr(scratch(5, 48)), bad, 16, ret))
	out("prestat_short_name", fdPrestatDirName(0x40000003, addr(scratch(7, 1)), 1))
	out("prestat_past_end", fdPrestatGet(0x40000009, ret))
	out("readdir_bad_buf", fdReaddir(0x40000004, bad, 0x1000, 0, ret))
	out("sock_send", sockSend(1, addr(iov), 1, 0, ret))
	out("net_send", netSend(1, addr(msg), 1, 0, ret))

	// The tagged alias of a preopen survives closing its visible fd.
	dot, dn := str(8, ".")
	out("close_preopen", fdClose(3))
	out("tagged_after_close", pathFilestatGet(0x40000003, 1, dot, dn, addr(scratch(9, 64))))

	// proc_spawn_v3 argument validation: nothing may be spawned.
	exe, en := str(10, "/usr/bin/true")
	argv := scratch(11, 16)
	copy(argv, "true\x00")
	act := scratch(12, 24)
	out("spawn_truncated_actions", procSpawn(exe, en, addr(argv), 5, 0, 0, addr(act), 10, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	binary.LittleEndian.PutUint32(act, 99)
	out("spawn_bad_opcode", procSpawn(exe, en, addr(argv), 5, 0, 0, addr(act), 24, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	binary.LittleEndian.PutUint32(act, 2)
	binary.LittleEndian.PutUint32(act[4:], 1)
	binary.LittleEndian.PutUint32(act[8:], 99)
	out("spawn_dup2_closed", procSpawn(exe, en, addr(argv), 5, 0, 0, addr(act), 24, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	out("spawn_bad_attr", procSpawn(exe, en, addr(argv), 5, 0, 0, 0, 0, 0, 0, 0x100, 0, 0, 0, 0, 0, ret))
	out("spawn_actions_2big", procSpawn(exe, en, addr(argv), 5, 0, 0, 0, 2<<20, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	out("spawn_argv_2big", procSpawn(exe, en, 0, 2<<20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	out("spawn_bad_argv", procSpawn(exe, en, bad, 0x1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	out("spawn_empty_path", procSpawn(exe, 0, addr(argv), 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	nx, nxn := str(13, "no-such-program")
	out("spawn_not_found", procSpawn(nx, nxn, addr(argv), 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	out("spawn_bad_ret", procSpawn(exe, en, addr(argv), 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, bad))
	out("wait_no_children", procWaitpid(0xFFFFFFFF, 0, ret, ret+4, ret+8, ret+12))
	out("wait_bad_options", procWaitpid(0xFFFFFFFF, 4, ret, ret+4, ret+8, ret+12))
	out("exec_not_found", procExec(nx, nxn, addr(argv), 5, 0, 0, 0, 0))
	out("exec_bad_fds", procExec(exe, en, addr(argv), 5, 0, 0, bad, 0x100))

	// A real spawn and wait: true exits 0.
	out("spawn_true", procSpawn(exe, en, addr(argv), 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ret))
	pid := binary.LittleEndian.Uint32(scratch(0, 4))
	st := procWaitpid(pid, 0, ret+16, ret+20, ret+24, ret+28)
	w := scratch(0, 32)
	out("wait_true", fmt.Sprintf("%d code=%d sig=%d pid_ok=%v", st, binary.LittleEndian.Uint32(w[16:]),
		binary.LittleEndian.Uint32(w[20:]), binary.LittleEndian.Uint32(w[24:]) == pid))

	out("kill_no_such", procKill(999999, 0))
	out("sigmask_bad_how", procSignalMask(9, 0, 0, ret, ret+4))
	out("dup2_beyond_limit", fdDup2(1, 100000))
	out("pipe", fdPipe(ret, ret+4))
	out("umask_set", umask(0o27, 1, ret))
	out("umask_old", fmt.Sprintf("%o", binary.LittleEndian.Uint32(scratch(0, 4))))
	umask(0, 0, ret)
	out("umask_now", fmt.Sprintf("%o", binary.LittleEndian.Uint32(scratch(0, 4))))

	buf := scratch(14, 512)
	out("getpwuid_small", getpwuid(1000, addr(buf), 3, ret))
	out("getpwuid_missing", getpwuid(4242, addr(buf), 512, ret))
	user, un := str(15, "user")
	r := getpwnam(user, un, addr(buf), 512, ret)
	out("getpwnam", fmt.Sprintf("%d %s", r, buf[:binary.LittleEndian.Uint32(scratch(0, 4))]))
	out("getpwnam_bad", getpwnam(bad, 0x1000, addr(buf), 512, ret))
	r = getgrent(0, addr(buf), 512, ret)
	out("getgrent0", fmt.Sprintf("%d %s", r, buf[:binary.LittleEndian.Uint32(scratch(0, 4))]))
	out("getgrent_end", getgrent(1000, addr(buf), 512, ret))

	miss, mn := str(16, "missing")
	out("path_mode_missing", pathMode(0x40000003, miss, mn, 1))
	out("path_mode_bad", pathMode(0x40000003, bad, 0x1000, 1))
	out("fd_size_bad", fdSize(99))
	out("statfs_bad", pathStatfs(0xFFFFFFFF, dot, dn, bad, bad, bad, bad, bad))
	os.Exit(0)
}
