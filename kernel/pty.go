package kernel

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/tty"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// PTY is a pseudo-terminal of the VM: a tty.Terminal with the session and
// foreground process group it serves. Its master side is held by the
// host (the SDK, the CLI's shell); its slave side is the guest's
// terminal, /dev/pts/N.
type PTY struct {
	k     *Kernel
	t     *tty.Terminal
	index int
	born  time.Time
	ino   uint64
	files atomic.Int32 // open master and slave files; the last release frees the index

	// Guarded by k.mu.
	sid  int // the session it is the controlling terminal of; 0: none
	fgrp int // the foreground process group
}

// Index returns N of /dev/pts/N.
func (t *PTY) Index() int { return t.index }

// Terminal returns the line discipline.
func (t *PTY) Terminal() *tty.Terminal { return t.t }

// Foreground returns the foreground process group (0 when there is none).
func (t *PTY) Foreground() int {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.fgrp
}

// Resize sets the window size (TIOCSWINSZ on the master); the foreground
// process group gets SIGWINCH when it changed.
func (t *PTY) Resize(rows, cols uint16) { t.t.SetWinsize(tty.Winsize{Rows: rows, Cols: cols}) }

// signalForeground delivers a signal the line discipline raised to the
// foreground process group. A shell that runs the terminal's line editor
// itself (see Process.SetTerminalShell) is spared INTR, QUIT and SUSP: an
// interactive bash catches or ignores them, and the WebAssembly userland
// cannot install handlers, so the kernel does it for the shell.
func (t *PTY) signalForeground(s tty.Signal) {
	k := t.k
	var targets []*Process
	k.mu.Lock()
	if t.fgrp > 0 {
		for _, p := range k.procs {
			if p.pgid != t.fgrp || p.state == StateZombie {
				continue
			}
			if p.ttyShell && s != tty.SIGWINCH {
				continue
			}
			targets = append(targets, p)
		}
	}
	k.mu.Unlock()
	for _, p := range targets {
		p.sendSignal(Signal(s), 0)
	}
}

// hangup is the master's last close: the session loses its terminal and
// its foreground group gets SIGHUP and SIGCONT, as on Linux.
func (t *PTY) hangup() {
	k := t.k
	var targets []*Process
	k.mu.Lock()
	for _, p := range k.procs {
		if p.ctty == t {
			if p.pgid == t.fgrp || p.pid == t.sid {
				targets = append(targets, p)
			}
			p.ctty = nil
		}
	}
	t.sid, t.fgrp = 0, 0
	k.mu.Unlock()
	t.t.CloseMaster()
	for _, p := range targets {
		p.sendSignal(SIGHUP, 0)
		p.sendSignal(SIGCONT, 0)
	}
}

// leaderExited detaches the terminal from the session whose leader
// exited; its foreground group gets SIGHUP and SIGCONT, as on Linux, so
// jobs left on the terminal do not outlive the shell.
func (t *PTY) leaderExited(leader *Process) {
	k := t.k
	var targets []*Process
	k.mu.Lock()
	if t.sid != leader.sid {
		k.mu.Unlock()
		return
	}
	for _, p := range k.procs {
		if p.ctty != t {
			continue
		}
		if p.pgid == t.fgrp && p != leader && p.state != StateZombie {
			targets = append(targets, p)
		}
		p.ctty = nil
	}
	t.sid, t.fgrp = 0, 0
	k.mu.Unlock()
	for _, p := range targets {
		p.sendSignal(SIGHUP, 0)
		p.sendSignal(SIGCONT, 0)
	}
}

// NewPTY allocates a pseudo-terminal of the given size and returns its
// master and slave files (one reference each) and the PTY. The VM's PTY
// limit (Limits.PTYs) applies: EAGAIN beyond it.
func (k *Kernel) NewPTY(ws tty.Winsize) (master, slave vfs.File, pty *PTY, err error) {
	m, t, err := k.newPTY(ws, false)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, t.newSlaveFile(vfs.O_RDWR), t, nil
}

