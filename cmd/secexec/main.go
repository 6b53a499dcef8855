// Command secexec runs untrusted code in a secexec VM. See `secexec help`.
package main

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/cli"
)

func main() {
	// The SDK runs VMs in engine processes: this same binary, re-executed.
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	ctx, stop := cli.SignalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	// The engine's last log records (phase reports of the last exec)
	// reach stderr before this process ends.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	secexec.Shutdown(sctx)
	cancel()
	os.Exit(code)
}
