// Package memfs is the secexec kernel's in-memory filesystem, the
// equivalent of Linux's tmpfs: the upper layer of a VM's overlay root, /tmp
// and any memory mount. It implements vfs.FileSystem and vfs.Inode and only
// answers per-directory questions; the VFS resolves paths, follows symlinks
// and checks permissions before it calls in.
//
// Guest code drives every method, so every cost is bounded and charged:
//
//   - File data lives in fixed-size pages kept in a map, with no page for a
//     hole, so host memory stays proportional to the bytes actually written
//     and truncating a file to a terabyte allocates nothing.
//   - The shared per-VM vfs.Quota is charged for the logical size of every
//     file (holes included) when it grows, so `truncate -s 10G` fails with
//     ENOSPC instead of creating a file that later writes could fill, and
//     for one inode per directory entry (as tmpfs counts hard links), so
//     the number of names, and thus host memory, is bounded too.
//   - Directory reads are O(log n + k) per call, so listing a huge directory
//     in small batches is not quadratic.
//
// Locking: every inode has its own sync.RWMutex. Operations lock a
// directory before its children. A rename that locks two directories that
// are not parent and child (a rename between two directories, or one that
// moves a directory onto a sibling) first takes the filesystem-wide rename
// mutex, as Linux's s_vfs_rename_mutex: the tree cannot change shape while
// it finds which of its directories is the ancestor (locked first), and no
// other operation holds two such directories at once. Non-directories are
// locked last and never hold a lock while taking another.
package memfs

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Limits of the filesystem.
const (
	// MaxFileSize is the largest size a regular file can reach; writes and
	// truncates beyond it fail with EFBIG.
	MaxFileSize = 1 << 40
	// MaxLinks is the most hard links a non-directory can have (EMLINK
	// beyond), as ext4 limits it.
	MaxLinks = 65000
	// PageSize is the granularity in which file data is stored.
	PageSize = 4096
	// Magic is the Statfs type, the same as Linux's tmpfs.
	Magic = 0x01021994

	// bogoDirentSize is what each entry adds to a directory's st_size, as
	// tmpfs reports it (some programs expect a non-zero directory size).
	bogoDirentSize = 20
	// blockSize is the unit Statfs counts capacity in.
	blockSize = 4096
)

// Options configure a new filesystem.
type Options struct {
	// Quota bounds the bytes and inodes of every memory filesystem of one
	// VM; nil means unlimited.
	Quota *vfs.Quota
	// ReadOnly makes every mutation fail with EROFS.
	ReadOnly bool
	// Now is the clock for timestamps; nil means time.Now. Tests pass a
	// fake clock to observe time updates deterministically.
	Now func() time.Time
	// RootMode is the permission bits of the root directory; zero means
	// 0o755.
	RootMode uint32
	// RootUID and RootGID own the root directory.
	RootUID uint32
	RootGID uint32
}

// FS is an in-memory filesystem. Its methods are safe for concurrent use.
type FS struct {
	quota    *vfs.Quota
	readOnly bool
	now      func() time.Time

	lastIno atomic.Uint64
	// forkMu is held shared by every change and exclusively by Clone, so
	// a fork sees no change half made and, once it has frozen the cores,
	// no change can still be writing into one.
	forkMu sync.RWMutex
	// epoch marks the cores this filesystem may change in place (see
	// core). It changes only under forkMu held exclusively.
	epoch uint64
	// renameMu serializes renames between different directories, so the
	// ancestry of directories is stable while one is in progress.
	renameMu sync.Mutex
	root     *dir

	// viewsMu guards inodes and orphans, and changes to views. It is
	// taken last.
	viewsMu sync.Mutex
	// views maps inode numbers to this filesystem's view of them (node),
	// made on first use, so that every lookup of one inode returns one
	// object. Reading it takes no lock: every lookup does.
	views sync.Map
	// inodes maps inode numbers to this filesystem's cores: a persistent
	// table that Clone shares in O(1).
	inodes table
	// orphans are files with no name left but open handles: they are
	// charged here until their last close, and a clone leaves them out.
	orphans map[uint64]*file

	// bytes and icount are what this filesystem has charged to the quota.
	// Release swaps in releasedMark and returns the balance, after which
	// every charge is refunded and refused, and every release ignored, so
	// the shared quota is neither leaked nor double-credited.
	bytes  atomic.Int64
	icount atomic.Int64
}

