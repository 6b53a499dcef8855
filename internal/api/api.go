// Package api is the HTTP/JSON API of `secexec serve`: VMs, exec and
// spawn with streamed output, files and tar archives, JavaScript, for
// many tenants authenticated by bearer tokens, each seeing only its own
// VMs. The routes are described by the OpenAPI document openapi.json,
// which is served at /openapi.json and checked against the router by the
// tests.
package api

import (
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/snapshot"
)

// OpenAPI is the OpenAPI 3 document of the API (served at /openapi.json).
//
//go:embed openapi.json
var OpenAPI []byte

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	// Tokens are the accepted bearer tokens (required).
	Tokens []Token
	// Replica names this server in VM ids (<replica>-<random>), so that a
	// fleet can route a VM's requests to the replica holding it. It must
	// be a DNS label; empty means "local".
	Replica string
	// PeerURL returns the base URL (scheme://host:port) of another
	// replica. A request for a VM of another replica is forwarded there
	// when it returns ok; otherwise it is answered 421 wrong_replica.
	PeerURL func(replica string) (base string, ok bool)
	// MaxVMs is each tenant's VM quota (default 16).
	MaxVMs int
	// MaxConcurrent is each tenant's quota of requests running guest
	// code at once: execs, evaluations, spawned processes (default 8).
	MaxConcurrent int
	// MaxTenantProcesses is each tenant's quota of spawned processes
	// and JS contexts alive at once, attached or not (default 64).
	MaxTenantProcesses int
	// MaxProcessLifetime is the longest a spawned process or a JS
	// context lives: then it is killed or closed and its slot given
	// back (default 1 hour).
	MaxProcessLifetime time.Duration
	// MaxBodyBytes bounds JSON request bodies (default 1 MiB).
	MaxBodyBytes int64
	// MaxFileBytes bounds file uploads and downloads and tar archives
	// (default 64 MiB).
	MaxFileBytes int64
	// MaxOutputBytes bounds the stdout and the stderr an exec returns or
	// streams (default 16 MiB each).
	MaxOutputBytes int
	// MaxExecTimeout caps (and is the default of) an exec's timeout
	// (default 5 minutes).
	MaxExecTimeout time.Duration
	// IdleTimeout closes VMs unused for this long (default 15 minutes).
	IdleTimeout time.Duration
	// MaxLimits caps the limits a VM may ask for; zero fields take
	// secexec.DefaultLimits, so a tenant can lower limits but not raise
	// them unless the operator does. MemoryBytes defaults to
	// VMMemoryBytes (itself 1 GiB by default); zero CPUTime and VMCPUTime
	// mean no cap. VMMemoryBytes and VMCPUTime are also the VM-wide
	// limits of a VM that sets none.
	MaxLimits secexec.Limits
	// AllowGuestNetwork lets VM permissions open connections and DNS to
	// the outside; without it a policy with net connect or dns rules is
	// refused (the server's network is not the tenants').
	AllowGuestNetwork bool
	// AllowToolNetworks are the special-range networks (loopback,
	// private, link-local, ...: netstack.SpecialScope) that HTTP tool
	// callbacks may reach; public addresses need no entry. Empty: none.
	AllowToolNetworks []netip.Prefix
	// Engine is where VMs run unless their create request says:
	// EnginePerTenant (the default: an engine process per tenant, shared
	// by that tenant's VMs only) or EnginePerVM (an engine process per
	// VM).
	Engine string
	// NewVM creates VMs (default secexec.NewVM). The server sets each
	// VM's Options.Engine and EngineGroup from its placement.
	NewVM func(ctx context.Context, opts secexec.Options) (*secexec.VM, error)
	// PreviewSecret signs preview URLs (at least 32 bytes). Replicas of
	// a fleet must share it, so that any of them can check a preview
	// URL; empty means a random secret per server.
	PreviewSecret []byte
	// PublicURL is the scheme://host[:port] preview URLs start with
	// (ideally an origin apart from any other web application, since
	// guest pages run there); empty means the host the client used.
	PublicURL string
	// MaxPortConns bounds the requests and WebSockets proxied to one
	// VM's ports (through /ports and previews) at once (default 32).
	MaxPortConns int
	// MaxWatches bounds the watch streams open on one VM at once
	// (default 8).
	MaxWatches int
	// MaxPreviews bounds the live previews of one VM (default 16).
	MaxPreviews int
	// MaxPreviewTTL caps (and by default is at most 1 hour of) a
	// preview's lifetime (default 24 hours).
	MaxPreviewTTL time.Duration
	// SnapshotDir is where tenants' snapshots are kept, each tenant in a
	// directory of its own; empty (and no SnapshotStore) disables the
	// snapshot routes and pause (501).
	SnapshotDir string
	// SnapshotStore is the same for a fleet: a directory or an
	// s3://BUCKET/PREFIX?endpoint=...&region=... URL that every replica
	// shares, authenticated with SnapshotCredentials. At most one of
	// SnapshotDir and SnapshotStore is set.
	SnapshotStore       string
	SnapshotCredentials secexec.StoreCredentials
	// MaxSnapshots is each tenant's quota of stored snapshots (default
	// 64).
	MaxSnapshots int
	// OnIdle is what happens to a VM idle for its idle timeout:
	// OnIdleClose (the default) closes it, OnIdlePause pauses it (needs
	// SnapshotDir), to be resumed by its next request.
	OnIdle string
	// SnapshotEvery, when positive, saves every running VM this often
	// (those used, or with processes, since their last save) to its
	// pause store, recorded so that after a crash the VM resumes, here
	// or on another replica, as it was saved (needs a snapshot store).
	SnapshotEvery time.Duration
	// MaxPausedVMs is each tenant's quota of paused VMs, which do not
	// count against MaxVMs (default 64).
	MaxPausedVMs int
	// MaxTTL caps the TTL a VM may ask for at creation or by PATCH
	// (default 7 days).
	MaxTTL time.Duration
	// EngineMetrics writes the engine's metrics (default secexec.Metrics).
	EngineMetrics func(ctx context.Context, w io.Writer) error
	// Logger; nil discards.
	Logger *slog.Logger
}

