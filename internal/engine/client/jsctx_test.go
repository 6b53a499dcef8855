package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/kernel"
)

type testTools map[string]func(ctx context.Context) ([]byte, error)

func (f testTools) Has(name string) bool { _, ok := f[name]; return ok }
func (f testTools) Names() []string {
	var out []string
	for n := range f {
		out = append(out, n)
	}
	return out
}
func (f testTools) Call(ctx context.Context, c kernel.ToolCall) ([]byte, error) {
	return f[c.Name](ctx)
}

// An engine (perhaps a guest's) asks the client to run tools: only the
// registered tools of the VMs this connection owns run, a panic is the
// tool's failure, results are bounded, and the client stays up.
func TestToolCallsFromAHostileEngine(t *testing.T) {
	a, b := pair(t)
	results := make(chan proto.Frame, 16)
	fakeEngine(t, b, func(_ *proto.Writer, f proto.Frame) {
		if f.Type == proto.TToolResult {
			results <- f
		}
	})
	c, err := Handshake(context.Background(), a, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	tools := testTools{
		"ok":    func(context.Context) ([]byte, error) { return []byte(`"fine"`), nil },
		"panic": func(context.Context) ([]byte, error) { panic("bug") },
		"big":   func(context.Context) ([]byte, error) { return []byte(`"` + strings.Repeat("x", 2048) + `"`), nil },
		"slow": func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	v, err := c.NewVM(context.Background(), VMConfig{Tools: tools, Limits: kernel.Limits{ToolBytes: 1024, ToolTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	w := proto.NewWriter(b)
	for i, tc := range []struct {
		call proto.ToolCall
		code string
	}{
		{proto.ToolCall{VM: v.id, Name: "ok"}, ""},
		{proto.ToolCall{VM: v.id + 1, Name: "ok"}, kernel.ToolNotFound},
		{proto.ToolCall{VM: v.id, Name: "nope"}, kernel.ToolNotFound},
		{proto.ToolCall{VM: v.id, Name: "panic"}, kernel.ToolFailed},
		{proto.ToolCall{VM: v.id, Name: "big"}, kernel.ToolTooLarge},
		// The engine asks for an hour; the VM's ToolTimeout still bounds it.
		{proto.ToolCall{VM: v.id, Name: "slow", Timeout: int64(time.Hour)}, kernel.ToolTimeout},
	} {
		id := uint64(100 + i)
		if err := w.Write(proto.TToolCall, id, &tc.call); err != nil {
			t.Fatal(err)
		}
		select {
		case f := <-results:
			r := f.Body.(*proto.ToolResult)
			var te *kernel.ToolError
			code := ""
			if err := r.Err.Err(); err != nil {
				if !errors.As(err, &te) {
					t.Fatalf("%s: untyped %v", tc.call.Name, err)
				}
				code = te.Code
			}
			if f.ID != id || code != tc.code {
				t.Errorf("%s on vm %d: id %d code %q, want %q", tc.call.Name, tc.call.VM, f.ID, code, tc.code)
			}
			if code == "" && string(r.Result) != `"fine"` {
				t.Errorf("result %s", r.Result)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no ToolResult", tc.call.Name)
		}
	}
	if c.Err() != nil {
		t.Fatalf("connection failed: %v", c.Err())
	}
}
