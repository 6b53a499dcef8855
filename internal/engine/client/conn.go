package client

import (
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// streamConn is a connection to a guest server through the engine (a Dial
// request): a net.Conn over the request's streams. Deadlines are kept
// by the conn itself; a read or write past one fails with
// os.ErrDeadlineExceeded, as net.Conn requires.
type streamConn struct {
	p             *Process
	local, remote net.Addr
	closeOnce     sync.Once

	mu        sync.Mutex
	rdTimer   *time.Timer
	wrTimer   *time.Timer
	rdExpired bool
	wrExpired bool
}

func newStreamConn(p *Process, port uint16) *streamConn {
	lo := netip.MustParseAddr("127.0.0.1")
	return &streamConn{p: p,
		local:  net.TCPAddrFromAddrPort(netip.AddrPortFrom(lo, 0)),
		remote: net.TCPAddrFromAddrPort(netip.AddrPortFrom(lo, port)),
	}
}

func (c *streamConn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

// Read reads the guest's bytes.
func (c *streamConn) Read(b []byte) (int, error) {
	if c.expired(&c.rdExpired) {
		return 0, c.opErr("read", os.ErrDeadlineExceeded)
	}
	n, err := c.p.stdout.Read(b)
	if err != nil && c.expired(&c.rdExpired) {
		return n, c.opErr("read", os.ErrDeadlineExceeded)
	}
	return n, err
}

// Write sends bytes to the guest.
func (c *streamConn) Write(b []byte) (int, error) {
	if c.expired(&c.wrExpired) {
		return 0, c.opErr("write", os.ErrDeadlineExceeded)
	}
	return c.p.stdin.Write(b)
}

// CloseWrite ends what is sent: the guest reads end of file.
func (c *streamConn) CloseWrite() error { return c.p.stdin.Close() }

// Close ends the connection both ways.
func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		_ = c.p.stdin.Close()
		_ = c.p.stdout.Close()
		_ = c.p.stderr.Close()
		_ = c.p.Signal(15)
	})
	return nil
}

func (c *streamConn) LocalAddr() net.Addr  { return c.local }
func (c *streamConn) RemoteAddr() net.Addr { return c.remote }

func (c *streamConn) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline makes reads fail after t; an expired deadline ends a
// blocked read by closing the read stream, as a socket's would.
func (c *streamConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdExpired = false
	if c.rdTimer != nil {
		c.rdTimer.Stop()
	}
	if !t.IsZero() {
		c.rdTimer = time.AfterFunc(time.Until(t), func() {
			c.mu.Lock()
			c.rdExpired = true
			c.mu.Unlock()
			_ = c.p.stdout.Close()
		})
	}
	return nil
}

// SetWriteDeadline makes writes fail after t.
func (c *streamConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wrExpired = false
	if c.wrTimer != nil {
		c.wrTimer.Stop()
	}
	if !t.IsZero() {
		c.wrTimer = time.AfterFunc(time.Until(t), func() {
			c.mu.Lock()
			c.wrExpired = true
			c.mu.Unlock()
		})
	}
	return nil
}

func (c *streamConn) expired(flag *bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return *flag
}
