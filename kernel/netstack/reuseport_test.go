package netstack_test

import (
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
)

// reusing makes a TCP socket with SO_REUSEPORT set, as a cluster worker's
// listener or its primary's reservation.
func reusing(t *testing.T, st *netstack.Stack) *netstack.Socket {
	t.Helper()
	s := sock(t, st, netstack.AFInet, netstack.SockStream, true)
	if err := s.SetOption(netstack.SolSocket, netstack.SoReusePort, 1); err != nil {
		t.Fatal(err)
	}
	return s
}

// acceptAll drains a nonblocking listener's backlog.
func acceptAll(t *testing.T, l *netstack.Socket) int {
	t.Helper()
	n := 0
	for {
		c, err := l.Accept(ctxT(t), true)
		if errno.Of(err) == errno.EAGAIN {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		c.DecRef()
		n++
	}
}

// TestReusePortDealsConnections: sockets that all set SO_REUSEPORT share
// a port; only listening members get connections, in turn; a socket
// without the option cannot join, and the port stays taken until its last
// member closes.
func TestReusePortDealsConnections(t *testing.T) {
	e := newEnv(t, allowAll())
	ctx := ctxT(t)
	const addr = "127.0.0.1:9100"
	// The primary's reservation: bound, never listening.
	res := reusing(t, e.st)
	if err := res.Bind(ap(addr)); err != nil {
		t.Fatal(err)
	}
	plain := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	wantErrno(t, "bind without SO_REUSEPORT", plain.Bind(ap(addr)), errno.EADDRINUSE)
	plain.DecRef()
	// Nothing listens yet.
	c := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	wantErrno(t, "connect to a reservation", c.Connect(ctx, ap(addr)), errno.ECONNREFUSED)
	c.DecRef()

	var ws [2]*netstack.Socket
	for i := range ws {
		ws[i] = reusing(t, e.st)
		if err := ws[i].Bind(ap(addr)); err != nil {
			t.Fatalf("worker %d bind: %v", i, err)
		}
		if err := ws[i].Listen(16); err != nil {
			t.Fatal(err)
		}
	}
	var clients []*netstack.Socket
	for range 6 {
		c := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
		if err := c.Connect(ctx, ap(addr)); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	// The embedder's connections (port mappings) are dealt the same way.
	for range 2 {
		conn, err := e.st.DialGuest(ctx, 9100)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	if a, b := acceptAll(t, ws[0]), acceptAll(t, ws[1]); a != 4 || b != 4 {
		t.Errorf("connections per listener = %d, %d; want 4, 4", a, b)
	}
	_, err := res.Accept(ctx, true)
	wantErrno(t, "accept on the reservation", err, errno.EINVAL)
	for _, c := range clients {
		c.DecRef()
	}

	// One member gone: the other gets everything, and the port is still
	// held.
	ws[0].DecRef()
	c = sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	if err := c.Connect(ctx, ap(addr)); err != nil {
		t.Fatal(err)
	}
	c.DecRef()
	if n := acceptAll(t, ws[1]); n != 1 {
		t.Errorf("remaining listener accepted %d, want 1", n)
	}
	plain = sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	wantErrno(t, "bind while members remain", plain.Bind(ap(addr)), errno.EADDRINUSE)
	ws[1].DecRef()
	res.DecRef()
	if err := plain.Bind(ap(addr)); err != nil {
		t.Errorf("bind after the group closed: %v", err)
	}
	plain.DecRef()
}

// TestReusePortNeedsTheFirstSocket: a socket with SO_REUSEPORT cannot
// join a port whose holder did not set it (the holder did not agree to
// share), TCP or UDP.
func TestReusePortNeedsTheFirstSocket(t *testing.T) {
	e := newEnv(t, allowAll())
	l := listen(t, e.st, "127.0.0.1:9101")
	defer l.DecRef()
	s := reusing(t, e.st)
	wantErrno(t, "join a plain listener", s.Bind(ap("127.0.0.1:9101")), errno.EADDRINUSE)
	s.DecRef()

	var us [2]*netstack.Socket
	for i := range us {
		us[i] = sock(t, e.st, netstack.AFInet, netstack.SockDgram, false)
		defer us[i].DecRef()
	}
	if err := us[1].SetOption(netstack.SolSocket, netstack.SoReusePort, 1); err != nil {
		t.Fatal(err)
	}
	if err := us[0].Bind(ap("127.0.0.1:9102")); err != nil {
		t.Fatal(err)
	}
	wantErrno(t, "join a plain UDP socket", us[1].Bind(ap("127.0.0.1:9102")), errno.EADDRINUSE)
}

// TestReusePortSharesUDP: UDP sockets that all set SO_REUSEPORT share a
// port (as cluster workers' dgram sockets do) and datagrams to it go to
// the members in turn; a socket without the option cannot join, and the
// port is free again once the last member closes.
func TestReusePortSharesUDP(t *testing.T) {
	e := newEnv(t, allowAll())
	ctx := ctxT(t)
	const addr = "127.0.0.1:9200"
	var ms [2]*netstack.Socket
	for i := range ms {
		ms[i] = sock(t, e.st, netstack.AFInet, netstack.SockDgram, true)
		if err := ms[i].SetOption(netstack.SolSocket, netstack.SoReusePort, 1); err != nil {
			t.Fatal(err)
		}
		if err := ms[i].Bind(ap(addr)); err != nil {
			t.Fatalf("member %d: bind: %v", i, err)
		}
	}
	plain := sock(t, e.st, netstack.AFInet, netstack.SockDgram, true)
	wantErrno(t, "bind without SO_REUSEPORT", plain.Bind(ap(addr)), errno.EADDRINUSE)
	sender := sock(t, e.st, netstack.AFInet, netstack.SockDgram, true)
	to := ap(addr)
	for range 4 {
		if _, err := sender.SendTo(ctx, []byte("x"), 0, &to); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 8)
	for i, m := range ms {
		got := 0
		for {
			_, _, err := m.RecvFrom(ctx, buf, 0)
			if errno.Of(err) == errno.EAGAIN {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got++
		}
		if got != 2 {
			t.Errorf("member %d got %d datagrams, want 2 of 4", i, got)
		}
	}
	ms[0].DecRef()
	wantErrno(t, "bind while a member holds the port", plain.Bind(ap(addr)), errno.EADDRINUSE)
	ms[1].DecRef()
	if err := plain.Bind(ap(addr)); err != nil {
		t.Errorf("bind after the last member closed: %v", err)
	}
	plain.DecRef()
	sender.DecRef()
}
