// Package netstack is the network of one secexec VM: sockets as open
// files, the VM's own loopback network, and guarded access to the host's.
//
// # The VM's network namespace
//
// Every VM has a private loopback: 127.0.0.0/8, ::1 and the unspecified
// addresses all mean "this VM". A guest that binds a TCP or UDP port binds
// it in the VM's port table only; nothing listens on the host. Connections
// between guests (any processes of the VM) are in-memory pairs of bounded
// pipe buffers (kernel/pipe), so they never touch a host socket. Unix
// domain sockets live in a namespace of their own, keyed by the absolute
// guest path they were bound to (or the abstract name); see Bind.
//
// # The host network
//
// Other addresses are reached through real host sockets, and only when
// the VM's policy allows (deny by default):
//
//   - connect to a name: the name is checked (op connect; resolving it
//     for the connect needs no dns permission) before it is resolved,
//     then every address it resolves to is checked again with
//     Authorizer.CheckNetAddr, so a deny rule on an address survives DNS
//     and a name cannot be re-pointed (DNS rebinding) at a special range;
//   - connect to an address: the address is checked;
//   - both: net.Dialer's Control hook verifies that the socket actually
//     being connected goes to the checked address.
//
// Special ranges (SpecialScope: loopback, private, link-local and the cloud
// metadata service, CGNAT, multicast, broadcast, reserved, and IPv6 forms
// that embed IPv4) are opened only by a rule that names the address or a
// prefix inside the range; "*" does not open them. IP spellings that
// resolvers accept (decimal, octal, hex, shortened) are parsed to the
// address they denote before any check (ParseHost).
//
// Loopback precedence: a connection to a loopback address goes to the
// VM's listener on that port if there is one; otherwise to the host's
// loopback if, and only if, a rule names that loopback address (and port);
// otherwise it is refused (ECONNREFUSED). The VM listener wins so that a
// broad explicit rule ("127.0.0.0/8") cannot break the guests' own
// loopback. The unspecified address never reaches the host.
//
// # Blocking and readiness
//
// Sockets are vfs.Files with waiter readiness, so read, write, poll, dup
// and inheritance work as for pipes. Blocking calls park the calling
// goroutine on a channel; host sockets are served by goroutines parked in
// Go's netpoller (two per TCP connection, one per UDP destination), which
// copy between the host socket and the bounded buffers. Nothing polls.
//
// # For syscall layers
//
// Addr.IP is always unmapped (IPv4 as IPv4) and Addr.Family follows the
// address, not the socket: an AFInet6 socket connected to 127.0.0.1 has
// peer 127.0.0.1, which sockaddr_in6 encodes as ::ffff:127.0.0.1. Pass
// host names through (Addr.Name, or ParseAddr for the agentOS text form)
// rather than resolving and connecting to the address: a rule that allows
// a name covers the addresses it resolves to only when the stack does the
// resolving. Socket options are integers (see SetOption). Blocking calls
// take the process context; a non-blocking socket never blocks, except
// that Resolve and a connect by name are not asynchronous for DNS.
//
// # Limits
//
// Limits bound the sockets of a VM (ENFILE), the bytes buffered per
// direction of a connection, the memory all buffers may grow into, the
// listen backlog, and the time a connect or a DNS lookup may take
// (ETIMEDOUT). Close releases every host socket and goroutine.
package netstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack/stubdns"
	"github.com/secexec/secexec/kernel/pipe"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/waiter"
)

// Authorizer decides network operations; *policy.Checker implements it.
// See policy.Checker.CheckNet and CheckNetAddr for the semantics.
type Authorizer interface {
	CheckNet(op policy.NetOp, host string, port int) error
	CheckNetAddr(op policy.NetOp, addr netip.Addr, port int, scope netip.Prefix, viaName bool) error
}