// newPTY makes a terminal and its master file; with masterOnly (a
// /dev/ptmx open) no slave file is open yet.
func (k *Kernel) newPTY(ws tty.Winsize, masterOnly bool) (*ptyMaster, *PTY, error) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, nil, ErrClosed
	}
	if len(k.ptys) >= k.limits.PTYs {
		k.mu.Unlock()
		return nil, nil, fmt.Errorf("pty: %d terminals: %w", k.limits.PTYs, errno.EAGAIN)
	}
	idx := 0
	for k.ptys[idx] != nil {
		idx++
	}
	t := &PTY{k: k, index: idx, born: k.clock.Now(), ino: k.nextIno.Add(1)}
	k.ptys[idx] = t
	k.mu.Unlock()
	t.t = tty.New(tty.Config{Size: ws, Signal: t.signalForeground, SlaveClosed: masterOnly})
	if masterOnly {
		t.files.Store(1)
	} else {
		t.files.Store(2)
	}
	m := &ptyMaster{pty: t}
	m.flags.Store(uint32(vfs.O_RDWR))
	m.InitRefs(func() { t.hangup(); t.release() })
	return m, t, nil
}

// newSlaveFile makes an open file of the slave side; the caller has
// counted it in t.files and the terminal's slaves.
func (t *PTY) newSlaveFile(flags vfs.OpenFlags) *ptySlave {
	s := &ptySlave{pty: t}
	s.flags.Store(uint32(flags &^ (vfs.O_CREAT | vfs.O_EXCL | vfs.O_TRUNC | vfs.O_NOCTTY | vfs.O_CLOEXEC | vfs.O_NOFOLLOW)))
	s.InitRefs(func() { t.t.CloseSlave(); t.release() })
	return s
}

// release drops one open file of t; the last frees its index.
func (t *PTY) release() {
	if t.files.Add(-1) == 0 {
		t.k.mu.Lock()
		delete(t.k.ptys, t.index)
		t.k.mu.Unlock()
	}
}

// PTYOf returns the PTY a master or slave file belongs to.
func PTYOf(f vfs.File) (*PTY, bool) {
	switch f := f.(type) {
	case *ptyMaster:
		return f.pty, true
	case *ptySlave:
		return f.pty, true
	}
	return nil, false
}

// setControllingTerminal makes the session led by leader own t, with
// leader's group in the foreground. The caller holds k.mu.
func (k *Kernel) setControllingTerminalLocked(leader *Process, t *PTY) error {
	if leader.sid != leader.pid {
		return errno.EPERM
	}
	if t.sid != 0 && t.sid != leader.sid {
		return errno.EPERM
	}
	t.sid, t.fgrp = leader.sid, leader.pgid
	leader.ctty = t
	return nil
}

// ControllingTerminal returns the process's controlling terminal.
func (p *Process) ControllingTerminal() (*PTY, bool) {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.ctty, p.ctty != nil
}

// SetTerminalShell marks p as the shell that edits lines on its
// terminal itself (it switched the terminal to raw mode): the signal
// characters then reach the jobs it runs in the foreground but not the
// shell, as an interactive POSIX shell arranges with handlers.
func (p *Process) SetTerminalShell(on bool) {
	p.k.mu.Lock()
	p.ttyShell = on
	p.k.mu.Unlock()
}

// terminalFD returns the PTY behind descriptor fd, or ENOTTY.
func (p *Process) terminalFD(fd int) (*PTY, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	t, ok := PTYOf(f)
	if !ok {
		return nil, errno.ENOTTY
	}
	return t, nil
}

// Tcgetpgrp returns the foreground process group of the terminal fd,
// which must be p's controlling terminal (ENOTTY otherwise).
func (p *Process) Tcgetpgrp(fd int) (int, error) {
	t, err := p.terminalFD(fd)
	if err != nil {
		return 0, err
	}
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	if p.ctty != t {
		return 0, errno.ENOTTY
	}
	return t.fgrp, nil
}

