package vmhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Outcomes of Run; the public API's Outcome values.
const (
	Succeeded = "succeeded"
	Failed    = "failed"
	Cancelled = "cancelled"
	TimedOut  = "timed_out"
)

// TimeLimitMessage is the Note of a Run that the CPU time limit ended.
const TimeLimitMessage = "CPU time limit exceeded"

// RunSpec describes one Run.
type RunSpec struct {
	// Argv is the command; Env the complete environment ("KEY=value").
	Argv []string
	Env  []string
	// Cwd is the working directory; empty means the VM's.
	Cwd string
	// Stdin is the program's input; nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr receive the output as it is produced; nil
	// discards it. Every byte has been written when Run returns.
	Stdout io.Writer
	Stderr io.Writer
	// Timeout, if positive, kills the program after this long.
	Timeout time.Duration
}

// ExitStatus is how a process ended.
type ExitStatus struct {
	// Code is the status as a shell shows it (128+n for signal n).
	Code int
	// Signal names the signal that killed it, if one did.
	Signal string
}

// Exit is how a Run ended.
type Exit struct {
	ExitStatus
	// Outcome is one of Succeeded, Failed, Cancelled, TimedOut.
	Outcome string
	// Duration is the wall time from spawn to exit.
	Duration time.Duration
	// Reason says which limit ended a TimedOut run: ReasonTimeout or
	// ReasonCPUTime; empty otherwise.
	Reason string
	// Note is text the host adds after the program's stderr: why a spawn
	// failed, TimeLimitMessage or TimeoutNote. The caller decides where it goes, so
	// that it is not subject to output limits.
	Note []byte
}

// stdio is the host side of a spawned process's three streams.
type stdio struct {
	files   [3]vfs.File // the child's ends, released after spawn
	stdinW  vfs.File
	stdoutR vfs.File
	stderrR vfs.File
}

func (s *stdio) releaseChild() {
	for _, f := range s.files {
		if f != nil {
			f.DecRef()
		}
	}
}

func (s *stdio) releaseHost() {
	for _, f := range []vfs.File{s.stdinW, s.stdoutR, s.stderrR} {
		if f != nil {
			f.DecRef()
		}
	}
}

// newStdio makes pipes for stdout and stderr, and for stdin unless
// devNullIn, in which case the child reads /dev/null.
func (h *Host) newStdio(ctx context.Context, devNullIn bool) (*stdio, error) {
	k := h.vm.Kernel
	s := &stdio{}
	fail := func(err error) (*stdio, error) {
		s.releaseChild()
		s.releaseHost()
		return nil, err
	}
	if devNullIn {
		f, err := h.vm.VFS.Open(ctx, vfs.Root, "/dev/null", vfs.O_RDONLY, 0)
		if err != nil {
			return fail(err)
		}
		s.files[0] = f
	} else {
		r, w, err := k.NewPipe()
		if err != nil {
			return fail(err)
		}
		s.files[0], s.stdinW = r, w
	}
	r, w, err := k.NewPipe()
	if err != nil {
		return fail(err)
	}
	s.files[1], s.stdoutR = w, r
	r, w, err = k.NewPipe()
	if err != nil {
		return fail(err)
	}
	s.files[2], s.stderrR = w, r
	return s, nil
}

func (h *Host) spawnProcess(ctx context.Context, argv, env []string, cwd string, s *stdio) (*kernel.Process, error) {
	if cwd == "" {
		cwd = h.cwd
	}
	env = withPWD(env, cwd)
	return h.vm.Kernel.SpawnHost(ctx, kernel.SpawnOptions{
		Argv:     argv,
		Env:      env,
		Cwd:      cwd,
		Files:    s.files[:],
		NewGroup: true,
		// Guest programs run as the VM's user, not as root: the VM's
		// own files keep their owners' permissions, as on Linux.
		Creds: &kernel.Creds{UID: vm.UserUID, GID: vm.UserGID},
	})
}

