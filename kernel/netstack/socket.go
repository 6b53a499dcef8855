package netstack

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/pipe"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// MsgFlags are the flags of send and recv, numbered as on Linux.
type MsgFlags int

// Message flags.
const (
	MsgPeek     MsgFlags = 0x2
	MsgTrunc    MsgFlags = 0x20
	MsgDontWait MsgFlags = 0x40
	MsgWaitAll  MsgFlags = 0x100
	MsgNoSignal MsgFlags = 0x4000
)

// Shutdown directions (shutdown(2)'s how).
const (
	ShutRD   = 0
	ShutWR   = 1
	ShutRDWR = 2
)

// MaxDatagram is the largest UDP payload (65535 minus the IPv4 and UDP
// headers).
const MaxDatagram = 65507

// maxUDPDestinations bounds the host sockets one datagram socket keeps:
// one connected host socket per destination, so each only hears replies
// from the peer it wrote to.
const maxUDPDestinations = 64

type sockState uint8

const (
	stIdle sockState = iota
	stListening
	stConnecting
	stConnected
)

// pending is a connection waiting in a listener's backlog.
type pending struct {
	ep          *endpoint
	local, peer Addr
}

type datagram struct {
	from Addr
	data []byte
}

// endpoint is one side of a stream connection: the bytes for this side
// and the bytes to the peer.
type endpoint struct {
	rx *pipe.Reader
	tx *pipe.Writer
}

func (e *endpoint) close() {
	_ = e.rx.Close()
	_ = e.tx.Close()
}

type sockOpts struct {
	reuseAddr, reusePort, keepAlive, noDelay, broadcast, v6only bool
	rcvTimeo, sndTimeo                                          time.Duration
	linger                                                      int64 // seconds, -1 off
	keepIdle, keepIntvl, keepCnt, tos, ttl, tclass              int64
}

// Socket is an open socket: a vfs.File whose Read and Write are recv and
// send. Make one with Stack.NewSocket; the last DecRef closes it.
type Socket struct {
	vfs.Refs
	vfs.StreamDefaults

	st     *Stack
	family Family
	typ    Type
	proto  int
	ino    uint64
	born   time.Time
	flags  atomic.Uint32

	// q carries state changes (connected, failed), the backlog of a
	// listener and the queue of a datagram socket. room is notified when
	// a backlog slot frees up, for blocked connects.
	q, room waiter.Queue

	mu       sync.Mutex
	state    sockState
	released bool
	local    Addr
	bound    bool // holds a port or Unix name, released on close
	boundKey string
	peer     Addr
	soErr    error
	ep       *endpoint
	host     *hostConn
	backlog  int
	pend     []pending
	entries  map[*waiter.Entry]struct{}
	shutRD   bool
	shutWR   bool
	opts     sockOpts
	dq       []datagram
	dqBytes  int
	udpHosts map[netip.AddrPort]*udpHost
	cancel   context.CancelFunc // a connect in progress
	tls      bool               // StartTLS ran: ep carries plaintext
}

// NewSocket creates a socket, as socket(2). Only stream sockets exist for
// AFUnix. Errors: EAFNOSUPPORT, EINVAL (type), EPROTONOSUPPORT, ENFILE
// (Limits.Sockets), ENETUNREACH once the stack is closed.
func (st *Stack) NewSocket(family Family, typ Type, proto int, nonblock bool) (*Socket, error) {
	switch family {
	case AFUnix, AFInet, AFInet6:
	default:
		return nil, errno.EAFNOSUPPORT
	}
	switch typ {
	case SockStream:
		if proto != 0 && (family == AFUnix || proto != ProtoTCP) {
			return nil, errno.EPROTONOSUPPORT
		}
	case SockDgram:
		if family == AFUnix {
			return nil, errno.EPROTONOSUPPORT
		}
		if proto != 0 && proto != ProtoUDP {
			return nil, errno.EPROTONOSUPPORT
		}
	case 3, 5: // SOCK_RAW, SOCK_SEQPACKET
		return nil, errno.EPROTONOSUPPORT
	default:
		return nil, errno.EINVAL
	}
	if err := st.reserveSocket(); err != nil {
		return nil, err
	}
	s := st.newSocket(family, typ, proto)
	if nonblock {
		s.flags.Store(uint32(vfs.O_RDWR | vfs.O_NONBLOCK))
	}
	return s, nil
}

func (st *Stack) reserveSocket() error {
	st.mu.Lock()
	closed := st.closed
	st.mu.Unlock()
	if closed {
		return errno.ENETUNREACH
	}
	if n := st.sockets.Add(1); n > int64(st.lim.Sockets) {
		st.sockets.Add(-1)
		return errno.ENFILE
	}
	return nil
}

