package devfs

import (
	"context"
	"slices"
	"strconv"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Terminals is the kernel's table of pseudo-terminals as /dev shows it:
// /dev/ptmx makes a new terminal and opens its master side, /dev/pts/N
// opens terminal N's slave side and /dev/tty the caller's controlling
// terminal. A guest has no TIOCGPTN ioctl: it learns the N of the terminal
// a /dev/ptmx open made from /proc/self/fdinfo/FD ("tty-index:"), as Linux
// shows it.
type Terminals interface {
	// Indexes lists the terminals that exist.
	Indexes() []int
	// OpenSlave opens the slave side of terminal n: ENOENT when there is
	// none, EIO when it was hung up.
	OpenSlave(ctx context.Context, n int, flags vfs.OpenFlags) (vfs.File, error)
	// OpenMaster makes a new terminal and opens its master side (EAGAIN
	// past the VM's terminal limit).
	OpenMaster(ctx context.Context, flags vfs.OpenFlags) (vfs.File, error)
	// Controlling opens the calling process's controlling terminal, ENXIO
	// when it has none.
	Controlling(ctx context.Context, flags vfs.OpenFlags) (vfs.File, error)
}

// ptsMajor is the device major of /dev/pts/N on Linux.
const ptsMajor = 136

// ptsInoBase numbers the inodes of /dev/pts/N, above the fixed entries.
const ptsInoBase = 1 << 20

// termDevice is /dev/tty or /dev/pts/N: a character device whose open is
// the kernel's (vfs.FileOpener).
type termDevice struct {
	*device
	n int // N of /dev/pts/N
}

var _ vfs.FileOpener = (*termDevice)(nil)

// OpenFile opens the terminal: the caller's for /dev/tty, a new one's
// master side for /dev/ptmx, N's slave side for /dev/pts/N.
func (d *termDevice) OpenFile(ctx context.Context, flags vfs.OpenFlags) (vfs.File, error) {
	switch d.kind {
	case kindTTY:
		return d.fs.terms.Controlling(ctx, flags)
	case kindPTMX:
		return d.fs.terms.OpenMaster(ctx, flags)
	}
	return d.fs.terms.OpenSlave(ctx, d.n, flags)
}

// ptsDir is /dev/pts: one character device per existing terminal.
type ptsDir struct {
	*dir
}

// Lookup finds /dev/pts/N; names that are not a terminal's decimal index
// do not exist.
func (d *ptsDir) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	n, err := strconv.Atoi(name)
	if err != nil || n < 0 || strconv.Itoa(n) != name || !slices.Contains(d.fs.terms.Indexes(), n) {
		return nil, errno.ENOENT
	}
	return d.pts(n), nil
}

func (d *ptsDir) pts(n int) *termDevice {
	dev := &device{fs: d.fs, kind: kindPTS, rdev: Makedev(ptsMajor, uint32(n))}
	dev.ino, dev.mode = ptsInoBase+uint64(n), vfs.S_IFCHR|0o620
	d.mu.Lock()
	dev.atime, dev.mtime, dev.ctime = d.atime, d.mtime, d.ctime
	d.mu.Unlock()
	return &termDevice{device: dev, n: n}
}

// ReadDir lists the terminals in index order; entry i has cookie i+1.
func (d *ptsDir) ReadDir(_ context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if max <= 0 {
		return nil, errno.EINVAL
	}
	idx := slices.Sorted(slices.Values(d.fs.terms.Indexes()))
	if cookie >= uint64(len(idx)) {
		return nil, nil
	}
	idx = idx[cookie:]
	if len(idx) > max {
		idx = idx[:max]
	}
	out := make([]vfs.Dirent, len(idx))
	for i, n := range idx {
		out[i] = vfs.Dirent{Name: strconv.Itoa(n), Ino: ptsInoBase + uint64(n), Type: vfs.TypeCharDev, Next: cookie + uint64(i) + 1}
	}
	return out, nil
}
