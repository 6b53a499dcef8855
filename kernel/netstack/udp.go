package netstack

import (
	"context"
	"net/netip"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/waiter"
)

// deliver queues a datagram, or drops it when the queue is full (UDP
// semantics: the receive buffer bounds memory, senders are not blocked).
func (s *Socket) deliver(d datagram) {
	s.mu.Lock()
	if s.released || s.dqBytes+len(d.data) > s.st.lim.BufferBytes {
		s.mu.Unlock()
		return
	}
	s.dq = append(s.dq, d)
	s.dqBytes += len(d.data)
	s.mu.Unlock()
	s.q.Notify(waiter.EventIn)
}

func (s *Socket) recvDgram(ctx context.Context, p []byte, flags MsgFlags) (int, Addr, error) {
	nonblock := s.nonblock() || flags&MsgDontWait != 0
	s.mu.Lock()
	timeo := s.opts.rcvTimeo
	s.mu.Unlock()
	tctx, cancel := timeoutCtx(ctx, timeo)
	defer cancel()
	for {
		s.mu.Lock()
		if len(s.dq) > 0 {
			d := s.dq[0]
			if flags&MsgPeek == 0 {
				s.dq[0] = datagram{}
				s.dq = s.dq[1:]
				s.dqBytes -= len(d.data)
				if len(s.dq) == 0 {
					s.dq = nil
				}
			}
			s.mu.Unlock()
			n := copy(p, d.data)
			if flags&MsgTrunc != 0 {
				n = len(d.data)
			}
			return n, d.from, nil
		}
		s.mu.Unlock()
		if nonblock {
			return 0, Addr{}, errno.EAGAIN
		}
		if _, err := waiter.Wait(tctx, s, waiter.EventIn); err != nil {
			return 0, Addr{}, timeoErr(tctx, err)
		}
	}
}

// dgramTarget resolves the destination of a datagram to an address and
// whether it came from a name.
func (s *Socket) dgramTarget(ctx context.Context, a Addr) (netip.AddrPort, bool, error) {
	plan, err := s.planInet(a)
	if err != nil {
		return netip.AddrPort{}, false, err
	}
	addrs, err := s.st.resolvePlan(ctx, &plan)
	if err != nil {
		return netip.AddrPort{}, false, err
	}
	for _, ip := range addrs {
		if s.family == AFInet && !ip.Is4() {
			continue
		}
		return netip.AddrPortFrom(ip, plan.port), plan.viaName, nil
	}
	return netip.AddrPort{}, false, errno.ENETUNREACH
}

func (s *Socket) sendDgram(ctx context.Context, p []byte, flags MsgFlags, to *Addr) (int, error) {
	if len(p) > MaxDatagram {
		return 0, errno.EMSGSIZE
	}
	var (
		dst     netip.AddrPort
		viaName bool
		err     error
	)
	if to == nil {
		s.mu.Lock()
		connected, peer := s.state == stConnected, s.peer
		s.mu.Unlock()
		if !connected {
			return 0, errno.EDESTADDRREQ
		}
		dst = peer.IP
	} else {
		if to.Family == AFUnix {
			return 0, errno.EAFNOSUPPORT
		}
		if dst, viaName, err = s.dgramTarget(ctx, *to); err != nil {
			return 0, err
		}
	}
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return 0, errno.EBADF
	}
	err = s.autobindLocked(netip.Addr{})
	local := s.local
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	ip := dst.Addr()
	if isLocal(ip) {
		target := s.st.udpReceiver(dst.Port())
		if target != nil {
			from := local
			if from.IP.Addr().IsUnspecified() {
				from.IP = netip.AddrPortFrom(loopbackFor(ip), from.IP.Port())
			}
			target.deliver(datagram{from: from, data: append([]byte(nil), p...)})
			return len(p), nil
		}
		if ip.IsUnspecified() || s.st.checkAddr(policy.NetConnect, ip, dst.Port(), viaName) != nil {
			return len(p), nil // nobody listens: the datagram is lost
		}
	} else if err := s.st.checkAddr(policy.NetConnect, ip, dst.Port(), viaName); err != nil {
		return 0, err
	}
	h, err := s.udpHostFor(ctx, dst, viaName)
	if err != nil {
		return 0, err
	}
	n, err := h.c.Write(p)
	if err != nil {
		return 0, hostErr(ctx, err)
	}
	return n, nil
}

// connectDgram sets the default destination of a datagram socket.
func (s *Socket) connectDgram(ctx context.Context, a Addr) error {
	if a.Family == AFUnix {
		return errno.EAFNOSUPPORT
	}
	dst, viaName, err := s.dgramTarget(ctx, a)
	if err != nil {
		return err
	}
	ip := dst.Addr()
	if !isLocal(ip) {
		if err := s.st.checkAddr(policy.NetConnect, ip, dst.Port(), viaName); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.autobindLocked(netip.Addr{}); err != nil {
		return err
	}
	s.state, s.peer = stConnected, InetAddr(dst)
	return nil
}
