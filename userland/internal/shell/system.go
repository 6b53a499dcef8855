package shell

import (
	"errors"
	"os"
)

// System is how the shell reaches the operating system beyond files:
// starting and waiting for programs, and pipes. The wasip1 build uses the
// agentOS host_process calls; other builds use os.StartProcess (tests run
// the shell on the host against real programs).
type System interface {
	// Spawn starts path (looked up in env's PATH if it has no slash) with
	// argv, env and dir. fds gives the child's descriptors: fds[n] is
	// the file for child fd n, nil closes n; numbers not in the map are
	// inherited as the process has them (0-2).
	Spawn(path string, argv, env []string, dir string, fds map[int]*ofile, closed []int) (pid int, err error)
	// Wait waits for pid. Unless block, it returns done=false at once
	// when the child is still running.
	Wait(pid int, block bool) (done bool, st ExitStatus, err error)
	// Kill sends sig to pid.
	Kill(pid, sig int) error
	// Pipe returns the two ends of a new pipe, close-on-exec. With
	// nonblock they are ready for the shell's goroutines to use
	// concurrently; without, an end the shell reads or writes may block
	// the whole process (WebAssembly has one thread), which only a pipe
	// that is never waited on can afford (see pipeline).
	Pipe(nonblock bool) (r, w *ofile, err error)
	// Open opens a file for a redirection.
	Open(path string, flag int, perm os.FileMode) (*ofile, error)
	Getpid() int
	Getppid() int
}

// ExitStatus is how a child ended.
type ExitStatus struct {
	Code   int
	Signal int
}

// Status is the shell's $? for it.
func (e ExitStatus) Status() int {
	if e.Signal != 0 {
		return 128 + e.Signal
	}
	return e.Code
}

// Errors the spawn reports, which the shell words as bash does.
var (
	ErrNotFound   = errors.New("command not found")
	ErrNoExec     = errors.New("exec format error")
	ErrPermission = errors.New("permission denied")
	ErrIsDir      = errors.New("is a directory")
)

// newOfile wraps f, whose descriptor is fd (f.Fd would make a pollable
// file blocking).
func newOfile(f *os.File, fd int) *ofile {
	o := &ofile{f: f, fd: fd}
	o.refs.Store(1)
	return o
}
