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
