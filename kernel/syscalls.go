package kernel

import (
	"context"
	"errors"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// AtFDCWD is the dirfd meaning "the working directory" in *at calls.
const AtFDCWD = -100

// At returns the VFS caller for a path relative to dirfd: the process's
// working directory for AtFDCWD, else the directory dirfd is open on.
func (p *Process) At(dirfd int) (*vfs.Caller, error) {
	c := p.Caller()
	if dirfd == AtFDCWD {
		return c, nil
	}
	f, err := p.fds.Get(dirfd)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	st, err := f.Stat(context.Background())
	if err != nil {
		return nil, err
	}
	if st.Type() != vfs.TypeDir {
		return nil, errno.ENOTDIR
	}
	cc := *c
	cc.Cwd = f.Path()
	return &cc, nil
}

// Open opens path relative to dirfd and installs the file at the lowest
// free descriptor.
func (p *Process) Open(ctx context.Context, dirfd int, path string, flags vfs.OpenFlags, mode uint32) (int, error) {
	c, err := p.At(dirfd)
	if err != nil {
		return -1, err
	}
	f, err := p.k.vfs.Open(ctx, c, path, flags, mode)
	if err != nil {
		return -1, err
	}
	fd, err := p.fds.Install(f, 0, flags&vfs.O_CLOEXEC != 0)
	if err != nil {
		f.DecRef()
		return -1, err
	}
	return fd, nil
}

// Close closes fd.
func (p *Process) Close(fd int) error { return p.fds.Close(fd) }

// File returns the open file at fd with a reference the caller must drop.
func (p *Process) File(fd int) (vfs.File, error) { return p.fds.Get(fd) }

// ioFile is the common start of a blocking I/O call: the file at fd,
// once a stop of the process is over, and the context a signal interrupts.
// release drops both.
func (p *Process) ioFile(ctx context.Context, fd int) (f vfs.File, bctx context.Context, release func(), err error) {
	f, err = p.fds.Get(fd)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := p.waitIfStopped(ctx); err != nil {
		f.DecRef()
		return nil, nil, nil, err
	}
	bctx, done := p.blockCtx(ctx)
	return f, bctx, func() { done(); f.DecRef() }, nil
}

// Read reads from fd.
func (p *Process) Read(ctx context.Context, fd int, b []byte) (int, error) {
	f, bctx, release, err := p.ioFile(ctx, fd)
	if err != nil {
		return 0, err
	}
	defer release()
	return f.Read(bctx, b)
}

// Write writes to fd. A write to a pipe without readers raises SIGPIPE in
// the process and fails with EPIPE, as Linux does.
func (p *Process) Write(ctx context.Context, fd int, b []byte) (int, error) {
	f, bctx, release, err := p.ioFile(ctx, fd)
	if err != nil {
		return 0, err
	}
	defer release()
	n, err := f.Write(bctx, b)
	if err != nil && errno.Of(err) == errno.EPIPE {
		p.sendSignal(SIGPIPE, p.pid)
	}
	return n, err
}

// Pread reads from fd at off.
func (p *Process) Pread(ctx context.Context, fd int, b []byte, off int64) (int, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	bctx, done := p.blockCtx(ctx)
	defer done()
	return f.Pread(bctx, b, off)
}

// Pwrite writes to fd at off.
func (p *Process) Pwrite(ctx context.Context, fd int, b []byte, off int64) (int, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	bctx, done := p.blockCtx(ctx)
	defer done()
	return f.Pwrite(bctx, b, off)
}

// Seek moves fd's offset.
func (p *Process) Seek(ctx context.Context, fd int, off int64, whence int) (int64, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return f.Seek(ctx, off, whence)
}

// Fstat returns the attributes of the file at fd.
func (p *Process) Fstat(ctx context.Context, fd int) (vfs.Stat, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return vfs.Stat{}, err
	}
	defer f.DecRef()
	return f.Stat(ctx)
}

// Fsetattr is fchmod/fchown/ftruncate/futimens on fd, with the ownership
// rules checked against the process's credentials.
func (p *Process) Fsetattr(ctx context.Context, fd int, attr vfs.SetAttr) error {
	f, err := p.fds.Get(fd)
	if err != nil {
		return err
	}
	defer f.DecRef()
	if p.uid != 0 && attr.Mask&(vfs.SetMode|vfs.SetUID|vfs.SetGID|vfs.SetAtime|vfs.SetMtime) != 0 {
		st, err := f.Stat(ctx)
		if err != nil {
			return err
		}
		if st.UID != p.uid {
			return errno.EPERM
		}
		if attr.Mask&vfs.SetUID != 0 && attr.UID != st.UID {
			return errno.EPERM
		}
	}
	return f.SetAttr(ctx, attr)
}

