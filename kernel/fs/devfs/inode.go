package devfs

import (
	"context"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// meta is the attribute state every devfs inode has. Only the times ever
// change (touch /dev/null is legal), so they sit under a mutex and the rest
// is immutable after New.
type meta struct {
	ino  uint64
	mode uint32

	mu                  sync.Mutex
	atime, mtime, ctime time.Time
}

func (m *meta) stat(nlink uint32, rdev uint64, size int64) vfs.Stat {
	m.mu.Lock()
	defer m.mu.Unlock()
	return vfs.Stat{
		Ino:     m.ino,
		Mode:    m.mode,
		Nlink:   nlink,
		Rdev:    rdev,
		Size:    size,
		Blksize: 4096,
		Atime:   m.atime,
		Mtime:   m.mtime,
		Ctime:   m.ctime,
	}
}

// setAttr applies a change of times and refuses every other change: the
// mode and owner of the fixed entries are part of the VM's contract.
func (m *meta) setAttr(now func() time.Time, attr vfs.SetAttr) error {
	if attr.Mask&(vfs.SetMode|vfs.SetUID|vfs.SetGID) != 0 {
		return errno.EPERM
	}
	if attr.Mask&vfs.SetSize != 0 {
		// truncate(2) of anything but a regular file or directory.
		return errno.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if attr.Mask&vfs.SetAtime != 0 {
		m.atime = attr.Atime
	}
	if attr.Mask&vfs.SetMtime != 0 {
		m.mtime = attr.Mtime
	}
	if attr.Mask&(vfs.SetAtime|vfs.SetMtime|vfs.SetCtime) != 0 {
		m.ctime = now()
	}
	return nil
}

// entry is one name in a directory.
type entry struct {
	name string
	ino  vfs.Inode
}

// dir is a directory with a fixed list of entries (none for shm and pts).
type dir struct {
	vfs.Unsupported
	fs *FS
	meta
	entries []entry // sorted by name, never changed after New
}

var _ vfs.Typed = (*dir)(nil)

// FileType reports a directory.
func (d *dir) FileType() vfs.FileType { return vfs.TypeDir }

// Stat returns the attributes; nlink counts "." and each subdirectory's "..".
func (d *dir) Stat(context.Context) (vfs.Stat, error) {
	n := uint32(2)
	for _, e := range d.entries {
		switch e.ino.(type) {
		case *dir, *ptsDir:
			n++
		}
	}
	return d.stat(n, 0, 0), nil
}

// SetAttr changes times only.
func (d *dir) SetAttr(_ context.Context, attr vfs.SetAttr) error {
	if attr.Mask&vfs.SetSize != 0 {
		return errno.EISDIR
	}
	return d.setAttr(d.fs.now, attr)
}

func (d *dir) find(name string) (vfs.Inode, bool) {
	for _, e := range d.entries {
		if e.name == name {
			return e.ino, true
		}
	}
	return nil, false
}

// Lookup returns the entry called name.
func (d *dir) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	if ino, ok := d.find(name); ok {
		return ino, nil
	}
	return nil, errno.ENOENT
}

// refuseNew is the answer to every request to add a name: EEXIST when the
// name is taken (the check Linux makes first), EPERM otherwise.
func (d *dir) refuseNew(name string) error {
	if _, ok := d.find(name); ok {
		return errno.EEXIST
	}
	return errno.EPERM
}

// refuseChange is the answer to every request to remove or move a name.
func (d *dir) refuseChange(name string) error {
	if _, ok := d.find(name); !ok {
		return errno.ENOENT
	}
	return errno.EPERM
}

// Create fails: the set of devices is fixed.
func (d *dir) Create(_ context.Context, name string, _ vfs.CreateOptions) (vfs.Inode, error) {
	return nil, d.refuseNew(name)
}

// Mkdir fails: the tree is fixed.
func (d *dir) Mkdir(_ context.Context, name string, _ vfs.CreateOptions) (vfs.Inode, error) {
	return nil, d.refuseNew(name)
}

// Symlink fails: the tree is fixed.
func (d *dir) Symlink(_ context.Context, name, _ string, _ vfs.CreateOptions) (vfs.Inode, error) {
	return nil, d.refuseNew(name)
}

// Link fails: the tree is fixed.
func (d *dir) Link(_ context.Context, name string, _ vfs.Inode) error { return d.refuseNew(name) }

// Unlink fails: the tree is fixed.
func (d *dir) Unlink(_ context.Context, name string) error { return d.refuseChange(name) }

// Rmdir fails: the tree is fixed.
func (d *dir) Rmdir(_ context.Context, name string) error { return d.refuseChange(name) }

// Rename fails: the tree is fixed.
func (d *dir) Rename(_ context.Context, oldName string, _ vfs.Inode, _ string) error {
	return d.refuseChange(oldName)
}

// ReadDir lists the entries; entry i has cookie i+1, which stays valid
// because the list never changes.
func (d *dir) ReadDir(_ context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if max <= 0 {
		return nil, errno.EINVAL
	}
	if cookie >= uint64(len(d.entries)) {
		return nil, nil
	}
	ents := d.entries[cookie:]
	if len(ents) > max {
		ents = ents[:max]
	}
	out := make([]vfs.Dirent, len(ents))
	for i, e := range ents {
		var ino uint64
		var t vfs.FileType
		switch x := e.ino.(type) {
		case *dir:
			ino, t = x.ino, vfs.TypeDir
		case *ptsDir:
			ino, t = x.ino, vfs.TypeDir
		case *termDevice:
			ino, t = x.ino, vfs.TypeCharDev
		case *device:
			ino, t = x.ino, vfs.TypeCharDev
		case *symlink:
			ino, t = x.ino, vfs.TypeSymlink
		}
		out[i] = vfs.Dirent{Name: e.name, Ino: ino, Type: t, Next: cookie + uint64(i) + 1}
	}
	return out, nil
}

// Open fails: directories are read with ReadDir.
func (d *dir) Open(context.Context, vfs.OpenFlags) (vfs.Handle, error) { return nil, errno.EISDIR }

// symlink is one of the fixed links into /proc/self/fd. They are ordinary
// symlinks: the per-process part is /proc/self, which resolves them.
type symlink struct {
	vfs.Unsupported
	meta
	target string
}

var _ vfs.Typed = (*symlink)(nil)

// FileType reports a symlink.
func (s *symlink) FileType() vfs.FileType { return vfs.TypeSymlink }

// Stat returns the attributes; the size is the target's length, as Linux.
func (s *symlink) Stat(context.Context) (vfs.Stat, error) {
	return s.stat(1, 0, int64(len(s.target))), nil
}

// Readlink returns the target.
func (s *symlink) Readlink(context.Context) (string, error) { return s.target, nil }
