//go:build wasip1

package main

import "syscall"

// Go's start-up makes the standard descriptors non-blocking; the
// recipes make starts share them and expect blocking ones (as the shell
// does, userland/bash).
func init() {
	for fd := 0; fd <= 2; fd++ {
		_ = syscall.SetNonblock(fd, false)
	}
}
