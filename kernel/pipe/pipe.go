// Package pipe implements POSIX pipes for the secexec kernel: the buffer
// behind pipe(2) and FIFOs, shared by every process that holds an end.
//
// A pipe's buffer grows on demand, chunk by chunk, up to a per-pipe cap
// (DefaultMaxSize, 16 MiB). Growth beyond MinWindow (64 KiB) is charged to a
// Budget shared by all pipes of a VM; when the budget is exhausted a pipe
// behaves like an ordinary Linux pipe that is full at 64 KiB: writers block
// (or get EAGAIN), they never fail. The large cap exists because the brush
// shell reads a command substitution only after the child exits, so a
// 64 KiB pipe would deadlock `x=$(seq 1 20000)`.
//
// Semantics follow pipe(7): writes of at most PipeBuf bytes are atomic;
// reads return what is buffered; a read returns 0 (EOF) once every writer
// has closed and the buffer is drained; a write with no reader fails with
// errno.EPIPE. The pipe only returns EPIPE: raising SIGPIPE is the caller's
// (the kernel's) job. Blocking operations take a context; when it is done
// they return the count moved so far with an error matching errno.EINTR
// (see waiter.Interrupted), which is how the kernel delivers signals and
// kills.
//
// Each open file description holds one Reader or Writer: Pipe.OpenReader
// and Pipe.OpenWriter add a reference, Close drops it. dup shares the
// description and so shares the Reader or Writer; it adds no reference.
package pipe

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

// Sizes, in bytes.
const (
	// PipeBuf is PIPE_BUF: writes of at most this many bytes are atomic.
	PipeBuf = 4096
	// MinWindow is what every pipe may buffer whatever the budget says:
	// Linux's default pipe capacity.
	MinWindow = 64 << 10
	// DefaultMaxSize is the default cap on the bytes one pipe buffers.
	DefaultMaxSize = 16 << 20
	// DefaultBudget is the suggested per-VM Budget limit.
	DefaultBudget = 64 << 20
)

// Options configure a pipe. The zero value gives a pipe of DefaultMaxSize
// with no shared budget.
type Options struct {
	// MaxSize caps the bytes the pipe buffers. Zero or less means
	// DefaultMaxSize; values below PipeBuf are raised to PipeBuf so that
	// an atomic write always fits an empty pipe.
	MaxSize int
	// Budget is the VM's shared pipe memory. Nil means none: the pipe may
	// grow to MaxSize on its own account. A VM should always pass one.
	Budget *Budget
}

// Pipe is the shared buffer and state of one pipe. Its methods are safe for
// concurrent use. A Pipe that never carries data costs a few hundred bytes:
// nothing is allocated until the first write.
type Pipe struct {
	budget  *Budget
	maxSize int
	window  int // bytes buffered free of budget: min(MinWindow, maxSize)

	// q holds blocked readers and writers and pollers of both ends; the
	// event masks tell them apart. Notify is always called after mu is
	// released, so waiter callbacks may call Readiness.
	q waiter.Queue

	mu      sync.Mutex
	buf     buffer
	size    int // bytes buffered
	charged int // bytes charged to budget: max(size-window, 0)
	readers int
	writers int
}

// New returns a pipe with no open ends; see OpenReader and OpenWriter.
func New(opts Options) *Pipe {
	size := opts.MaxSize
	if size <= 0 {
		size = DefaultMaxSize
	}
	size = max(size, PipeBuf)
	return &Pipe{budget: opts.Budget, maxSize: size, window: min(MinWindow, size)}
}

// NewPair creates a pipe and opens both ends, as pipe(2) does.
func NewPair(opts Options) (*Reader, *Writer) {
	p := New(opts)
	return p.OpenReader(), p.OpenWriter()
}

// OpenReader opens a read end: one reference, dropped by its Close.
func (p *Pipe) OpenReader() *Reader {
	p.mu.Lock()
	p.readers++
	p.mu.Unlock()
	// A writer polling for EventErr (no readers) may now see the change.
	p.q.Notify(waiter.EventOut)
	return &Reader{p: p}
}

