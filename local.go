package secexec

import (
	"context"
	"errors"
	"io"
	"net"
	"path"

	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
)

// backend is what a VM handle talks to: the VM in this process, or (with
// the engine) a VM in another process. Every argument and result is plain
// data, so the same calls can cross a socket.
type backend interface {
	readFile(ctx context.Context, name string, limit int64) ([]byte, error)
	writeFile(ctx context.Context, name string, data []byte, perm uint32) error
	readAt(ctx context.Context, name string, off int64, n int) ([]byte, error)
	writeAt(ctx context.Context, name string, off int64, data []byte) error
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
	asGuest() backend
	run(ctx context.Context, argv, env []string, opts *ExecOptions) (*Result, error)
	spawn(ctx context.Context, argv, env []string, opts *SpawnOptions) (*Process, error)
	dial(ctx context.Context, port uint16) (net.Conn, error)
	watch(ctx context.Context, name string, recursive bool) (io.ReadCloser, error)
	newContext(ctx context.Context, spec vmhost.ContextSpec) (vmhost.JSContext, error)
	close(ctx context.Context) error
	done() <-chan struct{}
	err() error
}

// processHandle is the backend side of a Process.
type processHandle interface {
	pid() int
	signal(sig Signal) error
	wait(ctx context.Context) (*ExitStatus, error)
	resize(rows, cols uint16) error
}

// vmAPI is a VM wherever it runs: a *vmhost.Host in this process, or a
// *client.VM in an engine process. Both offer the same operations with
// the same arguments, results and errors, so one adapter (apiBackend)
// serves both transports and they cannot drift apart.
type vmAPI interface {
	// The host's file operations, and the guest's.
	vmhost.FileOps
	Guest() vmhost.FileOps
	Mount(ctx context.Context, m vm.Mount) error
	Unmount(ctx context.Context, guestPath string) error
	Run(ctx context.Context, spec vmhost.RunSpec) (*vmhost.Exit, error)
	Spawn(ctx context.Context, spec vmhost.SpawnSpec) (vmhost.Process, error)
	Dial(ctx context.Context, port uint16) (net.Conn, error)
	NewContext(ctx context.Context, spec vmhost.ContextSpec) (vmhost.JSContext, error)
	Close(ctx context.Context) error
	Done() <-chan struct{}
	Err() error
}

// hostConfig is the vmhost configuration of a VM with opts whose program
// loaders are rt.
func hostConfig(opts Options, rt vmhost.Runtime) vmhost.Config {
	mounts := make([]vm.Mount, len(opts.Mounts))
	for i, m := range opts.Mounts {
		mounts[i] = vm.Mount(m)
	}
	return vmhost.Config{
		Policy:   opts.Permissions,
		Audit:    opts.Audit,
		Limits:   opts.Limits,
		Mounts:   mounts,
		Cwd:      opts.Cwd,
		Hostname: opts.Hostname,
		Clock:    opts.Clock,
		Logger:   opts.Logger,
		Runtime:  rt,
		Tools:    toolHost(opts.Tools),
	}
}

// newLocalBackend runs the VM in this process.
func newLocalBackend(ctx context.Context, opts Options, rt vmhost.Runtime, from *Snapshot) (backend, error) {
	cfg := hostConfig(opts, rt)
	if from != nil {
		m, err := snapshot.Load(ctx, from.Store.st, from.ID)
		if err != nil {
			return nil, err
		}
		cfg.From = &vmhost.Restore{Store: from.Store.st, Manifest: m}
	}
	h, err := vmhost.New(ctx, cfg)
	if err != nil {
		return nil, apiErr(err)
	}
	return newAPIBackend(h), nil
}

// apiErr translates the errors of the internal packages to the public
// API's own: the same text, the public types.
func apiErr(err error) error {
	if err == nil {
		return nil
	}
	var tl *vmhost.TooLargeError
	switch {
	case errors.Is(err, vmhost.ErrClosed):
		return ErrClosed
	case errors.As(err, &tl):
		return &TooLargeError{What: tl.What, Size: tl.Size, Limit: tl.Limit}
	}
	return err
}

