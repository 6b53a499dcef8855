//go:build !wasip1

package shell

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// lendState is empty on the host: os/exec hands children blocking
// descriptors itself.
//
//lint:ignore U1000 embedded in ofile for the wasip1 build's state
type lendState struct{}

func (*lendState) markClosed() {}

// HostSystem runs programs on the host with os.StartProcess.
type HostSystem struct {
	mu    sync.Mutex
	procs map[int]*os.Process
}

// NewSystem returns the platform's System.
func NewSystem() System { return &HostSystem{procs: map[int]*os.Process{}} }

func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// Spawn implements System.
func (h *HostSystem) Spawn(path string, argv, env []string, dir string, fds map[int]*ofile, closed []int) (int, error) {
	p, err := lookPath(path, env)
	if err != nil {
		return 0, err
	}
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	maxFD := 2
	for n := range fds {
		maxFD = max(maxFD, n)
	}
	files := make([]*os.File, maxFD+1)
	files[0], files[1], files[2] = os.Stdin, os.Stdout, os.Stderr
	for n, o := range fds {
		if o == nil {
			files[n] = nil
		} else {
			files[n] = o.f
		}
	}
	for _, n := range closed {
		if n < len(files) {
			files[n] = nil
		}
	}
	proc, err := os.StartProcess(p, argv, &os.ProcAttr{Dir: dir, Env: env, Files: files})
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return 0, ErrNotFound
		case errors.Is(err, syscall.ENOEXEC):
			return 0, ErrNoExec
		case errors.Is(err, fs.ErrPermission):
			if fi, e := os.Stat(p); e == nil && fi.IsDir() {
				return 0, ErrIsDir
			}
			return 0, ErrPermission
		}
		return 0, err
	}
	h.mu.Lock()
	h.procs[proc.Pid] = proc
	h.mu.Unlock()
	return proc.Pid, nil
}

// Wait implements System; on the host every wait blocks (threads make it
// free).
func (h *HostSystem) Wait(pid int, block bool) (bool, ExitStatus, error) {
	h.mu.Lock()
	proc := h.procs[pid]
	h.mu.Unlock()
	if proc == nil {
		return false, ExitStatus{}, syscall.ECHILD
	}
	st, err := proc.Wait()
	if err != nil {
		return false, ExitStatus{}, err
	}
	h.mu.Lock()
	delete(h.procs, pid)
	h.mu.Unlock()
	ws := st.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return true, ExitStatus{Signal: int(ws.Signal())}, nil
	}
	return true, ExitStatus{Code: ws.ExitStatus()}, nil
}

// Kill implements System.
func (h *HostSystem) Kill(pid, sig int) error { return syscall.Kill(pid, syscall.Signal(sig)) }

// Pipe implements System: the host's pipes are always blocking, as the
// shell's goroutines have threads of their own here.
func (h *HostSystem) Pipe(bool) (*ofile, *ofile, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return newOfile(r, -1), newOfile(w, -1), nil
}

// Open implements System.
func (h *HostSystem) Open(path string, flag int, perm os.FileMode) (*ofile, error) {
	f, err := os.OpenFile(path, flag|syscall.O_CLOEXEC, perm)
	if err != nil {
		return nil, err
	}
	return newOfile(f, -1), nil
}

// Getpid implements System.
func (h *HostSystem) Getpid() int { return os.Getpid() }

// Getppid implements System.
func (h *HostSystem) Getppid() int { return os.Getppid() }