// Resolver looks up host names; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Limits bound the network resources of one VM. Zero fields take the
// values of DefaultLimits.
type Limits struct {
	// Sockets bounds the open sockets of the VM; socket() and accept()
	// fail with ENFILE beyond it (descriptors are bounded separately by
	// the fd table: EMFILE, ENFILE).
	Sockets int
	// BufferBytes bounds the bytes buffered in each direction of a
	// stream connection, and the receive queue of a datagram socket. A
	// writer whose peer does not read blocks (or gets EAGAIN) there.
	BufferBytes int
	// MemoryBytes bounds the buffer memory of all sockets together beyond
	// the 64 KiB every buffer may hold (see pipe.Budget).
	MemoryBytes int64
	// Backlog caps the listen backlog (SOMAXCONN).
	Backlog int
	// ConnectTimeout bounds a connect to the host network (ETIMEDOUT)
	// and a blocking connect waiting for room in a full VM backlog.
	ConnectTimeout time.Duration
	// DNSTimeout bounds one name lookup (ETIMEDOUT).
	DNSTimeout time.Duration
}

// DefaultLimits returns the limits a VM gets unless configured otherwise.
func DefaultLimits() Limits {
	return Limits{
		Sockets:        256,
		BufferBytes:    256 << 10,
		MemoryBytes:    16 << 20,
		Backlog:        128,
		ConnectTimeout: 30 * time.Second,
		DNSTimeout:     10 * time.Second,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Sockets <= 0 {
		l.Sockets = d.Sockets
	}
	if l.BufferBytes <= 0 {
		l.BufferBytes = d.BufferBytes
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.Backlog <= 0 {
		l.Backlog = d.Backlog
	}
	if l.ConnectTimeout <= 0 {
		l.ConnectTimeout = d.ConnectTimeout
	}
	if l.DNSTimeout <= 0 {
		l.DNSTimeout = d.DNSTimeout
	}
	return l
}

// Config configures a Stack.
type Config struct {
	// Authorizer checks every operation that reaches the host network.
	// Nil denies them all; the VM's own network still works.
	Authorizer Authorizer
	// Resolver resolves names for guests; nil means a stubdns.Resolver:
	// the nameservers of the host's /etc/resolv.conf, never /etc/hosts.
	Resolver Resolver
	// Limits; zero fields take DefaultLimits.
	Limits Limits
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// BeforeHostDial, if set, is called just before a host socket
	// connects ("tcp" or "udp"), after every policy check passed, with
	// the address the socket is about to connect to; an error aborts the
	// connect (the guest sees its errno, else EACCES). Embedders can log
	// egress with it; tests use it to prove which addresses the stack
	// tries to reach.
	BeforeHostDial func(network string, addr netip.AddrPort) error
	// Now is the VM's clock, for the times fstat shows on sockets; nil
	// means time.Now.
	Now func() time.Time
}

// Linger bounds how long a closed connection to the host may keep
// flushing what the guest wrote before closing.
const Linger = 10 * time.Second

// Ephemeral ports are allocated from Linux's default range.
const (
	ephemeralLo = 32768
	ephemeralHi = 60999
)

// ErrNoSuchHost is what Resolve returns (wrapped) for a name that does not
// exist. It matches errno.ENOENT; syscall layers report it as
// EAI_NONAME / ENOTFOUND.
var ErrNoSuchHost error = noSuchHost{}

type noSuchHost struct{}

// Error reads "no such host".
func (noSuchHost) Error() string { return "no such host" }

// Unwrap returns errno.ENOENT.
func (noSuchHost) Unwrap() error { return errno.ENOENT }

// proto names a port table.
type proto uint8

const (
	protoTCP proto = iota
	protoUDP
)

// Stack is the network of one VM. Its methods are safe for concurrent
// use.
type Stack struct {
	auth   Authorizer
	res    Resolver
	lim    Limits
	log    *slog.Logger
	budget *pipe.Budget
	hook   func(string, netip.AddrPort) error
	now    func() time.Time

	// ctx ends when the stack closes; host goroutines run under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sockets atomic.Int64
	nextIno atomic.Uint64

	mu        sync.Mutex
	closed    bool
	ports     [2]map[uint16]*Socket     // bound ports per protocol
	shared    [2]map[uint16]*reuseGroup // ports bound with SO_REUSEPORT, per protocol
	unix      map[string]*Socket        // bound Unix sockets by key
	ephemeral [2]uint16                 // next ephemeral port to try
	host      map[io.Closer]struct{}
}

// New returns a stack.
func New(cfg Config) *Stack {
	ctx, cancel := context.WithCancel(context.Background())
	st := &Stack{
		auth:   cfg.Authorizer,
		res:    cfg.Resolver,
		lim:    cfg.Limits.withDefaults(),
		log:    cfg.Logger,
		hook:   cfg.BeforeHostDial,
		now:    cfg.Now,
		ctx:    ctx,
		cancel: cancel,
		unix:   make(map[string]*Socket),
		host:   make(map[io.Closer]struct{}),
	}
	if st.now == nil {
		st.now = time.Now
	}
	st.budget = pipe.NewBudget(st.lim.MemoryBytes)
	st.ports[protoTCP] = make(map[uint16]*Socket)
	st.ports[protoUDP] = make(map[uint16]*Socket)
	st.shared[protoTCP] = make(map[uint16]*reuseGroup)
	st.shared[protoUDP] = make(map[uint16]*reuseGroup)
	st.ephemeral = [2]uint16{ephemeralLo, ephemeralLo}
	if st.res == nil {
		// DNS only, from the host's resolv.conf: Go's resolver would
		// answer from the host's /etc/hosts first, showing guests the
		// host's private names. It parks in the netpoller, as the cgo
		// resolver (an OS thread per lookup) would not.
		st.res = &stubdns.Resolver{}
	}
	if st.log == nil {
		st.log = slog.New(slog.DiscardHandler)
	}
	st.nextIno.Store(1 << 40)
	return st
}

// Limits returns the limits in force.
func (st *Stack) Limits() Limits { return st.lim }

// OpenSockets returns the number of open sockets.
func (st *Stack) OpenSockets() int { return int(st.sockets.Load()) }

// HostSockets returns the number of host sockets currently open for the
// VM's guests.
func (st *Stack) HostSockets() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.host)
}

