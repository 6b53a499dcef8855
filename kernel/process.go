package kernel

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// State is a process's scheduling state as /proc shows it.
type State byte

// Process states.
const (
	StateNew     State = 'N' // created, program not started yet
	StateRunning State = 'R'
	StateStopped State = 'T'
	StateZombie  State = 'Z'
)

// WaitStatus is how a process ended or changed state, as wait(2) reports.
type WaitStatus struct {
	// Exited is set when the process called exit; Code holds the status.
	Exited bool
	Code   int
	// Signal is the signal that killed (or stopped) the process.
	Signal Signal
	// CoreDump is set for signals whose default action dumps core.
	CoreDump bool
	// Stopped and Continued report job-control changes (WUNTRACED,
	// WCONTINUED); the process is still alive.
	Stopped   bool
	Continued bool
}

// ShellCode is the status as a shell shows it in $?: the exit code, or
// 128+n for death by signal n.
func (s WaitStatus) ShellCode() int {
	if s.Exited {
		return s.Code & 0xff
	}
	if s.Signal != 0 {
		return 128 + int(s.Signal)
	}
	return 0
}

// Raw encodes the status as Linux's int wstatus.
func (s WaitStatus) Raw() int {
	switch {
	case s.Stopped:
		return int(s.Signal)<<8 | 0x7f
	case s.Continued:
		return 0xffff
	case s.Exited:
		return (s.Code & 0xff) << 8
	default:
		r := int(s.Signal) & 0x7f
		if s.CoreDump {
			r |= 0x80
		}
		return r
	}
}

// Process is one process of a VM. The syscall layers call its methods on
// behalf of the guest program running in it.
type Process struct {
	k     *Kernel
	pid   int
	start time.Time

	// image is what the process runs: replaced whole by an exec, so
	// readers (/proc, the runtime taking over) need no lock.
	image atomic.Pointer[processImage]

	// caller is the VFS identity (credentials, cwd, umask), replaced
	// whole on chdir and umask so readers need no lock.
	caller atomic.Pointer[vfs.Caller]
	uid    uint32
	gid    uint32

	fds *FDTable

	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the program has returned
	cpu    cpuClock      // see SetCPUClock
	// charged is the finished host work charged to the process (ns);
	// mem the memory its runtime last reported (see budget.go).
	charged atomic.Int64
	mem     atomic.Int64

	sig sigState

	// nice is the scheduling priority setpriority(2) sets (see
	// priority.go), inherited at spawn.
	nice atomic.Int32

	// Guarded by k.mu.
	state      State
	parent     *Process
	children   map[int]*Process
	pgid, sid  int
	status     WaitStatus
	reported   bool // a stop/continue was reported to wait
	hostHandle bool // a host-side handle will reap it
	killSig    Signal
	ctty       *PTY // the controlling terminal, shared by the session
	job        *Job // the lineage; set at spawn, never changed
	ttyShell   bool // see SetTerminalShell
}

// PID returns the process id.
func (p *Process) PID() int { return p.pid }

// PPID returns the parent's pid (0 for init).
func (p *Process) PPID() int {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	if p.parent == nil {
		return 0
	}
	return p.parent.pid
}

// PGID returns the process group id.
func (p *Process) PGID() int {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.pgid
}

// SID returns the session id.
func (p *Process) SID() int {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.sid
}

// State returns the scheduling state.
func (p *Process) State() State {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.state
}

// processImage is the program a process runs, as exec gave it.
type processImage struct {
	argv []string
	env  []string
	exe  string
}

// Argv returns the argument vector. The slice must not be modified.
func (p *Process) Argv() []string { return p.image.Load().argv }

// Environ returns the environment. The slice must not be modified.
func (p *Process) Environ() []string { return p.image.Load().env }

// Exe returns the resolved path of the executable.
func (p *Process) Exe() string { return p.image.Load().exe }

// SetImage records that the process replaced its program by an exec:
// /proc and a runtime taking over see the new executable, arguments and
// environment. Runtimes call it when they carry out an exec.
func (p *Process) SetImage(exe string, argv, env []string) {
	p.image.Store(&processImage{argv: slices.Clone(argv), env: slices.Clone(env), exe: exe})
	// The new program is not the line editor that asked for shelter
	// from the terminal's signals (`exec sleep 100` must die of ^C).
	p.SetTerminalShell(false)
}

