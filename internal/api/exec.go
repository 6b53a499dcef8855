package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec"
)

// ExecRequest is the body of POST /v1/vms/{id}/exec (and, without
// stdin and timeout, of POST /v1/vms/{id}/processes). Exactly one of Cmd
// (a command line: a plain one runs directly, anything else under sh -c)
// and Argv is set.
type ExecRequest struct {
	Cmd  string   `json:"cmd,omitempty"`
	Argv []string `json:"argv,omitempty"`
	// Stdin is base64.
	Stdin     string            `json:"stdin,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	TimeoutMS int64             `json:"timeout_ms,omitempty"`
	// MaxOutput lowers the server's output limit per stream.
	MaxOutput int `json:"max_output,omitempty"`
}

// ExecResult is the JSON answer of an exec; Stdout and Stderr are base64
// so that every byte survives.
type ExecResult struct {
	ExitCode int    `json:"exit_code"`
	Outcome  string `json:"outcome"`
	// Reason says which limit ended a timed_out exec: "timeout" (wall
	// clock) or "cpu_time".
	Reason     string `json:"reason,omitempty"`
	Signal     string `json:"signal,omitempty"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
}

func (req *ExecRequest) argv() ([]string, error) {
	switch {
	case req.Cmd != "" && len(req.Argv) > 0:
		return nil, apiError(http.StatusBadRequest, CodeBadRequest, "give cmd or argv, not both")
	case len(req.Argv) > 0:
		return req.Argv, nil
	case strings.TrimSpace(req.Cmd) != "":
		if a := secexec.PlainArgv(req.Cmd); a != nil {
			return a, nil
		}
		return []string{"sh", "-c", req.Cmd}, nil
	}
	return nil, apiError(http.StatusBadRequest, CodeBadRequest, "cmd or argv is required")
}

// options returns the exec options and the output limit of req.
func (s *Server) execOptions(req *ExecRequest) (*secexec.ExecOptions, int, error) {
	o := &secexec.ExecOptions{Env: req.Env, Cwd: req.Cwd}
	if req.Stdin != "" {
		in, err := base64.StdEncoding.DecodeString(req.Stdin)
		if err != nil {
			return nil, 0, apiError(http.StatusBadRequest, CodeBadRequest, "stdin is not base64: %v", err)
		}
		o.Stdin = bytes.NewReader(in)
	}
	if req.TimeoutMS < 0 || req.MaxOutput < 0 {
		return nil, 0, apiError(http.StatusBadRequest, CodeBadRequest, "timeout_ms and max_output must not be negative")
	}
	o.Timeout = s.cfg.MaxExecTimeout
	if t := time.Duration(req.TimeoutMS) * time.Millisecond; t > 0 && t < o.Timeout {
		o.Timeout = t
	}
	limit := s.cfg.MaxOutputBytes
	if req.MaxOutput > 0 && req.MaxOutput < limit {
		limit = req.MaxOutput
	}
	o.MaxOutput = limit
	return o, limit, nil
}

func wantsSSE(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	var req ExecRequest
	if err := s.decodeJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	argv, err := req.argv()
	if err != nil {
		writeError(w, err)
		return
	}
	opts, limit, err := s.execOptions(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	if wantsSSE(r) {
		s.execSSE(w, r, e, argv, opts, limit)
		return
	}
	res, err := e.vm.Run(r.Context(), argv, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	s.metrics.execs.WithLabelValues(string(res.Outcome)).Observe(res.Duration.Seconds())
	writeJSON(w, http.StatusOK, resultJSON(res))
}

func resultJSON(res *secexec.Result) ExecResult {
	return ExecResult{
		ExitCode: res.ExitCode, Outcome: string(res.Outcome), Reason: string(res.Reason), Signal: res.Signal,
		Stdout: base64.StdEncoding.EncodeToString(res.Stdout), Stderr: base64.StdEncoding.EncodeToString(res.Stderr),
		Truncated: res.Truncated, DurationMS: res.Duration.Milliseconds(),
	}
}

// sseWriter writes server-sent events, one at a time, flushing each.
type sseWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
	// left is the output budget; past it, over is called once.
	left int
	over func()
	err  error
}

func (sw *sseWriter) event(name string, v any) error {
	data, _ := json.Marshal(v)
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.err != nil {
		return sw.err
	}
	if _, err := fmt.Fprintf(sw.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		sw.err = err
		return err
	}
	sw.err = sw.rc.Flush()
	return sw.err
}

// streamWriter sends what a stream writes as events of its name.
type streamWriter struct {
	sw   *sseWriter
	name string
}

func (s streamWriter) Write(p []byte) (int, error) {
	s.sw.mu.Lock()
	n := len(p)
	cut := false
	if n > s.sw.left {
		p, cut = p[:s.sw.left], true
	}
	s.sw.left -= len(p)
	over := s.sw.over
	if cut {
		s.sw.over = nil
	}
	s.sw.mu.Unlock()
	if len(p) > 0 {
		if err := s.sw.event(s.name, map[string]string{"data": base64.StdEncoding.EncodeToString(p)}); err != nil {
			return 0, err
		}
	}
	if cut && over != nil {
		over()
	}
	// The bytes past the limit are dropped, not refused: refusing would
	// make the guest see EPIPE instead of being stopped.
	return n, nil
}

// execSSE runs the exec streaming its output as server-sent events:
// stdout and stderr ({"data": base64}) as they come, then exactly one
// exit event ({exit_code, outcome, ...}); an output over the limit ends
// the program with an error event {code, message} before the exit.
func (s *Server) execSSE(w http.ResponseWriter, r *http.Request, e *vmEntry, argv []string, opts *secexec.ExecOptions, limit int) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, rc: http.NewResponseController(w), left: 2 * limit}
	overflow := false
	sw.over = func() {
		overflow = true
		_ = sw.event("error", map[string]string{"code": string(CodeOutputLimit),
			"message": fmt.Sprintf("the program wrote more than %d bytes; it was stopped", 2*limit)})
		cancel(errOutputLimit)
	}
	_ = sw.rc.Flush()
	opts.Stdout, opts.Stderr = streamWriter{sw, "stdout"}, streamWriter{sw, "stderr"}
	res, err := e.vm.Run(ctx, argv, opts)
	if err != nil && !overflow {
		ae := errorFor(err)
		_ = sw.event("error", map[string]string{"code": string(ae.Code), "message": ae.Message})
		return
	}
	if res == nil { // stopped for its output before a result was made
		res = &secexec.Result{ExitCode: 137, Outcome: secexec.Cancelled, Signal: "SIGKILL"}
	}
	s.metrics.execs.WithLabelValues(string(res.Outcome)).Observe(res.Duration.Seconds())
	out := resultJSON(res)
	out.Stdout, out.Stderr = "", ""
	out.Truncated = overflow
	_ = sw.event("exit", out)
}

var errOutputLimit = fmt.Errorf("output limit reached")
