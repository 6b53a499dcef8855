package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/snapshot"
)

// A VM that was paused (or saved by SnapshotEvery) has a record in the
// snapshot store beside its pause snapshot: records/vms/<tenant
// hash>/<id>.json. The record is what outlives the server: a restarted
// replica loads the records it owns as paused VMs, and in a fleet a
// replica that cannot reach a VM's owner adopts the VM by rewriting the
// record's owner. Every write of a record is a compare-and-swap on the
// version this replica last read or wrote, so of two replicas only one
// can own a VM; an owner whose write is refused has lost the VM and
// drops its copy (see errMoved).

// vmRecord is a VM's durable record.
type vmRecord struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	// Owner is the replica that holds the VM (runs it, or resumes it).
	Owner string `json:"owner"`
	// State is StatePaused, or StateRunning for a running VM's periodic
	// save: either way Snapshot is where it resumes from.
	State       string            `json:"state"`
	Snapshot    string            `json:"snapshot"`
	Created     time.Time         `json:"created"`
	SavedAt     time.Time         `json:"saved_at"`
	IdleTimeout int64             `json:"idle_timeout_ms"`
	Labels      map[string]string `json:"labels,omitempty"`
	Expires     *time.Time        `json:"expires_at,omitempty"`
	Engine      string            `json:"engine"`
	// Create is the request the VM was made with (checked again against
	// this server's limits when it is resumed).
	Create  CreateVMRequest `json:"create"`
	Restart [][]string      `json:"restart,omitempty"`
}

// errMoved: another replica owns the VM now (it adopted it).
var errMoved = apiError(http.StatusMisdirectedRequest, CodeWrongReplica, "the VM was taken over by another replica; retry")

// recordName is the key of a VM's record: under its tenant's hash, so
// that another tenant's lookup of the same id finds nothing.
func recordName(tenant, id string) string { return "vms/" + tenantHash(tenant) + "/" + id }

// recordsTimeout bounds one record operation.
const recordsTimeout = 30 * time.Second

func (s *Server) recordOf(e *vmEntry, state string) vmRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec := vmRecord{ID: e.id, Tenant: e.tenant, Owner: s.cfg.Replica, State: state, Snapshot: e.snapshot,
		Created: e.created, SavedAt: time.Now(), IdleTimeout: e.idleTimeout.Milliseconds(), Labels: copyLabels(e.labels),
		Engine: e.engine, Create: e.create, Restart: e.restart}
	if !e.expires.IsZero() {
		exp := e.expires
		rec.Expires = &exp
	}
	return rec
}

// saveRecord writes e's record with state, if this replica still owns
// it (errMoved otherwise).
func (s *Server) saveRecord(ctx context.Context, e *vmEntry, state string) error {
	if s.recs == nil {
		return nil
	}
	data, err := json.Marshal(s.recordOf(e, state))
	if err != nil {
		return err
	}
	e.mu.Lock()
	prev := e.recVersion
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	defer cancel()
	v, err := s.recs.PutRecord(ctx, recordName(e.tenant, e.id), data, prev)
	if errors.Is(err, snapshot.ErrConflict) {
		return errMoved
	}
	if err != nil {
		return fmt.Errorf("saving the VM's record: %w", err)
	}
	e.mu.Lock()
	e.recVersion = v
	e.mu.Unlock()
	return nil
}

// dropRecord deletes e's record (the VM is gone).
func (s *Server) dropRecord(e *vmEntry) {
	e.mu.Lock()
	had := e.recVersion != ""
	e.recVersion = ""
	e.mu.Unlock()
	if s.recs == nil || !had {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordsTimeout)
	defer cancel()
	if err := s.recs.DeleteRecord(ctx, recordName(e.tenant, e.id)); err != nil {
		s.cfg.Logger.Warn("deleting a VM's record", "vm", e.id, "err", err)
	}
}

