//go:build !wasip1

package shell

import "syscall"

func setUmask(m int) { syscall.Umask(m) }
