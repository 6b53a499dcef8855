package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
)

// Persistent JavaScript contexts and host tools on the client side.

// NewContext starts a persistent JavaScript context in the VM.
func (v *VM) NewContext(ctx context.Context, spec vmhost.ContextSpec) (vmhost.JSContext, error) {
	req := &proto.NewContext{VM: v.id, Env: spec.Env, Cwd: spec.Cwd, MaxOutput: max(0, min(spec.MaxOutput, proto.MaxEvalOutput)), Background: spec.Background}
	r, err := v.call(ctx, proto.TNewContext, req)
	if err != nil {
		return nil, err
	}
	return &Context{v: v, id: r.Context, pid: r.PID}, nil
}

// Context is a persistent JavaScript context in an engine.
type Context struct {
	v   *VM
	id  uint64
	pid int
}

// PID is the context's process id in its VM.
func (c *Context) PID() int { return c.pid }

// Evaluate evaluates expr in the context: one Evaluate request, with ctx's
// deadline as its timeout. When ctx ends the engine stops the evaluation
// and still answers (with the output so far), which the call waits for.
func (c *Context) Evaluate(ctx context.Context, expr string) (*vmhost.EvalResult, error) {
	if len(expr) > proto.MaxExpr {
		return nil, &vmhost.TooLargeError{What: "expression", Size: int64(len(expr)), Limit: proto.MaxExpr}
	}
	if err := c.v.Err(); err != nil {
		return nil, err
	}
	req := &proto.Evaluate{Context: c.id, Expr: expr}
	if dl, ok := ctx.Deadline(); ok {
		req.Timeout = max(int64(time.Until(dl)), 1)
	}
	// The engine applies the deadline itself (and answers "timed out"
	// with the output so far); only a cancellation is sent as Cancel.
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	defer stop()
	r, err := c.v.c.callDrain(callCtx, proto.TEvaluate, req, true)
	if r == nil {
		return nil, c.fix(err)
	}
	res := &vmhost.EvalResult{Value: r.Value, Stdout: r.Stdout, Stderr: r.Stderr, Truncated: r.Truncated}
	return res, c.fix(err)
}

// fix maps "no such context" to why: the VM is gone, or the context was
// closed.
func (c *Context) fix(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, proto.ErrNoVM) {
		if e := c.v.Err(); e != nil {
			return e
		}
		return jsctx.ErrClosed
	}
	return err
}

// Close ends the context; it may be called again.
func (c *Context) Close(ctx context.Context) error {
	if c.v.Err() != nil {
		return nil
	}
	_, err := c.v.c.call(context.WithoutCancel(ctx), proto.TCloseContext, &proto.ContextRef{Context: c.id})
	if errors.Is(err, proto.ErrNoVM) || errors.Is(err, ErrLost) || errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// maxToolCalls bounds the host tool calls one connection runs at once;
// an engine that asks for more is answered ERR_TOOL_FAILED at once (the
// engine's own bound per VM is lower, so only a misbehaving engine
// reaches it).
const maxToolCalls = 1024

// runTool runs a host tool for the engine and answers its ToolCall.
// Everything in the request is checked: the engine may be a guest's.
func (c *Conn) runTool(id uint64, b *proto.ToolCall) {
	reply := func(res []byte, err error) {
		_ = c.send(proto.TToolResult, id, &proto.ToolResult{Result: res, Err: proto.ErrorOf(err)})
	}
	c.mu.Lock()
	v := c.vms[b.VM]
	busy := c.toolCalls >= maxToolCalls
	if !busy {
		c.toolCalls++
	}
	c.mu.Unlock()
	fail := func(code, msg string) {
		reply(nil, &kernel.ToolError{Code: code, Tool: b.Name, Message: msg})
	}
	if busy {
		fail(kernel.ToolFailed, "too many tool calls in flight")
		return
	}
	go func() {
		defer func() {
			c.mu.Lock()
			c.toolCalls--
			c.mu.Unlock()
		}()
		if v == nil || v.tools == nil || !v.tools.Has(b.Name) {
			fail(kernel.ToolNotFound, "no such tool")
			return
		}
		timeout := time.Duration(b.Timeout)
		if timeout <= 0 || timeout > v.toolTimeout {
			timeout = v.toolTimeout
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		go func() {
			select {
			case <-v.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		out, err := safeTool(ctx, v.tools, kernel.ToolCall{Name: b.Name, Args: b.Args, Pid: b.Pid})
		if err == nil && len(out) > v.toolBytes {
			fail(kernel.ToolTooLarge, fmt.Sprintf("a result of %d bytes exceeds the limit of %d", len(out), v.toolBytes))
			return
		}
		var te *kernel.ToolError
		if err != nil && !errors.As(err, &te) {
			if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
				fail(kernel.ToolTimeout, fmt.Sprintf("no result within %v", timeout))
				return
			}
			fail(kernel.ToolFailed, err.Error())
			return
		}
		reply(out, err)
	}()
}

// safeTool runs the embedder's function; a panic is its failure, not the
// program's.
func safeTool(ctx context.Context, h kernel.ToolHost, call kernel.ToolCall) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &kernel.ToolError{Code: kernel.ToolFailed, Tool: call.Name, Message: fmt.Sprintf("the tool panicked: %v", p)}
		}
	}()
	return h.Call(ctx, call)
}
