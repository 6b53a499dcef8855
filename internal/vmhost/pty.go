package vmhost

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/tty"
	"github.com/secexec/secexec/kernel/vfs"
)

// PTYSize is the window size of a terminal, in characters.
type PTYSize struct {
	Rows, Cols uint16
}

// DefaultTerm is TERM in the environment of a process spawned on a
// terminal when the caller did not set it.
const DefaultTerm = "xterm-256color"

// spawnPTY starts a program on a new pseudo-terminal: the program leads a
// new session whose controlling terminal it is, with fds 0, 1 and 2 on
// the slave; the host keeps the master.
func (h *Host) spawnPTY(ctx context.Context, spec SpawnSpec) (Process, error) {
	k := h.vm.Kernel
	size := *spec.PTY
	master, slave, pty, err := k.NewPTY(tty.Winsize{Rows: size.Rows, Cols: size.Cols})
	if err != nil {
		return nil, err
	}
	cwd := spec.Cwd
	if cwd == "" {
		cwd = h.cwd
	}
	env := terminalEnv(withPWD(spec.Env, cwd), size)
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{
		Argv:     spec.Argv,
		Env:      env,
		Cwd:      cwd,
		Files:    []vfs.File{slave, slave, slave},
		Setsid:   true,
		Terminal: slave,
		Creds:    &kernel.Creds{UID: vm.UserUID, GID: vm.UserGID},
	})
	slave.DecRef()
	if err != nil {
		master.DecRef()
		return nil, err
	}
	// One reference for each of Stdin and Stdout: the terminal hangs up
	// when both are closed.
	master.IncRef()
	return &ptyProcess{
		process: process{
			p:     p,
			stdin: &pipeWriter{f: master, ctx: p.Context()},
		},
		pty:    pty,
		stdout: &masterReader{pipeReader{f: master}},
	}, nil
}

// terminalEnv adds TERM, COLUMNS and LINES unless the caller set them:
// programs without a window-size call (the agentOS userland has none;
// secexec's stty, tput and ps use host_tty.get_size) read the size from
// there.
func terminalEnv(env []string, size PTYSize) []string {
	has := func(key string) bool {
		for _, kv := range env {
			if strings.HasPrefix(kv, key+"=") {
				return true
			}
		}
		return false
	}
	if !has("TERM") {
		env = append(env, "TERM="+DefaultTerm)
	}
	if !has("COLUMNS") && size.Cols > 0 {
		env = append(env, "COLUMNS="+strconv.Itoa(int(size.Cols)))
	}
	if !has("LINES") && size.Rows > 0 {
		env = append(env, "LINES="+strconv.Itoa(int(size.Rows)))
	}
	return env
}

// ptyProcess is a process on a terminal: Stdin writes keys to the master,
// Stdout reads the screen output, Stderr is empty (the program's stderr
// is the terminal too).
type ptyProcess struct {
	process
	pty    *kernel.PTY
	stdout *masterReader
}

func (l *ptyProcess) Stdout() io.ReadCloser { return l.stdout }
func (l *ptyProcess) Stderr() io.ReadCloser { return io.NopCloser(strings.NewReader("")) }

// Resize changes the window size; the foreground job gets SIGWINCH.
func (l *ptyProcess) Resize(rows, cols uint16) error {
	l.pty.Resize(rows, cols)
	return nil
}

// masterReader reads the master side: the EIO that says every slave is
// closed (the program and its children exited) is the end of the output.
type masterReader struct{ pipeReader }

func (r *masterReader) Read(p []byte) (int, error) {
	n, err := r.pipeReader.Read(p)
	if errors.Is(err, errno.EIO) {
		return n, io.EOF
	}
	return n, err
}

// Resize of a process without a terminal fails with ENOTTY.
func (l *process) Resize(uint16, uint16) error { return errno.ENOTTY }
