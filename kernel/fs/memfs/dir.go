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
//
// The entries live in the core (entries, order, removed, lastSeq): order
// is ascending by seq, and removed counts the marks still in it.
type dir struct {
	inode

	// parent is the directory holding this one, in this filesystem. It
	// changes only under fs.renameMu, which is what reading it requires
	// (the root's is nil). Views of directories are made only by looking
	// them up in their parent, so every one knows it.
	parent *dir
}

// dirent is one name in a directory. It names its inode by number, not
// by view: a directory's core may be shared by filesystems that each
// have their own views. A dirent of a frozen core is never changed.
type dirent struct {
	name    string
	ino     uint64
	typ     vfs.FileType
	seq     uint64
	removed bool
}

func (fs *FS) newDir(parent *dir, opts vfs.CreateOptions, now time.Time) *dir {
	c := fs.newCore(vfs.TypeDir, opts, now)
	c.entries = make(map[string]*dirent)
	c.nlink = 2
	d := &dir{parent: parent}
	d.bind(fs, c)
	return d
}

// entriesLocked returns the core with entries this filesystem may change,
// copying the core and then its entries if they are shared; mu must be
// held exclusively and fs.forkMu shared. Copying the entries is the one
// cost of a fork that grows with a directory's size, paid once per side
// and directory, and only by directories whose names change.
func (d *dir) entriesLocked() *core {
	c := d.ownLocked()
	if !c.shared {
		return c
	}
	c.shared = false
	live := len(c.order) - c.removed
	slab := make([]dirent, 0, live)
	entries := make(map[string]*dirent, live)
	order := make([]*dirent, 0, live)
	for _, e := range c.order {
		if e.removed {
			continue
		}
		slab = append(slab, *e)
		x := &slab[len(slab)-1]
		entries[x.name] = x
		order = append(order, x)
	}
	c.entries, c.order, c.removed = entries, order, 0
	return c
}

// child returns the view of the entry e of d.
func (d *dir) child(e *dirent) (node, error) { return d.fs.node(e.ino, d) }

// Stat reports a directory size that grows with its entries, as tmpfs
// does.
func (d *dir) Stat(context.Context) (vfs.Stat, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	st := d.statLocked()
	st.Size = int64(len(d.c.entries)+2) * bogoDirentSize
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
	e := d.c.entries[name]
	if e == nil {
		return nil, errno.ENOENT
	}
	// e.ino changes when a rename replaces the entry: read it locked.
	return d.child(e)
}

// insertLocked adds a new entry; mu must be held exclusively and the
// entries owned (entriesLocked).
func (d *dir) insertLocked(name string, n node) {
	c := d.c
	c.lastSeq++
	b := n.base()
	e := &dirent{name: name, ino: b.ino, typ: b.typ, seq: c.lastSeq}
	c.entries[name] = e
	c.order = append(c.order, e)
}

// removeLocked drops the entry e; mu must be held exclusively and the
// entries owned (entriesLocked).
func (d *dir) removeLocked(e *dirent) {
	c := d.c
	delete(c.entries, e.name)
	e.removed = true
	c.removed++
	if c.removed > 16 && c.removed*2 > len(c.order) {
		kept := c.order[:0]
		for _, x := range c.order {
			if !x.removed {
				kept = append(kept, x)
			}
		}
		clear(c.order[len(kept):])
		c.order = kept
		c.removed = 0
	}
}

// checkCreateLocked reports why name cannot be created here, if it cannot;
// mu must be held.
func (d *dir) checkCreateLocked(name string) error {
	if d.c.nlink == 0 {
		// Creating in a removed directory, as Linux reports it.
		return errno.ENOENT
	}
	if _, ok := d.c.entries[name]; ok {
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
	d.fs.forkMu.RLock()
	defer d.fs.forkMu.RUnlock()
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
	d.entriesLocked()
	d.fs.register(n)
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
		c := d.fs.newCore(typ, opts, now)
		if typ == vfs.TypeRegular {
			f := &file{}
			f.bind(d.fs, c)
			return f, nil
		}
		s := &special{}
		s.bind(d.fs, c)
		return s, nil
	})
}

