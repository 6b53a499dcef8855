package vfs

import (
	"context"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

var (
	errPERM   error = errno.EPERM
	errNOTDIR error = errno.ENOTDIR
	errINVAL  error = errno.EINVAL
	errNXIO   error = errno.ENXIO
	errSPIPE  error = errno.ESPIPE
	errBADF   error = errno.EBADF
	errISDIR  error = errno.EISDIR
)

// Seek whence values of lseek(2).
const (
	SeekSet  = 0
	SeekCur  = 1
	SeekEnd  = 2
	SeekData = 3
	SeekHole = 4
)

// File is an open file description: what a file descriptor points at. dup
// and fd inheritance share one File, so they share its offset and status
// flags. Regular files and directories opened through the VFS, pipe ends,
// devices and (later) sockets are all Files, so the fd table, poll and the
// syscall layers treat them alike.
//
// Every method may be called from several goroutines at once.
type File interface {
	waiter.Waitable

	// Read reads at the current offset and advances it.
	Read(ctx context.Context, p []byte) (int, error)
	// Write writes at the current offset (or the end, with O_APPEND) and
	// advances it.
	Write(ctx context.Context, p []byte) (int, error)
	// Pread reads at off without moving the offset (ESPIPE on streams).
	Pread(ctx context.Context, p []byte, off int64) (int, error)
	// Pwrite writes at off without moving the offset (ESPIPE on streams).
	Pwrite(ctx context.Context, p []byte, off int64) (int, error)
	// Seek moves the offset as lseek(2) does.
	Seek(ctx context.Context, off int64, whence int) (int64, error)
	// ReadDir reads up to max directory entries from the current position
	// and advances it; "." and ".." come first. ENOTDIR for non-directories.
	ReadDir(ctx context.Context, max int) ([]Dirent, error)
	// Stat returns the attributes of the file.
	Stat(ctx context.Context) (Stat, error)
	// SetAttr is fchmod, fchown, ftruncate and futimens.
	SetAttr(ctx context.Context, attr SetAttr) error
	// Sync is fsync.
	Sync(ctx context.Context) error
	// Flags returns the access mode and status flags (O_APPEND, O_NONBLOCK).
	Flags() OpenFlags
	// SetFlags replaces the changeable status flags (O_APPEND, O_NONBLOCK),
	// as fcntl(F_SETFL) does; other bits are ignored.
	SetFlags(flags OpenFlags) error
	// Path is the guest path the file was opened by, or a Linux-style
	// pseudo name such as "pipe:[12]" for files without one.
	Path() string

	// IncRef adds a reference (an fd, an inherited fd, a pending call).
	IncRef()
	// DecRef drops a reference; the last one releases the file (closing a
	// pipe end, say). It never blocks.
	DecRef()
}

// Refs is a reference count that calls a release function once, when the
// count drops to zero. Embed it to implement File.IncRef and File.DecRef.
type Refs struct {
	n       atomic.Int64
	release func()
}

// InitRefs sets the count to one and the function to run on release.
func (r *Refs) InitRefs(release func()) {
	r.n.Store(1)
	r.release = release
}

// IncRef adds a reference.
func (r *Refs) IncRef() { r.n.Add(1) }

// DecRef drops a reference and releases on the last.
func (r *Refs) DecRef() {
	if n := r.n.Add(-1); n == 0 {
		if r.release != nil {
			r.release()
		}
	} else if n < 0 {
		// A double release is a kernel bug; make it loud in tests rather
		// than corrupting a reused object silently.
		panic("vfs: DecRef of a released file")
	}
}

// TryIncRef adds a reference unless the count already dropped to zero
// (the file is being released), and reports whether it did. Code that
// found a file without holding a reference (procfs following
// /proc/PID/fd/N while the owner may close N) must use it instead of
// IncRef.
func (r *Refs) TryIncRef() bool {
	for {
		n := r.n.Load()
		if n <= 0 {
			return false
		}
		if r.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// ReadRefs returns the current count, for tests and /proc.
func (r *Refs) ReadRefs() int64 { return r.n.Load() }

// StreamDefaults supplies the methods that non-seekable, non-directory
// files (pipes, sockets, ttys) share: positional I/O and seeking fail with
// ESPIPE, ReadDir with ENOTDIR, Sync succeeds.
type StreamDefaults struct{}

// Pread fails with ESPIPE.
func (StreamDefaults) Pread(context.Context, []byte, int64) (int, error) { return 0, errSPIPE }

// Pwrite fails with ESPIPE.
func (StreamDefaults) Pwrite(context.Context, []byte, int64) (int, error) { return 0, errSPIPE }

// Seek fails with ESPIPE.
func (StreamDefaults) Seek(context.Context, int64, int) (int64, error) { return 0, errSPIPE }

// ReadDir fails with ENOTDIR.
func (StreamDefaults) ReadDir(context.Context, int) ([]Dirent, error) { return nil, errNOTDIR }

// Sync does nothing.
func (StreamDefaults) Sync(context.Context) error { return nil }