// readRecord returns the tenant's record of id and its version.
func (s *Server) readRecord(ctx context.Context, tenant, id string) (vmRecord, string, error) {
	var rec vmRecord
	ctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	defer cancel()
	data, v, err := s.recs.GetRecord(ctx, recordName(tenant, id))
	if err != nil {
		return rec, "", err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, "", fmt.Errorf("record of %s: %w: %w", id, snapshot.ErrCorrupt, err)
	}
	// The key is the tenant's hash: a record that names another tenant
	// or VM was not written by a replica.
	if rec.ID != id || rec.Tenant != tenant || rec.Snapshot == "" {
		return rec, "", fmt.Errorf("record of %s: it names %s of another tenant: %w", id, rec.ID, snapshot.ErrCorrupt)
	}
	return rec, v, nil
}

// entryOf makes the paused entry a record describes; the caller adds it
// to the registry.
func (s *Server) entryOf(rec vmRecord, version string) (*vmEntry, error) {
	opts, err := s.vmOptions(&rec.Create)
	if err != nil {
		return nil, fmt.Errorf("record of %s: %w", rec.ID, err)
	}
	if err := s.placeVM(&opts, rec.Tenant, rec.Engine); err != nil {
		return nil, fmt.Errorf("record of %s: %w", rec.ID, err)
	}
	e := &vmEntry{id: rec.ID, tenant: rec.Tenant, created: rec.Created, lastUsed: rec.SavedAt,
		idleTimeout: time.Duration(rec.IdleTimeout) * time.Millisecond, procs: map[int]*process{}, contexts: map[string]io.Closer{},
		engine: rec.Engine, opts: opts, create: rec.Create, restart: rec.Restart, labels: copyLabels(rec.Labels),
		state: StatePaused, snapshot: rec.Snapshot, recVersion: version, op: make(chan struct{}, 1), released: true}
	if rec.Expires != nil {
		e.expires = *rec.Expires
	}
	return e, nil
}

// loadRecords registers, paused, the VMs whose records this replica
// owns: those it had paused or saved before it stopped. One that is over
// its tenant's MaxPausedVMs, or unreadable, stays in the store and is
// logged.
func (s *Server) loadRecords(ctx context.Context) error {
	names, err := s.recs.ListRecords(ctx, "vms/")
	if err != nil {
		return err
	}
	for _, name := range names {
		parts := strings.Split(name, "/")
		if len(parts) != 3 {
			continue
		}
		if _, ok := parseVMID(parts[2]); !ok {
			continue
		}
		data, v, err := s.recs.GetRecord(ctx, name)
		if err != nil {
			s.cfg.Logger.Warn("reading a VM's record", "record", name, "err", err)
			continue
		}
		var rec vmRecord
		if err := json.Unmarshal(data, &rec); err != nil || rec.ID != parts[2] || recordName(rec.Tenant, rec.ID) != name {
			s.cfg.Logger.Warn("a VM's record does not match its key", "record", name, "err", err)
			continue
		}
		// By owner, not by the id's replica: VMs this replica adopted
		// are its own.
		if rec.Owner != s.cfg.Replica {
			continue
		}
		if err := s.register(rec, v); err != nil {
			s.cfg.Logger.Warn("loading a paused VM", "vm", rec.ID, "tenant", rec.Tenant, "err", err)
			continue
		}
		s.cfg.Logger.Info("loaded a paused VM from the store", "vm", rec.ID, "tenant", rec.Tenant)
	}
	return nil
}

// maxPausedElsewhere bounds how many records of other replicas one list
// reads.
const maxPausedElsewhere = 1024

