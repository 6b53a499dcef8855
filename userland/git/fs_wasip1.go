//go:build wasip1

package main

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/go-git/go-billy/v6"
)

// statFS works around go-git's wasip1 port, which takes Stat_t.Ctime for
// seconds where WASI gives nanoseconds: the index entry it makes has a
// creation time far past any valid one and cannot be written ("negative
// timestamps are not allowed"). The file information this filesystem
// returns carries the ctime in seconds.
type statFS struct{ billy.Filesystem }

func worktreeFS(base billy.Filesystem) billy.Filesystem { return statFS{base} }

func (f statFS) Stat(name string) (os.FileInfo, error) { return fixInfo(f.Filesystem.Stat(name)) }

func (f statFS) Lstat(name string) (os.FileInfo, error) { return fixInfo(f.Filesystem.Lstat(name)) }

type secondsInfo struct {
	fs.FileInfo
	sys *syscall.Stat_t
}

func (i secondsInfo) Sys() any { return i.sys }

func fixInfo(fi os.FileInfo, err error) (os.FileInfo, error) {
	if err != nil {
		return fi, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi, nil
	}
	c := *st
	c.Ctime /= 1e9
	return secondsInfo{FileInfo: fi, sys: &c}, nil
}
