package netstack

import (
	"net"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

// Socket option levels, numbered as on Linux.
const (
	SolSocket   = 1
	IPProtoIP   = 0
	IPProtoTCP  = 6
	IPProtoIPv6 = 41
)

// Socket options, numbered as on Linux. Values are integers: booleans are
// 0 or 1; SoRcvTimeo and SoSndTimeo are nanoseconds (0 = none; the
// syscall layer converts a timeval); SoLinger is seconds, or -1 for off;
// SoError returns an errno number and clears it.
const (
	SoReuseAddr  = 2
	SoType       = 3
	SoError      = 4
	SoBroadcast  = 6
	SoSndBuf     = 7
	SoRcvBuf     = 8
	SoKeepAlive  = 9
	SoLinger     = 13
	SoReusePort  = 15
	SoRcvTimeo   = 20
	SoSndTimeo   = 21
	SoAcceptConn = 30
	SoProtocol   = 38
	SoDomain     = 39

	TCPNoDelay   = 1
	TCPKeepIdle  = 4
	TCPKeepIntvl = 5
	TCPKeepCnt   = 6

	IPTOS = 1
	IPTTL = 2

	IPv6V6Only = 26
	IPv6TClass = 67
)

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// SetOption sets a socket option (setsockopt). The common options are
// kept and reported back; SoReuseAddr changes nothing (the VM has no
// TIME_WAIT), SoReusePort set before Bind lets TCP sockets that all set it
// share a port (connections are dealt to its listeners in turn), buffer sizes are fixed by Limits.BufferBytes,
// SoKeepAlive and TCPNoDelay reach a host connection. Errors: ENOPROTOOPT
// for unknown options, EINVAL for bad values.
func (s *Socket) SetOption(level, name int, v int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &s.opts
	on := v != 0
	switch level {
	case SolSocket:
		switch name {
		case SoReuseAddr:
			o.reuseAddr = on
		case SoReusePort:
			o.reusePort = on
		case SoKeepAlive:
			o.keepAlive = on
			if tc := s.hostTCP(); tc != nil {
				_ = tc.SetKeepAlive(on)
			}
		case SoBroadcast:
			o.broadcast = on
		case SoSndBuf, SoRcvBuf:
			if v < 0 {
				return errno.EINVAL
			}
		case SoRcvTimeo, SoSndTimeo:
			if v < 0 {
				return errno.EINVAL
			}
			if name == SoRcvTimeo {
				o.rcvTimeo = time.Duration(v)
			} else {
				o.sndTimeo = time.Duration(v)
			}
		case SoLinger:
			o.linger = max(v, -1)
		default:
			return errno.ENOPROTOOPT
		}
	case IPProtoTCP:
		if s.typ != SockStream || s.family == AFUnix {
			return errno.ENOPROTOOPT
		}
		switch name {
		case TCPNoDelay:
			o.noDelay = on
			if tc := s.hostTCP(); tc != nil {
				_ = tc.SetNoDelay(on)
			}
		case TCPKeepIdle, TCPKeepIntvl, TCPKeepCnt:
			if v < 1 {
				return errno.EINVAL
			}
			switch name {
			case TCPKeepIdle:
				o.keepIdle = v
			case TCPKeepIntvl:
				o.keepIntvl = v
			default:
				o.keepCnt = v
			}
		default:
			return errno.ENOPROTOOPT
		}
	case IPProtoIP:
		if s.family == AFUnix {
			return errno.ENOPROTOOPT
		}
		switch name {
		case IPTOS:
			o.tos = v & 0xff
		case IPTTL:
			if v < -1 || v > 255 || v == 0 {
				return errno.EINVAL
			}
			o.ttl = v
		default:
			return errno.ENOPROTOOPT
		}
	case IPProtoIPv6:
		if s.family != AFInet6 {
			return errno.ENOPROTOOPT
		}
		switch name {
		case IPv6V6Only:
			o.v6only = on
		case IPv6TClass:
			o.tclass = v & 0xff
		default:
			return errno.ENOPROTOOPT
		}
	default:
		return errno.ENOPROTOOPT
	}
	return nil
}

// hostTCP returns the host TCP connection behind the socket, if any.
// s.mu is held.
func (s *Socket) hostTCP() *net.TCPConn {
	if s.host == nil {
		return nil
	}
	tc, _ := s.host.c.(*net.TCPConn)
	return tc
}

// Option reads a socket option (getsockopt); see SetOption.
func (s *Socket) Option(level, name int) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &s.opts
	switch level {
	case SolSocket:
		switch name {
		case SoReuseAddr:
			return b2i(o.reuseAddr), nil
		case SoReusePort:
			return b2i(o.reusePort), nil
		case SoKeepAlive:
			return b2i(o.keepAlive), nil
		case SoBroadcast:
			return b2i(o.broadcast), nil
		case SoSndBuf, SoRcvBuf:
			return int64(s.st.lim.BufferBytes), nil
		case SoRcvTimeo:
			return int64(o.rcvTimeo), nil
		case SoSndTimeo:
			return int64(o.sndTimeo), nil
		case SoLinger:
			return o.linger, nil
		case SoType:
			return int64(s.typ), nil
		case SoProtocol:
			return int64(s.proto), nil
		case SoDomain:
			return int64(s.family), nil
		case SoAcceptConn:
			return b2i(s.state == stListening), nil
		case SoError:
			err := s.soErr
			s.soErr = nil
			return int64(errno.Of(err)), nil
		}
	case IPProtoTCP:
		if s.typ != SockStream || s.family == AFUnix {
			return 0, errno.ENOPROTOOPT
		}
		switch name {
		case TCPNoDelay:
			return b2i(o.noDelay), nil
		case TCPKeepIdle:
			return orDef(o.keepIdle, 7200), nil
		case TCPKeepIntvl:
			return orDef(o.keepIntvl, 75), nil
		case TCPKeepCnt:
			return orDef(o.keepCnt, 9), nil
		}
	case IPProtoIP:
		if s.family == AFUnix {
			return 0, errno.ENOPROTOOPT
		}
		switch name {
		case IPTOS:
			return o.tos, nil
		case IPTTL:
			if o.ttl <= 0 {
				return 64, nil
			}
			return o.ttl, nil
		}
	case IPProtoIPv6:
		if s.family != AFInet6 {
			return 0, errno.ENOPROTOOPT
		}
		switch name {
		case IPv6V6Only:
			return b2i(o.v6only), nil
		case IPv6TClass:
			return o.tclass, nil
		}
	}
	return 0, errno.ENOPROTOOPT
}

// orDef returns v, or Linux's default d when v was never set.
func orDef(v, d int64) int64 {
	if v == 0 {
		return d
	}
	return v
}
