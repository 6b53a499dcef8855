package security_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/setup"
)

// hostile is a hand-driven client connected to a real engine process
// (this test binary re-executed, as client.Start does).
type hostile struct {
	t      *testing.T
	cmd    *exec.Cmd
	c      net.Conn
	w      *proto.Writer
	r      *proto.Reader
	token  []byte
	exited chan struct{} // closed when the engine process was reaped
}

func startEngine(t *testing.T) *hostile {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := setup.DefaultDirs()
	if err != nil {
		t.Fatal(err)
	}
	token := make([]byte, proto.TokenSize)
	_, _ = rand.Read(token)
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "engine")
	// The token travels as the real client sends it: through a pipe at
	// proto.TokenFD, read once by the engine.
	tokR, tokW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokW.Write(token); err != nil {
		t.Fatal(err)
	}
	_ = tokW.Close()
	cmd := exec.Command(exe)
	cmd.Env = append([]string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH"),
		proto.EnvMode + "=" + proto.ModeValue}, dirs.Env()...)
	cmd.ExtraFiles = []*os.File{theirs, tokR}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = theirs.Close()
	_ = tokR.Close()
	c, err := net.FileConn(mine)
	_ = mine.Close()
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{t: t, cmd: cmd, c: c, w: proto.NewWriter(c), r: proto.NewReader(c), token: token, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(h.exited) }()
	t.Cleanup(func() {
		_ = c.Close()
		select {
		case <-h.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("engine still running 10s after its connection closed; stderr %s", stderr.String())
		}
	})
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return h
}

func (h *hostile) send(typ proto.Type, id uint64, body any) {
	h.t.Helper()
	if err := h.w.Write(typ, id, body); err != nil {
		h.t.Fatal(err)
	}
}

func (h *hostile) hello() {
	h.t.Helper()
	h.send(proto.THello, 0, &proto.Hello{Version: proto.Version, Token: h.token})
	f, err := h.r.Read()
	if err != nil || f.Type != proto.TWelcome {
		h.t.Fatalf("hello: %v %v", f.Type, err)
	}
}

// response reads frames until the response to id.
func (h *hostile) response(id uint64) *proto.Response {
	h.t.Helper()
	for {
		f, err := h.r.Read()
		if err != nil {
			h.t.Fatalf("waiting for response %d: %v", id, err)
		}
		if fa, ok := f.Body.(*proto.Fatal); ok {
			h.t.Fatalf("fatal waiting for response %d: %v", id, fa.Err.Err())
		}
		if f.Type == proto.TResponse && f.ID == id {
			return f.Body.(*proto.Response)
		}
	}
}

// fatal reads until a Fatal frame, which must match want, then checks the
// engine closes the connection and exits.
func (h *hostile) fatal(want error, msg string) {
	h.t.Helper()
	var seen []string
	for {
		f, err := h.r.Read()
		if err != nil {
			h.t.Fatalf("connection ended without a Fatal frame (after %v): %v", seen, err)
		}
		if r, ok := f.Body.(*proto.Response); ok && r.Err != nil {
			seen = append(seen, fmt.Sprintf("%s %d: %v", f.Type, f.ID, r.Err.Err()))
		} else {
			seen = append(seen, fmt.Sprintf("%s %d", f.Type, f.ID))
		}
		if fa, ok := f.Body.(*proto.Fatal); ok {
			if err := fa.Err.Err(); !errors.Is(err, want) || !strings.Contains(err.Error(), msg) {
				h.t.Fatalf("fatal %v, want %v with %q", err, want, msg)
			}
			break
		}
	}
	if _, err := h.r.Read(); err == nil {
		h.t.Fatal("connection open after Fatal")
	}
	select {
	case <-h.exited:
	case <-time.After(10 * time.Second):
		h.t.Fatal("engine did not exit after a fatal protocol error")
	}
}

// createVM creates a VM on the connection with request id and returns
// its id.
func (h *hostile) createVM(id uint64, body *proto.CreateVM) uint64 {
	h.t.Helper()
	h.send(proto.TCreateVM, id, body)
	r := h.response(id)
	if r.Err != nil {
		h.t.Fatalf("CreateVM: %v", r.Err.Err())
	}
	return r.VM
}

func frameHeader(n uint32, typ proto.Type, id uint64) []byte {
	b := make([]byte, proto.HeaderSize)
	binary.BigEndian.PutUint32(b, n)
	b[4] = byte(typ)
	binary.BigEndian.PutUint64(b[5:], id)
	return b
}

