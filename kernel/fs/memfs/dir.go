package memfs

import (
	"context"
	"sort"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// dir is a directory. Entries are found by name in a map and listed in
// creation order from a slice sorted by sequence number: every entry gets
// the next number of its directory when it is created, and a ReadDir cookie
// is the number of the last entry returned. Removing an entry only marks
// it, so cookies held by concurrent readers stay valid; the slice is
// compacted once most of it is marks, which keeps removal O(1) amortized.
type dir struct {
	inode

	// parent is the directory holding this one. It changes only under
	// fs.renameMu, which is what reading it requires (the root's is nil).
	parent *dir

	// Guarded by inode.mu.
	entries map[string]*dirent
	order   []*dirent // ascending seq; removed entries stay until compaction
	removed int       // removed entries still in order
	lastSeq uint64
}

// dirent is one name in a directory.
type dirent struct {
	name    string
	node    node
	seq     uint64
	removed bool
}

func (fs *FS) newDir(parent *dir, opts vfs.CreateOptions, now time.Time) *dir {
	d := &dir{parent: parent, entries: make(map[string]*dirent)}
	d.init(fs, vfs.TypeDir, opts, now)
	d.nlink = 2
	return d
}

// Stat reports a directory size that grows with its entries, as tmpfs
// does.
func (d *dir) Stat(context.Context) (vfs.Stat, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	st := d.statLocked()
	st.Size = int64(len(d.entries)+2) * bogoDirentSize
	return st, nil
}

// SetAttr changes attributes; a size is EISDIR.
func (d *dir) SetAttr(ctx context.Context, attr vfs.SetAttr) error {
	if attr.Mask&vfs.SetSize != 0 {
		return errno.EISDIR
	}
	return d.inode.SetAttr(ctx, attr)
}

// Open fails: the VFS reads directories with ReadDir. Asking for write
// access is EISDIR as open(2) reports it; a read-only handle is of no
// use and reports the same.
func (d *dir) Open(context.Context, vfs.OpenFlags) (vfs.Handle, error) {
	return nil, errno.EISDIR
}

// Lookup returns the child called name.
func (d *dir) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	e := d.entries[name]
	if e == nil {
		return nil, errno.ENOENT
	}
	// e.node changes when a rename replaces the entry: read it locked.
	return e.node, nil
}

// insertLocked adds a new entry; mu must be held exclusively.
func (d *dir) insertLocked(name string, n node) {
	d.lastSeq++
	e := &dirent{name: name, node: n, seq: d.lastSeq}
	d.entries[name] = e
	d.order = append(d.order, e)
}

// removeLocked drops the entry e; mu must be held exclusively.
func (d *dir) removeLocked(e *dirent) {
	delete(d.entries, e.name)
	e.removed = true
	e.node = nil
	d.removed++
	if d.removed > 16 && d.removed*2 > len(d.order) {
		kept := d.order[:0]
		for _, x := range d.order {
			if !x.removed {
				kept = append(kept, x)
			}
		}
		clear(d.order[len(kept):])
		d.order = kept
		d.removed = 0
	}
}

// checkCreateLocked reports why name cannot be created here, if it cannot;
// mu must be held.
func (d *dir) checkCreateLocked(name string) error {
	if d.nlink == 0 {
		// Creating in a removed directory, as Linux reports it.
		return errno.ENOENT
	}
	if _, ok := d.entries[name]; ok {
		return errno.EEXIST
	}
	return nil
}

