package client

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Outcome is how an exec ended (as secexec.Outcome).
type Outcome string

// Outcomes.
const (
	Succeeded Outcome = "succeeded"
	Failed    Outcome = "failed"
	Cancelled Outcome = "cancelled"
	TimedOut  Outcome = "timed_out"
)

// ExecOptions adjust one exec. The zero value is valid.
type ExecOptions struct {
	// Stdin is the program's standard input, read whole before the
	// request is sent (at most MaxStdin bytes; the server's request
	// limit may be lower). Use Spawn to stream input.
	Stdin io.Reader
	// Env adds to (and overrides) the VM's environment.
	Env map[string]string
	// Cwd is the working directory; empty means the VM's.
	Cwd string
	// Timeout kills the program after this long (exit 124, TimedOut);
	// the server caps it with its own maximum.
	Timeout time.Duration
	// Stdout and Stderr, if either is set, receive the output as it is
	// produced (server-sent events) instead of the Result keeping it.
	Stdout io.Writer
	Stderr io.Writer
	// MaxOutput lowers the server's limit of bytes per stream.
	MaxOutput int
}

// MaxStdin bounds ExecOptions.Stdin.
const MaxStdin = 16 << 20

// Result is how an exec ended; every byte the program wrote has been
// delivered when it is returned.
type Result struct {
	// ExitCode is the status as a shell shows it (128+n for signal n,
	// 124 for a timeout).
	ExitCode int
	// Stdout and Stderr are the bytes written, unless streamed to
	// ExecOptions writers.
	Stdout, Stderr []byte
	Outcome        Outcome
	// Reason says which limit ended a TimedOut exec: "timeout" or
	// "cpu_time".
	Reason string
	// Signal names the signal that killed the program, if one did.
	Signal string
	// Truncated is set when output past the limit was dropped.
	Truncated bool
	Duration  time.Duration
}

