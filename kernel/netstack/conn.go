package netstack

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

// DialGuest connects the embedder to a guest's TCP listener on port, as a
// client on the VM's loopback would (the guest sees the peer
// 127.0.0.1:EPHEMERAL), and returns the connection as a net.Conn with
// deadlines. No policy applies: the embedder is not a guest. It waits for
// room in a full backlog until ctx is done. Errors wrap ECONNREFUSED when
// nothing listens on the port.
func (st *Stack) DialGuest(ctx context.Context, port uint16) (net.Conn, error) {
	ln := st.tcpListener(port, nil)
	st.mu.Lock()
	closed := st.closed
	var client uint16
	var err error
	if !closed && ln != nil {
		// Reserve a port so the guest sees a unique peer address.
		client, err = st.allocPortLocked(protoTCP, 0, nil)
	}
	st.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("netstack: dial guest port %d: %w", port, errno.ENETUNREACH)
	}
	if ln == nil {
		return nil, fmt.Errorf("netstack: dial guest port %d: %w", port, errno.ECONNREFUSED)
	}
	if err != nil {
		return nil, fmt.Errorf("netstack: dial guest port %d: %w", port, err)
	}
	release := func() { st.releasePort(protoTCP, client, nil) }
	ln.mu.Lock()
	lnLocal, listening := ln.local, ln.state == stListening
	ln.mu.Unlock()
	if !listening {
		release()
		return nil, fmt.Errorf("netstack: dial guest port %d: %w", port, errno.ECONNREFUSED)
	}
	ip := loopbackAddrs[0]
	if lnLocal.Family == AFInet6 {
		ip = loopbackAddrs[1]
	}
	remote := netip.AddrPortFrom(ip, port)
	local := netip.AddrPortFrom(ip, client)
	mine, theirs := st.newPair()
	srvLocal := lnLocal
	srvLocal.IP = remote
	if err := ln.enqueue(ctx, pending{ep: theirs, local: srvLocal, peer: InetAddr(local)}, false); err != nil {
		mine.close()
		theirs.close()
		release()
		return nil, fmt.Errorf("netstack: dial guest port %d: %w", port, err)
	}
	return newConn(mine, local, remote, release), nil
}

// conn is the embedder's end of a connection to a guest: a net.Conn over
// an in-memory endpoint.
type conn struct {
	ep            *endpoint
	local, remote net.Addr
	rd, wd        deadline
	closeOnce     sync.Once
	closed        chan struct{}
	onClose       func()
}

func newConn(ep *endpoint, local, remote netip.AddrPort, onClose func()) *conn {
	return &conn{
		ep:      ep,
		local:   net.TCPAddrFromAddrPort(local),
		remote:  net.TCPAddrFromAddrPort(remote),
		rd:      makeDeadline(),
		wd:      makeDeadline(),
		closed:  make(chan struct{}),
		onClose: onClose,
	}
}

func (c *conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

// Read reads what the guest wrote; io.EOF once it shut down or closed.
func (c *conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		select {
		case <-c.closed:
			return 0, c.opErr("read", net.ErrClosed)
		case <-c.rd.wait():
			return 0, c.opErr("read", os.ErrDeadlineExceeded)
		default:
		}
		n, err := c.ep.rx.TryRead(p)
		switch {
		case err == nil && n == 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case err != errno.EAGAIN:
			return 0, c.opErr("read", err)
		}
		if err := c.block(c.ep.rx, waiter.EventIn, &c.rd); err != nil {
			return 0, c.opErr("read", err)
		}
	}
}

// Write writes all of p to the guest, blocking while its buffer is full.
func (c *conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		select {
		case <-c.closed:
			return done, c.opErr("write", net.ErrClosed)
		case <-c.wd.wait():
			return done, c.opErr("write", os.ErrDeadlineExceeded)
		default:
		}
		n, err := c.ep.tx.TryWrite(p[done:])
		done += n
		switch {
		case err == nil:
			continue
		case err != errno.EAGAIN:
			return done, c.opErr("write", err)
		}
		if err := c.block(c.ep.tx, waiter.EventOut, &c.wd); err != nil {
			return done, c.opErr("write", err)
		}
	}
	return done, nil
}

// block waits until w reports mask, the conn closes or the deadline
// passes (those two are reported by the caller's next loop).
func (c *conn) block(w waiter.Waitable, mask waiter.EventMask, d *deadline) error {
	e, ch := waiter.NewChannelEntry(mask)
	w.EventRegister(e)
	defer w.EventUnregister(e)
	if w.Readiness(mask) != 0 {
		return nil
	}
	select {
	case <-ch:
	case <-c.closed:
	case <-d.wait():
	}
	return nil
}

// Close closes both directions.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.ep.close()
		if c.onClose != nil {
			c.onClose()
		}
	})
	return nil
}

// CloseWrite shuts down the writing direction: the guest reads end of
// file.
func (c *conn) CloseWrite() error { return c.ep.tx.Close() }

// CloseRead shuts down the reading direction.
func (c *conn) CloseRead() error { return c.ep.rx.Close() }

// LocalAddr is the embedder's side: 127.0.0.1 (or ::1) and a port
// reserved in the VM's table, which the guest sees as its peer.
func (c *conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr is the guest listener's address.
func (c *conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets both deadlines; calls already blocked see them.
func (c *conn) SetDeadline(t time.Time) error {
	c.rd.set(t)
	c.wd.set(t)
	return nil
}

// SetReadDeadline sets the read deadline.
func (c *conn) SetReadDeadline(t time.Time) error { c.rd.set(t); return nil }

// SetWriteDeadline sets the write deadline.
func (c *conn) SetWriteDeadline(t time.Time) error { c.wd.set(t); return nil }

// deadline is a settable deadline whose wait channel closes when it
// passes; setting a new one affects calls already blocked (net.Conn's
// contract). The shape follows net.Pipe's.
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	cancel chan struct{}
}

func makeDeadline() deadline { return deadline{cancel: make(chan struct{})} }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.cancel // the timer fired and closed cancel; wait is over
	}
	d.timer = nil
	closed := isClosed(d.cancel)
	if t.IsZero() {
		if closed {
			d.cancel = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.cancel = make(chan struct{})
		}
		ch := d.cancel
		d.timer = time.AfterFunc(dur, func() { close(ch) })
		return
	}
	if !closed {
		close(d.cancel)
	}
}

func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancel
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