// OpenWriter opens a write end: one reference, dropped by its Close.
func (p *Pipe) OpenWriter() *Writer {
	p.mu.Lock()
	p.writers++
	p.mu.Unlock()
	p.q.Notify(waiter.EventIn)
	return &Writer{p: p}
}

// Len returns the bytes buffered (FIONREAD).
func (p *Pipe) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size
}

// Cap returns the most bytes the pipe can buffer when the budget allows
// (F_GETPIPE_SZ).
func (p *Pipe) Cap() int { return p.maxSize }

// Readers returns the number of open read ends.
func (p *Pipe) Readers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readers
}

// Writers returns the number of open write ends.
func (p *Pipe) Writers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writers
}

// roomLocked returns how many bytes a write could append now.
func (p *Pipe) roomLocked() int {
	free := p.maxSize - p.size
	if p.budget == nil {
		return free
	}
	// The budget's free space is at most its limit, an int64 that may not
	// fit in int on 32-bit hosts: clamp before converting.
	avail := int(min(p.budget.available(), int64(p.maxSize)))
	return min(free, max(p.window-p.size, 0)+avail)
}

// readOnce moves buffered bytes into dst. It returns errno.EAGAIN when it
// would block and (0, nil) at end of file.
func (p *Pipe) readOnce(dst []byte) (int, error) {
	p.mu.Lock()
	if p.size == 0 {
		eof := p.writers == 0
		p.mu.Unlock()
		if eof {
			return 0, nil
		}
		return 0, errno.EAGAIN
	}
	n := p.buf.read(dst)
	p.size -= n
	released := p.rechargeLocked()
	p.mu.Unlock()

	p.q.Notify(waiter.EventOut)
	if released > 0 {
		p.budget.wake()
	}
	return n, nil
}

// rechargeLocked restores charged == max(size-window, 0) after the buffer
// shrank and returns the bytes given back to the budget.
func (p *Pipe) rechargeLocked() int64 {
	want := max(p.size-p.window, 0)
	released := int64(p.charged - want)
	p.charged = want
	if p.budget == nil {
		return 0
	}
	p.budget.release(released)
	return released
}

// writeOnce appends as much of src as fits now: all of it or nothing when
// atomic. budgetBound reports that the budget, not the pipe's own cap, kept
// bytes out, so the caller knows to wait on the budget too.
func (p *Pipe) writeOnce(src []byte, atomic bool) (n int, budgetBound bool, err error) {
	p.mu.Lock()
	defer func() {
		p.mu.Unlock()
		if n > 0 {
			p.q.Notify(waiter.EventIn)
		}
	}()
	if p.readers == 0 {
		return 0, false, errno.EPIPE
	}
	want := min(len(src), p.maxSize-p.size)
	if want == 0 || (atomic && want < len(src)) {
		return 0, false, nil
	}
	free := min(want, max(p.window-p.size, 0))
	need := want - free
	got := need
	if need > 0 && p.budget != nil {
		lo := int64(0)
		if atomic {
			lo = int64(need)
		}
		got = int(p.budget.reserve(lo, int64(need)))
	}
	n = free + got
	budgetBound = got < need
	if atomic && n < len(src) {
		return 0, budgetBound, nil // got is 0: reserve is all or nothing here
	}
	p.charged += got
	p.buf.write(src[:n])
	p.size += n
	return n, budgetBound, nil
}

// Reader is a read end of a pipe: one open file description's reference.
// Its methods are safe for concurrent use.
type Reader struct {
	p      *Pipe
	closed atomic.Bool
}

// Pipe returns the pipe the end belongs to.
func (r *Reader) Pipe() *Pipe { return r.p }

