package tty

import (
	"context"
	"sync"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

// Config configures a Terminal.
type Config struct {
	// Size is the initial window size.
	Size Winsize
	// InputMax and OutputMax bound the input and output queues; zero
	// means DefaultInputMax and DefaultOutputMax.
	InputMax, OutputMax int
	// Signal is called, outside the terminal's lock, for each signal the
	// terminal raises: INTR, QUIT and SUSP typed on the master with ISIG
	// on, and SIGWINCH when the size changes. The kernel sends it to the
	// terminal's foreground process group. Nil drops them.
	Signal func(Signal)
	// SlaveClosed starts the terminal with no slave file open, as a
	// /dev/ptmx open makes it: master reads wait for a first slave open
	// rather than seeing the hang-up of a closed slave.
	SlaveClosed bool
}

// Terminal is a line discipline between a master and a slave side, safe
// for concurrent use. Reads and writes block (until ctx ends) when there
// is nothing to read or no room; the Try variants fail with EAGAIN
// instead.
//
// Hang-up rules, as Linux's: once the master is closed, slave reads
// return end of file and slave writes fail with EIO; once no slave is
// open, master reads return what is queued and then EIO.
type Terminal struct {
	cfg Config

	mu           sync.Mutex
	ld           *LineDiscipline
	masterClosed bool
	slaves       int  // open slave files
	slaveOpened  bool // a slave was opened at least once

	masterQ waiter.Queue // master readable (output) / writable (input room)
	slaveQ  waiter.Queue // slave readable (input) / writable (output room)
}

// New returns a terminal in the default mode with one slave open.
func New(cfg Config) *Terminal {
	t := &Terminal{cfg: cfg, ld: NewLineDiscipline(cfg.InputMax, cfg.OutputMax), slaves: 1, slaveOpened: true}
	if cfg.SlaveClosed {
		t.slaves, t.slaveOpened = 0, false
	}
	t.ld.SetWinsize(cfg.Size)
	return t
}

func (t *Terminal) raise(sigs []Signal) {
	if t.cfg.Signal == nil {
		return
	}
	for _, s := range sigs {
		t.cfg.Signal(s)
	}
}

// notify wakes the waiters of both sides; each re-checks its condition.
func (t *Terminal) notify() {
	t.masterQ.Notify(waiter.AllEvents)
	t.slaveQ.Notify(waiter.AllEvents)
}

// TryMasterWrite feeds typed input through the line discipline. It takes
// what fits and fails with EAGAIN only when it could take nothing.
func (t *Terminal) TryMasterWrite(p []byte) (int, error) {
	t.mu.Lock()
	if t.masterClosed {
		t.mu.Unlock()
		return 0, errno.EIO
	}
	n, sigs := t.ld.Input(p)
	t.mu.Unlock()
	if n > 0 || len(sigs) > 0 {
		t.notify()
	}
	t.raise(sigs)
	if n == 0 && len(p) > 0 {
		return 0, errno.EAGAIN
	}
	return n, nil
}

// MasterWrite writes all of p as typed input, waiting for room.
func (t *Terminal) MasterWrite(ctx context.Context, p []byte) (int, error) {
	done := 0
	for {
		n, err := t.TryMasterWrite(p[done:])
		done += n
		if done == len(p) || err != nil && err != errno.EAGAIN {
			return done, err
		}
		if _, err := waiter.Wait(ctx, masterSide{t}, waiter.EventOut); err != nil {
			return done, err
		}
	}
}

// TryMasterRead takes the terminal's output: EAGAIN when there is none,
// EIO when there is none and no slave is open any more.
func (t *Terminal) TryMasterRead(p []byte) (int, error) {
	t.mu.Lock()
	n := t.ld.TakeOutput(p)
	hup := t.slaves == 0 && t.slaveOpened
	t.mu.Unlock()
	if n > 0 {
		t.notify()
		return n, nil
	}
	if len(p) == 0 {
		return 0, nil
	}
	if hup {
		return 0, errno.EIO
	}
	return 0, errno.EAGAIN
}

// MasterRead waits for output and reads it.
func (t *Terminal) MasterRead(ctx context.Context, p []byte) (int, error) {
	for {
		n, err := t.TryMasterRead(p)
		if err != errno.EAGAIN {
			return n, err
		}
		if _, err := waiter.Wait(ctx, masterSide{t}, waiter.EventIn); err != nil {
			return 0, err
		}
	}
}

// TrySlaveRead reads input as the line discipline releases it: (0, nil)
// is an end of file.
func (t *Terminal) TrySlaveRead(p []byte) (int, error) {
	t.mu.Lock()
	n, ok := t.ld.Read(p)
	closed := t.masterClosed
	t.mu.Unlock()
	if ok {
		t.notify()
		return n, nil
	}
	if closed || len(p) == 0 {
		return 0, nil
	}
	return 0, errno.EAGAIN
}

// SlaveRead waits for input and reads it.
func (t *Terminal) SlaveRead(ctx context.Context, p []byte) (int, error) {
	for {
		n, err := t.TrySlaveRead(p)
		if err != errno.EAGAIN {
			return n, err
		}
		if _, err := waiter.Wait(ctx, slaveSide{t}, waiter.EventIn); err != nil {
			return 0, err
		}
	}
}

// TrySlaveWrite queues program output for the master.
func (t *Terminal) TrySlaveWrite(p []byte) (int, error) {
	t.mu.Lock()
	if t.masterClosed {
		t.mu.Unlock()
		return 0, errno.EIO
	}
	n := t.ld.Output(p)
	t.mu.Unlock()
	if n > 0 {
		t.notify()
	}
	if n == 0 && len(p) > 0 {
		return 0, errno.EAGAIN
	}
	return n, nil
}

// SlaveWrite writes all of p, waiting for the master to drain output.
func (t *Terminal) SlaveWrite(ctx context.Context, p []byte) (int, error) {
	done := 0
	for {
		n, err := t.TrySlaveWrite(p[done:])
		done += n
		if done == len(p) || err != nil && err != errno.EAGAIN {
			return done, err
		}
		if _, err := waiter.Wait(ctx, slaveSide{t}, waiter.EventOut); err != nil {
			return done, err
		}
	}
}

// Termios returns the mode.
func (t *Terminal) Termios() Termios {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ld.Termios()
}

// SetTermios changes the mode.
func (t *Terminal) SetTermios(tm Termios) { t.SetTermiosFlush(tm, false) }

// SetTermiosFlush changes the mode, first discarding the unread input
// when flush is set (tcsetattr with TCSAFLUSH). Output needs no drain:
// the slave's writes are in the output queue already, in order.
func (t *Terminal) SetTermiosFlush(tm Termios, flush bool) {
	t.mu.Lock()
	if flush {
		t.ld.FlushInput()
	}
	t.ld.SetTermios(tm)
	t.mu.Unlock()
	t.notify()
}

// SetRaw switches between raw mode (cfmakeraw) and the default cooked
// mode.
func (t *Terminal) SetRaw(on bool) {
	t.mu.Lock()
	tm := t.ld.Termios()
	if on {
		tm.MakeRaw()
	} else {
		cc := tm.Cc
		tm = DefaultTermios()
		tm.Cc = cc
	}
	t.ld.SetTermios(tm)
	t.mu.Unlock()
	t.notify()
}

// Winsize returns the window size.
func (t *Terminal) Winsize() Winsize {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ld.Winsize()
}

// SetWinsize changes the window size (TIOCSWINSZ) and raises SIGWINCH
// when it changed.
func (t *Terminal) SetWinsize(ws Winsize) {
	t.mu.Lock()
	changed := t.ld.SetWinsize(ws)
	t.mu.Unlock()
	if changed {
		t.raise([]Signal{SIGWINCH})
	}
}

// OpenSlave counts one more open slave file.
func (t *Terminal) OpenSlave() {
	t.mu.Lock()
	t.slaves++
	t.slaveOpened = true
	t.mu.Unlock()
}

// CloseSlave counts one slave file fewer; the last close hangs up the
// master's reads (after what is queued).
func (t *Terminal) CloseSlave() {
	t.mu.Lock()
	t.slaves--
	t.mu.Unlock()
	t.notify()
}

// HungUp reports whether the master was closed.
func (t *Terminal) HungUp() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.masterClosed
}

