package wasm_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/testcert"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// The host_net tests run testdata/netguest, a Go program compiled to
// wasip1 that imports host_net and WASI's socket functions directly and
// calls them against the VM's real network stack. Only loopback
// addresses are ever contacted.

// netguest runs the guest program with args and returns its name=value
// lines.
func (v *testVM) netguest(ctx context.Context, o runOpts, args ...string) (map[string]string, result) {
	v.t.Helper()
	// Written once per VM: rewriting it while another netguest of the
	// test starts makes that start read a changing file (EAGAIN).
	v.netguestOnce.Do(func() {
		v.writeFile("/workspace/netguest.wasm", buildWasm(v.t, "./testdata/netguest"), 0o755)
	})
	r := v.exec(ctx, append([]string{"/workspace/netguest.wasm"}, args...), o)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(r.stdout)), "\n") {
		if k, val, ok := strings.Cut(line, "="); ok {
			got[k] = val
		}
	}
	return got, r
}

// expect compares the guest's lines with want.
func expect(t *testing.T, name string, got, want map[string]string, r result) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s = %q, want %q", name, k, got[k], w)
		}
	}
	if t.Failed() {
		t.Logf("%s: code %d stdout:\n%s\nstderr: %q", name, r.code, r.stdout, r.stderr)
	}
}

// vmSocket makes a socket in the VM's init process bound to addr, for a
// guest to inherit or talk to, and returns it as a file (the descriptor
// is closed) and the port it is bound to.
func (v *testVM) vmSocket(typ netstack.Type, addr string, listen bool) (vfs.File, uint16) {
	v.t.Helper()
	p := v.vm.Kernel.Init()
	fd, err := p.Socket(netstack.AFInet, typ, 0, vfs.O_CLOEXEC)
	if err != nil {
		v.t.Fatal(err)
	}
	defer p.Close(fd)
	if err := p.Bind(context.Background(), fd, netstack.InetAddr(netip.MustParseAddrPort(addr))); err != nil {
		v.t.Fatal(err)
	}
	if listen {
		if err := p.Listen(fd, 16); err != nil {
			v.t.Fatal(err)
		}
	}
	f, err := p.File(fd)
	if err != nil {
		v.t.Fatal(err)
	}
	v.t.Cleanup(func() { f.DecRef() })
	local, err := p.Getsockname(fd)
	if err != nil {
		v.t.Fatal(err)
	}
	return f, local.Port()
}

// Two WebAssembly processes of one VM talk TCP: a server that accepts on
// a listener it inherited (sock_accept, sock_recv, sock_send,
// sock_shutdown) and clients that connect by address and by the name
// "localhost" (net_socket, net_connect, net_send, fd_write, fd_read,
// net_recv, net_close). Nothing reaches the host: the policy allows
// listening on the port and nothing else on the network.
func TestNetGuestToGuest(t *testing.T) {
	v := newVM(t, vm.Config{Policy: policy.AllowAll().DenyNet("*").AllowNet("0.0.0.0:7001")})
	ctx := ctxFor(t, 60*time.Second)
	ln, port := v.vmSocket(netstack.SockStream, "0.0.0.0:7001", true)

	var wg sync.WaitGroup
	var srv map[string]string
	var srvRes result
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv, srvRes = v.netguest(ctx, runOpts{files: []vfs.File{ln}}, "server", "2")
	}()
	for i, c := range []struct{ addr, msg string }{
		{fmt.Sprintf("127.0.0.1:%d", port), "hello"},
		{fmt.Sprintf("localhost:%d", port), "name"},
	} {
		got, r := v.netguest(ctx, runOpts{}, "client", c.addr, c.msg)
		expect(t, c.addr, got, map[string]string{
			"filetype":      "6",
			"connect":       "0",
			"connect_again": "30",
			"send":          fmt.Sprintf("0 %d", (len(c.msg)+1)/2),
			"write":         "0",
			"reply":         fmt.Sprintf("%q 0", strings.ToUpper(c.msg)+"\n"),
			"close":         "0",
			"close_again":   "8",
		}, r)
		if r.code != 0 {
			t.Fatalf("client %d: code %d stderr %q", i, r.code, r.stderr)
		}
	}
	wg.Wait()
	expect(t, "server", srv, map[string]string{
		"listener_filetype": "6",
		"connect_listener":  "28",
		"server_got":        `"name\n"`,
		"server_shutdown":   "0",
		"server_close":      "0",
	}, srvRes)
	if srvRes.code != 0 || !bytes.Contains(srvRes.stdout, []byte(`server_got="hello\n"`)) {
		t.Errorf("server: code %d stdout %q stderr %q", srvRes.code, srvRes.stdout, srvRes.stderr)
	}
}

// hostServer is a TCP server on the host's loopback that answers one line
// per connection upper-cased, and counts the connections it accepted.
func hostServer(t *testing.T) (port int, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil {
					_, _ = c.Write([]byte(strings.ToUpper(line)))
				}
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, accepted
}

