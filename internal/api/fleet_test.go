package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/secexec/secexec/internal/api"
)

// TestForwardingToOwningReplica: two replicas, each forwarding requests
// for the other's VMs; a client may talk to either.
func TestForwardingToOwningReplica(t *testing.T) {
	a, b := replicaPair(t)
	id := a.newVM(alice, nil)
	if id[:2] != "a-" {
		t.Fatalf("id %q does not name its replica", id)
	}
	r, res := b.exec(alice, id, map[string]any{"cmd": "echo via b"})
	if r.status != 200 || string(res.Stdout) != "via b\n" {
		t.Fatalf("exec through b: %d %s", r.status, r.body)
	}
	evs := readSSE(t, b, "/v1/vms/"+id+"/exec", map[string]any{"cmd": "echo streamed"})
	if len(evs) < 2 || decodeData(t, evs[0]) != "streamed\n" {
		t.Fatalf("SSE through b: %v", evs)
	}
	// Tenancy holds across replicas.
	if r := b.do(bob, "GET", "/v1/vms/"+id, nil); r.status != http.StatusNotFound {
		t.Fatalf("bob through b: %d", r.status)
	}
	// An unknown replica, and a VM that is not where its id says.
	if r := b.do(alice, "GET", "/v1/vms/c-aaaaaaaaaaaaaaaa", nil); r.status != http.StatusMisdirectedRequest {
		t.Fatalf("unknown replica: %d", r.status)
	}
	if r := b.do(alice, "GET", "/v1/vms/a-aaaaaaaaaaaaaaaa", nil); r.status != http.StatusNotFound {
		t.Fatalf("missing VM on a: %d", r.status)
	}
	// A forwarded request is not forwarded again (no loops).
	if r := a.do(alice, "GET", "/v1/vms/b-aaaaaaaaaaaaaaaa", nil, "X-Secexec-Forwarded", "b"); r.status != http.StatusMisdirectedRequest {
		t.Fatalf("second hop: %d", r.status)
	}
}

// TestForwardingWebSocket: a process session through the replica that
// does not hold the VM.
func TestForwardingWebSocket(t *testing.T) {
	a, b := replicaPair(t)
	id := a.newVM(alice, nil)
	pid := spawn(t, b, id, map[string]any{"cmd": "echo through; exit 3"})
	c, _, err := dialProcess(t, b, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	out, _, exit := session(t, c)
	if out != "through\n" || exit["exit_code"] != float64(3) {
		t.Fatalf("stdout %q exit %v", out, exit)
	}
	// A browser's session, the token in a subprotocol, goes through too:
	// the peer gets it as the header it checks.
	pid = spawn(t, b, id, map[string]any{"cmd": "echo browser"})
	c, resp, err := dialSubprotocol(context.Background(), b, []string{api.SubprotocolV1, tokenProtocol(alice)}, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Header.Get("Sec-WebSocket-Protocol"); p != api.SubprotocolV1 {
		t.Fatalf("answered subprotocol %q", p)
	}
	if out, _, _ := session(t, c); out != "browser\n" {
		t.Fatalf("stdout %q", out)
	}
}

// replicaPair starts replicas "a" and "b", each forwarding to the other,
// sharing a preview secret as a fleet's replicas must.
func replicaPair(t *testing.T) (a, b *testServer) {
	urls := map[string]string{}
	peer := func(r string) (string, bool) { u, ok := urls[r]; return u, ok }
	secret := []byte("a fleet's shared preview secret, 32 bytes or more")
	a = newServer(t, api.Config{Replica: "a", PeerURL: peer, PreviewSecret: secret})
	b = newServer(t, api.Config{Replica: "b", PeerURL: peer, PreviewSecret: secret})
	urls["a"], urls["b"] = a.url, b.url
	return a, b
}