func (c *Config) defaults() {
	if c.Replica == "" {
		c.Replica = "local"
	}
	if c.MaxVMs <= 0 {
		c.MaxVMs = 16
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = 8
	}
	if c.MaxTenantProcesses <= 0 {
		c.MaxTenantProcesses = 64
	}
	if c.MaxProcessLifetime <= 0 {
		c.MaxProcessLifetime = time.Hour
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = 64 << 20
	}
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = 16 << 20
	}
	if c.MaxExecTimeout <= 0 {
		c.MaxExecTimeout = 5 * time.Minute
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 15 * time.Minute
	}
	d := secexec.DefaultLimits()
	if c.MaxLimits.FSBytes <= 0 {
		c.MaxLimits.FSBytes = d.FSBytes
	}
	if c.MaxLimits.Processes <= 0 {
		c.MaxLimits.Processes = d.Processes
	}
	// Memory and CPU: the caps are also what a VM gets when it asks for
	// nothing (see vmLimits). A process may have up to the VM's memory.
	if c.MaxLimits.VMMemoryBytes <= 0 {
		c.MaxLimits.VMMemoryBytes = d.VMMemoryBytes
	}
	if c.MaxLimits.MemoryBytes <= 0 {
		c.MaxLimits.MemoryBytes = c.MaxLimits.VMMemoryBytes
	}
	c.MaxLimits.CPUTime = max(c.MaxLimits.CPUTime, 0)
	c.MaxLimits.VMCPUTime = max(c.MaxLimits.VMCPUTime, 0)
	if c.Engine == "" {
		c.Engine = EnginePerTenant
	}
	if c.NewVM == nil {
		c.NewVM = secexec.NewVM
	}
	if len(c.PreviewSecret) == 0 {
		c.PreviewSecret = make([]byte, previewSecretMin)
		_, _ = rand.Read(c.PreviewSecret)
	}
	if c.MaxPortConns <= 0 {
		c.MaxPortConns = defaultMaxPortConns
	}
	if c.MaxWatches <= 0 {
		c.MaxWatches = defaultMaxWatches
	}
	if c.MaxPreviews <= 0 {
		c.MaxPreviews = defaultMaxPreviews
	}
	if c.MaxPreviewTTL <= 0 {
		c.MaxPreviewTTL = defaultMaxPreviewTTL
	}
	if c.MaxSnapshots <= 0 {
		c.MaxSnapshots = 64
	}
	if c.OnIdle == "" {
		c.OnIdle = OnIdleClose
	}
	if c.MaxPausedVMs <= 0 {
		c.MaxPausedVMs = 64
	}
	if c.MaxTTL <= 0 {
		c.MaxTTL = 7 * 24 * time.Hour
	}
	if c.EngineMetrics == nil {
		c.EngineMetrics = secexec.Metrics
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Server is the API: an http.Handler plus the VMs it owns.
type Server struct {
	cfg Config
	// storeLoc is the snapshot store's location (SnapshotDir or
	// SnapshotStore); "" when there is none. recs are the VMs' records
	// there (durable.go).
	storeLoc string
	recs     snapshot.Records
	// saverDone is closed when saveLoop has ended (at once without
	// SnapshotEvery).
	saverDone chan struct{}
	auth      *authenticator
	router    chi.Router
	vms       *registry
	metrics   *apiMetrics
	// held counts each tenant's spawned processes and JS contexts.
	held slots

	draining atomic.Bool
	// work counts requests running guest code and attached WebSockets,
	// which Shutdown drains.
	work sync.WaitGroup
	// mu guards sessions (live WebSocket sessions, cut when draining
	// times out) and orders begin against Shutdown.
	mu       sync.Mutex
	sessions map[*wsSession]struct{}

	// snapLocks holds each tenant's snapshot lock (snapshotLock).
	snapLocks sync.Map

	stopReaper context.CancelFunc
	reaperDone chan struct{}
}

// ErrConfig is matched by errors about a Server's configuration.
var ErrConfig = errors.New("api: bad configuration")

// New returns a Server. Call Shutdown to drain it and close its VMs.
func New(cfg Config) (*Server, error) {
	cfg.defaults()
	if len(cfg.Tokens) == 0 {
		return nil, fmt.Errorf("%w: no bearer tokens", ErrConfig)
	}
	if !validEngine(cfg.Engine) {
		return nil, fmt.Errorf("%w: engine %q is neither %q nor %q", ErrConfig, cfg.Engine, EnginePerTenant, EnginePerVM)
	}
	if len(cfg.PreviewSecret) < previewSecretMin {
		return nil, fmt.Errorf("%w: the preview secret has %d bytes, want at least %d", ErrConfig, len(cfg.PreviewSecret), previewSecretMin)
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
			return nil, fmt.Errorf("%w: the preview URL %q is not scheme://host[:port]", ErrConfig, cfg.PublicURL)
		}
	}
	if cfg.OnIdle != OnIdleClose && cfg.OnIdle != OnIdlePause {
		return nil, fmt.Errorf("%w: on-idle %q is neither %q nor %q", ErrConfig, cfg.OnIdle, OnIdleClose, OnIdlePause)
	}
	storeLoc := cfg.SnapshotDir
	if cfg.SnapshotStore != "" {
		if storeLoc != "" {
			return nil, fmt.Errorf("%w: a snapshot directory and a snapshot store are both set", ErrConfig)
		}
		storeLoc = cfg.SnapshotStore
		if _, err := secexec.OpenSnapshotStoreAt(storeLoc, cfg.SnapshotCredentials); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if cfg.OnIdle == OnIdlePause && storeLoc == "" {
		return nil, fmt.Errorf("%w: pausing idle VMs needs a snapshot directory or store", ErrConfig)
	}
	if cfg.SnapshotEvery != 0 && (storeLoc == "" || cfg.SnapshotEvery < minSnapshotEvery) {
		return nil, fmt.Errorf("%w: snapshot-every needs a snapshot directory or store, and at least %v", ErrConfig, minSnapshotEvery)
	}
	if !replicaName.MatchString(cfg.Replica) {
		return nil, fmt.Errorf("%w: replica %q is not a DNS label", ErrConfig, cfg.Replica)
	}
	s := &Server{
		cfg:      cfg,
		storeLoc: storeLoc,
		auth:     &authenticator{tokens: cfg.Tokens},
		metrics:  newAPIMetrics(),
		sessions: map[*wsSession]struct{}{},
	}
	s.vms = newRegistry(s)
	if storeLoc != "" {
		recs, err := snapshot.OpenRecords(storeLoc, cfg.SnapshotCredentials)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		s.recs = recs
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = s.loadRecords(ctx)
		cancel()
		if err != nil {
			// Serving goes on: the records stay in the store, and a
			// request for one of the VMs still finds it (route).
			cfg.Logger.Error("loading paused VMs from the snapshot store", "err", err)
		}
	}
	s.router = s.routes()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopReaper, s.reaperDone = cancel, make(chan struct{})
	go s.reap(ctx)
	s.saverDone = make(chan struct{})
	if cfg.SnapshotEvery > 0 {
		go s.saveLoop(ctx)
	} else {
		close(s.saverDone)
	}
	return s, nil
}

// minSnapshotEvery is the shortest SnapshotEvery: each save walks the
// VM's files.
const minSnapshotEvery = 100 * time.Millisecond

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Router returns the chi router (the tests walk it against openapi.json).
func (s *Server) Router() chi.Router { return s.router }

// Shutdown drains the server: /readyz turns 503 and new work is refused
// with 503 shutting_down, in-flight execs and WebSocket sessions may run
// until ctx ends (then they are cut), and every VM is closed. Call it
// after http.Server.Shutdown has stopped the listeners.
func (s *Server) Shutdown(ctx context.Context) error {
	s.beginDrain()
	done := make(chan struct{})
	go func() { s.work.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		s.mu.Lock()
		for ws := range s.sessions {
			ws.cancel()
		}
		s.mu.Unlock()
	}
	s.stopReaper()
	<-s.reaperDone
	<-s.saverDone
	s.vms.closeAll()
	return err
}

// beginDrain makes the server refuse new work; see begin.
func (s *Server) beginDrain() {
	s.mu.Lock()
	s.draining.Store(true)
	s.mu.Unlock()
}

// routes builds the router; openapi.json describes exactly these routes.
func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.metrics.middleware)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such route"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, apiError(http.StatusMethodNotAllowed, CodeMethod, "method not allowed on this route"))
	})
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if s.draining.Load() {
			writeError(w, apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	r.Get("/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(OpenAPI)
	})
	// Previews carry their credential in the path; the metrics label
	// only the route pattern, so tokens are never recorded.
	for _, m := range proxiedMethods {
		r.Method(m, "/p/{token}/*", http.HandlerFunc(s.openPreview))
	}
	r.Group(func(r chi.Router) {
		r.Use(s.auth.middleware)
		r.Get("/metrics", s.serveMetrics)
		r.Route("/v1/vms", func(r chi.Router) {
			r.Post("/", s.createVM)
			r.Get("/", s.listVMs)
			r.Route("/{id}", func(r chi.Router) {
				r.Use(s.route)
				r.Get("/", s.getVM)
				r.Delete("/", s.deleteVM)
				r.Patch("/", s.patchVM)
				r.Post("/pause", s.pauseVM)
				r.Post("/resume", s.resumeVM)
				r.Post("/exec", s.exec)
				r.Post("/processes", s.spawn)
				r.Get("/processes", s.listProcesses)
				r.Delete("/processes/{pid}", s.killProcess)
				r.Get("/processes/{pid}/ws", s.attach)
				r.Get("/files/*", s.getFile)
				r.Put("/files/*", s.putFile)
				r.Delete("/files/*", s.deleteFile)
				r.Get("/archive", s.getArchive)
				r.Put("/archive", s.putArchive)
				r.Post("/js/evaluate", s.jsEvaluate)
				r.Post("/js/execute", s.jsExecute)
				r.Post("/snapshots", s.createSnapshot)
				r.Post("/fork", s.forkVM)
				s.contextRoutes(r)
				for _, m := range proxiedMethods {
					r.Method(m, "/ports/{port}/*", http.HandlerFunc(s.proxyPort))
				}
				r.Post("/previews", s.createPreview)
				r.Delete("/previews/{pid}", s.deletePreview)
				r.Get("/watch", s.watch)
			})
		})
		r.Get("/v1/snapshots", s.listSnapshots)
		r.Get("/v1/snapshots/{sid}", s.getSnapshot)
		r.Delete("/v1/snapshots/{sid}", s.deleteSnapshot)
	})
	return r
}

