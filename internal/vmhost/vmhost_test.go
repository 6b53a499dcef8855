package vmhost_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmhost/vmhosttest"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

func newHost(t *testing.T) *vmhost.Host {
	t.Helper()
	h, err := vmhost.New(context.Background(), vmhost.Config{Policy: policy.AllowAll(), Runtime: vmhosttest.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func TestRunStdinReachesEOF(t *testing.T) {
	h := newHost(t)
	var out bytes.Buffer
	exit, err := h.Run(context.Background(), vmhost.RunSpec{Argv: []string{"vt-count"},
		Stdin: strings.NewReader("12345"), Stdout: &out})
	if err != nil || exit.Code != 0 || out.String() != "5\n" {
		t.Fatalf("%+v %q %v", exit, out.String(), err)
	}
}

func TestRunEnvPWD(t *testing.T) {
	h := newHost(t)
	var out bytes.Buffer
	_, err := h.Run(context.Background(), vmhost.RunSpec{Argv: []string{"vt-env"},
		Env: []string{"A=1", "PWD=/wrong", "Z=2"}, Cwd: "/tmp", Stdout: &out})
	if err != nil || out.String() != "A=1\nPWD=/tmp\nZ=2\n" {
		t.Fatalf("%q %v", out.String(), err)
	}
}

func TestSpawnAndClose(t *testing.T) {
	h := newHost(t)
	p, err := h.Spawn(context.Background(), vmhost.SpawnSpec{Argv: []string{"vt-echo", "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(p.Stdout())
	st, err := p.Wait(context.Background())
	if string(b) != "hi\n" || err != nil || st.Code != 0 {
		t.Fatalf("%q %+v %v", b, st, err)
	}
	_ = h.Close(context.Background())
	<-h.Done()
	if _, err := h.Stat(context.Background(), "/", true); !errors.Is(err, vmhost.ErrClosed) {
		t.Fatal(err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestReadAtWriteAt: files move in bounded pieces; a piece past the end
// is short, and a device or directory is refused rather than read.
func TestReadAtWriteAt(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	if err := h.WriteFile(ctx, "/tmp/f", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteAt(ctx, "/tmp/f", 0, []byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteAt(ctx, "/tmp/f", 6, []byte("world")); err != nil {
		t.Fatal(err)
	}
	if b, err := h.ReadAt(ctx, "/tmp/f", 3, 100); err != nil || string(b) != "lo world" {
		t.Fatalf("ReadAt: %q %v", b, err)
	}
	if b, err := h.ReadAt(ctx, "/tmp/f", 11, 100); err != nil || len(b) != 0 {
		t.Fatalf("ReadAt at the end: %q %v", b, err)
	}
	if b, err := h.ReadAt(ctx, "/tmp/f", 0, 5); err != nil || string(b) != "hello" {
		t.Fatalf("ReadAt 5: %q %v", b, err)
	}
	if _, err := h.ReadAt(ctx, "/dev/zero", 0, 10); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("ReadAt /dev/zero: %v", err)
	}
	if _, err := h.ReadAt(ctx, "/tmp", 0, 10); !errors.Is(err, errno.EISDIR) {
		t.Fatalf("ReadAt /tmp: %v", err)
	}
	if err := h.WriteAt(ctx, "/dev/null", 0, []byte("x")); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("WriteAt /dev/null: %v", err)
	}
	if err := h.WriteAt(ctx, "/tmp/missing", 0, []byte("x")); !errors.Is(err, errno.ENOENT) {
		t.Fatalf("WriteAt of a missing file: %v", err)
	}
	var tl *vmhost.TooLargeError
	if err := h.WriteAt(ctx, "/tmp/f", 0, make([]byte, vmhost.MaxChunk+1)); !errors.As(err, &tl) {
		t.Fatalf("WriteAt over MaxChunk: %v", err)
	}
}
