//go:build wasip1

package netconn

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

//go:wasmimport host_net net_socket
func netSocket(domain, typ, proto, retFD uint32) uint32

//go:wasmimport host_net net_connect
func netConnect(fd, addr, n uint32) uint32

//go:wasmimport host_net net_tls_connect
func netTLSConnect(fd, host, n uint32) uint32

//go:wasmimport host_net net_close
func netClose(fd uint32) uint32

//go:wasmimport wasi_snapshot_preview1 poll_oneoff
func pollOneoff(in, out, n, nevents uint32) uint32

// Numbers of the agentOS ABI (§11) and WASI preview 1.
const (
	afInet     = 1
	afInet6    = 2
	sockStream = 6
	sockNonblk = 0x4000

	eAgain      = 6
	eAlready    = 7
	eFault      = 21
	eInProgress = 26
	eIsConn     = 30

	tagClock   = 0
	tagFDWrite = 2
)

func ptr[T any](p *T) uint32 { return uint32(uintptr(unsafe.Pointer(p))) }

func bytesPtr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

// socket makes a stream socket for host (AF_INET6 for an IPv6 literal).
func socket(host string, nonblock bool) (uint32, error) {
	domain := uint32(afInet)
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() && !ip.Is4In6() {
		domain = afInet6
	}
	typ := uint32(sockStream)
	if nonblock {
		typ |= sockNonblk
	}
	var fd uint32
	if e := netSocket(domain, typ, 0, ptr(&fd)); e != 0 {
		return 0, syscall.Errno(e)
	}
	return fd, nil
}

func connect(fd uint32, addr []byte) uint32 {
	e := netConnect(fd, bytesPtr(addr), uint32(len(addr)))
	runtime.KeepAlive(addr)
	return e
}

// writable reports whether fd is writable (a connect completed, either
// way) within d. The whole program waits in poll_oneoff, so d is kept
// short and the caller sleeps between polls: that lets the runtime run
// timers and other goroutines (a request's deadline among them).
func writable(fd uint32, d time.Duration) bool {
	var sub [96]byte
	var ev [64]byte
	binary.LittleEndian.PutUint64(sub[0:], 1)
	sub[8] = tagFDWrite
	binary.LittleEndian.PutUint32(sub[16:], fd)
	binary.LittleEndian.PutUint64(sub[48:], 2)
	sub[56] = tagClock
	binary.LittleEndian.PutUint32(sub[64:], 1) // monotonic
	binary.LittleEndian.PutUint64(sub[72:], uint64(max(d, 0)))
	var n uint32
	if e := pollOneoff(ptr(&sub), ptr(&ev), 2, ptr(&n)); e != 0 {
		return false
	}
	for i := uint32(0); i < n && i < 2; i++ {
		if binary.LittleEndian.Uint64(ev[i*32:]) == 1 {
			return true
		}
	}
	return false
}

// waitConnect waits until fd's connect completes or ctx ends.
func waitConnect(ctx context.Context, fd uint32) bool {
	pause := time.Millisecond
	for {
		if writable(fd, pause) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// slowFailure is how long a failed connect may have taken and still be
// repeated to learn its cause: a quick failure (refused, denied) repeats
// quickly, a slow one would hold the program as long again.
const slowFailure = time.Second

// Dial connects to host:port through the host's network. A non-blocking
// connect lets ctx's deadline bound the wait; the host reports why a
// non-blocking connect failed only through SO_ERROR, which host_net has
// no way to read, so a failure is repeated once, blocking, to learn its
// cause (a refusal or a policy denial is immediate).
func Dial(ctx context.Context, host, port string, o Options) (net.Conn, error) {
	addr := []byte(net.JoinHostPort(host, port))
	fd, err := socket(host, true)
	if err != nil {
		return nil, &Error{Stage: Connect, Err: err}
	}
	start := time.Now()
	e := connect(fd, addr)
	if e == eInProgress || e == eAlready {
		if !waitConnect(ctx, fd) {
			netClose(fd)
			return nil, &Error{Stage: Timeout, Err: context.DeadlineExceeded}
		}
		e = connect(fd, addr)
		switch {
		case e == eIsConn:
			e = 0
		case time.Since(start) > slowFailure:
			netClose(fd)
			return nil, &Error{Stage: Connect, Err: errors.New("the connection could not be made")}
		default:
			netClose(fd)
			if fd, err = socket(host, false); err != nil {
				return nil, &Error{Stage: Connect, Err: err}
			}
			e = connect(fd, addr)
			if e == 0 {
				// Connected this time: back to non-blocking for the
				// runtime's poller.
				if err := syscall.SetNonblock(int(fd), true); err != nil {
					netClose(fd)
					return nil, &Error{Stage: Connect, Err: err}
				}
			}
		}
	}
	if e != 0 {
		netClose(fd)
		return nil, classify(syscall.Errno(e))
	}
	if o.TLS {
		name := []byte(o.ServerName)
		e := netTLSConnect(fd, bytesPtr(name), uint32(len(name)))
		runtime.KeepAlive(name)
		if e != 0 {
			netClose(fd)
			if e == eFault {
				// The host reports every failed handshake as FAULT;
				// against a server that completes TCP, a certificate the
				// host does not trust is by far the likeliest cause.
				return nil, &Error{Stage: Verify, Err: syscall.Errno(e)}
			}
			return nil, &Error{Stage: TLS, Err: syscall.Errno(e)}
		}
	}
	// A non-blocking descriptor becomes a pollable *os.File, and
	// FileConn puts it on the runtime's poller: reads wait without
	// stopping the program's other goroutines, and deadlines work.
	f := os.NewFile(uintptr(fd), net.JoinHostPort(host, port))
	c, err := net.FileConn(f)
	f.Close() // FileConn holds its own reference
	if err != nil {
		return nil, &Error{Stage: Connect, Err: err}
	}
	return c, nil
}
