package secexec_test

import (
	"bytes"
	"context"
	"errors"
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
		c2 := newContext(t, vm, nil)
		if got := evalString(t, c2, "typeof counter"); got != `"undefined"` {
			t.Fatalf("second context sees counter: %s", got)
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

var _ = sync.Mutex{}
var _ = time.Second
