package pysupport

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/vfs"
)

// The net device gives CPython sockets on the kernel's network. CPython
// for WASI has a _socket module, but WASI preview 1 can neither create,
// bind nor connect a socket, so the support layer replaces it with a
// pure-Python one (_secexec_socket.py) whose sockets are kernel sockets
// in the process's descriptor table. The device installs a socket there;
// Python opens it again through /proc/self/fd/N (CPython's wasi-vfs layer
// numbers descriptors itself and knows only those it opened), and reads,
// polls (select, selectors), non-blocking mode and close of that
// descriptor are WASI calls as for any file. Everything WASI lacks
// (socket, socketpair, bind, listen, accept, connect, shutdown, names,
// options, send, recvfrom, getaddrinfo, TLS, duplicating and closing the
// kernel's descriptor) is one request to this device, naming the kernel's
// descriptor.
//
// A guest opens the device read-write and then, as often as it likes,
// writes one request and reads its response. Every operation is the
// calling process's own kernel.Process socket call on its own
// descriptors, so the VM's net policy, its limits (sockets, buffers,
// descriptors) and loopback routing are exactly those of node and WASM
// guests: the device adds no power, it only decodes.
//
// Request (little-endian): op u8, fd i32, a i64, b i64, c i64, addr
// length u16, the address text (netstack.ParseAddr's form: "1.2.3.4:80",
// "[::1]:80", "name:80", "unix:/path", "unix-abstract:HEX", or
// "name|1.2.3.4:80" for an address resolved from a name: parseAddr; for
// opResolve the host name), then the payload (the data of opSendTo).
//
// Response: errno u16 (Linux numbering, 0 for success, tlsFailed for a
// failed TLS handshake), r1 i64, r2 i64,
// text length u16, payload length u32, the text (an address, or the errno's name on failure,
// since CPython on WASI numbers errnos differently), then the payload (the
// data of opRecvFrom, the addresses of opResolve, the host name).

// NetDevicePath is the net device's guest path.
const NetDevicePath = "/opt/secexec/net"

// NetDeviceNumber is the net device's Rdev.
const NetDeviceNumber = DeviceNumber | 1

// Operations of the net device.
const (
	opSocket      = 1  // a=family b=type c=proto (flags in b: SOCK_NONBLOCK) → r1=fd
	opSocketpair  = 2  // a=family b=type c=proto → r1, r2
	opBind        = 3  // fd addr
	opListen      = 4  // fd a=backlog
	opAccept      = 5  // fd a=nonblock → r1=fd, text=peer
	opConnect     = 6  // fd addr
	opShutdown    = 7  // fd a=how
	opGetsockname = 8  // fd → text
	opGetpeername = 9  // fd → text
	opSetsockopt  = 10 // fd a=level b=name c=value
	opGetsockopt  = 11 // fd a=level b=name → r1 (SO_ERROR: text=errno name)
	opSendTo      = 12 // fd a=flags addr (optional) payload → r1=sent
	opRecvFrom    = 13 // fd a=flags b=size → r1=received, text=from, payload
	opResolve     = 14 // addr=host → payload: addresses, one per line
	opHostname    = 15 // → payload
	opSetBlocking = 16 // fd a=1 blocking, 0 non-blocking
	opClose       = 17 // fd (sockets only)
	opStartTLS    = 18 // fd a=tlsFlags addr=server name payload=tlsRequest → r1=authorized, payload=tlsResponse
	opDup         = 19 // fd (sockets only) → r1=new fd
)

// Flags of opStartTLS.
const (
	tlsServer   = 1 // this side is the server
	tlsInsecure = 2 // complete the handshake even if the peer does not verify (CERT_NONE)
)

// Bounds of the net device's messages.
const (
	// netHeader is the fixed part of a request.
	netHeader = 1 + 4 + 8*3 + 2
	// maxAddrText bounds a request's address (the longest the text form
	// can spell is under 250 bytes).
	maxAddrText = 1024
	// MaxNetRequest bounds a request: a header, an address and the
	// certificates and key of a TLS handshake (the kernel takes at most
	// 1 MiB of them). A send carries at most one datagram's worth of data
	// (a stream send sends that much per request; the guest loops).
	MaxNetRequest = netHeader + maxAddrText + 1<<20 + 4096
	// netRespHeader is the fixed part of a response.
	netRespHeader = 2 + 8 + 8 + 2 + 4
	// maxRecv bounds the data one opRecvFrom returns.
	maxRecv = netstack.MaxDatagram
)

