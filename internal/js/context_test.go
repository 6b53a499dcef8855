package js

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// startContext spawns a context-server node process in v serving s.
func startContext(t *testing.T, v *testVM, s *jsctx.Session) *kernel.Process {
	t.Helper()
	null, err := v.vm.VFS.Open(context.Background(), vfs.Root, "/dev/null", vfs.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.DecRef()
	p, err := v.vm.Kernel.SpawnHost(jsctx.WithSession(context.Background(), s), kernel.SpawnOptions{
		Argv: []string{"node"}, Files: []vfs.File{null, null, null},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		_ = p.Signal(kernel.SIGKILL)
		_, _ = p.HostWait(context.Background())
	})
	return p
}

// Evaluations on a context release the values they create: 20k of them
// leave the context holding no more than a few hundred do.
func TestContextValuesReleased(t *testing.T) {
	e := newEngine(t, Config{})
	var retained atomic.Int64
	e.testHook = func(r *rt) { retained.Store(int64(r.v8c.RetainedValueCount())) }
	v := newVM(t, e)
	count := func(n int) int64 {
		s := jsctx.New(jsctx.Options{})
		p := startContext(t, v, s)
		ctx := context.Background()
		for i := range n {
			want := fmt.Sprint(i * 2)
			if got, err := s.Evaluate(ctx, fmt.Sprintf("globalThis.last = %d * 2", i)); err != nil || string(got) != want {
				t.Fatalf("eval %d: %s %v", i, got, err)
			}
			if i%7 == 0 {
				if _, err := s.Evaluate(ctx, "throw new Error('x')"); !errors.As(err, new(*jsctx.ThrownError)) {
					t.Fatalf("throw: %v", err)
				}
			}
		}
		s.Close()
		_ = p.Signal(kernel.SIGKILL)
		_, _ = p.HostWait(ctx)
		// The hook runs at teardown, after the status is reported.
		deadline := time.Now().Add(5 * time.Second)
		for retained.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		got := retained.Swap(0)
		return got
	}
	small := count(300)
	big := count(20000)
	if small == 0 || big > small+64 {
		t.Fatalf("retained values grew from %d (300 evaluations) to %d (20k)", small, big)
	}
}

// A second process of the context (its child node) does not serve the
// session: only the first claim gets it.
func TestContextClaimedOnce(t *testing.T) {
	v := newVM(t, nil)
	s := jsctx.New(jsctx.Options{})
	startContext(t, v, s)
	got, err := s.Evaluate(context.Background(), "require('child_process').execFileSync('node', ['-e', 'console.log(6*7)']).toString()")
	if err != nil || string(got) != `"42\n"` {
		t.Fatalf("%s %v", got, err)
	}
}
