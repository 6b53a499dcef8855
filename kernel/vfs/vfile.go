package vfs

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

// statusFlags are the flags fcntl(F_SETFL) may change.
const statusFlags = O_APPEND | O_NONBLOCK

// fileBase holds what every VFS-opened file has.
type fileBase struct {
	Refs
	vfs   *VFS
	ino   Inode
	mnt   *Mount
	path  string
	flags atomic.Uint32
}

func (f *fileBase) init(v *VFS, ino Inode, mnt *Mount, path string, flags OpenFlags, release func()) {
	f.vfs, f.ino, f.mnt, f.path = v, ino, mnt, path
	f.flags.Store(uint32(flags &^ (O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW)))
	f.InitRefs(release)
}

func (f *fileBase) Flags() OpenFlags { return OpenFlags(f.flags.Load()) }

func (f *fileBase) SetFlags(flags OpenFlags) error {
	for {
		old := f.flags.Load()
		nw := old&^uint32(statusFlags) | uint32(flags&statusFlags)
		if f.flags.CompareAndSwap(old, nw) {
			return nil
		}
	}
}

func (f *fileBase) Path() string { return f.path }

func (f *fileBase) Stat(ctx context.Context) (Stat, error) {
	st, err := f.ino.Stat(ctx)
	st.Dev = f.mnt.Dev
	return st, err
}

// SetAttr applies fchmod/fchown/ftruncate/futimens. The policy is checked
// on the path the file was opened by; ownership rules are those of root,
// because the fd itself is the capability (the kernel checks the caller's
// ownership before calling when it has credentials to compare).
func (f *fileBase) SetAttr(ctx context.Context, attr SetAttr) error {
	if attr.Mask&SetSize != 0 && !f.Flags().Writable() {
		return errno.EINVAL
	}
	return f.vfs.setAttr(ctx, Root, f.ino, f.mnt, f.path, attr)
}

// Inode returns the inode the file was opened on.
func (f *fileBase) Inode() Inode { return f.ino }

// Readiness: regular files and directories never block.
func (f *fileBase) Readiness(mask waiter.EventMask) waiter.EventMask {
	return mask & (waiter.EventIn | waiter.EventOut)
}

func (f *fileBase) EventRegister(*waiter.Entry)   {}
func (f *fileBase) EventUnregister(*waiter.Entry) {}

// regularFile is an open regular file or device.
type regularFile struct {
	fileBase
	h      Handle
	stream bool
	mu     sync.Mutex // guards off
	off    int64
}

func newRegularFile(v *VFS, ino Inode, mnt *Mount, h Handle, path string, flags OpenFlags) *regularFile {
	f := &regularFile{h: h}
	if s, ok := h.(StreamHandle); ok && s.Stream() {
		f.stream = true
	}
	f.init(v, ino, mnt, path, flags, func() { _ = h.Close() })
	return f
}

