package api

// Persistent JS contexts and HTTP host tools, on the SDK's
// JS.NewContext and Options.Tools.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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
// as the result. The callback goes only where a guest's connect could
// (toolNet: no loopback, private, link-local or metadata address unless
// the operator allowed its network). Every failure — a refused address,
// a transport error, a non-2xx answer, a redirect, an answer too large or
// not JSON — reaches the guest as the same ERR_TOOL_FAILED text, so the
// guest cannot tell a closed port from a refused address or a 401; the
// reason goes to the server's log.
func (s *Server) tools(o *secexec.Options, tools []ToolJSON) error {
	if len(tools) == 0 {
		return nil
	}
	if len(tools) > maxTools {
		return apiError(http.StatusBadRequest, CodeBadRequest, "at most %d tools", maxTools)
	}
	tn := &toolNet{allow: s.cfg.AllowToolNetworks}
	client := tn.client()
	o.Tools = map[string]secexec.Tool{}
	for _, t := range tools {
		u, err := url.Parse(t.URL)
		if t.Name == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return apiError(http.StatusBadRequest, CodeBadRequest, "tool %q: want a name and an http(s) URL", t.Name)
		}
		if tn.literalRefused(u.Hostname()) {
			return apiError(http.StatusBadRequest, CodeBadRequest, "tool %q: the URL's address is not allowed on this server (see --allow-tool-network)", t.Name)
		}
		target := u.String()
		o.Tools[t.Name] = func(ctx context.Context, call secexec.ToolCall) (json.RawMessage, error) {
			data, err := s.callTool(ctx, client, target, call)
			if err != nil {
				s.cfg.Logger.Warn("tool callback failed", "tool", call.Name, "url", target, "err", err)
				return nil, &secexec.ToolError{Code: secexec.ToolFailed, Tool: call.Name, Message: "the tool failed"}
			}
			return data, nil
		}
	}
	return nil
}

// callTool POSTs one call to target and returns the JSON answer.
func (s *Server) callTool(ctx context.Context, client *http.Client, target string, call secexec.ToolCall) (json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"name": call.Name, "args": call.Args, "pid": call.Pid})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxToolResponse+1))
	switch {
	case err != nil:
		return nil, err
	case len(data) > maxToolResponse:
		return nil, fmt.Errorf("answer over %d bytes", maxToolResponse)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("answered %d", resp.StatusCode)
	case !json.Valid(data):
		return nil, errors.New("answer is not JSON")
	}
	return json.RawMessage(data), nil
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
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "ctx-" + hex.EncodeToString(b[:])
	// The context holds a slot of the tenant's process quota until it is
	// closed, and is closed at the lifetime limit.
	h, err := s.hold(e)
	if err != nil {
		writeError(w, err)
		return
	}
	jc, err := e.vm.JS().NewContext(context.WithoutCancel(r.Context()), &secexec.ContextOptions{Timeout: timeout})
	if err != nil {
		h.end()
		writeError(w, err)
		return
	}
	hc := &heldContext{jc: jc, held: h}
	h.arm(s, e, "JS context", func() {
		e.mu.Lock()
		if e.contexts[id] == io.Closer(hc) {
			delete(e.contexts, id)
		}
		e.mu.Unlock()
		_ = hc.Close()
	})
	e.mu.Lock()
	if e.contexts == nil { // the VM was deleted meanwhile
		e.mu.Unlock()
		_ = hc.Close()
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such VM"))
		return
	}
	e.contexts[id] = hc
	e.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

func (e *vmEntry) jsContext(r *http.Request) (string, *secexec.JSContext) {
	id := chi.URLParam(r, "cid")
	e.mu.Lock()
	defer e.mu.Unlock()
	c, _ := e.contexts[id].(*heldContext)
	if c == nil {
		return id, nil
	}
	return id, c.jc
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
	c := e.contexts[id]
	delete(e.contexts, id)
	e.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
	w.WriteHeader(http.StatusNoContent)
}
