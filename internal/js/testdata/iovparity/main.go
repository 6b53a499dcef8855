// Command iovparity does, as a WebAssembly guest, what the node script of
// TestIOParityWithWASM does: readv and writev through fd_read/fd_write
// with several iovecs, and a spawn whose file actions send the child's
// stdout and stderr to one file, and statfs. Both print the same lines when the two
// runtimes share the kernel's semantics. With the argument "child" it
// writes "out " to fd 1 and "err" to fd 2.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 fd_read
func fdRead(fd, iovs, n, nread uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_write
func fdWrite(fd, iovs, n, nwritten uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_pwrite
func fdPwrite(fd, iovs, n uint32, off uint64, nwritten uint32) uint32

//go:wasmimport host_fs path_statfs
func pathStatfs(fd, path, n, total, used, avail, inodes, freeInodes uint32) uint32

//go:wasmimport host_process proc_spawn_v3
func procSpawn(exe, exeLen, argv, argvLen, envp, envpLen, acts, actsLen, cwd, cwdLen, attr, sdLo, sdHi, smLo, smHi, pgroup, retPid uint32) uint32

//go:wasmimport host_process proc_waitpid_v2
func procWaitpid(pid, options, code, sig, rpid, core uint32) uint32

func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

// iovecs lays out WASI iovecs for bufs.
func iovecs(bufs ...[]byte) []byte {
	out := make([]byte, 8*len(bufs))
	for i, b := range bufs {
		binary.LittleEndian.PutUint32(out[i*8:], addr(b))
		binary.LittleEndian.PutUint32(out[i*8+4:], uint32(len(b)))
	}
	return out
}

func rec(op, fd, src, oflag, mode uint32, path string) []byte {
	b := make([]byte, 24, 24+len(path))
	for i, v := range []uint32{op, fd, src, oflag, mode, uint32(len(path))} {
		binary.LittleEndian.PutUint32(b[i*4:], v)
	}
	return append(b, path...)
}

func errName(e uint32) string {
	if e == 8 {
		return "EBADF"
	}
	return fmt.Sprint("errno", e)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		os.Stdout.WriteString("out ")
		os.Stderr.WriteString("err")
		return
	}
	var n uint32
	f, err := os.Open("/workspace/pv")
	if err != nil {
		panic(err)
	}
	a, b, c := make([]byte, 3), []byte{}, make([]byte, 10)
	iov := iovecs(a, b, c)
	if e := fdRead(uint32(f.Fd()), addr(iov), 3, uint32(uintptr(unsafe.Pointer(&n)))); e != 0 {
		panic(e)
	}
	fmt.Printf("readv %d %s|%s\n", n, a, c[:n-3])

	w, err := os.OpenFile("/workspace/pw", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		panic(err)
	}
	iov = iovecs([]byte("ab"), []byte{}, []byte("cd"))
	e := fdWrite(uint32(w.Fd()), addr(iov), 3, uint32(uintptr(unsafe.Pointer(&n))))
	fmt.Printf("writev %d\n", n)
	iov = iovecs([]byte("Z"))
	e |= fdPwrite(uint32(w.Fd()), addr(iov), 1, 1, uint32(uintptr(unsafe.Pointer(&n))))
	fmt.Printf("pwritev %d\n", n)
	data, _ := os.ReadFile("/workspace/pw")
	fmt.Printf("file %s\n", data)
	if e != 0 {
		panic(e)
	}
	fmt.Printf("badf %s\n", errName(fdRead(99, addr(iov), 0, uint32(uintptr(unsafe.Pointer(&n))))))

	var total, used, avail, inodes, freeInodes uint64
	p := []byte("/workspace")
	ptr := func(v *uint64) uint32 { return uint32(uintptr(unsafe.Pointer(v))) }
	if e := pathStatfs(0xFFFFFFFF, addr(p), uint32(len(p)), ptr(&total), ptr(&used), ptr(&avail), ptr(&inodes), ptr(&freeInodes)); e != 0 {
		panic(e)
	}
	fmt.Printf("statfs %d %d\n", total, inodes)

	// The child's stdout to a file, then its stderr to its stdout.
	acts := append(rec(3, 1, 0, 0o1101, 0o644, "/workspace/pc"), rec(2, 2, 1, 0, 0, "")...)
	exe := []byte("/workspace/iovparity.wasm")
	argv := []byte("iovparity\x00child\x00")
	env := []byte("PATH=/bin\x00")
	cwd := []byte("/workspace")
	var pid, code, sig, rpid, core uint32
	if e := procSpawn(addr(exe), uint32(len(exe)), addr(argv), uint32(len(argv)), addr(env), uint32(len(env)),
		addr(acts), uint32(len(acts)), addr(cwd), uint32(len(cwd)), 0, 0, 0, 0, 0, 0, uint32(uintptr(unsafe.Pointer(&pid)))); e != 0 {
		panic(e)
	}
	if e := procWaitpid(pid, 0, uint32(uintptr(unsafe.Pointer(&code))), uint32(uintptr(unsafe.Pointer(&sig))),
		uint32(uintptr(unsafe.Pointer(&rpid))), uint32(uintptr(unsafe.Pointer(&core)))); e != 0 {
		panic(e)
	}
	data, _ = os.ReadFile("/workspace/pc")
	fmt.Printf("child %d %s\n", code, data)
}