// withPWD sets PWD in env to the process's working directory, keeping
// the list sorted as the environment the API builds is.
func withPWD(env []string, cwd string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PWD=") {
			out = append(out, kv)
		}
	}
	out = append(out, "PWD="+cwd)
	sort.Strings(out)
	return out
}

// spawnFailure turns a failed spawn into the result a shell would give:
// 127 for a command not found, 126 for one that cannot be executed.
func spawnFailure(argv []string, err error) (*Exit, bool) {
	var nf *kernel.NotFoundError
	switch {
	case errors.As(err, &nf):
		return &Exit{ExitStatus: ExitStatus{Code: 127}, Outcome: Failed,
			Note: []byte("secexec: " + argv[0] + ": command not found\n")}, true
	case errors.Is(err, errno.ENOENT):
		return &Exit{ExitStatus: ExitStatus{Code: 127}, Outcome: Failed,
			Note: []byte("secexec: " + argv[0] + ": No such file or directory\n")}, true
	case errors.Is(err, errno.EACCES), errors.Is(err, errno.ENOEXEC), errors.Is(err, errno.EISDIR):
		return &Exit{ExitStatus: ExitStatus{Code: 126}, Outcome: Failed,
			Note: []byte("secexec: " + argv[0] + ": " + errno.Of(err).Error() + "\n")}, true
	}
	return nil, false
}

// drain copies a pipe's read end to w until EOF, or until ctx ends (the
// call stopped waiting for whatever still holds the pipe) and the pipe is
// empty. After ctx ends it reads at most afterStop more bytes: what the
// call's own processes left buffered (at most one pipe's capacity) is
// delivered whole, while a process outside the call writing on and on
// cannot keep the drain, and the call, going.
func drain(ctx context.Context, f vfs.File, w io.Writer, afterStop int, done *sync.WaitGroup) {
	defer done.Done()
	buf := make([]byte, 32<<10)
	for {
		if ctx.Err() != nil && afterStop <= 0 {
			return
		}
		n, err := f.Read(ctx, buf)
		if ctx.Err() != nil {
			afterStop -= n
		}
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if n == 0 || err != nil {
			return
		}
	}
}

// Bounds of the end of a Run: together they keep a call within a second
// of its deadline, whatever its processes or their pipes do.
const (
	// KillGrace bounds the wait for the call's lineage to end after
	// SIGKILL (a runtime stops at its next check of the process context).
	KillGrace = 500 * time.Millisecond
	// PipeGrace bounds the wait for the output pipes' EOF once the
	// lineage is dead: a process outside it that holds a pipe (one that
	// opened it through /proc, say) cannot hold the call.
	PipeGrace = 250 * time.Millisecond
)

// TimeoutNote is the Note of a Run that its wall-clock timeout ended.
func TimeoutNote(d time.Duration) []byte {
	return []byte(fmt.Sprintf("secexec: timed out after %s (wall-clock timeout)\n", d))
}

// Reasons of a TimedOut Run: which limit fired.
const (
	ReasonTimeout = "timeout"  // RunSpec.Timeout, wall clock
	ReasonCPUTime = "cpu_time" // the VM's per-process CPU time limit
)

