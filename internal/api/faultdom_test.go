package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
)

// engineText are fragments of what a dying engine writes on stderr (a V8
// fatal error, the Go runtime's register dump and traceback, an exit
// status): none may reach a tenant.
var engineText = []string{"Fatal", "fatal", "v8::", ".go:", "SIGTRAP", "SIGSEGV", "goroutine", "rip ", "rax ",
	"pc=", "exit status", "signal:", "0x"}

// noEngineText fails when an answer to a tenant carries engine text.
func noEngineText(t *testing.T, what string, r *response) {
	t.Helper()
	for _, s := range engineText {
		if strings.Contains(string(r.body), s) {
			t.Errorf("%s: the answer carries engine text %q: %s", what, s, r.body)
		}
	}
}

// vmState is the state of a VM as the API reports it.
type vmState struct {
	ID         string `json:"id"`
	Engine     string `json:"engine"`
	State      string `json:"state"`
	LostReason string `json:"lost_reason"`
}

// Fault domains: tenant A's V8 fatal out-of-memory error (which aborts
// the engine process) loses A's VMs in that engine only. Tenant B's VM,
// its files and its execs carry on; A's VM in an engine of its own
// (per-vm) too. A's lost VM is reported as lost with a typed reason and
// no engine text, no longer counts against A's VM quota, and can be
// deleted.
func TestTenantEngineCrashLosesNoOtherTenant(t *testing.T) {
	s := newServer(t, api.Config{MaxVMs: 2})
	victim := s.newVM(alice, nil)
	own := s.newVM(alice, map[string]any{"engine": "per-vm"})
	other := s.newVM(bob, nil)
	var st vmState
	s.do(alice, "GET", "/v1/vms/"+victim, nil).json(t, &st)
	if st.State != "running" || st.Engine != "per-tenant" {
		t.Fatalf("new VM: %+v", st)
	}
	if r := s.do(bob, "PUT", "/v1/vms/"+other+"/files/workspace/keep.txt", []byte("kept\n")); r.status != http.StatusNoContent {
		t.Fatalf("bob's upload: %d %s", r.status, r.body)
	}
	// Alice is at her quota.
	if r := s.do(alice, "POST", "/v1/vms", map[string]any{}); r.status != http.StatusTooManyRequests {
		t.Fatalf("alice over quota: %d %s", r.status, r.body)
	}

	r, _ := s.exec(alice, victim, map[string]any{"argv": []string{"node", "-e", "new Array(2e8).fill(1.5)"}})
	if r.status != http.StatusServiceUnavailable || r.errCode(t) != "engine_lost" {
		t.Fatalf("fatal OOM: %d %s; want 503 engine_lost", r.status, r.body)
	}
	noEngineText(t, "the exec that killed the engine", r)

	// Bob's VM, its files and a new exec are untouched.
	if r, res := s.exec(bob, other, map[string]any{"cmd": "cat /workspace/keep.txt && node -e 'console.log(6*7)'"}); r.status != 200 || string(res.Stdout) != "kept\n42\n" {
		t.Fatalf("bob after alice's OOM: %d %s", r.status, r.body)
	}
	if r := s.do(bob, "GET", "/v1/vms/"+other+"/files/workspace/keep.txt", nil); r.status != 200 || string(r.body) != "kept\n" {
		t.Fatalf("bob's file after alice's OOM: %d %q", r.status, r.body)
	}
	// Alice's VM with an engine of its own too.
	if r, res := s.exec(alice, own, map[string]any{"cmd": "echo own"}); r.status != 200 || string(res.Stdout) != "own\n" {
		t.Fatalf("alice's per-vm VM: %d %s", r.status, r.body)
	}

	// The lost VM is reported lost, with the typed reason only.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := s.do(alice, "GET", "/v1/vms/"+victim, nil)
		noEngineText(t, "GET of the lost VM", r)
		r.json(t, &st)
		if st.State == "lost" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.State != "lost" || st.LostReason != "engine_out_of_memory" {
		t.Fatalf("lost VM: %+v; want state lost, reason engine_out_of_memory", st)
	}
	var list struct{ VMs []vmState }
	r = s.do(alice, "GET", "/v1/vms", nil)
	noEngineText(t, "list", r)
	r.json(t, &list)
	if len(list.VMs) != 2 {
		t.Fatalf("alice's VMs: %s", r.body)
	}
	r, _ = s.exec(alice, victim, map[string]any{"cmd": "true"})
	if r.status != http.StatusServiceUnavailable || r.errCode(t) != "engine_lost" || !contains(r.body, "engine_out_of_memory") {
		t.Fatalf("exec in the lost VM: %d %s", r.status, r.body)
	}
	noEngineText(t, "exec in the lost VM", r)

	// Its quota slot is free at once: alice may create a VM (in a fresh
	// engine of hers), and still not more than her quota.
	fresh := s.newVM(alice, nil)
	if r, res := s.exec(alice, fresh, map[string]any{"cmd": "node -e 'console.log(1)'"}); r.status != 200 || string(res.Stdout) != "1\n" {
		t.Fatalf("alice's new VM: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "POST", "/v1/vms", map[string]any{}); r.status != http.StatusTooManyRequests {
		t.Fatalf("alice over quota after the loss: %d %s", r.status, r.body)
	}
	// Deleting the lost VM works, once, and gives no slot back twice.
	if r := s.do(alice, "DELETE", "/v1/vms/"+victim, nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE of the lost VM: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "GET", "/v1/vms/"+victim, nil); r.status != http.StatusNotFound {
		t.Fatalf("the deleted VM: %d", r.status)
	}
	if r := s.do(alice, "POST", "/v1/vms", map[string]any{}); r.status != http.StatusTooManyRequests {
		t.Fatalf("alice over quota after deleting the lost VM: %d %s", r.status, r.body)
	}
}

// A placement other than per-tenant or per-vm is refused, by the server
// and by a create request.
func TestEnginePlacementChecked(t *testing.T) {
	if _, err := api.New(api.Config{Tokens: testTokens(), Engine: "shared"}); err == nil {
		t.Fatal("engine shared accepted by the server")
	}
	s := newServer(t, api.Config{})
	if r := s.do(alice, "POST", "/v1/vms", map[string]any{"engine": "shared"}); r.status != http.StatusBadRequest {
		t.Fatalf("engine shared in a request: %d %s", r.status, r.body)
	}
}