// ReadDir reads directory entries from fd.
func (p *Process) ReadDir(ctx context.Context, fd int, max int) ([]vfs.Dirent, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	return f.ReadDir(ctx, max)
}

// Dup duplicates fd to the lowest free descriptor >= min.
func (p *Process) Dup(fd, min int, cloexec bool) (int, error) { return p.fds.Dup(fd, min, cloexec) }

// Dup2 makes newfd a copy of oldfd.
func (p *Process) Dup2(oldfd, newfd int, cloexec bool) error {
	return p.fds.Dup2(oldfd, newfd, cloexec)
}

// Pipe creates a pipe and returns its read and write descriptors.
func (p *Process) Pipe(flags vfs.OpenFlags) (r, w int, err error) {
	rf, wf, err := p.k.newPipe(true)
	if err != nil {
		return -1, -1, err
	}
	if flags&vfs.O_NONBLOCK != 0 {
		_ = rf.SetFlags(vfs.O_NONBLOCK)
		_ = wf.SetFlags(vfs.O_NONBLOCK)
	}
	cloexec := flags&vfs.O_CLOEXEC != 0
	r, err = p.fds.Install(rf, 0, cloexec)
	if err != nil {
		rf.DecRef()
		wf.DecRef()
		return -1, -1, err
	}
	w, err = p.fds.Install(wf, 0, cloexec)
	if err != nil {
		_ = p.fds.Close(r)
		wf.DecRef()
		return -1, -1, err
	}
	return r, w, nil
}

// NewPipe returns a pipe's two ends as open files, each with one
// reference, for the host to wire into a spawn's stdio.
func (k *Kernel) NewPipe() (r, w vfs.File, err error) {
	rf, wf, err := k.newPipe(false)
	if err != nil {
		return nil, nil, err
	}
	return rf, wf, nil
}

// GetFlags returns fd's access mode and status flags (F_GETFL).
func (p *Process) GetFlags(fd int) (vfs.OpenFlags, error) {
	f, err := p.fds.Get(fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return f.Flags(), nil
}

// SetFlags sets fd's status flags (F_SETFL).
func (p *Process) SetFlags(fd int, flags vfs.OpenFlags) error {
	f, err := p.fds.Get(fd)
	if err != nil {
		return err
	}
	defer f.DecRef()
	return f.SetFlags(flags)
}

// Stat returns the attributes of path relative to dirfd; follow selects
// stat or lstat behaviour.
func (p *Process) Stat(ctx context.Context, dirfd int, path string, follow bool) (vfs.Stat, error) {
	c, err := p.At(dirfd)
	if err != nil {
		return vfs.Stat{}, err
	}
	if follow {
		return p.k.vfs.Stat(ctx, c, path)
	}
	return p.k.vfs.Lstat(ctx, c, path)
}

// Statfs reports the capacity of the filesystem holding path (relative
// to dirfd), as statfs(2). It is the one statfs of every guest runtime
// (WASI's path_statfs and node's fs.statfs), so they report the same
// numbers; host mounts report synthetic ones (kernel/fs/hostfs).
func (p *Process) Statfs(ctx context.Context, dirfd int, path string) (vfs.Statfs, error) {
	c, err := p.At(dirfd)
	if err != nil {
		return vfs.Statfs{}, err
	}
	return p.k.vfs.Statfs(ctx, c, path)
}

// Mkdir creates a directory relative to dirfd.
func (p *Process) Mkdir(ctx context.Context, dirfd int, path string, mode uint32) error {
	c, err := p.At(dirfd)
	if err != nil {
		return err
	}
	return p.k.vfs.Mkdir(ctx, c, path, mode)
}

// Unlink removes a file, or with dir an empty directory.
func (p *Process) Unlink(ctx context.Context, dirfd int, path string, dir bool) error {
	c, err := p.At(dirfd)
	if err != nil {
		return err
	}
	if dir {
		return p.k.vfs.Rmdir(ctx, c, path)
	}
	return p.k.vfs.Unlink(ctx, c, path)
}

// Rename renames oldpath (relative to olddirfd) to newpath.
func (p *Process) Rename(ctx context.Context, olddirfd int, oldpath string, newdirfd int, newpath string) error {
	oc, err := p.At(olddirfd)
	if err != nil {
		return err
	}
	nc, err := p.At(newdirfd)
	if err != nil {
		return err
	}
	if oc.Cwd != nc.Cwd {
		oldpath = absJoin(oc.Cwd, oldpath)
		newpath = absJoin(nc.Cwd, newpath)
	}
	return p.k.vfs.Rename(ctx, oc, oldpath, newpath)
}

// Link creates newpath as a hard link to oldpath.
func (p *Process) Link(ctx context.Context, olddirfd int, oldpath string, newdirfd int, newpath string) error {
	oc, err := p.At(olddirfd)
	if err != nil {
		return err
	}
	nc, err := p.At(newdirfd)
	if err != nil {
		return err
	}
	return p.k.vfs.Link(ctx, oc, absJoin(oc.Cwd, oldpath), absJoin(nc.Cwd, newpath))
}

func absJoin(dir, path string) string {
	if path != "" && path[0] == '/' {
		return path
	}
	if dir == "/" {
		return "/" + path
	}
	return dir + "/" + path
}

// Symlink creates linkpath (relative to dirfd) pointing at target.
func (p *Process) Symlink(ctx context.Context, target string, dirfd int, linkpath string) error {
	c, err := p.At(dirfd)
	if err != nil {
		return err
	}
	return p.k.vfs.Symlink(ctx, c, target, linkpath)
}

// Readlink returns the target of a symlink relative to dirfd.
func (p *Process) Readlink(ctx context.Context, dirfd int, path string) (string, error) {
	c, err := p.At(dirfd)
	if err != nil {
		return "", err
	}
	return p.k.vfs.Readlink(ctx, c, path)
}

// SetAttr changes attributes of path relative to dirfd.
func (p *Process) SetAttr(ctx context.Context, dirfd int, path string, follow bool, attr vfs.SetAttr) error {
	c, err := p.At(dirfd)
	if err != nil {
		return err
	}
	return p.k.vfs.SetAttr(ctx, c, path, follow, attr)
}

// Access checks access to path relative to dirfd.
func (p *Process) Access(ctx context.Context, dirfd int, path string, mode uint32) error {
	c, err := p.At(dirfd)
	if err != nil {
		return err
	}
	return p.k.vfs.Access(ctx, c, path, mode)
}

// blockCtx is the context for a call that may block: it ends when the
// caller's does or when the process is killed. Runtimes pass the process
// context itself (or one derived from it), which costs nothing; any other
// context is merged with it.
func (p *Process) blockCtx(ctx context.Context) (context.Context, func()) {
	if ctx == nil || ctx == p.ctx || ctx.Done() == nil {
		return p.ctx, func() {}
	}
	m, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.ctx, cancel)
	return m, func() { stop(); cancel() }
}

