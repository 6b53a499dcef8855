package netstack_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/waiter"
)

// env is a stack under test plus a record of the host addresses it tried
// to reach.
type env struct {
	st    *netstack.Stack
	mu    sync.Mutex
	dials []string
}

func (e *env) dialed() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.dials...)
}

type opt func(*netstack.Config)

func withLimits(l netstack.Limits) opt { return func(c *netstack.Config) { c.Limits = l } }

func withResolver(r netstack.Resolver) opt { return func(c *netstack.Config) { c.Resolver = r } }

// newEnv returns a stack governed by pol. Its dial hook records every host
// connect and refuses any address but 127.0.0.1, so a broken defence can
// never make a test reach another host.
func newEnv(t *testing.T, pol *policy.Policy, opts ...opt) *env {
	t.Helper()
	ch, err := policy.Compile(pol)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{}
	cfg := netstack.Config{
		Authorizer: ch,
		Resolver:   &net.Resolver{PreferGo: true, Dial: refuseDNS},
		BeforeHostDial: func(network string, ap netip.AddrPort) error {
			e.mu.Lock()
			e.dials = append(e.dials, network+" "+ap.String())
			e.mu.Unlock()
			if ap.Addr() != netip.MustParseAddr("127.0.0.1") {
				return errno.EHOSTUNREACH
			}
			return nil
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	e.st = netstack.New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.st.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return e
}

// refuseDNS keeps tests off the host's real resolver.
func refuseDNS(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("no DNS in tests")
}

func allowAll() *policy.Policy { return policy.DenyAll().AllowNet("*") }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func sock(t *testing.T, st *netstack.Stack, f netstack.Family, ty netstack.Type, nonblock bool) *netstack.Socket {
	t.Helper()
	s, err := st.NewSocket(f, ty, 0, nonblock)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ap(s string) netstack.Addr { return netstack.InetAddr(netip.MustParseAddrPort(s)) }

func wantErrno(t *testing.T, what string, err error, want errno.Errno) {
	t.Helper()
	if errno.Of(err) != want {
		t.Errorf("%s: got %v (%v), want %v", what, errno.Of(err).Name(), err, want.Name())
	}
}

// listen makes a VM listener on addr.
func listen(t *testing.T, st *netstack.Stack, addr string) *netstack.Socket {
	t.Helper()
	a := ap(addr)
	l := sock(t, st, a.Family, netstack.SockStream, false)
	if err := l.Bind(a); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(16); err != nil {
		t.Fatal(err)
	}
	return l
}

// pair returns a connected client and server socket on the VM loopback.
func pair(t *testing.T, st *netstack.Stack, port string) (c, s, l *netstack.Socket) {
	t.Helper()
	ctx := ctxT(t)
	l = listen(t, st, "127.0.0.1:"+port)
	c = sock(t, st, netstack.AFInet, netstack.SockStream, false)
	if err := c.Connect(ctx, ap("127.0.0.1:"+port)); err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	return c, s, l
}

func readAll(t *testing.T, s *netstack.Socket) string {
	t.Helper()
	ctx := ctxT(t)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := s.Read(ctx, buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if n == 0 {
			return string(out)
		}
	}
}

// hostServer is the outside world: a TCP server on the host's loopback.
type hostServer struct {
	ln       net.Listener
	accepted atomic.Int32
	port     uint16
}

// newHostServer serves each connection with fn (nil: echo).
func newHostServer(t *testing.T, fn func(net.Conn)) *hostServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostServer{ln: ln, port: uint16(ln.Addr().(*net.TCPAddr).Port)}
	if fn == nil {
		fn = func(c net.Conn) { _, _ = io.Copy(c, c) }
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); defer c.Close(); fn(c) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return h
}

func waitReady(t *testing.T, w waiter.Waitable, mask waiter.EventMask) waiter.EventMask {
	t.Helper()
	r, err := waiter.Wait(ctxT(t), w, mask)
	if err != nil {
		t.Fatalf("wait %v: %v", mask, err)
	}
	return r
}
