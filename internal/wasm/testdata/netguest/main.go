// Command netguest drives the agentOS host_net functions and WASI's socket
// functions directly, the way the ABI's guests call them, and prints one
// "name=result" line per step for the test to compare. Its first argument
// picks a scenario:
//
//	client ADDR MSG     stream connect, send MSG and a newline, read the reply to EOF
//	server N            accept N connections on the inherited listener fd 3,
//	                    answer each line upper-cased
//	udp ADDR MSG        datagram connect, send MSG, receive one reply
//	nonblock ADDR MSG   non-blocking connect, poll_oneoff for the outcome, then as client
//	timeout ADDR        SO_RCVTIMEO and the other socket options on a silent peer
//	block ADDR          connect and wait in net_recv for ever
//	connect ADDR...     print each address's connect errno
//	hostile             hostile arguments to every function
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

//go:wasmimport host_net net_socket
func netSocket(domain, typ, proto, retFD uint32) uint32

//go:wasmimport host_net net_connect
func netConnect(fd, addr, n uint32) uint32

//go:wasmimport host_net net_tls_connect
func netTLSConnect(fd, host, n uint32) uint32

//go:wasmimport host_net net_send
func netSend(fd, buf, n, flags, ret uint32) uint32

//go:wasmimport host_net net_recv
func netRecv(fd, buf, n, flags, ret uint32) uint32

//go:wasmimport host_net net_close
func netClose(fd uint32) uint32

