package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/snapshot"
)

// TestAmbiguousRecordWriteKeepsTheSave: a save whose record write landed
// on the store although its caller saw an error (the context cancelled by
// a shutdown, a timeout, a lost connection) must not delete the snapshot
// the record now names. Only a refused compare-and-swap (another replica
// owns the VM) discards the new snapshot.
func TestAmbiguousRecordWriteKeepsTheSave(t *testing.T) {
	s, err := New(Config{SnapshotDir: t.TempDir(), Tokens: []Token{{Tenant: "alice", Hash: HashToken("tok-alice")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	req := httptest.NewRequest("POST", "/v1/vms", bytes.NewReader([]byte(`{}`)))
	req.Header.Set("Authorization", "Bearer tok-alice")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var vm struct{ ID string }
	if rec.Code != http.StatusCreated && rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &vm) != nil {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	e := s.vms.get("alice", vm.ID)
	if e == nil {
		t.Fatal("the VM is not registered")
	}
	ctx := context.Background()
	if err := s.save(ctx, e); err != nil {
		t.Fatalf("first save: %v", err)
	}
	first := e.snapshot
	st, err := s.pauseStore("alice")
	if err != nil {
		t.Fatal(err)
	}

	// The second save's record write lands, and its caller is told the
	// context was cancelled.
	second, err := e.vm.Snapshot(ctx, st, secexec.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.snapshot = second.ID
	if err := s.saveRecord(ctx, e, StateRunning); err != nil {
		t.Fatal(err)
	}
	s.abandonSave(ctx, st, e, first, second.ID, context.Canceled)
	if e.snapshot != second.ID {
		t.Errorf("the VM resumes from %s, the record names %s", e.snapshot, second.ID)
	}
	if _, err := st.Get(ctx, second.ID); err != nil {
		t.Errorf("the snapshot the record names is gone: %v", err)
	}
	if _, err := st.Get(ctx, first); err == nil {
		t.Errorf("the superseded save %s was kept", first)
	}
	// A later save still works on the version the re-read found.
	if err := s.save(ctx, e); err != nil {
		t.Errorf("a save after the ambiguous one: %v", err)
	}

	// A refused write (another replica's version) discards the new
	// snapshot and the VM.
	third, err := e.vm.Snapshot(ctx, st, secexec.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.abandonSave(ctx, st, e, e.snapshot, third.ID, errMoved)
	if _, err := st.Get(ctx, third.ID); !errors.Is(err, snapshot.ErrNotFound) {
		t.Errorf("a refused save's snapshot: %v, want not found", err)
	}
}
