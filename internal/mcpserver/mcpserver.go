// Package mcpserver serves secexec VMs over the Model Context Protocol:
// tools to create and close VMs, run commands (streaming their output as
// progress notifications), read, write and list files, evaluate
// JavaScript and publish a guest port on the host. `secexec mcp` runs it
// over stdio or streamable HTTP.
//
// The operator's VM options (permissions, limits, mounts) are the most a
// client gets: a client may narrow them when it creates a VM, never widen
// them. Every tool is bounded (VM counts, input and output sizes, time)
// and acts only on the VMs of the session that created them; a session's
// VMs are closed when it ends.
package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/policy"
)

// Errors a tool call can end with; the client sees their text, Go callers
// can tell them apart with errors.Is.
var (
	// ErrUnknownVM: the VM id names no VM of this session (it never
	// existed, was closed, or belongs to another session).
	ErrUnknownVM = errors.New("no such VM in this session")
	// ErrTooManyVMs: the session or the server holds its maximum of VMs.
	ErrTooManyVMs = errors.New("too many VMs")
	// ErrBadArgument: an argument is missing, malformed or out of range.
	ErrBadArgument = errors.New("bad argument")
	// ErrWiderThanServer: vm_create asked for more than the operator
	// allows.
	ErrWiderThanServer = errors.New("exceeds the server's maximum")
	// ErrTooManyCalls: the session has its maximum of calls running.
	ErrTooManyCalls = errors.New("too many calls at once")
	// ErrTooLarge: a result would go beyond the server's output bound.
	ErrTooLarge = errors.New("too large")
	// ErrNoPreview: the server was started without a way to publish ports.
	ErrNoPreview = errors.New("previews are not available on this server")
	// ErrClosed: the server is shutting down.
	ErrClosed = errors.New("the MCP server is closed")
)

// Config is what the operator allows. Zero fields take the defaults
// below.
type Config struct {
	// Base is the options every VM starts from: its permissions, limits,
	// mounts, environment and working directory are the maximum a client
	// may ask for. A nil Base.Permissions denies everything.
	Base secexec.Options
	// MaxVMs bounds the VMs open on the server at once (default 16);
	// MaxVMsPerSession those of one client session (default 4).
	MaxVMs           int
	MaxVMsPerSession int
	// MaxOutput bounds the bytes kept of each of stdout and stderr of one
	// exec (default 1 MiB); the rest is dropped and reported truncated.
	MaxOutput int
	// MaxFileBytes bounds one file_read or file_write (default 1 MiB).
	MaxFileBytes int
	// MaxInput bounds a command line, its stdin, a JS expression and the
	// environment given to one call (default 1 MiB).
	MaxInput int
	// MaxListEntries bounds the entries one file_list returns (default
	// 1000).
	MaxListEntries int
	// DefaultTimeout is the wall-clock limit of an exec or js_eval that
	// names none (default 60s); MaxTimeout the most one may name (default
	// 10m).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// MaxPreviewsPerVM bounds the ports one VM may publish (default 4).
	MaxPreviewsPerVM int
	// MaxCallsPerSession bounds the tool calls one session has running
	// at once (default 16), and so the output buffers it holds.
	MaxCallsPerSession int
	// Publish serves the guest's TCP port on a loopback host port and
	// returns its URL and a function that stops serving it. Nil disables
	// the preview tool.
	Publish func(ctx context.Context, vm *secexec.VM, guestPort int) (url string, stop func(), err error)
	// Logger receives the server's records; nil discards them.
	Logger *slog.Logger
	// Version is reported to clients as the server's version.
	Version string
}

// The defaults of Config's zero fields.
const (
	DefaultMaxVMs             = 16
	DefaultMaxVMsPerSession   = 4
	DefaultMaxOutput          = 1 << 20
	DefaultMaxFileBytes       = 1 << 20
	DefaultMaxInput           = 1 << 20
	DefaultMaxListEntries     = 1000
	DefaultTimeout            = 60 * time.Second
	DefaultMaxTimeout         = 10 * time.Minute
	DefaultMaxPreviewsPerVM   = 4
	DefaultMaxCallsPerSession = 16
)

