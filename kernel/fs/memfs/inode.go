package memfs

import (
	"context"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// An inode is two objects: a view and a core.
//
// The view (inode and the types that embed it) is what the VFS, open
// handles and the directory code hold. It belongs to one filesystem, is
// found by inode number in that filesystem's view table, and carries the
// lock, the open count and, for a directory, its parent.
//
// The core holds the state: attributes, entries, pages, target. A core
// whose epoch is its filesystem's epoch is that filesystem's alone and is
// changed in place under its view's lock. Clone gives both sides a new
// epoch, which freezes every existing core at once: from then on it is
// read-only, shared by both sides through their inode tables, and the
// first change on either side copies it (ownLocked). The copy shares the
// heavy payload (a directory's entries, a file's pages) until that too is
// changed (unshare). So a handle opened before a fork keeps writing to its
// own side: its view resolves to that side's core, never to the other's.

// core is one version of an inode's state. Frozen cores (epoch older than
// their reader's filesystem) are never written again.
type core struct {
	epoch uint64
	typ   vfs.FileType // immutable
	rdev  uint64       // immutable

	perm  uint32 // permission bits (vfs.ModePerm)
	uid   uint32
	gid   uint32
	nlink uint32
	mtime time.Time
	ctime time.Time
	atime time.Time

	// shared says the payload below (entries and order, or pages) is also
	// a frozen core's: it is read-only until unshared.
	shared bool

	// A directory's entries: see dir.
	entries map[string]*dirent
	order   []*dirent
	removed int
	lastSeq uint64

	// A regular file's data: see file. cowPages holds the indices of the
	// pages still shared with a frozen core (the map is this core's own):
	// a write copies such a page first.
	size     int64
	pages    map[int64][]byte
	cowPages map[int64]struct{}
	blocks   int64
	// dead is set once the last link and the last handle are gone and the
	// quota was credited; the file cannot be opened again.
	dead bool

	// A symlink's target; it never changes.
	target string
}

// inode is the view part every type shares: identity and the lock.
type inode struct {
	vfs.Unsupported

	fs   *FS
	ino  uint64       // immutable
	typ  vfs.FileType // immutable
	rdev uint64       // immutable

	// mu guards c, the core's fields while the core is this filesystem's
	// own, and the fields of the embedding type.
	mu sync.RWMutex
	c  *core
	// gone is set, under mu, once the filesystem forgot the inode (no name
	// or handle is left): a copy made for a late change through a view the
	// VFS still holds must not bring it back into the table.
	gone bool

	// amu guards the atime of an owned core against readers that record
	// an access while holding mu shared. It is always taken last.
	amu sync.Mutex
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

// newCore returns a fresh core of type typ owned by fs.
func (fs *FS) newCore(typ vfs.FileType, opts vfs.CreateOptions, now time.Time) *core {
	return &core{
		epoch: fs.epoch,
		typ:   typ,
		rdev:  opts.Rdev,
		perm:  opts.Mode & vfs.ModePerm,
		uid:   opts.UID,
		gid:   opts.GID,
		nlink: 1,
		atime: now, mtime: now, ctime: now,
	}
}

// bind makes n the view of c in fs under a fresh inode number.
func (n *inode) bind(fs *FS, c *core) {
	n.bindIno(fs, fs.nextIno(), c)
}

// bindIno makes n the view of c in fs as inode ino.
func (n *inode) bindIno(fs *FS, ino uint64, c *core) {
	n.fs, n.ino, n.typ, n.rdev, n.c = fs, ino, c.typ, c.rdev, c
}

// ownLocked makes n's core this filesystem's own, copying it if a fork
// froze it, before anything in it changes. mu must be held exclusively and
// fs.forkMu shared. The copy shares the frozen core's payload until
// unshare.
func (n *inode) ownLocked() *core {
	if n.c.epoch == n.fs.epoch {
		return n.c
	}
	c := *n.c
	c.epoch = n.fs.epoch
	c.shared = c.entries != nil || c.order != nil || c.pages != nil
	n.c = &c
	if !n.gone {
		n.fs.publish(n.ino, &c)
	}
	return &c
}

// statLocked fills the attributes every type shares; mu must be held.
func (n *inode) statLocked() vfs.Stat {
	c := n.c
	n.amu.Lock()
	atime := c.atime
	n.amu.Unlock()
	return vfs.Stat{
		Ino:     n.ino,
		Mode:    uint32(n.typ) | c.perm,
		Nlink:   c.nlink,
		UID:     c.uid,
		GID:     c.gid,
		Rdev:    n.rdev,
		Blksize: blockSize,
		Atime:   atime,
		Mtime:   c.mtime,
		Ctime:   c.ctime,
	}
}

// Stat returns the inode's attributes. Types with a size override it.
func (n *inode) Stat(context.Context) (vfs.Stat, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.statLocked(), nil
}

// touchAtime records a read access. Readers hold mu shared, so an owned
// core's atime has its own lock (amu); a frozen core is copied first, as
// for any change, under mu held exclusively.
func (n *inode) touchAtime() {
	n.fs.forkMu.RLock()
	defer n.fs.forkMu.RUnlock()
	now := n.fs.now()
	n.mu.RLock()
	if c := n.c; c.epoch == n.fs.epoch {
		n.amu.Lock()
		c.atime = now
		n.amu.Unlock()
		n.mu.RUnlock()
		return
	}
	n.mu.RUnlock()
	n.mu.Lock()
	n.ownLocked().atime = now
	n.mu.Unlock()
}

// touchLocked records a change of the data (mtime and ctime); mu must be
// held exclusively and the core owned.
func (n *inode) touchLocked(now time.Time) {
	n.c.mtime = now
	n.c.ctime = now
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
	n.fs.forkMu.RLock()
	defer n.fs.forkMu.RUnlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.setAttrLocked(attr, n.fs.now())
	return nil
}

// setAttrLocked applies everything in attr but the size, and updates the
// ctime as every attribute change does; mu must be held exclusively and
// fs.forkMu shared.
func (n *inode) setAttrLocked(attr vfs.SetAttr, now time.Time) {
	if attr.Mask == 0 {
		return
	}
	c := n.ownLocked()
	if attr.Mask&vfs.SetMode != 0 {
		c.perm = attr.Mode & vfs.ModePerm
	}
	if attr.Mask&vfs.SetUID != 0 {
		c.uid = attr.UID
	}
	if attr.Mask&vfs.SetGID != 0 {
		c.gid = attr.GID
	}
	if attr.Mask&vfs.SetAtime != 0 {
		n.amu.Lock()
		c.atime = attr.Atime
		n.amu.Unlock()
	}
	if attr.Mask&vfs.SetMtime != 0 {
		c.mtime = attr.Mtime
	}
	c.ctime = now
}

// symlink is a symbolic link. Its target never changes.
type symlink struct {
	inode
}

// Stat reports the target's length as the size, as Linux does.
func (s *symlink) Stat(context.Context) (vfs.Stat, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.statLocked()
	st.Size = int64(len(s.c.target))
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
	s.mu.RLock()
	t := s.c.target
	s.mu.RUnlock()
	s.touchAtime()
	return t, nil
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
