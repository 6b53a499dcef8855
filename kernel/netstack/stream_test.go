package netstack_test

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

func TestStreamLoopback(t *testing.T) {
	e := newEnv(t, allowAll())
	ctx := ctxT(t)
	c, s, l := pair(t, e.st, "8080")
	defer l.DecRef()
	if got := c.LocalAddr(); got.IP.Addr() != netip.MustParseAddr("127.0.0.1") || got.Port() < 32768 {
		t.Errorf("client local = %v", got)
	}
	if p, _ := c.PeerAddr(); p != ap("127.0.0.1:8080") {
		t.Errorf("client peer = %v", p)
	}
	if p, _ := s.PeerAddr(); p != c.LocalAddr() {
		t.Errorf("server peer = %v, want client local %v", p, c.LocalAddr())
	}
	if got := s.LocalAddr(); got != ap("127.0.0.1:8080") {
		t.Errorf("server local = %v", got)
	}
	if _, err := c.Write(ctx, []byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendTo(ctx, []byte("world"), 0, nil); err != nil {
		t.Fatal(err)
	}
	// Half-close: the server reads everything, then end of file, and can
	// still answer.
	if err := c.Shutdown(netstack.ShutWR); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s); got != "hello world" {
		t.Errorf("server read %q", got)
	}
	if _, err := c.Write(ctx, []byte("x")); errno.Of(err) != errno.EPIPE {
		t.Errorf("write after SHUT_WR: %v, want EPIPE", err)
	}
	if _, err := s.Write(ctx, []byte("bye")); err != nil {
		t.Fatal(err)
	}
	s.DecRef()
	if got := readAll(t, c); got != "bye" {
		t.Errorf("client read %q", got)
	}
	if r := c.Readiness(waiter.AllEvents); r&waiter.EventHup == 0 {
		t.Errorf("readiness after both sides closed = %v, want Hup", r)
	}
	c.DecRef()
	if n := e.st.OpenSockets(); n != 1 {
		t.Errorf("open sockets = %d, want 1 (the listener)", n)
	}
}

func TestStreamPeerCloseEPIPEAndPeek(t *testing.T) {
	e := newEnv(t, allowAll())
	ctx := ctxT(t)
	c, s, l := pair(t, e.st, "9000")
	defer l.DecRef()
	defer c.DecRef()
	if _, err := s.Write(ctx, []byte("abcdef")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if n, _, err := c.RecvFrom(ctx, buf, netstack.MsgPeek); err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("peek: %q %v", buf[:n], err)
	}
	big := make([]byte, 6)
	if n, _, err := c.RecvFrom(ctx, big, netstack.MsgWaitAll); err != nil || string(big[:n]) != "abcdef" {
		t.Fatalf("recv after peek: %q %v", big[:n], err)
	}
	s.DecRef()
	if _, err := c.Write(ctx, []byte("x")); errno.Of(err) != errno.EPIPE {
		t.Errorf("write to closed peer: %v, want EPIPE", err)
	}
	if n, err := c.Read(ctx, buf); n != 0 || err != nil {
		t.Errorf("read at EOF: %d %v", n, err)
	}
}

