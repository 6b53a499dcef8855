package api_test

import (
	"net/http"
	"testing"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/s3test"
)

type snapshotJSON struct {
	ID          string            `json:"id"`
	Files       int               `json:"files"`
	Bytes       int64             `json:"bytes"`
	StoredBytes int64             `json:"stored_bytes"`
	Labels      map[string]string `json:"labels"`
}

// TestSnapshotsAPI: save a VM, list and describe the snapshot, start a VM
// from it (its files and env come back), fork a VM (writes stay on their
// side), delete the snapshot; and another tenant sees none of it.
func TestSnapshotsAPI(t *testing.T) {
	testSnapshotsAPI(t, api.Config{SnapshotDir: t.TempDir(), MaxSnapshots: 2})
}

// TestSnapshotsAPIS3: the same with serve --snapshot-store, each tenant
// under a prefix of its own in a real S3 server (versitygw).
func TestSnapshotsAPIS3(t *testing.T) {
	srv := s3test.Start(t)
	testSnapshotsAPI(t, api.Config{SnapshotStore: srv.URL("tenants"), MaxSnapshots: 2,
		SnapshotCredentials: secexec.StoreCredentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}})
}

func testSnapshotsAPI(t *testing.T, cfg api.Config) {
	s := newServer(t, cfg)
	id := s.newVM(alice, map[string]any{"env": map[string]string{"A": "1"}, "cwd": "/w"})
	if r, res := s.exec(alice, id, map[string]any{"cmd": "echo saved > f; echo tmp > /tmp/t"}); r.status != 200 || res.ExitCode != 0 {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	r := s.do(alice, "POST", "/v1/vms/"+id+"/snapshots", map[string]any{"labels": map[string]string{"step": "1"}})
	if r.status != http.StatusCreated {
		t.Fatalf("snapshot: %d %s", r.status, r.body)
	}
	var snap snapshotJSON
	r.json(t, &snap)
	if snap.Files != 2 || snap.Labels["step"] != "1" || snap.StoredBytes == 0 {
		t.Fatalf("snapshot = %+v", snap)
	}
	// A second snapshot of the same files stores nothing new.
	var again snapshotJSON
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/snapshots", nil); r.status != http.StatusCreated {
		t.Fatalf("second snapshot: %d %s", r.status, r.body)
	} else {
		r.json(t, &again)
	}
	if again.StoredBytes != 0 {
		t.Fatalf("unchanged files stored again: %+v", again)
	}
	// The tenant's snapshot quota.
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/snapshots", nil); r.status != http.StatusTooManyRequests || r.errCode(t) != "quota_exceeded" {
		t.Fatalf("third snapshot over the quota: %d %s", r.status, r.body)
	}
	var list struct{ Snapshots []snapshotJSON }
	s.do(alice, "GET", "/v1/snapshots", nil).json(t, &list)
	if len(list.Snapshots) != 2 {
		t.Fatalf("list = %+v", list)
	}
	// Restore, with the env merged.
	re := s.newVM(alice, map[string]any{"from_snapshot": snap.ID, "env": map[string]string{"B": "2"}})
	if r, res := s.exec(alice, re, map[string]any{"cmd": `cat f /tmp/t; echo "$A$B $PWD"`}); r.status != 200 || string(res.Stdout) != "saved\ntmp\n12 /w\n" {
		t.Fatalf("restored VM: %d %q %s", r.status, res.Stdout, r.body)
	}
	// Fork.
	r = s.do(alice, "POST", "/v1/vms/"+id+"/fork", nil)
	if r.status != http.StatusCreated {
		t.Fatalf("fork: %d %s", r.status, r.body)
	}
	var child struct{ ID string }
	r.json(t, &child)
	s.exec(alice, child.ID, map[string]any{"cmd": "echo child > f"})
	if _, res := s.exec(alice, id, map[string]any{"cmd": "cat f"}); string(res.Stdout) != "saved\n" {
		t.Fatalf("parent sees the child's write: %q", res.Stdout)
	}
	if _, res := s.exec(alice, child.ID, map[string]any{"cmd": "cat f; echo $A"}); string(res.Stdout) != "child\n1\n" {
		t.Fatalf("child: %q", res.Stdout)
	}

	// Bob: alice's snapshots are as absent as ones that never existed.
	for _, sid := range []string{snap.ID, "0123456789abcdef0123456789abcdef", "../x", "ZZ"} {
		for _, rq := range []struct{ method, path string }{{"GET", "/v1/snapshots/" + sid}, {"DELETE", "/v1/snapshots/" + sid}} {
			if r := s.do(bob, rq.method, rq.path, nil); r.status != http.StatusNotFound || r.errCode(t) != "not_found" {
				t.Errorf("bob %s %s: %d %s", rq.method, rq.path, r.status, r.body)
			}
		}
		if r := s.do(bob, "POST", "/v1/vms", map[string]any{"from_snapshot": sid}); r.status != http.StatusNotFound {
			t.Errorf("bob restores %s: %d %s", sid, r.status, r.body)
		}
	}
	s.do(bob, "GET", "/v1/snapshots", nil).json(t, &list)
	if len(list.Snapshots) != 0 {
		t.Fatalf("bob lists %+v", list)
	}

	if r := s.do(alice, "DELETE", "/v1/snapshots/"+snap.ID, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "GET", "/v1/snapshots/"+snap.ID, nil); r.status != http.StatusNotFound {
		t.Fatalf("after delete: %d", r.status)
	}
	// The other snapshot still restores.
	s.newVM(alice, map[string]any{"from_snapshot": again.ID})
}

// TestSnapshotsDisabled: without a snapshot directory the routes say so.
func TestSnapshotsDisabled(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	for _, rq := range []struct{ method, path string }{{"POST", "/v1/vms/" + id + "/snapshots"}, {"GET", "/v1/snapshots"}, {"GET", "/v1/snapshots/0123456789abcdef0123456789abcdef"}} {
		if r := s.do(alice, rq.method, rq.path, nil); r.status != http.StatusNotImplemented || r.errCode(t) != "not_implemented" {
			t.Errorf("%s %s: %d %s", rq.method, rq.path, r.status, r.body)
		}
	}
}
