// Package flow implements the two halves of a credit-based,
// flow-controlled byte stream of the engine protocol: the receiver's
// bounded Inbox and the sender's Credit. A receiver grants credit only for
// bytes its reader has consumed, so the bytes buffered for a stream never
// exceed the window, however fast the sender (a guest writing output, say)
// produces them.
package flow

import (
	"context"
	"errors"
	"io"
	"sync"
)

// ErrOverflow is returned by Inbox.Push when the sender sent more than
// its credit allowed: a protocol violation.
var ErrOverflow = errors.New("flow: stream sent past its credit")

// ErrClosed is returned by operations on a stream closed by its own side.
var ErrClosed = errors.New("flow: stream closed")

// Inbox is the receiving end of a stream: a queue of at most window
// bytes. Push is called by the connection's reader and never blocks; Read
// blocks until bytes, end of stream or failure.
type Inbox struct {
	window int
	grant  func(n int) // called, outside the lock, as bytes are consumed

	mu     sync.Mutex
	wake   chan struct{} // closed and replaced when state changes
	chunks [][]byte
	off    int // read offset into chunks[0]
	size   int // bytes queued
	eof    bool
	err    error // failure, or ErrClosed after Close
}

// NewInbox returns an Inbox of window bytes. grant (which may be nil) is
// told how many bytes the reader consumed, so it can return that credit
// to the sender; it is not called after end of stream.
func NewInbox(window int, grant func(n int)) *Inbox {
	return &Inbox{window: window, grant: grant, wake: make(chan struct{})}
}

func (b *Inbox) signal() {
	close(b.wake)
	b.wake = make(chan struct{})
}

// Push queues p (which the Inbox keeps; the caller must not reuse it) and,
// with eof, ends the stream. It fails with ErrOverflow if the window would
// be exceeded, and drops p silently once the reader closed the stream.
func (b *Inbox) Push(p []byte, eof bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil || b.eof {
		return nil
	}
	if b.size+len(p) > b.window {
		return ErrOverflow
	}
	if len(p) > 0 {
		b.chunks = append(b.chunks, p)
		b.size += len(p)
	}
	if eof {
		b.eof = true
	}
	b.signal()
	return nil
}

// Fail ends the stream with err: readers get the bytes already queued,
// then err.
func (b *Inbox) Fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil && !b.eof {
		b.err = err
		b.signal()
	}
}

// Close stops reading: queued and later bytes are discarded and Read
// returns ErrClosed.
func (b *Inbox) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = ErrClosed
	}
	b.chunks, b.size, b.off = nil, 0, 0
	b.signal()
}

// Read reads queued bytes, blocking until there are some. It returns
// io.EOF after the last byte of a stream that ended.
func (b *Inbox) Read(p []byte) (int, error) {
	return b.ReadContext(context.Background(), p)
}

// ReadContext is Read that also returns when ctx ends.
func (b *Inbox) ReadContext(ctx context.Context, p []byte) (int, error) {
	for {
		b.mu.Lock()
		if b.size > 0 {
			if len(p) == 0 {
				b.mu.Unlock()
				return 0, nil
			}
			n := 0
			for n < len(p) && len(b.chunks) > 0 {
				c := b.chunks[0][b.off:]
				m := copy(p[n:], c)
				n += m
				if m == len(c) {
					b.chunks[0] = nil
					b.chunks = b.chunks[1:]
					b.off = 0
				} else {
					b.off += m
				}
			}
			b.size -= n
			eof := b.eof
			b.mu.Unlock()
			if b.grant != nil && !eof {
				b.grant(n)
			}
			return n, nil
		}
		if b.err != nil {
			err := b.err
			b.mu.Unlock()
			return 0, err
		}
		if b.eof {
			b.mu.Unlock()
			return 0, io.EOF
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// WriteTo copies the stream to w until its end, implementing
// io.WriterTo. It returns nil at end of stream.
func (b *Inbox) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, 64<<10)
	var total int64
	for {
		n, err := b.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Credit is the sending end's count of bytes it may still send.
type Credit struct {
	mu     sync.Mutex
	wake   chan struct{}
	n      int64
	max    int64
	err    error
	closed bool
}

// NewCredit returns a Credit holding the initial window, which is also
// the most it ever holds: grants beyond it are clipped.
func NewCredit(window int) *Credit {
	return &Credit{n: int64(window), max: int64(window), wake: make(chan struct{})}
}

// Add returns n bytes of credit (a grant from the receiver).
func (c *Credit) Add(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = min(c.n+int64(n), c.max)
	close(c.wake)
	c.wake = make(chan struct{})
}

// Close stops the stream: Take returns err (ErrClosed if nil).
func (c *Credit) Close(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if err == nil {
		err = ErrClosed
	}
	c.closed, c.err = true, err
	close(c.wake)
	c.wake = make(chan struct{})
}

// Err returns the error the stream was closed with, or nil.
func (c *Credit) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Take waits for credit and takes up to want bytes of it, returning how
// many it took (at least 1 when want is positive). A sender that sends
// fewer bytes than it took gives the rest back with Add.
func (c *Credit) Take(ctx context.Context, want int) (int, error) {
	for {
		c.mu.Lock()
		if c.closed {
			err := c.err
			c.mu.Unlock()
			return 0, err
		}
		if c.n > 0 {
			n := int(min(c.n, int64(want)))
			c.n -= int64(n)
			c.mu.Unlock()
			return n, nil
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