// PollFD is one entry of Poll.
type PollFD struct {
	FD      int
	Events  waiter.EventMask
	Revents waiter.EventMask
}

// Poll waits until one of fds is ready or timeout passes (negative =
// forever), as poll(2), and returns the number of ready entries. A
// descriptor that is not open reports POLLNVAL (0x20).
func (p *Process) Poll(ctx context.Context, fds []PollFD, timeout time.Duration) (int, error) {
	const pollNVAL = 0x20
	files := make([]vfs.File, len(fds))
	defer func() {
		for _, f := range files {
			if f != nil {
				f.DecRef()
			}
		}
	}()
	always := waiter.EventErr | waiter.EventHup
	check := func() int {
		n := 0
		for i := range fds {
			fds[i].Revents = 0
			if files[i] == nil {
				if fds[i].FD >= 0 {
					fds[i].Revents = pollNVAL
					n++
				}
				continue
			}
			if r := files[i].Readiness(fds[i].Events | always); r != 0 {
				fds[i].Revents = r
				n++
			}
		}
		return n
	}
	for i := range fds {
		if fds[i].FD < 0 {
			continue
		}
		if f, err := p.fds.Get(fds[i].FD); err == nil {
			files[i] = f
		}
	}
	if n := check(); n > 0 || timeout == 0 {
		return n, nil
	}
	notify := make(chan struct{}, 1)
	entries := make([]*waiter.Entry, len(fds))
	for i, f := range files {
		if f == nil {
			continue
		}
		e := waiter.NewFuncEntry(fds[i].Events|always, func(waiter.EventMask) {
			select {
			case notify <- struct{}{}:
			default:
			}
		})
		entries[i] = e
		f.EventRegister(e)
	}
	defer func() {
		for i, f := range files {
			if f != nil && entries[i] != nil {
				f.EventUnregister(entries[i])
			}
		}
	}()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	bctx, done := p.blockCtx(ctx)
	defer done()
	for {
		if n := check(); n > 0 {
			return n, nil
		}
		select {
		case <-notify:
		case <-deadline:
			return check(), nil
		case <-bctx.Done():
			return 0, errno.EINTR
		}
	}
}

// IsInterrupted reports whether err is the EINTR of a killed or
// interrupted call.
func IsInterrupted(err error) bool { return errors.Is(err, errno.EINTR) }