// CloseMaster hangs the terminal up: slave reads see end of file, slave
// writes fail with EIO.
func (t *Terminal) CloseMaster() {
	t.mu.Lock()
	t.masterClosed = true
	t.mu.Unlock()
	t.notify()
}

// MasterReadiness reports the master's poll events.
func (t *Terminal) MasterReadiness(mask waiter.EventMask) waiter.EventMask {
	t.mu.Lock()
	defer t.mu.Unlock()
	var r waiter.EventMask
	if t.ld.Pending() > 0 {
		r |= waiter.EventIn
	}
	if t.ld.InputRoom() || !t.ld.Termios().Raw() {
		r |= waiter.EventOut
	}
	if t.slaves == 0 && t.slaveOpened {
		r |= waiter.EventHup | waiter.EventIn
	}
	return r & (mask | waiter.EventHup | waiter.EventErr)
}

// SlaveReadiness reports the slave's poll events.
func (t *Terminal) SlaveReadiness(mask waiter.EventMask) waiter.EventMask {
	t.mu.Lock()
	defer t.mu.Unlock()
	var r waiter.EventMask
	if t.ld.Readable() {
		r |= waiter.EventIn
	}
	if t.ld.OutputRoom() {
		r |= waiter.EventOut
	}
	if t.masterClosed {
		r |= waiter.EventHup | waiter.EventIn | waiter.EventOut
	}
	return r & (mask | waiter.EventHup | waiter.EventErr)
}

