package syscalls

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/vfs"
)

// The host_net module (agentOS ABI §11) and the socket functions of WASI
// preview 1, over the kernel's sockets (kernel/netstack). Routing, name
// resolution, policy and every socket rule are the kernel's: these
// functions only decode the ABI's numbers and texts and encode results.

// Domains of net_socket, in the agentOS wasi-libc numbering.
const (
	netDomainInet  = 1
	netDomainInet6 = 2
	netDomainUnix  = 3
)

// Socket types and type flags of net_socket: the low four bits are the
// WASI filetype (or the POSIX number); the flags are wasi-libc's.
const (
	netTypeMask     = 0xF
	netTypeDgram    = 5 // WASI SOCKET_DGRAM
	netTypeStream   = 6 // WASI SOCKET_STREAM
	posixStream     = 1
	posixDgram      = 2
	netSockNonblock = 0x4000
	// netSockCloexec is wasi-libc's SOCK_CLOEXEC. The ABI does not list
	// it, but a libc that has the constant may pass it; it is honoured
	// rather than refused.
	netSockCloexec = 0x2000
)

// WASI filetype of a datagram socket (stream sockets use
// filetypeSocketStream).
const filetypeSocketDgram = 5

// Levels and options net_setsockopt knows (agentOS ABI §11.2). SOL_SOCKET
// arrives as Linux's 1 or wasi-libc's 0x7FFFFFFF, SO_RCVTIMEO as Linux's
// 20 or wasi-libc's (preview 2) 66.
const (
	optSolSocket     = 1
	optSolSocketWasi = 0x7FFFFFFF
	optIPProtoIP     = 0
	optIPProtoTCP    = 6
	optIPProtoIPv6   = 41
	optSoKeepAlive   = 9
	optSoRcvTimeo    = 20
	optSoRcvTimeoW   = 66
	optTCPNoDelay    = 1
	optIPTOS         = 1
	optIPv6TClass    = 67
	// timevalSize is the {i64 sec, i64 usec} of SO_RCVTIMEO.
	timevalSize = 16
	// maxOptLen is the longest value an accepted option may carry.
	maxOptLen = 16
)

// maxAddrText bounds net_connect's address text. The longest address
// the ABI can spell ("unix-path-hex:" and 107 bytes in hex) is under 250
// bytes; the bound leaves room for NUL padding without letting a guest
// make the host copy and scan its whole memory.
const maxAddrText = 4096

// The message flags net_send and net_recv pass on, numbered as on Linux
// (which is the ABI's numbering, §11.1, and netstack's). MSG_NOSIGNAL is
// Linux's too: a guest that asks not to be killed by SIGPIPE is not.
const (
	netSendFlags = netstack.MsgDontWait | netstack.MsgNoSignal
	netRecvFlags = netstack.MsgPeek | netstack.MsgTrunc | netstack.MsgDontWait | netstack.MsgWaitAll
)

// WASI preview 1 socket flags.
const (
	riRecvPeek        = 1
	riRecvWaitAll     = 2
	roRecvTruncated   = 1
	sdShutRD          = 1
	sdShutWR          = 2
	sdShutRDWR        = sdShutRD | sdShutWR
	wasiAcceptFlagsOK = fdflagNonblock
)

func netFuncs() []hostFunc {
	return []hostFunc{
		{"net_socket", sig(4), errnoResult, sysFunc(netSocket)},
		{"net_connect", sig(3), errnoResult, sysFunc(netConnect)},
		{"net_tls_connect", sig(3), errnoResult, sysFunc(netTLSConnect)},
		{"net_send", sig(5), errnoResult, sysFunc(netSend)},
		{"net_recv", sig(5), errnoResult, sysFunc(netRecv)},
		{"net_close", sig(1), errnoResult, sysFunc(netClose)},
		{"net_setsockopt", sig(5), errnoResult, sysFunc(netSetsockopt)},
	}
}

// sockFD converts a socket descriptor argument. Tagged preopen aliases
// name directories, never sockets, and numbers beyond int32 name nothing:
// both become a descriptor no table has (EBADF).
func sockFD(fd uint32) int {
	if isTagged(fd) {
		return -1
	}
	return kfd(fd)
}

// netErr maps a kernel error for host_net, where a descriptor that is not
// a socket is BADF rather than NOTSOCK: on BADF the guest's std retries
// with fd_read and fd_write (agentOS ABI §5.4, §11.1).
func (s *State) netErr(err error) Errno {
	e := s.errOf(err)
	if e == ENOTSOCK {
		return EBADF
	}
	return e
}