// netRequest is a decoded request.
type netRequest struct {
	op      uint8
	fd      int
	a, b, c int64
	addr    string
	data    []byte
}

// parseNetRequest decodes a request: EINVAL for a malformed one, E2BIG
// beyond the bounds. It checks the form only; the kernel checks the rest.
func parseNetRequest(msg []byte) (netRequest, error) {
	var r netRequest
	if len(msg) > MaxNetRequest {
		return r, errno.E2BIG
	}
	if len(msg) < netHeader {
		return r, errno.EINVAL
	}
	r.op = msg[0]
	r.fd = int(int32(binary.LittleEndian.Uint32(msg[1:])))
	r.a = int64(binary.LittleEndian.Uint64(msg[5:]))
	r.b = int64(binary.LittleEndian.Uint64(msg[13:]))
	r.c = int64(binary.LittleEndian.Uint64(msg[21:]))
	n := int(binary.LittleEndian.Uint16(msg[29:]))
	rest := msg[netHeader:]
	if n > maxAddrText || n > len(rest) {
		return r, errno.EINVAL
	}
	r.addr, r.data = string(rest[:n]), rest[n:]
	if strings.IndexByte(r.addr, 0) >= 0 {
		return r, errno.EINVAL
	}
	if r.op < opSocket || r.op > opDup {
		return r, errno.EINVAL
	}
	if len(r.data) > 0 && r.op != opSendTo && r.op != opStartTLS || r.op == opSendTo && len(r.data) > netstack.MaxDatagram {
		return r, errno.EINVAL
	}
	return r, nil
}

// tlsFailed is the response code of a failed TLS handshake (errno
// numbers stay far below it).
const tlsFailed = 0xFFFF

// parseAddr parses a request's address: netstack.ParseAddr's text, or
// "NAME|ADDRESS" for an address the guest got by resolving NAME (Python
// resolves before it connects, as CPython does): the kernel connects to
// that address under the name's rules if the name still resolves to it
// (see netstack.Addr).
func parseAddr(s string) (netstack.Addr, error) {
	name, rest, pinned := strings.Cut(s, "|")
	if !pinned {
		return netstack.ParseAddr(s)
	}
	a, err := netstack.ParseAddr(rest)
	if err != nil {
		return a, err
	}
	if name == "" || a.Name != "" || a.Family == netstack.AFUnix {
		return netstack.Addr{}, errno.EINVAL
	}
	a.Name = name
	return a, nil
}

// netResponse is what a request produced.
type netResponse struct {
	err    error
	r1, r2 int64
	text   string
	data   []byte
}

func (r netResponse) encode() []byte {
	text := r.text
	var code uint16
	var te *kernel.TLSError
	if errors.As(r.err, &te) {
		// A failed handshake: the guest raises ssl's errors from node's
		// code for the failure, carried as the payload.
		b, _ := json.Marshal(tlsFailure{Code: te.Code, Message: te.Error()})
		code, text, r.err, r.data = tlsFailed, "", nil, b
	}
	if r.err != nil {
		e := errno.Of(r.err)
		if e == 0 {
			e = errno.EIO
		}
		code, text = uint16(e), e.Name()
	}
	out := make([]byte, netRespHeader, netRespHeader+len(text)+len(r.data))
	binary.LittleEndian.PutUint16(out, code)
	binary.LittleEndian.PutUint64(out[2:], uint64(r.r1))
	binary.LittleEndian.PutUint64(out[10:], uint64(r.r2))
	binary.LittleEndian.PutUint16(out[18:], uint16(len(text)))
	binary.LittleEndian.PutUint32(out[20:], uint32(len(r.data)))
	out = append(out, text...)
	return append(out, r.data...)
}

// netHandle is one open of the net device: requests are collected until
// the next read, which runs them and serves the response.
type netHandle struct {
	mu   sync.Mutex
	req  bytes.Buffer
	resp []byte
	off  int
	held int64 // bytes of req and resp counted in pendingBytes
}

// MaxPendingBytes bounds the request and response bytes that all open
// net devices of the engine process hold between a guest's write and
// its read: one request may be 1 MiB (TLS material), and a guest can
// open many handles (up to its descriptor limits), so without a shared
// bound a VM could make the host hold its fd limit times 1 MiB. Past it a
// write fails with ENOBUFS.
const MaxPendingBytes = 64 << 20