// pausedElsewhere returns the tenant's paused VMs that other replicas own
// in the shared record store, leaving out the ids in have. So a fleet's
// list names every paused VM, also those of a replica that is gone for
// good (its name was a pod's address): a request for one adopts it.
func (s *Server) pausedElsewhere(ctx context.Context, tenant string, have map[string]bool) []VMJSON {
	if s.recs == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	defer cancel()
	names, err := s.recs.ListRecords(ctx, "vms/"+tenantHash(tenant)+"/")
	if err != nil {
		s.cfg.Logger.Warn("listing the tenant's VM records", "err", err)
		return nil
	}
	var out []VMJSON
	for i, name := range names {
		id := path.Base(name)
		if i >= maxPausedElsewhere || ctx.Err() != nil {
			break
		}
		if have[id] {
			continue
		}
		rec, _, err := s.readRecord(ctx, tenant, id)
		if err != nil || rec.State != StatePaused || rec.Owner == s.cfg.Replica {
			continue
		}
		j := VMJSON{ID: rec.ID, CreatedAt: rec.Created, LastUsedAt: rec.SavedAt, IdleTimeoutMS: rec.IdleTimeout,
			Engine: rec.Engine, State: StatePaused, Labels: copyLabels(rec.Labels), ExpiresAt: rec.Expires}
		out = append(out, j)
	}
	return out
}

// register adds the paused VM rec describes to the registry, counted
// against its tenant's MaxPausedVMs.
func (s *Server) register(rec vmRecord, version string) error {
	e, err := s.entryOf(rec, version)
	if err != nil {
		return err
	}
	if !s.vms.reservePaused(rec.Tenant) {
		return &Error{Status: http.StatusTooManyRequests, Code: CodeQuota,
			Message: fmt.Sprintf("at most %d paused VMs per tenant", s.cfg.MaxPausedVMs)}
	}
	if !s.vms.addPaused(e) {
		s.vms.unreservePaused(rec.Tenant)
	}
	return nil
}

// adopt takes over the tenant's VM id from replica from, which did not
// answer: the record's owner becomes this replica (compare-and-swap, so
// one replica wins) and the VM is registered here, paused, to be resumed
// from its last save by the request. It returns the entry, or the
// replica that owns the VM now when that is neither from nor this one.
// With from "" it takes the VM from nobody: it registers a VM whose
// record names this replica, or says who owns it.
func (s *Server) adopt(ctx context.Context, tenant, id, from string) (*vmEntry, string, error) {
	notFound := apiError(http.StatusNotFound, CodeNotFound, "no such VM")
	if s.recs == nil {
		return nil, "", notFound
	}
	for range 3 {
		if e := s.vms.get(tenant, id); e != nil {
			return e, "", nil // adopted by a concurrent request
		}
		rec, v, err := s.readRecord(ctx, tenant, id)
		if errors.Is(err, snapshot.ErrNotFound) {
			return nil, "", notFound
		}
		if err != nil {
			return nil, "", err
		}
		if rec.Owner != from && rec.Owner != s.cfg.Replica {
			return nil, rec.Owner, nil
		}
		prevOwner := rec.Owner
		rec.Owner, rec.State = s.cfg.Replica, StatePaused
		data, err := json.Marshal(rec)
		if err != nil {
			return nil, "", err
		}
		if prevOwner != s.cfg.Replica {
			if v, err = s.recs.PutRecord(ctx, recordName(tenant, id), data, v); errors.Is(err, snapshot.ErrConflict) {
				continue // another replica moved first: read again
			}
			if err != nil {
				return nil, "", fmt.Errorf("adopting %s: %w", id, err)
			}
		}
		if err := s.register(rec, v); err != nil {
			return nil, "", err
		}
		s.cfg.Logger.Info("adopted a VM whose replica does not answer", "vm", id, "tenant", tenant, "from", from)
		if e := s.vms.get(tenant, id); e != nil {
			return e, "", nil
		}
	}
	return nil, "", apiError(http.StatusConflict, CodeConflict, "the VM is moving between replicas; retry")
}

// saveLoop saves running VMs every SnapshotEvery (Config), one at a
// time, so that a replica that dies loses only what changed since.
func (s *Server) saveLoop(ctx context.Context) {
	defer close(s.saverDone)
	t := time.NewTicker(s.cfg.SnapshotEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, e := range s.vms.toSave() {
			if ctx.Err() != nil {
				return
			}
			if err := s.save(ctx, e); err != nil {
				// Tried again next time: a file written while it was
				// saved (EAGAIN), a store that did not answer.
				s.cfg.Logger.Warn("saving a running VM", "vm", e.id, "tenant", e.tenant, "err", err)
			}
		}
	}
}

