package api

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/policy"
)

// replicaName is what a replica may be called: a DNS label, as a pod name
// is, so that a VM id cannot make a forwarding URL reach anything else.
var replicaName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// idSuffixLen is the length of the random part of a VM id: 80 bits in
// lower-case base32.
const idSuffixLen = 16

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newVMID returns "<replica>-<16 random base32 characters>".
func newVMID(replica string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return replica + "-" + idEncoding.EncodeToString(b[:])
}

// parseVMID returns the replica a VM id names, and whether the id is well
// formed at all.
func parseVMID(id string) (replica string, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 || len(id)-i-1 != idSuffixLen {
		return "", false
	}
	for _, c := range id[i+1:] {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", false
		}
	}
	if !replicaName.MatchString(id[:i]) {
		return "", false
	}
	return id[:i], true
}

// vmEntry is one VM held by the server.
type vmEntry struct {
	id          string
	tenant      string
	vm          *secexec.VM
	created     time.Time
	idleTimeout time.Duration

	mu       sync.Mutex
	lastUsed time.Time
	active   int // requests using the VM now; it is not idle while > 0
	procs    map[int]*process
	contexts map[string]io.Closer
	engine   string // its placement: EnginePerTenant or EnginePerVM
	lost     string // why its engine was lost (a lostReason), "" while usable
	// opts are the options it was made with, to resume it with; create
	// is the request that made them (see vmRecord).
	opts   secexec.Options
	create CreateVMRequest
	labels map[string]string
	// expires is when it is closed whatever its state (zero: never).
	expires time.Time
	// state is StateRunning, statePausing or StatePaused; snapshot is
	// the id of its latest pause snapshot in the tenant's pause store.
	state    string
	snapshot string
	// restart are the commands its last pause asked to restart;
	// recVersion is the version of its record in the store that this
	// replica last wrote or read ("" : none).
	restart    [][]string
	recVersion string
	savedAt    time.Time // when its last periodic save began (SnapshotEvery)
	inflight   int       // requests routed to it now (see Server.enter)
	removed    bool      // taken out of the registry
	// op is held by a pause, a resume or the removal (one at a time).
	op chan struct{}
	// previews are the VM's live preview URLs by id; portConns counts
	// the requests proxied to its ports now.
	previews  map[string]preview
	portConns int
	watches   int // watch streams open

	// released is set (under the registry's mu) once the VM's quota slot
	// is given back: when it is lost or removed, whichever comes first.
	released bool
}

func (e *vmEntry) touch() {
	e.mu.Lock()
	e.lastUsed = time.Now()
	e.mu.Unlock()
}

// use marks the VM busy until the returned function is called.
func (e *vmEntry) use() func() {
	e.mu.Lock()
	e.active++
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		e.active--
		e.lastUsed = time.Now()
		e.mu.Unlock()
	}
}

type vmKey struct{}

func vmOf(r *http.Request) *vmEntry { return r.Context().Value(vmKey{}).(*vmEntry) }

type leaveKey struct{}

// leaveEarly ends r's claim on its VM before the handler returns. A
// WebSocket session calls it before its last frame: a client that saw the
// process exit may pause the VM at once, and must not find the session's
// closing handshake still counted as a request using it.
func leaveEarly(r *http.Request) {
	if leave, ok := r.Context().Value(leaveKey{}).(func()); ok {
		leave()
	}
}

// registry holds the VMs by id, and each tenant's counts.
type registry struct {
	s   *Server
	mu  sync.Mutex
	vms map[string]*vmEntry
	// per tenant: VMs held (plus creations under way) and runs active
	count   map[string]int
	running map[string]int
	// per tenant: VMs paused (and pauses under way)
	pausedN map[string]int
}

func newRegistry(s *Server) *registry {
	return &registry{s: s, vms: map[string]*vmEntry{}, count: map[string]int{}, running: map[string]int{}, pausedN: map[string]int{}}
}

// reserve takes one VM slot of the tenant's quota.
func (g *registry) reserve(tenant string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.count[tenant] >= g.s.cfg.MaxVMs {
		return false
	}
	g.count[tenant]++
	return true
}

func (g *registry) unreserve(tenant string) {
	g.mu.Lock()
	g.count[tenant]--
	if g.count[tenant] == 0 {
		delete(g.count, tenant)
	}
	g.mu.Unlock()
}

