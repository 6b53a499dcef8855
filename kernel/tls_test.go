package kernel_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/testcert"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// hostTLSEcho serves TLS on the host's loopback: "tls:" and what it read.
func hostTLSEcho(t *testing.T, certPEM, keyPEM []byte) int {
	t.Helper()
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				b, _ := io.ReadAll(io.LimitReader(c, 1<<20))
				_, _ = c.Write(append([]byte("tls:"), b...))
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// tlsRoundTrip connects fd's process to addr, upgrades to TLS with opts,
// sends "hi" and reads the answer to the end.
func tlsRoundTrip(ctx context.Context, p *kernel.Process, addr netstack.Addr, opts kernel.TLSOptions) (kernel.TLSInfo, string, error) {
	fd, err := p.Socket(netstack.AFInet, netstack.SockStream, 0, vfs.O_CLOEXEC)
	if err != nil {
		return kernel.TLSInfo{}, "", err
	}
	defer p.Close(fd)
	if err := p.Connect(ctx, fd, addr); err != nil {
		return kernel.TLSInfo{}, "", err
	}
	info, err := p.StartTLS(ctx, fd, opts)
	if err != nil {
		return info, "", err
	}
	if _, err := p.SendTo(ctx, fd, []byte("hi"), 0, nil); err != nil {
		return info, "", err
	}
	if err := p.Shutdown(fd, netstack.ShutWR); err != nil {
		return info, "", err
	}
	var got []byte
	buf := make([]byte, 512)
	for {
		n, _, err := p.RecvFrom(ctx, fd, buf, 0)
		got = append(got, buf[:n]...)
		if n == 0 || err != nil {
			return info, string(got), err
		}
	}
}

// A guest's TLS client runs on the host's crypto/tls: it verifies the
// server against the trust it is given, reports node's codes for what
// does not verify, and carries plaintext for the guest.
func TestStartTLSClient(t *testing.T) {
	certPEM, keyPEM := testcert.New(t, false)
	port := hostTLSEcho(t, certPEM, keyPEM)
	oldPEM, oldKey := testcert.New(t, true)
	oldPort := hostTLSEcho(t, oldPEM, oldKey)
	type outcome struct {
		info kernel.TLSInfo
		got  string
		err  error
	}
	cases := []struct {
		name string
		port int
		opts kernel.TLSOptions
		code string // "" wants success
		auth bool
	}{
		{"trusted", port, kernel.TLSOptions{ServerName: "localhost", CA: [][]byte{certPEM}, ALPN: []string{"http/1.1"}}, "", true},
		{"host trust store", port, kernel.TLSOptions{ServerName: "localhost"}, "DEPTH_ZERO_SELF_SIGNED_CERT", false},
		{"insecure", port, kernel.TLSOptions{ServerName: "localhost", Insecure: true}, "", false},
		{"wrong name", port, kernel.TLSOptions{ServerName: "example.com", CA: [][]byte{certPEM}}, "ERR_TLS_CERT_ALTNAME_INVALID", false},
		{"name left to the caller", port, kernel.TLSOptions{ServerName: "example.com", NoNameCheck: true, CA: [][]byte{certPEM}}, "", true},
		{"expired", oldPort, kernel.TLSOptions{ServerName: "localhost", CA: [][]byte{oldPEM}}, "CERT_HAS_EXPIRED", false},
		{"at most TLS 1.2", port, kernel.TLSOptions{ServerName: "localhost", CA: [][]byte{certPEM}, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, "", true},
		{"TLS 1.1 to a TLS 1.2 server", port, kernel.TLSOptions{ServerName: "localhost", Insecure: true, MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11},
			"ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION", false},
		{"an empty range", port, kernel.TLSOptions{ServerName: "localhost", Insecure: true, MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS12},
			"ERR_SSL_NO_PROTOCOLS_AVAILABLE", false},
		{"no suite in common", port, kernel.TLSOptions{ServerName: "localhost", Insecure: true, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}, "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE", false},
	}
	results := make([]outcome, len(cases))
	pol := policy.DenyAll().AllowNet(fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("127.0.0.1:%d", oldPort))
	k := newNetKernel(t, kernel.Limits{}, pol, goLoader{
		"client": func(ctx context.Context, p *kernel.Process) int {
			for i, c := range cases {
				addr := netstack.InetAddr(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(c.port)))
				info, got, err := tlsRoundTrip(ctx, p, addr, c.opts)
				results[i] = outcome{info, got, err}
			}
			return 0
		},
	})
	if code := waitCode(t, spawnHost(t, k, "client")); code != 0 {
		t.Fatalf("client exited %d", code)
	}
	for i, c := range cases {
		r := results[i]
		var te *kernel.TLSError
		switch {
		case c.code == "" && (r.err != nil || r.got != "tls:hi"):
			t.Errorf("%s: got %q, %v; want the echo", c.name, r.got, r.err)
		case c.code != "" && (!errors.As(r.err, &te) || te.Code != c.code):
			t.Errorf("%s: err %v, want a TLSError %s", c.name, r.err, c.code)
		case c.code == "" && r.info.Authorized != c.auth:
			t.Errorf("%s: authorized %v (%s), want %v", c.name, r.info.Authorized, r.info.AuthError, c.auth)
		}
	}
	if r := results[0].info; r.Version != "TLSv1.3" || len(r.PeerCerts) != 1 || r.Cipher == "" {
		t.Errorf("session info %+v", r)
	}
	if r := results[6].info; r.Version != "TLSv1.2" || r.Cipher != "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" {
		t.Errorf("TLS 1.2 session: %s %s", r.Version, r.Cipher)
	}
	if r := results[2].info; r.AuthError != "DEPTH_ZERO_SELF_SIGNED_CERT" {
		t.Errorf("insecure session: authorizationError %q", r.AuthError)
	}
}

// guestServer starts a guest program that listens on port and then runs
// serve with the listening descriptor, and waits until it listens; ctx
// (10 s) bounds the embedder's side.
func guestServer(t *testing.T, port int, serve func(ctx context.Context, p *kernel.Process, l int) int) (*kernel.Kernel, *kernel.Process, context.Context) {
	t.Helper()
	ready := make(chan struct{})
	k := newNetKernel(t, kernel.Limits{}, policy.DenyAll().AllowNet(fmt.Sprintf("*:%d", port)), goLoader{
		"server": func(ctx context.Context, p *kernel.Process) int {
			l, _ := p.Socket(netstack.AFInet, netstack.SockStream, 0, vfs.O_CLOEXEC)
			defer close(ready) // also when listening failed: the test must not hang
			if p.Bind(ctx, l, netstack.InetAddr(netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(port)))) != nil || p.Listen(l, 4) != nil {
				return 1
			}
			ready <- struct{}{}
			return serve(ctx, p, l)
		},
	})
	srv := spawnHost(t, k, "server")
	if _, listening := <-ready; !listening {
		t.Fatalf("server exited %d before listening", waitCode(t, srv))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return k, srv, ctx
}

// A guest's TLS server, reached by the embedder through DialGuest.
func TestStartTLSServer(t *testing.T) {
	certPEM, keyPEM := testcert.New(t, false)
	k, srv, ctx := guestServer(t, 8443, func(ctx context.Context, p *kernel.Process, l int) int {
		c, _, err := p.Accept(ctx, l, vfs.O_CLOEXEC)
		if err != nil {
			return 2
		}
		info, err := p.StartTLS(ctx, c, kernel.TLSOptions{Server: true, Cert: certPEM, Key: keyPEM, ALPN: []string{"h2", "http/1.1"}})
		if err != nil || info.ALPN != "http/1.1" || info.ServerName != "localhost" {
			return 3
		}
		buf := make([]byte, 64)
		n, _, err := p.RecvFrom(ctx, c, buf, 0)
		if err != nil {
			return 4
		}
		if _, err := p.SendTo(ctx, c, append([]byte("guest:"), buf[:n]...), 0, nil); err != nil {
			return 5
		}
		_ = p.Close(c)
		return 0
	})
	raw, err := k.DialGuest(ctx, 8443)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	c := tls.Client(raw, &tls.Config{ServerName: "localhost", RootCAs: roots, NextProtos: []string{"http/1.1"}})
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "guest:ping" {
		t.Fatalf("read %q, %v", got, err)
	}
	if code := waitCode(t, srv); code != 0 {
		t.Fatalf("server exited %d", code)
	}
}

// A guest TLS server's failed handshakes carry node's (OpenSSL's) codes:
// bytes that are not TLS, a client that hangs up, a client's alert, and a
// server without a certificate (which still reads the client's hello).
func TestStartTLSServerHandshakeErrors(t *testing.T) {
	certPEM, keyPEM := testcert.New(t, false)
	cases := []struct {
		name   string
		cert   bool
		client func(c net.Conn)
		code   string
	}{
		{"junk", false, func(c net.Conn) { _, _ = c.Write(make([]byte, 512)) }, "ERR_SSL_WRONG_VERSION_NUMBER"},
		{"hang up", true, func(c net.Conn) {}, "ECONNRESET"},
		{"client rejects", true, func(c net.Conn) {
			_ = tls.Client(c, &tls.Config{ServerName: "localhost", RootCAs: x509.NewCertPool()}).Handshake()
		}, "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE"},
		{"no certificate", false, func(c net.Conn) {
			_ = tls.Client(c, &tls.Config{ServerName: "localhost", InsecureSkipVerify: true}).Handshake()
		}, "ERR_SSL_NO_SUITABLE_SIGNATURE_ALGORITHM"},
	}
	errs := make([]error, len(cases))
	k, srv, ctx := guestServer(t, 8444, func(ctx context.Context, p *kernel.Process, l int) int {
		for i, c := range cases {
			fd, _, err := p.Accept(ctx, l, vfs.O_CLOEXEC)
			if err != nil {
				return 2
			}
			opts := kernel.TLSOptions{Server: true}
			if c.cert {
				opts.Cert, opts.Key = certPEM, keyPEM
			}
			_, errs[i] = p.StartTLS(ctx, fd, opts)
			_ = p.Close(fd)
		}
		return 0
	})
	for _, c := range cases {
		raw, err := k.DialGuest(ctx, 8444)
		if err != nil {
			t.Fatal(err)
		}
		c.client(raw)
		raw.Close()
	}
	if code := waitCode(t, srv); code != 0 {
		t.Fatalf("server exited %d", code)
	}
	for i, c := range cases {
		var te *kernel.TLSError
		if !errors.As(errs[i], &te) || te.Code != c.code {
			t.Errorf("%s: err %v, want a TLSError %s", c.name, errs[i], c.code)
		}
	}
}
