package client_test

import (
	"context"
	"io"
	"testing"

	"github.com/secexec/secexec/client"
	"github.com/secexec/secexec/internal/api"
)

// One exec of `true` through the client and a loopback server, the
// answer as JSON.
func BenchmarkExec(b *testing.B) { benchExec(b, nil) }

// The same with the output streamed as server-sent events.
func BenchmarkExecStreamed(b *testing.B) {
	benchExec(b, &client.ExecOptions{Stdout: io.Discard, Stderr: io.Discard})
}

func benchExec(b *testing.B, opts *client.ExecOptions) {
	s := newServer(b, api.Config{})
	ctx := context.Background()
	vm := newVM(b, s.client(b, alice, client.Options{}), client.VMOptions{})
	if _, err := vm.Exec(ctx, "true", opts); err != nil { // warm
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := vm.Exec(ctx, "true", opts)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}
