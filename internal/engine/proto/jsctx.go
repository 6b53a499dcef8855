package proto

import (
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
)

// Persistent JavaScript contexts and host tools (protocol version 2).

// Bounds of the context and tool messages.
const (
	// MaxEvalValue bounds the JSON of one evaluation's value.
	MaxEvalValue = vmhost.MaxEvalValue
	// MaxEvalOutput bounds each of an evaluation's stdout and stderr.
	MaxEvalOutput = 4 << 20
	// MaxExpr bounds the source of one evaluation.
	MaxExpr = 4 << 20
)

// NewContext starts a persistent JavaScript context in VM: a node
// process that evaluates Evaluate requests in one global scope. The
// Response carries the context's id (Context) and its process's pid.
type NewContext struct {
	VM        uint64   `cbor:"1,keyasint"`
	Env       []string `cbor:"2,keyasint,omitempty"`
	Cwd       string   `cbor:"3,keyasint,omitempty"`
	MaxOutput int      `cbor:"4,keyasint,omitempty"` // per evaluation and stream; at most MaxEvalOutput
	// Background lets the context's timers and I/O callbacks run between
	// evaluations (see vmhost.ContextSpec.Background).
	Background bool `cbor:"5,keyasint,omitempty"`
}

// Evaluate evaluates Expr in Context. The Response carries the value's
// JSON (Value) and the output since the previous evaluation (Stdout,
// Stderr, Truncated), the output also with an error. Cancel or the
// Timeout stop the evaluation (an error matching jsctx.ErrTimeout); the
// context lives on.
type Evaluate struct {
	Context uint64 `cbor:"1,keyasint"`
	Expr    string `cbor:"2,keyasint"`
	Timeout int64  `cbor:"3,keyasint,omitempty"` // nanoseconds; 0: none
}

// ContextRef names the context CloseContext ends.
type ContextRef struct {
	Context uint64 `cbor:"1,keyasint"`
}

// ToolCall asks the client to run the host tool Name of VM for a guest
// (engine → client; the id is the engine's, answered by one ToolResult
// with the same id). The client gives the tool at most Timeout.
type ToolCall struct {
	VM      uint64 `cbor:"1,keyasint"`
	Name    string `cbor:"2,keyasint"`
	Args    []byte `cbor:"3,keyasint,omitempty"` // JSON, at most kernel.MaxToolBytes
	Pid     int    `cbor:"4,keyasint,omitempty"`
	Timeout int64  `cbor:"5,keyasint,omitempty"` // nanoseconds
}

// ToolResult answers ToolCall id: the JSON result, or Err (a
// *kernel.ToolError travels as KindTool).
type ToolResult struct {
	Result []byte `cbor:"1,keyasint,omitempty"`
	Err    *Error `cbor:"2,keyasint,omitempty"`
}

func validateJSCtx(f Frame) (bool, error) {
	switch b := f.Body.(type) {
	case *NewContext:
		if b.MaxOutput < 0 || b.MaxOutput > MaxEvalOutput {
			return true, errBadSize
		}
	case *Evaluate:
		if b.Timeout < 0 {
			return true, errNegTimeout
		}
		if len(b.Expr) > MaxExpr {
			return true, errBadSize
		}
	case *ToolCall:
		if b.Timeout < 0 {
			return true, errNegTimeout
		}
		if len(b.Args) > kernel.MaxToolBytes || len(b.Name) > kernel.MaxToolName {
			return true, errBadSize
		}
	case *ToolResult:
		if len(b.Result) > kernel.MaxToolBytes {
			return true, errBadSize
		}
		if b.Err != nil {
			return true, b.Err.validate()
		}
	default:
		return false, nil
	}
	return true, nil
}