// Run runs a program and waits for it and for all of its output. The
// error is non-nil only when nothing could run (the VM is closed, say) or
// ctx ended, in which case the Exit says Cancelled and the error is
// ctx.Err() (ErrClosed when the VM was closed meanwhile). A program that
// cannot be found or executed is an Exit with code 127 or 126, as in a
// shell.
//
// Deadlines are absolute: when the timeout passes, ctx ends or the VM
// closes, every process the call started (its kernel job: detached
// descendants in other sessions and groups included) is killed, and Run
// returns within KillGrace+PipeGrace with the output read so far. When
// the program exits by itself, what it left running is killed too: the
// work of a call does not outlive it (long-lived programs use Spawn),
// and nothing left behind can hold the output pipes.
func (h *Host) Run(ctx context.Context, spec RunSpec) (*Exit, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("secexec: empty command: %w", errno.EINVAL)
	}
	s, err := h.newStdio(ctx, spec.Stdin == nil)
	if err != nil {
		return nil, err
	}
	defer s.releaseHost()
	start := time.Now()
	p, err := h.spawnProcess(ctx, spec.Argv, spec.Env, spec.Cwd, s)
	s.releaseChild()
	if err != nil {
		if r, ok := spawnFailure(spec.Argv, err); ok {
			r.Duration = time.Since(start)
			return r, nil
		}
		return nil, err
	}
	outW, errW := spec.Stdout, spec.Stderr
	if outW == nil {
		outW = io.Discard
	}
	if errW == nil {
		errW = io.Discard
	}
	drainCtx, stopDrain := context.WithCancel(context.Background())
	defer stopDrain()
	var readers sync.WaitGroup
	readers.Add(2)
	pipeSize := h.vm.Kernel.Limits().PipeSize
	go drain(drainCtx, s.stdoutR, outW, pipeSize, &readers)
	go drain(drainCtx, s.stderrR, errW, pipeSize, &readers)
	if s.stdinW != nil {
		// The feeder owns the write end from here: its release at the end
		// of input is what lets the program see EOF.
		w := s.stdinW
		s.stdinW = nil
		go func() {
			defer w.DecRef()
			feedStdin(p.Context(), w, spec.Stdin)
		}()
	}

	var timeout <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	outcome := ""
	closed := false
	select {
	case <-p.Done():
	case <-timeout:
		outcome = TimedOut
	case <-ctx.Done():
		outcome = Cancelled
	case <-h.done:
		outcome, closed = Cancelled, true
	}
	// The whole lineage ends here: after a deadline that is the point;
	// after a normal exit, what the program left running (in its group,
	// or detached into a session of its own) goes with it.
	kctx, cancel := context.WithTimeout(context.Background(), KillGrace)
	kerr := p.Job().Kill(kctx)
	cancel()
	if kerr != nil {
		h.log.Warn("processes of a run did not end after SIGKILL", "pid", p.PID(), "live", p.Job().Live())
	}
	var st kernel.WaitStatus
	select {
	case <-p.Done():
		st, _ = p.HostWait(context.Background())
	default:
		// Not ended within the grace (see the warning): report the kill
		// and reap it when it does end.
		st = kernel.WaitStatus{Signal: kernel.SIGKILL}
		go func() { _, _ = p.HostWait(context.Background()) }()
	}
	waitReaders(&readers, stopDrain)

	res := &Exit{Duration: time.Since(start), ExitStatus: ExitStatus{Code: st.ShellCode()}}
	if st.Signal != 0 {
		res.Signal = st.Signal.String()
	}
	// The VM's per-process CPU limit ended the program, or the command a
	// shell ran for it (which the shell reports as 128+SIGXCPU: the
	// limit counts CPU time, so the waiting shell itself is not hit).
	cpuLimited := st.Signal == kernel.SIGXCPU ||
		(st.Exited && st.Code == 128+int(kernel.SIGXCPU) && (p.Kernel().Limits().CPUTime > 0 || p.Kernel().Limits().VMCPUTime > 0))
	reason := ReasonTimeout
	if cpuLimited && outcome == "" {
		outcome, reason = TimedOut, ReasonCPUTime
	}
	switch {
	case outcome == TimedOut:
		res.Outcome, res.Code, res.Signal, res.Reason = TimedOut, 124, "", reason
		if reason == ReasonCPUTime {
			res.Note = []byte(TimeLimitMessage + "\n")
		} else {
			res.Note = TimeoutNote(spec.Timeout)
		}
	case outcome == Cancelled:
		res.Outcome = Cancelled
		if closed && ctx.Err() == nil {
			return res, ErrClosed
		}
		return res, ctx.Err()
	case res.Code == 0:
		res.Outcome = Succeeded
	default:
		res.Outcome = Failed
	}
	return res, nil
}

