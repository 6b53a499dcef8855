package memfs

import (
	"context"

	"github.com/secexec/secexec/kernel/errno"
)

// Clone returns a copy of the filesystem that shares its file data
// copy-on-write: the tree (directories, names, attributes, inode numbers,
// hard links) is copied, the data pages are not. Whichever side writes to
// a shared file first gives that file private pages, so writes on either
// side (through handles opened before the clone too) are invisible to the
// other. The copy is charged in full to opts.Quota, which may be another
// VM's: with too little room Clone fails with ENOSPC and charges nothing.
//
// The cost is one small allocation per inode and per name, never per byte
// of data. Clone takes the rename mutex, so the tree cannot change shape
// under it through cross-directory renames; directories are read one at a
// time under their own locks, as a concurrent ReadDir would.
func (fs *FS) Clone(ctx context.Context, opts Options) (*FS, error) {
	dst := New(opts)
	fs.renameMu.Lock()
	defer fs.renameMu.Unlock()
	c := cloner{dst: dst, seen: make(map[node]node)}
	if err := c.dir(ctx, fs.root, dst.root); err != nil {
		_ = dst.Release()
		return nil, err
	}
	dst.lastIno.Store(fs.lastIno.Load())
	return dst, nil
}

// cloner copies one tree into dst; seen maps inodes already copied to
// their copies, so that hard links stay links.
type cloner struct {
	dst  *FS
	seen map[node]node
}

// dir copies the entries of src into the empty directory to, and src's
// attributes onto it.
func (c *cloner) dir(ctx context.Context, src, to *dir) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	src.mu.RLock()
	copyAttrs(&to.inode, &src.inode)
	to.nlink = src.nlink
	ents := make([]*dirent, 0, len(src.entries))
	for _, e := range src.order {
		if !e.removed {
			ents = append(ents, &dirent{name: e.name, node: e.node})
		}
	}
	src.mu.RUnlock()
	// One allocation for the directory's entries, and its map and list
	// sized once.
	if len(to.entries) == 0 {
		to.entries = make(map[string]*dirent, len(ents))
	}
	to.order = make([]*dirent, 0, len(ents))
	slots := make([]dirent, len(ents))
	insert := func(i int, name string, n node) {
		to.lastSeq++
		slots[i] = dirent{name: name, node: n, seq: to.lastSeq}
		to.entries[name] = &slots[i]
		to.order = append(to.order, &slots[i])
	}
	var subdirs []struct{ src, to *dir }
	for i, e := range ents {
		if err := c.dst.chargeInode(); err != nil {
			return err
		}
		if n, ok := c.seen[e.node]; ok {
			insert(i, e.name, n)
			continue
		}
		n, err := c.node(e.node, to)
		if err != nil {
			c.dst.releaseInode()
			return err
		}
		if _, isDir := e.node.(*dir); !isDir {
			c.seen[e.node] = n // a hard link's other names find it
		}
		insert(i, e.name, n)
		if d, ok := e.node.(*dir); ok {
			subdirs = append(subdirs, struct{ src, to *dir }{d, n.(*dir)})
		}
	}
	for _, s := range subdirs {
		if err := c.dir(ctx, s.src, s.to); err != nil {
			return err
		}
	}
	return nil
}

// node makes the copy of one non-root inode in parent; a directory's
// entries are copied by the caller.
func (c *cloner) node(n node, parent *dir) (node, error) {
	switch src := n.(type) {
	case *dir:
		d := &dir{parent: parent}
		d.fs, d.ino, d.typ = c.dst, src.ino, src.typ
		return d, nil
	case *file:
		src.mu.Lock()
		defer src.mu.Unlock()
		if err := c.dst.chargeBytes(src.size); err != nil {
			return nil, err
		}
		f := &file{size: src.size, pages: src.pages, blocks: src.blocks, shared: src.pages != nil}
		src.shared = src.pages != nil
		f.fs, f.ino, f.typ = c.dst, src.ino, src.typ
		copyAttrs(&f.inode, &src.inode)
		return f, nil
	case *symlink:
		if err := c.dst.chargeBytes(int64(len(src.target))); err != nil {
			return nil, err
		}
		s := &symlink{target: src.target}
		s.fs, s.ino, s.typ = c.dst, src.ino, src.typ
		src.mu.RLock()
		copyAttrs(&s.inode, &src.inode)
		src.mu.RUnlock()
		return s, nil
	case *special:
		s := &special{}
		s.fs, s.ino, s.typ, s.rdev = c.dst, src.ino, src.typ, src.rdev
		src.mu.RLock()
		copyAttrs(&s.inode, &src.inode)
		src.mu.RUnlock()
		return s, nil
	}
	return nil, errno.EINVAL
}

// copyAttrs copies ownership, permissions, link count and times; src.mu
// must be held.
func copyAttrs(to, src *inode) {
	to.perm, to.uid, to.gid, to.nlink = src.perm, src.uid, src.gid, src.nlink
	to.mtime, to.ctime = src.mtime, src.ctime
	src.amu.Lock()
	to.atime = src.atime
	src.amu.Unlock()
}

// unshareLocked gives the file private pages before its data changes, if
// it shares them with a clone; mu must be held exclusively.
func (f *file) unshareLocked() {
	if !f.shared {
		return
	}
	f.shared = false
	pages := make(map[int64][]byte, len(f.pages))
	for i, pg := range f.pages {
		pages[i] = append(make([]byte, 0, len(pg)), pg...)
	}
	f.pages = pages
}