func (g *registry) add(e *vmEntry) {
	g.mu.Lock()
	g.vms[e.id] = e
	g.mu.Unlock()
	g.s.metrics.vms.Inc()
	go g.watch(e, e.vm)
}

// addPaused adds e, paused (loaded from its record), unless its id is
// held already.
func (g *registry) addPaused(e *vmEntry) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.vms[e.id] != nil {
		return false
	}
	g.vms[e.id] = e
	g.s.metrics.vms.Inc()
	return true
}

// reservePaused takes one of the tenant's paused-VM slots.
func (g *registry) reservePaused(tenant string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pausedN[tenant] >= g.s.cfg.MaxPausedVMs {
		return false
	}
	g.pausedN[tenant]++
	return true
}

func (g *registry) unreservePaused(tenant string) {
	g.mu.Lock()
	g.pausedN[tenant]--
	if g.pausedN[tenant] == 0 {
		delete(g.pausedN, tenant)
	}
	g.mu.Unlock()
}

// paused closes e's engine VM once its pause snapshot is saved and gives
// its running-VM slot back (it holds a paused-VM slot instead).
func (g *registry) paused(e *vmEntry) {
	e.closeVM()
	// Its processes died with it. None is attached (an attached session
	// is a request in flight, which refuses the pause), so nobody else
	// forgets them: their pids must not linger into the resumed VM.
	e.mu.Lock()
	procs := e.procs
	e.procs = map[int]*process{}
	e.mu.Unlock()
	for _, p := range procs {
		if p.held != nil {
			p.held.end()
		}
	}
	g.mu.Lock()
	release := !e.released
	e.released = true
	g.mu.Unlock()
	e.setState(StatePaused)
	if release {
		g.unreserve(e.tenant)
	}
}

// resumed makes e running again with vm, restored from its pause
// snapshot; the caller has reserved its running-VM slot.
func (g *registry) resumed(e *vmEntry, vm *secexec.VM) {
	g.mu.Lock()
	e.released = false
	g.mu.Unlock()
	e.mu.Lock()
	e.vm, e.state, e.lastUsed = vm, StateRunning, time.Now()
	e.mu.Unlock()
	g.unreservePaused(e.tenant)
	go g.watch(e, vm)
}

// get returns the tenant's VM id, or nil: another tenant's VM is as
// absent as one that never existed.
func (g *registry) get(tenant, id string) *vmEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.vms[id]
	if e == nil || e.tenant != tenant {
		return nil
	}
	return e
}

// expired returns the VMs past their TTL, whatever their state.
func (g *registry) expired(now time.Time) []*vmEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*vmEntry
	for _, e := range g.vms {
		e.mu.Lock()
		if !e.expires.IsZero() && now.After(e.expires) {
			out = append(out, e)
		}
		e.mu.Unlock()
	}
	return out
}

func (g *registry) list(tenant string) []*vmEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*vmEntry
	for _, e := range g.vms {
		if e.tenant == tenant {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].created.Before(out[j].created) })
	return out
}

// remove takes e out of the registry and closes it, deleting its pause
// snapshot and record, once. It waits for a pause or resume under way,
// which are bounded.
func (g *registry) remove(e *vmEntry) bool { return g.take(e, false) }

// take is remove; with keepSaved, a VM saved in the store (a record)
// keeps its pause snapshot and record, to be loaded by the next server.
func (g *registry) take(e *vmEntry, keepSaved bool) bool {
	e.op <- struct{}{}
	defer e.unlockOp()
	g.mu.Lock()
	if g.vms[e.id] != e {
		g.mu.Unlock()
		return false
	}
	delete(g.vms, e.id)
	release := !e.released
	e.released = true
	g.mu.Unlock()
	g.s.metrics.vms.Dec()
	e.mu.Lock()
	e.removed = true
	wasPaused := e.state == StatePaused
	e.mu.Unlock()
	if wasPaused {
		g.unreservePaused(e.tenant)
	} else {
		e.closeVM()
	}
	e.mu.Lock()
	saved := e.recVersion != ""
	e.mu.Unlock()
	if !keepSaved || !saved {
		g.s.deletePauseSnapshot(e)
		g.s.dropRecord(e)
	}
	if release {
		g.unreserve(e.tenant)
	}
	return true
}