func TestStreamErrors(t *testing.T) {
	e := newEnv(t, allowAll())
	st := e.st
	ctx := ctxT(t)
	l := listen(t, st, "0.0.0.0:7000")
	defer l.DecRef()

	fresh := func() *netstack.Socket { return sock(t, st, netstack.AFInet, netstack.SockStream, false) }
	tests := []struct {
		name string
		do   func() error
		want errno.Errno
	}{
		{"connect no listener", func() error { s := fresh(); defer s.DecRef(); return s.Connect(ctx, ap("127.0.0.1:7001")) }, errno.ECONNREFUSED},
		{"connect unspecified reaches VM", func() error { s := fresh(); defer s.DecRef(); return s.Connect(ctx, ap("0.0.0.0:7000")) }, 0},
		{"connect 127.0.0.2 reaches VM", func() error { s := fresh(); defer s.DecRef(); return s.Connect(ctx, ap("127.0.0.2:7000")) }, 0},
		{"connect localhost by name", func() error {
			s := fresh()
			defer s.DecRef()
			return s.Connect(ctx, netstack.HostAddr("localhost", 7000))
		}, 0},
		{"bind in use", func() error { s := fresh(); defer s.DecRef(); return s.Bind(ap("127.0.0.1:7000")) }, errno.EADDRINUSE},
		{"bind non-local", func() error { s := fresh(); defer s.DecRef(); return s.Bind(ap("8.8.8.8:1")) }, errno.EADDRNOTAVAIL},
		{"bind twice", func() error {
			s := fresh()
			defer s.DecRef()
			if err := s.Bind(ap("127.0.0.1:0")); err != nil {
				return err
			}
			return s.Bind(ap("127.0.0.1:0"))
		}, errno.EINVAL},
		{"connect twice", func() error {
			s := fresh()
			defer s.DecRef()
			if err := s.Connect(ctx, ap("127.0.0.1:7000")); err != nil {
				return err
			}
			return s.Connect(ctx, ap("127.0.0.1:7000"))
		}, errno.EISCONN},
		{"recv unconnected", func() error { s := fresh(); defer s.DecRef(); _, err := s.Read(ctx, make([]byte, 1)); return err }, errno.ENOTCONN},
		{"send unconnected", func() error { s := fresh(); defer s.DecRef(); _, err := s.Write(ctx, []byte("x")); return err }, errno.ENOTCONN},
		{"peer unconnected", func() error { s := fresh(); defer s.DecRef(); _, err := s.PeerAddr(); return err }, errno.ENOTCONN},
		{"shutdown unconnected", func() error { s := fresh(); defer s.DecRef(); return s.Shutdown(netstack.ShutWR) }, errno.ENOTCONN},
		{"accept non-listener", func() error { s := fresh(); defer s.DecRef(); _, err := s.Accept(ctx, false); return err }, errno.EINVAL},
		{"connect listener", func() error { return l.Connect(ctx, ap("127.0.0.1:7000")) }, errno.EINVAL},
		{"inet socket to v6", func() error { s := fresh(); defer s.DecRef(); return s.Connect(ctx, ap("[::1]:7000")) }, errno.EAFNOSUPPORT},
		{"inet socket to unix", func() error { s := fresh(); defer s.DecRef(); return s.Connect(ctx, netstack.UnixAddr("/x")) }, errno.EAFNOSUPPORT},
		{"bad family", func() error { _, err := st.NewSocket(99, netstack.SockStream, 0, false); return err }, errno.EAFNOSUPPORT},
		{"unix dgram", func() error { _, err := st.NewSocket(netstack.AFUnix, netstack.SockDgram, 0, false); return err }, errno.EPROTONOSUPPORT},
		{"tcp proto on dgram", func() error {
			_, err := st.NewSocket(netstack.AFInet, netstack.SockDgram, netstack.ProtoTCP, false)
			return err
		}, errno.EPROTONOSUPPORT},
		{"raw", func() error { _, err := st.NewSocket(netstack.AFInet, 3, 0, false); return err }, errno.EPROTONOSUPPORT},
		{"bad type", func() error { _, err := st.NewSocket(netstack.AFInet, 42, 0, false); return err }, errno.EINVAL},
		{"listen dgram", func() error {
			s := sock(t, st, netstack.AFInet, netstack.SockDgram, false)
			defer s.DecRef()
			return s.Listen(1)
		}, errno.EOPNOTSUPP},
		{"unknown option", func() error { s := fresh(); defer s.DecRef(); return s.SetOption(netstack.SolSocket, 9999, 1) }, errno.ENOPROTOOPT},
	}
	for _, tt := range tests {
		wantErrno(t, tt.name, tt.do(), tt.want)
	}
	// The connections made above wait in the backlog; accept them all.
	for range 4 {
		if s, err := l.Accept(ctx, true); err != nil {
			t.Fatalf("accept: %v", err)
		} else {
			s.DecRef()
		}
	}
}

func TestListenNeedsPolicy(t *testing.T) {
	e := newEnv(t, policy.DenyAll().AllowNet("example.com"))
	s := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	defer s.DecRef()
	if err := s.Bind(ap("127.0.0.1:80")); err != nil {
		t.Fatal(err)
	}
	wantErrno(t, "listen", s.Listen(1), errno.EACCES)
	// A rule for listen on the port opens it.
	e2 := newEnv(t, &policy.Policy{Net: []policy.NetRule{{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetListen}, Hosts: []string{"*:80"}}}})
	l := listen(t, e2.st, "127.0.0.1:80")
	l.DecRef()
}

