package secexec_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

func newContext(t *testing.T, vm *secexec.VM, opts *secexec.ContextOptions) *secexec.JSContext {
	t.Helper()
	c, err := vm.JS().NewContext(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func evalString(t *testing.T, c *secexec.JSContext, expr string) string {
	t.Helper()
	v, err := c.Evaluate(context.Background(), expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return string(v)
}

// A context keeps its globals between evaluations, as a REPL does, and
// answers with the same conventions as JS.Evaluate.
func TestContextPersists(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		vm := newVM(t, allowAll)
		var out bytes.Buffer
		c := newContext(t, vm, &secexec.ContextOptions{Stdout: &out})
		for _, step := range []struct{ expr, want string }{
			{"1+1", "2"},
			{"let counter = 40; const k = 2; function inc() { return ++counter } var v = 'x'; class K { get y() { return 7 } }", "null"},
			{"inc() + k", "43"},
			{"counter", "41"},
			{"new K().y + v", `"7x"`},
			{"globalThis.later = Promise.resolve({a: [1, 2]}); later", `{"a":[1,2]}`},
			{"await new Promise((r) => setTimeout(() => r(counter), 5))", "41"},
			{"undefined", "null"},
			{"(() => {})", "null"},
			{"require('path').join('a', 'b')", `"a/b"`},
			{"process.pid > 1", "true"},
		} {
			if got := evalString(t, c, step.expr); got != step.want {
				t.Fatalf("%s = %s, want %s", step.expr, got, step.want)
			}
		}
		// A thrown error and a rejection are *EvalError, and the
		// context keeps going.
		_, err := c.Evaluate(ctx, `throw new TypeError("bad " + counter)`)
		var ee *secexec.EvalError
		if !errors.As(err, &ee) || !strings.Contains(ee.Stack, "TypeError: bad 41") {
			t.Fatalf("throw: %v", err)
		}
		_, err = c.Evaluate(ctx, `console.log("before"); Promise.reject(new Error("nope"))`)
		if !errors.As(err, &ee) || !strings.Contains(ee.Stack, "nope") || string(ee.Result.Stdout) != "before\n" {
			t.Fatalf("reject: %v", err)
		}
		if _, err := c.Evaluate(ctx, `let counter = 1`); !secexec.IsEvalError(err) {
			t.Fatalf("redeclaration: %v", err)
		}
		// Output comes back with its evaluation, and goes to the writer.
		res, err := c.EvaluateResult(ctx, `console.log("hello"); console.error("warn"); process.stdout.write("raw"); 5`)
		if err != nil || string(res.Value) != "5" || string(res.Stdout) != "hello\nraw" || string(res.Stderr) != "warn\n" {
			t.Fatalf("output: %+v %v", res, err)
		}
		if !strings.Contains(out.String(), "before\n") || !strings.HasSuffix(out.String(), "hello\nraw") {
			t.Fatalf("writer got %q", out.String())
		}
		// The context is a process of the VM.
		r, err := vm.Exec(ctx, "cat /proc/"+itoa(c.PID())+"/cmdline", nil)
		if err != nil || !strings.HasPrefix(string(r.Stdout), "node") {
			t.Fatalf("/proc: %v %q %q", err, r.Stdout, r.Stderr)
		}
		// Two contexts do not share globals.
		c2 := newContext(t, vm, &secexec.ContextOptions{Env: map[string]string{"GREETING": "hi"}, Cwd: "/tmp"})
		if got := evalString(t, c2, "typeof counter"); got != `"undefined"` {
			t.Fatalf("second context sees counter: %s", got)
		}
		if got := evalString(t, c2, "[process.env.GREETING, process.cwd(), process.env.HOME]"); got != `["hi","/tmp","/home/user"]` {
			t.Fatalf("env and cwd: %s", got)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Evaluate(ctx, "1"); !errors.Is(err, secexec.ErrContextClosed) {
			t.Fatalf("after Close: %v", err)
		}
	})
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// A runaway evaluation ends at its deadline with a typed error; V8
// terminated it cleanly, so the context and its globals live on. The same
// holds for a loop in a callback while the evaluation's promise waits,
// for the turbofan-unrolled loop V8 once missed, and for a toJSON that
// never returns.
func TestContextTimeout(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		vm := newVM(t, allowAll)
		c := newContext(t, vm, nil)
		evalString(t, c, "let kept = 'still here'")
		for _, expr := range []string{
			"while(1){}",
			"(function(){ let x; while(1){ x = new Array(1e3).fill(0) } })()",
			"new Promise((r) => setTimeout(() => { for(;;){} }, 1))",
			"new Promise(() => {})",
			"({ toJSON() { for(;;){} } })",
			"await new Promise(() => {})",
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			t0 := time.Now()
			_, err := c.Evaluate(ctx, expr)
			cancel()
			if !errors.Is(err, secexec.ErrEvalTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: %v", expr, err)
			}
			if d := time.Since(t0); d > 5*time.Second {
				t.Fatalf("%s: took %v", expr, d)
			}
			if got := evalString(t, c, "kept"); got != `"still here"` {
				t.Fatalf("after %s: %s", expr, got)
			}
		}
		// ContextOptions.Timeout bounds evaluations without a deadline.
		c2 := newContext(t, vm, &secexec.ContextOptions{Timeout: 200 * time.Millisecond})
		if _, err := c2.Evaluate(context.Background(), "for(;;){}"); !errors.Is(err, secexec.ErrEvalTimeout) {
			t.Fatalf("options timeout: %v", err)
		}
		if got := evalString(t, c2, "6*7"); got != "42" {
			t.Fatalf("after options timeout: %s", got)
		}
		// Cancelling ctx stops it too, with the cancellation.
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		if _, err := c.Evaluate(ctx, "for(;;){}"); !errors.Is(err, secexec.ErrEvalTimeout) || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel: %v", err)
		}
		if got := evalString(t, c, "kept"); got != `"still here"` {
			t.Fatalf("after cancel: %s", got)
		}
	})
}