// Tcsetpgrp puts process group pgid of p's session in the foreground of
// p's controlling terminal fd, as tcsetpgrp(3). A background caller gets
// SIGTTOU unless it ignores or blocks it.
func (p *Process) Tcsetpgrp(fd, pgid int) error {
	t, err := p.terminalFD(fd)
	if err != nil {
		return err
	}
	k := p.k
	k.mu.Lock()
	if p.ctty != t || t.sid != p.sid {
		k.mu.Unlock()
		return errno.ENOTTY
	}
	if pgid <= 0 {
		k.mu.Unlock()
		return errno.EINVAL
	}
	found := false
	for _, q := range k.procs {
		if q.pgid == pgid && q.state != StateZombie {
			if q.sid != p.sid {
				k.mu.Unlock()
				return errno.EPERM
			}
			found = true
		}
	}
	if !found {
		k.mu.Unlock()
		return errno.EPERM
	}
	background := p.pgid != t.fgrp
	k.mu.Unlock()
	if background && !p.signalIgnoredOrBlocked(SIGTTOU) {
		_ = p.Kill(-p.PGID(), SIGTTOU)
		return errno.EINTR
	}
	k.mu.Lock()
	t.fgrp = pgid
	k.mu.Unlock()
	return nil
}

// TerminalSize returns the window size of the terminal fd.
func (p *Process) TerminalSize(fd int) (tty.Winsize, error) {
	t, err := p.terminalFD(fd)
	if err != nil {
		return tty.Winsize{}, err
	}
	return t.t.Winsize(), nil
}

// TerminalAttr returns the mode of the terminal fd (tcgetattr).
func (p *Process) TerminalAttr(fd int) (tty.Termios, error) {
	t, err := p.terminalFD(fd)
	if err != nil {
		return tty.Termios{}, err
	}
	return t.t.Termios(), nil
}

// SetTerminalAttr sets the mode of the terminal fd (tcsetattr), after
// discarding its unread input when flush is set (TCSAFLUSH). As on Linux,
// a background process changing its controlling terminal's mode gets
// SIGTTOU unless it ignores or blocks it.
func (p *Process) SetTerminalAttr(ctx context.Context, fd int, tm tty.Termios, flush bool) error {
	t, err := p.terminalFD(fd)
	if err != nil {
		return err
	}
	if err := p.checkTerminalChange(ctx, t); err != nil {
		return err
	}
	// A pseudo-terminal has no framing: Linux's pty_set_termios keeps
	// its character size at 8 bits, without parity, receiver on.
	tm.Cflag = tm.Cflag&^(tty.CSIZE|tty.PARENB) | tty.CS8 | tty.CREAD
	t.t.SetTermiosFlush(tm, flush)
	return nil
}

// SetTerminalSize sets the window size of the terminal fd (TIOCSWINSZ);
// a change raises SIGWINCH in its foreground process group.
func (p *Process) SetTerminalSize(fd int, ws tty.Winsize) error {
	t, err := p.terminalFD(fd)
	if err != nil {
		return err
	}
	t.t.SetWinsize(ws)
	return nil
}

// checkTerminalChange is Linux's tty_check_change: a process in a
// background group of the session that t controls is stopped by SIGTTOU
// before it may change t, unless it ignores or blocks SIGTTOU; an
// orphaned group gets EIO instead, as it would never be continued.
func (p *Process) checkTerminalChange(ctx context.Context, t *PTY) error {
	k := p.k
	for {
		k.mu.Lock()
		if p.ctty != t || t.fgrp == 0 || p.pgid == t.fgrp {
			k.mu.Unlock()
			return nil
		}
		orphaned := k.orphanedLocked(p.pgid, p.sid)
		pgid := p.pgid
		k.mu.Unlock()
		if p.signalIgnoredOrBlocked(SIGTTOU) {
			return nil
		}
		if orphaned {
			return errno.EIO
		}
		_ = k.Init().Kill(-pgid, SIGTTOU)
		if p.State() != StateStopped {
			return errno.EINTR
		}
		if err := p.waitIfStopped(ctx); err != nil {
			return err
		}
	}
}