func (c *Config) fill() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.MaxVMs, DefaultMaxVMs)
	def(&c.MaxVMsPerSession, DefaultMaxVMsPerSession)
	def(&c.MaxOutput, DefaultMaxOutput)
	def(&c.MaxFileBytes, DefaultMaxFileBytes)
	def(&c.MaxInput, DefaultMaxInput)
	def(&c.MaxListEntries, DefaultMaxListEntries)
	def(&c.MaxPreviewsPerVM, DefaultMaxPreviewsPerVM)
	def(&c.MaxCallsPerSession, DefaultMaxCallsPerSession)
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.DefaultTimeout > c.MaxTimeout {
		c.DefaultTimeout = c.MaxTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Version == "" {
		c.Version = "(devel)"
	}
}

// Server is an MCP server whose tools act on secexec VMs. It serves any
// number of sessions, each with VMs of its own.
type Server struct {
	cfg  Config
	base *policy.Policy // cfg.Base.Permissions, never nil
	mcp  *mcp.Server

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	total    int // VMs open or being created, all sessions
	closed   bool
	isolate  bool // an engine group per session: set once HTTPHandler serves many sessions
}

// session is one client's VMs.
type session struct {
	// group is the engine group of the session's VMs. Over HTTP each
	// session has its own, so that its VMs share no engine process with
	// another session's (a V8 fatal error in one loses no other's VM);
	// a stdio server has one session, which uses the shared engine and
	// its warm pool.
	group   string
	vms     map[string]*vmEntry
	pending int // creations under way
	calls   int // tool calls running on its VMs
}

// vmEntry is one VM of a session.
type vmEntry struct {
	id       string
	vm       *secexec.VM
	cwd      string // the VM's working directory, for relative paths
	created  time.Time
	mu       sync.Mutex
	closed   bool
	previews []preview
}

// preview is one published guest port.
type preview struct {
	port int
	url  string
	stop func()
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	cfg.fill()
	base := cfg.Base.Permissions
	if base == nil {
		base = policy.DenyAll()
	}
	s := &Server{cfg: cfg, base: base, sessions: map[*mcp.ServerSession]*session{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "secexec", Title: "secexec sandbox", Version: cfg.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       cfg.Logger,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})
	s.addTools()
	return s
}

// instructions tell a model what the server is for.
const instructions = `secexec runs untrusted code in millisecond sandboxes (VMs) with their own filesystem, processes and permissions.
Create a VM with vm_create, then run commands with exec (a POSIX shell and coreutils, node, python3, git...), move files with file_read/file_write/file_list, evaluate JavaScript with js_eval and publish a server's port with preview. Close VMs with vm_close when done; they are closed when the session ends.`

// MCP returns the underlying SDK server, to connect it to a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session over t (stdio, say) until it ends or ctx does,
// then closes every VM.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	defer s.Close()
	err := s.mcp.Run(ctx, t)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// MaxMessageBytes bounds one client message: room for the largest file
// a file_write may carry in base64, with the largest input besides.
func (s *Server) MaxMessageBytes() int64 {
	return max(mcp.DefaultMaxRequestBodyBytes, int64(s.cfg.MaxFileBytes)/3*4+int64(s.cfg.MaxInput)+64<<10)
}

// IOTransport is the stdio transport over r and w, bounded by
// MaxMessageBytes.
func (s *Server) IOTransport(r io.ReadCloser, w io.WriteCloser) *mcp.IOTransport {
	return &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: int(s.MaxMessageBytes())}
}

// HTTPHandler serves the streamable HTTP transport. Sessions idle for
// idle are closed with their VMs (0: never). A non-empty token is
// required as "Authorization: Bearer TOKEN" on every request.
func (s *Server) HTTPHandler(idle time.Duration, token string) http.Handler {
	s.mu.Lock()
	s.isolate = true
	s.mu.Unlock()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: idle, Logger: s.cfg.Logger, MaxRequestBodyBytes: s.MaxMessageBytes()})
	var next http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			// The SDK ends a session only once its running calls have
			// returned, and a call on a VM (a server under exec, say)
			// may run until its timeout: close the VMs first, which
			// ends those calls now.
			s.closeVMsOf(r.Header.Get("Mcp-Session-Id"))
		}
		h.ServeHTTP(w, r)
	})
	if token != "" {
		next = requireBearer(token, next)
	}
	return next
}

// closeVMsOf closes the VMs of the session with the given id.
func (s *Server) closeVMsOf(id string) {
	if id == "" {
		return
	}
	var vms []*vmEntry
	s.mu.Lock()
	for ss, sess := range s.sessions {
		if ss.ID() != id {
			continue
		}
		for vid, e := range sess.vms {
			vms = append(vms, e)
			delete(sess.vms, vid)
		}
		s.total -= len(vms)
	}
	s.mu.Unlock()
	for _, e := range vms {
		e.close()
	}
}