// A context that fills its heap is dead and says so; the VM and other
// contexts are unaffected.
func TestContextHeapExhaustion(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		opts := allowAll
		opts.Limits.MemoryBytes = 64 << 20
		vm := newVM(t, opts)
		c := newContext(t, vm, nil)
		other := newContext(t, vm, nil)
		evalString(t, other, "let survivor = 1")
		_, err := c.Evaluate(ctx, "const a = []; for (;;) a.push({x: a.length, y: 'y'.repeat(16)})")
		var dead *secexec.ContextDeadError
		if !errors.As(err, &dead) || !strings.Contains(dead.Reason, "heap") {
			t.Fatalf("heap: %v", err)
		}
		if _, err := c.Evaluate(ctx, "1"); !errors.As(err, &dead) {
			t.Fatalf("after death: %v", err)
		}
		if got := evalString(t, other, "survivor + 1"); got != "2" {
			t.Fatalf("other context: %s", got)
		}
		r, err := vm.Exec(ctx, "echo alive", nil)
		if err != nil || string(r.Stdout) != "alive\n" {
			t.Fatalf("VM after a dead context: %v %q", err, r.Stdout)
		}
		// process.exit ends a context too.
		c3 := newContext(t, vm, nil)
		_, err = c3.Evaluate(ctx, "process.exit(3)")
		if !errors.As(err, &dead) || !strings.Contains(dead.Reason, "process.exit(3)") {
			t.Fatalf("exit: %v", err)
		}
	})
}