// forwardedHeader marks a request one replica forwarded to another, so
// that a second hop (a replica that does not hold the VM either) is
// refused instead of looping.
const forwardedHeader = "X-Secexec-Forwarded"

// route resolves {id}: a VM of another replica is forwarded to it (or
// refused with 421); a VM of this replica must belong to the tenant,
// else 404 — the same answer as for an id that never existed. A paused
// VM is resumed first, unless the request only reads, changes or deletes
// its record or pauses it.
func (s *Server) route(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		replica, ok := parseVMID(id)
		if !ok {
			writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such VM"))
			return
		}
		tenant := tenantOf(r.Context())
		// This replica's own VMs, and those it adopted from others.
		if e := s.vms.get(tenant, id); e != nil {
			s.serveVM(w, r, e, next)
			return
		}
		if replica != s.cfg.Replica && r.Header.Get(forwardedHeader) != "" && s.recs != nil {
			// Forwarded here as the owner the VM's record names: this
			// replica may be registering it still (adopt takes no VM
			// from anyone here, "").
			s.adoptAndServe(w, r, "", next)
			return
		}
		if replica != s.cfg.Replica {
			s.forward(w, r, replica, func(w http.ResponseWriter, r *http.Request) {
				s.adoptAndServe(w, r, replica, next)
			})
			return
		}
		// Not here: another replica may have adopted it (its record
		// says which), or it is this replica's and not loaded yet.
		if s.recs != nil {
			rec, _, err := s.readRecord(r.Context(), tenant, id)
			switch {
			case err == nil && rec.Owner != s.cfg.Replica && replicaName.MatchString(rec.Owner):
				owner := rec.Owner
				s.forwardTo(w, r, owner, true, func(w http.ResponseWriter, r *http.Request) {
					s.adoptAndServe(w, r, owner, next)
				})
				return
			case err == nil:
				s.adoptAndServe(w, r, s.cfg.Replica, next)
				return
			case !errors.Is(err, snapshot.ErrNotFound):
				s.cfg.Logger.Warn("reading a VM's record", "vm", id, "err", err)
			}
		}
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such VM"))
	})
}

