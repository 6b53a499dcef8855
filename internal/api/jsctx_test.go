package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/secexec/secexec/internal/api"
)

// TestContextsAndTools: a context keeps globals between evaluations; an
// HTTP tool is called by the guest through the server, gated by the
// VM's tools rule.
func TestContextsAndTools(t *testing.T) {
	var calls int
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			Name string
			Args struct{ A, B int }
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &call); err != nil || call.Name != "add" {
			http.Error(w, "bad call", 400)
			return
		}
		calls++
		json.NewEncoder(w).Encode(call.Args.A + call.Args.B)
	}))
	defer tool.Close()
	// The tool server is on loopback, which the operator must open.
	s := newServer(t, api.Config{AllowToolNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	id := s.newVM(alice, map[string]any{
		"permissions": map[string]any{
			"fs":    []any{map[string]any{"effect": "allow", "paths": []string{"/**"}}},
			"exec":  []any{map[string]any{"effect": "allow", "commands": []string{"*"}}},
			"tools": []any{map[string]any{"effect": "allow", "names": []string{"add"}}},
		},
		"tools": []any{map[string]any{"name": "add", "url": tool.URL}, map[string]any{"name": "secret", "url": tool.URL}},
	})
	r := s.do(alice, "POST", "/v1/vms/"+id+"/contexts", map[string]any{})
	if r.status != http.StatusCreated {
		t.Fatalf("create context: %d %s", r.status, r.body)
	}
	var c struct{ ID string }
	r.json(t, &c)
	eval := func(code string) *response {
		return s.do(alice, "POST", "/v1/vms/"+id+"/contexts/"+c.ID+"/evaluate", map[string]any{"code": code})
	}
	if r := eval("globalThis.x = 41"); r.status != 200 {
		t.Fatalf("evaluate: %d %s", r.status, r.body)
	}
	var v struct{ Value json.RawMessage }
	if r := eval("x + 1"); r.status != 200 {
		t.Fatalf("evaluate: %d %s", r.status, r.body)
	} else if r.json(t, &v); string(v.Value) != "42" {
		t.Fatalf("globals were not kept: %s", v.Value)
	}
	if r := eval("require('secexec:tools').call('add', {a: 2, b: 3})"); r.status != 200 {
		t.Fatalf("tool: %d %s", r.status, r.body)
	} else if r.json(t, &v); string(v.Value) != "5" || calls != 1 {
		t.Fatalf("tool answered %s after %d calls", v.Value, calls)
	}
	// A tool the policy does not allow is never called.
	if r := eval("require('secexec:tools').call('secret', {})"); r.status != http.StatusUnprocessableEntity || !contains(r.body, "no tool rule allows it") || calls != 1 {
		t.Fatalf("denied tool: %d %s (calls %d)", r.status, r.body, calls)
	}
	if r := eval("throw new Error('boom')"); r.status != http.StatusUnprocessableEntity || r.errCode(t) != "eval_error" {
		t.Fatalf("throw: %d %s", r.status, r.body)
	}
	// Bob cannot reach alice's context; deleting it ends it.
	if r := s.do(bob, "POST", "/v1/vms/"+id+"/contexts/"+c.ID+"/evaluate", map[string]any{"code": "x"}); r.status != 404 {
		t.Fatalf("bob: %d", r.status)
	}
	if r := s.do(alice, "DELETE", "/v1/vms/"+id+"/contexts/"+c.ID, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := eval("x"); r.status != 404 {
		t.Fatalf("after delete: %d", r.status)
	}
	// Tool URLs must be http(s).
	if r := s.do(alice, "POST", "/v1/vms", map[string]any{"tools": []any{map[string]any{"name": "f", "url": "file:///etc/passwd"}}}); r.status != 400 {
		t.Fatalf("file URL: %d", r.status)
	}
}

// A context evaluation that runs past the context's timeout answers 504
// timeout (issue #24: it answered 503 shutting_down, which tells a
// client to retry elsewhere), and the server keeps serving.
func TestContextEvaluateTimeout(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	r := s.do(alice, "POST", "/v1/vms/"+id+"/contexts", map[string]any{"timeout_ms": 300})
	if r.status != http.StatusCreated {
		t.Fatalf("create context: %d %s", r.status, r.body)
	}
	var c struct{ ID string }
	r.json(t, &c)
	r = s.do(alice, "POST", "/v1/vms/"+id+"/contexts/"+c.ID+"/evaluate", map[string]any{"code": "for(;;){}"})
	if r.status != http.StatusGatewayTimeout || r.errCode(t) != "timeout" {
		t.Fatalf("endless loop: %d %s; want 504 timeout", r.status, r.body)
	}
	if r := s.do(alice, "GET", "/readyz", nil); r.status != http.StatusOK {
		t.Fatalf("readyz after the timeout: %d %s", r.status, r.body)
	}
}