// UID returns the user id.
func (p *Process) UID() uint32 { return p.uid }

// GID returns the group id.
func (p *Process) GID() uint32 { return p.gid }

// Start returns when the process was created.
func (p *Process) Start() time.Time { return p.start }

// Kernel returns the kernel the process belongs to.
func (p *Process) Kernel() *Kernel { return p.k }

// FDs returns the descriptor table.
func (p *Process) FDs() *FDTable { return p.fds }

// Context is cancelled when the process is killed; programs run with it,
// so a killed wazero instance or V8 isolate stops at once.
func (p *Process) Context() context.Context { return p.ctx }

// Done is closed when the program has returned and the process exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Caller returns the process's VFS identity.
func (p *Process) Caller() *vfs.Caller { return p.caller.Load() }

// Cwd returns the working directory.
func (p *Process) Cwd() string { return p.caller.Load().Cwd }

// Umask returns the file mode creation mask.
func (p *Process) Umask() uint32 { return p.caller.Load().Umask }

// SetUmask sets the mask and returns the previous one.
func (p *Process) SetUmask(mask uint32) uint32 {
	old := p.caller.Load()
	p.setCaller(old.Cwd, mask&0o777)
	return old.Umask
}

func (p *Process) setCaller(cwd string, umask uint32) {
	p.caller.Store(&vfs.Caller{UID: p.uid, GID: p.gid, Cwd: cwd, Umask: umask})
}

// Chdir changes the working directory to path, which must be a directory
// the process may search.
func (p *Process) Chdir(ctx context.Context, path string) error {
	c := p.Caller()
	real, err := p.k.vfs.Realpath(ctx, c, path)
	if err != nil {
		return errno.Path("chdir", path, errno.Of(err))
	}
	st, err := p.k.vfs.Stat(ctx, c, real)
	if err != nil {
		return errno.Path("chdir", path, errno.Of(err))
	}
	if st.Type() != vfs.TypeDir {
		return errno.Path("chdir", path, errno.ENOTDIR)
	}
	if err := p.k.vfs.Access(ctx, c, real, vfs.AccessExecute); err != nil {
		return errno.Path("chdir", path, errno.Of(err))
	}
	p.setCaller(real, c.Umask)
	return nil
}

// Setpgid moves process pid (0 = p) into group pgid (0 = its own pid),
// as setpgid(2), restricted to p and its children in p's session.
func (p *Process) Setpgid(pid, pgid int) error {
	k := p.k
	k.mu.Lock()
	defer k.mu.Unlock()
	t := p
	if pid != 0 && pid != p.pid {
		c, ok := p.children[pid]
		if !ok {
			return errno.ESRCH
		}
		t = c
	}
	if pgid < 0 {
		return errno.EINVAL
	}
	if pgid == 0 {
		pgid = t.pid
	}
	if t.sid != p.sid || t.pid == t.sid {
		return errno.EPERM
	}
	if pgid != t.pid {
		found := false
		for _, q := range k.procs {
			if q.pgid == pgid && q.sid == t.sid && q.state != StateZombie {
				found = true
				break
			}
		}
		if !found {
			return errno.EPERM
		}
	}
	t.pgid = pgid
	return nil
}

// Setsid makes p the leader of a new session and process group.
func (p *Process) Setsid() (int, error) {
	k := p.k
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, q := range k.procs {
		if q.pgid == p.pid && q != p {
			return -1, errno.EPERM
		}
	}
	if p.pgid == p.pid {
		return -1, errno.EPERM
	}
	p.sid, p.pgid = p.pid, p.pid
	p.ctty = nil
	return p.pid, nil
}

