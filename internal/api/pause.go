package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/secexec/secexec"
)

// StatePaused is the state of a VM saved to its pause snapshot and freed;
// any request that needs it running restores it first.
const StatePaused = "paused"

// What OnIdle may say.
const (
	OnIdleClose = "close"
	OnIdlePause = "pause"
)

// Bounds of VM labels.
const (
	maxVMLabels      = 32
	maxLabelKeyLen   = 63
	maxLabelValueLen = 256
	maxLabelFilters  = 16
)

// labelKey is what a label key may be: a DNS-label-like word, with dots
// and slashes for namespaces ("team", "app.kubernetes.io/name").
var labelKey = regexp.MustCompile(`^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?$`)

// resumeTimeout bounds a resume: requests waiting on it wait no longer.
const resumeTimeout = 2 * time.Minute

// PauseRequest is the body of POST /v1/vms/{id}/pause.
type PauseRequest struct {
	// Restart are commands (argv) started again in the background when
	// the VM resumes: processes do not survive a pause (at most 16).
	Restart [][]string `json:"restart,omitempty"`
}

// PatchVMRequest is the body of PATCH /v1/vms/{id}.
type PatchVMRequest struct {
	// TTLMS, when set, makes the VM expire this long from now (capped
	// by the server's maximum TTL).
	TTLMS *int64 `json:"ttl_ms,omitempty"`
	// Labels, when set, replace the VM's labels.
	Labels map[string]string `json:"labels,omitempty"`
}

// checkLabels refuses labels over the bounds.
func checkLabels(labels map[string]string) error {
	if len(labels) > maxVMLabels {
		return apiError(http.StatusBadRequest, CodeBadRequest, "at most %d labels", maxVMLabels)
	}
	for k, v := range labels {
		if len(k) > maxLabelKeyLen || !labelKey.MatchString(k) {
			return apiError(http.StatusBadRequest, CodeBadRequest, "label key %.70q: want at most %d of a-z 0-9 . _ / -, starting and ending alphanumeric", k, maxLabelKeyLen)
		}
		if len(v) > maxLabelValueLen {
			return apiError(http.StatusBadRequest, CodeBadRequest, "label %q: the value is over %d bytes", k, maxLabelValueLen)
		}
	}
	return nil
}

// ttlDeadline turns a requested TTL into an expiry time (zero: none).
func (s *Server) ttlDeadline(ms int64, now time.Time) (time.Time, error) {
	if ms < 0 {
		return time.Time{}, apiError(http.StatusBadRequest, CodeBadRequest, "ttl_ms must not be negative")
	}
	if ms == 0 {
		return time.Time{}, nil
	}
	if ms > s.cfg.MaxTTL.Milliseconds() {
		return time.Time{}, apiError(http.StatusBadRequest, CodeBadRequest, "ttl_ms is over this server's maximum %d", s.cfg.MaxTTL.Milliseconds())
	}
	return now.Add(time.Duration(ms) * time.Millisecond), nil
}

// vmFilter is a parsed GET /v1/vms query.
type vmFilter struct {
	labels map[string]string
	state  string
}

func parseVMFilter(r *http.Request) (vmFilter, error) {
	q := r.URL.Query()
	f := vmFilter{labels: map[string]string{}, state: q.Get("state")}
	switch f.state {
	case "", StateRunning, StatePaused, StateLost:
	default:
		return f, apiError(http.StatusBadRequest, CodeBadRequest, "state must be running, paused or lost")
	}
	ls := q["label"]
	if len(ls) > maxLabelFilters {
		return f, apiError(http.StatusBadRequest, CodeBadRequest, "at most %d label filters", maxLabelFilters)
	}
	for _, l := range ls {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return f, apiError(http.StatusBadRequest, CodeBadRequest, "label filter %.70q is not key=value", l)
		}
		f.labels[k] = v
	}
	return f, nil
}

