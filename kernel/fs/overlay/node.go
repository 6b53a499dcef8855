package overlay

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// node is one object of the merged tree, of any type. The overlay keeps one
// node per merged object it has handed out (cached in its parent), so an
// inode the VFS holds, as an open file or a working directory, follows its
// object through copy-up and rename.
type node struct {
	fs  *FS
	typ vfs.FileType // never changes

	// These are guarded by fs.mu.
	parent *node  // nil for the root
	name   string // name in parent
	ino    uint64 // overlay inode number
	// upper is the object's upper-layer copy, nil until copied up.
	upper vfs.Inode
	// lowers are, for a directory, the lower directories merged beneath
	// it, top first; for anything else, the lower object it was found as.
	lowers []layerInode
	// dead is set once the node's name is gone (unlinked, removed,
	// renamed over): it can no longer be copied up or have entries made.
	dead bool

	// copied mirrors upper != nil so a read handle can notice a copy-up
	// without taking fs.mu on every read.
	copied atomic.Bool

	// cmu guards children and subdirs, which lookups under fs.mu's read
	// side fill in.
	cmu      sync.Mutex
	children map[string]*node
	// subdirs is the number of subdirectories in the merged view, or -1
	// if not yet counted; only merged directories use it.
	subdirs int
}

// FileType reports the node's type; the VFS uses it in path resolution
// instead of a full Stat.
func (n *node) FileType() vfs.FileType { return n.typ }

// layers returns the directory's layers, upper first. fs.mu must be held.
func (n *node) layers() []layerInode {
	if n.upper == nil {
		return n.lowers
	}
	out := make([]layerInode, 0, 1+len(n.lowers))
	out = append(out, layerInode{layer: 0, ino: n.upper})
	return append(out, n.lowers...)
}

// top returns the inode the object's attributes and data come from. fs.mu
// must be held.
func (n *node) top() vfs.Inode {
	if n.upper != nil {
		return n.upper
	}
	return n.lowers[0].ino
}

// merged reports whether a directory spans more than one layer. fs.mu must
// be held.
func (n *node) merged() bool {
	k := len(n.lowers)
	if n.upper != nil {
		k++
	}
	return k > 1
}

// Stat returns the attributes of the topmost copy with the overlay's inode
// number.
func (n *node) Stat(ctx context.Context) (vfs.Stat, error) {
	n.fs.mu.RLock()
	defer n.fs.mu.RUnlock()
	st, err := n.top().Stat(ctx)
	if err != nil {
		return vfs.Stat{}, lerr(err)
	}
	st.Ino = n.ino
	if n.typ == vfs.TypeDir && n.merged() {
		k, err := n.fs.countSubdirs(ctx, n)
		if err != nil {
			return vfs.Stat{}, err
		}
		st.Nlink = uint32(min(2+k, 1<<32-1))
	}
	return st, nil
}

// SetAttr copies the object up and changes the copy. Truncation copies up
// only the data that survives it.
func (n *node) SetAttr(ctx context.Context, attr vfs.SetAttr) error {
	n.fs.mu.RLock()
	up := n.upper
	n.fs.mu.RUnlock()
	if up != nil {
		return lerr(up.SetAttr(ctx, attr))
	}
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	limit := int64(-1)
	if attr.Mask&vfs.SetSize != 0 && attr.Size >= 0 {
		limit = attr.Size
	}
	var t txn
	if err := n.fs.copyUp(ctx, &t, n, limit); err != nil {
		t.rollback(ctx)
		return err
	}
	if err := n.upper.SetAttr(ctx, attr); err != nil {
		t.rollback(ctx)
		return lerr(err)
	}
	return nil
}

// Readlink returns the target of the topmost copy.
func (n *node) Readlink(ctx context.Context) (string, error) {
	if n.typ != vfs.TypeSymlink {
		return "", errno.EINVAL
	}
	n.fs.mu.RLock()
	top := n.top()
	n.fs.mu.RUnlock()
	s, err := top.Readlink(ctx)
	return s, lerr(err)
}

