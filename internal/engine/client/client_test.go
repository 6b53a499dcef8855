package client

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/vmhost"
)

var token = bytes.Repeat([]byte{7}, proto.TokenSize)

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

// fakeEngine answers the handshake and a CreateVM, then hands each later
// frame to act, which plays a misbehaving engine.
func fakeEngine(t *testing.T, c net.Conn, act func(w *proto.Writer, f proto.Frame)) {
	w, r := proto.NewWriter(c), proto.NewReader(c)
	go func() {
		if _, err := r.Read(); err != nil {
			return
		}
		_ = w.Write(proto.TWelcome, 0, &proto.Welcome{Version: proto.Version})
		for {
			f, err := r.Read()
			if err != nil {
				return
			}
			if f.Type == proto.TCreateVM {
				_ = w.Write(proto.TResponse, f.ID, &proto.Response{VM: 1})
				continue
			}
			act(w, f)
		}
	}()
}

func connect(t *testing.T, act func(w *proto.Writer, f proto.Frame)) (*Conn, *VM) {
	t.Helper()
	a, b := pair(t)
	fakeEngine(t, b, act)
	c, err := Handshake(context.Background(), a, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	v, err := c.NewVM(context.Background(), VMConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return c, v
}

func TestHandshakeRefused(t *testing.T) {
	a, b := pair(t)
	go func() {
		r, w := proto.NewReader(b), proto.NewWriter(b)
		_, _ = r.Read()
		_ = w.WriteLast(proto.TFatal, 0, &proto.Fatal{Err: *proto.ErrorOf(proto.ErrAuth)})
	}()
	if _, err := Handshake(context.Background(), a, token, nil); !errors.Is(err, proto.ErrAuth) {
		t.Fatalf("handshake: %v", err)
	}
}

// A hostile engine (a guest that took it over) must not make the client
// hold more than it allowed, or crash it: the connection is dropped and
// calls fail with ErrLost.
func TestEngineMisbehaves(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(w *proto.Writer, f proto.Frame)
		call func(v *VM) error
	}{
		{"output past credit", func(w *proto.Writer, f proto.Frame) {
			_ = w.Write(proto.TData, f.ID, &proto.Data{Fd: proto.FdStdout, Bytes: make([]byte, proto.Window+1)})
		}, func(v *VM) error {
			_, err := v.Run(context.Background(), vmhost.RunSpec{Argv: []string{"x"}})
			return err
		}},
		{"file past its limit", func(w *proto.Writer, f proto.Frame) {
			_ = w.Write(proto.TData, f.ID, &proto.Data{Fd: proto.FdFile, Bytes: make([]byte, 11)})
		}, func(v *VM) error {
			_, err := v.ReadFile(context.Background(), "/f", 10)
			return err
		}},
		{"inline file past its limit", func(w *proto.Writer, f proto.Frame) {
			_ = w.Write(proto.TResponse, f.ID, &proto.Response{Data: make([]byte, 11)})
		}, func(v *VM) error {
			_, err := v.ReadFile(context.Background(), "/f", 10)
			return err
		}},
		{"request from the engine", func(w *proto.Writer, f proto.Frame) {
			_ = w.Write(proto.TStat, 5, &proto.PathOp{VM: 1, Name: "/"})
		}, func(v *VM) error {
			_, err := v.Stat(context.Background(), "/", true)
			return err
		}},
		{"garbage", func(w *proto.Writer, f proto.Frame) {
			_ = w.Write(proto.TData, f.ID, &proto.Data{Fd: 1}) // fine, then:
			_ = w.Write(proto.TCredit, f.ID, &proto.Credit{Fd: 0, N: 1})
			_ = w.Write(proto.TFatal, 0, &proto.Fatal{Err: proto.Error{Kind: proto.KindProtocol, Msg: "bye"}})
		}, func(v *VM) error {
			_, err := v.Readlink(context.Background(), "/l")
			return err
		}},
		{"engine hangs up", func(w *proto.Writer, f proto.Frame) {
			_ = w.WriteLast(proto.TFatal, 0, &proto.Fatal{Err: *proto.ErrorOf(errors.New("x"))})
		}, func(v *VM) error {
			_, err := v.Spawn(context.Background(), vmhost.SpawnSpec{Argv: []string{"x"}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, v := connect(t, tc.act)
			if err := tc.call(v); !errors.Is(err, ErrLost) {
				t.Fatalf("call: %v", err)
			}
			<-c.Done()
			<-v.Done()
			if !errors.Is(c.Err(), ErrLost) || !errors.Is(v.Err(), ErrLost) {
				t.Fatalf("conn %v, vm %v", c.Err(), v.Err())
			}
			if err := v.Mkdir(context.Background(), "/d", 0o755); !errors.Is(err, ErrLost) {
				t.Fatalf("later call: %v", err)
			}
		})
	}
}

func TestStartRefusesInsideAnEngine(t *testing.T) {
	t.Setenv(proto.EnvMode, proto.ModeValue)
	if _, err := Start(context.Background(), Options{}); !errors.Is(err, ErrNotEngine) {
		t.Fatalf("Start in an engine: %v", err)
	}
}

func TestStartFailsClearly(t *testing.T) {
	// A program that is not an engine: it exits without a handshake.
	_, err := Start(context.Background(), Options{Path: "/bin/true"})
	if err == nil || !errors.Is(err, ErrLost) {
		t.Fatalf("start of a non-engine: %v", err)
	}
	if _, err := Start(context.Background(), Options{Path: "/nonexistent/engine"}); err == nil {
		t.Fatal("start of a missing binary succeeded")
	}
}