// newSocket builds a socket whose slot was reserved.
func (st *Stack) newSocket(family Family, typ Type, proto int) *Socket {
	if proto == 0 {
		proto = ProtoTCP
		if typ == SockDgram {
			proto = ProtoUDP
		}
		if family == AFUnix {
			proto = 0
		}
	}
	s := &Socket{st: st, family: family, typ: typ, proto: proto, ino: st.nextIno.Add(1), born: st.now()}
	s.flags.Store(uint32(vfs.O_RDWR))
	s.opts.linger = -1
	s.opts.noDelay = true // Go's default, and what host connections do
	s.local = Addr{Family: family}
	s.InitRefs(s.release)
	return s
}

// Family returns the address family.
func (s *Socket) Family() Family { return s.family }

// Type returns the socket type.
func (s *Socket) Type() Type { return s.typ }

// Protocol returns the protocol (ProtoTCP, ProtoUDP, or 0 for AFUnix).
func (s *Socket) Protocol() int { return s.proto }

func (s *Socket) tableProto() proto {
	if s.typ == SockDgram {
		return protoUDP
	}
	return protoTCP
}

func (s *Socket) nonblock() bool { return vfs.OpenFlags(s.flags.Load())&vfs.O_NONBLOCK != 0 }

// release runs on the last DecRef: it frees the name, tears down
// connections (the peer sees EOF) and host sockets, and wakes waiters.
func (s *Socket) release() {
	s.mu.Lock()
	s.released = true
	ep, host, pend, hosts, cancel := s.ep, s.host, s.pend, s.udpHosts, s.cancel
	bound, key, port := s.bound, s.boundKey, s.local.Port()
	s.pend, s.udpHosts, s.dq, s.dqBytes = nil, nil, nil, 0
	s.mu.Unlock()
	if bound {
		if s.family == AFUnix {
			s.st.mu.Lock()
			if s.st.unix[key] == s {
				delete(s.st.unix, key)
			}
			s.st.mu.Unlock()
		} else {
			s.st.releasePort(s.tableProto(), port, s)
		}
	}
	for _, p := range pend {
		p.ep.close()
	}
	if ep != nil {
		ep.close()
	}
	if host != nil {
		host.release()
	}
	if cancel != nil {
		cancel()
	}
	for _, h := range hosts {
		_ = h.c.Close()
	}
	s.q.Notify(waiter.AllEvents)
	s.room.Notify(waiter.AllEvents)
	s.st.sockets.Add(-1)
}

// checkFamily validates an internet address for this socket and returns
// it unmapped. An AFInet6 socket also reaches IPv4 (as v4-mapped).
func (s *Socket) checkFamily(a Addr) (netip.AddrPort, error) {
	if s.family == AFUnix {
		if a.Family != AFUnix {
			return netip.AddrPort{}, errno.EAFNOSUPPORT
		}
		return netip.AddrPort{}, nil
	}
	if a.Family == AFUnix {
		return netip.AddrPort{}, errno.EAFNOSUPPORT
	}
	ip := a.IP.Addr().Unmap()
	if !ip.IsValid() || ip.Zone() != "" {
		return netip.AddrPort{}, errno.EINVAL
	}
	if s.family == AFInet && !ip.Is4() {
		return netip.AddrPort{}, errno.EAFNOSUPPORT
	}
	return netip.AddrPortFrom(ip, a.IP.Port()), nil
}

func loopbackFor(ip netip.Addr) netip.Addr {
	if ip.Is4() {
		return loopbackAddrs[0]
	}
	return loopbackAddrs[1]
}

// Bind gives the socket a local address, as bind(2). Internet sockets
// bind in the VM's port table (one table per protocol, so a port is taken
// whatever local address it was bound with, unless every TCP socket on it
// set SoReusePort first); the address must be a
// loopback or the unspecified address (else EADDRNOTAVAIL); port 0 picks
// an ephemeral port. A datagram socket bound to a fixed port is a
// listener and needs policy op listen. Unix sockets bind a path (which the
// caller has made absolute) or an abstract name in the VM's Unix
// namespace; the name is freed when the socket closes (no file is left
// behind). Errors: EINVAL (already bound), EADDRINUSE, EADDRNOTAVAIL,
// EAFNOSUPPORT, EACCES.
func (s *Socket) Bind(a Addr) error {
	ap, err := s.checkFamily(a)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return errno.EBADF
	}
	if s.bound || s.state != stIdle {
		return errno.EINVAL
	}
	st := s.st
	if s.family == AFUnix {
		if a.Path == "" || len(a.Path) > MaxUnixPath {
			return errno.EINVAL
		}
		key := unixKey(a)
		st.mu.Lock()
		defer st.mu.Unlock()
		if _, used := st.unix[key]; used {
			return errno.EADDRINUSE
		}
		st.unix[key] = s
		s.bound, s.boundKey, s.local = true, key, Addr{Family: AFUnix, Path: a.Path, Abstract: a.Abstract}
		return nil
	}
	if !isLocal(ap.Addr()) {
		return errno.EADDRNOTAVAIL
	}
	if s.typ == SockDgram && ap.Port() != 0 {
		if err := st.checkName(policy.NetListen, ap.Addr().String(), int(ap.Port())); err != nil {
			return err
		}
	}
	st.mu.Lock()
	port, err := st.allocPortLocked(s.tableProto(), ap.Port(), s)
	st.mu.Unlock()
	if err != nil {
		return err
	}
	s.bound = true
	s.local = Addr{Family: s.family, IP: netip.AddrPortFrom(ap.Addr(), port)}
	return nil
}

