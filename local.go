package secexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// backend is what a VM handle talks to: the VM in this process, or (with
// the engine) a VM in another process. Every argument and result is plain
// data, so the same calls can cross a socket.
type backend interface {
	readFile(ctx context.Context, name string, limit int64) ([]byte, error)
	writeFile(ctx context.Context, name string, data []byte, perm uint32) error
	mkdir(ctx context.Context, name string, perm uint32) error
	mkdirAll(ctx context.Context, name string, perm uint32) error
	readDir(ctx context.Context, name string) ([]DirEntry, error)
	stat(ctx context.Context, name string, follow bool) (*FileInfo, error)
	remove(ctx context.Context, name string, all bool) error
	rename(ctx context.Context, oldname, newname string) error
	symlink(ctx context.Context, target, link string) error
	readlink(ctx context.Context, name string) (string, error)
	chmod(ctx context.Context, name string, mode uint32) error
	mount(ctx context.Context, m Mount) error
	unmount(ctx context.Context, guestPath string) error
	run(ctx context.Context, argv, env []string, opts *ExecOptions) (*Result, error)
	spawn(ctx context.Context, argv, env []string, opts *SpawnOptions) (*Process, error)
	close(ctx context.Context) error
}

// processHandle is the backend side of a Process.
type processHandle interface {
	pid() int
	signal(sig Signal) error
	wait(ctx context.Context) (*ExitStatus, error)
}

// localBackend runs the VM in this process.
type localBackend struct {
	vm     *vm.VM
	caller *vfs.Caller // the host acting as root, from the VM's cwd
	cwd    string

	mu     sync.Mutex
	closed bool
}

func newLocalBackend(ctx context.Context, opts Options) (*localBackend, error) {
	mounts := make([]vm.Mount, len(opts.Mounts))
	for i, m := range opts.Mounts {
		mounts[i] = vm.Mount(m)
	}
	m, err := vm.New(ctx, vm.Config{
		Policy:   opts.Permissions,
		Audit:    opts.Audit,
		Limits:   opts.Limits,
		Mounts:   mounts,
		Hostname: opts.Hostname,
		Logger:   opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	cwd := opts.Cwd
	if cwd == "" {
		cwd = Workspace
	}
	b := &localBackend{vm: m, cwd: cwd, caller: &vfs.Caller{Cwd: cwd, Umask: 0o022}}
	if err := b.mkdirAll(ctx, cwd, 0o755); err != nil {
		_ = m.Close(ctx)
		return nil, fmt.Errorf("secexec: working directory: %w", err)
	}
	return b, nil
}

func (b *localBackend) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	return nil
}

func (b *localBackend) close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return b.vm.Close(ctx)
}

func (b *localBackend) readFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	f, err := b.vm.VFS.Open(ctx, b.caller, name, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return nil, errno.Path("read", name, err)
	}
	if st.Type() == vfs.TypeDir {
		return nil, errno.Path("read", name, errno.EISDIR)
	}
	if st.Size > limit {
		return nil, &TooLargeError{What: "file " + name, Size: st.Size, Limit: limit}
	}
	buf := make([]byte, 0, max(st.Size, 512))
	for {
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{What: "file " + name, Size: int64(len(buf)), Limit: limit}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(ctx, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return nil, errno.Path("read", name, err)
		}
		if n == 0 {
			return buf, nil
		}
	}
}

// own gives a file the API just created to the guest user.
func (b *localBackend) own(ctx context.Context, name string) error {
	return b.vm.VFS.SetAttr(ctx, b.caller, name, false, vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID, UID: GuestUID, GID: GuestGID})
}

func (b *localBackend) writeFile(ctx context.Context, name string, data []byte, perm uint32) error {
	if err := b.check(); err != nil {
		return err
	}
	_, statErr := b.vm.VFS.Lstat(ctx, b.caller, name)
	f, err := b.vm.VFS.Open(ctx, b.caller, name, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, perm)
	if err != nil {
		return err
	}
	defer f.DecRef()
	if errno.Of(statErr) == errno.ENOENT {
		if err := b.own(ctx, name); err != nil {
			return err
		}
	}
	for len(data) > 0 {
		n, err := f.Write(ctx, data)
		if err != nil {
			return errno.Path("write", name, err)
		}
		data = data[n:]
	}
	return nil
}

func (b *localBackend) mkdir(ctx context.Context, name string, perm uint32) error {
	if err := b.check(); err != nil {
		return err
	}
	if err := b.vm.VFS.Mkdir(ctx, b.caller, name, perm); err != nil {
		return err
	}
	return b.own(ctx, name)
}

func (b *localBackend) mkdirAll(ctx context.Context, name string, perm uint32) error {
	if err := b.check(); err != nil {
		return err
	}
	if !path.IsAbs(name) {
		name = path.Join(b.cwd, name)
	}
	name = path.Clean(name)
	st, err := b.vm.VFS.Stat(ctx, b.caller, name)
	if err == nil {
		if st.Type() != vfs.TypeDir {
			return errno.Path("mkdir", name, errno.ENOTDIR)
		}
		return nil
	}
	if errno.Of(err) != errno.ENOENT {
		return err
	}
	if parent := path.Dir(name); parent != name {
		if err := b.mkdirAll(ctx, parent, perm); err != nil {
			return err
		}
	}
	if err := b.vm.VFS.Mkdir(ctx, b.caller, name, perm); err != nil {
		if errno.Of(err) == errno.EEXIST {
			return nil
		}
		return err
	}
	return b.own(ctx, name)
}

