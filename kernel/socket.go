package kernel

import (
	"context"
	"net"
	"net/netip"
	"path"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/vfs"
)

// Net returns the VM's network stack.
func (k *Kernel) Net() *netstack.Stack { return k.net }

// DialGuest connects the embedder to a guest's TCP listener on port (see
// netstack.Stack.DialGuest): the way host code reaches a server running in
// the VM. No policy applies to it.
func (k *Kernel) DialGuest(ctx context.Context, port uint16) (net.Conn, error) {
	return k.net.DialGuest(ctx, port)
}

// socket returns the socket at fd with a reference the caller must drop,
// or ENOTSOCK / EBADF.
func (p *Process) socket(fd int) (*netstack.Socket, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return nil, err
	}
	s, ok := f.(*netstack.Socket)
	if !ok {
		f.DecRef()
		return nil, errno.ENOTSOCK
	}
	return s, nil
}

// IsSocket reports whether fd is an open socket (for fdstat's file type).
func (p *Process) IsSocket(fd int) bool {
	s, err := p.socket(fd)
	if err != nil {
		return false
	}
	s.DecRef()
	return true
}

// Socket creates a socket, as socket(2), and installs it at the lowest
// free descriptor. flags may hold O_NONBLOCK and O_CLOEXEC (SOCK_NONBLOCK
// and SOCK_CLOEXEC). Errors: EAFNOSUPPORT, EPROTONOSUPPORT, EINVAL, ENFILE
// (sockets or descriptors of the VM), EMFILE.
func (p *Process) Socket(domain netstack.Family, typ netstack.Type, proto int, flags vfs.OpenFlags) (int, error) {
	s, err := p.k.net.NewSocket(domain, typ, proto, flags&vfs.O_NONBLOCK != 0)
	if err != nil {
		return -1, err
	}
	fd, err := p.fds.Install(s, 0, flags&vfs.O_CLOEXEC != 0)
	if err != nil {
		s.DecRef()
		return -1, err
	}
	return fd, nil
}

// Socketpair creates two connected sockets, as socketpair(2) (see
// netstack.Stack.NewSocketPair), and installs them at the lowest free
// descriptors. flags may hold O_NONBLOCK and O_CLOEXEC.
func (p *Process) Socketpair(domain netstack.Family, typ netstack.Type, proto int, flags vfs.OpenFlags) (int, int, error) {
	a, b, err := p.k.net.NewSocketPair(domain, typ, proto, flags&vfs.O_NONBLOCK != 0)
	if err != nil {
		return -1, -1, err
	}
	cloexec := flags&vfs.O_CLOEXEC != 0
	fa, err := p.fds.Install(a, 0, cloexec)
	if err != nil {
		a.DecRef()
		b.DecRef()
		return -1, -1, err
	}
	fb, err := p.fds.Install(b, 0, cloexec)
	if err != nil {
		_ = p.fds.Close(fa)
		b.DecRef()
		return -1, -1, err
	}
	return fa, fb, nil
}

// unixPath makes a Unix socket path absolute against the working
// directory and cleans it, so one socket has one name whatever relative
// spelling reached it. (Symlinks are not followed: the namespace is keyed
// by the path, not by an inode.)
func (p *Process) unixPath(a netstack.Addr) netstack.Addr {
	if a.Family == netstack.AFUnix && !a.Abstract && a.Path != "" {
		a.Path = path.Clean(absJoin(p.Cwd(), a.Path))
	}
	return a
}

// Bind binds fd to a local address, as bind(2); see netstack.Socket.Bind.
// A relative Unix path is resolved against the working directory.
func (p *Process) Bind(ctx context.Context, fd int, addr netstack.Addr) error {
	s, err := p.socket(fd)
	if err != nil {
		return err
	}
	defer s.DecRef()
	return s.Bind(p.unixPath(addr))
}

// Listen makes fd a listening socket, as listen(2).
func (p *Process) Listen(fd, backlog int) error {
	s, err := p.socket(fd)
	if err != nil {
		return err
	}
	defer s.DecRef()
	return s.Listen(backlog)
}