// autobindLocked gives an unbound internet socket an ephemeral port, as
// Linux does on connect, listen and send.
func (s *Socket) autobindLocked(toward netip.Addr) error {
	if s.bound || s.family == AFUnix {
		return nil
	}
	s.st.mu.Lock()
	port, err := s.st.allocPortLocked(s.tableProto(), 0, s)
	s.st.mu.Unlock()
	if err != nil {
		return err
	}
	ip := netip.IPv4Unspecified()
	if s.family == AFInet6 {
		ip = netip.IPv6Unspecified()
	}
	if toward.IsValid() {
		ip = loopbackFor(toward)
	}
	s.bound = true
	s.local = Addr{Family: s.family, IP: netip.AddrPortFrom(ip, port)}
	return nil
}

// Listen marks a stream socket as accepting connections, as listen(2).
// backlog is clamped to [1, Limits.Backlog]. An internet socket needs
// policy op listen on its address and port (checked on the address it is
// bound to: "0.0.0.0", "127.0.0.1", "::"...); an unbound one is bound to
// an ephemeral port first. Errors: EOPNOTSUPP (datagram), EINVAL
// (connected), EACCES.
func (s *Socket) Listen(backlog int) error {
	if s.typ != SockStream {
		return errno.EOPNOTSUPP
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return errno.EBADF
	}
	if s.state == stConnected || s.state == stConnecting {
		return errno.EINVAL
	}
	if s.family == AFUnix && !s.bound {
		return errno.EINVAL // Linux autobinds an abstract name; nothing could reach it here
	}
	if s.family != AFUnix {
		if err := s.autobindLocked(netip.Addr{}); err != nil {
			return err
		}
		ap := s.local.IP
		if err := s.st.checkName(policy.NetListen, ap.Addr().String(), int(ap.Port())); err != nil {
			return err
		}
	}
	s.backlog = min(max(backlog, 1), s.st.lim.Backlog)
	s.state = stListening
	return nil
}

// Accept takes a connection from the backlog, as accept4(2), waiting for
// one unless nonblock (EAGAIN). The new socket has one reference and is
// blocking. Errors: EINVAL (not listening), ENFILE, EINTR.
func (s *Socket) Accept(ctx context.Context, nonblock bool) (*Socket, error) {
	nonblock = nonblock || s.nonblock()
	for {
		s.mu.Lock()
		if s.released {
			s.mu.Unlock()
			return nil, errno.EBADF
		}
		if s.state != stListening {
			s.mu.Unlock()
			return nil, errno.EINVAL
		}
		if len(s.pend) > 0 {
			if err := s.st.reserveSocket(); err != nil {
				s.mu.Unlock()
				return nil, err
			}
			p := s.pend[0]
			s.pend[0] = pending{}
			s.pend = s.pend[1:]
			s.mu.Unlock()
			s.room.Notify(waiter.EventOut)
			ns := s.st.newSocket(s.family, s.typ, s.proto)
			ns.state, ns.ep, ns.local, ns.peer = stConnected, p.ep, p.local, p.peer
			return ns, nil
		}
		s.mu.Unlock()
		if nonblock {
			return nil, errno.EAGAIN
		}
		if _, err := waiter.Wait(ctx, s, waiter.EventIn|waiter.EventHup); err != nil {
			return nil, err
		}
	}
}

// enqueue puts a connection into the listener's backlog, waiting for room
// unless nonblock (EAGAIN) up to the connect timeout (ETIMEDOUT).
func (s *Socket) enqueue(ctx context.Context, p pending, nonblock bool) error {
	var (
		ch    <-chan struct{}
		timer *time.Timer
	)
	for {
		s.mu.Lock()
		if s.released || s.state != stListening {
			s.mu.Unlock()
			return errno.ECONNREFUSED
		}
		if len(s.pend) < s.backlog {
			s.pend = append(s.pend, p)
			s.mu.Unlock()
			s.q.Notify(waiter.EventIn)
			return nil
		}
		s.mu.Unlock()
		if nonblock {
			return errno.EAGAIN
		}
		if ch == nil {
			var e *waiter.Entry
			e, ch = waiter.NewChannelEntry(waiter.EventOut)
			s.room.EventRegister(e)
			defer s.room.EventUnregister(e)
			timer = time.NewTimer(s.st.lim.ConnectTimeout)
			defer timer.Stop()
			continue
		}
		select {
		case <-ch:
		case <-timer.C:
			return errno.ETIMEDOUT
		case <-ctx.Done():
			return waiter.Interrupted(ctx)
		}
	}
}

