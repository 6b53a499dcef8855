package secexec

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/internal/vmhost"
)

// ContextOptions configure a persistent JavaScript context.
type ContextOptions struct {
	// Env adds to the VM's environment for the context's process.
	Env map[string]string
	// Cwd is the working directory; empty means the VM's.
	Cwd string
	// Timeout, if positive, bounds each evaluation (as a ctx deadline
	// would; the sooner of the two applies).
	Timeout time.Duration
	// MaxOutput bounds the stdout and the stderr kept per evaluation
	// (each; 0 means 1 MiB, at most 4 MiB); the rest is dropped and
	// EvalResult.Truncated set.
	MaxOutput int
	// Stdout and Stderr, if set, receive what the context printed, after
	// each evaluation returns (EvaluateResult returns it too).
	Stdout io.Writer
	Stderr io.Writer
	// Background lets the context work between evaluations: its timers,
	// intervals and I/O callbacks then run whenever they are due, as in
	// a node process, and that work counts against the context process's
	// CPU time limit (Limits.CPUTime: a context over it dies). By default
	// a context does no work while no evaluation is in progress: its
	// event loop is paused between evaluations, and what became due
	// meanwhile (expired timers, finished I/O) runs at the start of the
	// next evaluation, before its code, within its deadline. Processes
	// the context spawned are processes of their own (each under the CPU
	// limit) and are killed with the context.
	Background bool
}

// ErrContextClosed is the error of evaluations on a closed JSContext
// (also when its VM was closed).
var ErrContextClosed = jsctx.ErrClosed

// ErrEvalTimeout is matched (errors.Is) by the error of an evaluation
// stopped because its ctx ended or ContextOptions.Timeout passed. The
// error also matches ctx's own error (context.DeadlineExceeded or
// context.Canceled). The context survives: its globals stay as they were
// when the script was stopped.
var ErrEvalTimeout = jsctx.ErrTimeout

// ContextDeadError reports a context whose process ended: its isolate
// reached the heap limit (or the external-memory limit), the guest called
// process.exit, an uncaught exception in a callback ended it, or its
// process was killed. Every later evaluation fails with it; the VM is
// unaffected.
type ContextDeadError = jsctx.DeadError

// EvalResult is an evaluation with its output.
type EvalResult struct {
	// Value is the JSON of the value (undefined and functions are null).
	Value json.RawMessage
	// Stdout and Stderr hold what the context printed since the
	// previous evaluation returned: timers and callbacks that ran at its
	// start (or, with Background, in between) included.
	Stdout, Stderr []byte
	// Truncated says output past ContextOptions.MaxOutput was dropped.
	Truncated bool
}

// JSContext is a persistent JavaScript context: one node process of the
// VM that keeps its globals between evaluations, like a REPL. Top-level
// var, let, const, function and class declarations persist; an
// expression using top-level await is awaited (its own declarations then
// stay local to it). The VM's permissions and limits apply as to any
// node process: it shows in /proc, Limits.MemoryBytes bounds its heap and
// Limits.CPUTime its total CPU time. Evaluations run one at a time; the
// methods are safe for concurrent use.
type JSContext struct {
	h    vmhost.JSContext
	opts ContextOptions

	closeOnce sync.Once
	closeErr  error
}

// NewContext starts a persistent JavaScript context. It needs the exec
// permission for node, as Execute does.
func (j *JS) NewContext(ctx context.Context, opts *ContextOptions) (*JSContext, error) {
	var o ContextOptions
	if opts != nil {
		o = *opts
	}
	h, err := j.vm.b.newContext(ctx, vmhost.ContextSpec{
		Env:        mergeEnv(j.vm.env, o.Env),
		Cwd:        o.Cwd,
		MaxOutput:  max(0, min(o.MaxOutput, 4<<20)),
		Background: o.Background,
	})
	if err != nil {
		return nil, err
	}
	return &JSContext{h: h, opts: o}, nil
}

// PID is the context's process id in its VM.
func (c *JSContext) PID() int { return c.h.PID() }

// Evaluate evaluates expr in the context, awaiting it if it is a
// promise, and returns its value as JSON (undefined and functions become
// null), with the same conventions as JS.Evaluate: a thrown error or a
// rejected promise is an *EvalError (whose Result holds the output).
// Output goes to ContextOptions.Stdout/Stderr when set; EvaluateResult
// returns it instead.
func (c *JSContext) Evaluate(ctx context.Context, expr string) (json.RawMessage, error) {
	res, err := c.EvaluateResult(ctx, expr)
	if err != nil {
		return nil, err
	}
	return res.Value, nil
}

// EvaluateResult is Evaluate returning the output with the value.
func (c *JSContext) EvaluateResult(ctx context.Context, expr string) (*EvalResult, error) {
	if c.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	r, err := c.h.Evaluate(ctx, expr)
	var res *EvalResult
	if r != nil {
		res = &EvalResult{Value: json.RawMessage(r.Value), Stdout: r.Stdout, Stderr: r.Stderr, Truncated: r.Truncated}
		if c.opts.Stdout != nil && len(r.Stdout) > 0 {
			_, _ = c.opts.Stdout.Write(r.Stdout)
		}
		if c.opts.Stderr != nil && len(r.Stderr) > 0 {
			_, _ = c.opts.Stderr.Write(r.Stderr)
		}
	}
	if err != nil {
		var th *jsctx.ThrownError
		if errors.As(err, &th) {
			ee := &EvalError{Stack: th.Stack, Result: &Result{ExitCode: 1, Outcome: Failed}}
			if res != nil {
				ee.Result.Stdout, ee.Result.Stderr, ee.Result.Truncated = res.Stdout, res.Stderr, res.Truncated
			}
			return nil, ee
		}
		return nil, apiErr(err)
	}
	if len(res.Value) == 0 || !json.Valid(res.Value) {
		return nil, &EvalError{Stack: "the value is not valid JSON", Result: &Result{ExitCode: 1, Outcome: Failed, Stdout: res.Stdout, Stderr: res.Stderr}}
	}
	return res, nil
}

// Close ends the context and kills its process; an evaluation in flight
// fails with ErrContextClosed. It is safe to call more than once; VM.Close
// closes the VM's contexts too.
func (c *JSContext) Close() error {
	c.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := apiErr(c.h.Close(ctx))
		if errors.Is(err, ErrClosed) {
			err = nil
		}
		c.closeErr = err
	})
	return c.closeErr
}