// lose drops e, which another replica owns now: closed here, its pause
// snapshot and record left to the new owner.
func (g *registry) lose(e *vmEntry) {
	e.mu.Lock()
	e.recVersion = "" // not ours to delete
	e.mu.Unlock()
	g.s.cfg.Logger.Warn("another replica took the VM over; dropping this copy", "vm", e.id, "tenant", e.tenant)
	go func() {
		// take waits for e's op lock, which the caller holds.
		e.mu.Lock()
		e.snapshot = ""
		e.mu.Unlock()
		g.take(e, false)
	}()
}

func (g *registry) closeAll() {
	g.mu.Lock()
	all := make([]*vmEntry, 0, len(g.vms))
	for _, e := range g.vms {
		all = append(all, e)
	}
	g.mu.Unlock()
	for _, e := range all {
		g.take(e, true)
	}
}

// idle returns the VMs unused for longer than their idle timeout.
func (g *registry) idle(now time.Time) []*vmEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*vmEntry
	for _, e := range g.vms {
		e.mu.Lock()
		if e.active == 0 && e.inflight == 0 && e.state == StateRunning && now.Sub(e.lastUsed) > e.idleTimeout {
			out = append(out, e)
		}
		e.mu.Unlock()
	}
	return out
}

func (g *registry) acquire(tenant string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running[tenant] >= g.s.cfg.MaxConcurrent {
		return false
	}
	g.running[tenant]++
	return true
}

func (g *registry) release(tenant string) {
	g.mu.Lock()
	g.running[tenant]--
	if g.running[tenant] == 0 {
		delete(g.running, tenant)
	}
	g.mu.Unlock()
}

