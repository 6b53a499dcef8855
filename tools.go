package secexec

import (
	"context"
	"encoding/json"
	"slices"
	"sort"

	"github.com/secexec/secexec/kernel"
)

// Tool is a host function guests may call by name (Options.Tools): from
// node as `await require('secexec:tools').call(name, args)`, from a shell
// as `tool NAME [JSON-ARGS]`. It runs in this program, whichever engine
// mode the VM uses. ctx ends at Limits.ToolTimeout (or when the VM goes);
// the guest is answered then even if the function goes on. A returned
// *ToolError reaches the guest as it is; any other error, a panic or a
// result that is not JSON is ERR_TOOL_FAILED; a nil result is null.
type Tool func(ctx context.Context, call ToolCall) (json.RawMessage, error)

// ToolCall is one call of a Tool.
type ToolCall struct {
	// Name is the tool's name as registered.
	Name string
	// Args is the JSON the guest passed (null if none), at most
	// Limits.ToolBytes.
	Args json.RawMessage
	// Pid is the calling process's id in the VM.
	Pid int
}

// ToolError is a failed tool call, as the guest sees it: node rejects
// with an Error whose code is Code; the tool command prints
// "tool: CODE: message" and exits 1.
type ToolError = kernel.ToolError

// Tool error codes.
const (
	ToolDenied   = kernel.ToolDenied   // no tool rule of the policy allows the name
	ToolNotFound = kernel.ToolNotFound // no tool of that name is registered
	ToolInvalid  = kernel.ToolInvalid  // the arguments are not JSON
	ToolTooLarge = kernel.ToolTooLarge // arguments or result over Limits.ToolBytes
	ToolTimeout  = kernel.ToolTimeout  // no result within Limits.ToolTimeout
	ToolFailed   = kernel.ToolFailed   // the tool failed, panicked or returned bad JSON
)

// toolSet adapts Options.Tools to the kernel's ToolHost. It is a copy,
// so a caller changing its map later changes nothing.
type toolSet struct {
	fns   map[string]Tool
	names []string
}

func newToolSet(m map[string]Tool) *toolSet {
	if len(m) == 0 {
		return nil
	}
	t := &toolSet{fns: make(map[string]Tool, len(m))}
	for name, fn := range m {
		if fn != nil {
			t.fns[name] = fn
			t.names = append(t.names, name)
		}
	}
	sort.Strings(t.names)
	return t
}

func (t *toolSet) Has(name string) bool { _, ok := t.fns[name]; return ok }
func (t *toolSet) Names() []string      { return slices.Clone(t.names) }

func (t *toolSet) Call(ctx context.Context, call kernel.ToolCall) ([]byte, error) {
	fn := t.fns[call.Name]
	if fn == nil {
		return nil, &ToolError{Code: ToolNotFound, Tool: call.Name, Message: "no such tool"}
	}
	return fn(ctx, ToolCall{Name: call.Name, Args: json.RawMessage(call.Args), Pid: call.Pid})
}

// toolHost is Options.Tools as a ToolHost, nil when there are none (a
// nil *toolSet must not become a non-nil interface).
func toolHost(m map[string]Tool) kernel.ToolHost {
	if t := newToolSet(m); t != nil {
		return t
	}
	return nil
}
