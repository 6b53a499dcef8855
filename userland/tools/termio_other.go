//go:build !wasip1

package main

import "syscall"

// Outside WASI (the host-side unit tests) no descriptor is treated as a
// terminal: the terminal code paths are tested in a VM.

func termGetAttr(int) (termios, error)         { return termios{}, syscall.ENOTTY }
func termSetAttr(int, int, termios) error      { return syscall.ENOTTY }
func termSize(int) (rows, cols int, err error) { return 0, 0, syscall.ENOTTY }
func termSetSize(int, int, int) error          { return syscall.ENOTTY }
