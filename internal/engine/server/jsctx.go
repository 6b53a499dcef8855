package server

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// Persistent JavaScript contexts and host tools on the engine side.

// maxContexts bounds the contexts of one connection; each is a node
// process in one of its VMs, which the VM's process limit bounds too.
const maxContexts = 4096

type hostedCtx struct {
	vm  uint64
	ctx vmhost.JSContext
}

// jsState is a connection's contexts and the tool calls it waits for.
type jsState struct {
	ctxs     map[uint64]*hostedCtx
	nextCtx  uint64
	calls    map[uint64]chan *proto.ToolResult
	nextCall uint64
}

func (c *conn) newContext(ctx context.Context, b *proto.NewContext) *proto.Response {
	v, err := c.vm(b.VM)
	if err != nil {
		return errResp(err)
	}
	c.mu.Lock()
	if len(c.js.ctxs) >= maxContexts {
		c.mu.Unlock()
		return errResp(fmt.Errorf("engine: too many contexts: %w", errno.EAGAIN))
	}
	c.mu.Unlock()
	jc, err := v.host.NewContext(ctx, vmhost.ContextSpec{Env: b.Env, Cwd: b.Cwd, MaxOutput: b.MaxOutput, Background: b.Background})
	if err != nil {
		return errResp(err)
	}
	c.mu.Lock()
	if c.js.ctxs == nil {
		c.js.ctxs = make(map[uint64]*hostedCtx)
	}
	c.js.nextCtx++
	id := c.js.nextCtx
	c.js.ctxs[id] = &hostedCtx{vm: b.VM, ctx: jc}
	c.mu.Unlock()
	return &proto.Response{Context: id, PID: jc.PID()}
}

func (c *conn) jsContext(id uint64) (*hostedCtx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.js.ctxs[id]
	if h == nil {
		return nil, proto.ErrNoVM
	}
	return h, nil
}

func (c *conn) evaluate(ctx context.Context, b *proto.Evaluate) *proto.Response {
	h, err := c.jsContext(b.Context)
	if err != nil {
		return errResp(err)
	}
	if b.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(b.Timeout))
		defer cancel()
	}
	res, err := h.ctx.Evaluate(ctx, b.Expr)
	resp := errResp(err)
	if res != nil {
		// The output travels with errors too: a thrown error's context.
		resp.Stdout, resp.Stderr, resp.Truncated = res.Stdout, res.Stderr, res.Truncated
		if err == nil {
			resp.Value = res.Value
			if len(resp.Value) == 0 {
				resp.Value = []byte("null")
			}
		}
	}
	return resp
}

func (c *conn) closeContext(ctx context.Context, id uint64) *proto.Response {
	c.mu.Lock()
	h := c.js.ctxs[id]
	delete(c.js.ctxs, id)
	c.mu.Unlock()
	if h == nil {
		return errResp(proto.ErrNoVM)
	}
	return errResp(h.ctx.Close(ctx))
}

// forgetContexts drops the contexts of a closed VM (closing it ended
// them).
func (c *conn) forgetContexts(vm uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, h := range c.js.ctxs {
		if h.vm == vm {
			delete(c.js.ctxs, id)
		}
	}
}

// toolResult routes a ToolResult to the call waiting for it; results for
// calls that gave up are dropped.
func (c *conn) toolResult(id uint64, r *proto.ToolResult) {
	c.mu.Lock()
	ch := c.js.calls[id]
	delete(c.js.calls, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// remoteTools runs a VM's host tools in the client: each call is a
// ToolCall frame answered by a ToolResult. The kernel has checked the
// policy and bounded the arguments; the client runs the function.
type remoteTools struct {
	c     *conn
	vm    uint64
	names []string
}

func (t *remoteTools) Has(name string) bool { return slices.Contains(t.names, name) }
func (t *remoteTools) Names() []string      { return slices.Clone(t.names) }

func (t *remoteTools) Call(ctx context.Context, call kernel.ToolCall) ([]byte, error) {
	c := t.c
	ch := make(chan *proto.ToolResult, 1)
	c.mu.Lock()
	if c.js.calls == nil {
		c.js.calls = make(map[uint64]chan *proto.ToolResult)
	}
	c.js.nextCall++
	id := c.js.nextCall
	c.js.calls[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.js.calls, id)
		c.mu.Unlock()
	}()
	var timeout int64
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(int64(time.Until(dl)), 1)
	}
	err := c.w.Write(proto.TToolCall, id, &proto.ToolCall{VM: t.vm, Name: call.Name, Args: call.Args, Pid: call.Pid, Timeout: timeout})
	if err != nil {
		return nil, &kernel.ToolError{Code: kernel.ToolFailed, Tool: call.Name, Message: "the client could not be reached", Err: err}
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err.Err()
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, &kernel.ToolError{Code: kernel.ToolFailed, Tool: call.Name, Message: "the client went away"}
	}
}