// BufferMemory reports the shared buffer budget's use and limit.
func (st *Stack) BufferMemory() (used, limit int64) { return st.budget.Used(), st.budget.Limit() }

// Close shuts the network down: every host socket is closed (their
// guests read end of file), pending host connects are cancelled, and
// Close waits until every goroutine the stack started has returned or ctx
// is done. VM-internal connections still held keep working until their
// sockets close; new sockets fail with ENETUNREACH.
func (st *Stack) Close(ctx context.Context) error {
	st.mu.Lock()
	st.closed = true
	hosts := make([]io.Closer, 0, len(st.host))
	for c := range st.host {
		hosts = append(hosts, c)
	}
	st.mu.Unlock()
	st.cancel()
	for _, c := range hosts {
		_ = c.Close()
	}
	done := make(chan struct{})
	go func() { st.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("netstack: close: %w", ctx.Err())
	}
}

// track records a host socket so Close can close it; it fails when the
// stack is closed.
func (st *Stack) track(c io.Closer) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errno.ENETUNREACH
	}
	st.host[c] = struct{}{}
	return nil
}

func (st *Stack) untrack(c io.Closer) {
	st.mu.Lock()
	delete(st.host, c)
	st.mu.Unlock()
}

// newPair returns the two ends of an in-memory stream connection.
func (st *Stack) newPair() (a, b *endpoint) {
	opts := pipe.Options{MaxSize: st.lim.BufferBytes, Budget: st.budget}
	ab, ba := pipe.New(opts), pipe.New(opts)
	a = &endpoint{rx: ba.OpenReader(), tx: ab.OpenWriter()}
	b = &endpoint{rx: ab.OpenReader(), tx: ba.OpenWriter()}
	return a, b
}