// epochs numbers the epochs of every filesystem of the process, so that
// no two ever share one.
var epochs atomic.Uint64

const releasedMark = math.MinInt64

var (
	_ vfs.FileSystem = (*FS)(nil)
	_ vfs.Inode      = (*dir)(nil)
	_ vfs.Inode      = (*file)(nil)
	_ vfs.Inode      = (*symlink)(nil)
	_ vfs.Inode      = (*special)(nil)
	_ vfs.Handle     = (*handle)(nil)
	_ vfs.Typed      = (*dir)(nil)
)

// New returns an empty filesystem: a root directory and nothing else. The
// root directory is not charged to the quota, so New cannot fail.
func New(opts Options) *FS {
	fs := newFS(opts)
	mode := opts.RootMode & vfs.ModePerm
	if mode == 0 {
		mode = 0o755
	}
	fs.root = fs.newDir(nil, vfs.CreateOptions{Mode: mode, UID: opts.RootUID, GID: opts.RootGID}, fs.now())
	fs.register(fs.root)
	return fs
}

// newFS returns a filesystem with no inodes, not even a root.
func newFS(opts Options) *FS {
	fs := &FS{quota: opts.Quota, readOnly: opts.ReadOnly, now: opts.Now, epoch: epochs.Add(1)}
	if fs.now == nil {
		fs.now = time.Now
	}
	return fs
}

// Root returns the root directory.
func (fs *FS) Root(context.Context) (vfs.Inode, error) { return fs.root, nil }

// ReadOnly reports whether the filesystem refuses every mutation.
func (fs *FS) ReadOnly() bool { return fs.readOnly }

// Statfs reports the quota as the filesystem's capacity. With no quota
// (or no limit in a dimension) the totals are zero, as tmpfs reports a
// mount without a size limit.
func (fs *FS) Statfs(context.Context) (vfs.Statfs, error) {
	st := vfs.Statfs{Type: Magic, BlockSize: blockSize, NameMax: vfs.NameMax, ReadOnly: fs.readOnly}
	bytes, maxBytes, inodes, maxInodes := fs.quota.Usage()
	if maxBytes > 0 {
		st.Blocks = uint64(maxBytes / blockSize)
		st.BlocksFree = uint64(max(0, maxBytes-bytes) / blockSize)
	}
	if maxInodes > 0 {
		st.Files = uint64(maxInodes)
		st.FilesFree = uint64(max(0, maxInodes-inodes))
	}
	return st, nil
}

// Release returns everything the filesystem charged to the quota. It is
// meant to be called once the filesystem is unmounted; handles that are
// still open keep reading, but anything that would charge the quota fails
// with EIO from then on. Calling it again does nothing.
func (fs *FS) Release() error {
	if n := fs.bytes.Swap(releasedMark); n > 0 {
		fs.quota.ReleaseBytes(n)
	}
	if n := fs.icount.Swap(releasedMark); n > 0 {
		fs.quota.ReleaseInodes(n)
	}
	return nil
}

// nextIno returns a fresh inode number; numbers are never reused within a
// filesystem.
func (fs *FS) nextIno() uint64 { return fs.lastIno.Add(1) }

