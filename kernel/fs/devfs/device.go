package devfs

import (
	"context"
	"io"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// devKind says which device an inode is.
type devKind uint8

const (
	kindNull devKind = iota
	kindZero
	kindFull
	kindRandom
	kindURandom
	kindTTY
	kindPTS
	kindPTMX
)

// chunk is how many bytes a device read produces between checks of the
// caller's context, so a huge read of /dev/zero stays interruptible the way
// Linux's is (it checks for signals once per page).
const chunk = 64 << 10

// device is a character device inode.
type device struct {
	vfs.Unsupported
	fs *FS
	meta
	kind devKind
	rdev uint64
}

var _ vfs.Typed = (*device)(nil)

// FileType reports a character device.
func (d *device) FileType() vfs.FileType { return vfs.TypeCharDev }

// Stat returns the attributes, with the Linux device number in Rdev.
func (d *device) Stat(context.Context) (vfs.Stat, error) {
	return d.stat(1, d.rdev, 0), nil
}

// SetAttr changes times only; chmod and chown fail with EPERM.
func (d *device) SetAttr(_ context.Context, attr vfs.SetAttr) error {
	return d.setAttr(d.fs.now, attr)
}

// Open returns a stream handle. /dev/tty fails with ENXIO: a VM process has
// no controlling terminal until a PTY gives it one.
func (d *device) Open(context.Context, vfs.OpenFlags) (vfs.Handle, error) {
	if d.kind == kindTTY || d.kind == kindPTS || d.kind == kindPTMX {
		return nil, errno.ENXIO
	}
	return &handle{kind: d.kind, random: d.fs.random}, nil
}

// handle is an open device. It has no state beyond what the inode fixed,
// so one is as good as another; it exists to satisfy the Handle contract.
type handle struct {
	kind   devKind
	random io.Reader
}

var _ vfs.StreamHandle = (*handle)(nil)

// Stream reports true: devices have no file offset.
func (h *handle) Stream() bool { return true }

// ReadAt fills p: EOF for null, zeros for zero and full, random bytes for
// random and urandom. The offset is ignored. It writes straight into p and
// allocates nothing.
func (h *handle) ReadAt(ctx context.Context, p []byte, _ int64) (int, error) {
	if h.kind == kindNull {
		return 0, nil
	}
	n := 0
	for n < len(p) {
		if n > 0 && ctx.Err() != nil {
			// A partial read is a success, as Linux returns it on a signal.
			return n, nil
		}
		if ctx.Err() != nil {
			return 0, errno.EINTR
		}
		end := min(n+chunk, len(p))
		switch h.kind {
		case kindZero, kindFull:
			clear(p[n:end])
		case kindRandom, kindURandom:
			if _, err := io.ReadFull(h.random, p[n:end]); err != nil {
				// Never pass on the reader's error text.
				if n > 0 {
					return n, nil
				}
				return 0, errno.EIO
			}
		}
		n = end
	}
	return n, nil
}

// WriteAt discards p, except on /dev/full, which is always out of space.
// Writes to the random devices are accepted and dropped: a guest must not
// be able to feed the host's entropy pool.
func (h *handle) WriteAt(_ context.Context, p []byte, _ int64) (int, error) {
	if h.kind == kindFull {
		return 0, errno.ENOSPC
	}
	return len(p), nil
}

// Append is WriteAt; a device has no end to append at.
func (h *handle) Append(ctx context.Context, p []byte) (int, int64, error) {
	n, err := h.WriteAt(ctx, p, 0)
	return n, 0, err
}

// Sync does nothing.
func (h *handle) Sync(context.Context) error { return nil }

// Close does nothing.
func (h *handle) Close() error { return nil }
