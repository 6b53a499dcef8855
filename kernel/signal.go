package kernel

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/secexec/secexec/kernel/errno"
)

// Signal is a Linux signal number, 1 to 31.
type Signal int

// Linux signal numbers.
const (
	SIGHUP    Signal = 1
	SIGINT    Signal = 2
	SIGQUIT   Signal = 3
	SIGILL    Signal = 4
	SIGTRAP   Signal = 5
	SIGABRT   Signal = 6
	SIGBUS    Signal = 7
	SIGFPE    Signal = 8
	SIGKILL   Signal = 9
	SIGUSR1   Signal = 10
	SIGSEGV   Signal = 11
	SIGUSR2   Signal = 12
	SIGPIPE   Signal = 13
	SIGALRM   Signal = 14
	SIGTERM   Signal = 15
	SIGSTKFLT Signal = 16
	SIGCHLD   Signal = 17
	SIGCONT   Signal = 18
	SIGSTOP   Signal = 19
	SIGTSTP   Signal = 20
	SIGTTIN   Signal = 21
	SIGTTOU   Signal = 22
	SIGURG    Signal = 23
	SIGXCPU   Signal = 24
	SIGXFSZ   Signal = 25
	SIGVTALRM Signal = 26
	SIGPROF   Signal = 27
	SIGWINCH  Signal = 28
	SIGIO     Signal = 29
	SIGPWR    Signal = 30
	SIGSYS    Signal = 31
)

// NSig is one past the highest signal number.
const NSig = 32

var signalNames = [NSig]string{"", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT",
	"SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
	"SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG",
	"SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"}

// String returns the name, e.g. "SIGTERM".
func (s Signal) String() string {
	if s > 0 && s < NSig {
		return signalNames[s]
	}
	return fmt.Sprintf("signal %d", int(s))
}

// SignalByName returns the signal called name ("TERM" or "SIGTERM").
func SignalByName(name string) (Signal, bool) {
	for i, n := range signalNames {
		if i > 0 && (n == name || n[3:] == name) {
			return Signal(i), true
		}
	}
	return 0, false
}

type action int

const (
	actionTerm action = iota
	actionCore
	actionIgnore
	actionStop
	actionCont
)

func defaultAction(s Signal) action {
	switch s {
	case SIGCHLD, SIGURG, SIGWINCH:
		return actionIgnore
	case SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU:
		return actionStop
	case SIGCONT:
		return actionCont
	case SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS:
		return actionCore
	}
	return actionTerm
}

// Disposition is what a process does with a signal.
type Disposition int

// Dispositions. Guests of the WebAssembly userland never install
// handlers, so everything stays Default there; the JavaScript runtime
// catches signals that have process.on listeners.
const (
	DispositionDefault Disposition = iota
	DispositionIgnore
	DispositionCatch
)

// sigState holds a process's signal mask, dispositions and the caught
// signals not yet taken by its runtime.
type sigState struct {
	mu      sync.Mutex
	blocked uint64
	pending uint64 // blocked signals waiting, and caught ones not taken
	disp    [NSig]Disposition
	notify  chan struct{}
	stopped chan struct{} // non-nil while stopped; closed on continue
}

func bit(s Signal) uint64 { return 1 << uint(s) }

// errExited and the kill causes tell why a process context ended.
var errExited = errors.New("process exited")

// KilledError is the cause of a process context cancelled by a signal.
type KilledError struct{ Signal Signal }

func (e *KilledError) Error() string { return "killed by " + e.Signal.String() }

// Kill sends sig to the processes pid designates, as kill(2): pid > 0 one
// process, 0 the caller's group, -1 every process but init and the
// caller, < -1 group -pid. Signal 0 checks existence only.
func (p *Process) Kill(pid int, sig Signal) error {
	if sig < 0 || sig >= NSig {
		return errno.EINVAL
	}
	k := p.k
	var targets []*Process
	k.mu.Lock()
	switch {
	case pid > 0:
		if t, ok := k.procs[pid]; ok {
			targets = append(targets, t)
		}
	case pid == 0 || pid < -1:
		g := p.pgid
		if pid < -1 {
			g = -pid
		}
		for _, t := range k.procs {
			if t.pgid == g {
				targets = append(targets, t)
			}
		}
	default:
		for _, t := range k.procs {
			if t != k.init && t != p {
				targets = append(targets, t)
			}
		}
	}
	k.mu.Unlock()
	if len(targets) == 0 {
		return errno.ESRCH
	}
	for _, t := range targets {
		if t == k.init {
			// Init ignores signals it has no handler for, as on Linux.
			continue
		}
		if sig != 0 {
			t.sendSignal(sig, p.pid)
		}
	}
	return nil
}

// Signal delivers sig to p itself (the host-side kill of a process).
func (p *Process) Signal(sig Signal) error {
	if sig <= 0 || sig >= NSig {
		return errno.EINVAL
	}
	if p.State() == StateZombie {
		return errno.ESRCH
	}
	p.sendSignal(sig, 0)
	return nil
}

// sendSignal applies sig to p following its mask and dispositions.
func (p *Process) sendSignal(sig Signal, from int) {
	s := &p.sig
	switch sig {
	case SIGKILL:
		p.terminate(sig)
		return
	case SIGSTOP:
		p.stop()
		return
	case SIGCONT:
		p.cont()
	}
	s.mu.Lock()
	if s.blocked&bit(sig) != 0 {
		s.pending |= bit(sig)
		s.mu.Unlock()
		return
	}
	d := s.disp[sig]
	s.mu.Unlock()
	p.act(sig, d)
}