// errNoListener says no VM socket listens on a port.
var errNoListener = fmt.Errorf("no listener: %w", errno.ECONNREFUSED)

// connectResult is a connection made by connect.
type connectResult struct {
	ep   *endpoint
	host *hostConn
	peer Addr
}

// Connect connects the socket, as connect(2). A stream socket connects to
// a VM listener (loopback, Unix) at once, and to the host network when the
// policy allows (see the package documentation); a non-blocking socket
// then returns EINPROGRESS, becomes writable when the connection is made,
// and reports a failure through SO_ERROR. A datagram socket records its
// default peer. a may carry a host Name to resolve. Errors: EISCONN,
// EALREADY, EINVAL (listening), EAFNOSUPPORT, ECONNREFUSED, ENOENT (Unix
// path), EACCES (policy), ETIMEDOUT, ENETUNREACH, EINTR.
func (s *Socket) Connect(ctx context.Context, a Addr) error {
	if s.typ == SockDgram {
		return s.connectDgram(ctx, a)
	}
	if s.family == AFUnix || a.Family == AFUnix || a.Name == "" {
		if _, err := s.checkFamily(a); err != nil {
			return err
		}
	}
	s.mu.Lock()
	switch {
	case s.released:
		s.mu.Unlock()
		return errno.EBADF
	case s.state == stListening:
		s.mu.Unlock()
		return errno.EINVAL
	case s.state == stConnected:
		s.mu.Unlock()
		return errno.EISCONN
	case s.state == stConnecting:
		s.mu.Unlock()
		return errno.EALREADY
	}
	s.soErr = nil
	nonblock := s.nonblock()
	if s.family == AFUnix {
		s.state = stConnecting
		s.mu.Unlock()
		r, err := s.connectUnix(ctx, a, nonblock)
		return s.finishConnect(r, err)
	}
	s.state = stConnecting
	s.mu.Unlock()

	plan, err := s.planInet(a)
	if err != nil {
		return s.finishConnect(connectResult{}, err)
	}
	// Only a connection that may leave the VM can take long; a VM-local
	// one completes now even on a non-blocking socket.
	if !nonblock || plan.allLocal() && s.st.vmListening(plan.port) {
		r, err := s.dialInet(ctx, plan, nonblock)
		return s.finishConnect(r, err)
	}
	cctx, cancel := context.WithCancel(s.st.ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	s.st.wg.Add(1)
	go func() {
		defer s.st.wg.Done()
		defer cancel()
		r, err := s.dialInet(cctx, plan, false)
		_ = s.finishConnect(r, err)
	}()
	return errno.EINPROGRESS
}

// finishConnect records the outcome of a connect and wakes waiters.
func (s *Socket) finishConnect(r connectResult, err error) error {
	s.mu.Lock()
	s.cancel = nil
	if s.released {
		s.mu.Unlock()
		r.close()
		if err == nil {
			err = errno.EBADF
		}
		return err
	}
	if err != nil {
		s.state = stIdle
		s.soErr = err
	} else {
		s.state, s.ep, s.host, s.peer = stConnected, r.ep, r.host, r.peer
		for e := range s.entries {
			r.ep.rx.EventRegister(e)
			r.ep.tx.EventRegister(e)
		}
	}
	s.mu.Unlock()
	s.q.Notify(waiter.AllEvents)
	if err != nil {
		// A blocking caller gets the error now; SO_ERROR is for the
		// non-blocking one, which reads it after poll.
		return err
	}
	return nil
}

func (r connectResult) close() {
	if r.ep != nil {
		r.ep.close()
	}
	if r.host != nil {
		r.host.release()
	}
}

func (s *Socket) connectUnix(ctx context.Context, a Addr, nonblock bool) (connectResult, error) {
	if a.Path == "" || len(a.Path) > MaxUnixPath {
		return connectResult{}, errno.EINVAL
	}
	s.st.mu.Lock()
	ln := s.st.unix[unixKey(a)]
	s.st.mu.Unlock()
	if ln == nil {
		if a.Abstract {
			return connectResult{}, errno.ECONNREFUSED
		}
		return connectResult{}, errno.ENOENT
	}
	s.mu.Lock()
	local := s.local
	s.mu.Unlock()
	mine, theirs := s.st.newPair()
	peer := Addr{Family: AFUnix, Path: a.Path, Abstract: a.Abstract}
	if err := ln.enqueue(ctx, pending{ep: theirs, local: peer, peer: local}, nonblock); err != nil {
		mine.close()
		theirs.close()
		return connectResult{}, err
	}
	return connectResult{ep: mine, peer: peer}, nil
}

// inetPlan is what an internet connect will try: addresses, or a name to
// resolve (already checked), and the port. pin, when valid, is the one
// address of the name's to use.
type inetPlan struct {
	addrs   []netip.Addr
	name    string
	pin     netip.Addr
	port    uint16
	viaName bool
}

// vmListening reports whether a VM socket listens on the TCP port.
func (st *Stack) vmListening(port uint16) bool {
	return st.tcpListener(port, nil) != nil
}

func (p inetPlan) allLocal() bool {
	if p.viaName {
		return false
	}
	for _, a := range p.addrs {
		if !isLocal(a) {
			return false
		}
	}
	return true
}

// planInet checks the target's form and, for a name, the policy (op
// connect on the name) before anything is resolved.
func (s *Socket) planInet(a Addr) (inetPlan, error) {
	port := a.IP.Port()
	if a.Name == "" {
		ap, err := s.checkFamily(a)
		if err != nil {
			return inetPlan{}, err
		}
		return inetPlan{addrs: []netip.Addr{ap.Addr()}, port: port}, nil
	}
	ip, isIP, err := ParseHost(a.Name)
	switch {
	case err != nil:
		return inetPlan{}, err
	case isIP:
		return inetPlan{addrs: []netip.Addr{ip}, port: port}, nil
	case isLocalhost(a.Name):
		return inetPlan{addrs: loopbackAddrs, port: port}, nil
	case !validName(a.Name):
		return inetPlan{}, errno.EINVAL
	}
	if err := s.st.checkName(policy.NetConnect, a.Name, int(port)); err != nil {
		return inetPlan{}, err
	}
	plan := inetPlan{name: a.Name, port: port, viaName: true}
	if ip := a.IP.Addr(); ip.IsValid() {
		if ip.Zone() != "" {
			return inetPlan{}, errno.EINVAL
		}
		plan.pin = ip.Unmap()
	}
	return plan, nil
}

// resolvePlan returns the addresses a plan tries, resolving its name. A
// pinned address is used alone: as reached through the name when the
// name resolves to it now, else as a plain address (checked as one: a
// guest cannot borrow a name's permission for an address of its choice).
func (st *Stack) resolvePlan(ctx context.Context, plan *inetPlan) ([]netip.Addr, error) {
	if !plan.viaName {
		return plan.addrs, nil
	}
	addrs, err := st.lookup(ctx, plan.name)
	if err != nil || !plan.pin.IsValid() {
		return addrs, err
	}
	for _, a := range addrs {
		if a == plan.pin {
			return []netip.Addr{a}, nil
		}
	}
	plan.viaName = false
	return []netip.Addr{plan.pin}, nil
}

// dialInet tries the plan's addresses in order: VM listeners for local
// addresses, the host network for the rest (and for loopback addresses a
// rule names explicitly). It returns the first connection made, or the
// last error.
func (s *Socket) dialInet(ctx context.Context, plan inetPlan, nonblock bool) (connectResult, error) {
	addrs, err := s.st.resolvePlan(ctx, &plan)
	if err != nil {
		return connectResult{}, err
	}
	var lastErr error = errno.ENETUNREACH
	for _, ip := range addrs {
		if s.family == AFInet && !ip.Is4() {
			continue
		}
		ap := netip.AddrPortFrom(ip, plan.port)
		if isLocal(ip) {
			r, err := s.connectLocal(ctx, ap, nonblock)
			if err == nil {
				return r, nil
			}
			lastErr = err
			if err != errNoListener || ip.IsUnspecified() {
				continue
			}
			// No VM listener: the host's loopback only if a rule names it.
			if s.st.checkAddr(policy.NetConnect, ip, plan.port, plan.viaName) != nil {
				lastErr = errno.ECONNREFUSED
				continue
			}
		} else if err := s.st.checkAddr(policy.NetConnect, ip, plan.port, plan.viaName); err != nil {
			lastErr = err
			continue
		}
		r, err := s.connectHost(ctx, ap, plan.viaName)
		if err == nil {
			return r, nil
		}
		lastErr = err
	}
	if lastErr == errNoListener {
		lastErr = errno.ECONNREFUSED
	}
	return connectResult{}, lastErr
}

// connectLocal connects to a VM listener on ap's port.
func (s *Socket) connectLocal(ctx context.Context, ap netip.AddrPort, nonblock bool) (connectResult, error) {
	st := s.st
	ln := st.tcpListener(ap.Port(), s)
	if ln == nil {
		return connectResult{}, errNoListener
	}
	ln.mu.Lock()
	listening := ln.state == stListening
	lnLocal := ln.local
	ln.mu.Unlock()
	if !listening {
		return connectResult{}, errNoListener
	}
	s.mu.Lock()
	err := s.autobindLocked(ap.Addr())
	local := s.local
	s.mu.Unlock()
	if err != nil {
		return connectResult{}, err
	}
	// The server sees the address the client dialled as its own.
	srvLocal := lnLocal
	srvLocal.IP = netip.AddrPortFrom(ap.Addr(), ap.Port())
	if local.IP.Addr().IsUnspecified() {
		local.IP = netip.AddrPortFrom(loopbackFor(ap.Addr()), local.IP.Port())
	}
	mine, theirs := st.newPair()
	if err := ln.enqueue(ctx, pending{ep: theirs, local: srvLocal, peer: local}, nonblock); err != nil {
		mine.close()
		theirs.close()
		return connectResult{}, err
	}
	return connectResult{ep: mine, peer: InetAddr(ap)}, nil
}

// connectHost dials the host network.
func (s *Socket) connectHost(ctx context.Context, ap netip.AddrPort, viaName bool) (connectResult, error) {
	s.mu.Lock()
	err := s.autobindLocked(netip.Addr{})
	opts := s.opts
	s.mu.Unlock()
	if err != nil {
		return connectResult{}, err
	}
	c, err := s.st.dialHost(ctx, "tcp", ap, viaName, opts)
	if err != nil {
		return connectResult{}, err
	}
	ep, h, err := s.st.startHost(c)
	if err != nil {
		return connectResult{}, err
	}
	return connectResult{ep: ep, host: h, peer: InetAddr(ap)}, nil
}

// Shutdown shuts down one or both directions, as shutdown(2): after
// ShutWR the peer reads end of file; after ShutRD reads return end of
// file. Errors: ENOTCONN, EINVAL.
func (s *Socket) Shutdown(how int) error {
	if how < ShutRD || how > ShutRDWR {
		return errno.EINVAL
	}
	s.mu.Lock()
	if s.state == stListening && s.typ == SockStream {
		// Linux wakes accept with EINVAL; closing the backlog does that.
		pend := s.pend
		s.pend, s.state = nil, stIdle
		s.mu.Unlock()
		for _, p := range pend {
			p.ep.close()
		}
		s.q.Notify(waiter.AllEvents)
		return nil
	}
	if s.state != stConnected {
		s.mu.Unlock()
		return errno.ENOTCONN
	}
	ep := s.ep
	if how != ShutWR {
		s.shutRD = true
	}
	if how != ShutRD {
		s.shutWR = true
	}
	s.mu.Unlock()
	if ep != nil {
		if how != ShutWR {
			_ = ep.rx.Close()
		}
		if how != ShutRD {
			_ = ep.tx.Close()
		}
	}
	s.q.Notify(waiter.AllEvents)
	return nil
}

// LocalAddr returns the address the socket is bound to (getsockname); an
// unbound socket reports the unspecified address of its family, port 0.
func (s *Socket) LocalAddr() Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local
}