// netSocket is net_socket(domain, type, protocol, ret_fd_ptr).
func netSocket(_ context.Context, s *State, m mem, st []uint64) Errno {
	domain, typ, proto, retp := uint32(st[0]), uint32(st[1]), int32(st[2]), uint32(st[3])
	if !m.valid(retp, 4) {
		return EFAULT
	}
	var fam netstack.Family
	switch domain {
	case netDomainInet:
		fam = netstack.AFInet
	case netDomainInet6:
		fam = netstack.AFInet6
	case netDomainUnix:
		fam = netstack.AFUnix
	default:
		return EAFNOSUPPORT
	}
	// The type numbers must be decoded here: WASI's 5 (DGRAM) is Linux's
	// SOCK_SEQPACKET, so nothing can be passed through unread.
	var t netstack.Type
	switch typ & netTypeMask {
	case netTypeStream, posixStream:
		t = netstack.SockStream
	case netTypeDgram, posixDgram:
		t = netstack.SockDgram
	default:
		return EINVAL
	}
	if typ&^(netTypeMask|netSockNonblock|netSockCloexec) != 0 {
		return EINVAL
	}
	var fl vfs.OpenFlags
	if typ&netSockNonblock != 0 {
		fl |= vfs.O_NONBLOCK
	}
	if typ&netSockCloexec != 0 {
		fl |= vfs.O_CLOEXEC
	}
	fd, err := s.P.Socket(fam, t, int(proto), fl)
	if err != nil {
		e := ErrnoOf(err)
		if e == EPROTONOSUPPORT && fam == netstack.AFUnix && t == netstack.SockDgram {
			// The ABI's answer for the datagram Unix sockets the kernel
			// does not have.
			e = ENOTSUP
		}
		return e
	}
	m.putU32(retp, uint32(fd))
	return ESUCCESS
}

// netConnect is net_connect(fd, addr_ptr, addr_len): the address is text
// (netstack.ParseAddr), and a host name goes to the kernel unresolved so
// that the policy sees the name as well as every address it resolves to.
func netConnect(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd := sockFD(uint32(st[0]))
	if !s.P.IsSocket(fd) {
		return EBADF
	}
	text, ok := m.bytes(uint32(st[1]), uint32(st[2]))
	if !ok {
		return EFAULT
	}
	if len(text) > maxAddrText {
		return EINVAL
	}
	a, err := netstack.ParseAddr(string(text))
	if err != nil {
		if badPort(string(text)) {
			return EFAULT // the ABI's errno for a bad port (§11.2)
		}
		return EINVAL
	}
	return s.errOf(s.P.Connect(ctx, fd, a))
}

// badPort reports whether an internet address text, cut at its first NUL
// as ParseAddr cuts it, lacks a decimal port of at most 65535 after its
// last colon.
func badPort(text string) bool {
	if i := strings.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	if strings.HasPrefix(text, "unix:") || strings.HasPrefix(text, "unix-abstract:") || strings.HasPrefix(text, "unix-path-hex:") {
		return false
	}
	i := strings.LastIndexByte(text, ':')
	if i < 0 {
		return true
	}
	port := text[i+1:]
	if port == "" || len(port) > 5 {
		return true
	}
	n := 0
	for _, c := range []byte(port) {
		if c < '0' || c > '9' {
			return true
		}
		n = n*10 + int(c-'0')
	}
	return n > math.MaxUint16
}

// netTLSConnect is net_tls_connect(fd, hostname_ptr, hostname_len): the
// kernel runs the TLS handshake (SNI and verification against hostname,
// the host's trust store; NODE_TLS_REJECT_UNAUTHORIZED=0 in the guest's
// environment accepts an unverified server), and the socket carries
// plaintext afterwards. An unreadable name is FAULT, a descriptor that is
// not a connected socket BADF, and a failed handshake FAULT, as the ABI
// says.
func netTLSConnect(ctx context.Context, s *State, m mem, st []uint64) Errno {
	name, ok := m.bytes(uint32(st[1]), uint32(st[2]))
	if !ok {
		return EFAULT
	}
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	fd := sockFD(uint32(st[0]))
	if _, err := s.P.Getpeername(fd); err != nil {
		return EBADF
	}
	opts := kernel.TLSOptions{ServerName: string(name), Insecure: envValue(s.Env, "NODE_TLS_REJECT_UNAUTHORIZED") == "0"}
	if _, err := s.P.StartTLS(ctx, fd, opts); err != nil {
		var te *kernel.TLSError
		if errors.As(err, &te) {
			return EFAULT
		}
		return s.netErr(err)
	}
	return ESUCCESS
}

