package h2

import (
	"context"
	"io"
	"net"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/vfs"
)

// conn is the guest's socket as the net.Conn x/net/http2 runs on.
// Closing it cancels the blocked reads and writes; the file is released
// once none is in flight, so no call uses a released file.
type conn struct {
	f      vfs.File
	ctx    context.Context
	cancel context.CancelFunc
	gate
	once sync.Once
	done chan struct{}
	err  error // why it ended (nil: closed or EOF); set before done closes
}

func newConn(ctx context.Context, f vfs.File) *conn {
	ctx, cancel := context.WithCancel(ctx)
	return &conn{f: f, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// gate admits operations on something that closes: none begins once it
// closed, and the closer can wait for those that began before.
type gate struct {
	mu     sync.Mutex
	closed bool
	ops    sync.WaitGroup
}

// begin reports whether an operation may start, counting it (ops.Done
// ends it).
func (g *gate) begin() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.ops.Add(1)
	return true
}

// shut closes the gate; it reports whether this call closed it.
func (g *gate) shut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	return true
}

// end records the first reason the connection ended.
func (c *conn) end(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}

func (c *conn) Read(b []byte) (int, error) {
	if !c.begin() {
		return 0, net.ErrClosed
	}
	defer c.ops.Done()
	n, err := c.f.Read(c.ctx, b)
	if c.ctx.Err() != nil {
		return n, net.ErrClosed
	}
	if n == 0 && err == nil && len(b) > 0 {
		err = io.EOF
	}
	if err != nil {
		// x/net's read loop ends with its first error: so does the
		// session.
		if err == io.EOF {
			c.end(nil)
		} else {
			c.end(err)
		}
	}
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	if !c.begin() {
		return 0, net.ErrClosed
	}
	defer c.ops.Done()
	done := 0
	for done < len(b) {
		n, err := c.f.Write(c.ctx, b[done:])
		done += n
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.ErrShortWrite
		}
	}
	return done, nil
}

func (c *conn) Close() error {
	if !c.shut() {
		return nil
	}
	c.cancel()
	c.end(nil)
	go func() {
		c.ops.Wait()
		c.f.DecRef()
	}()
	return nil
}

// The guest's socket has no deadlines of its own: a session is bounded
// by its context and by its owner closing it.
func (c *conn) LocalAddr() net.Addr                { return addr{} }
func (c *conn) RemoteAddr() net.Addr               { return addr{} }
func (c *conn) SetDeadline(_ time.Time) error      { return nil }
func (c *conn) SetReadDeadline(_ time.Time) error  { return nil }
func (c *conn) SetWriteDeadline(_ time.Time) error { return nil }

type addr struct{}

func (addr) Network() string { return "tcp" }
func (addr) String() string  { return "guest-socket" }