// Open opens the object's data. Opening a regular file for writing copies
// it up first (with no data if O_TRUNC will empty it); opening it
// read-only reads the lower copy until a copy-up happens.
func (n *node) Open(ctx context.Context, flags vfs.OpenFlags) (vfs.Handle, error) {
	if n.typ == vfs.TypeDir {
		return nil, errno.EISDIR
	}
	if n.typ == vfs.TypeRegular && flags.Writable() {
		n.fs.mu.Lock()
		if n.upper == nil {
			limit := int64(-1)
			if flags&vfs.O_TRUNC != 0 {
				limit = 0
			}
			var t txn
			if err := n.fs.copyUp(ctx, &t, n, limit); err != nil {
				t.rollback(ctx)
				n.fs.mu.Unlock()
				return nil, err
			}
		}
		up := n.upper
		n.fs.mu.Unlock()
		h, err := up.Open(ctx, flags)
		return h, lerr(err)
	}
	n.fs.mu.RLock()
	up, top := n.upper, n.top()
	n.fs.mu.RUnlock()
	h, err := top.Open(ctx, flags)
	if err != nil {
		return nil, lerr(err)
	}
	if up != nil || n.typ != vfs.TypeRegular {
		// Devices are not copied up: writing one changes no inode.
		return h, nil
	}
	return &readHandle{n: n, h: h}, nil
}

