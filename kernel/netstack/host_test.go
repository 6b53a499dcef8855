package netstack_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/testnet"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/waiter"
)

// TestSSRF tries the classic server-side request forgery targets under a
// policy that allows "*" (every host, every op). None may reach the host:
// special addresses are refused (EACCES) before any socket is made;
// loopback spellings reach only the VM's own loopback (ECONNREFUSED here,
// as nothing listens in the VM), never the host server listening on that
// very port.
func TestSSRF(t *testing.T) {
	srv := newHostServer(t, nil)
	port := strconv.Itoa(int(srv.port))
	e := newEnv(t, allowAll())
	ctx := ctxT(t)
	tests := []struct {
		target string
		want   errno.Errno
	}{
		// Cloud metadata, link-local and private ranges.
		{"169.254.169.254:80", errno.EACCES},
		{"169.254.0.1:80", errno.EACCES},
		{"10.0.0.1:80", errno.EACCES},
		{"10.255.255.255:443", errno.EACCES},
		{"172.16.0.1:80", errno.EACCES},
		{"172.31.255.254:80", errno.EACCES},
		{"192.168.0.1:80", errno.EACCES},
		{"192.168.1.254:8080", errno.EACCES},
		{"100.64.0.1:80", errno.EACCES},
		{"100.127.255.254:80", errno.EACCES},
		{"224.0.0.1:80", errno.EACCES},
		{"239.255.255.250:1900", errno.EACCES},
		{"255.255.255.255:80", errno.EACCES},
		{"240.0.0.1:80", errno.EACCES},
		{"198.18.0.1:80", errno.EACCES},
		{"192.0.0.170:80", errno.EACCES},
		{"[fe80::1]:80", errno.EACCES},
		{"[fd00::1]:80", errno.EACCES},
		{"[fc00::1]:80", errno.EACCES},
		{"[ff02::1]:80", errno.EACCES},
		{"[fec0::1]:80", errno.EACCES},
		// IPv4 embedded in IPv6.
		{"[::ffff:169.254.169.254]:80", errno.EACCES},
		{"[::ffff:a9fe:a9fe]:80", errno.EACCES},
		{"[::ffff:10.0.0.1]:80", errno.EACCES},
		{"[::169.254.169.254]:80", errno.EACCES},
		{"[64:ff9b::a9fe:a9fe]:80", errno.EACCES},
		{"[64:ff9b::808:808]:80", errno.EACCES}, // NAT64 is closed wholesale
		{"[2002:a9fe:a9fe::1]:80", errno.EACCES},
		{"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:80", errno.EACCES}, // Teredo
		// Other spellings of the metadata and private addresses.
		{"2852039166:80", errno.EACCES},
		{"0xa9fea9fe:80", errno.EACCES},
		{"025177524776:80", errno.EACCES},
		{"169.254.43518:80", errno.EACCES},
		{"0xa9.0xfe.0xa9.0xfe:80", errno.EACCES},
		{"012.0.0.1:80", errno.EACCES},
		{"167772161:80", errno.EACCES},
		{"192.168.1:80", errno.EACCES},
		// Loopback in every spelling goes to the VM, not the host.
		{"127.0.0.1:" + port, errno.ECONNREFUSED},
		{"127.0.0.2:" + port, errno.ECONNREFUSED},
		{"2130706433:" + port, errno.ECONNREFUSED},
		{"0x7f000001:" + port, errno.ECONNREFUSED},
		{"017700000001:" + port, errno.ECONNREFUSED},
		{"127.1:" + port, errno.ECONNREFUSED},
		{"0x7f.1:" + port, errno.ECONNREFUSED},
		{"[::1]:" + port, errno.ECONNREFUSED},
		{"[::ffff:127.0.0.1]:" + port, errno.ECONNREFUSED},
		{"[::ffff:7f00:1]:" + port, errno.ECONNREFUSED},
		{"0.0.0.0:" + port, errno.ECONNREFUSED},
		{"0:" + port, errno.ECONNREFUSED},
		{"[::]:" + port, errno.ECONNREFUSED},
		{"localhost:" + port, errno.ECONNREFUSED},
		{"LOCALHOST.:" + port, errno.ECONNREFUSED},
		{"a.b.localhost:" + port, errno.ECONNREFUSED},
	}
	for _, tt := range tests {
		addr, err := netstack.ParseAddr(tt.target)
		if err != nil {
			t.Errorf("%s: %v", tt.target, err)
			continue
		}
		for _, ty := range []netstack.Type{netstack.SockStream, netstack.SockDgram} {
			s := sock(t, e.st, netstack.AFInet6, ty, false)
			if ty == netstack.SockStream {
				err = s.Connect(ctx, addr)
			} else {
				_, err = s.SendTo(ctx, []byte("x"), 0, &addr)
				if tt.want == errno.ECONNREFUSED {
					// A datagram to a VM port nobody bound is lost.
					wantErrno(t, "udp "+tt.target, err, 0)
					s.DecRef()
					continue
				}
			}
			wantErrno(t, fmt.Sprintf("%v %s", ty, tt.target), err, tt.want)
			s.DecRef()
		}
	}
	if d := e.dialed(); len(d) != 0 {
		t.Errorf("host dials attempted: %v", d)
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Errorf("the host server accepted %d connections", n)
	}
}