// add charges an inode, then builds and inserts a new child made by mk
// under the directory lock.
func (d *dir) add(name string, mk func(now time.Time) (node, error)) (vfs.Inode, error) {
	if d.fs.readOnly {
		return nil, errno.EROFS
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.checkCreateLocked(name); err != nil {
		return nil, err
	}
	if err := d.fs.chargeInode(); err != nil {
		return nil, err
	}
	now := d.fs.now()
	n, err := mk(now)
	if err != nil {
		d.fs.releaseInode()
		return nil, err
	}
	d.insertLocked(name, n)
	d.touchLocked(now)
	return n, nil
}

// Create makes a regular file, FIFO, socket or device node, per the type
// bits of opts.Mode (none means a regular file, as mknod(2) has it).
func (d *dir) Create(_ context.Context, name string, opts vfs.CreateOptions) (vfs.Inode, error) {
	typ := vfs.TypeOf(opts.Mode)
	switch typ {
	case 0:
		typ = vfs.TypeRegular
	case vfs.TypeRegular, vfs.TypeFIFO, vfs.TypeSocket, vfs.TypeCharDev, vfs.TypeBlock:
	default:
		return nil, errno.EINVAL
	}
	return d.add(name, func(now time.Time) (node, error) {
		if typ == vfs.TypeRegular {
			f := &file{}
			f.init(d.fs, typ, opts, now)
			return f, nil
		}
		s := &special{}
		s.init(d.fs, typ, opts, now)
		return s, nil
	})
}

// Mkdir makes a directory.
func (d *dir) Mkdir(_ context.Context, name string, opts vfs.CreateOptions) (vfs.Inode, error) {
	return d.add(name, func(now time.Time) (node, error) {
		if d.nlink >= maxDirLinks {
			return nil, errno.EMLINK
		}
		c := d.fs.newDir(d, opts, now)
		d.nlink++ // the child's ".."
		return c, nil
	})
}

// maxDirLinks keeps a directory's link count (2 + subdirectories) from
// overflowing.
const maxDirLinks = 1<<32 - 2

// Symlink makes a symbolic link to target. The target is charged to the
// byte quota, as it is data the guest chose.
func (d *dir) Symlink(_ context.Context, name, target string, opts vfs.CreateOptions) (vfs.Inode, error) {
	switch {
	case target == "":
		return nil, errno.ENOENT
	case len(target) >= vfs.PathMax:
		return nil, errno.ENAMETOOLONG
	}
	return d.add(name, func(now time.Time) (node, error) {
		if err := d.fs.chargeBytes(int64(len(target))); err != nil {
			return nil, err
		}
		s := &symlink{target: target}
		opts.Mode = 0o777
		s.init(d.fs, vfs.TypeSymlink, opts, now)
		return s, nil
	})
}

// Link makes name another link to target, charging one inode of quota
// for the new name as tmpfs does, so names cannot be made without bound.
func (d *dir) Link(_ context.Context, name string, target vfs.Inode) error {
	if d.fs.readOnly {
		return errno.EROFS
	}
	t, ok := target.(node)
	if !ok || t.base().fs != d.fs {
		return errno.EXDEV
	}
	tb := t.base()
	if tb.typ == vfs.TypeDir {
		return errno.EPERM
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.checkCreateLocked(name); err != nil {
		return err
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch {
	case tb.nlink == 0:
		// The target was removed after the VFS found it.
		return errno.ENOENT
	case tb.nlink >= MaxLinks:
		return errno.EMLINK
	}
	if err := d.fs.chargeInode(); err != nil {
		return err
	}
	now := d.fs.now()
	tb.nlink++
	tb.ctime = now
	d.insertLocked(name, t)
	d.touchLocked(now)
	return nil
}

// dropLinkLocked takes one link away from the non-directory n, whose lock
// must be held, and credits the quota: one inode for an extra link, or
// the whole inode once nothing refers to it (for a file that is still
// open, that waits for the last Close).
func dropLinkLocked(n node, now time.Time) {
	b := n.base()
	b.nlink--
	b.ctime = now
	if b.nlink > 0 {
		b.fs.releaseInode()
		return
	}
	switch x := n.(type) {
	case *file:
		if x.opens == 0 {
			x.freeLocked()
		}
	case *symlink:
		b.fs.releaseBytes(int64(len(x.target)))
		b.fs.releaseInode()
	default:
		b.fs.releaseInode()
	}
}

// Unlink removes the non-directory name.
func (d *dir) Unlink(_ context.Context, name string) error {
	if d.fs.readOnly {
		return errno.EROFS
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.entries[name]
	if e == nil {
		return errno.ENOENT
	}
	if _, isDir := e.node.(*dir); isDir {
		return errno.EISDIR
	}
	now := d.fs.now()
	b := e.node.base()
	b.mu.Lock()
	dropLinkLocked(e.node, now)
	b.mu.Unlock()
	d.removeLocked(e)
	d.touchLocked(now)
	return nil
}

// Rmdir removes the empty directory name.
func (d *dir) Rmdir(_ context.Context, name string) error {
	if d.fs.readOnly {
		return errno.EROFS
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.entries[name]
	if e == nil {
		return errno.ENOENT
	}
	c, ok := e.node.(*dir)
	if !ok {
		return errno.ENOTDIR
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) > 0 {
		return errno.ENOTEMPTY
	}
	now := d.fs.now()
	c.killLocked(now)
	d.nlink--
	d.removeLocked(e)
	d.touchLocked(now)
	return nil
}

// killLocked marks an empty directory removed and credits its inode; its
// lock must be held.
func (d *dir) killLocked(now time.Time) {
	d.nlink = 0
	d.ctime = now
	d.order, d.removed = nil, 0
	d.fs.releaseInode()
}

// ReadDir returns up to max entries created after the one cookie names
// (0 = from the start), in creation order. Finding the starting point is a
// binary search, so reading a directory in batches costs O(log n) per call
// plus the entries returned.
func (d *dir) ReadDir(_ context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if max <= 0 {
		return nil, errno.EINVAL
	}
	d.mu.RLock()
	i := sort.Search(len(d.order), func(i int) bool { return d.order[i].seq > cookie })
	var out []vfs.Dirent
	for ; i < len(d.order) && len(out) < max; i++ {
		e := d.order[i]
		if e.removed {
			continue
		}
		if out == nil {
			out = make([]vfs.Dirent, 0, min(max, len(d.order)-i))
		}
		b := e.node.base()
		out = append(out, vfs.Dirent{Name: e.name, Ino: b.ino, Type: b.typ, Next: e.seq})
	}
	d.mu.RUnlock()
	d.touchAtime()
	return out, nil
}

// Rename moves oldName here to newName in newDir, atomically replacing
// what newName named, with rename(2)'s rules.
func (d *dir) Rename(_ context.Context, oldName string, newDir vfs.Inode, newName string) error {
	if d.fs.readOnly {
		return errno.EROFS
	}
	nd, ok := newDir.(*dir)
	switch {
	case ok && nd.fs != d.fs:
		return errno.EXDEV
	case !ok:
		if n, isNode := newDir.(node); isNode && n.base().fs == d.fs {
			return errno.ENOTDIR
		}
		return errno.EXDEV
	}
	if nd == d {
		// Renaming files within one directory locks the directory and
		// leaves only, so it need not wait for other renames. If a
		// directory is involved, it locks two sibling directories, which
		// a rename between those two would lock in its own order: take
		// renameMu then, so only one rename holds two directories at once.
		d.mu.Lock()
		if !d.hasDirLocked(oldName) && !d.hasDirLocked(newName) {
			defer d.mu.Unlock()
			return d.renameLocked(oldName, d, newName)
		}
		d.mu.Unlock()
		d.fs.renameMu.Lock()
		defer d.fs.renameMu.Unlock()
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.renameLocked(oldName, d, newName)
	}
	d.fs.renameMu.Lock()
	defer d.fs.renameMu.Unlock()
	// Lock the ancestor first, as every other operation locks a directory
	// before its children. Unrelated directories may be locked in either
	// order: only renames hold two directories that are not parent and
	// child, and renameMu lets one rename at a time do so.
	first, second := d, nd
	if nd.isAncestorOf(d) {
		first, second = nd, d
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()
	return d.renameLocked(oldName, nd, newName)
}

// hasDirLocked reports whether name is a directory entry; mu must be held.
func (d *dir) hasDirLocked(name string) bool {
	e := d.entries[name]
	if e == nil {
		return false
	}
	_, ok := e.node.(*dir)
	return ok
}

// isAncestorOf reports whether d is a strict ancestor of x; fs.renameMu
// must be held. The walk is as long as the tree is deep, as Linux's is.
func (d *dir) isAncestorOf(x *dir) bool {
	for p := x.parent; p != nil; p = p.parent {
		if p == d {
			return true
		}
	}
	return false
}

// renameLocked does the work of Rename with both directories locked (and
// fs.renameMu held if they differ).
func (d *dir) renameLocked(oldName string, nd *dir, newName string) error {
	if d.nlink == 0 || nd.nlink == 0 {
		return errno.ENOENT
	}
	src := d.entries[oldName]
	if src == nil {
		return errno.ENOENT
	}
	dst := nd.entries[newName]
	if dst != nil && dst.node == src.node {
		// Two names of one inode (or a name onto itself): rename(2) does
		// nothing and succeeds.
		return nil
	}
	srcDir, srcIsDir := src.node.(*dir)
	if srcIsDir && nd != d && (srcDir == nd || srcDir.isAncestorOf(nd)) {
		// The VFS refuses this first; checking again keeps the tree a tree
		// (and the lock order sound) whatever the caller.
		return errno.EINVAL
	}
	var dstDir *dir
	if dst != nil {
		var dstIsDir bool
		dstDir, dstIsDir = dst.node.(*dir)
		switch {
		case srcIsDir && !dstIsDir:
			return errno.ENOTDIR
		case !srcIsDir && dstIsDir:
			return errno.EISDIR
		case dstIsDir && nd != d && (dstDir == d || dstDir.isAncestorOf(d)):
			// Replacing an ancestor of the source: it is not empty.
			return errno.ENOTEMPTY
		}
	}
	if srcIsDir && nd != d && nd.nlink >= maxDirLinks {
		return errno.EMLINK
	}

	// Lock the two children. Neither is an ancestor of the other (checked
	// above), so no operation holds one of them while waiting for the
	// other.
	sb := src.node.base()
	sb.mu.Lock()
	defer sb.mu.Unlock()
	now := d.fs.now()
	if dst != nil {
		db := dst.node.base()
		db.mu.Lock()
		defer db.mu.Unlock()
		if dstDir != nil {
			if len(dstDir.entries) > 0 {
				return errno.ENOTEMPTY
			}
			dstDir.killLocked(now)
			nd.nlink--
		} else {
			dropLinkLocked(dst.node, now)
		}
	}
	n := src.node
	d.removeLocked(src)
	if dst != nil {
		// Keep the replaced entry's place in the directory order, so a
		// concurrent reader sees newName exactly once.
		dst.node = n
	} else {
		nd.insertLocked(newName, n)
	}
	if srcIsDir && nd != d {
		d.nlink--
		nd.nlink++
		srcDir.parent = nd
	}
	sb.ctime = now
	d.touchLocked(now)
	nd.touchLocked(now)
	return nil
}