// account adds n to the filesystem's running total v unless it was
// released; it reports false if it was.
func account(v *atomic.Int64, n int64) bool {
	for {
		cur := v.Load()
		if cur < 0 {
			return false
		}
		if v.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// chargeBytes reserves n bytes of quota, all or nothing.
func (fs *FS) chargeBytes(n int64) error {
	if n <= 0 {
		return nil
	}
	if err := fs.quota.ChargeBytes(n); err != nil {
		return err
	}
	if !account(&fs.bytes, n) {
		fs.quota.ReleaseBytes(n)
		return errno.EIO
	}
	return nil
}

// chargeBytesUpTo reserves as much of want as the quota has room for, for
// writes that may complete partially. It fails with ENOSPC only if not a
// single byte fits.
func (fs *FS) chargeBytesUpTo(want int64) (int64, error) {
	// Other filesystems share the quota, so the room can shrink between
	// reading it and charging; a few attempts settle it, and giving up then
	// only makes a write shorter than it could have been.
	for range 4 {
		err := fs.chargeBytes(want)
		if err == nil {
			return want, nil
		}
		if errno.Of(err) != errno.ENOSPC {
			return 0, err
		}
		used, limit, _, _ := fs.quota.Usage()
		room := limit - used
		if room <= 0 {
			break
		}
		want = min(want, room)
	}
	return 0, errno.ENOSPC
}

// releaseBytes returns n bytes of quota.
func (fs *FS) releaseBytes(n int64) {
	if n > 0 && account(&fs.bytes, -n) {
		fs.quota.ReleaseBytes(n)
	}
}

// chargeInode reserves one inode (or one more link) of quota.
func (fs *FS) chargeInode() error {
	if err := fs.quota.ChargeInode(); err != nil {
		return err
	}
	if !account(&fs.icount, 1) {
		fs.quota.ReleaseInode()
		return errno.EIO
	}
	return nil
}

// releaseInode returns one inode of quota.
func (fs *FS) releaseInode() {
	if account(&fs.icount, -1) {
		fs.quota.ReleaseInode()
	}
}

// register records a new inode's view and core; the caller holds
// fs.forkMu shared (or is making the filesystem).
func (fs *FS) register(n node) {
	b := n.base()
	fs.viewsMu.Lock()
	fs.views.Store(b.ino, n)
	fs.inodes.set(b.ino, b.c, fs.epoch)
	fs.viewsMu.Unlock()
}

// publish records c as the core of ino after a copy; the caller holds the
// inode's lock exclusively and fs.forkMu shared.
func (fs *FS) publish(ino uint64, c *core) {
	fs.viewsMu.Lock()
	fs.inodes.set(ino, c, fs.epoch)
	fs.viewsMu.Unlock()
}

// forget drops an inode that no name or handle refers to any more; views
// the VFS still holds keep their last core. n.mu must be held exclusively.
func (fs *FS) forget(n *inode) {
	n.gone = true
	ino := n.ino
	fs.viewsMu.Lock()
	fs.views.Delete(ino)
	delete(fs.orphans, ino)
	fs.inodes.del(ino, fs.epoch, fs.lastIno.Load()+1)
	fs.viewsMu.Unlock()
}

// orphan records or clears f as a file with no name but open handles.
func (fs *FS) orphan(f *file, on bool) {
	fs.viewsMu.Lock()
	if on {
		if fs.orphans == nil {
			fs.orphans = make(map[uint64]*file)
		}
		fs.orphans[f.ino] = f
	} else {
		delete(fs.orphans, f.ino)
	}
	fs.viewsMu.Unlock()
}

// node returns the view of inode ino, the child of parent, making it on
// first use from the core this filesystem's table holds. A missing core
// (a directory entry naming an inode the table lacks) is EIO: it would
// be a bug, and a guest must not be able to turn it into a panic.
func (fs *FS) node(ino uint64, parent *dir) (node, error) {
	if n, ok := fs.views.Load(ino); ok {
		return n.(node), nil
	}
	fs.viewsMu.Lock()
	defer fs.viewsMu.Unlock()
	if n, ok := fs.views.Load(ino); ok {
		return n.(node), nil
	}
	var n node
	c := fs.inodes.get(ino)
	if c == nil {
		return nil, errno.EIO
	}
	switch c.typ {
	case vfs.TypeDir:
		d := &dir{parent: parent}
		d.bindIno(fs, ino, c)
		n = d
	case vfs.TypeRegular:
		f := &file{}
		f.bindIno(fs, ino, c)
		n = f
	case vfs.TypeSymlink:
		s := &symlink{}
		s.bindIno(fs, ino, c)
		n = s
	default:
		s := &special{}
		s.bindIno(fs, ino, c)
		n = s
	}
	fs.views.Store(ino, n)
	return n, nil
}