// TestHostLoopbackPrecedence: the host's loopback is reached only when a
// rule names it, and a VM listener on the same port still wins.
func TestHostLoopbackPrecedence(t *testing.T) {
	srv := newHostServer(t, func(c net.Conn) { _, _ = c.Write([]byte("host")) })
	port := strconv.Itoa(int(srv.port))
	ctx := ctxT(t)

	e := newEnv(t, policy.DenyAll().AllowNet("127.0.0.1:"+port))
	c := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	if err := c.Connect(ctx, ap("127.0.0.1:"+port)); err != nil {
		t.Fatalf("connect to named host loopback: %v", err)
	}
	if got := readAll(t, c); got != "host" {
		t.Errorf("read %q from host", got)
	}
	if got := c.LocalAddr(); !got.IP.Addr().IsUnspecified() && !got.IP.Addr().IsLoopback() {
		t.Errorf("local address %v leaks a host address", got)
	}
	c.DecRef()
	// Other loopback addresses and ports stay in the VM.
	for _, target := range []string{"127.0.0.2:" + port, "[::1]:" + port, "127.0.0.1:1"} {
		s := sock(t, e.st, netstack.AFInet6, netstack.SockStream, false)
		wantErrno(t, target, s.Connect(ctx, ap(target)), errno.ECONNREFUSED)
		s.DecRef()
	}
	// A VM listener on the port wins over the rule.
	e2 := newEnv(t, policy.DenyAll().AllowNet("127.0.0.1:"+port, "*:*"))
	l := listen(t, e2.st, "127.0.0.1:"+port)
	defer l.DecRef()
	c2 := sock(t, e2.st, netstack.AFInet, netstack.SockStream, false)
	defer c2.DecRef()
	if err := c2.Connect(ctx, ap("127.0.0.1:"+port)); err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept(ctx, true)
	if err != nil {
		t.Fatalf("the VM listener did not get the connection: %v", err)
	}
	s.DecRef()
	if n := srv.accepted.Load(); n != 1 {
		t.Errorf("host server accepted %d connections, want 1", n)
	}
}