var pendingBytes atomic.Int64

// hold counts n more bytes held by h (n < 0 releases), failing with
// ENOBUFS past MaxPendingBytes. h.mu is held.
func (h *netHandle) hold(n int64) error {
	if n > 0 && pendingBytes.Add(n) > MaxPendingBytes {
		pendingBytes.Add(-n)
		return errno.ENOBUFS
	} else if n <= 0 {
		pendingBytes.Add(n)
	}
	h.held += n
	return nil
}

// Stream marks the device as non-seekable.
func (h *netHandle) Stream() bool { return true }

func (h *netHandle) WriteAt(_ context.Context, p []byte, _ int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.off < len(h.resp) {
		// A response not yet read in full: a new request would lose it.
		return 0, errno.EBUSY
	}
	if h.req.Len()+len(p) > MaxNetRequest {
		_ = h.hold(-int64(h.req.Len()))
		h.req = bytes.Buffer{}
		return 0, errno.E2BIG
	}
	if err := h.hold(int64(len(p))); err != nil {
		return 0, err
	}
	h.req.Write(p)
	return len(p), nil
}

func (h *netHandle) Append(ctx context.Context, p []byte) (int, int64, error) {
	n, err := h.WriteAt(ctx, p, 0)
	return n, 0, err
}

// ReadAt runs the pending request, if any, and returns its response (in
// as many reads as the guest's buffer needs). A read with neither request
// nor response pending returns end of file.
func (h *netHandle) ReadAt(ctx context.Context, p []byte, _ int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.off >= len(h.resp) && h.req.Len() > 0 {
		proc, ok := kernel.ProcessFromContext(ctx)
		if !ok {
			return 0, errno.EPERM
		}
		req, err := parseNetRequest(h.req.Bytes())
		if err == nil {
			// The response is held until read. It is counted but never
			// refused: the request has run. (Responses are bounded: one
			// receive, or a handshake's certificates.)
			h.resp, h.off = doNet(ctx, proc, req).encode(), 0
			pendingBytes.Add(int64(len(h.resp)))
			h.held += int64(len(h.resp))
		}
		_ = h.hold(-int64(h.req.Len()))
		h.req = bytes.Buffer{}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, h.resp[h.off:])
	h.off += n
	if h.off >= len(h.resp) {
		_ = h.hold(-int64(len(h.resp)))
		h.resp, h.off = nil, 0
	}
	return n, nil
}

func (h *netHandle) Sync(context.Context) error { return nil }

// Close releases what the handle still holds.
func (h *netHandle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.hold(-h.held)
	h.req, h.resp = bytes.Buffer{}, nil
	return nil
}

// Socket type flags, as Linux numbers them.
const (
	sockNonblock = 0o4000
	sockCloexec  = 0o2000000
)

