package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Host tools are functions of the embedder that guests may call by name
// (node's require('secexec:tools'), the /usr/bin/tool command). The
// kernel owns the rules every call obeys, so both kinds of guest get the
// same ones: the tool policy decides first (a denied guest cannot even
// learn whether a name exists), then the name must be registered, the
// arguments must be JSON within Limits.ToolBytes, the call gets
// Limits.ToolTimeout, and the result must be JSON within the same bound.

// Tool error codes, as the guest sees them (an Error's code in node, the
// first word of the tool command's message).
const (
	ToolDenied   = "ERR_TOOL_DENIED"    // no tool rule allows the name
	ToolNotFound = "ERR_TOOL_NOT_FOUND" // the embedder registered no such tool
	ToolInvalid  = "ERR_TOOL_INVALID"   // the arguments are not JSON, or the name is malformed
	ToolTooLarge = "ERR_TOOL_TOO_LARGE" // arguments or result over Limits.ToolBytes
	ToolTimeout  = "ERR_TOOL_TIMEOUT"   // the call outlived Limits.ToolTimeout
	ToolFailed   = "ERR_TOOL_FAILED"    // the tool returned an error, panicked or returned bad JSON
)

// MaxToolName bounds a tool's name.
const MaxToolName = 256

// maxToolCalls bounds the tool calls in flight in one VM; more wait.
const maxToolCalls = 64

// ToolError is the error of a failed tool call. Code is one of the Tool*
// codes; Message is the embedder's text (for ToolFailed) or the kernel's.
type ToolError struct {
	Code    string
	Tool    string
	Message string
	// Err is the cause, when there is one in this process (a
	// *policy.DeniedError for ToolDenied, the tool's own error for
	// ToolFailed); errors.Is and errors.As see it.
	Err error
}

func (e *ToolError) Error() string {
	return "tool " + quoteName(e.Tool) + ": " + e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *ToolError) Unwrap() error { return e.Err }

func quoteName(s string) string {
	if !utf8.ValidString(s) || strings.ContainsAny(s, " \t\r\n\x00\"") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// ToolCall is one call of a host tool: its name, the JSON arguments and
// the pid of the calling process.
type ToolCall struct {
	Name string
	Args []byte
	Pid  int
}

// ToolHost runs the tools the embedder registered. Call gets a context
// that ends at Limits.ToolTimeout; the kernel stops waiting then even if
// Call does not return. It must be safe for concurrent use.
type ToolHost interface {
	// Call runs a tool and returns its JSON result. A *ToolError is
	// passed to the guest as it is; any other error is ToolFailed.
	Call(ctx context.Context, call ToolCall) ([]byte, error)
	// Has reports whether a tool of that name is registered.
	Has(name string) bool
	// Names lists the registered tools.
	Names() []string
}

// ToolAuthorizer decides whether a guest may call the tool name; it
// returns nil or an error wrapping errno.EACCES.
type ToolAuthorizer func(name string) error

func toolErr(code, name, msg string, cause error) *ToolError {
	return &ToolError{Code: code, Tool: name, Message: msg, Err: cause}
}

// CallTool calls the host tool name with JSON args on behalf of p.
func (p *Process) CallTool(ctx context.Context, name string, args []byte) ([]byte, error) {
	k := p.k
	if name == "" || len(name) > MaxToolName || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return nil, toolErr(ToolInvalid, name, "a tool name is 1 to 256 bytes of UTF-8 without NUL", nil)
	}
	if k.authTool == nil {
		return nil, toolErr(ToolDenied, name, "no tool rule allows it", nil)
	}
	if err := k.authTool(name); err != nil {
		return nil, toolErr(ToolDenied, name, "no tool rule allows it", err)
	}
	if k.tools == nil || !k.tools.Has(name) {
		return nil, toolErr(ToolNotFound, name, "no such tool", nil)
	}
	limit := k.limits.ToolBytes
	if len(args) > limit {
		return nil, toolErr(ToolTooLarge, name, fmt.Sprintf("arguments of %d bytes exceed the limit of %d", len(args), limit), nil)
	}
	if len(args) == 0 {
		args = []byte("null")
	}
	if !json.Valid(args) {
		return nil, toolErr(ToolInvalid, name, "the arguments are not valid JSON", nil)
	}
	select {
	case k.toolSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-k.toolSlots }()

	cctx, cancel := context.WithTimeout(ctx, k.limits.ToolTimeout)
	defer cancel()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	call := ToolCall{Name: name, Args: append([]byte(nil), args...), Pid: p.pid}
	// The embedder's function runs on its own goroutine so that one that
	// ignores its context cannot hold the guest past the timeout.
	go func() {
		out, err := safeToolCall(cctx, k.tools, call)
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-cctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, toolErr(ToolTimeout, name, fmt.Sprintf("no result within %v", k.limits.ToolTimeout), context.DeadlineExceeded)
	}
	if r.err != nil {
		var te *ToolError
		if errors.As(r.err, &te) {
			return nil, te
		}
		if errors.Is(r.err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, toolErr(ToolTimeout, name, fmt.Sprintf("no result within %v", k.limits.ToolTimeout), r.err)
		}
		return nil, toolErr(ToolFailed, name, r.err.Error(), r.err)
	}
	if len(r.out) > limit {
		return nil, toolErr(ToolTooLarge, name, fmt.Sprintf("a result of %d bytes exceeds the limit of %d", len(r.out), limit), nil)
	}
	if len(r.out) == 0 {
		return []byte("null"), nil
	}
	if !json.Valid(r.out) {
		return nil, toolErr(ToolFailed, name, "the tool returned invalid JSON", nil)
	}
	return r.out, nil
}

// safeToolCall runs the embedder's tool, turning a panic into ToolFailed:
// a broken tool must not take the VM's host down.
func safeToolCall(ctx context.Context, h ToolHost, call ToolCall) (out []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, toolErr(ToolFailed, call.Name, fmt.Sprintf("the tool panicked: %v", v), nil)
		}
	}()
	return h.Call(ctx, call)
}

// ToolNames lists the registered tools the policy lets a guest call, in
// order.
func (k *Kernel) ToolNames() []string {
	visible := k.toolSeen
	if visible == nil {
		visible = k.authTool
	}
	if k.tools == nil || visible == nil {
		return []string{}
	}
	out := []string{}
	for _, n := range k.tools.Names() {
		if visible(n) == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ToolTimeout is the bound on one tool call.
func (k *Kernel) ToolTimeout() time.Duration { return k.limits.ToolTimeout }
