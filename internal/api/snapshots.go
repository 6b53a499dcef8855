package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/snapshot"
)

// SnapshotRequest is the body of POST /v1/vms/{id}/snapshots.
type SnapshotRequest struct {
	// Labels are kept with the snapshot (at most 64).
	Labels map[string]string `json:"labels,omitempty"`
	// Restart are commands (argv) a VM restored from the snapshot starts
	// in the background (at most 16).
	Restart [][]string `json:"restart,omitempty"`
}

// SnapshotJSON describes a snapshot.
type SnapshotJSON struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// Files and Bytes count the regular files saved and their bytes.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// StoredBytes is what taking it added to storage: the compressed
	// contents no earlier snapshot of the tenant had.
	StoredBytes int64             `json:"stored_bytes"`
	Labels      map[string]string `json:"labels,omitempty"`
	Restart     [][]string        `json:"restart,omitempty"`
}

func snapshotJSON(s *secexec.Snapshot) SnapshotJSON {
	return SnapshotJSON{ID: s.ID, CreatedAt: s.Created, Files: s.Files, Bytes: s.Bytes, StoredBytes: s.Stored,
		Labels: s.Labels, Restart: s.Restart}
}

// tenantStore opens the tenant's own snapshot store: a directory (or
// key prefix) of its own in the server's store, named by a hash of the
// tenant so that no tenant name can reach another's (or any other)
// store.
func (s *Server) tenantStore(tenant string) (*secexec.SnapshotStore, error) {
	if s.storeLoc == "" {
		return nil, apiError(http.StatusNotImplemented, CodeNotImplemented, "snapshots are not enabled on this server (serve --snapshot-dir or --snapshot-store)")
	}
	return s.openStore("t-" + tenantHash(tenant))
}

// tenantHash names a tenant in store keys: a hash, so that no tenant
// name can reach another's keys.
func tenantHash(tenant string) string {
	sum := sha256.Sum256([]byte(tenant))
	return hex.EncodeToString(sum[:12])
}

// openStore opens the store named name inside the server's.
func (s *Server) openStore(name string) (*secexec.SnapshotStore, error) {
	st, err := secexec.OpenSnapshotStoreAt(snapshot.Join(s.storeLoc, name), s.cfg.SnapshotCredentials)
	if err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	return st, nil
}

// tenantSnapshot returns the tenant's snapshot id; another tenant's is as
// absent as one that never existed.
func (s *Server) tenantSnapshot(r *http.Request, id string) (*secexec.Snapshot, error) {
	st, err := s.tenantStore(tenantOf(r.Context()))
	if err != nil {
		return nil, err
	}
	snap, err := st.Get(r.Context(), id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apiError(http.StatusNotFound, CodeNotFound, "no such snapshot")
	}
	return snap, err
}

// snapshotLock is the tenant's lock over its snapshot count: a create
// checks the quota and adds under it, a delete removes under it. Each
// tenant has its own, so one tenant's slow snapshot delays no other's.
func (s *Server) snapshotLock(tenant string) *sync.Mutex {
	mu, _ := s.snapLocks.LoadOrStore(tenant, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) {
	tenant := tenantOf(r.Context())
	var req SnapshotRequest
	if err := s.decodeJSON(w, r, &req, true); err != nil {
		writeError(w, err)
		return
	}
	st, err := s.tenantStore(tenant)
	if err != nil {
		writeError(w, err)
		return
	}
	// Saving is the tenant's work: it takes one of its concurrent-run
	// slots, so a tenant cannot save without bound at once.
	done, err := s.begin(tenant)
	if err != nil {
		writeError(w, err)
		return
	}
	defer done()
	mu := s.snapshotLock(tenant)
	mu.Lock()
	defer mu.Unlock()
	list, err := st.List(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	if len(list) >= s.cfg.MaxSnapshots {
		writeError(w, &Error{Status: http.StatusTooManyRequests, Code: CodeQuota,
			Message: fmt.Sprintf("at most %d snapshots per tenant: delete some first", s.cfg.MaxSnapshots)})
		return
	}
	e := vmOf(r)
	defer e.use()()
	snap, err := e.vm.Snapshot(r.Context(), st, secexec.SnapshotOptions{Labels: req.Labels, Restart: req.Restart})
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Location", "/v1/snapshots/"+snap.ID)
	writeJSON(w, http.StatusCreated, snapshotJSON(snap))
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	st, err := s.tenantStore(tenantOf(r.Context()))
	if err != nil {
		writeError(w, err)
		return
	}
	list, err := st.List(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]SnapshotJSON, 0, len(list))
	for _, snap := range list {
		out = append(out, snapshotJSON(snap))
	}
	writeJSON(w, http.StatusOK, map[string]any{"snapshots": out})
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) {
	snap, err := s.tenantSnapshot(r, chi.URLParam(r, "sid"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, snapshotJSON(snap))
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	snap, err := s.tenantSnapshot(r, chi.URLParam(r, "sid"))
	if err != nil {
		writeError(w, err)
		return
	}
	mu := s.snapshotLock(tenantOf(r.Context()))
	mu.Lock()
	defer mu.Unlock()
	if err := snap.Store.Delete(r.Context(), snap.ID); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fromSnapshot fills the permissions and limits a create request leaves
// out from the snapshot's, so that they are checked like any request's
// (limits against the server's maximum, network rules). The rest (env,
// cwd, hostname, clock, memory mounts) Options.From fills itself.
func fromSnapshot(req *CreateVMRequest, snap *secexec.Snapshot) error {
	o := snap.Options()
	if len(req.Permissions) == 0 && o.Permissions != nil {
		b, err := json.Marshal(o.Permissions)
		if err != nil {
			return err
		}
		req.Permissions = b
	}
	if req.Limits == nil {
		l := o.Limits
		req.Limits = &LimitsJSON{FSBytes: l.FSBytes, Processes: l.Processes, MemoryBytes: l.MemoryBytes,
			CPUTimeMS: l.CPUTime.Milliseconds(), VMMemoryBytes: l.VMMemoryBytes, VMCPUTimeMS: l.VMCPUTime.Milliseconds()}
	}
	return nil
}

func (s *Server) forkVM(w http.ResponseWriter, r *http.Request) {
	tenant := tenantOf(r.Context())
	parent := vmOf(r)
	if s.draining.Load() {
		writeError(w, apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
		return
	}
	defer parent.use()()
	parent.mu.Lock()
	m := vmMeta{idle: parent.idleTimeout, engine: parent.engine, opts: parent.opts, create: parent.create, labels: copyLabels(parent.labels), expires: parent.expires}
	parent.mu.Unlock()
	s.admitVM(w, tenant, m, func() (*secexec.VM, error) { return parent.vm.Fork(r.Context()) })
}
