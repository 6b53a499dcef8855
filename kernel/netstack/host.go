package netstack

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// pumpBuf is the size of the copy buffer of each host pump goroutine.
const pumpBuf = 32 << 10

// dialHost connects a host socket to ap, which the caller has checked.
// The dialer's Control hook checks again, on the socket address the
// kernel is actually asked to connect to, so nothing between the check
// and the connect can redirect it.
func (st *Stack) dialHost(ctx context.Context, network string, ap netip.AddrPort, viaName bool, opts sockOpts) (net.Conn, error) {
	d := net.Dialer{
		Timeout:   st.lim.ConnectTimeout,
		KeepAlive: -1,
		Control: func(_, address string, _ syscall.RawConn) error {
			got, err := netip.ParseAddrPort(address)
			if err != nil || got.Addr().Unmap() != ap.Addr() || got.Port() != ap.Port() {
				return errno.EACCES
			}
			if isLocal(got.Addr()) && got.Addr().Unmap().IsUnspecified() {
				return errno.EACCES
			}
			if err := st.checkAddr(policy.NetConnect, got.Addr(), got.Port(), viaName); err != nil {
				return err
			}
			if st.hook != nil {
				if err := st.hook(network, ap); err != nil {
					if errno.Of(err) == errno.EIO {
						return errno.EACCES
					}
					return errno.Of(err)
				}
			}
			return nil
		},
	}
	if opts.keepAlive {
		d.KeepAlive = 0 // Go's default period
	}
	c, err := d.DialContext(ctx, network, ap.String())
	if err != nil {
		var de *policy.DeniedError
		if errors.As(err, &de) {
			return nil, de
		}
		return nil, hostErr(ctx, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(opts.noDelay)
	}
	return c, nil
}

// hostConn is the host socket behind a guest stream connection.
type hostConn struct {
	c        net.Conn
	released chan struct{}
	once     sync.Once
	reset    atomic.Bool // the host peer reset the connection
}

// release tells the pumps the guest closed its socket: what it wrote is
// still flushed, for at most Linger, then the host socket closes.
func (h *hostConn) release() {
	h.once.Do(func() {
		close(h.released)
		_ = h.c.SetWriteDeadline(time.Now().Add(Linger))
	})
}

// startHost wires a connected host socket to a new in-memory pair: the
// guest gets one end, two goroutines copy between the other end and the
// host socket. Both are parked (in the netpoller or on the buffers) when
// there is nothing to copy, and both stop when either side closes or the
// stack closes.
func (st *Stack) startHost(c net.Conn) (*endpoint, *hostConn, error) {
	if err := st.track(c); err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	guest, pump := st.newPair()
	h := &hostConn{c: c, released: make(chan struct{})}
	st.wg.Add(2)
	go st.pumpIn(h, pump)
	go st.pumpOut(h, pump)
	return guest, h, nil
}

// pumpIn copies from the host socket to the guest. When the host closes
// its side the guest reads end of file; when the guest stops reading
// (closes) the copy stops.
func (st *Stack) pumpIn(h *hostConn, ep *endpoint) {
	defer st.wg.Done()
	buf := make([]byte, pumpBuf)
	for {
		n, err := h.c.Read(buf)
		if n > 0 {
			if _, werr := ep.tx.Write(st.ctx, buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			if errors.Is(err, syscall.ECONNRESET) {
				h.reset.Store(true) // before the close below makes it visible
			}
			break
		}
	}
	_ = ep.tx.Close()
}

// pumpOut copies from the guest to the host socket. At the guest's end of
// file it half-closes the host socket, then waits for the guest to close
// its socket (or the stack to close) before closing the host socket.
func (st *Stack) pumpOut(h *hostConn, ep *endpoint) {
	defer st.wg.Done()
	defer func() {
		_ = h.c.Close()
		st.untrack(h.c)
		_ = ep.rx.Close()
	}()
	buf := make([]byte, pumpBuf)
	for {
		n, err := ep.rx.Read(st.ctx, buf)
		if n > 0 {
			if _, werr := h.c.Write(buf[:n]); werr != nil {
				return
			}
			continue
		}
		if err != nil {
			return
		}
		break // end of file: the guest shut down writing or closed
	}
	if cw, ok := h.c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	select {
	case <-h.released:
	case <-st.ctx.Done():
	}
}

// udpHost is a connected host UDP socket serving one destination of a
// guest datagram socket.
type udpHost struct {
	c *net.UDPConn
}

// udpHostFor returns the host socket for dst, dialling it (and starting
// its receiver) on first use.
func (s *Socket) udpHostFor(ctx context.Context, dst netip.AddrPort, viaName bool) (*udpHost, error) {
	s.mu.Lock()
	if h, ok := s.udpHosts[dst]; ok {
		s.mu.Unlock()
		return h, nil
	}
	n := len(s.udpHosts)
	s.mu.Unlock()
	if n >= maxUDPDestinations {
		return nil, errno.ENOBUFS
	}
	c, err := s.st.dialHost(ctx, "udp", dst, viaName, sockOpts{})
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UDPConn)
	if !ok {
		_ = c.Close()
		return nil, errno.EIO
	}
	if err := s.st.track(uc); err != nil {
		_ = uc.Close()
		return nil, err
	}
	h := &udpHost{c: uc}
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		_ = uc.Close()
		s.st.untrack(uc)
		return nil, errno.EBADF
	}
	if old, ok := s.udpHosts[dst]; ok {
		s.mu.Unlock()
		_ = uc.Close()
		s.st.untrack(uc)
		return old, nil
	}
	if s.udpHosts == nil {
		s.udpHosts = make(map[netip.AddrPort]*udpHost)
	}
	s.udpHosts[dst] = h
	s.mu.Unlock()
	s.st.wg.Add(1)
	go s.udpReceive(h, dst)
	return h, nil
}

// udpReceive queues the datagrams dst sends back until the host socket
// closes.
func (s *Socket) udpReceive(h *udpHost, dst netip.AddrPort) {
	defer s.st.wg.Done()
	defer s.st.untrack(h.c)
	buf := make([]byte, MaxDatagram+1)
	from := InetAddr(dst)
	if s.family == AFInet6 && dst.Addr().Is4() {
		from.Family = AFInet6
	}
	for {
		n, err := h.c.Read(buf)
		if err != nil {
			return
		}
		s.deliver(datagram{from: from, data: append([]byte(nil), buf[:n]...)})
	}
}