// envValue returns the value of key in env ("KEY=value" list), or "".
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// netSend is net_send(fd, buf_ptr, buf_len, flags, ret_sent_ptr).
func netSend(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, retp := sockFD(uint32(st[0])), uint32(st[4])
	b, ok := m.bytes(uint32(st[1]), uint32(st[2]))
	if !ok || !m.valid(retp, 4) {
		return EFAULT
	}
	// A stream send may be short; a datagram over maxIO is larger than
	// any the kernel sends (EMSGSIZE) however it is cut.
	if len(b) > maxIO {
		b = b[:maxIO]
	}
	n, err := s.P.SendTo(ctx, fd, b, netstack.MsgFlags(uint32(st[3]))&netSendFlags, nil)
	if err != nil && n == 0 {
		return s.netErr(err)
	}
	m.putU32(retp, uint32(n))
	return ESUCCESS
}

// netRecv is net_recv(fd, buf_ptr, buf_len, flags, ret_received_ptr); 0
// received is an orderly end of file.
func netRecv(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, retp := sockFD(uint32(st[0])), uint32(st[4])
	b, ok := m.bytes(uint32(st[1]), uint32(st[2]))
	if !ok || !m.valid(retp, 4) {
		return EFAULT
	}
	if len(b) > maxIO {
		b = b[:maxIO]
	}
	n, _, err := s.P.RecvFrom(ctx, fd, b, netstack.MsgFlags(uint32(st[3]))&netRecvFlags)
	if err != nil && n == 0 {
		return s.netErr(err)
	}
	m.putU32(retp, uint32(n))
	return ESUCCESS
}

// netClose is net_close(fd): fd_close, for sockets only.
func netClose(_ context.Context, s *State, _ mem, st []uint64) Errno {
	fd := sockFD(uint32(st[0]))
	if !s.P.IsSocket(fd) {
		return EBADF
	}
	return ErrnoOf(s.P.Close(fd))
}

// netSetsockopt is net_setsockopt(fd, level, name, val_ptr, val_len). It
// takes exactly the options of the ABI's table (§11.2); anything else is
// INVAL, as the guests built for it expect.
func netSetsockopt(_ context.Context, s *State, m mem, st []uint64) Errno {
	fd, level, name, n := sockFD(uint32(st[0])), uint32(st[1]), uint32(st[2]), uint32(st[4])
	if !s.P.IsSocket(fd) {
		return EBADF
	}
	val, ok := m.bytes(uint32(st[3]), n)
	if !ok {
		return EFAULT
	}
	sol := level == optSolSocket || level == optSolSocketWasi
	switch {
	case sol && (name == optSoRcvTimeo || name == optSoRcvTimeoW):
		if n != timevalSize {
			return EINVAL
		}
		d, e := timevalNanos(val)
		if e != ESUCCESS {
			return e
		}
		return ErrnoOf(s.P.Setsockopt(fd, netstack.SolSocket, netstack.SoRcvTimeo, d))
	case n < 1 || n > maxOptLen:
		return EINVAL
	case sol && name == optSoKeepAlive:
		// Accepted (the ABI never fails it); the kernel applies it to a
		// host connection, and its answer changes nothing for the guest.
		_ = s.P.Setsockopt(fd, netstack.SolSocket, netstack.SoKeepAlive, boolOpt(val))
	case level == optIPProtoTCP && name == optTCPNoDelay:
		_ = s.P.Setsockopt(fd, netstack.IPProtoTCP, netstack.TCPNoDelay, boolOpt(val))
	case level == optIPProtoIP && name == optIPTOS, level == optIPProtoIPv6 && name == optIPv6TClass:
		// Accepted and ignored, as the ABI says: the VM's traffic carries
		// no marking a guest could observe.
	default:
		return EINVAL
	}
	return ESUCCESS
}

// boolOpt reads a boolean option value of any width: on if any byte is
// set.
func boolOpt(val []byte) int64 {
	for _, c := range val {
		if c != 0 {
			return 1
		}
	}
	return 0
}

// timevalNanos converts a {i64 sec, i64 usec} timeval to the kernel's
// nanoseconds: zero clears the time-out, a negative or malformed value is
// INVAL, and one too long for a Duration is clamped (it never expires
// either way).
func timevalNanos(b []byte) (int64, Errno) {
	sec := int64(binary.LittleEndian.Uint64(b[0:]))
	usec := int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || usec < 0 || usec >= 1e6 {
		return 0, EINVAL
	}
	if sec > (math.MaxInt64-usec*1e3)/1e9 {
		return math.MaxInt64, ESUCCESS
	}
	return sec*int64(time.Second) + usec*int64(time.Microsecond), ESUCCESS
}