// Mkdir makes a directory.
func (d *dir) Mkdir(_ context.Context, name string, opts vfs.CreateOptions) (vfs.Inode, error) {
	return d.add(name, func(now time.Time) (node, error) {
		if d.c.nlink >= maxDirLinks {
			return nil, errno.EMLINK
		}
		c := d.fs.newDir(d, opts, now)
		d.ownLocked().nlink++ // the child's ".."
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
		opts.Mode = 0o777
		c := d.fs.newCore(vfs.TypeSymlink, opts, now)
		c.target = target
		s := &symlink{}
		s.bind(d.fs, c)
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
	d.fs.forkMu.RLock()
	defer d.fs.forkMu.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.checkCreateLocked(name); err != nil {
		return err
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch {
	case tb.c.nlink == 0:
		// The target was removed after the VFS found it.
		return errno.ENOENT
	case tb.c.nlink >= MaxLinks:
		return errno.EMLINK
	}
	if err := d.fs.chargeInode(); err != nil {
		return err
	}
	now := d.fs.now()
	tc := tb.ownLocked()
	tc.nlink++
	tc.ctime = now
	d.entriesLocked()
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
	c := b.ownLocked()
	c.nlink--
	c.ctime = now
	if c.nlink > 0 {
		b.fs.releaseInode()
		return
	}
	switch x := n.(type) {
	case *file:
		if x.opens == 0 {
			x.freeLocked()
		} else {
			b.fs.orphan(x, true)
		}
		return
	case *symlink:
		b.fs.releaseBytes(int64(len(c.target)))
		b.fs.releaseInode()
	default:
		b.fs.releaseInode()
	}
	b.fs.forget(b)
}

// Unlink removes the non-directory name.
func (d *dir) Unlink(_ context.Context, name string) error {
	if d.fs.readOnly {
		return errno.EROFS
	}
	d.fs.forkMu.RLock()
	defer d.fs.forkMu.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.c.entries[name]
	if e == nil {
		return errno.ENOENT
	}
	if e.typ == vfs.TypeDir {
		return errno.EISDIR
	}
	n, err := d.child(e)
	if err != nil {
		return err
	}
	now := d.fs.now()
	b := n.base()
	b.mu.Lock()
	dropLinkLocked(n, now)
	b.mu.Unlock()
	d.entriesLocked()
	d.removeLocked(d.c.entries[name])
	d.touchLocked(now)
	return nil
}

// Rmdir removes the empty directory name.
func (d *dir) Rmdir(_ context.Context, name string) error {
	if d.fs.readOnly {
		return errno.EROFS
	}
	d.fs.forkMu.RLock()
	defer d.fs.forkMu.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.c.entries[name]
	if e == nil {
		return errno.ENOENT
	}
	if e.typ != vfs.TypeDir {
		return errno.ENOTDIR
	}
	n, err := d.child(e)
	if err != nil {
		return err
	}
	c := n.(*dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.c.entries) > 0 {
		return errno.ENOTEMPTY
	}
	now := d.fs.now()
	c.killLocked(now)
	d.entriesLocked().nlink--
	d.removeLocked(d.c.entries[name])
	d.touchLocked(now)
	return nil
}

// killLocked marks an empty directory removed, credits its inode and
// forgets it; its lock must be held.
func (d *dir) killLocked(now time.Time) {
	c := d.ownLocked()
	c.nlink = 0
	c.ctime = now
	c.order, c.removed = nil, 0
	d.fs.releaseInode()
	d.fs.forget(&d.inode)
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
	order := d.c.order
	i := sort.Search(len(order), func(i int) bool { return order[i].seq > cookie })
	var out []vfs.Dirent
	for ; i < len(order) && len(out) < max; i++ {
		e := order[i]
		if e.removed {
			continue
		}
		if out == nil {
			out = make([]vfs.Dirent, 0, min(max, len(order)-i))
		}
		out = append(out, vfs.Dirent{Name: e.name, Ino: e.ino, Type: e.typ, Next: e.seq})
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
	d.fs.forkMu.RLock()
	defer d.fs.forkMu.RUnlock()
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
	e := d.c.entries[name]
	return e != nil && e.typ == vfs.TypeDir
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
	if d.c.nlink == 0 || nd.c.nlink == 0 {
		return errno.ENOENT
	}
	src := d.c.entries[oldName]
	if src == nil {
		return errno.ENOENT
	}
	dst := nd.c.entries[newName]
	if dst != nil && dst.ino == src.ino {
		// Two names of one inode (or a name onto itself): rename(2) does
		// nothing and succeeds.
		return nil
	}
	srcNode, err := d.child(src)
	if err != nil {
		return err
	}
	srcDir, srcIsDir := srcNode.(*dir)
	if srcIsDir && nd != d && (srcDir == nd || srcDir.isAncestorOf(nd)) {
		// The VFS refuses this first; checking again keeps the tree a tree
		// (and the lock order sound) whatever the caller.
		return errno.EINVAL
	}
	var dstNode node
	var dstDir *dir
	if dst != nil {
		if dstNode, err = nd.child(dst); err != nil {
			return err
		}
		var dstIsDir bool
		dstDir, dstIsDir = dstNode.(*dir)
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
	if srcIsDir && nd != d && nd.c.nlink >= maxDirLinks {
		return errno.EMLINK
	}

	// Lock the two children. Neither is an ancestor of the other (checked
	// above), so no operation holds one of them while waiting for the
	// other.
	sb := srcNode.base()
	sb.mu.Lock()
	defer sb.mu.Unlock()
	now := d.fs.now()
	if dst != nil {
		db := dstNode.base()
		db.mu.Lock()
		defer db.mu.Unlock()
		if dstDir != nil {
			if len(dstDir.c.entries) > 0 {
				return errno.ENOTEMPTY
			}
			dstDir.killLocked(now)
			nd.ownLocked().nlink--
		} else {
			dropLinkLocked(dstNode, now)
		}
	}
	d.entriesLocked()
	nd.entriesLocked()
	d.removeLocked(d.c.entries[oldName])
	if dst := nd.c.entries[newName]; dst != nil {
		// Keep the replaced entry's place in the directory order, so a
		// concurrent reader sees newName exactly once.
		dst.ino, dst.typ = sb.ino, sb.typ
	} else {
		nd.insertLocked(newName, srcNode)
	}
	if srcIsDir && nd != d {
		d.c.nlink--
		nd.c.nlink++
		srcDir.parent = nd
	}
	sb.ownLocked().ctime = now
	d.touchLocked(now)
	nd.touchLocked(now)
	return nil
}