// SetTerminalRaw switches the terminal fd to raw mode or back to the
// default cooked mode, as node's setRawMode (libuv's raw mode) does:
// output processing stays on, so a "\n" written still reaches the
// terminal as "\r\n" while a line editor reads keys.
func (p *Process) SetTerminalRaw(fd int, on bool) error {
	t, err := p.terminalFD(fd)
	if err != nil {
		return err
	}
	t.t.SetRaw(on)
	if on {
		tm := t.t.Termios()
		tm.Oflag |= tty.OPOST | tty.ONLCR
		t.t.SetTermios(tm)
	}
	return nil
}

// IsTerminal reports whether fd is a terminal (isatty).
func (p *Process) IsTerminal(fd int) bool {
	_, err := p.terminalFD(fd)
	return err == nil
}

func (p *Process) signalIgnoredOrBlocked(s Signal) bool {
	p.sig.mu.Lock()
	defer p.sig.mu.Unlock()
	return p.sig.disp[s] == DispositionIgnore || p.sig.blocked&bit(s) != 0
}

// orphanedLocked reports whether process group pgid is orphaned: no
// member has a parent in another group of the same session.
func (k *Kernel) orphanedLocked(pgid, sid int) bool {
	for _, q := range k.procs {
		if q.pgid != pgid || q.state == StateZombie {
			continue
		}
		if par := q.parent; par != nil && par.pgid != pgid && par.sid == sid {
			return false
		}
	}
	return true
}

// checkTerminalRead applies job control to a read of t by the calling
// process: a member of a background group of t's session gets SIGTTIN,
// which stops it; the read goes on when the group is continued (and may
// be in the foreground by then), as Linux restarts it. It fails with EIO
// when the process ignores or blocks SIGTTIN or its group is orphaned,
// and with EINTR when a handler caught the signal. Readers that are not
// in t's session are not checked, as on Linux.
func (t *PTY) checkTerminalRead(ctx context.Context) error {
	p, ok := ProcessFromContext(ctx)
	if !ok || p.k != t.k {
		return nil
	}
	k := t.k
	for {
		k.mu.Lock()
		if p.ctty != t || t.fgrp == 0 || p.pgid == t.fgrp {
			k.mu.Unlock()
			return nil
		}
		orphaned := k.orphanedLocked(p.pgid, p.sid)
		pgid := p.pgid
		k.mu.Unlock()
		if orphaned || p.signalIgnoredOrBlocked(SIGTTIN) {
			return errno.EIO
		}
		_ = k.Init().Kill(-pgid, SIGTTIN)
		if p.State() != StateStopped {
			return errno.EINTR
		}
		if err := p.waitIfStopped(ctx); err != nil {
			return err
		}
	}
}

// ptyMaster is the open file of a PTY's master side.
type ptyMaster struct {
	vfs.Refs
	vfs.StreamDefaults
	pty   *PTY
	flags atomic.Uint32
}

// TTYIndex is the N of the terminal's /dev/pts/N, which
// /proc/<pid>/fdinfo shows for a master.
func (m *ptyMaster) TTYIndex() int { return m.pty.index }

// ptySlave is an open file of a PTY's slave side.
type ptySlave struct {
	vfs.Refs
	vfs.StreamDefaults
	pty   *PTY
	flags atomic.Uint32
}

func nonblock(f *atomic.Uint32) bool { return vfs.OpenFlags(f.Load())&vfs.O_NONBLOCK != 0 }

func setStatusFlags(f *atomic.Uint32, fl vfs.OpenFlags) {
	for {
		old := f.Load()
		nw := old&^uint32(vfs.O_APPEND|vfs.O_NONBLOCK) | uint32(fl&(vfs.O_APPEND|vfs.O_NONBLOCK))
		if f.CompareAndSwap(old, nw) {
			return
		}
	}
}

