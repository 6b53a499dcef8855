package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/vmhost/vmhosttest"
)

var allowExec = []byte(`{"exec":[{"effect":"allow","commands":["*"]}]}`)

var token = bytes.Repeat([]byte{0x5a}, proto.TokenSize)

func TestMain(m *testing.M) {
	if os.Getenv(hardenTestEnv) != "" {
		os.Exit(hardenChild())
	}
	os.Exit(m.Run())
}

// pair returns the two ends of a connected, buffered socket pair.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "sock")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := conn(fds[0]), conn(fds[1])
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

// serve starts a server on one end of a new pair and returns the other
// end and the server's result.
func serve(t *testing.T, s *Server) (net.Conn, <-chan error) {
	t.Helper()
	a, b := pair(t)
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(context.Background(), b) }()
	return a, done
}

func newServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Config{Token: token, Runtime: vmhosttest.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// raw is a hand-driven client.
type raw struct {
	t *testing.T
	c net.Conn
	w *proto.Writer
	r *proto.Reader
}

func newRaw(t *testing.T, c net.Conn) *raw {
	return &raw{t: t, c: c, w: proto.NewWriter(c), r: proto.NewReader(c)}
}

func (r *raw) send(typ proto.Type, id uint64, body any) {
	r.t.Helper()
	if err := r.w.Write(typ, id, body); err != nil {
		r.t.Fatal(err)
	}
}

func (r *raw) read() proto.Frame {
	r.t.Helper()
	f, err := r.r.Read()
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return f
}

func (r *raw) hello() {
	r.t.Helper()
	r.send(proto.THello, 0, &proto.Hello{Version: proto.Version, Token: token})
	if f := r.read(); f.Type != proto.TWelcome {
		r.t.Fatalf("got %s, want Welcome", f.Type)
	}
}

// response reads frames until the response to id, returning it and the
// number of Data bytes seen for stream (dataID, fd) on the way.
func (r *raw) response(id, dataID uint64, fd uint8) (*proto.Response, int) {
	r.t.Helper()
	n := 0
	for {
		f := r.read()
		if d, ok := f.Body.(*proto.Data); ok && f.ID == dataID && d.Fd == fd {
			n += len(d.Bytes)
		}
		if f.Type == proto.TResponse && f.ID == id {
			return f.Body.(*proto.Response), n
		}
	}
}

// expectFatal reads a Fatal frame matching want, then the end.
func (r *raw) expectFatal(want error) {
	r.t.Helper()
	for {
		f, err := r.r.Read()
		if err != nil {
			r.t.Fatalf("no Fatal before %v", err)
		}
		if fa, ok := f.Body.(*proto.Fatal); ok {
			if err := fa.Err.Err(); !errors.Is(err, want) {
				r.t.Fatalf("fatal %v, want %v", err, want)
			}
			break
		}
	}
	if _, err := r.r.Read(); err == nil {
		r.t.Fatal("connection still open after Fatal")
	}
}

func TestHelloRefused(t *testing.T) {
	bad := bytes.Repeat([]byte{1}, proto.TokenSize)
	for _, tc := range []struct {
		name string
		typ  proto.Type
		body any
		want error
	}{
		{"bad token", proto.THello, &proto.Hello{Version: proto.Version, Token: bad}, proto.ErrAuth},
		{"bad version", proto.THello, &proto.Hello{Version: proto.Version + 1, Token: token}, proto.ErrAuth},
		{"not a hello", proto.TStat, &proto.PathOp{VM: 1, Name: "/"}, proto.ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, done := serve(t, newServer(t))
			r := newRaw(t, c)
			id := uint64(0)
			if tc.typ.IsRequest() {
				id = 1
			}
			r.send(tc.typ, id, tc.body)
			r.expectFatal(tc.want)
			if err := <-done; !errors.Is(err, tc.want) {
				t.Fatalf("ServeConn: %v", err)
			}
		})
	}
}

func TestOneTimeToken(t *testing.T) {
	s, err := New(Config{Token: token, OneTime: true})
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := serve(t, s)
	newRaw(t, c1).hello()
	c2, done := serve(t, s)
	r := newRaw(t, c2)
	r.send(proto.THello, 0, &proto.Hello{Version: proto.Version, Token: token})
	r.expectFatal(proto.ErrAuth)
	if err := <-done; !errors.Is(err, proto.ErrAuth) {
		t.Fatal(err)
	}
}

func header(n uint32, typ proto.Type, id uint64) []byte {
	b := make([]byte, proto.HeaderSize)
	binary.BigEndian.PutUint32(b, n)
	b[4] = byte(typ)
	binary.BigEndian.PutUint64(b[5:], id)
	return b
}

func TestBadFramesCloseTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  error
	}{
		{"oversized", header(proto.MaxFrame+1, proto.TData, 1), proto.ErrFrameTooLarge},
		{"undersized", header(3, proto.TData, 1), proto.ErrProtocol},
		{"unknown type", append(header(10, 99, 1), 0xa0), proto.ErrUnknownType},
		{"garbage body", append(header(11, proto.TStat, 1), 0xff, 0xee), proto.ErrProtocol},
		{"unknown field", append(header(12, proto.TStat, 1), 0xa1, 0x18, 0x63), proto.ErrProtocol},
		{"engine-only message", append(header(10, proto.TResponse, 1), 0xa0), proto.ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, done := serve(t, newServer(t))
			r := newRaw(t, c)
			r.hello()
			if _, err := c.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			r.expectFatal(proto.ErrProtocol)
			if err := <-done; !errors.Is(err, tc.want) {
				t.Fatalf("ServeConn: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCrossConnectionAccess(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	ca, _ := serve(t, s)
	a, err := client.Handshake(ctx, ca, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	vmA, err := a.NewVM(ctx, client.VMConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := vmA.WriteFile(ctx, "/workspace/secret", []byte("a's"), 0o600); err != nil {
		t.Fatal(err)
	}
	// B, on the same engine, names A's VM: it does not exist for B.
	cb, _ := serve(t, s)
	b := newRaw(t, cb)
	b.hello()
	id := vmA.ID()
	for i, req := range []struct {
		typ  proto.Type
		body any
	}{
		{proto.TReadFile, &proto.PathOp{VM: id, Name: "/workspace/secret", Limit: 100}},
		{proto.TWriteFile, &proto.WriteFile{VM: id, Name: "/workspace/secret", Size: 1, Data: []byte("b")}},
		{proto.TStat, &proto.PathOp{VM: id, Name: "/"}},
		{proto.TRun, &proto.Run{VM: id, Argv: []string{"vt-echo"}}},
		{proto.TSpawn, &proto.Spawn{VM: id, Argv: []string{"vt-sleep"}}},
		{proto.TCloseVM, &proto.VMRef{VM: id}},
		{proto.TSignal, &proto.Signal{Proc: 1, Sig: 9}},
	} {
		rid := uint64(100 + i)
		b.send(req.typ, rid, req.body)
		resp, _ := b.response(rid, 0, 0)
		if !errors.Is(resp.Err.Err(), proto.ErrNoVM) {
			t.Errorf("%s on another connection's VM: %v", req.typ, resp.Err.Err())
		}
	}
	// A's VM is untouched.
	if data, err := vmA.ReadFile(ctx, "/workspace/secret", 100); err != nil || string(data) != "a's" {
		t.Fatalf("A's VM after B's attempts: %q %v", data, err)
	}
}

func TestStdinPastCreditClosesTheConnection(t *testing.T) {
	c, done := serve(t, newServer(t))
	r := newRaw(t, c)
	r.hello()
	r.send(proto.TCreateVM, 1, &proto.CreateVM{Permissions: allowExec})
	resp, _ := r.response(1, 0, 0)
	r.send(proto.TSpawn, 2, &proto.Spawn{VM: resp.VM, Argv: []string{"vt-sleep"}})
	if resp, _ := r.response(2, 0, 0); resp.Err != nil {
		t.Fatal(resp.Err.Err())
	}
	// More than the window at once, whatever the engine had drained
	// into the process's pipe by then, is a violation.
	r.send(proto.TData, 2, &proto.Data{Fd: proto.FdStdin, Bytes: make([]byte, proto.Window+1)})
	r.expectFatal(proto.ErrProtocol)
	if err := <-done; !errors.Is(err, proto.ErrProtocol) {
		t.Fatal(err)
	}
}

func TestOutputWaitsForCredit(t *testing.T) {
	c, _ := serve(t, newServer(t))
	r := newRaw(t, c)
	r.hello()
	r.send(proto.TCreateVM, 1, &proto.CreateVM{Permissions: allowExec})
	resp, _ := r.response(1, 0, 0)
	vmID := resp.VM
	// A guest writing 64 MiB as fast as it can.
	r.send(proto.TSpawn, 2, &proto.Spawn{VM: vmID, Argv: []string{"vt-spew", "67108864"}})
	resp, seen := r.response(2, 2, proto.FdStdout)
	if resp.Err != nil {
		t.Fatal(resp.Err.Err())
	}
	// The engine sends the initial window, then waits: whatever arrives
	// before the answer to a later request is within the credit granted
	// so far, and once credit is granted, that much more arrives.
	granted := proto.Window
	for round := range 4 {
		for seen < granted {
			f := r.read()
			if d, ok := f.Body.(*proto.Data); ok && f.ID == 2 && d.Fd == proto.FdStdout {
				seen += len(d.Bytes)
			}
		}
		ping := uint64(10 + round)
		r.send(proto.TStat, ping, &proto.PathOp{VM: vmID, Name: "/"})
		_, n := r.response(ping, 2, proto.FdStdout)
		seen += n
		if seen != granted {
			t.Fatalf("received %d bytes with %d granted", seen, granted)
		}
		r.send(proto.TCredit, 2, &proto.Credit{Fd: proto.FdStdout, N: 64 << 10})
		granted += 64 << 10
	}
	// Stop reading: the pipe closes and the guest ends.
	r.send(proto.TClose, 2, &proto.Close{Fd: proto.FdStdout})
	for {
		f := r.read()
		if e, ok := f.Body.(*proto.Exit); ok && f.ID == 2 {
			if e.Code == 0 {
				t.Fatalf("writer to a closed stream exited 0")
			}
			return
		}
	}
}

func TestServeEndsAtEOF(t *testing.T) {
	c, done := serve(t, newServer(t))
	r := newRaw(t, c)
	r.hello()
	r.send(proto.TCreateVM, 1, &proto.CreateVM{Permissions: allowExec})
	resp, _ := r.response(1, 0, 0)
	r.send(proto.TSpawn, 2, &proto.Spawn{VM: resp.VM, Argv: []string{"vt-sleep"}})
	r.response(2, 0, 0)
	r.send(proto.TRun, 3, &proto.Run{VM: resp.VM, Argv: []string{"vt-sleep"}})
	_ = c.(*net.UnixConn).CloseWrite()
	// ServeConn returns (nil: a clean end) after closing the VM and with
	// it the sleeping processes.
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
}
