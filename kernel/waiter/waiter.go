// Package waiter is the kernel's readiness notification: the mechanism by
// which a blocked read, write or poll learns that a pipe, socket or file may
// have changed state. It is modelled on gVisor's waiter package, cut down to
// what secexec needs.
//
// The protocol that keeps wake-ups from being lost is the same everywhere:
// a waiter first registers an Entry with the object's Queue, then checks the
// object's Readiness, and only then sleeps on the Entry's channel. An object
// changes its state first and calls Notify afterwards. Whichever order the
// two sides interleave in, the waiter either sees the new state or receives
// the notification.
package waiter

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
)

// EventMask is a set of readiness events. The values are Linux's poll(2)
// bits, so the syscall layers can pass them through unchanged.
type EventMask uint32

// Readiness events (POLLIN, POLLPRI, POLLOUT, POLLERR, POLLHUP).
const (
	EventIn  EventMask = 0x01 // data can be read without blocking
	EventPri EventMask = 0x02 // exceptional condition (out-of-band data)
	EventOut EventMask = 0x04 // data can be written without blocking
	EventErr EventMask = 0x08 // error condition, e.g. a pipe with no readers
	EventHup EventMask = 0x10 // hang-up, e.g. a pipe with no writers
)

// AllEvents is every event defined above.
const AllEvents = EventIn | EventPri | EventOut | EventErr | EventHup

var eventNames = []struct {
	m    EventMask
	name string
}{
	{EventIn, "In"}, {EventPri, "Pri"}, {EventOut, "Out"}, {EventErr, "Err"}, {EventHup, "Hup"},
}

// String lists the events, e.g. "In|Hup"; unknown bits are shown in hex.
func (m EventMask) String() string {
	if m == 0 {
		return "0"
	}
	var parts []string
	for _, n := range eventNames {
		if m&n.m != 0 {
			parts = append(parts, n.name)
			m &^= n.m
		}
	}
	if m != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint32(m)))
	}
	return strings.Join(parts, "|")
}

// Entry is one registration on one or more Queues: the events it cares
// about and how to tell its owner. Entries are made by NewChannelEntry or
// NewFuncEntry and are immutable, so an Entry may be registered with several
// Queues at once (a pipe's write end registers with the pipe and with the
// VM's pipe-memory budget).
type Entry struct {
	mask EventMask
	ch   chan struct{}
	fn   func(EventMask)
}

// NewChannelEntry returns an Entry that, when notified with an event in
// mask, makes the returned channel readable. The channel has a buffer of one
// and the send never blocks, so many notifications before the owner looks
// collapse into one: the owner must re-check readiness after each receive.
func NewChannelEntry(mask EventMask) (*Entry, <-chan struct{}) {
	ch := make(chan struct{}, 1)
	return &Entry{mask: mask, ch: ch}, ch
}

// NewFuncEntry returns an Entry that calls fn with the notified events
// (intersected with mask). fn runs on the notifying goroutine while the
// Queue's lock is held: it must not block and must not register or
// unregister entries on that Queue. It may be called concurrently by
// different Queues. It exists for poll/epoll-style multiplexers that collect
// ready files into one list.
func NewFuncEntry(mask EventMask, fn func(EventMask)) *Entry {
	return &Entry{mask: mask, fn: fn}
}

// Mask returns the events the entry is interested in.
func (e *Entry) Mask() EventMask { return e.mask }

func (e *Entry) notify(m EventMask) {
	if e.fn != nil {
		e.fn(m)
		return
	}
	select {
	case e.ch <- struct{}{}:
	default: // a wake-up is already pending; one is enough
	}
}

// Queue is the set of entries waiting on one object. The zero value is an
// empty queue ready to use. A Queue must not be copied after first use.
type Queue struct {
	// n mirrors len(entries) so Notify on a queue nobody waits on (the
	// common case for every pipe write and read) costs one atomic load.
	// It is written under mu; see Notify for why the unlocked read is safe.
	n       atomic.Int32
	mu      sync.Mutex
	entries map[*Entry]struct{}
}

// EventRegister adds e to the queue. Registering an entry that is already
// in the queue does nothing. A nil entry is ignored.
func (q *Queue) EventRegister(e *Entry) {
	if e == nil {
		return
	}
	q.mu.Lock()
	if q.entries == nil {
		q.entries = make(map[*Entry]struct{})
	}
	q.entries[e] = struct{}{}
	q.n.Store(int32(len(q.entries)))
	q.mu.Unlock()
}

// EventUnregister removes e from the queue. Removing an entry that is not
// in the queue does nothing.
func (q *Queue) EventUnregister(e *Entry) {
	q.mu.Lock()
	delete(q.entries, e)
	q.n.Store(int32(len(q.entries)))
	if len(q.entries) == 0 {
		// Drop the map so an idle object goes back to costing nothing.
		q.entries = nil
	}
	q.mu.Unlock()
}

// Notify wakes every entry whose mask intersects mask. It never blocks
// (beyond the callbacks of NewFuncEntry entries). Call it after the state
// change is visible to Readiness, and without holding locks that Readiness
// takes.
func (q *Queue) Notify(mask EventMask) {
	// The unlocked check cannot lose a wake-up: a waiter stores n (under
	// mu) before it checks readiness, and the notifier changed state
	// before loading n, so either the waiter's check sees the new state
	// or this load sees the waiter (atomics are sequentially consistent).
	if q.n.Load() == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for e := range q.entries {
		if m := e.mask & mask; m != 0 {
			e.notify(m)
		}
	}
}

// Waitable is anything a thread can wait on: pipe ends, sockets, files.
type Waitable interface {
	// Readiness returns the events in mask that are ready now.
	Readiness(mask EventMask) EventMask
	// EventRegister adds e to the object's waiters.
	EventRegister(e *Entry)
	// EventUnregister removes e from the object's waiters.
	EventUnregister(e *Entry)
}

// Interrupted is the error a blocking kernel operation returns when ctx is
// done: it matches errno.EINTR (so errno.Of reports EINTR to the guest) and
// also ctx's cause, so the kernel can tell a deadline from a signal with
// errors.Is(err, context.DeadlineExceeded).
func Interrupted(ctx context.Context) error {
	return fmt.Errorf("%w: %w", errno.EINTR, context.Cause(ctx))
}

// Wait blocks until w reports one of the events in mask and returns the
// ready events, or returns Interrupted(ctx) once ctx is done. It returns
// at once, without registering, when w is already ready.
func Wait(ctx context.Context, w Waitable, mask EventMask) (EventMask, error) {
	if r := w.Readiness(mask); r != 0 {
		return r, nil
	}
	e, ch := NewChannelEntry(mask)
	w.EventRegister(e)
	defer w.EventUnregister(e)
	for {
		// Re-check after registering: a change between the first check
		// and the registration produced no notification for us.
		if r := w.Readiness(mask); r != 0 {
			return r, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, Interrupted(ctx)
		}
	}
}