// PeerAddr returns the connected peer's address (getpeername), or
// ENOTCONN.
func (s *Socket) PeerAddr() (Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stConnected {
		return Addr{}, errno.ENOTCONN
	}
	return s.peer, nil
}

// Read receives on the socket (read(2) = recv without flags).
func (s *Socket) Read(ctx context.Context, p []byte) (int, error) {
	n, _, err := s.RecvFrom(ctx, p, 0)
	return n, err
}

// Write sends on the socket (write(2) = send without flags).
func (s *Socket) Write(ctx context.Context, p []byte) (int, error) {
	return s.SendTo(ctx, p, 0, nil)
}

// timeoutCtx applies SO_RCVTIMEO or SO_SNDTIMEO to a blocking call.
func timeoutCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d, errTimeo)
}

// errTimeo marks the expiry of a socket time-out, which Linux reports as
// EAGAIN.
var errTimeo = errors.New("socket time-out")

// timeoErr turns the interruption of a timed call into EAGAIN when the
// socket's own time-out, not the caller, ended it.
func timeoErr(tctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(tctx), errTimeo) && errors.Is(err, errno.EINTR) {
		return errno.EAGAIN
	}
	return err
}

// RecvFrom receives data, as recvfrom(2), and returns the sender's
// address for datagrams (stream sockets return their peer). Flags:
// MsgPeek, MsgDontWait, MsgWaitAll (streams), MsgTrunc (datagrams: return
// the full length). A stream returns (0, nil) at end of file. SO_RCVTIMEO
// ends a blocking wait with EAGAIN. Errors: ENOTCONN, EAGAIN, EINTR.
func (s *Socket) RecvFrom(ctx context.Context, p []byte, flags MsgFlags) (int, Addr, error) {
	if s.typ == SockDgram {
		return s.recvDgram(ctx, p, flags)
	}
	s.mu.Lock()
	state, ep, shutRD, peer, timeo := s.state, s.ep, s.shutRD, s.peer, s.opts.rcvTimeo
	s.mu.Unlock()
	if state != stConnected {
		return 0, Addr{}, errno.ENOTCONN
	}
	if shutRD {
		return 0, peer, nil
	}
	nonblock := s.nonblock() || flags&MsgDontWait != 0
	if flags&MsgPeek != 0 {
		for {
			n, err := ep.rx.TryPeek(p)
			if err != errno.EAGAIN || nonblock {
				return n, peer, err
			}
			tctx, cancel := timeoutCtx(ctx, timeo)
			_, err = waiter.Wait(tctx, ep.rx, waiter.EventIn)
			err = timeoErr(tctx, err)
			cancel()
			if err != nil {
				return 0, peer, err
			}
		}
	}
	if nonblock {
		n, err := ep.rx.TryRead(p)
		if n == 0 && err == nil && len(p) > 0 {
			err = s.eofErr()
		}
		return n, peer, s.readErr(err)
	}
	tctx, cancel := timeoutCtx(ctx, timeo)
	defer cancel()
	done := 0
	for {
		n, err := ep.rx.Read(tctx, p[done:])
		done += n
		if err != nil {
			err = timeoErr(tctx, s.readErr(err))
			if done > 0 {
				return done, peer, nil
			}
			return 0, peer, err
		}
		if n == 0 && done == 0 && len(p) > 0 {
			return 0, peer, s.eofErr()
		}
		if flags&MsgWaitAll == 0 || n == 0 || done == len(p) {
			return done, peer, nil
		}
	}
}

