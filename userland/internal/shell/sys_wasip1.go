//go:build wasip1

package shell

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/secexec/secexec/userland/internal/hostproc"
)

// lendState tracks an ofile the shell made non-blocking.
type lendState struct {
	mu       sync.Mutex
	children int  // live children holding it
	nonblock bool // the shell set O_NONBLOCK on it
	closed   bool // the shell closed it: its number is no longer its
}

// markClosed records that the shell closed its descriptor, which unlend
// must then leave alone (the number may be another file's by then).
func (l *lendState) markClosed() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// wasiSystem runs programs through the host_process calls.
type wasiSystem struct {
	mu   sync.Mutex
	lent map[int][]*ofile // pid → pipe ends lent to it in blocking mode
}

// NewSystem returns the platform's System.
func NewSystem() System { return &wasiSystem{lent: map[int][]*ofile{}} }

// lend puts a non-blocking pipe end the shell shares with a child back in
// blocking mode while any child holds it: O_NONBLOCK belongs to the open
// file description, and the programs a shell starts expect blocking
// descriptors. The shell's own goroutines then block on it in the host,
// which is harmless while they wait for that child.
func lend(o *ofile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.children == 0 && o.nonblock {
		_ = syscall.SetNonblock(o.fd, false)
	}
	o.children++
}

func unlend(o *ofile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.children--
	if o.children == 0 && o.nonblock && !o.closed {
		_ = syscall.SetNonblock(o.fd, true)
	}
}

func (w *wasiSystem) Spawn(path string, argv, env []string, dir string, fds map[int]*ofile, closed []int) (int, error) {
	var acts []hostproc.Action
	// Sources that are also targets would be overwritten before use:
	// move every source out of the way first when that can happen.
	targets := map[int]bool{}
	for n := range fds {
		targets[n] = true
	}
	conflict := false
	for n, o := range fds {
		if o != nil && o.fd != n && targets[o.fd] {
			conflict = true
		}
	}
	// One order for both passes below: the second finds each source at
	// the scratch number the first put it at (map order differs between
	// two ranges, which sent sources to the wrong descriptors).
	order := slices.Sorted(maps.Keys(fds))
	var lent []*ofile
	// Scratch numbers sit above every number in play, and low: the
	// kernel refuses descriptors beyond RLIMIT_NOFILE (256 by default),
	// which a fixed 900 was, failing every spawn with a moved source
	// (exec 4>&1; cmd < file).
	scratch := 0
	for n, o := range fds {
		scratch = max(scratch, n+1)
		if o != nil {
			scratch = max(scratch, o.fd+1)
		}
	}
	i := 0
	for _, n := range order {
		o := fds[n]
		if o == nil {
			acts = append(acts, hostproc.Action{Op: hostproc.Close, FD: n})
			continue
		}
		if o.nonblock {
			lend(o)
			lent = append(lent, o)
		}
		if o.fd == n && !conflict {
			// Same number: clear close-on-exec in the child.
			acts = append(acts, hostproc.Action{Op: hostproc.Dup2, FD: n, Src: n})
			continue
		}
		if conflict {
			acts = append(acts, hostproc.Action{Op: hostproc.Dup2, FD: scratch + i, Src: o.fd})
			i++
			continue
		}
		acts = append(acts, hostproc.Action{Op: hostproc.Dup2, FD: n, Src: o.fd})
	}
	if conflict {
		i = 0
		for _, n := range order {
			if fds[n] == nil {
				continue
			}
			acts = append(acts, hostproc.Action{Op: hostproc.Dup2, FD: n, Src: scratch + i},
				hostproc.Action{Op: hostproc.Close, FD: scratch + i})
			i++
		}
	}
	for _, n := range closed {
		// Only a descriptor the process has open can reach the child;
		// closing one it has not fails the whole spawn with EBADF
		// (exec 4>&1; exec 4>&-, and every later command failed).
		var st syscall.Stat_t
		if _, ok := fds[n]; !ok && syscall.Fstat(n, &st) == nil {
			acts = append(acts, hostproc.Action{Op: hostproc.Close, FD: n})
		}
	}
	pid, err := hostproc.Spawn(path, argv, hostproc.Attr{Env: env, Dir: dir, Actions: acts})
	if err != nil {
		for _, o := range lent {
			unlend(o)
		}
		switch err {
		case syscall.ENOENT:
			return 0, ErrNotFound
		case syscall.ENOEXEC:
			return 0, ErrNoExec
		case syscall.EACCES:
			return 0, ErrPermission
		case syscall.EISDIR:
			return 0, ErrIsDir
		}
		return 0, err
	}
	if len(lent) > 0 {
		w.mu.Lock()
		w.lent[pid] = lent
		w.mu.Unlock()
	}
	return pid, nil
}

func (w *wasiSystem) Wait(pid int, block bool) (bool, ExitStatus, error) {
	got, st, err := hostproc.Wait(pid, !block)
	if err != nil {
		return false, ExitStatus{}, err
	}
	if got == 0 {
		return false, ExitStatus{}, nil
	}
	w.mu.Lock()
	lent := w.lent[got]
	delete(w.lent, got)
	w.mu.Unlock()
	for _, o := range lent {
		unlend(o)
	}
	return true, ExitStatus{Code: st.Code, Signal: st.Signal}, nil
}

// sigPIPE is SIGPIPE's number.
const sigPIPE = 13

func (w *wasiSystem) Kill(pid, sig int) error {
	// The shell keeps SIGPIPE blocked so that a pipeline stage running
	// on one of its goroutines ends alone (userland/bash's main); a
	// SIGPIPE it sends itself or its process group (kill -PIPE $$) must
	// still end it with the default action, as it ends bash.
	if sig == sigPIPE && (pid == 0 || pid == hostproc.Getpid() || pid == -hostproc.Getpid()) {
		_ = hostproc.UnblockSignal(sig)
	}
	return hostproc.Kill(pid, sig)
}

func (w *wasiSystem) Pipe(nonblock bool) (*ofile, *ofile, error) {
	r, wr, err := hostproc.Pipe()
	if err != nil {
		return nil, nil, err
	}
	mk := func(fd int, name string) *ofile {
		_ = hostproc.SetCloexec(fd, true)
		if nonblock {
			_ = syscall.SetNonblock(fd, true)
		}
		o := newOfile(os.NewFile(uintptr(fd), name), fd)
		o.nonblock = nonblock
		return o
	}
	return mk(r, "|0"), mk(wr, "|1"), nil
}

func (w *wasiSystem) Open(path string, flag int, perm os.FileMode) (*ofile, error) {
	fd, err := syscall.Open(path, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	_ = hostproc.SetCloexec(fd, true)
	return newOfile(os.NewFile(uintptr(fd), filepath.Base(path)), fd), nil
}

func (w *wasiSystem) Getpid() int  { return hostproc.Getpid() }
func (w *wasiSystem) Getppid() int { return hostproc.Getppid() }