// reuseGroup is the sockets sharing one port with SO_REUSEPORT: as on
// Linux, each incoming TCP connection goes to one of its listening
// members, and each datagram to one of its UDP members, in turn (cluster
// workers each listen on the port their primary holds). Limits.Sockets
// bounds its size.
type reuseGroup struct {
	socks []*Socket
	next  int
}

// allocPortLocked reserves a port for s in the table of p: the given one,
// or an ephemeral one for 0. A TCP port bound by a socket with
// SO_REUSEPORT is shared with later sockets that set it too (the caller
// holds s.mu, so s.opts is stable).
func (st *Stack) allocPortLocked(p proto, port uint16, s *Socket) (uint16, error) {
	tbl := st.ports[p]
	reuse := s != nil && s.opts.reusePort
	if port != 0 {
		if _, used := tbl[port]; used {
			g := st.shared[p][port]
			if !reuse || g == nil {
				return 0, errno.EADDRINUSE
			}
			g.socks = append(g.socks, s)
			return port, nil
		}
		tbl[port] = s
		if reuse {
			st.shared[p][port] = &reuseGroup{socks: []*Socket{s}}
		}
		return port, nil
	}
	for range ephemeralHi - ephemeralLo + 1 {
		cand := st.ephemeral[p]
		st.ephemeral[p]++
		if st.ephemeral[p] > ephemeralHi {
			st.ephemeral[p] = ephemeralLo
		}
		if _, used := tbl[cand]; !used {
			tbl[cand] = s
			if reuse {
				st.shared[p][cand] = &reuseGroup{socks: []*Socket{s}}
			}
			return cand, nil
		}
	}
	return 0, errno.EADDRNOTAVAIL
}

func (st *Stack) releasePort(p proto, port uint16, s *Socket) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if g := st.shared[p][port]; g != nil {
		for i, m := range g.socks {
			if m == s {
				g.socks = append(g.socks[:i], g.socks[i+1:]...)
				break
			}
		}
		if len(g.socks) > 0 {
			// The port stays taken while any member holds it.
			st.ports[p][port] = g.socks[0]
			return
		}
		delete(st.shared[p], port)
	}
	if st.ports[p][port] == s {
		delete(st.ports[p], port)
	}
}

// udpReceiver returns the socket a datagram to the UDP port goes to, or
// nil: on a shared port the members take turns.
func (st *Stack) udpReceiver(port uint16) *Socket {
	st.mu.Lock()
	defer st.mu.Unlock()
	g := st.shared[protoUDP][port]
	if g == nil || len(g.socks) == 0 {
		return st.ports[protoUDP][port]
	}
	g.next = (g.next + 1) % len(g.socks)
	return g.socks[g.next]
}

// tcpListener returns the socket listening on the TCP port, other than
// self, or nil. On a shared port the members take turns; members that are
// only bound (a cluster primary's reservation) are passed over.
func (st *Stack) tcpListener(port uint16, self *Socket) *Socket {
	st.mu.Lock()
	g := st.shared[protoTCP][port]
	var cands []*Socket
	start := 0
	if g != nil {
		n := len(g.socks)
		start = g.next
		cands = make([]*Socket, 0, n)
		for i := range n {
			cands = append(cands, g.socks[(start+i)%n])
		}
	} else if ln := st.ports[protoTCP][port]; ln != nil {
		cands = []*Socket{ln}
	}
	st.mu.Unlock()
	// Listening is read under each socket's own lock, which is never
	// taken inside st.mu's (Bind holds s.mu, then st.mu).
	for i, c := range cands {
		if c == self {
			continue
		}
		c.mu.Lock()
		ok := c.state == stListening
		c.mu.Unlock()
		if ok {
			if g != nil {
				st.mu.Lock()
				if n := len(g.socks); n > 0 {
					g.next = (start + i + 1) % n
				}
				st.mu.Unlock()
			}
			return c
		}
	}
	return nil
}

