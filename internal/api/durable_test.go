package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/secexec/secexec/internal/api"
)

// TestPausedVMsOutliveServer: a server closed with a paused VM leaves it
// in the store; a new server on the same directory lists it (paused,
// with its labels and TTL) and resumes it with its files, for its tenant
// only. A running VM that was never saved does not outlive the server,
// and a deleted VM leaves nothing behind.
func TestPausedVMsOutliveServer(t *testing.T) {
	dir := t.TempDir()
	s1 := newServer(t, api.Config{SnapshotDir: dir})
	id := s1.newVM(alice, map[string]any{"labels": map[string]string{"app": "web"}, "env": map[string]string{"A": "1"}, "ttl_ms": 3600000})
	if r, res := s1.exec(alice, id, map[string]any{"cmd": "echo kept > /workspace/f"}); r.status != 200 || res.ExitCode != 0 {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	if r := s1.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	running := s1.newVM(alice, nil)
	_, before := s1.vmInfo(alice, id)
	if err := s1.api.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	s2 := newServer(t, api.Config{SnapshotDir: dir})
	code, v := s2.vmInfo(alice, id)
	if code != http.StatusOK || v.State != "paused" || v.Labels["app"] != "web" || v.ExpiresAt == nil || !v.ExpiresAt.Equal(*before.ExpiresAt) {
		t.Fatalf("after a restart: %d %+v (before %+v)", code, v, before)
	}
	var list struct{ VMs []vmInfo }
	if s2.do(alice, "GET", "/v1/vms?state=paused", nil).json(t, &list); len(list.VMs) != 1 || list.VMs[0].ID != id {
		t.Fatalf("paused list after a restart: %+v", list)
	}
	if code, _ := s2.vmInfo(alice, running); code != http.StatusNotFound {
		t.Fatalf("a running VM outlived the server: %d", code)
	}
	// Another tenant: as absent as ever.
	if r := s2.do(bob, "POST", "/v1/vms/"+id+"/exec", map[string]any{"cmd": "true"}); r.status != http.StatusNotFound {
		t.Fatalf("bob: %d %s", r.status, r.body)
	}
	r, res := s2.exec(alice, id, map[string]any{"cmd": "cat /workspace/f; echo $A"})
	if r.status != 200 || string(res.Stdout) != "kept\n1\n" {
		t.Fatalf("exec after a restart: %d %q %s", r.status, res.Stdout, r.body)
	}
	if _, v := s2.vmInfo(alice, id); v.State != "running" {
		t.Fatalf("resumed: %+v", v)
	}
	// Resumed once, it is saved still: it outlives this server too,
	// as it was at its last pause.
	if r, _ := s2.exec(alice, id, map[string]any{"cmd": "echo later > /workspace/g"}); r.status != 200 {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	if err := s2.api.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	s3 := newServer(t, api.Config{SnapshotDir: dir})
	if r, res := s3.exec(alice, id, map[string]any{"cmd": "cat /workspace/f; test -e /workspace/g || echo no-g"}); r.status != 200 || string(res.Stdout) != "kept\nno-g\n" {
		t.Fatalf("exec after a second restart: %d %q %s", r.status, res.Stdout, r.body)
	}
	if r := s3.do(alice, "DELETE", "/v1/vms/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if n := len(pauseSnapshots(t, dir)); n != 0 {
		t.Fatalf("%d pause snapshots left after delete", n)
	}
	if err := s3.api.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	s4 := newServer(t, api.Config{SnapshotDir: dir})
	if code, _ := s4.vmInfo(alice, id); code != http.StatusNotFound {
		t.Fatalf("a deleted VM came back: %d", code)
	}
}