// waitReaders waits for the output readers to reach EOF, for PipeGrace
// at most: the lineage is dead by now, so only a process outside it can
// still hold a pipe, and it must not hold the call. Then the readers are
// stopped (what they read has been delivered) and waited for.
func waitReaders(readers *sync.WaitGroup, stop context.CancelFunc) {
	done := make(chan struct{})
	go func() {
		readers.Wait()
		close(done)
	}()
	t := time.NewTimer(PipeGrace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	stop()
	<-done
}

// feedStdin copies r into the stdin pipe and closes it at the end, so
// the program sees EOF.
func feedStdin(ctx context.Context, w vfs.File, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for off := 0; off < n; {
			m, werr := w.Write(ctx, buf[off:n])
			if werr != nil {
				return
			}
			off += m
		}
		if err != nil {
			return
		}
	}
}

// SpawnSpec describes one Spawn.
type SpawnSpec struct {
	// Argv is the command; Env the complete environment.
	Argv []string
	Env  []string
	// Cwd is the working directory; empty means the VM's.
	Cwd string
	// PTY, when set, runs the program on a new pseudo-terminal of this
	// size instead of pipes: Stdin and Stdout are the terminal's master
	// side and Stderr is empty.
	PTY *PTYSize
}

// Process is a spawned process seen from the host. Its streams are the
// host's ends of the process's stdin, stdout and stderr pipes.
type Process interface {
	// PID is the process id inside the VM.
	PID() int
	// Stdin, Stdout and Stderr are the host's ends of the pipes.
	Stdin() io.WriteCloser
	Stdout() io.ReadCloser
	Stderr() io.ReadCloser
	// Signal sends sig (a Linux signal number) to the process.
	Signal(sig int) error
	// Wait waits for the process to exit.
	Wait(ctx context.Context) (ExitStatus, error)
	// Resize sets the window size of the process's terminal (ENOTTY
	// when it was not spawned on one).
	Resize(rows, cols uint16) error
}

// Spawn starts a program with pipes for its standard streams.
func (h *Host) Spawn(ctx context.Context, spec SpawnSpec) (Process, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("secexec: empty command: %w", errno.EINVAL)
	}
	if spec.PTY != nil {
		return h.spawnPTY(ctx, spec)
	}
	s, err := h.newStdio(ctx, false)
	if err != nil {
		return nil, err
	}
	p, err := h.spawnProcess(ctx, spec.Argv, spec.Env, spec.Cwd, s)
	s.releaseChild()
	if err != nil {
		s.releaseHost()
		return nil, err
	}
	return &process{
		p:      p,
		stdin:  &pipeWriter{f: s.stdinW, ctx: p.Context()},
		stdout: &pipeReader{f: s.stdoutR},
		stderr: &pipeReader{f: s.stderrR},
	}, nil
}

type process struct {
	p      *kernel.Process
	stdin  *pipeWriter
	stdout *pipeReader
	stderr *pipeReader
}

func (l *process) PID() int              { return l.p.PID() }
func (l *process) Stdin() io.WriteCloser { return l.stdin }
func (l *process) Stdout() io.ReadCloser { return l.stdout }
func (l *process) Stderr() io.ReadCloser { return l.stderr }
func (l *process) Signal(sig int) error  { return l.p.Signal(kernel.Signal(sig)) }
func (l *process) Wait(ctx context.Context) (ExitStatus, error) {
	st, err := l.p.HostWait(ctx)
	if err != nil {
		return ExitStatus{}, err
	}
	es := ExitStatus{Code: st.ShellCode()}
	if st.Signal != 0 {
		es.Signal = st.Signal.String()
	}
	return es, nil
}

// pipeReader adapts a pipe's read end to io.ReadCloser.
type pipeReader struct {
	f    vfs.File
	once sync.Once
}

func (r *pipeReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.f.Read(context.Background(), p)
	if err != nil {
		return n, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *pipeReader) Close() error {
	r.once.Do(r.f.DecRef)
	return nil
}

// pipeWriter adapts a pipe's write end to io.WriteCloser.
type pipeWriter struct {
	f    vfs.File
	ctx  context.Context
	once sync.Once
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := w.f.Write(w.ctx, p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (w *pipeWriter) Close() error {
	w.once.Do(w.f.DecRef)
	return nil
}