// Close closes every VM of every session and refuses new ones.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	var all []*vmEntry
	for ss, sess := range s.sessions {
		for _, e := range sess.vms {
			all = append(all, e)
		}
		delete(s.sessions, ss)
	}
	s.total = 0
	s.mu.Unlock()
	for _, e := range all {
		e.close()
	}
}

// sessionOf returns the state of ss, creating it (and arranging for its
// VMs to be closed when ss ends) on first use.
func (s *Server) sessionOf(ss *mcp.ServerSession) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if sess, ok := s.sessions[ss]; ok {
		return sess, nil
	}
	sess := &session{vms: map[string]*vmEntry{}}
	if s.isolate {
		sess.group = "mcp-" + rand.Text()[:16]
	}
	s.sessions[ss] = sess
	go func() {
		_ = ss.Wait()
		s.endSession(ss)
	}()
	return sess, nil
}

// endSession closes the VMs of a session that ended.
func (s *Server) endSession(ss *mcp.ServerSession) {
	s.mu.Lock()
	sess, ok := s.sessions[ss]
	if ok {
		delete(s.sessions, ss)
		s.total -= len(sess.vms)
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	for _, e := range sess.vms {
		e.close()
	}
	s.cfg.Logger.Info("mcp: session ended", "vms_closed", len(sess.vms))
}

// acquire returns the VM id of the calling session and counts a call on
// it until release is called.
func (s *Server) acquire(ss *mcp.ServerSession, id string) (e *vmEntry, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[ss]
	if ok {
		e, ok = sess.vms[id]
	}
	if !ok {
		return nil, nil, fmt.Errorf("vm_id %q: %w", printable(id), ErrUnknownVM)
	}
	if sess.calls >= s.cfg.MaxCallsPerSession {
		return nil, nil, fmt.Errorf("%w: this session has %d calls running", ErrTooManyCalls, sess.calls)
	}
	sess.calls++
	return e, func() {
		s.mu.Lock()
		sess.calls--
		s.mu.Unlock()
	}, nil
}

// reserve takes a VM slot of the session and of the server.
func (s *Server) reserve(ss *mcp.ServerSession) (*session, error) {
	sess, err := s.sessionOf(ss)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if len(sess.vms)+sess.pending >= s.cfg.MaxVMsPerSession {
		return nil, fmt.Errorf("%w: this session holds its maximum of %d (close one with vm_close)", ErrTooManyVMs, s.cfg.MaxVMsPerSession)
	}
	if s.total >= s.cfg.MaxVMs {
		return nil, fmt.Errorf("%w: the server holds its maximum of %d", ErrTooManyVMs, s.cfg.MaxVMs)
	}
	sess.pending++
	s.total++
	return sess, nil
}

// settle ends a reservation: with e the VM joins the session, without it
// the slot is given back. It reports false if the session or server ended
// meanwhile (the caller then closes the VM).
func (s *Server) settle(ss *mcp.ServerSession, sess *session, e *vmEntry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.pending--
	alive := !s.closed && s.sessions[ss] == sess
	if !alive || e == nil {
		if !s.closed { // Close has zeroed the count already
			s.total--
		}
		return alive
	}
	sess.vms[e.id] = e
	return true
}

// remove takes the VM id out of the session.
func (s *Server) remove(ss *mcp.ServerSession, id string) (*vmEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.sessions[ss]; ok {
		if e, ok := sess.vms[id]; ok {
			delete(sess.vms, id)
			s.total--
			return e, nil
		}
	}
	return nil, fmt.Errorf("vm_id %q: %w", printable(id), ErrUnknownVM)
}

// list returns the session's VMs.
func (s *Server) list(ss *mcp.ServerSession) []*vmEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*vmEntry
	if sess, ok := s.sessions[ss]; ok {
		for _, e := range sess.vms {
			out = append(out, e)
		}
	}
	return out
}

// close unpublishes the VM's ports and closes it.
func (e *vmEntry) close() {
	e.mu.Lock()
	e.closed = true
	ps := e.previews
	e.previews = nil
	e.mu.Unlock()
	for _, p := range ps {
		p.stop()
	}
	_ = e.vm.Close()
}

// requireBearer refuses requests without the token, comparing in
// constant time.
func requireBearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="secexec-mcp"`)
			http.Error(w, "unauthorized: a bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// printable shortens and quotes client text for an error message.
func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return s
}

// VMs returns how many VMs are open (or being created) on the server,
// all sessions together.
func (s *Server) VMs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