// eofErr is what a read at end of file returns: nil, or ECONNRESET once
// when the host peer reset the connection.
func (s *Socket) eofErr() error {
	s.mu.Lock()
	h := s.host
	s.mu.Unlock()
	if h != nil && h.reset.CompareAndSwap(true, false) {
		return errno.ECONNRESET
	}
	return nil
}

// readErr maps the EBADF of a reader closed by shutdown to end of file.
func (s *Socket) readErr(err error) error {
	if err == errno.EBADF {
		s.mu.Lock()
		shut := s.shutRD || s.released
		s.mu.Unlock()
		if shut {
			return nil
		}
	}
	return err
}

// SendTo sends data, as sendto(2). Stream sockets ignore to (Linux:
// EISCONN if it is set on a connected socket is not enforced) and write
// all of p unless non-blocking (MsgDontWait or O_NONBLOCK: what fits, or
// EAGAIN). Datagram sockets send one datagram to to or the connected peer;
// a datagram to a VM port nobody has bound is dropped, as on a network.
// EPIPE means the peer is gone or the socket was shut down for writing;
// the caller raises SIGPIPE unless MsgNoSignal. Errors: ENOTCONN, EPIPE,
// EAGAIN, EMSGSIZE, EDESTADDRREQ, EACCES, EINTR.
func (s *Socket) SendTo(ctx context.Context, p []byte, flags MsgFlags, to *Addr) (int, error) {
	if s.typ == SockDgram {
		return s.sendDgram(ctx, p, flags, to)
	}
	s.mu.Lock()
	state, ep, shutWR, timeo := s.state, s.ep, s.shutWR, s.opts.sndTimeo
	s.mu.Unlock()
	if shutWR {
		return 0, errno.EPIPE
	}
	if state != stConnected {
		return 0, errno.ENOTCONN
	}
	if s.nonblock() || flags&MsgDontWait != 0 {
		return ep.tx.TryWrite(p)
	}
	tctx, cancel := timeoutCtx(ctx, timeo)
	defer cancel()
	n, err := ep.tx.Write(tctx, p)
	if err != nil {
		if err = timeoErr(tctx, err); err == errno.EAGAIN && n > 0 {
			return n, nil
		}
	}
	return n, err
}