// serveVM serves r on e, resuming e first unless the request leaves a
// paused VM paused.
func (s *Server) serveVM(w http.ResponseWriter, r *http.Request, e *vmEntry, next http.Handler) {
	e.touch()
	if !keepsState(r, e.id) {
		leave, err := s.enter(r.Context(), e)
		if err != nil {
			writeError(w, err)
			return
		}
		leave = sync.OnceFunc(leave)
		defer leave()
		r = r.WithContext(context.WithValue(r.Context(), leaveKey{}, leave))
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), vmKey{}, e)))
}

// adoptAndServe serves r on the VM of the URL after adopting it from
// replica from, which did not answer (or forwards it to the replica that
// adopted it first).
func (s *Server) adoptAndServe(w http.ResponseWriter, r *http.Request, from string, next http.Handler) {
	e, owner, err := s.adopt(r.Context(), tenantOf(r.Context()), chi.URLParam(r, "id"), from)
	switch {
	case err != nil:
		writeError(w, err)
	case owner != "":
		s.forwardTo(w, r, owner, true, nil)
	default:
		s.serveVM(w, r, e, next)
	}
}

// forward proxies r to the replica holding the VM. The peer checks the
// bearer token and the tenant itself.
//
// When the peer cannot be dialled (it is down: nothing of the request
// reached it) and unreachable is set, unreachable serves the request
// instead (adoption, durable.go).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, replica string, unreachable http.HandlerFunc) {
	s.forwardTo(w, r, replica, false, unreachable)
}

