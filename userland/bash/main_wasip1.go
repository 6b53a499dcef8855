//go:build wasip1

package main

import "github.com/secexec/secexec/userland/internal/hostproc"

// main is not called: the module is a reactor (see hostproc.Reactor).
func main() {}

//go:wasmexport secexec_main
func secexecMain() int32 { return hostproc.Run(run) }
