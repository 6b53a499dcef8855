package netstack

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

// StartTLS turns the connected stream socket into a TLS endpoint: the
// handshake (client, or server with server set) runs on the host with Go's
// crypto/tls over the connection's bytes, and from then on the guest reads
// and writes plaintext while the peer sees TLS. It works the same for
// connections to the host network and inside the VM, since it only sits
// between the socket and its connection.
//
// Two goroutines then copy between the guest's plaintext buffers and the
// TLS connection; both stop when either side closes or the stack closes.
// The handshake is bounded by ctx and by the stack's ConnectTimeout.
// Errors: ENOTCONN, EISCONN (TLS already), EINVAL (datagram socket), the
// handshake's error wrapped (a *tls.CertificateVerificationError or an
// alert), EINTR.
func (s *Socket) StartTLS(ctx context.Context, cfg *tls.Config, server bool) (tls.ConnectionState, error) {
	if s.typ != SockStream {
		return tls.ConnectionState{}, errno.EINVAL
	}
	s.mu.Lock()
	if s.state != stConnected || s.ep == nil || s.shutRD || s.shutWR {
		s.mu.Unlock()
		return tls.ConnectionState{}, errno.ENOTCONN
	}
	if s.tls {
		s.mu.Unlock()
		return tls.ConnectionState{}, errno.EISCONN
	}
	s.tls = true
	wire := s.ep
	guest, pump := s.st.newPair()
	// The guest's waiters move to the plaintext buffers now, so that no
	// wake-up for the new buffers is missed.
	for e := range s.entries {
		wire.rx.EventUnregister(e)
		wire.tx.EventUnregister(e)
		guest.rx.EventRegister(e)
		guest.tx.EventRegister(e)
	}
	s.ep = guest
	local, remote := s.local.IP, s.peer.IP
	s.mu.Unlock()
	s.q.Notify(waiter.AllEvents)

	wc := newConn(wire, addrPortOr(local), addrPortOr(remote), nil)
	var tc *tls.Conn
	if server {
		tc = tls.Server(wc, cfg)
	} else {
		tc = tls.Client(wc, cfg)
	}
	hctx, cancel := context.WithTimeout(ctx, s.st.lim.ConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(s.st.ctx, func() { _ = wc.Close() })
	if err := tc.HandshakeContext(hctx); err != nil {
		stop()
		_ = wc.Close()
		pump.close()
		if ctx.Err() != nil {
			return tls.ConnectionState{}, errno.EINTR
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return tls.ConnectionState{}, errno.ETIMEDOUT
		}
		return tls.ConnectionState{}, err
	}
	s.st.wg.Add(2)
	go s.st.tlsIn(tc, pump, stop)
	go s.st.tlsOut(tc, pump, stop)
	return tc.ConnectionState(), nil
}

// addrPortOr returns a, or the unspecified address for a Unix socket.
func addrPortOr(a netip.AddrPort) netip.AddrPort {
	if a.IsValid() {
		return a
	}
	return netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
}

// tlsIn copies plaintext from the TLS connection to the guest; at the
// peer's close_notify or end of file the guest reads end of file.
func (st *Stack) tlsIn(tc *tls.Conn, ep *endpoint, stop func() bool) {
	defer st.wg.Done()
	buf := make([]byte, pumpBuf)
	for {
		n, err := tc.Read(buf)
		if n > 0 {
			if _, werr := ep.tx.Write(st.ctx, buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				st.log.Debug("netstack: tls read", "err", err)
			}
			break
		}
	}
	_ = ep.tx.Close()
}

// tlsOut copies the guest's plaintext into the TLS connection; at the
// guest's end of file it sends close_notify and half-closes the wire, and
// when the guest closes the socket it closes the wire.
func (st *Stack) tlsOut(tc *tls.Conn, ep *endpoint, stop func() bool) {
	defer st.wg.Done()
	defer func() {
		stop()
		_ = tc.Close()
		_ = ep.rx.Close()
	}()
	buf := make([]byte, pumpBuf)
	for {
		n, err := ep.rx.Read(st.ctx, buf)
		if n > 0 {
			if _, werr := tc.Write(buf[:n]); werr != nil {
				return
			}
			continue
		}
		if err != nil {
			return
		}
		break
	}
	_ = tc.CloseWrite()
	// The guest only shut down writing: the connection stays until it
	// closes the socket (its reader of our buffer goes away), the peer's
	// side ends (tlsIn closes our writer) or the stack closes.
	_, _ = waiter.Wait(st.ctx, ep.tx, waiter.EventErr|waiter.EventHup)
}
