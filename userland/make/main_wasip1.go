//go:build wasip1

package main

import (
	"os"

	"github.com/secexec/secexec/userland/internal/hostproc"
)

// main is not called: the module is a reactor, whose initialisation the
// engine runs (or restores from a snapshot) before a process asks for it;
// hostproc.Run also gives the standard descriptors back their blocking
// mode, which the recipes make starts share.
func main() {}

//go:wasmexport secexec_main
func secexecMain() int32 {
	return hostproc.Run(func(args []string) int {
		return run(args, os.Environ(), os.Stdin, os.Stdout, os.Stderr, newRunner())
	})
}
