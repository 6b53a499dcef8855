package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// JS runs JavaScript in a VM.
type JS struct{ vm *VM }

// Execute runs a CommonJS script as node would, like VM.Exec runs a
// command.
func (j *JS) Execute(ctx context.Context, src string, opts *ExecOptions) (*Result, error) {
	return j.vm.exec(ctx, "/js/execute", execJSON{Code: src}, opts)
}

// Evaluate evaluates an expression (awaited if it is a promise) and
// returns its value as JSON. A throw is an *Error matching ErrEval
// whose message is the guest's stack. Output writers in opts are not
// used (the route answers the value only).
func (j *JS) Evaluate(ctx context.Context, expr string, opts *ExecOptions) (json.RawMessage, error) {
	if opts == nil {
		opts = &ExecOptions{}
	}
	o := *opts
	o.Stdout, o.Stderr = nil, nil
	stdin, err := encodeStdin(o.Stdin)
	if err != nil {
		return nil, err
	}
	req := execJSON{Code: expr, Stdin: stdin, Env: o.Env, Cwd: o.Cwd, MaxOutput: o.MaxOutput, TimeoutMS: o.Timeout.Milliseconds()}
	cl, err := jsonCall("POST", j.vm.path("/js/evaluate"), req)
	if err != nil {
		return nil, err
	}
	// An evaluation may run as long as its timeout: not a control call.
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	if err := j.vm.c.answerJSON(ctx, cl, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// ContextOptions configure NewContext.
type ContextOptions struct {
	// Timeout bounds each evaluation (the server's maximum if zero or
	// larger); one past it fails with ErrEvalTimeout.
	Timeout time.Duration
}

// JSContext is a persistent JavaScript context: globals survive between
// evaluations.
type JSContext struct {
	vm *VM
	id string
}

// NewContext creates a persistent context in the VM.
func (j *JS) NewContext(ctx context.Context, opts *ContextOptions) (*JSContext, error) {
	var req struct {
		TimeoutMS int64 `json:"timeout_ms,omitempty"`
	}
	if opts != nil {
		req.TimeoutMS = opts.Timeout.Milliseconds()
	}
	cl, err := jsonCall("POST", j.vm.path("/contexts"), req)
	if err != nil {
		return nil, err
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := j.vm.c.doJSON(ctx, cl, &out); err != nil {
		return nil, err
	}
	return &JSContext{vm: j.vm, id: out.ID}, nil
}

// ID returns the context's id.
func (c *JSContext) ID() string { return c.id }

// Evaluate evaluates code in the context and returns its value as JSON.
func (c *JSContext) Evaluate(ctx context.Context, code string) (json.RawMessage, error) {
	cl, err := jsonCall("POST", c.vm.path("/contexts/"+url.PathEscape(c.id)+"/evaluate"), map[string]string{"code": code})
	if err != nil {
		return nil, err
	}
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	// An evaluation may run as long as the context's timeout: not a
	// control call.
	if err := c.vm.c.answerJSON(ctx, cl, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// Close ends the context.
func (c *JSContext) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return c.vm.c.doJSON(ctx, &call{method: "DELETE", path: c.vm.path("/contexts/" + url.PathEscape(c.id))}, nil)
}
