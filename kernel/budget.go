package kernel

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

// ErrCPUTime is returned when work is refused because the process's own
// CPU time limit (Limits.CPUTime) is spent; the process is ended with
// SIGXCPU. It wraps ECANCELED.
var ErrCPUTime = fmt.Errorf("kernel: CPU time limit exceeded: %w", errno.ECANCELED)

// ErrVMCPUTime is returned by spawns (and host work) once the VM's CPU
// time budget (Limits.VMCPUTime) is spent. It wraps EAGAIN, which is what
// the guest sees.
var ErrVMCPUTime = fmt.Errorf("kernel: the VM's CPU time budget is spent: %w", errno.EAGAIN)

// ErrVMMemory is returned by spawns while the VM's processes together
// use Limits.VMMemoryBytes. It wraps ENOMEM.
var ErrVMMemory = fmt.Errorf("kernel: the VM's memory limit is reached: %w", errno.ENOMEM)

// budget accounts what all the processes of a VM use together: CPU time
// (their own threads and host work charged to them) and memory.
type budget struct {
	exitedCPU atomic.Int64 // thread CPU (ns) of processes that exited
	hostCPU   atomic.Int64 // finished host work (ns) of any process
	cpuSpent  atomic.Bool  // Limits.VMCPUTime was reached
	mem       atomic.Int64 // memory reported by live processes

	worksMu sync.Mutex
	works   map[*hostWork]struct{} // host work in progress

	// slots bounds the host computations of this VM running at once
	// (see HostWorkSlots).
	slots chan struct{}

	stopOnce sync.Once
	stop     chan struct{} // closed by Shutdown: ends the CPU watcher
}

// hostWork is one computation on a host thread, charged to p as it runs.
type hostWork struct {
	p     *Process
	clock CPUClock
}

func newBudget() budget {
	return budget{
		works: map[*hostWork]struct{}{},
		slots: make(chan struct{}, max(2, runtime.NumCPU())),
		stop:  make(chan struct{}),
	}
}

// HostWorkSlots bounds the expensive host computations (key generation,
// scrypt, compression) done for this VM's guests at once, including those
// still finishing for processes that were killed: send to take a slot,
// receive to give it back. Each VM has its own, so one VM's computations
// never wait for another's.
func (k *Kernel) HostWorkSlots() chan struct{} { return k.budget.slots }

// BeginHostWork starts charging the CPU time of the calling OS thread to
// p, as host work done for p's guest (crypto, compression, TLS). The
// caller must be locked to its OS thread (runtime.LockOSThread) until it
// calls end, which stops the clock and charges what it counted for good.
// While the work runs its CPU time counts already, so the CPU limits end
// the process (and the VM's processes) in time even if the work itself
// cannot be stopped. When p's limit or the VM's budget is spent already,
// nothing starts: the process is ended with SIGXCPU and the error is
// ErrCPUTime or ErrVMCPUTime.
func (p *Process) BeginHostWork() (end func(), err error) {
	if err := p.checkCPU(); err != nil {
		return nil, err
	}
	clock, stop := ThreadCPUClock()
	w := &hostWork{p: p, clock: clock}
	b := &p.k.budget
	b.worksMu.Lock()
	b.works[w] = struct{}{}
	b.worksMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			stop()
			used, _ := clock()
			// Charged before the work is removed, so a concurrent sum
			// may count it twice for a moment but never misses it.
			p.charged.Add(int64(used))
			b.hostCPU.Add(int64(used))
			b.worksMu.Lock()
			delete(b.works, w)
			b.worksMu.Unlock()
			_ = p.checkCPU()
		})
	}, nil
}

// ChargeCPU charges d of CPU time used on the host for p's guest, when
// the work was measured another way than BeginHostWork. Like the limits'
// watchers, it ends the process when its limit or the VM's budget is
// spent.
func (p *Process) ChargeCPU(d time.Duration) {
	if d <= 0 {
		return
	}
	p.charged.Add(int64(d))
	p.k.budget.hostCPU.Add(int64(d))
	_ = p.checkCPU()
}

// checkCPU ends p with SIGXCPU, and returns why, when p's CPU time limit
// or the VM's CPU time budget is spent.
func (p *Process) checkCPU() error {
	k := p.k
	if k.budget.cpuSpent.Load() {
		p.terminate(SIGXCPU)
		return ErrVMCPUTime
	}
	if lim := k.limits.VMCPUTime; lim > 0 && k.CPUUsed() >= lim {
		k.spendVMCPU()
		return ErrVMCPUTime
	}
	if lim := k.limits.CPUTime; lim > 0 {
		if used, ok := p.CPUTime(); ok && used >= lim {
			p.terminate(SIGXCPU)
			return ErrCPUTime
		}
	}
	return nil
}

// hostCPU returns the host work charged to p, in progress included.
func (p *Process) hostCPU() time.Duration {
	d := time.Duration(p.charged.Load())
	b := &p.k.budget
	b.worksMu.Lock()
	for w := range b.works {
		if w.p == p {
			u, _ := w.clock()
			d += u
		}
	}
	b.worksMu.Unlock()
	return d
}

