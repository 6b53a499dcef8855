package pipe

import (
	"sync/atomic"

	"github.com/secexec/secexec/kernel/waiter"
)

// Budget is the pipe memory one VM may use beyond the window every pipe is
// guaranteed (MinWindow). All pipes of a VM share one Budget; it is safe for
// concurrent use and costs nothing while idle.
//
// Bytes a pipe holds up to its window are never charged, so a VM whose budget
// is exhausted still has working pipes that merely fill up at 64 KiB, as
// Linux pipes do; only the growth beyond that (which exists so that a shell
// can collect a large command substitution before reading it) competes for
// the budget. The memory bound for a VM is therefore
// Limit + open pipes × MinWindow, plus per-pipe slack of at most two chunks.
type Budget struct {
	limit int64
	used  atomic.Int64
	// q holds writers blocked because the budget ran out, and pollers of
	// write ends; release wakes them, since any pipe's drain may unblock
	// a writer on another pipe.
	q waiter.Queue
}

// NewBudget returns a budget of limit bytes. A limit of zero or less gives a
// budget with no room: every pipe is confined to its window.
func NewBudget(limit int64) *Budget {
	return &Budget{limit: max(limit, 0)}
}

// Limit returns the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Used returns the bytes currently charged. It never exceeds Limit.
func (b *Budget) Used() int64 { return b.used.Load() }

func (b *Budget) available() int64 { return max(b.limit-b.used.Load(), 0) }

// reserve charges between lo and hi bytes (as many as fit, at least lo) and
// returns the amount charged, or 0 when not even lo bytes fit.
func (b *Budget) reserve(lo, hi int64) int64 {
	for {
		used := b.used.Load()
		got := min(hi, b.limit-used)
		if got < lo || got <= 0 {
			return 0
		}
		if b.used.CompareAndSwap(used, used+got) {
			return got
		}
	}
}

// release returns n bytes. The caller must then call wake (outside its own
// locks) so writers blocked on the budget re-check.
func (b *Budget) release(n int64) {
	if n > 0 {
		b.used.Add(-n)
	}
}

func (b *Budget) wake() { b.q.Notify(waiter.EventOut) }
