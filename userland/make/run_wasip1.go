//go:build wasip1

package main

import (
	"io"
	"os"
	"syscall"

	"github.com/secexec/secexec/userland/internal/hostproc"
)

// hostRunner starts commands as VM processes through the agentOS
// host_process functions: they inherit make's standard descriptors.
type hostRunner struct {
	running int
}

func newRunner() runner { return &hostRunner{} }

func (r *hostRunner) start(argv []string, env []string, dir string) (int, error) {
	pid, err := hostproc.Spawn(argv[0], argv, hostproc.Attr{Env: env, Dir: dir})
	if err != nil {
		return 0, err
	}
	r.running++
	return pid, nil
}

func (r *hostRunner) wait() (int, int, int, error) {
	if r.running == 0 {
		return 0, 0, 0, syscall.ECHILD
	}
	pid, st, err := hostproc.Wait(-1, false)
	if err != nil {
		return 0, 0, 0, err
	}
	r.running--
	return pid, st.Code, st.Signal, nil
}

func (r *hostRunner) capture(argv []string, env []string, dir string) ([]byte, int, error) {
	rd, wr, err := hostproc.Pipe()
	if err != nil {
		return nil, 0, err
	}
	_ = hostproc.SetCloexec(rd, true)
	_ = hostproc.SetCloexec(wr, true)
	pid, err := hostproc.Spawn(argv[0], argv, hostproc.Attr{Env: env, Dir: dir,
		Actions: []hostproc.Action{{Op: hostproc.Dup2, FD: 1, Src: wr}}})
	// The parent's write end must close for the read to see the end.
	_ = syscall.Close(wr)
	if err != nil {
		_ = syscall.Close(rd)
		return nil, 0, err
	}
	f := os.NewFile(uintptr(rd), "|shell")
	out, rerr := io.ReadAll(f)
	_ = f.Close()
	_, st, werr := hostproc.Wait(pid, false)
	if werr != nil {
		return out, 0, werr
	}
	if rerr != nil {
		return out, st.ExitCode(), rerr
	}
	return out, st.ExitCode(), nil
}