// doNet runs one request as proc.
func doNet(ctx context.Context, p *kernel.Process, r netRequest) netResponse {
	switch r.op {
	case opSocket, opSocketpair:
		if r.a < 0 || r.a > 64 || r.c < 0 || r.c > 255 || r.b&^(0xF|sockNonblock|sockCloexec) != 0 {
			return netResponse{err: errno.EINVAL}
		}
		var fl vfs.OpenFlags
		if r.b&sockNonblock != 0 {
			fl |= vfs.O_NONBLOCK
		}
		if r.b&sockCloexec != 0 {
			fl |= vfs.O_CLOEXEC
		}
		fam, typ := netstack.Family(r.a), netstack.Type(r.b&0xF)
		if r.op == opSocket {
			fd, err := p.Socket(fam, typ, int(r.c), fl)
			return netResponse{err: err, r1: int64(fd)}
		}
		a, b, err := p.Socketpair(fam, typ, int(r.c), fl)
		return netResponse{err: err, r1: int64(a), r2: int64(b)}
	case opBind, opConnect:
		a, err := parseAddr(r.addr)
		if err != nil {
			return netResponse{err: errno.EINVAL}
		}
		if r.op == opBind {
			if a.Name != "" {
				return netResponse{err: errno.EINVAL}
			}
			return netResponse{err: p.Bind(ctx, r.fd, a)}
		}
		return netResponse{err: p.Connect(ctx, r.fd, a)}
	case opListen:
		return netResponse{err: p.Listen(r.fd, int(min(max(r.a, 0), 1<<16)))}
	case opAccept:
		var fl vfs.OpenFlags
		if r.a != 0 {
			fl |= vfs.O_NONBLOCK
		}
		fd, peer, err := p.Accept(ctx, r.fd, fl)
		if err != nil {
			return netResponse{err: err}
		}
		return netResponse{r1: int64(fd), text: peer.String()}
	case opShutdown:
		if r.a < netstack.ShutRD || r.a > netstack.ShutRDWR {
			return netResponse{err: errno.EINVAL}
		}
		return netResponse{err: p.Shutdown(r.fd, int(r.a))}
	case opGetsockname:
		a, err := p.Getsockname(r.fd)
		return netResponse{err: err, text: a.String()}
	case opGetpeername:
		a, err := p.Getpeername(r.fd)
		if err != nil {
			return netResponse{err: err}
		}
		return netResponse{text: a.String()}
	case opSetsockopt:
		if r.a < 0 || r.a > 1<<16 || r.b < 0 || r.b > 1<<16 {
			return netResponse{err: errno.ENOPROTOOPT}
		}
		return netResponse{err: p.Setsockopt(r.fd, int(r.a), int(r.b), r.c)}
	case opGetsockopt:
		if r.a < 0 || r.a > 1<<16 || r.b < 0 || r.b > 1<<16 {
			return netResponse{err: errno.ENOPROTOOPT}
		}
		v, err := p.Getsockopt(r.fd, int(r.a), int(r.b))
		resp := netResponse{err: err, r1: v}
		if err == nil && r.a == netstack.SolSocket && r.b == netstack.SoError && v != 0 {
			resp.text = errno.Errno(v).Name()
		}
		return resp
	case opSendTo:
		var to *netstack.Addr
		if r.addr != "" {
			a, err := parseAddr(r.addr)
			if err != nil {
				return netResponse{err: errno.EINVAL}
			}
			to = &a
		}
		// MSG_NOSIGNAL always: CPython ignores SIGPIPE and reports EPIPE
		// as BrokenPipeError, which a guest without signal handlers could
		// not otherwise get.
		fl := netstack.MsgFlags(r.a)&(netstack.MsgDontWait) | netstack.MsgNoSignal
		n, err := p.SendTo(ctx, r.fd, r.data, fl, to)
		if err != nil && n == 0 {
			return netResponse{err: err}
		}
		return netResponse{r1: int64(n)}
	case opRecvFrom:
		if r.b < 0 {
			return netResponse{err: errno.EINVAL}
		}
		fl := netstack.MsgFlags(r.a) & (netstack.MsgPeek | netstack.MsgDontWait | netstack.MsgWaitAll | netstack.MsgTrunc)
		buf := make([]byte, min(r.b, maxRecv))
		n, from, err := p.RecvFrom(ctx, r.fd, buf, fl)
		if err != nil && n == 0 {
			return netResponse{err: err}
		}
		resp := netResponse{r1: int64(n), data: buf[:min(n, len(buf))]}
		if from.Family != 0 && (from.IP.IsValid() || from.Family == netstack.AFUnix) {
			resp.text = from.String()
		}
		return resp
	case opResolve:
		addrs, err := p.Resolve(ctx, r.addr)
		if err != nil {
			if errors.Is(err, netstack.ErrNoSuchHost) {
				return netResponse{err: errno.ENOENT}
			}
			return netResponse{err: err}
		}
		var out []byte
		for _, a := range addrs {
			out = netip.Addr.AppendTo(a, out)
			out = append(out, '\n')
		}
		return netResponse{data: out}
	case opClose, opDup:
		if !p.IsSocket(r.fd) {
			return netResponse{err: errno.ENOTSOCK}
		}
		if r.op == opDup {
			fd, err := p.Dup(r.fd, 0, false)
			return netResponse{err: err, r1: int64(fd)}
		}
		return netResponse{err: p.Close(r.fd)}
	case opStartTLS:
		return startTLS(ctx, p, r)
	case opHostname:
		return netResponse{data: []byte(p.Kernel().Hostname())}
	case opSetBlocking:
		fl, err := p.GetFlags(r.fd)
		if err != nil {
			return netResponse{err: err}
		}
		if !p.IsSocket(r.fd) {
			return netResponse{err: errno.ENOTSOCK}
		}
		if r.a != 0 {
			fl &^= vfs.O_NONBLOCK
		} else {
			fl |= vfs.O_NONBLOCK
		}
		return netResponse{err: p.SetFlags(r.fd, fl)}
	}
	return netResponse{err: errno.EINVAL}
}