// sockAccept is WASI's sock_accept(fd, flags, ret_fd): accept on a
// listening socket the guest inherited (WASI cannot make one).
func sockAccept(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, flags, retp := sockFD(uint32(st[0])), uint16(st[1]), uint32(st[2])
	if !m.valid(retp, 4) {
		return EFAULT
	}
	if flags&^wasiAcceptFlagsOK != 0 {
		return EINVAL
	}
	var fl vfs.OpenFlags
	if flags&fdflagNonblock != 0 {
		fl |= vfs.O_NONBLOCK
	}
	nfd, _, err := s.P.Accept(ctx, fd, fl)
	if err != nil {
		return s.errOf(err)
	}
	m.putU32(retp, uint32(nfd))
	return ESUCCESS
}

// sockRecv is WASI's sock_recv(fd, ri_data, ri_data_len, ri_flags,
// ret_ro_datalen, ret_ro_flags). One receive fills the iovecs in order; a
// datagram larger than them is cut and flagged RECV_DATA_TRUNCATED.
func sockRecv(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, riflags, lenp, flagsp := sockFD(uint32(st[0])), uint16(st[3]), uint32(st[4]), uint32(st[5])
	flagsOut, ok := m.bytes(flagsp, 2)
	if !ok || !m.valid(lenp, 4) {
		return EFAULT
	}
	bufs, e := iovecs(m, uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	if riflags&^(riRecvPeek|riRecvWaitAll) != 0 {
		return EINVAL
	}
	var fl netstack.MsgFlags
	if riflags&riRecvPeek != 0 {
		fl |= netstack.MsgPeek
	}
	if riflags&riRecvWaitAll != 0 {
		fl |= netstack.MsgWaitAll
	}
	typ, err := s.P.Getsockopt(fd, netstack.SolSocket, netstack.SoType)
	if err != nil {
		return s.errOf(err)
	}
	if netstack.Type(typ) == netstack.SockDgram {
		fl |= netstack.MsgTrunc
	}
	buf, total := gatherBuf(bufs)
	n, _, err := s.P.RecvFrom(ctx, fd, buf, fl)
	if err != nil && n == 0 {
		return s.errOf(err)
	}
	var ro uint16
	if n > total {
		n, ro = total, roRecvTruncated
	}
	if len(bufs) > 1 {
		scatter(bufs, buf[:n])
	}
	m.putU32(lenp, uint32(n))
	binary.LittleEndian.PutUint16(flagsOut, ro)
	return ESUCCESS
}

// sockSend is WASI's sock_send(fd, si_data, si_data_len, si_flags,
// ret_so_datalen): one send of the iovecs' bytes (one datagram for a
// datagram socket). WASI defines no si_flags.
func sockSend(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, retp := sockFD(uint32(st[0])), uint32(st[4])
	if !m.valid(retp, 4) {
		return EFAULT
	}
	bufs, e := iovecs(m, uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	buf, _ := gatherBuf(bufs)
	if len(bufs) > 1 {
		gather(buf, bufs)
	}
	n, err := s.P.SendTo(ctx, fd, buf, 0, nil)
	if err != nil && n == 0 {
		return s.errOf(err)
	}
	m.putU32(retp, uint32(n))
	return ESUCCESS
}

// gatherBuf returns one buffer for the iovecs: the only one itself, or
// a new one of their total size (at most maxIO, as iovecs bounds it).
func gatherBuf(bufs [][]byte) ([]byte, int) {
	switch len(bufs) {
	case 0:
		return nil, 0
	case 1:
		return bufs[0], len(bufs[0])
	}
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	return make([]byte, total), total
}

// gather copies bufs into buf in order.
func gather(buf []byte, bufs [][]byte) {
	for _, b := range bufs {
		buf = buf[copy(buf, b):]
	}
}

// scatter copies data into bufs in order.
func scatter(bufs [][]byte, data []byte) {
	for _, b := range bufs {
		if len(data) == 0 {
			return
		}
		data = data[copy(b, data):]
	}
}

// sockShutdown is WASI's sock_shutdown(fd, how).
func sockShutdown(_ context.Context, s *State, _ mem, st []uint64) Errno {
	var how int
	switch uint32(st[1]) {
	case sdShutRD:
		how = netstack.ShutRD
	case sdShutWR:
		how = netstack.ShutWR
	case sdShutRDWR:
		how = netstack.ShutRDWR
	default:
		return EINVAL
	}
	return ErrnoOf(s.P.Shutdown(sockFD(uint32(st[0])), how))
}

// socketFiletype is the WASI filetype of an open file: SOCKET_DGRAM for
// datagram sockets, which the inode type alone cannot tell from stream
// sockets; otherwise that of its inode.
func socketFiletype(f vfs.File, st *vfs.Stat) uint8 {
	if so, ok := f.(*netstack.Socket); ok && so.Type() == netstack.SockDgram {
		return filetypeSocketDgram
	}
	return filetypeOf(st.Type())
}