// Lookup returns the merged child called name.
func (n *node) Lookup(ctx context.Context, name string) (vfs.Inode, error) {
	if n.typ != vfs.TypeDir {
		return nil, errno.ENOTDIR
	}
	if isHidden(name) {
		return nil, errno.ENOENT
	}
	n.fs.mu.RLock()
	defer n.fs.mu.RUnlock()
	c, err := n.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// lookup returns the cached child called name, or merges the layers to
// find it and caches the result. fs.mu must be held (either side).
func (n *node) lookup(ctx context.Context, name string) (*node, error) {
	if n.dead {
		return nil, errno.ENOENT
	}
	n.cmu.Lock()
	c := n.children[name]
	n.cmu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := n.fs.mergeChild(ctx, n, name)
	if err != nil {
		return nil, err
	}
	n.cmu.Lock()
	defer n.cmu.Unlock()
	if old := n.children[name]; old != nil {
		// Another reader merged it first; keep one node per object.
		return old, nil
	}
	n.attachLocked(name, c)
	return c, nil
}

// attachLocked caches c as the child called name. n.cmu must be held.
func (n *node) attachLocked(name string, c *node) {
	if n.children == nil {
		n.children = make(map[string]*node)
	}
	n.children[name] = c
}

// attach caches c as the child called name. fs.mu must be held for writing.
func (n *node) attach(name string, c *node) {
	n.cmu.Lock()
	n.attachLocked(name, c)
	n.cmu.Unlock()
}

// unattach drops the child called name from the cache and returns it.
// fs.mu must be held for writing.
func (n *node) unattach(name string) *node {
	n.cmu.Lock()
	defer n.cmu.Unlock()
	c := n.children[name]
	delete(n.children, name)
	return c
}

// detach forgets the child called name, which no longer exists anywhere.
// fs.mu must be held for writing.
func (n *node) detach(name string) {
	if c := n.unattach(name); c != nil {
		c.dead = true
	}
}

// addSubdirs adjusts the cached merged subdirectory count after a
// directory was added (+1) or removed (-1). fs.mu must be held for writing.
func (n *node) addSubdirs(d int) {
	n.cmu.Lock()
	if n.subdirs >= 0 {
		n.subdirs += d
	}
	n.cmu.Unlock()
}

// mergeChild finds name in dir's layers and makes a node for it, without
// caching it. fs.mu must be held.
func (fs *FS) mergeChild(ctx context.Context, dir *node, name string) (*node, error) {
	layers := dir.layers()
	var (
		found  bool
		top    layerInode
		topSt  vfs.Stat
		merged []layerInode
	)
scan:
	for i, d := range layers {
		child, err := d.ino.Lookup(ctx, name)
		if err != nil {
			if !isNotExist(err) {
				return nil, lerr(err)
			}
			wh, err := hasWhiteout(ctx, d.ino, name)
			if err != nil {
				return nil, err
			}
			if wh {
				break
			}
			continue
		}
		st, err := child.Stat(ctx)
		if err != nil {
			return nil, lerr(err)
		}
		isDir := st.Type() == vfs.TypeDir
		switch {
		case !found:
			found, top, topSt = true, layerInode{layer: d.layer, ino: child}, st
		case isDir:
			merged = append(merged, layerInode{layer: d.layer, ino: child})
		}
		if !isDir {
			// A non-directory is never merged, and ends the merge of a
			// directory above it.
			break scan
		}
		if i < len(layers)-1 {
			opaque, err := isOpaque(ctx, child)
			if err != nil {
				return nil, err
			}
			if opaque {
				break
			}
		}
	}
	if !found {
		return nil, errno.ENOENT
	}
	c := &node{fs: fs, typ: topSt.Type(), parent: dir, name: name, subdirs: -1}
	if top.layer == 0 {
		c.upper = top.ino
		c.lowers = merged
		c.copied.Store(true)
	} else {
		c.lowers = append([]layerInode{top}, merged...)
	}
	c.ino = fs.inoFor(objKey{top.layer, topSt.Ino})
	return c, nil
}

// lowerPositive reports whether a lower layer of dir shows name: removing
// name then needs a whiteout, and a directory put there must be opaque.
// fs.mu must be held.
func lowerPositive(ctx context.Context, dir *node, name string) (bool, error) {
	for _, d := range dir.lowers {
		ok, err := exists(ctx, d.ino, name)
		if err != nil || ok {
			return ok, err
		}
		if wh, err := hasWhiteout(ctx, d.ino, name); err != nil || wh {
			return false, err
		}
	}
	return false, nil
}

// readHandle reads a lower file opened read-only. After the file is copied
// up it reopens the upper copy, so reads see later writes.
type readHandle struct {
	n *node

	mu       sync.RWMutex // guards the fields below; held for reading around each read
	h        vfs.Handle
	switched bool
	closed   bool
}

// ReadAt reads from the topmost copy.
func (r *readHandle) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	r.mu.RLock()
	if !r.switched && r.n.copied.Load() {
		r.mu.RUnlock()
		if err := r.switchUp(ctx); err != nil {
			return 0, err
		}
		r.mu.RLock()
	}
	defer r.mu.RUnlock()
	if r.closed {
		return 0, errno.EBADF
	}
	n, err := r.h.ReadAt(ctx, p, off)
	return n, lerr(err)
}

// switchUp replaces the lower handle with one on the upper copy.
func (r *readHandle) switchUp(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.switched || r.closed {
		return nil
	}
	r.n.fs.mu.RLock()
	up := r.n.upper
	r.n.fs.mu.RUnlock()
	if up == nil {
		return nil
	}
	h, err := up.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		return lerr(err)
	}
	old := r.h
	r.h, r.switched = h, true
	// The lower handle was only read; closing it cannot lose data.
	_ = old.Close()
	return nil
}

// WriteAt fails: the handle was opened read-only.
func (r *readHandle) WriteAt(context.Context, []byte, int64) (int, error) { return 0, errno.EBADF }

// Append fails: the handle was opened read-only.
func (r *readHandle) Append(context.Context, []byte) (int, int64, error) {
	return 0, 0, errno.EBADF
}

// Sync has nothing to flush for a read-only handle.
func (r *readHandle) Sync(context.Context) error { return nil }

// Close releases the underlying handle.
func (r *readHandle) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errno.EBADF
	}
	r.closed = true
	return lerr(r.h.Close())
}
