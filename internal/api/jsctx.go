package api

// Persistent JS contexts and HTTP host tools, on the SDK's
// JS.NewContext and Options.Tools.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/secexec/secexec"
)

// MaxContexts bounds the live JS contexts of one VM.
const MaxContexts = 16

// Bounds of one HTTP tool call.
const (
	toolTimeout     = 30 * time.Second
	maxToolResponse = 1 << 20
	maxTools        = 64
)

// tools registers each {name, url} as a Go tool that POSTs the call as
// JSON {name, args, pid} to the URL and takes the response body (JSON)
// as the result; a non-2xx answer is a tool failure.
func (s *Server) tools(o *secexec.Options, tools []ToolJSON) error {
	if len(tools) == 0 {
		return nil
	}
	if len(tools) > maxTools {
		return apiError(http.StatusBadRequest, CodeBadRequest, "at most %d tools", maxTools)
	}
	client := &http.Client{Timeout: toolTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	o.Tools = map[string]secexec.Tool{}
	for _, t := range tools {
		u, err := url.Parse(t.URL)
		if t.Name == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return apiError(http.StatusBadRequest, CodeBadRequest, "tool %q: want a name and an http(s) URL", t.Name)
		}
		target := u.String()
		o.Tools[t.Name] = func(ctx context.Context, call secexec.ToolCall) (json.RawMessage, error) {
			body, _ := json.Marshal(map[string]any{"name": call.Name, "args": call.Args, "pid": call.Pid})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return nil, fmt.Errorf("tool %s: callback failed", call.Name)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(io.LimitReader(resp.Body, maxToolResponse+1))
			if err != nil || len(data) > maxToolResponse {
				return nil, fmt.Errorf("tool %s: callback answer unreadable or over %d bytes", call.Name, maxToolResponse)
			}
			if resp.StatusCode/100 != 2 {
				return nil, fmt.Errorf("tool %s: callback answered %d", call.Name, resp.StatusCode)
			}
			if !json.Valid(data) {
				return nil, fmt.Errorf("tool %s: callback answer is not JSON", call.Name)
			}
			return json.RawMessage(data), nil
		}
	}
	return nil
}

func (s *Server) contextRoutes(r chi.Router) {
	r.Post("/contexts", s.createContext)
	r.Post("/contexts/{cid}/evaluate", s.contextEvaluate)
	r.Delete("/contexts/{cid}", s.deleteContext)
}

// CreateContextRequest is the body of POST /v1/vms/{id}/contexts.
type CreateContextRequest struct {
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

func (s *Server) createContext(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	var req CreateContextRequest
	if err := s.decodeJSON(w, r, &req, true); err != nil {
		writeError(w, err)
		return
	}
	timeout := s.cfg.MaxExecTimeout
	if t := time.Duration(req.TimeoutMS) * time.Millisecond; t > 0 && t < timeout {
		timeout = t
	}
	e.mu.Lock()
	n := len(e.contexts)
	e.mu.Unlock()
	if n >= MaxContexts {
		writeError(w, &Error{Status: http.StatusTooManyRequests, Code: CodeQuota, RetryAfter: 1, Message: fmt.Sprintf("at most %d contexts per VM", MaxContexts)})
		return
	}
	defer e.use()()
	jc, err := e.vm.JS().NewContext(context.WithoutCancel(r.Context()), &secexec.ContextOptions{Timeout: timeout})
	if err != nil {
		writeError(w, err)
		return
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "ctx-" + hex.EncodeToString(b[:])
	e.mu.Lock()
	if e.contexts == nil { // the VM was deleted meanwhile
		e.mu.Unlock()
		_ = jc.Close()
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such VM"))
		return
	}
	e.contexts[id] = jc
	e.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

func (e *vmEntry) jsContext(r *http.Request) (string, *secexec.JSContext) {
	id := chi.URLParam(r, "cid")
	e.mu.Lock()
	defer e.mu.Unlock()
	c, _ := e.contexts[id].(*secexec.JSContext)
	return id, c
}

// EvaluateRequest is the body of POST .../contexts/{cid}/evaluate.
type EvaluateRequest struct {
	Code string `json:"code"`
}

func (s *Server) contextEvaluate(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	_, jc := e.jsContext(r)
	if jc == nil {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such context"))
		return
	}
	var req EvaluateRequest
	if err := s.decodeJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	v, err := jc.Evaluate(r.Context(), req.Code)
	writeValue(w, v, err)
}

func (s *Server) deleteContext(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	id, jc := e.jsContext(r)
	if jc == nil {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such context"))
		return
	}
	e.mu.Lock()
	delete(e.contexts, id)
	e.mu.Unlock()
	_ = jc.Close()
	w.WriteHeader(http.StatusNoContent)
}