func TestNonblockingAndReadiness(t *testing.T) {
	lim := netstack.DefaultLimits()
	lim.BufferBytes = 64 << 10
	e := newEnv(t, allowAll(), withLimits(lim))
	ctx := ctxT(t)
	l := listen(t, e.st, "127.0.0.1:5000")
	defer l.DecRef()
	_ = l.SetFlags(vfs.O_NONBLOCK)
	if _, err := l.Accept(ctx, false); errno.Of(err) != errno.EAGAIN {
		t.Errorf("accept on empty backlog: %v, want EAGAIN", err)
	}
	if r := l.Readiness(waiter.EventIn); r != 0 {
		t.Errorf("listener readiness = %v, want none", r)
	}
	c := sock(t, e.st, netstack.AFInet, netstack.SockStream, true)
	defer c.DecRef()
	if r := c.Readiness(waiter.AllEvents); r != waiter.EventOut|waiter.EventHup {
		t.Errorf("unconnected readiness = %v, want Out|Hup as Linux", r)
	}
	// A VM-local connect completes at once even when non-blocking.
	if err := c.Connect(ctx, ap("127.0.0.1:5000")); err != nil {
		t.Fatalf("non-blocking local connect: %v", err)
	}
	waitReady(t, l, waiter.EventIn)
	s, err := l.Accept(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.DecRef()
	if _, err := c.Read(ctx, make([]byte, 1)); errno.Of(err) != errno.EAGAIN {
		t.Errorf("read empty: %v, want EAGAIN", err)
	}
	if r := c.Readiness(waiter.EventIn | waiter.EventOut); r != waiter.EventOut {
		t.Errorf("connected readiness = %v, want Out", r)
	}
	// A peer that never reads: writes stop at the buffer bound.
	chunk := bytes.Repeat([]byte("x"), 8192)
	total := 0
	for {
		n, err := c.Write(ctx, chunk)
		total += n
		if errno.Of(err) == errno.EAGAIN {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if total > 1<<20 {
			t.Fatalf("wrote %d bytes to a peer that never reads", total)
		}
	}
	if total > lim.BufferBytes {
		t.Errorf("buffered %d bytes, limit %d", total, lim.BufferBytes)
	}
	if r := c.Readiness(waiter.EventOut); r != 0 {
		t.Errorf("full socket readiness = %v, want none", r)
	}
	// Poll wakes the writer once the reader drains.
	done := make(chan waiter.EventMask)
	go func() { r, _ := waiter.Wait(ctx, c, waiter.EventOut); done <- r }()
	time.Sleep(10 * time.Millisecond)
	buf := make([]byte, 64<<10)
	for n := 0; n < total; {
		k, err := s.Read(ctx, buf)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	if r := <-done; r != waiter.EventOut {
		t.Errorf("woken with %v", r)
	}
	if r := s.Readiness(waiter.EventIn); r != 0 {
		t.Errorf("drained readiness = %v", r)
	}
	_, _ = c.Write(ctx, []byte("y"))
	if r := waitReady(t, s, waiter.EventIn); r != waiter.EventIn {
		t.Errorf("readiness after write = %v", r)
	}
}

func TestRecvTimeout(t *testing.T) {
	e := newEnv(t, allowAll())
	c, s, l := pair(t, e.st, "6000")
	defer l.DecRef()
	defer c.DecRef()
	defer s.DecRef()
	if err := c.SetOption(netstack.SolSocket, netstack.SoRcvTimeo, int64(30*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Option(netstack.SolSocket, netstack.SoRcvTimeo); v != int64(30*time.Millisecond) {
		t.Errorf("SO_RCVTIMEO = %d", v)
	}
	start := time.Now()
	_, err := c.Read(ctxT(t), make([]byte, 1))
	wantErrno(t, "read with SO_RCVTIMEO", err, errno.EAGAIN)
	if d := time.Since(start); d < 25*time.Millisecond || d > 5*time.Second {
		t.Errorf("timed out after %v", d)
	}
}

func TestSocketOptions(t *testing.T) {
	e := newEnv(t, allowAll())
	s := sock(t, e.st, netstack.AFInet6, netstack.SockStream, false)
	defer s.DecRef()
	set := []struct{ level, name int }{
		{netstack.SolSocket, netstack.SoReuseAddr}, {netstack.SolSocket, netstack.SoKeepAlive},
		{netstack.IPProtoTCP, netstack.TCPNoDelay}, {netstack.IPProtoIPv6, netstack.IPv6V6Only},
	}
	for _, o := range set {
		if err := s.SetOption(o.level, o.name, 1); err != nil {
			t.Errorf("set %d/%d: %v", o.level, o.name, err)
		}
		if v, err := s.Option(o.level, o.name); v != 1 || err != nil {
			t.Errorf("get %d/%d = %d, %v", o.level, o.name, v, err)
		}
	}
	for _, o := range []struct {
		name int
		want int64
	}{{netstack.SoType, 1}, {netstack.SoDomain, 10}, {netstack.SoProtocol, 6}, {netstack.SoError, 0}, {netstack.SoAcceptConn, 0}} {
		if v, err := s.Option(netstack.SolSocket, o.name); v != o.want || err != nil {
			t.Errorf("option %d = %d, %v; want %d", o.name, v, err, o.want)
		}
	}
	u := sock(t, e.st, netstack.AFUnix, netstack.SockStream, false)
	defer u.DecRef()
	wantErrno(t, "TCP_NODELAY on unix", u.SetOption(netstack.IPProtoTCP, netstack.TCPNoDelay, 1), errno.ENOPROTOOPT)
}

func TestUnixSockets(t *testing.T) {
	e := newEnv(t, policy.DenyAll()) // Unix sockets need no network permission
	ctx := ctxT(t)
	st := e.st
	l := sock(t, st, netstack.AFUnix, netstack.SockStream, false)
	if err := l.Bind(netstack.UnixAddr("/tmp/app.sock")); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(4); err != nil {
		t.Fatal(err)
	}
	dup := sock(t, st, netstack.AFUnix, netstack.SockStream, false)
	wantErrno(t, "bind taken path", dup.Bind(netstack.UnixAddr("/tmp/app.sock")), errno.EADDRINUSE)
	c := sock(t, st, netstack.AFUnix, netstack.SockStream, false)
	wantErrno(t, "connect missing path", c.Connect(ctx, netstack.UnixAddr("/tmp/none.sock")), errno.ENOENT)
	wantErrno(t, "connect missing abstract", c.Connect(ctx, netstack.Addr{Family: netstack.AFUnix, Path: "x", Abstract: true}), errno.ECONNREFUSED)
	if err := c.Connect(ctx, netstack.UnixAddr("/tmp/app.sock")); err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := c.PeerAddr(); p.Path != "/tmp/app.sock" {
		t.Errorf("peer = %+v", p)
	}
	if _, err := s.Write(ctx, []byte("over unix")); err != nil {
		t.Fatal(err)
	}
	s.DecRef()
	if got := readAll(t, c); got != "over unix" {
		t.Errorf("read %q", got)
	}
	c.DecRef()
	// The name is free again once the listener closes.
	l.DecRef()
	if err := dup.Bind(netstack.UnixAddr("/tmp/app.sock")); err != nil {
		t.Errorf("rebind after close: %v", err)
	}
	dup.DecRef()
	// Abstract names are a namespace of their own.
	a := sock(t, st, netstack.AFUnix, netstack.SockStream, false)
	defer a.DecRef()
	if err := a.Bind(netstack.Addr{Family: netstack.AFUnix, Path: "/tmp/app.sock", Abstract: true}); err != nil {
		t.Errorf("abstract bind: %v", err)
	}
}

func TestBacklogFullTimesOut(t *testing.T) {
	lim := netstack.DefaultLimits()
	lim.Backlog = 2
	lim.ConnectTimeout = 50 * time.Millisecond
	e := newEnv(t, allowAll(), withLimits(lim))
	ctx := ctxT(t)
	l := listen(t, e.st, "127.0.0.1:4000") // asks 16, gets 2
	defer l.DecRef()
	for i := range 2 {
		c := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
		defer c.DecRef()
		if err := c.Connect(ctx, ap("127.0.0.1:4000")); err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
	}
	nb := sock(t, e.st, netstack.AFInet, netstack.SockStream, true)
	defer nb.DecRef()
	wantErrno(t, "non-blocking connect to full backlog", nb.Connect(ctx, ap("127.0.0.1:4000")), errno.EAGAIN)
	c := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	defer c.DecRef()
	wantErrno(t, "blocking connect to full backlog", c.Connect(ctx, ap("127.0.0.1:4000")), errno.ETIMEDOUT)
	// Room made by accept lets the next one in.
	s, err := l.Accept(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	s.DecRef()
	if err := c.Connect(ctx, ap("127.0.0.1:4000")); err != nil {
		t.Errorf("connect after accept: %v", err)
	}
}

func TestSocketLimit(t *testing.T) {
	lim := netstack.DefaultLimits()
	lim.Sockets = 100
	e := newEnv(t, allowAll(), withLimits(lim))
	var open []*netstack.Socket
	var last error
	for range 10000 {
		s, err := e.st.NewSocket(netstack.AFInet, netstack.SockStream, 0, false)
		if err != nil {
			last = err
			break
		}
		open = append(open, s)
	}
	wantErrno(t, "socket beyond the limit", last, errno.ENFILE)
	if len(open) != 100 {
		t.Errorf("opened %d sockets, want 100", len(open))
	}
	for _, s := range open {
		s.DecRef()
	}
	c, s, l := pair(t, e.st, "80")
	c.DecRef()
	s.DecRef()
	l.DecRef()
	if n := e.st.OpenSockets(); n != 0 {
		t.Errorf("%d sockets left open", n)
	}
}
