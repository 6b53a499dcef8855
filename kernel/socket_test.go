package kernel_test

import (
	"context"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/testnet"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// newNetKernel is newKernel with a network policy.
func newNetKernel(t *testing.T, limits kernel.Limits, pol *policy.Policy, progs goLoader) *kernel.Kernel {
	t.Helper()
	ctx := context.Background()
	ch, err := policy.Compile(pol)
	if err != nil {
		t.Fatal(err)
	}
	root := memfs.New(memfs.Options{Quota: vfs.NewQuota(64<<20, 16384)})
	v, err := vfs.New(ctx, root, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{VFS: v, Limits: limits, Net: kernel.NetConfig{Authorizer: ch}})
	if err != nil {
		t.Fatal(err)
	}
	k.RegisterLoader(progs)
	for _, d := range []string{"/bin", "/tmp"} {
		if err := v.Mkdir(ctx, vfs.Root, d, 0o1777); err != nil {
			t.Fatal(err)
		}
	}
	for name := range progs {
		writeFile(t, v, "/bin/"+name, "#!go:"+name+"\n", 0o755)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := k.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return k
}

func spawnHost(t *testing.T, k *kernel.Kernel, argv ...string) *kernel.Process {
	t.Helper()
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: argv, Env: []string{"PATH=/bin"}, Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func waitCode(t *testing.T, p *kernel.Process) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := p.HostWait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.ShellCode()
}

// TestSocketSyscalls runs a server and a client as two processes of one
// VM: TCP on the VM loopback and a Unix socket by relative path, poll on
// socket descriptors, dup, and a child that inherits the accepted socket.
func TestSocketSyscalls(t *testing.T) {
	listening := make(chan struct{})
	k := newNetKernel(t, kernel.Limits{}, policy.DenyAll().AllowNet("*"), goLoader{
		"server": func(ctx context.Context, p *kernel.Process) int {
			l, err := p.Socket(netstack.AFInet, netstack.SockStream, 0, vfs.O_CLOEXEC)
			if err != nil {
				return 1
			}
			if p.Bind(ctx, l, netstack.InetAddr(mustAP("0.0.0.0:8080"))) != nil || p.Listen(l, 8) != nil {
				return 2
			}
			u, _ := p.Socket(netstack.AFUnix, netstack.SockStream, 0, vfs.O_NONBLOCK)
			if p.Bind(ctx, u, netstack.UnixAddr("srv.sock")) != nil || p.Listen(u, 8) != nil {
				return 3
			}
			close(listening)
			fds := []kernel.PollFD{{FD: l, Events: waiter.EventIn}, {FD: u, Events: waiter.EventIn}}
			got := 0
			for got < 2 {
				if n, err := p.Poll(ctx, fds, 5*time.Second); err != nil || n == 0 {
					return 4
				}
				for _, f := range fds {
					if f.Revents&waiter.EventIn == 0 {
						continue
					}
					c, peer, err := p.Accept(ctx, f.FD, 0)
					if err != nil {
						return 5
					}
					got++
					if f.FD == l && peer.IP.Addr().String() != "127.0.0.1" {
						return 6
					}
					// A child inherits the connection and answers on it.
					d, err := p.Dup(c, 10, false)
					if err != nil {
						return 7
					}
					_ = p.Close(c)
					child, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"answer", strconv.Itoa(d)}})
					if err != nil {
						return 8
					}
					_ = p.Close(d)
					if _, st, err := p.Wait(ctx, child.PID(), 0); err != nil || st.ShellCode() != 0 {
						return 9
					}
				}
			}
			return 0
		},
		"answer": func(ctx context.Context, p *kernel.Process) int {
			fd, _ := strconv.Atoi(p.Argv()[1])
			if !p.IsSocket(fd) {
				return 1
			}
			buf := make([]byte, 64)
			n, err := p.Read(ctx, fd, buf)
			if err != nil {
				return 2
			}
			if _, err := p.Write(ctx, fd, append([]byte("re:"), buf[:n]...)); err != nil {
				return 3
			}
			return 0
		},
		"client": func(ctx context.Context, p *kernel.Process) int {
			<-listening
			for i, a := range []netstack.Addr{netstack.HostAddr("localhost", 8080), netstack.UnixAddr("/tmp/srv.sock")} {
				fam := netstack.AFInet
				if a.Family == netstack.AFUnix {
					fam = netstack.AFUnix
				}
				s, err := p.Socket(fam, netstack.SockStream, 0, 0)
				if err != nil {
					return 10*i + 1
				}
				if err := p.Connect(ctx, s, a); err != nil {
					return 10*i + 2
				}
				if _, err := p.SendTo(ctx, s, []byte("hi"), 0, nil); err != nil {
					return 10*i + 3
				}
				buf := make([]byte, 64)
				n, _, err := p.RecvFrom(ctx, s, buf, netstack.MsgWaitAll)
				if err != nil || string(buf[:n]) != "re:hi" {
					return 10*i + 4
				}
				if n, _ := p.Read(ctx, s, buf); n != 0 {
					return 10*i + 5 // the answer closed: end of file
				}
				if _, err := p.Getpeername(s); err != nil {
					return 10*i + 6
				}
				_ = p.Close(s)
			}
			return 0
		},
	})
	srv := spawnHost(t, k, "server")
	cli := spawnHost(t, k, "client")
	if c := waitCode(t, cli); c != 0 {
		t.Errorf("client failed at step %d", c)
	}
	if c := waitCode(t, srv); c != 0 {
		t.Errorf("server failed at step %d", c)
	}
	if n := k.Net().OpenSockets(); n != 0 {
		t.Errorf("%d sockets open after both exited", n)
	}
	p := k.Init()
	r, w, _ := p.Pipe(0)
	if _, err := p.Getsockname(r); errno.Of(err) != errno.ENOTSOCK {
		t.Errorf("getsockname on a pipe: %v", err)
	}
	_ = p.Close(r)
	_ = p.Close(w)
}

func mustAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// TestTenThousandSockets: a guest that opens sockets in a loop ends in
// EMFILE (or ENFILE), and the VM works normally afterwards.
func TestTenThousandSockets(t *testing.T) {
	k := newNetKernel(t, kernel.Limits{}, policy.DenyAll().AllowNet("*"), goLoader{
		"hog": func(ctx context.Context, p *kernel.Process) int {
			var last error
			var fds []int
			for range 10000 {
				fd, err := p.Socket(netstack.AFInet, netstack.SockStream, 0, 0)
				if err != nil {
					last = err
					break
				}
				fds = append(fds, fd)
			}
			if e := errno.Of(last); e != errno.EMFILE && e != errno.ENFILE {
				return 1
			}
			for _, fd := range fds {
				_ = p.Close(fd)
			}
			l, err := p.Socket(netstack.AFInet, netstack.SockStream, 0, 0)
			if err != nil || p.Listen(l, 1) != nil {
				return 2
			}
			a, _ := p.Getsockname(l)
			c, _ := p.Socket(netstack.AFInet, netstack.SockStream, 0, 0)
			if err := p.Connect(ctx, c, a); err != nil {
				return 3
			}
			return 0
		},
	})
	if c := waitCode(t, spawnHost(t, k, "hog")); c != 0 {
		t.Fatalf("failed at step %d", c)
	}
	if n := k.Net().OpenSockets(); n != 0 {
		t.Errorf("%d sockets left after exit", n)
	}
}

// TestSocketsReleasedOnShutdown: processes blocked on sockets (host
// connections, accept, read) are killed by the kernel's shutdown, and
// every goroutine and host socket returns.
func TestSocketsReleasedOnShutdown(t *testing.T) {
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
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
			c, err := srv.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); _, _ = io.Copy(io.Discard, c); _ = c.Close() }()
		}
	}()
	defer func() {
		_ = srv.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	port := srv.Addr().(*net.TCPAddr).Port
	time.Sleep(10 * time.Millisecond)
	baseG, baseS := runtime.NumGoroutine(), testnet.SocketFDs(t)

	ready := make(chan struct{}, 8)
	progs := goLoader{
		"holder": func(ctx context.Context, p *kernel.Process) int {
			for range 10 {
				s, err := p.Socket(netstack.AFInet, netstack.SockStream, 0, 0)
				if err != nil {
					return 1
				}
				if err := p.Connect(ctx, s, netstack.InetAddr(parseAP("127.0.0.1:"+strconv.Itoa(port)))); err != nil {
					return 2
				}
			}
			l, _ := p.Socket(netstack.AFInet, netstack.SockStream, 0, 0)
			if err := p.Listen(l, 4); err != nil {
				return 3
			}
			a, _ := p.Getsockname(l)
			c, _ := p.Socket(netstack.AFInet, netstack.SockStream, 0, 0)
			_ = p.Connect(ctx, c, a)
			ready <- struct{}{}
			_, _ = p.Read(ctx, c, make([]byte, 1)) // blocks until killed
			return 0
		},
	}
	ch, _ := policy.Compile(policy.DenyAll().AllowNet("*", "127.0.0.1:"+strconv.Itoa(port)))
	root := memfs.New(memfs.Options{})
	v, _ := vfs.New(context.Background(), root, vfs.Options{})
	k, err := kernel.New(kernel.Config{VFS: v, Net: kernel.NetConfig{Authorizer: ch}})
	if err != nil {
		t.Fatal(err)
	}
	k.RegisterLoader(progs)
	_ = v.Mkdir(context.Background(), vfs.Root, "/bin", 0o755)
	writeFile(t, v, "/bin/holder", "#!go:holder\n", 0o755)
	for range 4 {
		if _, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/holder"}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			t.Fatal("holders did not get ready")
		}
	}
	if n := k.Net().HostSockets(); n != 40 {
		t.Errorf("%d host sockets, want 40", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := k.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := k.Net().OpenSockets(); n != 0 {
		t.Errorf("%d sockets open after shutdown", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseG+1 || testnet.SocketFDs(t) > baseS { // +1: the server's own per-conn goroutines drain
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines %d (base %d), socket fds %d (base %d)\n%s", runtime.NumGoroutine(), baseG,
				testnet.SocketFDs(t), baseS, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func parseAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