// act carries out an unblocked signal.
func (p *Process) act(sig Signal, d Disposition) {
	switch d {
	case DispositionIgnore:
		return
	case DispositionCatch:
		s := &p.sig
		s.mu.Lock()
		s.pending |= bit(sig)
		ch := s.notify
		s.mu.Unlock()
		if ch != nil {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		return
	}
	switch defaultAction(sig) {
	case actionIgnore, actionCont:
	case actionStop:
		p.stop()
	default:
		p.terminate(sig)
	}
}

// terminate kills the process with sig: its context is cancelled, so its
// program stops at the next check of the engine, and blocking kernel calls
// return EINTR.
func (p *Process) terminate(sig Signal) {
	k := p.k
	k.mu.Lock()
	if p.state == StateZombie || p.killSig != 0 {
		k.mu.Unlock()
		return
	}
	p.killSig = sig
	k.mu.Unlock()
	p.cont()
	if p.cancel != nil {
		p.cancel(&KilledError{Signal: sig})
	}
}

func (p *Process) stop() {
	k := p.k
	k.mu.Lock()
	if p.state != StateRunning {
		k.mu.Unlock()
		return
	}
	p.state = StateStopped
	p.reported = false
	p.status.Continued = false
	k.broadcastLocked()
	k.mu.Unlock()
	p.sig.mu.Lock()
	if p.sig.stopped == nil {
		p.sig.stopped = make(chan struct{})
	}
	p.sig.mu.Unlock()
}

func (p *Process) cont() {
	k := p.k
	k.mu.Lock()
	if p.state == StateStopped {
		p.state = StateRunning
		p.status.Continued = true
		p.reported = false
		k.broadcastLocked()
	}
	k.mu.Unlock()
	p.sig.mu.Lock()
	if p.sig.stopped != nil {
		close(p.sig.stopped)
		p.sig.stopped = nil
	}
	p.sig.mu.Unlock()
}

// waitIfStopped blocks a stopped process at a kernel call until SIGCONT.
// Stopping takes effect at the next kernel call: a guest computing
// without calls into the kernel runs on until it makes one.
func (p *Process) waitIfStopped(ctx context.Context) error {
	p.sig.mu.Lock()
	ch := p.sig.stopped
	p.sig.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return errno.EINTR
	case <-p.ctx.Done():
		return errno.EINTR
	}
}

// Signal mask operations, as sigprocmask(2)'s how.
const (
	SigBlock   = 0
	SigUnblock = 1
	SigSetMask = 2
)

// SigMask changes the blocked set and returns the old one. SIGKILL and
// SIGSTOP cannot be blocked. Signals unblocked while pending are
// delivered now.
func (p *Process) SigMask(how int, set uint64) (uint64, error) {
	s := &p.sig
	set &^= bit(SIGKILL) | bit(SIGSTOP) | 1
	s.mu.Lock()
	old := s.blocked
	switch how {
	case SigBlock:
		s.blocked |= set
	case SigUnblock:
		s.blocked &^= set
	case SigSetMask:
		s.blocked = set
	default:
		s.mu.Unlock()
		return old, errno.EINVAL
	}
	var deliver []Signal
	var disp []Disposition
	for sig := Signal(1); sig < NSig; sig++ {
		b := bit(sig)
		if s.pending&b != 0 && s.blocked&b == 0 && s.disp[sig] != DispositionCatch {
			s.pending &^= b
			deliver = append(deliver, sig)
			disp = append(disp, s.disp[sig])
		}
	}
	s.mu.Unlock()
	for i, sig := range deliver {
		p.act(sig, disp[i])
	}
	return old, nil
}

// SetDisposition sets what p does with sig; SIGKILL and SIGSTOP cannot be
// changed. It returns the previous disposition.
func (p *Process) SetDisposition(sig Signal, d Disposition) (Disposition, error) {
	if sig <= 0 || sig >= NSig || sig == SIGKILL || sig == SIGSTOP {
		return 0, errno.EINVAL
	}
	s := &p.sig
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.disp[sig]
	s.disp[sig] = d
	if d == DispositionIgnore {
		s.pending &^= bit(sig)
	}
	return old, nil
}

// CaughtSignals returns a channel that receives a value whenever a caught
// signal becomes pending; the runtime then calls TakeSignal.
func (p *Process) CaughtSignals() <-chan struct{} {
	s := &p.sig
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notify == nil {
		s.notify = make(chan struct{}, 1)
	}
	return s.notify
}

// TakeSignal removes and returns the lowest pending, unblocked, caught
// signal.
func (p *Process) TakeSignal() (Signal, bool) {
	s := &p.sig
	s.mu.Lock()
	defer s.mu.Unlock()
	for sig := Signal(1); sig < NSig; sig++ {
		b := bit(sig)
		if s.pending&b != 0 && s.blocked&b == 0 && s.disp[sig] == DispositionCatch {
			s.pending &^= b
			return sig, true
		}
	}
	return 0, false
}

// PendingCaught returns the pending signals TakeSignal would return:
// those neither blocked nor left to their default action or ignored.
func (p *Process) PendingCaught() uint64 {
	s := &p.sig
	s.mu.Lock()
	defer s.mu.Unlock()
	var set uint64
	for sig := Signal(1); sig < NSig; sig++ {
		b := bit(sig)
		if s.pending&b != 0 && s.blocked&b == 0 && s.disp[sig] == DispositionCatch {
			set |= b
		}
	}
	return set
}

// Pending returns the set of pending signals.
func (p *Process) Pending() uint64 {
	p.sig.mu.Lock()
	defer p.sig.mu.Unlock()
	return p.sig.pending
}
