//go:build !wasip1

package main

import (
	"io/fs"
	"os"
)

// permBits are the bits permOf reports: permissions and the set-user-ID,
// set-group-ID and sticky bits.
const permBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// permOf returns name's permission bits (of the link itself unless
// follow); ok is false when they cannot be had.
func permOf(name string, follow bool) (fs.FileMode, bool) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(name)
	if err != nil {
		return 0, false
	}
	return fi.Mode() & permBits, true
}

// chmod sets name's permission bits.
func chmod(name string, perm fs.FileMode) error { return os.Chmod(name, perm) }
