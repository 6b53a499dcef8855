package kernel

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// CPUClock reports the CPU time a process's program has used so far; ok
// is false when it cannot tell.
type CPUClock func() (used time.Duration, ok bool)

// cpuClock is the process's registered CPUClock, if any.
type cpuClock = atomic.Pointer[CPUClock]

// SetCPUClock registers how to read the CPU time of the process's
// program. A runtime that runs the process on an OS thread of its own
// registers ThreadCPUClock; the CPUTime limit then counts CPU time. A
// process without a clock is limited by wall time.
func (p *Process) SetCPUClock(c CPUClock) {
	if c == nil {
		p.cpu.Store(nil)
		return
	}
	p.cpu.Store(&c)
}

// CPUTime returns the CPU time the process used, when its runtime
// registered a clock: its program's thread and the host work charged to
// it (see BeginHostWork).
func (p *Process) CPUTime() (time.Duration, bool) {
	used, ok := p.threadCPU()
	if !ok {
		return 0, false
	}
	return used + p.hostCPU(), true
}

// ThreadCPUClock returns a CPUClock of the calling OS thread, counting
// from now, and stop, which freezes it. The caller must stay locked to
// its thread (runtime.LockOSThread) until it calls stop: after that the
// thread may run other goroutines, which the clock must not count.
func ThreadCPUClock() (clock CPUClock, stop func()) {
	tid := unix.Gettid()
	// Linux's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): a clock of one
	// thread that any thread of the process may read.
	id := int32(^tid<<3 | 6)
	read := func() (time.Duration, bool) {
		var ts unix.Timespec
		if err := unix.ClockGettime(id, &ts); err != nil {
			return 0, false
		}
		return time.Duration(ts.Nano()), true
	}
	base, ok := read()
	if !ok {
		return func() (time.Duration, bool) { return 0, false }, func() {}
	}
	var frozen atomic.Int64 // used + 1 once stopped
	clock = func() (time.Duration, bool) {
		if f := frozen.Load(); f > 0 {
			return time.Duration(f - 1), true
		}
		now, ok := read()
		return now - base, ok
	}
	stop = func() {
		now, ok := read()
		if !ok {
			now = base
		}
		frozen.Store(int64(now-base) + 1)
	}
	return clock, stop
}

// minCPUCheck bounds how often the CPUTime limit is re-checked for a
// process that used less CPU than wall time (it waited).
const minCPUCheck = 10 * time.Millisecond

// watchCPU ends the process with SIGXCPU once it used limit: CPU time
// when its runtime registered a clock, wall time otherwise. CPU time
// never runs ahead of wall time, so the check sleeps for the budget left.
func (p *Process) watchCPU(limit time.Duration) {
	start := time.Now()
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		used := time.Since(start)
		if cpu, ok := p.CPUTime(); ok {
			used = cpu
		}
		if used >= limit {
			p.terminate(SIGXCPU)
			return
		}
		t.Reset(max(limit-used, minCPUCheck))
	}
}