// apiBackend adapts a vmAPI to the VM handle.
type apiBackend struct {
	api vmAPI
	// files are the file operations the backend's FS performs: the
	// host's (api), or the guest's for FS.AsGuest.
	files vmhost.FileOps
	guest bool
}

func newAPIBackend(api vmAPI) *apiBackend { return &apiBackend{api: api, files: api} }

// asGuest returns the backend whose file operations act as the VM's guest
// user under the VM's policy.
func (b *apiBackend) asGuest() backend {
	if b.guest {
		return b
	}
	return &apiBackend{api: b.api, files: b.api.Guest(), guest: true}
}

func (b *apiBackend) close(ctx context.Context) error { return apiErr(b.api.Close(ctx)) }
func (b *apiBackend) done() <-chan struct{}           { return b.api.Done() }
func (b *apiBackend) err() error                      { return apiErr(b.api.Err()) }

func (b *apiBackend) readFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	data, err := b.files.ReadFile(ctx, name, limit)
	return data, apiErr(err)
}

func (b *apiBackend) writeFile(ctx context.Context, name string, data []byte, perm uint32) error {
	return apiErr(b.files.WriteFile(ctx, name, data, perm))
}

func (b *apiBackend) readAt(ctx context.Context, name string, off int64, n int) ([]byte, error) {
	data, err := b.files.ReadAt(ctx, name, off, n)
	return data, apiErr(err)
}

func (b *apiBackend) writeAt(ctx context.Context, name string, off int64, data []byte) error {
	return apiErr(b.files.WriteAt(ctx, name, off, data))
}

func (b *apiBackend) mkdir(ctx context.Context, name string, perm uint32) error {
	return apiErr(b.files.Mkdir(ctx, name, perm))
}

func (b *apiBackend) mkdirAll(ctx context.Context, name string, perm uint32) error {
	return apiErr(b.files.MkdirAll(ctx, name, perm))
}

func (b *apiBackend) readDir(ctx context.Context, name string) ([]DirEntry, error) {
	dir, ents, err := b.files.ReadDir(ctx, name)
	if err != nil {
		return nil, apiErr(err)
	}
	out := make([]DirEntry, len(ents))
	for i, e := range ents {
		full := path.Join(dir, e.Name)
		out[i] = DirEntry{name: e.Name, typ: e.Type, info: func() (*FileInfo, error) {
			return b.stat(ctx, full, false)
		}}
	}
	return out, nil
}

func (b *apiBackend) stat(ctx context.Context, name string, follow bool) (*FileInfo, error) {
	st, err := b.files.Stat(ctx, name, follow)
	if err != nil {
		return nil, apiErr(err)
	}
	return &FileInfo{name: baseName(path.Clean(name)), st: statFromVFS(st)}, nil
}

func (b *apiBackend) remove(ctx context.Context, name string, all bool) error {
	return apiErr(b.files.Remove(ctx, name, all))
}

func (b *apiBackend) rename(ctx context.Context, oldname, newname string) error {
	return apiErr(b.files.Rename(ctx, oldname, newname))
}

func (b *apiBackend) symlink(ctx context.Context, target, link string) error {
	return apiErr(b.files.Symlink(ctx, target, link))
}

func (b *apiBackend) readlink(ctx context.Context, name string) (string, error) {
	s, err := b.files.Readlink(ctx, name)
	return s, apiErr(err)
}

func (b *apiBackend) chmod(ctx context.Context, name string, mode uint32) error {
	return apiErr(b.files.Chmod(ctx, name, mode))
}

func (b *apiBackend) mount(ctx context.Context, m Mount) error {
	if b.guest {
		// Mounts are the embedder's: a guest may not change them.
		return errno.Path("mount", m.Path, errno.EPERM)
	}
	return apiErr(b.api.Mount(ctx, vm.Mount(m)))
}

