//go:build !wasip1

package shell

import "syscall"

func setUmask(m int) { syscall.Umask(m) }

func getUmask() int {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m
}