// forwardAgainHeader marks a request forwarded a second time: by the
// replica a VM's id names to the replica its record names (which adopted
// it). A request carrying it is not forwarded again.
const forwardAgainHeader = "X-Secexec-Forwarded-Again"

// forwardTo is forward; toOwner says replica is the owner the VM's
// record names, which a request one replica forwarded already may still
// be forwarded to, once.
func (s *Server) forwardTo(w http.ResponseWriter, r *http.Request, replica string, toOwner bool, unreachable http.HandlerFunc) {
	base, ok := "", false
	first := r.Header.Get(forwardedHeader) == ""
	again := !first && toOwner && r.Header.Get(forwardAgainHeader) == ""
	if s.cfg.PeerURL != nil && (first || again) {
		base, ok = s.cfg.PeerURL(replica)
	}
	if !ok {
		writeError(w, apiError(http.StatusMisdirectedRequest, CodeWrongReplica, "the VM lives on replica %q", replica))
		return
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		writeError(w, apiError(http.StatusMisdirectedRequest, CodeWrongReplica, "no address for replica %q", replica))
		return
	}
	body := r.Body
	if unreachable != nil && body != nil {
		// The proxy's transport closes the body it was given, even when
		// the dial fails: the request's own must stay readable for
		// unreachable.
		r.Body = io.NopCloser(body)
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Header.Set(forwardedHeader, s.cfg.Replica)
			if again {
				pr.Out.Header.Set(forwardAgainHeader, s.cfg.Replica)
			}
			// The peer builds preview URLs from the host the client used.
			pr.SetXForwarded()
		},
		FlushInterval: -1, // server-sent events go through as they come
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			s.cfg.Logger.Warn("forwarding to replica failed", "replica", replica, "err", err)
			var op *net.OpError
			if unreachable != nil && errors.As(err, &op) && op.Op == "dial" {
				r.Body = body
				unreachable(w, r)
				return
			}
			writeError(w, apiError(http.StatusBadGateway, CodeWrongReplica, "replica %q did not answer", replica))
		},
	}
	p.ServeHTTP(w, r)
}