//go:wasmimport host_net net_setsockopt
func netSetsockopt(fd, level, name, val, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_accept
func sockAccept(fd, flags, ret uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_recv
func sockRecv(fd, iovs, n, flags, retLen, retFlags uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_send
func sockSend(fd, iovs, n, flags, ret uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_shutdown
func sockShutdown(fd, how uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_write
func fdWrite(fd, iovs, n, ret uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_read
func fdRead(fd, iovs, n, ret uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_close
func fdClose(fd uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_get
func fdFdstatGet(fd, out uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_filestat_get
func fdFilestatGet(fd, out uint32) uint32

//go:wasmimport wasi_snapshot_preview1 poll_oneoff
func pollOneoff(in, out, n, nevents uint32) uint32

// Values of the ABI.
const (
	afInet   = 1
	afInet6  = 2
	afUnix   = 3
	stream   = 6
	dgram    = 5
	nonblock = 0x4000

	eAgain      = 6
	eInProgress = 26

	msgPeek     = 0x2
	msgDontWait = 0x40
	msgWaitAll  = 0x100

	bad = uint32(0xFFFFFFF0) // past the end of any memory this program has
)

// Buffers handed to the host live in globals: Go's wasm heap does not
// move, and globals keep them alive across the calls.
var (
	retBuf  [8]byte
	ret2Buf [8]byte
	ioBuf   [64 << 10]byte
	textBuf [8 << 10]byte
	statBuf [64]byte
	iovBuf  [32]byte
	subBuf  [96]byte
	evBuf   [64]byte
)

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(&b[0]))) }

func ret() uint32 { return addr(retBuf[:]) }

func retU32() uint32 { return binary.LittleEndian.Uint32(retBuf[:]) }

// text places s in guest memory.
func text(s string) (uint32, uint32) {
	n := copy(textBuf[:], s)
	return addr(textBuf[:]), uint32(n)
}

func out(name string, v any) { fmt.Printf("%s=%v\n", name, v) }

func fail(format string, args ...any) {
	fmt.Printf("fail="+format+"\n", args...)
	os.Exit(1)
}

func socket(domain, typ uint32) uint32 {
	if e := netSocket(domain, typ, 0, ret()); e != 0 {
		fail("net_socket(%d, %#x): %d", domain, typ, e)
	}
	return retU32()
}

func connect(fd uint32, a string) uint32 {
	p, n := text(a)
	return netConnect(fd, p, n)
}

func filetype(fd uint32) uint8 {
	if e := fdFdstatGet(fd, addr(statBuf[:])); e != 0 {
		fail("fdstat %d: %d", fd, e)
	}
	return statBuf[0]
}

func fdflags(fd uint32) uint16 {
	fdFdstatGet(fd, addr(statBuf[:]))
	return binary.LittleEndian.Uint16(statBuf[2:])
}

func send(fd uint32, b []byte, flags uint32) (uint32, uint32) {
	copy(ioBuf[:], b)
	e := netSend(fd, addr(ioBuf[:]), uint32(len(b)), flags, ret())
	return retU32(), e
}

func recv(fd uint32, n int, flags uint32) ([]byte, uint32) {
	e := netRecv(fd, addr(ioBuf[:]), uint32(n), flags, ret())
	if e != 0 {
		return nil, e
	}
	return append([]byte(nil), ioBuf[:retU32()]...), 0
}

// iov points the single iovec at b.
func iov(b []byte) uint32 {
	binary.LittleEndian.PutUint32(iovBuf[0:], addr(b))
	binary.LittleEndian.PutUint32(iovBuf[4:], uint32(len(b)))
	return addr(iovBuf[:])
}

// fdWriteAll writes b with fd_write.
func fdWriteAll(fd uint32, b []byte) uint32 {
	for len(b) > 0 {
		copy(ioBuf[:], b)
		if e := fdWrite(fd, iov(ioBuf[:len(b)]), 1, ret()); e != 0 {
			return e
		}
		b = b[retU32():]
	}
	return 0
}

// readAll reads to end of file, alternating fd_read and net_recv so that
// both paths carry the stream.
func readAll(fd uint32) ([]byte, uint32) {
	var got []byte
	for i := 0; ; i++ {
		var e, n uint32
		if i%2 == 0 {
			e = fdRead(fd, iov(ioBuf[:3]), 1, ret())
		} else {
			e = netRecv(fd, addr(ioBuf[:]), 3, 0, ret())
		}
		n = retU32()
		if e != 0 {
			return got, e
		}
		if n == 0 {
			return got, 0
		}
		got = append(got, ioBuf[:n]...)
	}
}

// poll waits for one fd event (tag 1 read, 2 write) or the time-out and
// returns the type of the first event and its error.
func poll(fd uint32, tag uint8, timeout time.Duration) (uint8, uint16) {
	clear(subBuf[:])
	binary.LittleEndian.PutUint64(subBuf[0:], 1)
	subBuf[8] = tag
	binary.LittleEndian.PutUint32(subBuf[16:], fd)
	binary.LittleEndian.PutUint64(subBuf[48:], 2)
	subBuf[56] = 0 // clock
	binary.LittleEndian.PutUint32(subBuf[64:], 1)
	binary.LittleEndian.PutUint64(subBuf[72:], uint64(timeout))
	if e := pollOneoff(addr(subBuf[:]), addr(evBuf[:]), 2, ret()); e != 0 {
		fail("poll_oneoff: %d", e)
	}
	return evBuf[10], binary.LittleEndian.Uint16(evBuf[8:])
}

func main() {
	if len(os.Args) < 2 {
		fail("no scenario")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "client":
		client(args[0], args[1])
	case "server":
		n, _ := strconv.Atoi(args[0])
		server(n)
	case "udp":
		udp(args[0], args[1])
	case "nonblock":
		nonblocking(args[0], args[1])
	case "timeout":
		timeouts(args[0])
	case "block":
		fd := socket(afInet, stream)
		out("connect", connect(fd, args[0]))
		_, e := recv(fd, 16, 0)
		out("recv", e)
	case "connect":
		for _, a := range args {
			fd := socket(afInet, stream)
			out(a, connect(fd, a))
			netClose(fd)
		}
	case "tls":
		tlsClient(args[0], args[1])
	case "hostile":
		hostile()
	default:
		fail("unknown scenario %q", os.Args[1])
	}
}

func client(a, msg string) {
	fd := socket(afInet, stream)
	out("filetype", filetype(fd))
	out("connect", connect(fd, a))
	out("connect_again", connect(fd, a))
	// Half the line through net_send, the rest through fd_write.
	line := []byte(msg + "\n")
	n, e := send(fd, line[:len(line)/2], 0)
	out("send", fmt.Sprint(e, " ", n))
	out("write", fdWriteAll(fd, line[len(line)/2:]))
	// The first two bytes with MSG_WAITALL, the rest to end of file.
	reply, e := recv(fd, 2, msgWaitAll)
	if e != 0 {
		fail("net_recv waitall: %d", e)
	}
	rest, e := readAll(fd)
	out("reply", fmt.Sprintf("%q %d", append(reply, rest...), e))
	out("close", netClose(fd))
	out("close_again", netClose(fd))
}

func server(n int) {
	out("listener_filetype", filetype(3))
	out("connect_listener", connect(3, "127.0.0.1:1"))
	for i := 0; i < n; i++ {
		if e := sockAccept(3, 0, ret()); e != 0 {
			fail("sock_accept: %d", e)
		}
		fd := retU32()
		var line []byte
		for !bytes.HasSuffix(line, []byte("\n")) {
			// sock_recv with a peek first: the bytes stay for the read.
			if e := sockRecv(fd, iov(ioBuf[:64]), 1, 1, ret(), addr(ret2Buf[:])); e != 0 {
				fail("sock_recv peek: %d", e)
			}
			if retU32() == 0 {
				break
			}
			b, e := recv(fd, int(retU32()), 0)
			if e != 0 {
				fail("net_recv: %d", e)
			}
			line = append(line, b...)
		}
		out("server_got", strconv.Quote(string(line)))
		reply := bytes.ToUpper(line)
		copy(ioBuf[:], reply)
		if e := sockSend(fd, iov(ioBuf[:len(reply)]), 1, 0, ret()); e != 0 || int(retU32()) != len(reply) {
			fail("sock_send: %d", e)
		}
		out("server_shutdown", sockShutdown(fd, 2))
		out("server_close", fdClose(fd))
	}
}

func udp(a, msg string) {
	fd := socket(afInet, dgram)
	out("filetype", filetype(fd))
	fdFilestatGet(fd, addr(statBuf[:]))
	out("filestat_type", statBuf[16])
	out("connect", connect(fd, a))
	n, e := send(fd, []byte(msg), 0)
	out("send", fmt.Sprint(e, " ", n))
	// Peek, then a short read that the datagram does not fit in.
	b, e := recv(fd, 64, msgPeek)
	out("peek", fmt.Sprintf("%q %d", b, e))
	if e := sockRecv(fd, iov(ioBuf[:2]), 1, 0, ret(), addr(ret2Buf[:])); e != 0 {
		fail("sock_recv: %d", e)
	}
	out("sock_recv", fmt.Sprintf("%q truncated=%d", ioBuf[:retU32()], binary.LittleEndian.Uint16(ret2Buf[:])))
	_, e = recv(fd, 64, msgDontWait)
	out("recv_empty", e)
	out("close", fdClose(fd))
}

func nonblocking(a, msg string) {
	fd := socket(afInet, stream|nonblock)
	out("nonblock_flag", fdflags(fd)&4)
	e := connect(fd, a)
	out("connect", e)
	if e == eInProgress {
		typ, perr := poll(fd, 2, 10*time.Second)
		out("poll", fmt.Sprint(typ, " ", perr))
		out("connect_again", connect(fd, a))
	}
	_, e = recv(fd, 16, 0)
	out("recv_early", e)
	n, e := send(fd, []byte(msg+"\n"), 0)
	out("send", fmt.Sprint(e, " ", n))
	var got []byte
	for !bytes.HasSuffix(got, []byte("\n")) {
		typ, _ := poll(fd, 1, 10*time.Second)
		if typ != 1 {
			fail("poll for reply: event %d", typ)
		}
		b, e := recv(fd, 64, 0)
		if e == eAgain {
			continue
		}
		if e != 0 || len(b) == 0 {
			fail("recv: %d after %q", e, got)
		}
		got = append(got, b...)
	}
	out("reply", strconv.Quote(string(got)))
	out("close", netClose(fd))
}

func timeval(sec, usec int64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(sec))
	binary.LittleEndian.PutUint64(b[8:], uint64(usec))
	return b
}

func setopt(fd, level, name uint32, val []byte) uint32 {
	p, n := text(string(val))
	return netSetsockopt(fd, level, name, p, n)
}

func timeouts(a string) {
	fd := socket(afInet, stream)
	out("tls_unconnected", netTLSConnect(fd, addr(textBuf[:]), 4))
	out("connect", connect(fd, a))
	one := []byte{1, 0, 0, 0}
	out("keepalive", setopt(fd, 0x7FFFFFFF, 9, one))
	out("keepalive_linux", setopt(fd, 1, 9, one))
	out("nodelay", setopt(fd, 6, 1, one))
	out("tos", setopt(fd, 0, 1, one))
	out("tclass", setopt(fd, 41, 67, one))
	out("opt_empty", setopt(fd, 6, 1, nil))
	out("opt_long", setopt(fd, 6, 1, make([]byte, 17)))
	out("opt_unknown", setopt(fd, 1, 2, one))
	out("opt_sndtimeo", setopt(fd, 1, 21, timeval(1, 0)))
	out("rcvtimeo_short", setopt(fd, 1, 20, timeval(1, 0)[:8]))
	out("rcvtimeo_bad_usec", setopt(fd, 1, 20, timeval(0, 1000000)))
	out("rcvtimeo_negative", setopt(fd, 1, 20, timeval(-1, 0)))
	out("rcvtimeo_bad_ptr", netSetsockopt(fd, 1, 20, bad, 16))
	out("rcvtimeo", setopt(fd, 0x7FFFFFFF, 66, timeval(0, 200000)))
	start := time.Now()
	_, e := recv(fd, 16, 0)
	out("recv", e)
	out("waited", time.Since(start) >= 150*time.Millisecond)
	// fd_read sees the same time-out.
	e = fdRead(fd, iov(ioBuf[:16]), 1, ret())
	out("read", e)
	out("rcvtimeo_clear", setopt(fd, 1, 20, timeval(0, 0)))
	_, e = recv(fd, 16, msgDontWait)
	out("recv_dontwait", e)
	p, n := text("example.com")
	out("tls", netTLSConnect(fd, p, n))
	out("close", fdClose(fd))
}

func hostile() {
	p, n := text("127.0.0.1:1")
	out("socket_bad_ret", netSocket(afInet, stream, 0, bad))
	out("socket_bad_domain", netSocket(9, stream, 0, ret()))
	out("socket_bad_type", netSocket(afInet, 7, 0, ret()))
	out("socket_bad_flags", netSocket(afInet, stream|0x100000, 0, ret()))
	out("socket_bad_proto", netSocket(afInet, stream, 17, ret()))
	out("socket_unix_dgram", netSocket(afUnix, dgram, 0, ret()))
	out("socket_unix_stream", netSocket(afUnix, stream, 0, ret()))
	ufd := retU32()
	out("unix_filetype", filetype(ufd))
	out("connect_unix_missing", connect(ufd, "unix:/tmp/nobody.sock"))
	out("socket_posix_stream", netSocket(afInet6, 1, 0, ret()))
	out("posix_filetype", filetype(retU32()))

	fd := socket(afInet, stream)
	out("connect_fd_neg", netConnect(0xFFFFFFFF, p, n))
	out("connect_fd_huge", netConnect(1<<30, p, n))
	out("connect_fd_big", netConnect(1<<20, p, n))
	out("connect_not_socket", netConnect(1, p, n))
	out("connect_bad_ptr", netConnect(fd, bad, 16))
	out("connect_len_2g", netConnect(fd, p, 1<<31))
	out("connect_too_long", connect(fd, strings.Repeat("a", 5000)+":80"))
	out("connect_bad_host", connect(fd, "exa mple.com:80"))
	out("connect_v6_unbracketed", connect(fd, "::1:80"))
	out("connect_bad_port", connect(fd, "127.0.0.1:99999"))
	out("connect_named_port", connect(fd, "127.0.0.1:http"))
	out("connect_no_port", connect(fd, "localhost"))
	out("connect_nul_inside", connect(fd, "127.0\x00.0.1:80"))
	out("connect_bad_hex", connect(ufd, "unix-abstract:zz"))
	// NUL padding after a good address is cut off: this reaches the
	// VM's loopback port 1, where nothing listens.
	out("connect_nul_padded", connect(fd, "127.0.0.1:1\x00\x00\x00\x00"))

	out("send_fd_neg", netSend(0xFFFFFFFF, addr(ioBuf[:]), 1, 0, ret()))
	out("send_not_socket", netSend(1, addr(ioBuf[:]), 1, 0, ret()))
	out("recv_not_socket", netRecv(0, addr(ioBuf[:]), 1, 0, ret()))
	out("recv_tagged", netRecv(0x40000003, addr(ioBuf[:]), 1, 0, ret()))
	out("send_bad_buf", netSend(fd, bad, 16, 0, ret()))
	out("send_len_2g", netSend(fd, addr(ioBuf[:]), 1<<31, 0, ret()))
	out("send_bad_ret", netSend(fd, addr(ioBuf[:]), 1, 0, bad))
	out("recv_bad_buf", netRecv(fd, bad, 16, 0, ret()))
	out("recv_bad_ret", netRecv(fd, addr(ioBuf[:]), 1, 0, bad))
	out("recv_unconnected", netRecv(fd, addr(ioBuf[:]), 1, 0, ret()))
	out("close_not_socket", netClose(1))
	out("close_neg", netClose(0xFFFFFFFF))
	out("setsockopt_bad_fd", netSetsockopt(0xFFFFFFFF, 1, 9, addr(ioBuf[:]), 4))
	out("setsockopt_not_socket", netSetsockopt(1, 1, 9, addr(ioBuf[:]), 4))
	out("setsockopt_bad_val", netSetsockopt(fd, 1, 9, bad, 4))
	out("tls_bad_fd", netTLSConnect(0xFFFFFFFF, p, n))
	out("tls_bad_ptr", netTLSConnect(fd, bad, 16))
	out("accept_not_listening", sockAccept(fd, 0, ret()))
	out("accept_bad_flags", sockAccept(fd, 0x100, ret()))
	out("accept_not_socket", sockAccept(1, 0, ret()))
	out("accept_bad_ret", sockAccept(fd, 0, bad))
	out("sock_recv_bad_iovs", sockRecv(fd, bad, 1, 0, ret(), addr(ret2Buf[:])))
	out("sock_recv_bad_flags", sockRecv(fd, iov(ioBuf[:4]), 1, 0x10, ret(), addr(ret2Buf[:])))
	out("sock_send_not_socket", sockSend(1, iov(ioBuf[:1]), 1, 0, ret()))
	out("shutdown_bad_how", sockShutdown(fd, 7))
	out("shutdown_unconnected", sockShutdown(fd, 2))

	// The instance is still usable: a new socket works, and a closed one
	// is gone.
	out("close", netClose(fd))
	out("after_close", netClose(fd))
	fd2 := socket(afInet, dgram)
	out("usable", fmt.Sprint(filetype(fd2), " ", connect(fd2, "127.0.0.1:9")))
}

// tlsClient connects to a, upgrades to TLS checking the server's name,
// sends "hi", half-closes and reads the answer to the end.
func tlsClient(a, name string) {
	fd := socket(afInet, stream)
	out("connect", connect(fd, a))
	p, n := text(name)
	e := netTLSConnect(fd, p, n)
	out("tls", e)
	if e != 0 {
		return
	}
	_, e = send(fd, []byte("hi"), 0)
	out("send", e)
	out("shutdown", sockShutdown(fd, 2)) // SHUT_WR in WASI's numbering (sdflags)
	reply, e := readAll(fd)
	out("reply", fmt.Sprintf("%q %d", reply, e))
	out("close", netClose(fd))
}