// Accept takes a connection from the listening socket fd, as accept4(2),
// and installs it; flags may hold O_NONBLOCK and O_CLOEXEC for the new
// descriptor. It blocks unless fd is non-blocking (EAGAIN). It returns the
// new descriptor and the peer's address.
func (p *Process) Accept(ctx context.Context, fd int, flags vfs.OpenFlags) (int, netstack.Addr, error) {
	s, err := p.socket(fd)
	if err != nil {
		return -1, netstack.Addr{}, err
	}
	defer s.DecRef()
	if err := p.waitIfStopped(ctx); err != nil {
		return -1, netstack.Addr{}, err
	}
	bctx, done := p.blockCtx(ctx)
	defer done()
	ns, err := s.Accept(bctx, false)
	if err != nil {
		return -1, netstack.Addr{}, err
	}
	if flags&vfs.O_NONBLOCK != 0 {
		_ = ns.SetFlags(vfs.O_NONBLOCK)
	}
	peer, _ := ns.PeerAddr()
	nfd, err := p.fds.Install(ns, 0, flags&vfs.O_CLOEXEC != 0)
	if err != nil {
		ns.DecRef()
		return -1, netstack.Addr{}, err
	}
	return nfd, peer, nil
}

// Connect connects fd, as connect(2); see netstack.Socket.Connect for the
// routing and policy rules. A non-blocking socket may return EINPROGRESS:
// poll for writability, then read SO_ERROR.
func (p *Process) Connect(ctx context.Context, fd int, addr netstack.Addr) error {
	s, err := p.socket(fd)
	if err != nil {
		return err
	}
	defer s.DecRef()
	if err := p.waitIfStopped(ctx); err != nil {
		return err
	}
	bctx, done := p.blockCtx(ctx)
	defer done()
	return s.Connect(bctx, p.unixPath(addr))
}

// Shutdown shuts down part of a connection, as shutdown(2).
func (p *Process) Shutdown(fd, how int) error {
	s, err := p.socket(fd)
	if err != nil {
		return err
	}
	defer s.DecRef()
	return s.Shutdown(how)
}

// Getsockname returns fd's local address.
func (p *Process) Getsockname(fd int) (netstack.Addr, error) {
	s, err := p.socket(fd)
	if err != nil {
		return netstack.Addr{}, err
	}
	defer s.DecRef()
	return s.LocalAddr(), nil
}

// Getpeername returns the address of fd's peer, or ENOTCONN.
func (p *Process) Getpeername(fd int) (netstack.Addr, error) {
	s, err := p.socket(fd)
	if err != nil {
		return netstack.Addr{}, err
	}
	defer s.DecRef()
	return s.PeerAddr()
}

// Setsockopt sets a socket option; see netstack.Socket.SetOption for the
// options and how values are encoded.
func (p *Process) Setsockopt(fd, level, name int, val int64) error {
	s, err := p.socket(fd)
	if err != nil {
		return err
	}
	defer s.DecRef()
	return s.SetOption(level, name, val)
}

// Getsockopt reads a socket option.
func (p *Process) Getsockopt(fd, level, name int) (int64, error) {
	s, err := p.socket(fd)
	if err != nil {
		return 0, err
	}
	defer s.DecRef()
	return s.Option(level, name)
}

// SendTo sends on fd, as sendto(2) (to nil: send(2)). EPIPE raises
// SIGPIPE in the process unless flags has MsgNoSignal.
func (p *Process) SendTo(ctx context.Context, fd int, b []byte, flags netstack.MsgFlags, to *netstack.Addr) (int, error) {
	s, err := p.socket(fd)
	if err != nil {
		return 0, err
	}
	defer s.DecRef()
	if err := p.waitIfStopped(ctx); err != nil {
		return 0, err
	}
	bctx, done := p.blockCtx(ctx)
	defer done()
	if to != nil {
		a := p.unixPath(*to)
		to = &a
	}
	n, err := s.SendTo(bctx, b, flags, to)
	if err != nil && errno.Of(err) == errno.EPIPE && flags&netstack.MsgNoSignal == 0 {
		p.sendSignal(SIGPIPE, p.pid)
	}
	return n, err
}

// RecvFrom receives on fd, as recvfrom(2), returning the sender's
// address.
func (p *Process) RecvFrom(ctx context.Context, fd int, b []byte, flags netstack.MsgFlags) (int, netstack.Addr, error) {
	s, err := p.socket(fd)
	if err != nil {
		return 0, netstack.Addr{}, err
	}
	defer s.DecRef()
	if err := p.waitIfStopped(ctx); err != nil {
		return 0, netstack.Addr{}, err
	}
	bctx, done := p.blockCtx(ctx)
	defer done()
	return s.RecvFrom(bctx, b, flags)
}

// Resolve looks up a host name for the process (getaddrinfo,
// dns.lookup), with policy op dns; see netstack.Stack.Resolve.
func (p *Process) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	bctx, done := p.blockCtx(ctx)
	defer done()
	return p.k.net.Resolve(bctx, host)
}