func (b *apiBackend) unmount(ctx context.Context, guestPath string) error {
	if b.guest {
		return errno.Path("umount", guestPath, errno.EPERM)
	}
	return apiErr(b.api.Unmount(ctx, guestPath))
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

func (b *apiBackend) run(ctx context.Context, argv, env []string, opts *ExecOptions) (*Result, error) {
	limit := opts.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	outBuf, errBuf := &boundedBuffer{limit: limit}, &boundedBuffer{limit: limit}
	var outW, errW io.Writer = outBuf, errBuf
	if opts.Stdout != nil {
		outW = opts.Stdout
	}
	if opts.Stderr != nil {
		errW = opts.Stderr
	}
	exit, err := b.api.Run(ctx, vmhost.RunSpec{
		Argv:    argv,
		Env:     mergeEnv(env, opts.Env),
		Cwd:     opts.Cwd,
		Stdin:   opts.Stdin,
		Stdout:  outW,
		Stderr:  errW,
		Timeout: opts.Timeout,
	})
	if exit == nil {
		return nil, apiErr(err)
	}
	res := &Result{
		ExitCode:  exit.Code,
		Signal:    exit.Signal,
		Outcome:   Outcome(exit.Outcome),
		Reason:    Reason(exit.Reason),
		Duration:  exit.Duration,
		Truncated: outBuf.dropped || errBuf.dropped,
	}
	if opts.Stdout == nil {
		res.Stdout = outBuf.b
	}
	if opts.Stderr == nil {
		res.Stderr = errBuf.b
	}
	// What the host adds (why a spawn failed, the time-limit message)
	// comes after the program's output and is never cut by MaxOutput.
	if len(exit.Note) > 0 {
		if opts.Stderr != nil {
			_, _ = opts.Stderr.Write(exit.Note)
		} else {
			res.Stderr = append(res.Stderr, exit.Note...)
		}
	}
	return res, apiErr(err)
}

func (b *apiBackend) newContext(ctx context.Context, spec vmhost.ContextSpec) (vmhost.JSContext, error) {
	c, err := b.api.NewContext(ctx, spec)
	return c, apiErr(err)
}

func (b *apiBackend) dial(ctx context.Context, port uint16) (net.Conn, error) {
	c, err := b.api.Dial(ctx, port)
	return c, apiErr(err)
}

func (b *apiBackend) watch(ctx context.Context, name string, recursive bool) (io.ReadCloser, error) {
	rc, err := b.files.Watch(ctx, name, recursive)
	return rc, apiErr(err)
}

func (b *apiBackend) spawn(ctx context.Context, argv, env []string, opts *SpawnOptions) (*Process, error) {
	spec := vmhost.SpawnSpec{Argv: argv, Env: env, Cwd: opts.Cwd}
	if opts.PTY != nil {
		spec.PTY = &vmhost.PTYSize{Rows: clampSize(opts.PTY.Rows, 24), Cols: clampSize(opts.PTY.Cols, 80)}
	}
	p, err := b.api.Spawn(ctx, spec)
	if err != nil {
		return nil, apiErr(err)
	}
	return &Process{Stdin: p.Stdin(), Stdout: p.Stdout(), Stderr: p.Stderr(), h: apiProcess{p}}, nil
}

type apiProcess struct{ p vmhost.Process }

func (a apiProcess) pid() int                { return a.p.PID() }
func (a apiProcess) signal(sig Signal) error { return apiErr(a.p.Signal(int(sig))) }
func (a apiProcess) resize(rows, cols uint16) error {
	return apiErr(a.p.Resize(rows, cols))
}

func (a apiProcess) wait(ctx context.Context) (*ExitStatus, error) {
	st, err := a.p.Wait(ctx)
	if err != nil {
		return nil, apiErr(err)
	}
	return &ExitStatus{ExitCode: st.Code, Signal: st.Signal}, nil
}