// RegisterMaster and the functions below connect poll to the two sides.
func (t *Terminal) RegisterMaster(e *waiter.Entry) { t.masterQ.EventRegister(e) }

// UnregisterMaster removes a master waiter.
func (t *Terminal) UnregisterMaster(e *waiter.Entry) { t.masterQ.EventUnregister(e) }

// RegisterSlave adds a slave waiter.
func (t *Terminal) RegisterSlave(e *waiter.Entry) { t.slaveQ.EventRegister(e) }

// UnregisterSlave removes a slave waiter.
func (t *Terminal) UnregisterSlave(e *waiter.Entry) { t.slaveQ.EventUnregister(e) }

// masterSide and slaveSide are the two sides as waiter.Waitables.
type masterSide struct{ t *Terminal }

func (m masterSide) Readiness(mask waiter.EventMask) waiter.EventMask {
	return m.t.MasterReadiness(mask)
}
func (m masterSide) EventRegister(e *waiter.Entry)   { m.t.RegisterMaster(e) }
func (m masterSide) EventUnregister(e *waiter.Entry) { m.t.UnregisterMaster(e) }

type slaveSide struct{ t *Terminal }

func (s slaveSide) Readiness(mask waiter.EventMask) waiter.EventMask {
	return s.t.SlaveReadiness(mask)
}
func (s slaveSide) EventRegister(e *waiter.Entry)   { s.t.RegisterSlave(e) }
func (s slaveSide) EventUnregister(e *waiter.Entry) { s.t.UnregisterSlave(e) }

// Master returns the master side as a waiter.Waitable.
func (t *Terminal) Master() waiter.Waitable { return masterSide{t} }

// Slave returns the slave side as a waiter.Waitable.
func (t *Terminal) Slave() waiter.Waitable { return slaveSide{t} }