// threadCPU returns the CPU time of p's own program thread.
func (p *Process) threadCPU() (time.Duration, bool) {
	c := p.cpu.Load()
	if c == nil {
		return 0, false
	}
	return (*c)()
}

// CPUUsed returns the CPU time all the VM's processes used so far: their
// own threads and the host work charged to them.
func (k *Kernel) CPUUsed() time.Duration {
	b := &k.budget
	d := time.Duration(b.exitedCPU.Load() + b.hostCPU.Load())
	k.mu.Lock()
	for _, p := range k.procs {
		if p.state != StateZombie {
			if u, ok := p.threadCPU(); ok {
				d += u
			}
		}
	}
	k.mu.Unlock()
	b.worksMu.Lock()
	for w := range b.works {
		u, _ := w.clock()
		d += u
	}
	b.worksMu.Unlock()
	return d
}

// spendVMCPU marks the VM's CPU budget spent and ends every process
// with SIGXCPU; spawns fail from now on.
func (k *Kernel) spendVMCPU() {
	k.mu.Lock()
	k.budget.cpuSpent.Store(true)
	var running []*Process
	for _, p := range k.procs {
		if p != k.init && p.state != StateZombie {
			running = append(running, p)
		}
	}
	k.mu.Unlock()
	for _, p := range running {
		p.terminate(SIGXCPU)
	}
	k.log.Debug("VM CPU time budget spent", "limit", k.limits.VMCPUTime)
}

// watchVMCPU ends the VM's processes once they used Limits.VMCPUTime
// together. The VM's processes use at most about one CPU per host core
// (and host work per slot), so it sleeps for the budget left divided by
// that many: the checks get closer as the budget runs out.
func (k *Kernel) watchVMCPU(limit time.Duration) {
	rate := time.Duration(runtime.NumCPU() + cap(k.budget.slots))
	for {
		used := k.CPUUsed()
		if used >= limit {
			k.spendVMCPU()
			return
		}
		t := time.NewTimer(max((limit-used)/rate, minCPUCheck))
		select {
		case <-k.budget.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// ReportMemory records that p's program uses n bytes now, as its runtime
// measures it (a V8 isolate's heap and external memory, a WebAssembly
// instance's linear memory). When the VM's processes together use more
// than Limits.VMMemoryBytes, the VM's largest process is ended with
// SIGKILL, as the OOM killer would; ReportMemory returns false when that
// is p.
func (p *Process) ReportMemory(n int64) bool {
	n = max(n, 0)
	k := p.k
	total := k.budget.mem.Add(n - p.mem.Swap(n))
	lim := k.limits.VMMemoryBytes
	if lim <= 0 || total <= lim {
		return true
	}
	victim := p
	k.mu.Lock()
	for _, q := range k.procs {
		if q.state == StateZombie {
			continue
		}
		if q.killSig == SIGKILL && q.mem.Load() > 0 && q != p {
			// One is dying already: its memory comes back soon.
			k.mu.Unlock()
			return true
		}
		if q.killSig == 0 && q.mem.Load() > victim.mem.Load() {
			victim = q
		}
	}
	k.mu.Unlock()
	k.log.Debug("VM memory limit reached", "pid", victim.pid, "used", total, "limit", lim)
	victim.terminate(SIGKILL)
	return victim != p
}

// TryMemory is ReportMemory for memory the program is about to take (its
// current use plus an allocation its runtime was told of before making
// it): when that would take the VM's processes together past
// Limits.VMMemoryBytes it records nothing and reports false, and the
// runtime fails the allocation, as a failed allocation fails, instead of
// a process being ended after the memory is spent. Concurrent callers may
// each pass with the VM just under its limit; ReportMemory's kill bounds
// that overshoot.
func (p *Process) TryMemory(n int64) bool {
	n = max(n, 0)
	k := p.k
	lim := k.limits.VMMemoryBytes
	for {
		old := p.mem.Load()
		if lim > 0 && n > old && k.budget.mem.Load()+n-old > lim {
			return false
		}
		if p.mem.CompareAndSwap(old, n) {
			k.budget.mem.Add(n - old)
			return true
		}
	}
}

// MemoryUsed returns the memory the VM's live processes reported.
func (k *Kernel) MemoryUsed() int64 { return k.budget.mem.Load() }

// settleBudget folds an exiting process's CPU time into the VM's and
// releases its memory.
func (p *Process) settleBudget() {
	b := &p.k.budget
	if u, ok := p.threadCPU(); ok {
		b.exitedCPU.Add(int64(u))
	}
	b.mem.Add(-p.mem.Swap(0))
}

// checkSpawnBudget refuses a new process when the VM's CPU budget is
// spent or its memory limit is reached. Called with k.mu held.
func (k *Kernel) checkSpawnBudgetLocked() error {
	if k.budget.cpuSpent.Load() {
		return ErrVMCPUTime
	}
	if lim := k.limits.VMMemoryBytes; lim > 0 && k.budget.mem.Load() >= lim {
		return ErrVMMemory
	}
	return nil
}
