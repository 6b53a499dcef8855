package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/prometheus/common/expfmt"

	"github.com/secexec/secexec"
)

// JSRequest is the body of the js/evaluate and js/execute routes: Code is
// an expression (evaluate) or a CommonJS script (execute).
type JSRequest struct {
	Code      string            `json:"code"`
	Stdin     string            `json:"stdin,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	TimeoutMS int64             `json:"timeout_ms,omitempty"`
	MaxOutput int               `json:"max_output,omitempty"`
}

func (s *Server) jsRun(w http.ResponseWriter, r *http.Request, run func(e *vmEntry, code string, o *secexec.ExecOptions)) {
	e := vmOf(r)
	var req JSRequest
	if err := s.decodeJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if req.Code == "" {
		writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "code is required"))
		return
	}
	opts, _, err := s.execOptions(&ExecRequest{Stdin: req.Stdin, Env: req.Env, Cwd: req.Cwd, TimeoutMS: req.TimeoutMS, MaxOutput: req.MaxOutput})
	if err != nil {
		writeError(w, err)
		return
	}
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	run(e, req.Code, opts)
}

// EvalResult is the answer of js/evaluate: the value as JSON.
type EvalResult struct {
	Value json.RawMessage `json:"value"`
}

// writeValue answers an evaluation: its value, or 422 eval_error with
// the guest's stack for a throw.
func writeValue(w http.ResponseWriter, v json.RawMessage, err error) {
	var ee *secexec.EvalError
	if errors.As(err, &ee) {
		writeError(w, &Error{Status: http.StatusUnprocessableEntity, Code: CodeEvalError, Message: ee.Stack, Err: err})
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, EvalResult{Value: v})
}

// jsEvaluate evaluates an expression (awaited if a promise) and answers
// its JSON value; a throw is 422 eval_error with the guest's stack.
func (s *Server) jsEvaluate(w http.ResponseWriter, r *http.Request) {
	s.jsRun(w, r, func(e *vmEntry, code string, o *secexec.ExecOptions) {
		v, err := e.vm.JS().Evaluate(r.Context(), code, o)
		writeValue(w, v, err)
	})
}

// jsExecute runs a script like exec runs a command (JSON or SSE).
func (s *Server) jsExecute(w http.ResponseWriter, r *http.Request) {
	s.jsRun(w, r, func(e *vmEntry, code string, o *secexec.ExecOptions) {
		argv := []string{"node", "-e", code}
		if wantsSSE(r) {
			s.execSSE(w, r, e, argv, o, o.MaxOutput)
			return
		}
		res, err := e.vm.JS().Execute(r.Context(), code, o)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resultJSON(res))
	})
}

// serveMetrics answers the API's metrics followed by the engine's, in
// the Prometheus text format.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := writeRegistry(&buf, s.metrics); err != nil {
		writeError(w, err)
		return
	}
	if err := s.cfg.EngineMetrics(r.Context(), &buf); err != nil {
		// The API's own figures are still worth a scrape.
		s.cfg.Logger.Warn("engine metrics unavailable", "err", err)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = io.Copy(w, &buf)
}

// writeRegistry writes the API registry in the text format.
func writeRegistry(w io.Writer, m *apiMetrics) error {
	mfs, err := m.reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