// toSave returns the running VMs that may have changed since their last
// save: used since, or running processes (which may write files).
func (g *registry) toSave() []*vmEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*vmEntry
	for _, e := range g.vms {
		e.mu.Lock()
		if e.state == StateRunning && !e.removed && e.lost == "" &&
			(e.savedAt.IsZero() || e.lastUsed.After(e.savedAt) || e.active > 0 || len(e.procs) > 0) {
			out = append(out, e)
		}
		e.mu.Unlock()
	}
	return out
}

// save snapshots running e to its tenant's pause store and records it
// (state running), then deletes its previous save. The VM keeps
// running and serving requests meanwhile.
func (s *Server) save(ctx context.Context, e *vmEntry) error {
	st, unlock, err := s.lockForSave(ctx, e)
	if err != nil {
		return err
	}
	defer unlock()
	e.mu.Lock()
	ok := e.state == StateRunning && !e.removed && e.lost == ""
	prev, vm, restart := e.snapshot, e.vm, e.restart
	e.mu.Unlock()
	if !ok {
		return nil
	}
	started := time.Now()
	sctx, cancel := context.WithTimeout(ctx, resumeTimeout)
	snap, err := vm.Snapshot(sctx, st, secexec.SnapshotOptions{Restart: restart})
	cancel()
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.snapshot, e.savedAt = snap.ID, started
	e.mu.Unlock()
	if err := s.saveRecord(ctx, e, StateRunning); err != nil {
		s.abandonSave(ctx, st, e, prev, snap.ID, err)
		return err
	}
	s.dropSave(ctx, st, e, prev, snap.ID)
	return nil
}

// lockForSave opens e's pause store and takes e's op lock (pause,
// resume, save and removal run one at a time).
func (s *Server) lockForSave(ctx context.Context, e *vmEntry) (*secexec.SnapshotStore, func(), error) {
	st, err := s.pauseStore(e.tenant)
	if err != nil {
		return nil, nil, err
	}
	if err := e.lockOp(ctx); err != nil {
		return nil, nil, err
	}
	return st, e.unlockOp, nil
}

// abandonSave settles the save id of e whose record could not be written
// (err). When the store refused the write (another replica's version was
// there), e keeps prev, the new snapshot goes, and this replica drops its
// copy: another owns e now. After any other failure — a timeout, a
// cancelled context, a lost connection — the write may have landed, so
// the record is read again: if it names id the save stands (prev goes);
// otherwise both stay — a write cancelled on this side can still land
// after the read, and deleting the snapshot a record names loses the VM,
// while keeping one too many costs only its unshared blobs.
func (s *Server) abandonSave(ctx context.Context, st *secexec.SnapshotStore, e *vmEntry, prev, id string, err error) {
	e.mu.Lock()
	e.snapshot = prev
	e.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	if errors.Is(err, errMoved) {
		_ = st.Delete(ctx, id)
		s.vms.lose(e)
		return
	}
	rec, v, rerr := s.readRecord(ctx, e.tenant, e.id)
	switch {
	case rerr != nil:
		s.cfg.Logger.Warn("a VM's record is in doubt after a failed write; keeping both saves", "vm", e.id, "err", rerr)
	case rec.Snapshot == id && rec.Owner == s.cfg.Replica:
		e.mu.Lock()
		e.snapshot, e.recVersion = id, v
		e.mu.Unlock()
		s.dropSave(ctx, st, e, prev, id)
	}
}

// dropSave deletes e's earlier save prev, now that id replaces it: kept
// until then, so a failure midway leaves the earlier one whole.
func (s *Server) dropSave(ctx context.Context, st *secexec.SnapshotStore, e *vmEntry, prev, id string) {
	if prev == "" || prev == id {
		return
	}
	if err := st.Delete(context.WithoutCancel(ctx), prev); err != nil && !errors.Is(err, snapshot.ErrNotFound) {
		s.cfg.Logger.Warn("deleting a VM's previous save", "vm", e.id, "snapshot", prev, "err", err)
	}
}
