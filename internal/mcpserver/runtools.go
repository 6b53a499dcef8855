package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/secexec/secexec"
)

type execIn struct {
	VMID      string            `json:"vm_id" jsonschema:"the id vm_create returned"`
	Command   string            `json:"command,omitempty" jsonschema:"a command line; shell syntax (pipes, redirections, &&) runs under sh -c. Give command or argv"`
	Argv      []string          `json:"argv,omitempty" jsonschema:"the program and its arguments, run as is without a shell. Give command or argv"`
	Stdin     string            `json:"stdin,omitempty" jsonschema:"text given to the program on standard input"`
	Cwd       string            `json:"cwd,omitempty" jsonschema:"working directory (default the VM's)"`
	Env       map[string]string `json:"env,omitempty" jsonschema:"environment variables added for this command"`
	TimeoutMS int64             `json:"timeout_ms,omitempty" jsonschema:"wall-clock limit in milliseconds; the command is then killed and exits 124 (default and maximum set by the server)"`
}

type execOut struct {
	ExitCode        int     `json:"exit_code"`
	Outcome         string  `json:"outcome" jsonschema:"succeeded, failed, timed_out or cancelled"`
	Reason          string  `json:"reason,omitempty" jsonschema:"for timed_out: timeout or cpu_time"`
	Signal          string  `json:"signal,omitempty"`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutBase64    string  `json:"stdout_base64,omitempty" jsonschema:"stdout's exact bytes, when they are not valid UTF-8"`
	StderrBase64    string  `json:"stderr_base64,omitempty" jsonschema:"stderr's exact bytes, when they are not valid UTF-8"`
	StdoutTruncated bool    `json:"stdout_truncated,omitempty" jsonschema:"stdout went beyond the server's output limit; the rest was dropped"`
	StderrTruncated bool    `json:"stderr_truncated,omitempty" jsonschema:"stderr went beyond the server's output limit; the rest was dropped"`
	DurationMS      float64 `json:"duration_ms"`
}

type jsEvalIn struct {
	VMID       string `json:"vm_id" jsonschema:"the id vm_create returned"`
	Expression string `json:"expression" jsonschema:"a JavaScript expression, evaluated at global scope by node; a promise is awaited"`
	TimeoutMS  int64  `json:"timeout_ms,omitempty" jsonschema:"wall-clock limit in milliseconds (default and maximum set by the server)"`
}

type jsEvalOut struct {
	Value any `json:"value" jsonschema:"the value as JSON (undefined and functions become null)"`
}

// timeout returns the wall-clock limit of a call that asked for ms.
func (s *Server) timeout(ms int64) (time.Duration, error) {
	switch {
	case ms < 0:
		return 0, fmt.Errorf("%w: timeout_ms %d is negative", ErrBadArgument, ms)
	case ms == 0:
		return s.cfg.DefaultTimeout, nil
	case ms > s.cfg.MaxTimeout.Milliseconds():
		return 0, fmt.Errorf("timeout_ms %d: %w of %d", ms, ErrWiderThanServer, s.cfg.MaxTimeout.Milliseconds())
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// inputSize checks the size of client text given to a program.
func (s *Server) inputSize(what string, n int) error {
	if n > s.cfg.MaxInput {
		return &secexec.TooLargeError{What: what, Size: int64(n), Limit: int64(s.cfg.MaxInput)}
	}
	return nil
}

func (s *Server) exec(ctx context.Context, req *mcp.CallToolRequest, in execIn) (*mcp.CallToolResult, execOut, error) {
	var out execOut
	if (in.Command == "") == (len(in.Argv) == 0) {
		return nil, out, fmt.Errorf("%w: give either command or argv", ErrBadArgument)
	}
	size := len(in.Command) + len(in.Stdin)
	for _, a := range in.Argv {
		size += len(a) + 1
	}
	n, err := envSize(in.Env)
	if err != nil {
		return nil, out, err
	}
	size += n
	if err := s.inputSize("command, stdin and env", size); err != nil {
		return nil, out, err
	}
	timeout, err := s.timeout(in.TimeoutMS)
	if err != nil {
		return nil, out, err
	}
	e, release, err := s.acquire(req.Session, in.VMID)
	if err != nil {
		return nil, out, err
	}
	defer release()
	o := newOutput(s.cfg.MaxOutput, progressNotifier(ctx, req))
	eo := &secexec.ExecOptions{Cwd: in.Cwd, Env: in.Env, Timeout: timeout, Stdout: o.writer(0), Stderr: o.writer(1)}
	if in.Stdin != "" {
		eo.Stdin = strings.NewReader(in.Stdin)
	}
	var res *secexec.Result
	if in.Command != "" {
		res, err = e.vm.Exec(ctx, in.Command, eo)
	} else {
		res, err = e.vm.Run(ctx, in.Argv, eo)
	}
	o.finish()
	if res == nil {
		return nil, out, fmt.Errorf("exec: %w", err)
	}
	out = execOut{ExitCode: res.ExitCode, Outcome: string(res.Outcome), Reason: string(res.Reason), Signal: res.Signal,
		DurationMS: float64(res.Duration.Microseconds()) / 1000}
	stdout, trunc := o.result(0)
	out.Stdout, out.StdoutBase64, out.StdoutTruncated = text(stdout), binary(stdout), trunc
	stderr, trunc := o.result(1)
	out.Stderr, out.StderrBase64, out.StderrTruncated = text(stderr), binary(stderr), trunc
	return nil, out, nil
}

// text is b as a string, invalid UTF-8 replaced.
func text(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// binary is b in base64 if it is not valid UTF-8 (text lost bytes), else
// empty.
func binary(b []byte) string {
	if utf8.Valid(b) {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

func (s *Server) jsEval(ctx context.Context, req *mcp.CallToolRequest, in jsEvalIn) (*mcp.CallToolResult, jsEvalOut, error) {
	var out jsEvalOut
	if in.Expression == "" {
		return nil, out, fmt.Errorf("%w: expression is empty", ErrBadArgument)
	}
	if err := s.inputSize("expression", len(in.Expression)); err != nil {
		return nil, out, err
	}
	timeout, err := s.timeout(in.TimeoutMS)
	if err != nil {
		return nil, out, err
	}
	e, release, err := s.acquire(req.Session, in.VMID)
	if err != nil {
		return nil, out, err
	}
	defer release()
	val, err := e.vm.JS().Evaluate(ctx, in.Expression, &secexec.ExecOptions{Timeout: timeout, MaxOutput: s.cfg.MaxOutput})
	if err != nil {
		var ee *secexec.EvalError
		if errors.As(err, &ee) && ee.Result != nil && ee.Result.Truncated {
			return nil, out, fmt.Errorf("js_eval: the value and what the expression printed go beyond %d bytes: %w", s.cfg.MaxOutput, ErrTooLarge)
		}
		return nil, out, err
	}
	if err := json.Unmarshal(val, &out.Value); err != nil {
		return nil, out, fmt.Errorf("js_eval: %w", err)
	}
	return nil, out, nil
}