// A guest reaches a server on the host's loopback only through a rule
// naming that address and port: blocking and non-blocking (EINPROGRESS,
// poll_oneoff for writability, ISCONN, AGAIN, poll_oneoff for input).
// Without the rule the VM's loopback is the VM itself (CONNREFUSED), and
// the metadata address stays closed even under "*".
func TestNetHostTCP(t *testing.T) {
	port, accepted := hostServer(t)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	ctx := ctxFor(t, 60*time.Second)

	v := newVM(t, vm.Config{Policy: policy.AllowAll().AllowNet(target)})
	got, r := v.netguest(ctx, runOpts{}, "client", target, "hello")
	expect(t, "client", got, map[string]string{
		"filetype": "6",
		"connect":  "0",
		"reply":    `"HELLO\n" 0`,
		"close":    "0",
	}, r)
	// A name goes to the kernel unresolved; "localhost" is the VM's
	// loopback, and the rule naming 127.0.0.1:PORT takes it to the host.
	got, r = v.netguest(ctx, runOpts{}, "client", fmt.Sprintf("localhost:%d", port), "name")
	expect(t, "client by name", got, map[string]string{
		"connect": "0",
		"reply":   `"NAME\n" 0`,
	}, r)
	got, r = v.netguest(ctx, runOpts{}, "nonblock", target, "abc")
	expect(t, "nonblock", got, map[string]string{
		"nonblock_flag": "4",
		"connect":       "26",
		"poll":          "2 0",
		"connect_again": "30",
		"recv_early":    "6",
		"send":          "0 4",
		"reply":         `"ABC\n"`,
		"close":         "0",
	}, r)
	if n := accepted.Load(); n != 3 {
		t.Errorf("host server accepted %d connections, want 3", n)
	}

	before := accepted.Load()
	deny := newVM(t, vm.Config{Policy: policy.AllowAll()})
	got, r = deny.netguest(ctx, runOpts{}, "connect", target, "169.254.169.254:80", fmt.Sprintf("localhost:%d", port))
	expect(t, "without a rule", got, map[string]string{
		target:                            "14",
		"169.254.169.254:80":              "2",
		fmt.Sprintf("localhost:%d", port): "14",
	}, r)
	if n := accepted.Load(); n != before {
		t.Errorf("a connect without a rule reached the host server (%d connections)", n-before)
	}
}

// UDP: a guest's datagram socket (SOCKET_DGRAM in fdstat and filestat)
// exchanges datagrams with a socket of the VM and, through a rule, with a
// server on the host's loopback; sock_recv flags a truncated datagram.
func TestNetUDP(t *testing.T) {
	ctx := ctxFor(t, 60*time.Second)
	hc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := hc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = hc.WriteTo(bytes.ToUpper(buf[:n]), from)
		}
	}()
	hostTarget := hc.LocalAddr().String()
	v := newVM(t, vm.Config{Policy: policy.AllowAll().AllowNet(hostTarget)})

	// The VM's echo: a datagram socket of init, served from Go.
	f, port := v.vmSocket(netstack.SockDgram, "127.0.0.1:0", false)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, from, err := f.(*netstack.Socket).RecvFrom(sctx, buf, 0)
			if err != nil {
				return
			}
			_, _ = f.(*netstack.Socket).SendTo(sctx, bytes.ToUpper(buf[:n]), 0, &from)
		}
	}()
	defer func() { stop(); <-done }()

	for _, target := range []string{fmt.Sprintf("127.0.0.1:%d", port), hostTarget} {
		got, r := v.netguest(ctx, runOpts{}, "udp", target, "hello")
		expect(t, target, got, map[string]string{
			"filetype":      "5",
			"filestat_type": "5",
			"connect":       "0",
			"send":          "0 5",
			"peek":          `"HELLO" 0`,
			"sock_recv":     `"HE" truncated=1`,
			"recv_empty":    "6",
			"close":         "0",
		}, r)
	}
}

// Socket options and time-outs: SO_RCVTIMEO ends a receive with AGAIN
// (net_recv and fd_read), an all-zero timeval clears it, the options of
// the ABI's table are accepted and others refused, and TLS is not
// offered yet.
func TestNetSocketOptions(t *testing.T) {
	v := newVM(t, vm.Config{Limits: kernel.Limits{ConnectTimeout: time.Second}})
	ctx := ctxFor(t, 60*time.Second)
	// A listener nobody accepts from: connections wait in its backlog,
	// connected and silent.
	_, port := v.vmSocket(netstack.SockStream, "127.0.0.1:0", true)
	got, r := v.netguest(ctx, runOpts{}, "timeout", fmt.Sprintf("127.0.0.1:%d", port))
	expect(t, "timeout", got, map[string]string{
		"tls_unconnected":   "8",
		"connect":           "0",
		"keepalive":         "0",
		"keepalive_linux":   "0",
		"nodelay":           "0",
		"tos":               "0",
		"tclass":            "0",
		"opt_empty":         "28",
		"opt_long":          "28",
		"opt_unknown":       "28",
		"opt_sndtimeo":      "28",
		"rcvtimeo_short":    "28",
		"rcvtimeo_bad_usec": "28",
		"rcvtimeo_negative": "28",
		"rcvtimeo_bad_ptr":  "21",
		"rcvtimeo":          "0",
		"recv":              "6",
		"waited":            "true",
		"read":              "6",
		"rcvtimeo_clear":    "0",
		"recv_dontwait":     "6",
		// A silent peer: the handshake ends at the VM's connect
		// time-out (TIMEDOUT), not never.
		"tls":   "73",
		"close": "0",
	}, r)
}