func (f vmFilter) match(j VMJSON) bool {
	if f.state != "" && j.State != f.state {
		return false
	}
	for k, v := range f.labels {
		if got, ok := j.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// pauseStore opens the tenant's store of pause snapshots: apart from its
// own snapshots (not listed, not deletable, not counted by
// MaxSnapshots), counted instead by MaxPausedVMs.
func (s *Server) pauseStore(tenant string) (*secexec.SnapshotStore, error) {
	if s.storeLoc == "" {
		return nil, apiError(http.StatusNotImplemented, CodeNotImplemented, "pause is not enabled on this server (serve --snapshot-dir or --snapshot-store)")
	}
	return s.openStore("p-" + tenantHash(tenant))
}

// lockOp takes e's transition lock (pause, resume and remove run one at
// a time), giving up when ctx ends.
func (e *vmEntry) lockOp(ctx context.Context) error {
	select {
	case e.op <- struct{}{}:
		return nil
	case <-ctx.Done():
		return apiError(http.StatusServiceUnavailable, CodeShuttingDown, "gave up waiting for the VM to pause or resume: %v", ctx.Err())
	}
}

func (e *vmEntry) unlockOp() { <-e.op }

// enter makes e usable for one request, resuming it if paused; leave
// (when ok) ends the request. Concurrent requests to a paused VM wait on
// the one resume.
func (s *Server) enter(ctx context.Context, e *vmEntry) (leave func(), err error) {
	if leave, ok := e.enterRunning(); ok {
		return leave, nil
	}
	if err := e.lockOp(ctx); err != nil {
		return nil, err
	}
	defer e.unlockOp()
	e.mu.Lock()
	paused, gone := e.state == StatePaused, e.removed
	e.mu.Unlock()
	if gone {
		return nil, apiError(http.StatusNotFound, CodeNotFound, "no such VM")
	}
	if paused {
		if err := s.resume(e); err != nil {
			return nil, err
		}
	}
	if leave, ok := e.enterRunning(); ok {
		return leave, nil
	}
	return nil, apiError(http.StatusConflict, CodeConflict, "the VM is not running")
}

// enterRunning counts a request on e if it is running (or lost: the
// handlers answer for a lost VM themselves).
func (e *vmEntry) enterRunning() (func(), bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != StateRunning || e.removed {
		return nil, false
	}
	e.inflight++
	return func() {
		e.mu.Lock()
		e.inflight--
		e.mu.Unlock()
	}, true
}

// resume restores e from its pause snapshot. The caller holds e's op
// lock.
func (s *Server) resume(e *vmEntry) error {
	if s.draining.Load() {
		return apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	}
	if !s.vms.reserve(e.tenant) {
		return &Error{Status: http.StatusTooManyRequests, Code: CodeQuota, RetryAfter: 5,
			Message: fmt.Sprintf("at most %d running VMs per tenant: pause or delete one to resume this one", s.cfg.MaxVMs)}
	}
	// Not the request's context: every request waiting on this resume
	// shares it, so one client going away must not fail the others.
	ctx, cancel := context.WithTimeout(context.Background(), resumeTimeout)
	defer cancel()
	// The record says who runs the VM: written before the VM runs, so
	// that a replica that adopted it meanwhile wins and this one drops
	// its copy rather than run a second.
	if err := s.saveRecord(ctx, e, StateRunning); err != nil {
		s.vms.unreserve(e.tenant)
		if errors.Is(err, errMoved) {
			s.vms.lose(e)
		}
		return err
	}
	vm, err := s.restorePaused(ctx, e)
	if err != nil {
		s.vms.unreserve(e.tenant)
		return err
	}
	s.vms.resumed(e, vm)
	s.cfg.Logger.Info("resumed VM", "vm", e.id, "tenant", e.tenant)
	return nil
}

func (s *Server) restorePaused(ctx context.Context, e *vmEntry) (*secexec.VM, error) {
	st, err := s.pauseStore(e.tenant)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	id, opts := e.snapshot, e.opts
	e.mu.Unlock()
	snap, err := st.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("resume: pause snapshot %s: %w", id, err)
	}
	opts.From = snap
	return s.cfg.NewVM(ctx, opts)
}

// pause saves e to a pause snapshot and closes it. It refuses (409) while
// another request uses the VM; its spawned processes and JS contexts
// end. The caller holds no lock.
func (s *Server) pause(ctx context.Context, e *vmEntry, restart [][]string) error {
	st, unlock, err := s.lockForSave(ctx, e)
	if err != nil {
		return err
	}
	defer unlock()
	e.mu.Lock()
	switch {
	case e.removed:
		e.mu.Unlock()
		return apiError(http.StatusNotFound, CodeNotFound, "no such VM")
	case e.state == StatePaused:
		e.mu.Unlock()
		return nil
	case e.lost != "":
		e.mu.Unlock()
		return apiError(http.StatusConflict, CodeConflict, "the VM was lost with its engine (%s); it cannot be paused", e.lost)
	case e.inflight > 0:
		e.mu.Unlock()
		return apiError(http.StatusConflict, CodeConflict, "the VM is in use by %d other request(s); pause it once they end", e.inflight)
	}
	// From here on new requests wait on the op lock.
	e.state = statePausing
	prev := e.snapshot
	e.mu.Unlock()
	if !s.vms.reservePaused(e.tenant) {
		e.setState(StateRunning)
		return &Error{Status: http.StatusTooManyRequests, Code: CodeQuota,
			Message: fmt.Sprintf("at most %d paused VMs per tenant", s.cfg.MaxPausedVMs)}
	}
	snap, err := e.vm.Snapshot(ctx, st, secexec.SnapshotOptions{Restart: restart})
	if err != nil {
		s.vms.unreservePaused(e.tenant)
		e.setState(StateRunning)
		return fmt.Errorf("pause: %w", err)
	}
	e.mu.Lock()
	e.snapshot, e.restart = snap.ID, restart
	e.mu.Unlock()
	if err := s.saveRecord(ctx, e, StatePaused); err != nil {
		s.vms.unreservePaused(e.tenant)
		s.abandonSave(ctx, st, e, prev, snap.ID, err)
		if errors.Is(err, errMoved) {
			return err
		}
		e.setState(StateRunning)
		return fmt.Errorf("pause: %w", err)
	}
	s.vms.paused(e)
	// The snapshot of an earlier pause is kept until this one is saved.
	s.dropSave(ctx, st, e, prev, snap.ID)
	s.cfg.Logger.Info("paused VM", "vm", e.id, "tenant", e.tenant, "snapshot", snap.ID)
	return nil
}

// statePausing is e's state while it is saved: requests wait.
const statePausing = "pausing"

func (e *vmEntry) setState(st string) {
	e.mu.Lock()
	e.state = st
	e.mu.Unlock()
}

// closeVM closes e's contexts and engine VM (its processes end).
func (e *vmEntry) closeVM() {
	e.mu.Lock()
	ctxs := e.contexts
	e.contexts = map[string]io.Closer{}
	e.mu.Unlock()
	for _, c := range ctxs {
		_ = c.Close()
	}
	_ = e.vm.Close() // kills its processes, which ends their sessions
}

// deletePauseSnapshot deletes e's pause snapshot, if any (e is going).
func (s *Server) deletePauseSnapshot(e *vmEntry) {
	e.mu.Lock()
	id := e.snapshot
	e.snapshot = ""
	e.mu.Unlock()
	if id == "" {
		return
	}
	st, err := s.pauseStore(e.tenant)
	if err == nil {
		err = st.Delete(context.Background(), id)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		s.cfg.Logger.Warn("deleting a pause snapshot", "vm", e.id, "snapshot", id, "err", err)
	}
}

func (s *Server) pauseVM(w http.ResponseWriter, r *http.Request) {
	var req PauseRequest
	if err := s.decodeJSON(w, r, &req, true); err != nil {
		writeError(w, err)
		return
	}
	e := vmOf(r)
	if err := s.pause(r.Context(), e, req.Restart); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, e.json())
}