// CreateVMRequest is the body of POST /v1/vms.
type CreateVMRequest struct {
	// Permissions is a policy document (docs/permissions.md); absent
	// means the standard set: the VM's own files and programs, listening
	// inside the VM, nothing else.
	Permissions json.RawMessage   `json:"permissions,omitempty"`
	Limits      *LimitsJSON       `json:"limits,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Cwd         string            `json:"cwd,omitempty"`
	Hostname    string            `json:"hostname,omitempty"`
	RealTime    bool              `json:"real_time,omitempty"`
	// Clock is the VM's clock policy: "coarse" (the default), "real" or
	// "frozen"; real_time true is the same as "real".
	Clock string `json:"clock,omitempty"`
	// Mounts are memory filesystems only: a tenant never reaches the
	// server's own files.
	Mounts        []MountJSON `json:"mounts,omitempty"`
	IdleTimeoutMS int64       `json:"idle_timeout_ms,omitempty"`
	Tools         []ToolJSON  `json:"tools,omitempty"`
	// Engine is where the VM runs: EnginePerTenant or EnginePerVM; empty
	// takes the server's default (Config.Engine).
	Engine string `json:"engine,omitempty"`
	// FromSnapshot is the id of one of the tenant's snapshots to start
	// from: its files, and its saved options for every field this
	// request leaves out (env is merged, this request's variables
	// winning).
	FromSnapshot string `json:"from_snapshot,omitempty"`
	// Labels are the VM's key=value labels (at most 32; keys a-z 0-9
	// . _ / -, up to 63 bytes; values up to 256 bytes), for filtering
	// GET /v1/vms.
	Labels map[string]string `json:"labels,omitempty"`
	// TTLMS closes the VM this long after its creation whatever its
	// state (at most the server's maximum TTL; 0: no TTL).
	TTLMS int64 `json:"ttl_ms,omitempty"`
}

// LimitsJSON are the VM limits a request may set (each capped by the
// server's maximum).
type LimitsJSON struct {
	FSBytes     int64 `json:"fs_bytes,omitempty"`
	Processes   int   `json:"processes,omitempty"`
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	CPUTimeMS   int64 `json:"cpu_time_ms,omitempty"`
	// VMMemoryBytes and VMCPUTimeMS bound all the VM's processes
	// together (kernel Limits.VMMemoryBytes, VMCPUTime).
	VMMemoryBytes int64 `json:"vm_memory_bytes,omitempty"`
	VMCPUTimeMS   int64 `json:"vm_cpu_time_ms,omitempty"`
}

// MountJSON is a memory filesystem mounted at Path.
type MountJSON struct {
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// ToolJSON registers a host tool the guest may call; the server POSTs the
// call's JSON to URL (see docs/api.md).
type ToolJSON struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// VMJSON describes a VM.
type VMJSON struct {
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
	LastUsedAt    time.Time `json:"last_used_at"`
	IdleTimeoutMS int64     `json:"idle_timeout_ms"`
	Processes     int       `json:"processes"`
	// Engine is the VM's placement (EnginePerTenant or EnginePerVM).
	Engine string `json:"engine"`
	// State is StateRunning, StatePaused, or StateLost once its engine
	// process died.
	State string `json:"state"`
	// LostReason says how the engine ended when State is StateLost:
	// engine_out_of_memory, engine_killed, engine_crashed or
	// engine_protocol_violation.
	LostReason string `json:"lost_reason,omitempty"`
	// Labels are the VM's labels.
	Labels map[string]string `json:"labels,omitempty"`
	// ExpiresAt is when its TTL ends, if it has one.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

func (e *vmEntry) json() VMJSON {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := VMJSON{ID: e.id, CreatedAt: e.created, LastUsedAt: e.lastUsed,
		IdleTimeoutMS: e.idleTimeout.Milliseconds(), Processes: len(e.procs),
		Engine: e.engine, State: StateRunning, Labels: copyLabels(e.labels)}
	if e.state == StatePaused {
		j.State, j.Processes = StatePaused, 0
	}
	if e.lost != "" {
		j.State, j.LostReason = StateLost, e.lost
	}
	if !e.expires.IsZero() {
		exp := e.expires
		j.ExpiresAt = &exp
	}
	return j
}

// standardPermissions mirrors the CLI's default: everything inside the VM,
// nothing outside it.
func standardPermissions() *policy.Policy {
	p := policy.DenyAll().
		AllowFS(policy.AllFSOps(), "/**").
		AllowExec("*", "/**")
	p.Net = append(p.Net, policy.NetRule{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetListen}, Hosts: []string{"*"}})
	return p
}

// decodeJSON reads a bounded JSON body strictly into v. An empty body
// leaves v as it is when emptyOK.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any, emptyOK bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return apiError(http.StatusUnsupportedMediaType, CodeUnsupportedMT, "want Content-Type application/json")
		}
	}
	bodyDeadline(w, jsonBodyTime)
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) && emptyOK {
			return nil
		}
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return err
		}
		return apiError(http.StatusBadRequest, CodeBadRequest, "request body: %v", err)
	}
	if dec.More() {
		return apiError(http.StatusBadRequest, CodeBadRequest, "request body: data after the JSON value")
	}
	return nil
}

// vmOptions turns a create request into secexec.Options, refusing what a
// tenant may not have.
func (s *Server) vmOptions(req *CreateVMRequest) (secexec.Options, error) {
	var o secexec.Options
	o.Logger = s.cfg.Logger
	p := standardPermissions()
	if len(req.Permissions) > 0 && string(req.Permissions) != "null" {
		var err error
		if p, err = policy.Parse(req.Permissions); err != nil {
			return o, err
		}
	}
	if !s.cfg.AllowGuestNetwork {
		for _, r := range p.Net {
			if r.Effect != policy.Allow {
				continue
			}
			ops := r.Ops
			if len(ops) == 0 {
				ops = []policy.NetOp{"*"}
			}
			for _, op := range ops {
				if op != policy.NetListen {
					return o, apiError(http.StatusBadRequest, CodeBadPolicy, "net %s rules are not allowed on this server (only listen)", op)
				}
			}
		}
	}
	o.Permissions = p
	lim, err := s.vmLimits(req.Limits)
	if err != nil {
		return o, err
	}
	o.Limits.FSBytes, o.Limits.Processes = lim.FSBytes, lim.Processes
	o.Limits.MemoryBytes, o.Limits.VMMemoryBytes = lim.MemoryBytes, lim.VMMemoryBytes
	o.Limits.CPUTime, o.Limits.VMCPUTime = lim.CPUTime, lim.VMCPUTime
	if len(req.Env) > 1024 {
		return o, apiError(http.StatusBadRequest, CodeBadRequest, "at most 1024 environment variables")
	}
	o.Env = req.Env
	if req.Cwd != "" && !path.IsAbs(req.Cwd) {
		return o, apiError(http.StatusBadRequest, CodeBadRequest, "cwd must be an absolute guest path")
	}
	o.Cwd = req.Cwd
	o.Hostname = req.Hostname
	clk, err := secexec.ParseClock(req.Clock)
	if err != nil || (req.RealTime && clk != secexec.ClockCoarse && clk != secexec.ClockReal) {
		return o, apiError(http.StatusBadRequest, CodeBadRequest, "clock must be coarse, real or frozen (real_time means real)")
	}
	if req.RealTime {
		clk = secexec.ClockReal
	}
	o.Clock = clk
	if len(req.Mounts) > 16 {
		return o, apiError(http.StatusBadRequest, CodeBadRequest, "at most 16 mounts")
	}
	for _, m := range req.Mounts {
		if !path.IsAbs(m.Path) {
			return o, apiError(http.StatusBadRequest, CodeBadRequest, "mount path %q is not absolute", m.Path)
		}
		o.Mounts = append(o.Mounts, secexec.Mount{Path: m.Path, ReadOnly: m.ReadOnly})
	}
	if err := s.tools(&o, req.Tools); err != nil {
		return o, err
	}
	return o, nil
}

func (s *Server) createVM(w http.ResponseWriter, r *http.Request) {
	tenant := tenantOf(r.Context())
	var req CreateVMRequest
	if err := s.decodeJSON(w, r, &req, true); err != nil {
		writeError(w, err)
		return
	}
	if s.draining.Load() {
		writeError(w, apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
		return
	}
	var snap *secexec.Snapshot
	if req.FromSnapshot != "" {
		var err error
		if snap, err = s.tenantSnapshot(r, req.FromSnapshot); err != nil {
			writeError(w, err)
			return
		}
		if err := fromSnapshot(&req, snap); err != nil {
			writeError(w, err)
			return
		}
	}
	opts, err := s.vmOptions(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	opts.From = snap
	if err := s.placeVM(&opts, tenant, req.Engine); err != nil {
		writeError(w, err)
		return
	}
	if err := checkLabels(req.Labels); err != nil {
		writeError(w, err)
		return
	}
	now := time.Now()
	exp, err := s.ttlDeadline(req.TTLMS, now)
	if err != nil {
		writeError(w, err)
		return
	}
	idle := s.cfg.IdleTimeout
	if req.IdleTimeoutMS < 0 {
		writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "idle_timeout_ms must not be negative"))
		return
	}
	if t := time.Duration(req.IdleTimeoutMS) * time.Millisecond; t > 0 && t < idle {
		idle = t
	}
	m := vmMeta{idle: idle, engine: engineName(opts), opts: opts, labels: copyLabels(req.Labels), expires: exp, create: req}
	m.opts.From = nil // a resume starts from its pause snapshot instead
	// What the record keeps of the request: the VM's own settings, not
	// how it started (from_snapshot) nor what the record has apart.
	m.create.FromSnapshot, m.create.Labels, m.create.TTLMS, m.create.IdleTimeoutMS = "", nil, 0, 0
	m.create.Engine = m.engine
	s.admitVM(w, tenant, m, func() (*secexec.VM, error) { return s.cfg.NewVM(r.Context(), opts) })
}

// vmMeta is what a new VM's entry keeps besides the VM.
type vmMeta struct {
	idle    time.Duration
	engine  string
	opts    secexec.Options
	create  CreateVMRequest
	labels  map[string]string
	expires time.Time
}

// admitVM takes one of the tenant's VM slots, makes the VM with mk and
// answers 201 with it (or the error, giving the slot back).
func (s *Server) admitVM(w http.ResponseWriter, tenant string, m vmMeta, mk func() (*secexec.VM, error)) {
	if !s.vms.reserve(tenant) {
		writeError(w, &Error{Status: http.StatusTooManyRequests, Code: CodeQuota, RetryAfter: 5,
			Message: fmt.Sprintf("at most %d VMs per tenant", s.cfg.MaxVMs)})
		return
	}
	vm, err := mk()
	if err != nil {
		s.vms.unreserve(tenant)
		writeError(w, err)
		return
	}
	now := time.Now()
	e := &vmEntry{id: newVMID(s.cfg.Replica), tenant: tenant, vm: vm, created: now, lastUsed: now,
		idleTimeout: m.idle, procs: map[int]*process{}, contexts: map[string]io.Closer{},
		engine: m.engine, opts: m.opts, create: m.create, labels: m.labels, expires: m.expires, state: StateRunning,
		op: make(chan struct{}, 1)}
	s.vms.add(e)
	w.Header().Set("Location", "/v1/vms/"+e.id)
	writeJSON(w, http.StatusCreated, e.json())
}

func (s *Server) listVMs(w http.ResponseWriter, r *http.Request) {
	f, err := parseVMFilter(r)
	if err != nil {
		writeError(w, err)
		return
	}
	out := []VMJSON{}
	tenant := tenantOf(r.Context())
	have := map[string]bool{}
	for _, e := range s.vms.list(tenant) {
		have[e.id] = true
		if j := e.json(); f.match(j) {
			out = append(out, j)
		}
	}
	for _, j := range s.pausedElsewhere(r.Context(), tenant, have) {
		if f.match(j) {
			out = append(out, j)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"vms": out})
}

func (s *Server) getVM(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, vmOf(r).json())
}

func (s *Server) deleteVM(w http.ResponseWriter, r *http.Request) {
	if !s.vms.remove(vmOf(r)) {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such VM"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// How long a client may take to send a request body: a slow sender must
// not hold a connection (and, for uploads, a VM) forever.
const (
	jsonBodyTime   = 30 * time.Second
	uploadBodyTime = 10 * time.Minute
)

// bodyDeadline bounds the time left to read the request body. Writers
// that cannot set deadlines (the tests' recorders) are left alone.
func bodyDeadline(w http.ResponseWriter, d time.Duration) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
}

// defaultProcessMemory is the engines' memory per process when a VM sets
// none (kernel Limits.MemoryBytes zero).
const defaultProcessMemory = 128 << 20

// vmLimits checks the limits a VM create asks for against the server's
// maximum (Config.MaxLimits) and fills what it leaves out: the VM-wide
// memory and CPU take the server's maximum, a process's memory the
// engines' default when that is within the maximum.
func (s *Server) vmLimits(l *LimitsJSON) (secexec.Limits, error) {
	m := s.cfg.MaxLimits
	if l == nil {
		l = &LimitsJSON{}
	}
	if l.FSBytes < 0 || l.Processes < 0 || l.MemoryBytes < 0 || l.CPUTimeMS < 0 || l.VMMemoryBytes < 0 || l.VMCPUTimeMS < 0 {
		return secexec.Limits{}, apiError(http.StatusBadRequest, CodeBadRequest, "limits must not be negative")
	}
	const maxMS = int64(math.MaxInt64 / time.Millisecond)
	if l.CPUTimeMS > maxMS || l.VMCPUTimeMS > maxMS {
		return secexec.Limits{}, apiError(http.StatusBadRequest, CodeBadRequest, "cpu_time_ms and vm_cpu_time_ms must be at most %d", maxMS)
	}
	lim := secexec.Limits{
		FSBytes:       l.FSBytes,
		Processes:     l.Processes,
		MemoryBytes:   l.MemoryBytes,
		VMMemoryBytes: l.VMMemoryBytes,
		CPUTime:       time.Duration(l.CPUTimeMS) * time.Millisecond,
		VMCPUTime:     time.Duration(l.VMCPUTimeMS) * time.Millisecond,
	}
	over := lim.FSBytes > m.FSBytes || lim.Processes > m.Processes ||
		lim.MemoryBytes > m.MemoryBytes || lim.VMMemoryBytes > m.VMMemoryBytes ||
		m.CPUTime > 0 && lim.CPUTime > m.CPUTime || m.VMCPUTime > 0 && lim.VMCPUTime > m.VMCPUTime
	if over {
		return secexec.Limits{}, apiError(http.StatusBadRequest, CodeBadRequest,
			"limits above this server's maximum (fs_bytes %d, processes %d, memory_bytes %d, vm_memory_bytes %d, cpu_time_ms %d, vm_cpu_time_ms %d; 0: no maximum)",
			m.FSBytes, m.Processes, m.MemoryBytes, m.VMMemoryBytes, m.CPUTime.Milliseconds(), m.VMCPUTime.Milliseconds())
	}
	if lim.VMMemoryBytes == 0 {
		lim.VMMemoryBytes = m.VMMemoryBytes
	}
	if lim.MemoryBytes == 0 && m.MemoryBytes < defaultProcessMemory {
		lim.MemoryBytes = m.MemoryBytes
	}
	if lim.VMCPUTime == 0 {
		lim.VMCPUTime = m.VMCPUTime
	}
	return lim, nil
}