// exit records the final status, closes descriptors, reparents children
// to init and wakes waiters. It runs once, after the program returned.
func (p *Process) exit(status WaitStatus) {
	k := p.k
	p.fds.closeAll()
	k.mu.Lock()
	if p.killSig != 0 {
		status = WaitStatus{Signal: p.killSig, CoreDump: defaultAction(p.killSig) == actionCore}
	}
	p.status = status
	p.state = StateZombie
	for pid, c := range p.children {
		delete(p.children, pid)
		c.parent = k.init
		k.init.children[pid] = c
		if c.state == StateZombie && !c.hostHandle {
			k.reapLocked(c)
		}
	}
	parent := p.parent
	if parent == k.init && !p.hostHandle {
		k.reapLocked(p)
	}
	var lostTTY *PTY
	if p.sid == p.pid && p.ctty != nil {
		lostTTY = p.ctty
	}
	k.broadcastLocked()
	k.mu.Unlock()
	if lostTTY != nil {
		lostTTY.leaderExited(p)
	}
	p.cancel(errExited)
	close(p.done)
	if parent != nil && parent != k.init {
		parent.sendSignal(SIGCHLD, p.pid)
	}
	k.log.Debug("process exited", "pid", p.pid, "code", status.ShellCode())
}

// reapLocked removes a zombie from the table.
func (k *Kernel) reapLocked(c *Process) {
	delete(k.procs, c.pid)
	if c.parent != nil {
		delete(c.parent.children, c.pid)
	}
}

// broadcastLocked wakes every waiter; they re-check their conditions.
func (k *Kernel) broadcastLocked() { k.changed.Broadcast() }

// Wait flags, as waitpid(2) takes them.
const (
	WNOHANG    = 1
	WUNTRACED  = 2
	WCONTINUED = 8
)

// Wait waits for a child as waitpid(2): pid > 0 that child, -1 any child,
// 0 any child in p's process group, < -1 any child in group -pid. With
// WNOHANG it returns pid 0 when no child has changed state. A child that
// exited is reaped.
func (p *Process) Wait(ctx context.Context, pid int, options int) (int, WaitStatus, error) {
	k := p.k
	stop := context.AfterFunc(ctx, func() {
		k.mu.Lock()
		k.broadcastLocked()
		k.mu.Unlock()
	})
	defer stop()
	k.mu.Lock()
	defer k.mu.Unlock()
	for {
		any := false
		for _, c := range p.children {
			if !matchWait(p, c, pid) {
				continue
			}
			any = true
			switch {
			case c.state == StateZombie:
				st := c.status
				k.reapLocked(c)
				return c.pid, st, nil
			case c.state == StateStopped && options&WUNTRACED != 0 && !c.reported:
				c.reported = true
				return c.pid, WaitStatus{Stopped: true, Signal: SIGSTOP}, nil
			case c.status.Continued && options&WCONTINUED != 0 && !c.reported:
				c.reported = true
				return c.pid, WaitStatus{Continued: true}, nil
			}
		}
		if !any {
			return -1, WaitStatus{}, errno.ECHILD
		}
		if options&WNOHANG != 0 {
			return 0, WaitStatus{}, nil
		}
		if ctx.Err() != nil {
			return -1, WaitStatus{}, errno.EINTR
		}
		k.changed.Wait()
	}
}

func matchWait(p, c *Process, pid int) bool {
	switch {
	case pid > 0:
		return c.pid == pid
	case pid == -1:
		return true
	case pid == 0:
		return c.pgid == p.pgid
	default:
		return c.pgid == -pid
	}
}

// HostWait waits until the process exits and returns its status, then
// reaps it. It is the host-side handle of a process the embedder spawned;
// the guest-side equivalent is Wait on the parent.
func (p *Process) HostWait(ctx context.Context) (WaitStatus, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return WaitStatus{}, ctx.Err()
	}
	k := p.k
	k.mu.Lock()
	defer k.mu.Unlock()
	st := p.status
	if p.state == StateZombie {
		if _, ok := k.procs[p.pid]; ok && k.procs[p.pid] == p && (p.parent == k.init || p.parent == nil) {
			k.reapLocked(p)
		}
	}
	return st, nil
}

// ExitStatus returns the status of an exited process; ok is false while it
// runs.
func (p *Process) ExitStatus() (WaitStatus, bool) {
	select {
	case <-p.done:
	default:
		return WaitStatus{}, false
	}
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.status, true
}

// Sleep blocks for d or until the process is interrupted (EINTR).
func (p *Process) Sleep(ctx context.Context, d time.Duration) error {
	if err := p.waitIfStopped(ctx); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return errno.EINTR
	case <-p.ctx.Done():
		return errno.EINTR
	}
}