// begin admits one unit of guest work for the tenant: it fails with 503
// while draining and 429 over the tenant's concurrency quota. The
// returned function ends it.
func (s *Server) begin(tenant string) (func(), error) {
	// Checked and counted under s.mu, so that once Shutdown has set
	// draining no new work is added to the group it waits for.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining.Load() {
		return nil, apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	}
	if !s.vms.acquire(tenant) {
		e := apiError(http.StatusTooManyRequests, CodeQuota, "at most %d concurrent runs per tenant", s.cfg.MaxConcurrent)
		e.RetryAfter = 1
		return nil, e
	}
	s.work.Add(1)
	s.metrics.inflight.Inc()
	return func() {
		s.metrics.inflight.Dec()
		s.vms.release(tenant)
		s.work.Done()
	}, nil
}

// start begins guest work on e (see begin), answering the refusal
// itself; end marks the work done and the VM used.
func (s *Server) start(w http.ResponseWriter, e *vmEntry) (end func(), ok bool) {
	done, err := s.begin(e.tenant)
	if err != nil {
		writeError(w, err)
		return nil, false
	}
	unuse := e.use()
	return func() { unuse(); done() }, true
}

// reap closes VMs idle for longer than their idle timeout.
func (s *Server) reap(ctx context.Context) {
	defer close(s.reaperDone)
	tick := s.cfg.IdleTimeout / 4
	tick = min(max(tick, 50*time.Millisecond), time.Second) // per-VM timeouts may be shorter
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, e := range s.vms.expired(now) {
				s.cfg.Logger.Info("closing VM past its TTL", "vm", e.id, "tenant", e.tenant)
				s.vms.remove(e)
			}
			for _, e := range s.vms.idle(now) {
				s.idle(ctx, e)
			}
		}
	}
}

// idle closes or pauses (Config.OnIdle) e, idle for its idle timeout. A
// lost VM is closed either way.
func (s *Server) idle(ctx context.Context, e *vmEntry) {
	e.mu.Lock()
	lost := e.lost != ""
	e.mu.Unlock()
	if s.cfg.OnIdle != OnIdlePause || lost {
		s.cfg.Logger.Info("closing idle VM", "vm", e.id, "tenant", e.tenant)
		s.vms.remove(e)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, resumeTimeout)
	defer cancel()
	if err := s.pause(ctx, e, nil); err != nil {
		// Tried again after another idle timeout; never closed, which
		// would lose its files.
		s.cfg.Logger.Warn("pausing an idle VM", "vm", e.id, "tenant", e.tenant, "err", err)
		e.touch()
	}
}

// apiMetrics are the API's own Prometheus metrics, served at /metrics
// ahead of the engine's.
type apiMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	vms      prometheus.Gauge
	inflight prometheus.Gauge
	execs    *prometheus.HistogramVec
	lost     *prometheus.CounterVec
}

func newAPIMetrics() *apiMetrics {
	m := &apiMetrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "secexec_api_requests_total",
			Help: "API requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		vms: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "secexec_api_vms",
			Help: "VMs held by this server.",
		}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "secexec_api_inflight_runs",
			Help: "Execs, evaluations and attached processes running now (the autoscaling signal).",
		}),
		execs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "secexec_api_exec_seconds",
			Help:    "Wall time of exec requests, by outcome.",
			Buckets: prometheus.ExponentialBuckets(250e-6, 4, 10),
		}, []string{"outcome"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "secexec_api_vms_lost_total",
			Help: "VMs lost with their engine process, by reason (engine_out_of_memory, engine_killed, ...).",
		}, []string{"reason"}),
	}
	m.reg.MustRegister(m.requests, m.vms, m.inflight, m.execs, m.lost)
	return m
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (m *apiMetrics) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		code := sw.code
		if code == 0 {
			code = http.StatusSwitchingProtocols // hijacked
		}
		m.requests.WithLabelValues(route, r.Method, fmt.Sprint(code)).Inc()
	})
}