// Readiness reports the socket's events: a listener is readable with a
// connection in its backlog; a connected stream as its buffers allow,
// with EventHup once both directions are closed; a datagram socket is
// readable with a datagram queued and always writable; an unconnected
// stream socket reports EventOut|EventHup as Linux does; a pending
// SO_ERROR adds EventErr.
func (s *Socket) Readiness(mask waiter.EventMask) waiter.EventMask {
	s.mu.Lock()
	state, ep, npend, soErr, shutRD, shutWR, ndq := s.state, s.ep, len(s.pend), s.soErr, s.shutRD, s.shutWR, len(s.dq)
	s.mu.Unlock()
	var r waiter.EventMask
	if soErr != nil {
		r |= waiter.EventErr
	}
	switch {
	case s.typ == SockDgram:
		if ndq > 0 {
			r |= waiter.EventIn
		}
		r |= waiter.EventOut
	case state == stListening:
		if npend > 0 {
			r |= waiter.EventIn
		}
	case state == stConnecting:
	case state == stConnected:
		in := ep.rx.Readiness(waiter.EventIn | waiter.EventHup)
		out := ep.tx.Readiness(waiter.EventOut | waiter.EventErr)
		r |= in&waiter.EventIn | out&waiter.EventOut
		if shutRD {
			r |= waiter.EventIn
		}
		if (in&waiter.EventHup != 0 || shutRD) && (out&waiter.EventErr != 0 || shutWR) {
			r |= waiter.EventHup
		}
	default:
		r |= waiter.EventOut | waiter.EventHup
	}
	return r & mask
}

