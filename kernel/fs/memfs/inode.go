package memfs

import (
	"context"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// inode holds what every kind of inode shares: identity, ownership,
// permissions, link count and times.
type inode struct {
	vfs.Unsupported

	fs   *FS
	ino  uint64       // immutable
	typ  vfs.FileType // immutable
	rdev uint64       // immutable

	// mu guards the fields below and the payload of the embedding type.
	mu    sync.RWMutex
	perm  uint32 // permission bits (vfs.ModePerm)
	uid   uint32
	gid   uint32
	nlink uint32
	mtime time.Time
	ctime time.Time

	// amu guards atime alone, so readers holding mu shared can record an
	// access without taking mu exclusively. It is always taken last.
	amu   sync.Mutex
	atime time.Time
}

// node is implemented by every memfs inode; it lets a directory reach the
// shared fields of an inode handed back to it (Link, Rename).
type node interface {
	vfs.Inode
	base() *inode
}

func (n *inode) base() *inode { return n }

// FileType reports the inode's type without locking (vfs.Typed).
func (n *inode) FileType() vfs.FileType { return n.typ }

func (n *inode) init(fs *FS, typ vfs.FileType, opts vfs.CreateOptions, now time.Time) {
	n.fs = fs
	n.ino = fs.nextIno()
	n.typ = typ
	n.rdev = opts.Rdev
	n.perm = opts.Mode & vfs.ModePerm
	n.uid = opts.UID
	n.gid = opts.GID
	n.nlink = 1
	n.atime, n.mtime, n.ctime = now, now, now
}

// statLocked fills the attributes every type shares; mu must be held.
func (n *inode) statLocked() vfs.Stat {
	n.amu.Lock()
	atime := n.atime
	n.amu.Unlock()
	return vfs.Stat{
		Ino:     n.ino,
		Mode:    uint32(n.typ) | n.perm,
		Nlink:   n.nlink,
		UID:     n.uid,
		GID:     n.gid,
		Rdev:    n.rdev,
		Blksize: blockSize,
		Atime:   atime,
		Mtime:   n.mtime,
		Ctime:   n.ctime,
	}
}

// Stat returns the inode's attributes. Types with a size override it.
func (n *inode) Stat(context.Context) (vfs.Stat, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.statLocked(), nil
}

// touchAtime records a read access.
func (n *inode) touchAtime() {
	now := n.fs.now()
	n.amu.Lock()
	n.atime = now
	n.amu.Unlock()
}

// touchLocked records a change of the data (mtime and ctime); mu must be
// held exclusively.
func (n *inode) touchLocked(now time.Time) {
	n.mtime = now
	n.ctime = now
}

// SetAttr applies attr to an inode without a size (symlinks, FIFOs,
// sockets, devices): truncating one is EINVAL, as Linux has it.
func (n *inode) SetAttr(_ context.Context, attr vfs.SetAttr) error {
	if attr.Mask&vfs.SetSize != 0 {
		return errno.EINVAL
	}
	if n.fs.readOnly {
		return errno.EROFS
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.setAttrLocked(attr, n.fs.now())
	return nil
}

// setAttrLocked applies everything in attr but the size, and updates the
// ctime as every attribute change does; mu must be held exclusively.
func (n *inode) setAttrLocked(attr vfs.SetAttr, now time.Time) {
	if attr.Mask&vfs.SetMode != 0 {
		n.perm = attr.Mode & vfs.ModePerm
	}
	if attr.Mask&vfs.SetUID != 0 {
		n.uid = attr.UID
	}
	if attr.Mask&vfs.SetGID != 0 {
		n.gid = attr.GID
	}
	if attr.Mask&vfs.SetAtime != 0 {
		n.amu.Lock()
		n.atime = attr.Atime
		n.amu.Unlock()
	}
	if attr.Mask&vfs.SetMtime != 0 {
		n.mtime = attr.Mtime
	}
	if attr.Mask != 0 {
		n.ctime = now
	}
}

// symlink is a symbolic link. Its target never changes.
type symlink struct {
	inode
	target string
}

// Stat reports the target's length as the size, as Linux does.
func (s *symlink) Stat(context.Context) (vfs.Stat, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.statLocked()
	st.Size = int64(len(s.target))
	return st, nil
}

// SetAttr changes a symlink's owner or times. Its mode is always 0777 on
// Linux, so chmod of the link itself is EOPNOTSUPP, as fchmodat(2) with
// AT_SYMLINK_NOFOLLOW reports.
func (s *symlink) SetAttr(ctx context.Context, attr vfs.SetAttr) error {
	if attr.Mask&vfs.SetMode != 0 {
		return errno.EOPNOTSUPP
	}
	return s.inode.SetAttr(ctx, attr)
}

// Readlink returns the target.
func (s *symlink) Readlink(context.Context) (string, error) {
	s.touchAtime()
	return s.target, nil
}

// Open fails with ELOOP: a symlink reached without following it is not
// something to read, as open(O_NOFOLLOW) reports.
func (s *symlink) Open(context.Context, vfs.OpenFlags) (vfs.Handle, error) {
	return nil, errno.ELOOP
}

// special is a FIFO, socket or device node: an inode record whose data the
// kernel serves (pipes) or nobody does (a guest has no devices), so
// opening it through the filesystem is ENXIO.
type special struct {
	inode
}

// Open fails with ENXIO.
func (s *special) Open(context.Context, vfs.OpenFlags) (vfs.Handle, error) {
	return nil, errno.ENXIO
}