// A hostile client of a real engine process — garbage, forged tokens,
// oversized and malformed frames, replayed hellos and request ids — gets
// a typed Fatal and its connection (and engine) closed; ids naming
// nothing get typed ErrNoVM answers on a connection that stays usable.
// Engines of other clients never notice.
func TestHostileEngineClient(t *testing.T) {
	// A bystander: a VM in the shared engine process, used before and
	// after every attack.
	bystander := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	check := func(t *testing.T) {
		t.Helper()
		r, err := bystander.Exec(context.Background(), "echo alive", nil)
		if err != nil || string(r.Stdout) != "alive\n" {
			t.Fatalf("bystander VM: %v %+v", err, r)
		}
	}
	check(t)
	fatal := []struct {
		name   string
		attack func(h *hostile)
		want   error
		msg    string
	}{
		{"garbage before hello", func(h *hostile) { _, _ = h.c.Write(bytes.Repeat([]byte{0xff}, 64)) }, proto.ErrProtocol, "frame too large"},
		{"forged token", func(h *hostile) {
			h.send(proto.THello, 0, &proto.Hello{Version: proto.Version, Token: make([]byte, proto.TokenSize)})
		}, proto.ErrAuth, "authentication"},
		{"request before hello", func(h *hostile) { h.send(proto.TCreateVM, 1, &proto.CreateVM{}) }, proto.ErrProtocol, "not Hello"},
		{"oversized frame", func(h *hostile) { h.hello(); _, _ = h.c.Write(frameHeader(proto.MaxFrame+1, proto.TData, 1)) }, proto.ErrProtocol, "frame too large"},
		{"4 GiB frame", func(h *hostile) { h.hello(); _, _ = h.c.Write(frameHeader(0xFFFFFFFF, proto.TWriteFile, 1)) }, proto.ErrProtocol, "frame too large"},
		{"undersized frame", func(h *hostile) { h.hello(); _, _ = h.c.Write(frameHeader(2, proto.TStat, 1)) }, proto.ErrProtocol, "frame too small"},
		{"unknown type", func(h *hostile) { h.hello(); _, _ = h.c.Write(append(frameHeader(10, 200, 1), 0xa0)) }, proto.ErrProtocol, "unknown message type"},
		{"garbage body", func(h *hostile) {
			h.hello()
			_, _ = h.c.Write(append(frameHeader(12, proto.TStat, 1), 0xff, 0xff, 0xff))
		}, proto.ErrProtocol, "Stat"},
		{"engine-only type", func(h *hostile) { h.hello(); h.send(proto.TWelcome, 0, &proto.Welcome{}) }, proto.ErrProtocol, "Welcome from a client"},
		{"replayed hello", func(h *hostile) {
			h.hello()
			h.send(proto.THello, 0, &proto.Hello{Version: proto.Version, Token: h.token})
		}, proto.ErrProtocol, "Hello from a client"},
		{"replayed request id", func(h *hostile) {
			h.hello()
			vm := h.createVM(1, &proto.CreateVM{Permissions: allowAll(h.t)})
			h.send(proto.TRun, 7, &proto.Run{VM: vm, Argv: []string{"sleep", "5"}})
			h.send(proto.TStat, 7, &proto.PathOp{VM: vm, Name: "/"})
		}, proto.ErrProtocol, "request id 7 in use"},
		{"upload larger than announced", func(h *hostile) {
			h.hello()
			vm := h.createVM(1, &proto.CreateVM{})
			h.send(proto.TWriteFile, 2, &proto.WriteFile{VM: vm, Name: "/tmp/x", Size: 4, Data: []byte("ab")})
			h.send(proto.TData, 2, &proto.Data{Fd: proto.FdFile, Bytes: bytes.Repeat([]byte("x"), 1<<20)})
		}, proto.ErrProtocol, "over the announced size"},
	}
	for _, c := range fatal {
		t.Run(c.name, func(t *testing.T) {
			h := startEngine(t)
			c.attack(h)
			h.fatal(c.want, c.msg)
			check(t)
		})
	}
	t.Run("unknown ids", func(t *testing.T) {
		h := startEngine(t)
		h.hello()
		id := uint64(10)
		for _, req := range []struct {
			typ  proto.Type
			body any
		}{
			{proto.TStat, &proto.PathOp{VM: 999, Name: "/"}},
			{proto.TReadFile, &proto.PathOp{VM: 1 << 62, Name: "/etc/passwd", Limit: 100}},
			{proto.TRun, &proto.Run{VM: 0, Argv: []string{"true"}}},
			{proto.TCloseVM, &proto.VMRef{VM: 12345}},
			{proto.TSignal, &proto.Signal{Proc: 424242, Sig: 9}},
			{proto.TSignal, &proto.Signal{Proc: 0, Sig: -1}},
		} {
			id++
			h.send(req.typ, id, req.body)
			if r := h.response(id); r.Err == nil || !errors.Is(r.Err.Err(), proto.ErrNoVM) {
				t.Errorf("%s naming nothing: %+v", req.typ, r.Err)
			}
		}
		// Stream frames for streams that do not exist are dropped.
		h.send(proto.TData, 777, &proto.Data{Fd: proto.FdStdin, Bytes: []byte("x")})
		h.send(proto.TCredit, 778, &proto.Credit{Fd: 1, N: 1 << 16})
		h.send(proto.TCancel, 779, &proto.Cancel{})
		// The connection still works: a VM, a file, a closed VM.
		vm := h.createVM(50, &proto.CreateVM{})
		h.send(proto.TStat, 51, &proto.PathOp{VM: vm, Name: "/tmp"})
		if r := h.response(51); r.Err != nil || r.Stat == nil {
			t.Fatalf("stat after the attacks: %+v", r.Err)
		}
		h.send(proto.TCloseVM, 52, &proto.VMRef{VM: vm})
		if r := h.response(52); r.Err != nil {
			t.Fatalf("close: %v", r.Err.Err())
		}
		// A replayed close names a VM that is gone.
		h.send(proto.TCloseVM, 53, &proto.VMRef{VM: vm})
		if r := h.response(53); r.Err == nil || !errors.Is(r.Err.Err(), proto.ErrNoVM) {
			t.Errorf("replayed CloseVM: %+v", r.Err)
		}
		check(t)
	})
}

func allowAll(t *testing.T) []byte {
	b, err := json.Marshal(secexec.AllowAll())
	if err != nil {
		t.Fatal(err)
	}
	return b
}