// EventRegister adds e to the socket's waiters (and to its connection's,
// now or when it is made).
func (s *Socket) EventRegister(e *waiter.Entry) {
	if e == nil {
		return
	}
	s.mu.Lock()
	if s.entries == nil {
		s.entries = make(map[*waiter.Entry]struct{})
	}
	s.entries[e] = struct{}{}
	ep := s.ep
	s.mu.Unlock()
	s.q.EventRegister(e)
	if ep != nil {
		ep.rx.EventRegister(e)
		ep.tx.EventRegister(e)
	}
}

// EventUnregister removes e from the socket's waiters.
func (s *Socket) EventUnregister(e *waiter.Entry) {
	s.mu.Lock()
	delete(s.entries, e)
	if len(s.entries) == 0 {
		s.entries = nil
	}
	ep := s.ep
	s.mu.Unlock()
	s.q.EventUnregister(e)
	if ep != nil {
		ep.rx.EventUnregister(e)
		ep.tx.EventUnregister(e)
	}
}

// Stat reports a socket inode.
func (s *Socket) Stat(context.Context) (vfs.Stat, error) {
	return vfs.Stat{Ino: s.ino, Mode: vfs.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096,
		Atime: s.born, Mtime: s.born, Ctime: s.born}, nil
}

// SetAttr fails: sockets have no attributes to change.
func (s *Socket) SetAttr(context.Context, vfs.SetAttr) error { return errno.EINVAL }

// Flags returns O_RDWR and O_NONBLOCK if set.
func (s *Socket) Flags() vfs.OpenFlags { return vfs.OpenFlags(s.flags.Load()) }

// SetFlags sets O_NONBLOCK (fcntl F_SETFL); other bits are ignored.
func (s *Socket) SetFlags(fl vfs.OpenFlags) error {
	for {
		old := s.flags.Load()
		nw := old&^uint32(vfs.O_NONBLOCK) | uint32(fl&vfs.O_NONBLOCK)
		if s.flags.CompareAndSwap(old, nw) {
			return nil
		}
	}
}

// Path returns the Linux-style name "socket:[INO]".
func (s *Socket) Path() string { return fmt.Sprintf("socket:[%d]", s.ino) }

// Buffered returns the bytes (or, for datagrams, the bytes of the next
// datagram) waiting to be read (FIONREAD).
func (s *Socket) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.typ == SockDgram {
		if len(s.dq) == 0 {
			return 0
		}
		return len(s.dq[0].data)
	}
	if s.ep == nil {
		return 0
	}
	return s.ep.rx.Pipe().Len()
}

// NewSocketPair creates two connected, unnamed stream sockets, as
// socketpair(2). Only AFUnix stream pairs exist (Linux has no internet
// pairs either: EOPNOTSUPP); no policy applies, since nothing is named or
// reached. Errors: EOPNOTSUPP, EPROTONOSUPPORT, ENFILE.
func (st *Stack) NewSocketPair(family Family, typ Type, proto int, nonblock bool) (*Socket, *Socket, error) {
	switch {
	case family == AFInet || family == AFInet6:
		return nil, nil, errno.EOPNOTSUPP
	case family != AFUnix:
		return nil, nil, errno.EAFNOSUPPORT
	case typ != SockStream || proto != 0:
		return nil, nil, errno.EPROTONOSUPPORT
	}
	if err := st.reserveSocket(); err != nil {
		return nil, nil, err
	}
	if err := st.reserveSocket(); err != nil {
		st.sockets.Add(-1)
		return nil, nil, err
	}
	ea, eb := st.newPair()
	a, b := st.newSocket(family, typ, proto), st.newSocket(family, typ, proto)
	for _, x := range []struct {
		s  *Socket
		ep *endpoint
	}{{a, ea}, {b, eb}} {
		x.s.state, x.s.ep = stConnected, x.ep
		x.s.local, x.s.peer = Addr{Family: AFUnix}, Addr{Family: AFUnix}
		if nonblock {
			x.s.flags.Store(uint32(vfs.O_RDWR | vfs.O_NONBLOCK))
		}
	}
	return a, b, nil
}
