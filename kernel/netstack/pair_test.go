package netstack_test

import (
	"context"
	"errors"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/waiter"
)

// A socket pair is connected both ways, unnamed, counted against the
// socket limit, and ends in end of file when one side closes.
func TestSocketPair(t *testing.T) {
	e := newEnv(t, &policy.Policy{}, withLimits(netstack.Limits{Sockets: 3}))
	ctx := context.Background()
	a, b, err := e.st.NewSocketPair(netstack.AFUnix, netstack.SockStream, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(ctx, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := b.Read(ctx, buf); err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if b.Readiness(waiter.EventOut) == 0 || a.Readiness(waiter.EventIn) != 0 {
		t.Fatal("readiness of an idle pair")
	}
	if pa, err := a.PeerAddr(); err != nil || pa.Family != netstack.AFUnix || pa.Path != "" {
		t.Fatalf("peer %+v, %v", pa, err)
	}
	// Two sockets more than the limit allows.
	if _, _, err := e.st.NewSocketPair(netstack.AFUnix, netstack.SockStream, 0, false); !errors.Is(err, errno.ENFILE) {
		t.Fatalf("past the limit: %v", err)
	}
	if e.st.OpenSockets() != 2 {
		t.Fatalf("%d sockets open after a refused pair", e.st.OpenSockets())
	}
	for _, bad := range []struct {
		fam  netstack.Family
		typ  netstack.Type
		want errno.Errno
	}{
		{netstack.AFInet, netstack.SockStream, errno.EOPNOTSUPP},
		{netstack.AFUnix, netstack.SockDgram, errno.EPROTONOSUPPORT},
		{99, netstack.SockStream, errno.EAFNOSUPPORT},
	} {
		if _, _, err := e.st.NewSocketPair(bad.fam, bad.typ, 0, false); !errors.Is(err, bad.want) {
			t.Fatalf("%d/%d: %v, want %v", bad.fam, bad.typ, err, bad.want)
		}
	}
	a.DecRef()
	if n, err := b.Read(ctx, buf); n != 0 || err != nil {
		t.Fatalf("after close: %d, %v", n, err)
	}
	b.DecRef()
	if e.st.OpenSockets() != 0 {
		t.Fatalf("%d sockets open", e.st.OpenSockets())
	}
	// Non-blocking pairs do not wait.
	c, d, err := e.st.NewSocketPair(netstack.AFUnix, netstack.SockStream, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.DecRef()
	defer d.DecRef()
	if _, err := c.Read(ctx, buf); !errors.Is(err, errno.EAGAIN) {
		t.Fatalf("non-blocking read: %v", err)
	}
}
