//lint:file-ignore SA1019 the tests drive x/net/http2's ClientConn and Server directly, as the package does.

package h2

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// testLoop is an owner's event loop run by the test goroutine: sessions
// post to it, the test takes events with next and calls the Client's or
// Server's methods between them, as the runtime's loop does.
type testLoop struct {
	t   *testing.T
	ch  chan loopItem
	ops chan error // results of operations started by start
}

type loopItem struct {
	ev  Event
	ack chan struct{}
}

func newTestLoop(t *testing.T) *testLoop {
	return &testLoop{t: t, ch: make(chan loopItem, 4096), ops: make(chan error, 4096)}
}

func (l *testLoop) Post(ctx context.Context, ev Event) bool {
	select {
	case l.ch <- loopItem{ev: ev}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *testLoop) Deliver(ctx context.Context, ev Event) bool {
	ack := make(chan struct{})
	select {
	case l.ch <- loopItem{ev: ev, ack: ack}:
	case <-ctx.Done():
		return false
	}
	select {
	case <-ack:
		return true
	case <-ctx.Done():
		return false
	}
}

// start runs work as an operation whose result arrives on l.ops.
func (l *testLoop) start(work func() error) error {
	go func() { l.ops <- work() }()
	return nil
}

// hangGuard bounds how long a test waits for what must come, so that a
// broken session fails the test instead of hanging it; no test asserts
// on time.
const hangGuard = 60 * time.Second

// next returns the next event accepted by accept (the Client's or
// Server's bookkeeping), copying delivered data as the loop does.
func (l *testLoop) next(accept func(Kind, int) bool) Event {
	l.t.Helper()
	for {
		select {
		case it := <-l.ch:
			h := it.ev.Stream
			if it.ev.Kind == KindSessionEnd || it.ev.Kind == KindServerSessionEnd {
				h = it.ev.Session
			}
			ok := accept(it.ev.Kind, h)
			if it.ack != nil {
				it.ev.Data = append([]byte(nil), it.ev.Data...)
				close(it.ack)
			}
			if ok {
				return it.ev
			}
		case <-time.After(hangGuard):
			l.t.Fatal("no event")
		}
	}
}

// op waits for the result of the next operation.
func (l *testLoop) op() error {
	l.t.Helper()
	select {
	case err := <-l.ops:
		return err
	case <-time.After(hangGuard):
		l.t.Fatal("operation never finished")
	}
	return nil
}

// testNet is a VM's network: a guest listener on port 8080 that the
// host (the test's real HTTP/2 peer) dials.
type testNet struct {
	st *netstack.Stack
	l  *netstack.Socket
}

func newTestNet(t *testing.T, limits netstack.Limits) *testNet {
	t.Helper()
	ch, err := policy.Compile(policy.DenyAll().AllowNet("*:8080"))
	if err != nil {
		t.Fatal(err)
	}
	st := netstack.New(netstack.Config{Authorizer: ch, Limits: limits})
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	l, err := st.NewSocket(netstack.AFInet, netstack.SockStream, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.DecRef() })
	if err := l.Bind(netstack.InetAddr(netip.MustParseAddrPort("0.0.0.0:8080"))); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(512); err != nil {
		t.Fatal(err)
	}
	return &testNet{st: st, l: l}
}

// pair connects the host to the guest: the guest's accepted socket (for
// a session to own) and the host's end.
func (n *testNet) pair(t *testing.T) (vfs.File, net.Conn) {
	t.Helper()
	ctx := context.Background()
	host, err := n.st.DialGuest(ctx, 8080)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	guest, err := n.l.Accept(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	return guest, host
}

// take is a take function handing over f.
func take(f vfs.File) func() (vfs.File, error) {
	return func() (vfs.File, error) { return f, nil }
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}
