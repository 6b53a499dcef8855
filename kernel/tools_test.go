package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// funcTools is a ToolHost of Go functions, as an embedder registers them.
type funcTools map[string]func(ctx context.Context, args []byte) ([]byte, error)

func (f funcTools) Has(name string) bool { _, ok := f[name]; return ok }
func (f funcTools) Names() []string {
	out := make([]string, 0, len(f))
	for n := range f {
		out = append(out, n)
	}
	return out
}
func (f funcTools) Call(ctx context.Context, c kernel.ToolCall) ([]byte, error) {
	return f[c.Name](ctx, c.Args)
}

func toolKernel(t *testing.T, pol *policy.Policy, tools kernel.ToolHost, limits kernel.Limits) *kernel.Kernel {
	t.Helper()
	v, err := vfs.New(context.Background(), memfs.New(memfs.Options{}), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checker, err := policy.Compile(pol)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{VFS: v, Limits: limits, Tools: tools, AuthorizeTool: checker.CheckTool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

func toolCode(err error) string {
	var te *kernel.ToolError
	if errors.As(err, &te) {
		return te.Code
	}
	return fmt.Sprintf("not a ToolError: %v", err)
}

func TestCallToolRules(t *testing.T) {
	var mu sync.Mutex
	reached := map[string]int{}
	hit := func(name string) { mu.Lock(); reached[name]++; mu.Unlock() }
	tools := funcTools{
		"echo":   func(_ context.Context, a []byte) ([]byte, error) { hit("echo"); return a, nil },
		"secret": func(context.Context, []byte) ([]byte, error) { hit("secret"); return []byte("1"), nil },
		"big": func(context.Context, []byte) ([]byte, error) {
			return []byte(`"` + strings.Repeat("x", 2000) + `"`), nil
		},
		"nojson": func(context.Context, []byte) ([]byte, error) { return []byte("{"), nil },
		"empty":  func(context.Context, []byte) ([]byte, error) { return nil, nil },
		"fail":   func(context.Context, []byte) ([]byte, error) { return nil, errno.EIO },
		"panic":  func(context.Context, []byte) ([]byte, error) { panic("boom") },
		"deaf":   func(context.Context, []byte) ([]byte, error) { time.Sleep(time.Second); return []byte("1"), nil },
		"slow":   func(ctx context.Context, _ []byte) ([]byte, error) { <-ctx.Done(); return nil, ctx.Err() },
	}
	pol := policy.DenyAll().AllowTool("*").DenyTool("secret")
	k := toolKernel(t, pol, tools, kernel.Limits{ToolBytes: 1000, ToolTimeout: 100 * time.Millisecond})
	p := k.Init()
	ctx := context.Background()

	out, err := p.CallTool(ctx, "echo", []byte(`{"a":1}`))
	if err != nil || string(out) != `{"a":1}` {
		t.Fatalf("echo: %s %v", out, err)
	}
	if out, err := p.CallTool(ctx, "echo", nil); err != nil || string(out) != "null" {
		t.Fatalf("no args: %s %v", out, err)
	}
	if out, err := p.CallTool(ctx, "empty", nil); err != nil || string(out) != "null" {
		t.Fatalf("empty result: %s %v", out, err)
	}
	for _, tc := range []struct {
		name string
		args string
		code string
	}{
		{"secret", "1", kernel.ToolDenied},
		{"missing", "1", kernel.ToolNotFound},
		{"", "1", kernel.ToolInvalid},
		{"a\x00b", "1", kernel.ToolInvalid},
		{strings.Repeat("n", 257), "1", kernel.ToolInvalid},
		{"\xff", "1", kernel.ToolInvalid},
		{"echo", "{bad", kernel.ToolInvalid},
		{"echo", `"` + strings.Repeat("y", 1000) + `"`, kernel.ToolTooLarge},
		{"big", "1", kernel.ToolTooLarge},
		{"nojson", "1", kernel.ToolFailed},
		{"fail", "1", kernel.ToolFailed},
		{"panic", "1", kernel.ToolFailed},
		{"deaf", "1", kernel.ToolTimeout},
		{"slow", "1", kernel.ToolTimeout},
	} {
		_, err := p.CallTool(ctx, tc.name, []byte(tc.args))
		if got := toolCode(err); got != tc.code {
			t.Errorf("%q(%.20s): %s, want %s", tc.name, tc.args, got, tc.code)
		}
	}
	// A denial carries the policy's error; the tool never ran.
	_, err = p.CallTool(ctx, "secret", nil)
	var de *policy.DeniedError
	if !errors.As(err, &de) || !errors.Is(err, errno.EACCES) || reached["secret"] != 0 {
		t.Fatalf("denied: %v, reached %d", err, reached["secret"])
	}
	// A failing tool's error is the message.
	_, err = p.CallTool(ctx, "fail", nil)
	if !errors.Is(err, errno.EIO) {
		t.Fatalf("fail: %v", err)
	}
	// The caller's cancellation ends the wait with its own error.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := p.CallTool(cctx, "slow", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if got := fmt.Sprint(k.ToolNames()); got != "[big deaf echo empty fail nojson panic slow]" {
		t.Fatalf("names: %s", got)
	}
}

// Without a tool host or a rule nothing is callable.
func TestCallToolDenyByDefault(t *testing.T) {
	tools := funcTools{"echo": func(_ context.Context, a []byte) ([]byte, error) { return a, nil }}
	k := toolKernel(t, policy.DenyAll(), tools, kernel.Limits{})
	if _, err := k.Init().CallTool(context.Background(), "echo", nil); toolCode(err) != kernel.ToolDenied {
		t.Fatalf("no rule: %v", err)
	}
	if n := k.ToolNames(); len(n) != 0 {
		t.Fatalf("names: %v", n)
	}
	k2 := toolKernel(t, policy.AllowAll(), nil, kernel.Limits{})
	if _, err := k2.Init().CallTool(context.Background(), "echo", nil); toolCode(err) != kernel.ToolNotFound {
		t.Fatalf("no host: %v", err)
	}
}

// Concurrent calls beyond the per-VM bound wait their turn; all finish.
func TestCallToolConcurrent(t *testing.T) {
	var mu sync.Mutex
	active, peak := 0, 0
	tools := funcTools{"work": func(context.Context, []byte) ([]byte, error) {
		mu.Lock()
		active++
		peak = max(peak, active)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		active--
		mu.Unlock()
		return []byte("1"), nil
	}}
	k := toolKernel(t, policy.AllowAll(), tools, kernel.Limits{})
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := k.Init().CallTool(context.Background(), "work", nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if peak > 64 {
		t.Fatalf("%d calls ran at once", peak)
	}
}