type execJSON struct {
	Cmd       string            `json:"cmd,omitempty"`
	Argv      []string          `json:"argv,omitempty"`
	Code      string            `json:"code,omitempty"` // js routes
	Stdin     string            `json:"stdin,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	TimeoutMS int64             `json:"timeout_ms,omitempty"`
	MaxOutput int               `json:"max_output,omitempty"`
}

type resultJSON struct {
	ExitCode   int    `json:"exit_code"`
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason,omitempty"`
	Signal     string `json:"signal,omitempty"`
	Stdout     []byte `json:"stdout"`
	Stderr     []byte `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
}

func (j *resultJSON) result() *Result {
	return &Result{ExitCode: j.ExitCode, Outcome: Outcome(j.Outcome), Reason: j.Reason, Signal: j.Signal,
		Stdout: j.Stdout, Stderr: j.Stderr, Truncated: j.Truncated, Duration: time.Duration(j.DurationMS) * time.Millisecond}
}

// Exec runs a command line in the VM and waits for it: a plain list of
// words runs the program directly, anything else under sh -c. The
// error is non-nil when nothing ran (an *Error from the server) or ctx
// ended, which also ends the program on the server.
func (v *VM) Exec(ctx context.Context, cmdline string, opts *ExecOptions) (*Result, error) {
	if strings.TrimSpace(cmdline) == "" {
		return nil, fmt.Errorf("client: exec: %w", &Error{Code: CodeBadRequest, Message: "empty command line"})
	}
	return v.exec(ctx, "/exec", execJSON{Cmd: cmdline}, opts)
}

// Run runs argv in the VM and waits for it, never through a shell.
func (v *VM) Run(ctx context.Context, argv []string, opts *ExecOptions) (*Result, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("client: run: %w", &Error{Code: CodeBadRequest, Message: "empty argv"})
	}
	return v.exec(ctx, "/exec", execJSON{Argv: argv}, opts)
}

// exec posts req (with opts folded in) to the VM route sub and reads
// the result, streamed when opts has writers.
func (v *VM) exec(ctx context.Context, sub string, req execJSON, opts *ExecOptions) (*Result, error) {
	if opts == nil {
		opts = &ExecOptions{}
	}
	if opts.Timeout < 0 || opts.MaxOutput < 0 {
		return nil, fmt.Errorf("client: %w", &Error{Code: CodeBadRequest, Message: "negative timeout or max output"})
	}
	req.Env, req.Cwd, req.MaxOutput = opts.Env, opts.Cwd, opts.MaxOutput
	req.TimeoutMS = opts.Timeout.Milliseconds()
	if opts.Timeout > 0 && req.TimeoutMS == 0 {
		req.TimeoutMS = 1
	}
	var err error
	if req.Stdin, err = encodeStdin(opts.Stdin); err != nil {
		return nil, err
	}
	cl, err := jsonCall("POST", v.path(sub), req)
	if err != nil {
		return nil, err
	}
	stream := opts.Stdout != nil || opts.Stderr != nil
	if stream {
		cl.accept = "text/event-stream"
	}
	resp, err := v.c.send(ctx, cl)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if !stream {
		var j resultJSON
		if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSONAnswer)).Decode(&j); err != nil {
			return nil, fmt.Errorf("client: reading the exec result: %w", ctxErr(ctx, err))
		}
		return j.result(), nil
	}
	res, err := readExecEvents(ctx, resp.Body, opts.Stdout, opts.Stderr)
	if err == nil {
		// The server ends the stream after the exit event: reading to
		// its end lets the connection be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxEvent))
	}
	return res, err
}

// encodeStdin reads r whole (at most MaxStdin bytes) as base64.
func encodeStdin(r io.Reader) (string, error) {
	if r == nil {
		return "", nil
	}
	in, err := io.ReadAll(io.LimitReader(r, MaxStdin+1))
	if err != nil {
		return "", fmt.Errorf("client: reading stdin: %w", err)
	}
	if len(in) > MaxStdin {
		return "", fmt.Errorf("client: %w", &Error{Code: CodeTooLarge, Message: fmt.Sprintf("stdin over %d bytes (use Spawn to stream it)", MaxStdin)})
	}
	return base64.StdEncoding.EncodeToString(in), nil
}

// ctxErr prefers ctx's error to the transport's when ctx ended.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// maxEvent bounds one server-sent event (an output chunk is at most the
// pipe's 64 KiB, base64 in JSON).
const maxEvent = 1 << 20

// readExecEvents reads an exec's server-sent events: output chunks to
// their writers, then the exit event; an error event before the exit
// is the call's error unless an exit follows (output over the limit).
func readExecEvents(ctx context.Context, body io.Reader, stdout, stderr io.Writer) (*Result, error) {
	var streamErr *Error
	err := readSSE(body, func(name string, data []byte) (bool, error) {
		switch name {
		case "stdout", "stderr":
			var ev struct {
				Data []byte `json:"data"`
			}
			if err := decode(data, &ev, "an output event"); err != nil {
				return false, err
			}
			w := stdout
			if name == "stderr" {
				w = stderr
			}
			if w != nil {
				if _, err := w.Write(ev.Data); err != nil {
					return false, fmt.Errorf("client: writing the guest's %s: %w", name, err)
				}
			}
		case "error":
			var ev struct {
				Code    Code   `json:"code"`
				Message string `json:"message"`
			}
			if err := decode(data, &ev, "an error event"); err != nil {
				return false, err
			}
			streamErr = &Error{Status: 200, Code: ev.Code, Message: ev.Message}
		case "exit":
			var j resultJSON
			if err := decode(data, &j, "the exit event"); err != nil {
				return false, err
			}
			res := j.result()
			res.Stdout, res.Stderr = nil, nil
			streamErr = nil
			return true, &exitEvent{res}
		}
		return false, nil
	})
	var ex *exitEvent
	if errors.As(err, &ex) {
		return ex.res, nil
	}
	if streamErr != nil {
		return nil, streamErr
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("client: the exec's event stream ended before its exit: %w", ctxErr(ctx, err))
}

// exitEvent carries the result out of readSSE.
type exitEvent struct{ res *Result }

func (*exitEvent) Error() string { return "exit event" }

// readSSE calls ev for each server-sent event of r (event name, joined
// data lines) until ev says stop, r ends or an event is over maxEvent.
// Lines end in LF, CRLF or CR, as the SSE format allows.
func readSSE(r io.Reader, ev func(name string, data []byte) (stop bool, err error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var name string
	var data bytes.Buffer
	hasData := false
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if line == "" { // dispatch
			if hasData {
				stop, err := ev(cmp.Or(name, "message"), data.Bytes())
				if stop || err != nil {
					return err
				}
			}
			name, hasData = "", false
			data.Reset()
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
			if data.Len() > maxEvent {
				return fmt.Errorf("client: a server-sent event over %d bytes", maxEvent)
			}
		}
	}
}

// readLine reads one line (without its LF, CRLF or CR), at most maxEvent
// bytes.
func readLine(br *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				return string(b), nil
			}
			return "", err
		}
		switch c {
		case '\n':
			return string(b), nil
		case '\r':
			if next, err := br.Peek(1); err == nil && next[0] == '\n' {
				_, _ = br.ReadByte()
			}
			return string(b), nil
		}
		b = append(b, c)
		if len(b) > maxEvent {
			return "", fmt.Errorf("client: a server-sent event line over %d bytes", maxEvent)
		}
	}
}
