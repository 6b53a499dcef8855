//go:build wasip1

package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"
)

// WASI's filestat has no permission bits and no chmod; the agentOS host
// ABI adds them as host_fs functions (path_mode, chmod), which secexec's
// engine provides to every module.

//go:wasmimport host_fs path_mode
func hostPathMode(fd int32, path unsafe.Pointer, pathLen int32, follow int32) int32

//go:wasmimport host_fs chmod
func hostChmod(fd int32, path unsafe.Pointer, pathLen int32, mode int32) int32

// atCwd is the ABI's AT_FDCWD; with an absolute path it is not used.
const atCwd = -1

func absPath(name string) []byte {
	if !filepath.IsAbs(name) {
		if wd, err := os.Getwd(); err == nil {
			name = filepath.Join(wd, name)
		}
	}
	return []byte(name)
}

// permOf returns name's permission bits (of the link itself unless
// follow); ok is false when they cannot be had.
func permOf(name string, follow bool) (fs.FileMode, bool) {
	p := absPath(name)
	if len(p) == 0 {
		return 0, false
	}
	f := int32(0)
	if follow {
		f = 1
	}
	mode := hostPathMode(atCwd, unsafe.Pointer(&p[0]), int32(len(p)), f)
	if mode == 0 {
		return 0, false
	}
	return fromUnixMode(uint32(mode)), true
}

// chmod sets name's permission bits.
func chmod(name string, perm fs.FileMode) error {
	p := absPath(name)
	if len(p) == 0 {
		return fmt.Errorf("chmod %q: empty name", name)
	}
	if errno := hostChmod(atCwd, unsafe.Pointer(&p[0]), int32(len(p)), int32(toUnixMode(perm))); errno != 0 {
		return fmt.Errorf("chmod %s: WASI errno %d", name, errno)
	}
	return nil
}

// fromUnixMode turns st_mode's low twelve bits into fs.FileMode bits.
func fromUnixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// toUnixMode is fromUnixMode's inverse.
func toUnixMode(mode fs.FileMode) uint32 {
	m := uint32(mode & 0o777)
	if mode&fs.ModeSetuid != 0 {
		m |= 0o4000
	}
	if mode&fs.ModeSetgid != 0 {
		m |= 0o2000
	}
	if mode&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
}