func (b *localBackend) readDir(ctx context.Context, name string) ([]DirEntry, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	f, err := b.vm.VFS.Open(ctx, b.caller, name, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	dir := f.Path()
	var out []DirEntry
	for {
		ents, err := f.ReadDir(ctx, 256)
		if err != nil {
			return nil, errno.Path("readdir", name, err)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			full := path.Join(dir, e.Name)
			out = append(out, DirEntry{name: e.Name, typ: e.Type, info: func() (*FileInfo, error) {
				return b.stat(ctx, full, false)
			}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func (b *localBackend) stat(ctx context.Context, name string, follow bool) (*FileInfo, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	var st vfs.Stat
	var err error
	if follow {
		st, err = b.vm.VFS.Stat(ctx, b.caller, name)
	} else {
		st, err = b.vm.VFS.Lstat(ctx, b.caller, name)
	}
	if err != nil {
		return nil, err
	}
	return &FileInfo{name: baseName(path.Clean(name)), st: statFromVFS(st)}, nil
}

func (b *localBackend) remove(ctx context.Context, name string, all bool) error {
	if err := b.check(); err != nil {
		return err
	}
	st, err := b.vm.VFS.Lstat(ctx, b.caller, name)
	if err != nil {
		if all && errno.Of(err) == errno.ENOENT {
			return nil
		}
		return err
	}
	if st.Type() != vfs.TypeDir {
		return b.vm.VFS.Unlink(ctx, b.caller, name)
	}
	if all {
		ents, err := b.readDir(ctx, name)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := b.remove(ctx, path.Join(name, e.name), true); err != nil {
				return err
			}
		}
	}
	return b.vm.VFS.Rmdir(ctx, b.caller, name)
}

func (b *localBackend) rename(ctx context.Context, oldname, newname string) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.vm.VFS.Rename(ctx, b.caller, oldname, newname)
}

func (b *localBackend) symlink(ctx context.Context, target, link string) error {
	if err := b.check(); err != nil {
		return err
	}
	if err := b.vm.VFS.Symlink(ctx, b.caller, target, link); err != nil {
		return err
	}
	return b.own(ctx, link)
}

func (b *localBackend) readlink(ctx context.Context, name string) (string, error) {
	if err := b.check(); err != nil {
		return "", err
	}
	return b.vm.VFS.Readlink(ctx, b.caller, name)
}

func (b *localBackend) chmod(ctx context.Context, name string, mode uint32) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.vm.VFS.SetAttr(ctx, b.caller, name, true, vfs.SetAttr{Mask: vfs.SetMode, Mode: mode})
}

func (b *localBackend) mount(ctx context.Context, m Mount) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.vm.Mount(ctx, vm.Mount(m))
}

func (b *localBackend) unmount(ctx context.Context, guestPath string) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.vm.VFS.Unmount(ctx, b.caller, guestPath)
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
func (b *localBackend) newStdio(ctx context.Context, devNullIn bool) (*stdio, error) {
	k := b.vm.Kernel
	s := &stdio{}
	fail := func(err error) (*stdio, error) {
		s.releaseChild()
		s.releaseHost()
		return nil, err
	}
	if devNullIn {
		f, err := b.vm.VFS.Open(ctx, vfs.Root, "/dev/null", vfs.O_RDONLY, 0)
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

func (b *localBackend) spawnProcess(ctx context.Context, argv, env []string, cwd string, s *stdio) (*kernel.Process, error) {
	if cwd == "" {
		cwd = b.cwd
	}
	env = mergeEnv(env, map[string]string{"PWD": cwd})
	return b.vm.Kernel.SpawnHost(ctx, kernel.SpawnOptions{
		Argv:     argv,
		Env:      env,
		Cwd:      cwd,
		Files:    s.files[:],
		NewGroup: true,
	})
}

// spawnFailure turns a failed spawn into the result a shell would give:
// 127 for a command not found, 126 for one that cannot be executed.
func spawnFailure(argv []string, err error) (*Result, bool) {
	var nf *kernel.NotFoundError
	switch {
	case errors.As(err, &nf):
		return &Result{ExitCode: 127, Outcome: Failed,
			Stderr: []byte("secexec: " + argv[0] + ": command not found\n")}, true
	case errors.Is(err, errno.ENOENT):
		return &Result{ExitCode: 127, Outcome: Failed,
			Stderr: []byte("secexec: " + argv[0] + ": No such file or directory\n")}, true
	case errors.Is(err, errno.EACCES), errors.Is(err, errno.ENOEXEC), errors.Is(err, errno.EISDIR):
		return &Result{ExitCode: 126, Outcome: Failed,
			Stderr: []byte("secexec: " + argv[0] + ": " + errno.Of(err).Error() + "\n")}, true
	}
	return nil, false
}

// boundedBuffer keeps up to limit bytes and counts what it dropped.
type boundedBuffer struct {
	b       []byte
	limit   int
	dropped bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	room := w.limit - len(w.b)
	if room < len(p) {
		w.dropped = true
		if room > 0 {
			w.b = append(w.b, p[:room]...)
		}
		return len(p), nil
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// drain copies a pipe's read end to w until EOF.
func drain(f vfs.File, w io.Writer, done *sync.WaitGroup) {
	defer done.Done()
	buf := make([]byte, 32<<10)
	ctx := context.Background()
	for {
		n, err := f.Read(ctx, buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if n == 0 || err != nil {
			return
		}
	}
}

func (b *localBackend) run(ctx context.Context, argv, env []string, opts *ExecOptions) (*Result, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("secexec: empty command: %w", errno.EINVAL)
	}
	env = mergeEnv(env, opts.Env)
	s, err := b.newStdio(ctx, opts.Stdin == nil)
	if err != nil {
		return nil, err
	}
	defer s.releaseHost()
	start := time.Now()
	p, err := b.spawnProcess(ctx, argv, env, opts.Cwd, s)
	s.releaseChild()
	if err != nil {
		if r, ok := spawnFailure(argv, err); ok {
			r.Duration = time.Since(start)
			if opts.Stderr != nil {
				_, _ = opts.Stderr.Write(r.Stderr)
				r.Stderr = nil
			}
			return r, nil
		}
		return nil, err
	}
	limit := opts.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	var outW, errW io.Writer
	outBuf, errBuf := &boundedBuffer{limit: limit}, &boundedBuffer{limit: limit}
	outW, errW = outBuf, errBuf
	if opts.Stdout != nil {
		outW = opts.Stdout
	}
	if opts.Stderr != nil {
		errW = opts.Stderr
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go drain(s.stdoutR, outW, &readers)
	go drain(s.stderrR, errW, &readers)
	if s.stdinW != nil {
		w := s.stdinW
		w.IncRef()
		go func() {
			defer w.DecRef()
			feedStdin(p.Context(), w, opts.Stdin)
		}()
	}

	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	outcome := Outcome("")
	select {
	case <-p.Done():
	case <-timeout:
		outcome = TimedOut
	case <-ctx.Done():
		outcome = Cancelled
	}
	init := b.vm.Kernel.Init()
	if outcome != "" {
		_ = init.Kill(-p.PID(), kernel.SIGKILL)
	}
	st, _ := p.HostWait(context.Background())
	// Anything the program left behind in its group would keep the output
	// pipes open: it goes with the program.
	_ = init.Kill(-p.PID(), kernel.SIGKILL)
	readers.Wait()

	res := &Result{Duration: time.Since(start), ExitCode: st.ShellCode()}
	if st.Signal != 0 {
		res.Signal = st.Signal.String()
	}
	if opts.Stdout == nil {
		res.Stdout = outBuf.b
	}
	if opts.Stderr == nil {
		res.Stderr = errBuf.b
	}
	res.Truncated = outBuf.dropped || errBuf.dropped
	switch {
	case outcome == TimedOut:
		res.Outcome, res.ExitCode, res.Signal = TimedOut, 124, ""
		msg := []byte(TimeLimitMessage + "\n")
		if opts.Stderr != nil {
			_, _ = opts.Stderr.Write(msg)
		} else {
			res.Stderr = append(res.Stderr, msg...)
		}
	case outcome == Cancelled:
		res.Outcome = Cancelled
		return res, ctx.Err()
	case res.ExitCode == 0:
		res.Outcome = Succeeded
	default:
		res.Outcome = Failed
	}
	return res, nil
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

func (b *localBackend) spawn(ctx context.Context, argv, env []string, opts *SpawnOptions) (*Process, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("secexec: empty command: %w", errno.EINVAL)
	}
	s, err := b.newStdio(ctx, false)
	if err != nil {
		return nil, err
	}
	p, err := b.spawnProcess(ctx, argv, env, opts.Cwd, s)
	s.releaseChild()
	if err != nil {
		s.releaseHost()
		return nil, err
	}
	h := &localProcess{p: p, init: b.vm.Kernel.Init()}
	return &Process{
		Stdin:  &pipeWriter{f: s.stdinW, ctx: p.Context()},
		Stdout: &pipeReader{f: s.stdoutR},
		Stderr: &pipeReader{f: s.stderrR},
		h:      h,
	}, nil
}

type localProcess struct {
	p    *kernel.Process
	init *kernel.Process
}

func (l *localProcess) pid() int { return l.p.PID() }

func (l *localProcess) signal(sig Signal) error { return l.p.Signal(kernel.Signal(sig)) }

func (l *localProcess) wait(ctx context.Context) (*ExitStatus, error) {
	st, err := l.p.HostWait(ctx)
	if err != nil {
		return nil, err
	}
	es := &ExitStatus{ExitCode: st.ShellCode()}
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