func (f *ptyMaster) Read(ctx context.Context, p []byte) (int, error) {
	if nonblock(&f.flags) {
		return f.pty.t.TryMasterRead(p)
	}
	return f.pty.t.MasterRead(ctx, p)
}

func (f *ptyMaster) Write(ctx context.Context, p []byte) (int, error) {
	if nonblock(&f.flags) {
		return f.pty.t.TryMasterWrite(p)
	}
	return f.pty.t.MasterWrite(ctx, p)
}

func (f *ptyMaster) Stat(context.Context) (vfs.Stat, error) {
	return ptyStat(f.pty, 5<<8|2), nil // /dev/ptmx is 5:2
}

func (f *ptyMaster) SetAttr(context.Context, vfs.SetAttr) error { return errno.EPERM }
func (f *ptyMaster) Flags() vfs.OpenFlags                       { return vfs.OpenFlags(f.flags.Load()) }
func (f *ptyMaster) SetFlags(fl vfs.OpenFlags) error {
	setStatusFlags(&f.flags, fl)
	return nil
}
func (f *ptyMaster) Path() string { return "/dev/ptmx" }
func (f *ptyMaster) Readiness(mask waiter.EventMask) waiter.EventMask {
	return f.pty.t.MasterReadiness(mask)
}
func (f *ptyMaster) EventRegister(e *waiter.Entry)   { f.pty.t.RegisterMaster(e) }
func (f *ptyMaster) EventUnregister(e *waiter.Entry) { f.pty.t.UnregisterMaster(e) }

// IsTerminal reports true: isatty is true on a master too, as on Linux.
func (f *ptyMaster) IsTerminal() bool { return true }

func (f *ptySlave) Read(ctx context.Context, p []byte) (int, error) {
	if err := f.pty.checkTerminalRead(ctx); err != nil {
		return 0, err
	}
	if nonblock(&f.flags) {
		return f.pty.t.TrySlaveRead(p)
	}
	return f.pty.t.SlaveRead(ctx, p)
}

func (f *ptySlave) Write(ctx context.Context, p []byte) (int, error) {
	if nonblock(&f.flags) {
		return f.pty.t.TrySlaveWrite(p)
	}
	return f.pty.t.SlaveWrite(ctx, p)
}

func (f *ptySlave) Stat(context.Context) (vfs.Stat, error) {
	return ptyStat(f.pty, uint64(136<<8|f.pty.index&0xff)), nil // /dev/pts/N is 136:N
}

func (f *ptySlave) SetAttr(context.Context, vfs.SetAttr) error { return errno.EPERM }
func (f *ptySlave) Flags() vfs.OpenFlags                       { return vfs.OpenFlags(f.flags.Load()) }
func (f *ptySlave) SetFlags(fl vfs.OpenFlags) error {
	setStatusFlags(&f.flags, fl)
	return nil
}
func (f *ptySlave) Path() string { return fmt.Sprintf("/dev/pts/%d", f.pty.index) }
func (f *ptySlave) Readiness(mask waiter.EventMask) waiter.EventMask {
	return f.pty.t.SlaveReadiness(mask)
}
func (f *ptySlave) EventRegister(e *waiter.Entry)   { f.pty.t.RegisterSlave(e) }
func (f *ptySlave) EventUnregister(e *waiter.Entry) { f.pty.t.UnregisterSlave(e) }

// IsTerminal reports true: the slave is the guest's terminal.
func (f *ptySlave) IsTerminal() bool { return true }

// SetRaw switches the line discipline to raw mode or back (the agentOS
// host_tty.set_raw_mode).
func (f *ptySlave) SetRaw(on bool) error {
	f.pty.t.SetRaw(on)
	return nil
}

func ptyStat(t *PTY, rdev uint64) vfs.Stat {
	return vfs.Stat{Ino: t.ino, Mode: vfs.S_IFCHR | 0o620, Nlink: 1, Rdev: rdev, Blksize: 1024,
		Atime: t.born, Mtime: t.born, Ctime: t.born}
}
