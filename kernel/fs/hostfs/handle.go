package hostfs

import (
	"context"
	"io"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// handle is an open regular file of the host. It owns one host descriptor,
// opened without O_APPEND (Linux's pwrite on an O_APPEND descriptor would
// ignore the offset), and does all I/O positionally, so the descriptor's
// own offset is unused except by Append.
type handle struct {
	// mu guards fd against Close: I/O holds it for reading; Close, and
	// Append (which uses the descriptor's offset), hold it exclusively.
	mu          sync.RWMutex
	fd          int    // -1 once closed
	ino         *inode // the inode it was opened from, which tracks it
	writable    bool
	maxSize     int64
	noRWFAppend bool
	quota       *quota
	key         ownerKey // the host inode, for quota.closed
}

var _ vfs.Handle = (*handle)(nil)

// ReadAt reads at off with pread; 0, nil at end of file.
func (h *handle) ReadAt(_ context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return 0, errno.EBADF
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	err := ignoringEINTR(func() (err error) {
		n, err = unix.Pread(h.fd, p, off)
		return err
	})
	if err != nil {
		return 0, hostErr(err)
	}
	return n, nil
}

// limit trims a write of n bytes at off to the maximum file size, as
// Linux does for RLIMIT_FSIZE: what fits is written, and a write that
// cannot write anything fails with EFBIG.
func (h *handle) limit(n int, off int64) (int, error) {
	if off >= h.maxSize {
		return 0, errno.EFBIG
	}
	if int64(n) > h.maxSize-off {
		n = int(h.maxSize - off)
	}
	return n, nil
}

// WriteAt writes at off with pwrite, growing the file as needed.
func (h *handle) WriteAt(_ context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return 0, errno.EBADF
	}
	if len(p) == 0 {
		return 0, nil
	}
	total := 0
	err := h.quota.grow(h.fstatLocked, func(size, room int64) error {
		m, err := h.limit(len(p), off)
		if err != nil {
			return err
		}
		if m, err = fits(m, off, size, room); err != nil {
			return err
		}
		q := p[:m]
		for total < len(q) {
			var n int
			err := ignoringEINTR(func() (err error) {
				n, err = unix.Pwrite(h.fd, q[total:], off+int64(total))
				return err
			})
			if err != nil {
				if total > 0 {
					// Report the bytes that did land, as write(2) does.
					return nil
				}
				return hostErr(err)
			}
			if n == 0 {
				break
			}
			total += n
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}

// fstatLocked stats the descriptor; the caller holds mu.
func (h *handle) fstatLocked(st *unix.Stat_t) error { return hostErr(unix.Fstat(h.fd, st)) }

// Append writes p at the end of the file atomically with respect to every
// writer of the host file and returns the end of what it wrote.
//
// pwritev2(RWF_APPEND) with offset -1 appends at the current size under the
// host inode's lock and leaves the descriptor's offset at the end of this
// write, which lseek then reports exactly even if other writers append
// right after. The size limit is checked against the size before the
// write, so racing appenders can overshoot it by at most their own
// writes. Kernels before 4.16 lack RWF_APPEND; there O_APPEND is switched
// on around a plain write instead, which holding mu exclusively makes
// invisible to WriteAt.
func (h *handle) Append(_ context.Context, p []byte) (int, int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd < 0 {
		return 0, 0, errno.EBADF
	}
	if len(p) == 0 {
		var st unix.Stat_t
		if err := unix.Fstat(h.fd, &st); err != nil {
			return 0, 0, hostErr(err)
		}
		return 0, st.Size, nil
	}
	var n int
	err := h.quota.grow(h.fstatLocked, func(size, room int64) error {
		m, err := h.limit(len(p), size)
		if err != nil {
			return err
		}
		if m, err = fits(m, size, size, room); err != nil {
			return err
		}
		q := p[:m]
		if !h.noRWFAppend {
			err = ignoringEINTR(func() (err error) {
				n, err = unix.Pwritev2(h.fd, [][]byte{q}, -1, unix.RWF_APPEND)
				return err
			})
			if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
				err = h.appendFallback(q, &n)
			}
		} else {
			err = h.appendFallback(q, &n)
		}
		return hostErr(err)
	})
	if err != nil {
		return 0, 0, err
	}
	end, err := unix.Seek(h.fd, 0, io.SeekCurrent)
	if err != nil {
		return n, 0, hostErr(err)
	}
	return n, end, nil
}

// appendFallback appends with a temporarily O_APPEND descriptor. The
// caller holds mu exclusively.
func (h *handle) appendFallback(p []byte, n *int) error {
	fl, err := unix.FcntlInt(uintptr(h.fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if _, err := unix.FcntlInt(uintptr(h.fd), unix.F_SETFL, fl|unix.O_APPEND); err != nil {
		return err
	}
	err = ignoringEINTR(func() (err error) {
		*n, err = unix.Write(h.fd, p)
		return err
	})
	if _, rerr := unix.FcntlInt(uintptr(h.fd), unix.F_SETFL, fl); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// Sync flushes the file with fsync.
func (h *handle) Sync(context.Context) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return errno.EBADF
	}
	return hostErr(ignoringEINTR(func() error { return unix.Fsync(h.fd) }))
}

// Close closes the host descriptor; a second Close is EBADF.
func (h *handle) Close() error {
	h.mu.Lock()
	if h.fd < 0 {
		h.mu.Unlock()
		return errno.EBADF
	}
	var st unix.Stat_t
	statOK := unix.Fstat(h.fd, &st) == nil
	err := unix.Close(h.fd)
	h.fd = -1
	h.mu.Unlock()
	h.quota.closed(h.key, &st, statOK)
	h.ino.dropHandle(h)
	return hostErr(err)
}

// fstat stats the open file.
func (h *handle) fstat(st *unix.Stat_t) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return errno.EBADF
	}
	return hostErr(unix.Fstat(h.fd, st))
}

// setAttr is SetAttr through the open descriptor; EBADF if it was closed.
func (h *handle) setAttr(fs *FS, attr vfs.SetAttr) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return errno.EBADF
	}
	return fs.applyAttr(fdAttr(h.fd), attr)
}

// fdAttr is an attrTarget reached through an open regular file.
type fdAttr int

func (fd fdAttr) stat(st *unix.Stat_t) error { return hostErr(unix.Fstat(int(fd), st)) }

func (fd fdAttr) chmod(mode uint32) error { return hostErr(unix.Fchmod(int(fd), mode)) }

func (fd fdAttr) truncate(size int64) error {
	return hostErr(ignoringEINTR(func() error { return unix.Ftruncate(int(fd), size) }))
}

// utimes is futimens, which x/sys lacks: utimensat with a NULL path.
func (fd fdAttr) utimes(ts []unix.Timespec) error {
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	if e != 0 {
		return hostErr(e)
	}
	return nil
}

func (fd fdAttr) touch() { _ = unix.Fchown(int(fd), -1, -1) }