// TryRead reads without blocking (O_NONBLOCK): it returns what is buffered,
// (0, nil) at end of file, or errno.EAGAIN when the pipe is empty but has
// writers.
func (r *Reader) TryRead(dst []byte) (int, error) {
	if r.closed.Load() {
		return 0, errno.EBADF
	}
	if len(dst) == 0 {
		return 0, nil
	}
	return r.p.readOnce(dst)
}

// TryPeek copies buffered bytes into dst without consuming them (recv with
// MSG_PEEK). Like TryRead it returns (0, nil) at end of file and
// errno.EAGAIN when the pipe is empty but has writers.
func (r *Reader) TryPeek(dst []byte) (int, error) {
	if r.closed.Load() {
		return 0, errno.EBADF
	}
	if len(dst) == 0 {
		return 0, nil
	}
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.size == 0 {
		if p.writers == 0 {
			return 0, nil
		}
		return 0, errno.EAGAIN
	}
	return p.buf.peek(dst), nil
}

// Read reads up to len(dst) bytes, blocking while the pipe is empty and has
// writers. It returns (0, nil) at end of file, and an error matching
// errno.EINTR when ctx is done before any data arrives.
func (r *Reader) Read(ctx context.Context, dst []byte) (int, error) {
	n, err := r.TryRead(dst)
	if err != errno.EAGAIN {
		return n, err
	}
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	r.p.q.EventRegister(e)
	defer r.p.q.EventUnregister(e)
	for {
		// Re-check after registering, then after every wake-up.
		if n, err := r.TryRead(dst); err != errno.EAGAIN {
			return n, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, waiter.Interrupted(ctx)
		}
	}
}

// Close drops the end's reference. When it was the last read end the
// buffered data is discarded (nothing can read it any more; for a FIFO this
// differs from Linux, which keeps it for a later reader) and its memory goes
// back to the budget; writers then get EPIPE. Closing twice is a no-op.
func (r *Reader) Close() error {
	if !r.closed.CompareAndSwap(false, true) {
		return nil
	}
	p := r.p
	p.mu.Lock()
	p.readers--
	last := p.readers == 0
	var released int64
	if last {
		p.buf.reset()
		p.size = 0
		released = p.rechargeLocked()
	}
	p.mu.Unlock()

	// EventIn wakes reads blocked on this very end so they see EBADF.
	mask := waiter.EventIn
	if last {
		mask |= waiter.EventOut | waiter.EventErr
	}
	p.q.Notify(mask)
	if released > 0 {
		p.budget.wake()
	}
	return nil
}

// Readiness reports EventIn when a read would not block (data is buffered
// or no writer is left) and EventHup when no writer is left. Linux reports
// POLLHUP alone for an empty pipe without writers; EventIn is added here so
// in-kernel waiters that wait for EventIn see end of file.
func (r *Reader) Readiness(mask waiter.EventMask) waiter.EventMask {
	p := r.p
	p.mu.Lock()
	size, writers := p.size, p.writers
	p.mu.Unlock()
	var ready waiter.EventMask
	if size > 0 || writers == 0 {
		ready |= waiter.EventIn
	}
	if writers == 0 {
		ready |= waiter.EventHup
	}
	return ready & mask
}

// EventRegister adds e to the pipe's waiters.
func (r *Reader) EventRegister(e *waiter.Entry) { r.p.q.EventRegister(e) }

// EventUnregister removes e from the pipe's waiters.
func (r *Reader) EventUnregister(e *waiter.Entry) { r.p.q.EventUnregister(e) }

// Writer is a write end of a pipe: one open file description's reference.
// Its methods are safe for concurrent use.
type Writer struct {
	p      *Pipe
	closed atomic.Bool
}

// Pipe returns the pipe the end belongs to.
func (w *Writer) Pipe() *Pipe { return w.p }