func unixKey(a Addr) string {
	if a.Abstract {
		return "@" + a.Path
	}
	return "/" + a.Path
}

// isLocalhost reports whether name is "localhost" or a name under it,
// which resolve to the VM's loopback without DNS (RFC 6761).
func isLocalhost(name string) bool {
	n := strings.ToLower(strings.TrimSuffix(name, "."))
	return n == "localhost" || strings.HasSuffix(n, ".localhost")
}

var loopbackAddrs = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}

// Resolve looks up host for a guest (getaddrinfo, dns.lookup). IP
// spellings are parsed without DNS (ParseHost); "localhost" and names
// under it are the VM's loopback. Any other name is checked against the
// policy (op dns) before it is sent to the resolver. The result is
// deduplicated, IPv4-mapped addresses folded to IPv4, zoned ones dropped.
// Errors: EACCES (policy), EINVAL (malformed), ErrNoSuchHost (ENOENT),
// ETIMEDOUT, EAGAIN (temporary failure).
func (st *Stack) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, isIP, err := ParseHost(host); err != nil || isIP {
		if err != nil {
			return nil, fmt.Errorf("resolve %q: %w", host, err)
		}
		return []netip.Addr{ip}, nil
	}
	if isLocalhost(host) {
		return append([]netip.Addr(nil), loopbackAddrs...), nil
	}
	if !validName(host) {
		return nil, fmt.Errorf("resolve %q: %w", host, errno.EINVAL)
	}
	if err := st.checkName(policy.NetDNS, host, 0); err != nil {
		return nil, err
	}
	return st.lookup(ctx, host)
}

func (st *Stack) checkName(op policy.NetOp, host string, port int) error {
	if st.auth == nil {
		return &policy.DeniedError{Domain: policy.DomainNet, Op: string(op), Target: host, Rule: -1}
	}
	return st.auth.CheckNet(op, host, port)
}

// checkAddr decides whether a may be reached on the host network. See
// policy.Checker.CheckNetAddr.
func (st *Stack) checkAddr(op policy.NetOp, a netip.Addr, port uint16, viaName bool) error {
	a = a.Unmap()
	scope, _ := SpecialScope(a)
	if st.auth == nil {
		return &policy.DeniedError{Domain: policy.DomainNet, Op: string(op), Target: netip.AddrPortFrom(a, port).String(), Rule: -1}
	}
	return st.auth.CheckNetAddr(op, a, int(port), scope, viaName)
}

// lookup asks the resolver, without policy checks.
func (st *Stack) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, st.lim.DNSTimeout)
	defer cancel()
	addrs, err := st.res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var de *net.DNSError
		switch {
		case errors.As(err, &de) && de.IsNotFound:
			return nil, fmt.Errorf("resolve %q: %w", host, ErrNoSuchHost)
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("resolve %q: %w", host, errno.ETIMEDOUT)
		case ctx.Err() != nil:
			return nil, waiter.Interrupted(ctx)
		}
		return nil, fmt.Errorf("resolve %q: %w", host, errno.EAGAIN)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() || a.Zone() != "" {
			continue
		}
		dup := false
		for _, b := range out {
			if a == b {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolve %q: %w", host, ErrNoSuchHost)
	}
	return out, nil
}

// hostErr turns a dial or I/O error into an errno, without host text.
func hostErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var en errno.Errno
	if errors.As(err, &en) {
		return en
	}
	var se syscall.Errno
	if errors.As(err, &se) {
		// Linux numbers: the host's errno is the guest's.
		return errno.Errno(se)
	}
	if ctx != nil && ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return errno.ETIMEDOUT
		}
		return waiter.Interrupted(ctx)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errno.ETIMEDOUT
	}
	if errors.Is(err, net.ErrClosed) {
		return errno.ECONNABORTED
	}
	return errno.EIO
}