// Close while an evaluation runs answers it with ErrContextClosed; VM.Close
// closes the VM's contexts.
func TestContextClose(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		vm := newVM(t, allowAll)
		c := newContext(t, vm, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Evaluate(ctx, "for(;;){}")
			errc <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, secexec.ErrContextClosed) {
				t.Fatalf("in flight: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("evaluation in flight not answered after Close")
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		c2 := newContext(t, vm, nil)
		go func() {
			_, err := c2.Evaluate(ctx, "new Promise(() => {})")
			errc <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if err := vm.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, secexec.ErrContextClosed) && !errors.Is(err, secexec.ErrClosed) {
				t.Fatalf("in flight at VM.Close: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("evaluation in flight not answered after VM.Close")
		}
		if _, err := c2.Evaluate(ctx, "1"); !errors.Is(err, secexec.ErrContextClosed) && !errors.Is(err, secexec.ErrClosed) {
			t.Fatalf("after VM.Close: %v", err)
		}
		if _, err := vm.JS().NewContext(ctx, nil); !errors.Is(err, secexec.ErrClosed) {
			t.Fatalf("NewContext on a closed VM: %v", err)
		}
	})
}

// Evaluations from many goroutines run one at a time, each answered once.
func TestContextConcurrent(t *testing.T) {
	vm := newTestProgramsVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	c := newContext(t, vm, nil)
	evalString(t, c, "let n = 0")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Evaluate(context.Background(), "n++"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := evalString(t, c, "n"); got != "20" {
		t.Fatalf("n = %s", got)
	}
	// A caller queued behind a long evaluation gives up at its deadline.
	done := make(chan error, 1)
	go func() {
		_, err := c.Evaluate(context.Background(), "await new Promise((r) => setTimeout(r, 1500))")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if _, err := c.Evaluate(ctx, "1"); !errors.Is(err, secexec.ErrEvalTimeout) || time.Since(t0) > time.Second {
		t.Fatalf("queued: %v after %v", err, time.Since(t0))
	}
	if err := <-done; err != nil {
		t.Fatalf("long evaluation: %v", err)
	}
}

// What a context hands back is bounded: a huge value is a typed "too
// large" error, a huge exception text and output are cut; the context
// lives on.
func TestContextBounds(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		vm := newVM(t, allowAll)
		c := newContext(t, vm, &secexec.ContextOptions{MaxOutput: 1000})
		evalString(t, c, "let big = 'x'.repeat(5 * 2**20)")
		_, err := c.Evaluate(ctx, "big")
		var tl *secexec.TooLargeError
		if !errors.As(err, &tl) || tl.Limit != 4<<20 || tl.Size < 5<<20 {
			t.Fatalf("huge value: %v", err)
		}
		_, err = c.Evaluate(ctx, "throw new Error(big)")
		var ee *secexec.EvalError
		if !errors.As(err, &ee) || len(ee.Stack) > 64<<10 || !strings.HasPrefix(ee.Stack, "Error: xxx") {
			t.Fatalf("huge throw: %d bytes, %T", len(ee.Stack), err)
		}
		res, err := c.EvaluateResult(ctx, "console.log(big.slice(0, 5000)); 1")
		if err != nil || len(res.Stdout) != 1000 || !res.Truncated {
			t.Fatalf("output: %d bytes, truncated %v, %v", len(res.Stdout), res.Truncated, err)
		}
		if got := evalString(t, c, "big.length"); got != "5242880" {
			t.Fatalf("after: %s", got)
		}
		got := evalString(t, c, "require('secexec:tools').call('n'.repeat(1e8)).catch((e) => e.code)")
		if got != `"ERR_TOOL_INVALID"` {
			t.Fatalf("huge tool name: %s", got)
		}
	})
}

// A context needs the exec permission for node, as any node process.
func TestContextDenied(t *testing.T) {
	vm := newVM(t, secexec.Options{Engine: secexec.EngineInProcess})
	_, err := vm.JS().NewContext(context.Background(), nil)
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("without exec permission: %v", err)
	}
}

// BenchmarkContextEvaluate is evaluate on a live context, per engine
// mode (the bench command's context-eval row in Go).
func BenchmarkContextEvaluate(b *testing.B) {
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			ctx := context.Background()
			vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll(), Engine: tr.mode})
			if err != nil {
				b.Fatal(err)
			}
			defer vm.Close()
			c, err := vm.JS().NewContext(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ResetTimer()
			for b.Loop() {
				v, err := c.Evaluate(ctx, "1+1")
				if err != nil || string(v) != "2" {
					b.Fatalf("%s %v", v, err)
				}
			}
		})
	}
}
