// Command secexec runs untrusted code in a secexec VM. See `secexec help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/cli"
)

func main() {
	// The SDK runs VMs in engine processes: this same binary, re-executed.
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