func (f *regularFile) Read(ctx context.Context, p []byte) (int, error) {
	if !f.Flags().Readable() {
		return 0, errBADF
	}
	if f.stream {
		return f.h.ReadAt(ctx, p, 0)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.h.ReadAt(ctx, p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *regularFile) Write(ctx context.Context, p []byte) (int, error) {
	n, err := f.write(ctx, p)
	if n > 0 {
		f.vfs.notifyChange(f.path, InModify, false)
	}
	return n, err
}

func (f *regularFile) write(ctx context.Context, p []byte) (int, error) {
	fl := f.Flags()
	if !fl.Writable() {
		return 0, errBADF
	}
	if f.stream {
		return f.h.WriteAt(ctx, p, 0)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl&O_APPEND != 0 {
		n, end, err := f.h.Append(ctx, p)
		if n > 0 || err == nil {
			f.off = end
		}
		return n, err
	}
	n, err := f.h.WriteAt(ctx, p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *regularFile) Pread(ctx context.Context, p []byte, off int64) (int, error) {
	if !f.Flags().Readable() {
		return 0, errBADF
	}
	if f.stream {
		return 0, errSPIPE
	}
	if off < 0 {
		return 0, errINVAL
	}
	return f.h.ReadAt(ctx, p, off)
}

func (f *regularFile) Pwrite(ctx context.Context, p []byte, off int64) (int, error) {
	n, err := f.pwrite(ctx, p, off)
	if n > 0 {
		f.vfs.notifyChange(f.path, InModify, false)
	}
	return n, err
}

func (f *regularFile) pwrite(ctx context.Context, p []byte, off int64) (int, error) {
	fl := f.Flags()
	if !fl.Writable() {
		return 0, errBADF
	}
	if f.stream {
		return 0, errSPIPE
	}
	if off < 0 {
		return 0, errINVAL
	}
	// Linux appends even for pwrite on an O_APPEND file.
	if fl&O_APPEND != 0 {
		n, _, err := f.h.Append(ctx, p)
		return n, err
	}
	return f.h.WriteAt(ctx, p, off)
}

func (f *regularFile) Seek(ctx context.Context, off int64, whence int) (int64, error) {
	if f.stream {
		// Character devices accept and ignore seeks, as /dev/null does.
		return 0, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var base int64
	switch whence {
	case SeekSet:
	case SeekCur:
		base = f.off
	case SeekEnd, SeekData, SeekHole:
		st, err := f.ino.Stat(ctx)
		if err != nil {
			return 0, err
		}
		switch whence {
		case SeekEnd:
			base = st.Size
		case SeekData:
			if off >= st.Size {
				return 0, errno.ENXIO
			}
		case SeekHole:
			if off >= st.Size {
				return 0, errno.ENXIO
			}
			off = st.Size
		}
	default:
		return 0, errINVAL
	}
	n := base + off
	if n < 0 || (off > 0 && n < base) {
		return 0, errINVAL
	}
	f.off = n
	return n, nil
}

func (f *regularFile) ReadDir(context.Context, int) ([]Dirent, error) { return nil, errNOTDIR }

func (f *regularFile) Sync(ctx context.Context) error { return f.h.Sync(ctx) }

// dirFile is an open directory. Its offset is a readdir cookie: 0 and 1
// are "." and "..", and backend cookie c is offset c+2.
type dirFile struct {
	fileBase
	ino, parentIno uint64
	mu             sync.Mutex
	off            uint64
	done           bool
}

func newDirFile(v *VFS, ino Inode, mnt *Mount, path string, flags OpenFlags, self, parent uint64) *dirFile {
	f := &dirFile{ino: self, parentIno: parent}
	f.init(v, ino, mnt, path, flags, nil)
	return f
}

func (f *dirFile) Read(context.Context, []byte) (int, error)          { return 0, errISDIR }
func (f *dirFile) Write(context.Context, []byte) (int, error)         { return 0, errBADF }
func (f *dirFile) Pread(context.Context, []byte, int64) (int, error)  { return 0, errISDIR }
func (f *dirFile) Pwrite(context.Context, []byte, int64) (int, error) { return 0, errBADF }
func (f *dirFile) Sync(context.Context) error                         { return nil }

// Seek accepts SEEK_SET to a cookie previously returned (or 0) and
// SEEK_CUR with 0, which is what telldir/seekdir and rewinddir need.
func (f *dirFile) Seek(_ context.Context, off int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case whence == SeekSet && off == endCookie:
		f.off = endCookie
		f.done = true
	case whence == SeekSet && off >= 0:
		f.off = uint64(off)
		f.done = false
	case whence == SeekCur && off == 0:
	default:
		return 0, errINVAL
	}
	return int64(f.off), nil
}

func (f *dirFile) ReadDir(ctx context.Context, max int) ([]Dirent, error) {
	if max <= 0 {
		return nil, errINVAL
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Dirent
	for f.off < 2 && len(out) < max {
		if f.off == 0 {
			out = append(out, Dirent{Name: ".", Ino: f.ino, Type: TypeDir, Next: 1})
		} else {
			out = append(out, Dirent{Name: "..", Ino: f.parentIno, Type: TypeDir, Next: 2})
		}
		f.off++
	}
	if len(out) == max || f.done {
		return out, nil
	}
	ents, err := f.fileBase.ino.ReadDir(ctx, f.off-2, max-len(out))
	if err != nil {
		return out, err
	}
	if len(ents) == 0 {
		f.done = true
	}
	for _, e := range ents {
		e.Next = dirOffset(e.Next)
		f.off = e.Next
		if f.off == endCookie {
			f.done = true
		}
		out = append(out, e)
	}
	return out, nil
}

// endCookie is the directory offset meaning "past the last entry".
const endCookie = 1<<63 - 1

// dirOffset maps a backend cookie to a directory offset: shifted by two
// for "." and "..", and kept representable as a non-negative off_t. Some
// host filesystems (ext4 with hashed directories) use 2^63-1 for their
// end-of-directory cookie; anything that would overflow means the end.
func dirOffset(c uint64) uint64 {
	if c >= endCookie-2 {
		return endCookie
	}
	return c + 2
}

// pathFile is an O_PATH descriptor: it names a file without opening it.
type pathFile struct {
	fileBase
	StreamDefaults
}

func newPathFile(v *VFS, ino Inode, mnt *Mount, path string, flags OpenFlags) *pathFile {
	f := &pathFile{}
	f.init(v, ino, mnt, path, flags, nil)
	return f
}

func (f *pathFile) Read(context.Context, []byte) (int, error)  { return 0, errBADF }
func (f *pathFile) Write(context.Context, []byte) (int, error) { return 0, errBADF }
func (f *pathFile) SetAttr(context.Context, SetAttr) error     { return errBADF }
func (f *pathFile) ReadDir(context.Context, int) ([]Dirent, error) {
	return nil, errBADF
}
