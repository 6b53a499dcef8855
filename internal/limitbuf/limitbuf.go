// Package limitbuf is a byte buffer with a hard size limit, for output
// the host produces for a guest (decompressed data, a child's output):
// it refuses to grow past the limit instead of allocating first and
// checking afterwards.
package limitbuf

import (
	"errors"
)

// ErrLimit is returned by Write when the buffer would pass its limit.
var ErrLimit = errors.New("limitbuf: output larger than its limit")

// Buffer collects bytes up to Max. Its capacity never exceeds Max (plus
// nothing): growth is capped at the limit, not doubled past it.
type Buffer struct {
	buf []byte
	max int
}

// New returns a buffer that holds at most max bytes.
func New(max int) *Buffer { return &Buffer{max: max} }

// Write appends p, or, when that would pass the limit, appends what fits
// and returns ErrLimit.
func (b *Buffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if len(p) > room {
		if room > 0 {
			b.grow(room)
			b.buf = append(b.buf, p[:room]...)
		}
		return max(room, 0), ErrLimit
	}
	b.grow(len(p))
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// grow makes room for n more bytes, doubling but never past the limit.
func (b *Buffer) grow(n int) {
	if len(b.buf)+n <= cap(b.buf) {
		return
	}
	c := min(max(2*cap(b.buf), len(b.buf)+n, 4096), b.max)
	nb := make([]byte, len(b.buf), c)
	copy(nb, b.buf)
	b.buf = nb
}

// Bytes returns the bytes written.
func (b *Buffer) Bytes() []byte { return b.buf }

// Len returns how many bytes were written.
func (b *Buffer) Len() int { return len(b.buf) }

// Reset empties the buffer, keeping its storage and its limit.
func (b *Buffer) Reset() { b.buf = b.buf[:0] }

// Full reports whether the buffer holds its limit.
func (b *Buffer) Full() bool { return len(b.buf) >= b.max }
