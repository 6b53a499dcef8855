//go:build wasip1

package main

import (
	"os"
	"syscall"

	"github.com/secexec/secexec/userland/internal/hostproc"
)

// main is not called: the module is a reactor (see hostproc.Reactor).
func main() {}

//go:wasmexport secexec_main
func secexecMain() int32 {
	args := hostproc.Reactor()
	// Go's start-up makes the standard descriptors non-blocking; the
	// programs the shell starts share them and expect blocking ones.
	for fd := 0; fd <= 2; fd++ {
		_ = syscall.SetNonblock(fd, false)
	}
	code := run(args)
	os.Exit(code)
	return int32(code)
}