// A guest blocked in net_recv sleeps in the kernel and dies at once when
// it is killed.
func TestNetBlockedGuestKilled(t *testing.T) {
	v := newVM(t, vm.Config{})
	_, port := v.vmSocket(netstack.SockStream, "127.0.0.1:0", true)
	v.writeFile("/workspace/netguest.wasm", buildWasm(t, "./testdata/netguest"), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	got, r := v.netguest(ctx, runOpts{}, "block", fmt.Sprintf("127.0.0.1:%d", port))
	if !r.timedOut || r.code != 137 || got["connect"] != "0" || got["recv"] != "" {
		t.Errorf("blocked guest: timedOut %v code %d stdout %q stderr %q", r.timedOut, r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("killing a blocked guest took %v", d)
	}
	v.usable()
}

// Hostile arguments to every host_net function and to WASI's socket
// functions get the ABI's errno, and the instance carries on.
func TestNetHostileArguments(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	got, r := v.netguest(ctx, runOpts{}, "hostile")
	want := map[string]string{
		"socket_bad_ret":         "21",
		"socket_bad_domain":      "5",
		"socket_bad_type":        "28",
		"socket_bad_flags":       "28",
		"socket_bad_proto":       "66",
		"socket_unix_dgram":      "58",
		"socket_unix_stream":     "0",
		"unix_filetype":          "6",
		"connect_unix_missing":   "44",
		"socket_posix_stream":    "0",
		"posix_filetype":         "6",
		"connect_fd_neg":         "8",
		"connect_fd_huge":        "8",
		"connect_fd_big":         "8",
		"connect_not_socket":     "8",
		"connect_bad_ptr":        "21",
		"connect_len_2g":         "21",
		"connect_too_long":       "28",
		"connect_bad_host":       "28",
		"connect_v6_unbracketed": "28",
		"connect_bad_port":       "21",
		"connect_named_port":     "21",
		"connect_no_port":        "21",
		"connect_nul_inside":     "21",
		"connect_bad_hex":        "28",
		"connect_nul_padded":     "14",
		"send_fd_neg":            "8",
		"send_not_socket":        "8",
		"recv_not_socket":        "8",
		"recv_tagged":            "8",
		"send_bad_buf":           "21",
		"send_len_2g":            "21",
		"send_bad_ret":           "21",
		"recv_bad_buf":           "21",
		"recv_bad_ret":           "21",
		"recv_unconnected":       "53",
		"close_not_socket":       "8",
		"close_neg":              "8",
		"setsockopt_bad_fd":      "8",
		"setsockopt_not_socket":  "8",
		"setsockopt_bad_val":     "21",
		"tls_bad_fd":             "8",
		"tls_bad_ptr":            "21",
		"accept_not_listening":   "28",
		"accept_bad_flags":       "28",
		"accept_not_socket":      "57",
		"accept_bad_ret":         "21",
		"sock_recv_bad_iovs":     "21",
		"sock_recv_bad_flags":    "28",
		"sock_send_not_socket":   "57",
		"shutdown_bad_how":       "28",
		"shutdown_unconnected":   "53",
		"close":                  "0",
		"after_close":            "8",
		"usable":                 "5 0",
	}
	expect(t, "hostile", got, want, r)
	if r.code != 0 || len(got) != len(want) {
		t.Errorf("hostile: code %d, %d results (want %d); stderr %q", r.code, len(got), len(want), r.stderr)
	}
}

// net_tls_connect runs the handshake in the kernel (Go's crypto/tls on the
// host): against a host TLS server with a self-signed certificate it fails
// (FAULT) unless the guest's environment sets
// NODE_TLS_REJECT_UNAUTHORIZED=0, and then carries plaintext both ways.
func TestNetTLSConnect(t *testing.T) {
	cert, err := tls.X509KeyPair(testcert.New(t, false))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(io.LimitReader(c, 1<<10))
				_, _ = c.Write(append([]byte("tls:"), b...))
			}()
		}
	}()
	target := ln.Addr().String()
	v := newVM(t, vm.Config{Policy: policy.AllowAll().AllowNet(target)})
	ctx := ctxFor(t, 60*time.Second)
	got, r := v.netguest(ctx, runOpts{}, "tls", target, "localhost")
	expect(t, "verified", got, map[string]string{"connect": "0", "tls": "21"}, r)
	got, r = v.netguest(ctx, runOpts{env: []string{"NODE_TLS_REJECT_UNAUTHORIZED=0"}}, "tls", target, "localhost")
	expect(t, "unverified allowed", got, map[string]string{"connect": "0", "tls": "0", "send": "0", "shutdown": "0",
		"reply": `"tls:hi" 0`, "close": "0"}, r)
}
