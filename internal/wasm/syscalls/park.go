package syscalls

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero/sys"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// A parked instance is a WASI command (CPython) that ran its own
// start-up before any process asked for it, in a template process that
// holds only read-only layers, and now waits in a read of descriptor 0
// for the process that claims it (see internal/wasm's parked pool). The
// claim rebinds the instance's State to the claiming process — its
// descriptors, "/" preopen at PrestartRootFD, arguments and environment —
// on the instance's own thread, and that read then returns the claim's
// payload (the process's argument vector, environment and directory,
// which the instance's program applies). Once the payload is consumed,
// descriptor 0 is the process's own stdin.

// ErrParkClosed ends a parked instance that was never claimed.
var ErrParkClosed = errors.New("syscalls: parked instance discarded")

// Claim binds a parked instance to the process that takes it.
type Claim struct {
	// State is the claiming process's state, from NewPrestartedState.
	State *State
	// Payload is what the instance reads from descriptor 0 before the
	// process's own stdin.
	Payload []byte
}

// Park is the waiting side of a parked instance's State.
type Park struct {
	claims  chan Claim
	ready   chan struct{}
	closed  chan struct{}
	pending []byte
	readied bool
}

// NewParkedState returns the state of an instance parked in template
// (a process of a kernel that holds no tenant's files), whose "/" is
// preopened at PrestartRootFD, and the Park through which a process
// claims it.
func NewParkedState(ctx context.Context, template *kernel.Process, argv, env []string) (*State, *Park, error) {
	s := &State{P: template, Argv: argv, Env: env}
	f, err := template.File(PrestartRootFD)
	if err != nil {
		return nil, nil, err
	}
	s.preopens = []preopen{{path: "/", fd: PrestartRootFD, file: f}}
	pk := &Park{claims: make(chan Claim, 1), ready: make(chan struct{}), closed: make(chan struct{})}
	s.parked = pk
	return s, pk, nil
}

// Ready is closed when the instance waits for its claim.
func (pk *Park) Ready() <-chan struct{} { return pk.ready }

// Claim hands the instance to c.State's process. It does not block.
func (pk *Park) Claim(c Claim) { pk.claims <- c }

// Close ends the wait of an unclaimed instance.
func (pk *Park) Close() { close(pk.closed) }

// parkRead answers a read of descriptor 0 by a parked instance: it waits
// for the claim, rebinds s to the claiming process, then serves the
// payload. ok is false once the payload is consumed (the read is the
// process's).
func (s *State) parkRead(ctx context.Context, m mem, iovs, n, outp uint32) (Errno, bool) {
	pk := s.parked
	if !pk.readied {
		pk.readied = true
		close(pk.ready)
		var c Claim
		select {
		case c = <-pk.claims:
		case <-pk.closed:
			panic(sys.NewExitError(128 + 9))
		case <-ctx.Done():
			panic(sys.NewExitError(128 + 9))
		}
		// The template's preopen reference is dropped; the instance is
		// the claiming process's from here on.
		s.Close()
		s.P, s.Argv, s.Env, s.preopens = c.State.P, c.State.Argv, c.State.Env, c.State.preopens
		c.State.preopens = nil
		pk.pending = c.Payload
	}
	if len(pk.pending) == 0 {
		s.parked = nil
		return 0, false
	}
	if !m.valid(outp, 4) {
		return EFAULT, true
	}
	bufs, e := iovecs(m, iovs, n)
	if e != ESUCCESS {
		return e, true
	}
	total := 0
	for _, b := range bufs {
		c := copy(b, pk.pending)
		pk.pending = pk.pending[c:]
		total += c
	}
	if len(pk.pending) == 0 {
		s.parked = nil
	}
	m.putU32(outp, uint32(total))
	return ESUCCESS, true
}

// TemplateFiles opens in template (a kernel's init process, with an empty
// descriptor table) what a parked instance's start-up sees: a pipe's read
// end at 0, its write end at 1 and 2, and "/" at PrestartRootFD.
func TemplateFiles(ctx context.Context, template *kernel.Process) error {
	r, w, err := template.Pipe(0)
	if err != nil {
		return err
	}
	if r != 0 || w != 1 {
		return errors.New("syscalls: template descriptor table is not empty")
	}
	if err := template.Dup2(1, 2, false); err != nil {
		return err
	}
	fd, err := template.Open(ctx, kernel.AtFDCWD, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	if fd != PrestartRootFD {
		return errors.New("syscalls: template root is not at the prestart descriptor")
	}
	return nil
}