// TryWrite writes without blocking (O_NONBLOCK). A write of at most PipeBuf
// bytes is all or nothing; a larger one writes what fits. It returns
// errno.EAGAIN when nothing could be written and errno.EPIPE when no read
// end is open.
func (w *Writer) TryWrite(src []byte) (int, error) {
	if w.closed.Load() {
		return 0, errno.EBADF
	}
	if len(src) == 0 {
		return 0, nil
	}
	n, _, err := w.p.writeOnce(src, len(src) <= PipeBuf)
	if n == 0 && err == nil {
		err = errno.EAGAIN
	}
	return n, err
}

// Write writes all of src, blocking while the pipe is full. A write of at
// most PipeBuf bytes is atomic: no other writer's bytes land inside it.
// Larger writes may be interleaved with other writers' at any byte. On
// failure it returns the bytes written so far with errno.EPIPE (the last
// reader closed) or an error matching errno.EINTR (ctx is done).
func (w *Writer) Write(ctx context.Context, src []byte) (int, error) {
	if w.closed.Load() {
		return 0, errno.EBADF
	}
	if len(src) == 0 {
		return 0, nil // as Linux: no EPIPE check for an empty write
	}
	p := w.p
	atomic := len(src) <= PipeBuf
	var (
		done             int
		pipeCh, budgetCh <-chan struct{}
	)
	for {
		n, budgetBound, err := p.writeOnce(src[done:], atomic)
		done += n
		if err != nil || done == len(src) {
			return done, err
		}
		if w.closed.Load() {
			return done, errno.EBADF
		}
		// Register, then go round once more before sleeping: a change
		// between writeOnce and the registration sent no wake-up.
		if pipeCh == nil {
			var e *waiter.Entry
			e, pipeCh = waiter.NewChannelEntry(waiter.EventOut)
			p.q.EventRegister(e)
			defer p.q.EventUnregister(e)
			continue
		}
		if budgetBound && budgetCh == nil {
			// Space freed by any pipe of the VM may unblock us.
			var e *waiter.Entry
			e, budgetCh = waiter.NewChannelEntry(waiter.EventOut)
			p.budget.q.EventRegister(e)
			defer p.budget.q.EventUnregister(e)
			continue
		}
		select {
		case <-pipeCh:
		case <-budgetCh:
		case <-ctx.Done():
			return done, waiter.Interrupted(ctx)
		}
	}
}

// Close drops the end's reference. When it was the last write end, readers
// see end of file once the buffer is drained. Closing twice is a no-op.
func (w *Writer) Close() error {
	if !w.closed.CompareAndSwap(false, true) {
		return nil
	}
	p := w.p
	p.mu.Lock()
	p.writers--
	last := p.writers == 0
	p.mu.Unlock()

	// EventOut wakes writes blocked on this very end so they see EBADF.
	mask := waiter.EventOut
	if last {
		mask |= waiter.EventIn | waiter.EventHup
	}
	p.q.Notify(mask)
	return nil
}

// Readiness reports EventOut when a write of PipeBuf bytes would not block,
// and EventErr (with EventOut: a write fails at once) when no read end is
// open.
func (w *Writer) Readiness(mask waiter.EventMask) waiter.EventMask {
	p := w.p
	p.mu.Lock()
	readers, room := p.readers, p.roomLocked()
	p.mu.Unlock()
	if readers == 0 {
		return (waiter.EventOut | waiter.EventErr) & mask
	}
	if room >= PipeBuf {
		return waiter.EventOut & mask
	}
	return 0
}

// EventRegister adds e to the pipe's waiters, and to the budget's when e
// waits for EventOut, since space freed by another pipe can make this end
// writable.
func (w *Writer) EventRegister(e *waiter.Entry) {
	w.p.q.EventRegister(e)
	if w.p.budget != nil && e != nil && e.Mask()&waiter.EventOut != 0 {
		w.p.budget.q.EventRegister(e)
	}
}

// EventUnregister removes e from the pipe's and the budget's waiters.
func (w *Writer) EventUnregister(e *waiter.Entry) {
	w.p.q.EventUnregister(e)
	if w.p.budget != nil {
		w.p.budget.q.EventUnregister(e)
	}
}