func TestHostEchoBlockingAndNonblocking(t *testing.T) {
	srv := newHostServer(t, nil)
	port := strconv.Itoa(int(srv.port))
	e := newEnv(t, policy.DenyAll().AllowNet("127.0.0.1:"+port))
	ctx := ctxT(t)
	for _, nonblock := range []bool{false, true} {
		c := sock(t, e.st, netstack.AFInet, netstack.SockStream, nonblock)
		err := c.Connect(ctx, ap("127.0.0.1:"+port))
		if nonblock {
			wantErrno(t, "non-blocking host connect", err, errno.EINPROGRESS)
			// EALREADY while connecting; EISCONN if it finished already.
			if e := errno.Of(c.Connect(ctx, ap("127.0.0.1:"+port))); e != errno.EALREADY && e != errno.EISCONN {
				t.Errorf("connect while connecting: %v", e.Name())
			}
			waitReady(t, c, waiter.EventOut)
			if v, _ := c.Option(netstack.SolSocket, netstack.SoError); v != 0 {
				t.Fatalf("SO_ERROR = %d", v)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		msg := bytes.Repeat([]byte("ping "), 100000) // larger than every buffer on the way
		go func() { _, _ = writeFull(ctx, c, msg) }()
		got := make([]byte, 0, len(msg))
		buf := make([]byte, 64<<10)
		for len(got) < len(msg) {
			waitReady(t, c, waiter.EventIn)
			n, err := c.Read(ctx, buf)
			if err != nil && errno.Of(err) != errno.EAGAIN {
				t.Fatal(err)
			}
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("echo differs (%d bytes)", len(got))
		}
		if err := c.Shutdown(netstack.ShutWR); err != nil {
			t.Fatal(err)
		}
		waitReady(t, c, waiter.EventIn)
		if n, err := c.Read(ctx, buf); n != 0 || err != nil {
			t.Errorf("after half-close the echo server closes: %d %v", n, err)
		}
		c.DecRef()
	}
}

// writeFull writes all of p, waiting for room on a non-blocking socket.
func writeFull(ctx context.Context, s *netstack.Socket, p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := s.Write(ctx, p[done:])
		done += n
		if errno.Of(err) == errno.EAGAIN {
			if _, err := waiter.Wait(ctx, s, waiter.EventOut); err != nil {
				return done, err
			}
			continue
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func TestHostConnectFailures(t *testing.T) {
	// A port nobody listens on, named by a rule.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	e := newEnv(t, policy.DenyAll().AllowNet("127.0.0.1:"+port))
	ctx := ctxT(t)
	c := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	wantErrno(t, "blocking connect to closed port", c.Connect(ctx, ap("127.0.0.1:"+port)), errno.ECONNREFUSED)
	c.DecRef()
	nb := sock(t, e.st, netstack.AFInet, netstack.SockStream, true)
	defer nb.DecRef()
	wantErrno(t, "non-blocking", nb.Connect(ctx, ap("127.0.0.1:"+port)), errno.EINPROGRESS)
	r := waitReady(t, nb, waiter.EventOut|waiter.EventErr)
	if r&waiter.EventErr == 0 {
		t.Errorf("readiness after failed connect = %v, want Err", r)
	}
	if v, _ := nb.Option(netstack.SolSocket, netstack.SoError); errno.Errno(v) != errno.ECONNREFUSED {
		t.Errorf("SO_ERROR = %v, want ECONNREFUSED", errno.Errno(v).Name())
	}
	if v, _ := nb.Option(netstack.SolSocket, netstack.SoError); v != 0 {
		t.Errorf("SO_ERROR not cleared: %d", v)
	}
	// Denied outright: nothing is dialled.
	d := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	defer d.DecRef()
	wantErrno(t, "public address without a rule", d.Connect(ctx, ap("93.184.216.34:80")), errno.EACCES)
	wantErrno(t, "name without a rule", d.Connect(ctx, netstack.HostAddr("example.com", 80)), errno.EACCES)
	if got := e.dialed(); len(got) != 2 {
		t.Errorf("dials = %v, want the two refused connects only", got)
	}
}

// TestSlowPeers: a host peer that never reads, and one that floods a guest
// that never reads, both end at the socket's buffer bound.
func TestSlowPeers(t *testing.T) {
	lim := netstack.DefaultLimits()
	lim.BufferBytes = 64 << 10
	lim.MemoryBytes = 1 << 20
	stop := make(chan struct{})
	sink := newHostServer(t, func(c net.Conn) { <-stop })
	flood := newHostServer(t, func(c net.Conn) {
		b := make([]byte, 64<<10)
		for {
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	})
	defer close(stop)
	e := newEnv(t, policy.DenyAll().AllowNet("127.0.0.1"), withLimits(lim))
	ctx := ctxT(t)

	w := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	defer w.DecRef()
	if err := w.Connect(ctx, ap("127.0.0.1:"+strconv.Itoa(int(sink.port)))); err != nil {
		t.Fatal(err)
	}
	_ = w.SetOption(netstack.SolSocket, netstack.SoSndTimeo, int64(200*time.Millisecond))
	chunk := make([]byte, 256<<10)
	total := 0
	for {
		n, err := w.Write(ctx, chunk)
		total += n
		if errno.Of(err) == errno.EAGAIN || (err == nil && n < len(chunk)) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if total > 64<<20 {
			t.Fatalf("wrote %d bytes to a peer that never reads", total)
		}
	}
	t.Logf("a peer that never reads took %d bytes (buffer + host kernel)", total)

	r := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	defer r.DecRef()
	if err := r.Connect(ctx, ap("127.0.0.1:"+strconv.Itoa(int(flood.port)))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	time.Sleep(300 * time.Millisecond)
	runtime.ReadMemStats(&ms)
	if grew := int64(ms.HeapInuse) - int64(before); grew > 8<<20 {
		t.Errorf("heap grew %d bytes while a guest did not read", grew)
	}
	if used, limit := e.st.BufferMemory(); used > limit {
		t.Errorf("buffer memory %d over its limit %d", used, limit)
	}
	if n := r.Buffered(); n > lim.BufferBytes {
		t.Errorf("%d bytes buffered for the guest, bound %d", n, lim.BufferBytes)
	}
}

func TestDialGuest(t *testing.T) {
	e := newEnv(t, allowAll())
	ctx := ctxT(t)
	if _, err := e.st.DialGuest(ctx, 8080); errno.Of(err) != errno.ECONNREFUSED {
		t.Errorf("dial with no listener: %v", err)
	}
	l := listen(t, e.st, "0.0.0.0:8080")
	defer l.DecRef()
	go func() {
		s, err := l.Accept(ctx, false)
		if err != nil {
			return
		}
		defer s.DecRef()
		buf := make([]byte, 1024)
		for {
			n, err := s.Read(ctx, buf)
			if n == 0 || err != nil {
				return
			}
			_, _ = s.Write(ctx, bytes.ToUpper(buf[:n]))
		}
	}()
	c, err := e.st.DialGuest(ctx, 8080)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ra := c.RemoteAddr().String(); ra != "127.0.0.1:8080" {
		t.Errorf("remote = %s", ra)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "HELLO" {
		t.Fatalf("read %q %v", buf, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.Read(buf); !os.IsTimeout(err) {
		t.Errorf("read past deadline: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	_ = c.(interface{ CloseWrite() error }).CloseWrite()
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("after the guest saw EOF and closed: %d %v", n, err)
	}
}

func TestUDP(t *testing.T) {
	echo, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		b := make([]byte, 2048)
		for {
			n, from, err := echo.ReadFrom(b)
			if err != nil {
				return
			}
			_, _ = echo.WriteTo(append([]byte("echo:"), b[:n]...), from)
		}
	}()
	eport := strconv.Itoa(echo.LocalAddr().(*net.UDPAddr).Port)
	pol := &policy.Policy{Net: []policy.NetRule{
		{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetListen}, Hosts: []string{"*"}},
		{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetConnect}, Hosts: []string{"127.0.0.1:" + eport}},
	}}
	e := newEnv(t, pol)
	ctx := ctxT(t)
	srv := sock(t, e.st, netstack.AFInet, netstack.SockDgram, false)
	defer srv.DecRef()
	if err := srv.Bind(ap("127.0.0.1:5353")); err != nil {
		t.Fatal(err)
	}
	cli := sock(t, e.st, netstack.AFInet, netstack.SockDgram, true)
	defer cli.DecRef()
	to := ap("127.0.0.1:5353")
	if n, err := cli.SendTo(ctx, []byte("question"), 0, &to); err != nil || n != 8 {
		t.Fatalf("sendto: %d %v", n, err)
	}
	buf := make([]byte, 4)
	n, peekFrom, err := srv.RecvFrom(ctx, buf, netstack.MsgPeek|netstack.MsgTrunc)
	if err != nil || n != 8 || string(buf) != "ques" {
		t.Fatalf("peek: %d %q %v", n, buf, err)
	}
	big := make([]byte, 100)
	n, from, err := srv.RecvFrom(ctx, big, 0)
	if err != nil || string(big[:n]) != "question" {
		t.Fatalf("recvfrom: %q %v", big[:n], err)
	}
	if from != peekFrom || from.IP.Port() != cli.LocalAddr().Port() || from.IP.Addr().String() != "127.0.0.1" {
		t.Errorf("from = %v (peek %v), client is %v", from, peekFrom, cli.LocalAddr())
	}
	if _, err := srv.SendTo(ctx, []byte("answer"), 0, &from); err != nil {
		t.Fatal(err)
	}
	waitReady(t, cli, waiter.EventIn)
	n, from2, err := cli.RecvFrom(ctx, big, 0)
	if err != nil || string(big[:n]) != "answer" || from2 != to {
		t.Errorf("reply %q from %v, %v", big[:n], from2, err)
	}
	if _, _, err := cli.RecvFrom(ctx, big, 0); errno.Of(err) != errno.EAGAIN {
		t.Errorf("empty non-blocking recv: %v", err)
	}
	wantErrno(t, "too large", func() error { _, err := cli.SendTo(ctx, make([]byte, 70000), 0, &to); return err }(), errno.EMSGSIZE)
	wantErrno(t, "no destination", func() error { _, err := cli.Write(ctx, []byte("x")); return err }(), errno.EDESTADDRREQ)

	// The host: only the named echo server.
	hostTo := ap("127.0.0.1:" + eport)
	h := sock(t, e.st, netstack.AFInet, netstack.SockDgram, false)
	defer h.DecRef()
	if err := h.Connect(ctx, hostTo); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	n, from, err = h.RecvFrom(ctx, big, 0)
	if err != nil || string(big[:n]) != "echo:hi" || from != hostTo {
		t.Errorf("host echo %q from %v, %v", big[:n], from, err)
	}
	other := ap("10.0.0.1:53")
	wantErrno(t, "udp to private", func() error { _, err := h.SendTo(ctx, []byte("x"), 0, &other); return err }(), errno.EACCES)
}

// TestCloseReleasesHostResources opens host and VM connections, then
// closes the stack: every goroutine and host descriptor it made is gone.
func TestCloseReleasesHostResources(t *testing.T) {
	srv := newHostServer(t, nil)
	port := strconv.Itoa(int(srv.port))
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	uport := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
	time.Sleep(20 * time.Millisecond)
	baseG, baseFD := runtime.NumGoroutine(), testnet.SocketFDs(t)

	ch, _ := policy.Compile(policy.DenyAll().AllowNet("*", "127.0.0.1"))
	st := netstack.New(netstack.Config{Authorizer: ch})
	ctx := ctxT(t)
	var socks []*netstack.Socket
	for i := range 50 {
		s, err := st.NewSocket(netstack.AFInet, netstack.SockStream, 0, i%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Connect(ctx, ap("127.0.0.1:"+port)); err != nil && errno.Of(err) != errno.EINPROGRESS {
			t.Fatal(err)
		}
		socks = append(socks, s)
		u, _ := st.NewSocket(netstack.AFInet, netstack.SockDgram, 0, false)
		to := ap("127.0.0.1:" + uport)
		if _, err := u.SendTo(ctx, []byte("x"), 0, &to); err != nil {
			t.Fatal(err)
		}
		socks = append(socks, u)
	}
	if n := st.HostSockets(); n < 50 {
		t.Errorf("only %d host sockets open", n)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if n := st.HostSockets(); n != 0 {
		t.Errorf("%d host sockets left after Close", n)
	}
	// The guest's references go last, as a dying process drops them.
	for _, s := range socks {
		s.DecRef()
	}
	waitFor(t, func() bool { return runtime.NumGoroutine() <= baseG && testnet.SocketFDs(t) <= baseFD },
		func() string {
			return fmt.Sprintf("goroutines %d (base %d), socket fds %d (base %d)", runtime.NumGoroutine(), baseG, testnet.SocketFDs(t), baseFD)
		})
	if _, err := st.NewSocket(netstack.AFInet, netstack.SockStream, 0, false); err == nil {
		t.Error("socket after Close succeeded")
	}
}

func waitFor(t *testing.T, cond func() bool, msg func() string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s\n%s", msg(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCloseFlushesToHost: what a guest wrote before closing still reaches
// the host peer, as on Linux.
func TestCloseFlushesToHost(t *testing.T) {
	got := make(chan int, 1)
	srv := newHostServer(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		got <- int(n)
	})
	e := newEnv(t, policy.DenyAll().AllowNet("127.0.0.1:"+strconv.Itoa(int(srv.port))))
	ctx := ctxT(t)
	s := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	if err := s.Connect(ctx, ap("127.0.0.1:"+strconv.Itoa(int(srv.port)))); err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	if n, err := s.Write(ctx, make([]byte, size)); n != size || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
	s.DecRef()
	select {
	case n := <-got:
		if n != size {
			t.Errorf("host received %d bytes, want %d", n, size)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the host never saw the end of the stream")
	}
	waitFor(t, func() bool { return e.st.HostSockets() == 0 }, func() string { return "host socket not released" })
}

// TestHostReset: a host peer that resets the connection makes the guest's
// read fail with ECONNRESET.
func TestHostReset(t *testing.T) {
	srv := newHostServer(t, func(c net.Conn) {
		time.Sleep(50 * time.Millisecond) // let the connect finish first
		_ = c.(*net.TCPConn).SetLinger(0) // close sends RST
	})
	e := newEnv(t, policy.DenyAll().AllowNet("127.0.0.1:"+strconv.Itoa(int(srv.port))))
	ctx := ctxT(t)
	s := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	defer s.DecRef()
	if err := s.Connect(ctx, ap("127.0.0.1:"+strconv.Itoa(int(srv.port)))); err != nil {
		t.Fatal(err)
	}
	_, err := s.Read(ctx, make([]byte, 10))
	wantErrno(t, "read after reset", err, errno.ECONNRESET)
	if n, err := s.Read(ctx, make([]byte, 10)); n != 0 || err != nil {
		t.Errorf("second read: %d %v, want end of file", n, err)
	}
}