func (s *Server) resumeVM(w http.ResponseWriter, r *http.Request) {
	// route has resumed it already.
	writeJSON(w, http.StatusOK, vmOf(r).json())
}

func (s *Server) patchVM(w http.ResponseWriter, r *http.Request) {
	var req PatchVMRequest
	if err := s.decodeJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	var exp time.Time
	if req.TTLMS != nil {
		var err error
		if exp, err = s.ttlDeadline(*req.TTLMS, time.Now()); err != nil {
			writeError(w, err)
			return
		}
	}
	if req.Labels != nil {
		if err := checkLabels(req.Labels); err != nil {
			writeError(w, err)
			return
		}
	}
	e := vmOf(r)
	e.mu.Lock()
	if req.TTLMS != nil {
		e.expires = exp
	}
	if req.Labels != nil {
		e.labels = copyLabels(req.Labels)
	}
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, e.json())
}

func copyLabels(l map[string]string) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out
}

// keepsState reports whether a request to a VM's path leaves a paused VM
// paused: reading, changing or deleting its record, and pausing it.
func keepsState(r *http.Request, id string) bool {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/vms/"+id)
	switch rest {
	case "", "/":
		return r.Method == http.MethodGet || r.Method == http.MethodDelete || r.Method == http.MethodPatch
	case "/pause":
		return true
	}
	return false
}
