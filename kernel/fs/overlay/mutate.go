package overlay

import (
	"context"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// checkNewName applies the checks every operation that makes the entry
// name in n shares. fs.mu must be held.
func (n *node) checkNewName(ctx context.Context, name string) error {
	if n.typ != vfs.TypeDir {
		return errno.ENOTDIR
	}
	if n.dead {
		return errno.ENOENT
	}
	_, err := n.lookup(ctx, name)
	switch {
	case err == nil:
		return errno.EEXIST
	case isNotExist(err):
		return nil
	default:
		return err
	}
}

// Create makes a regular file, FIFO, socket or device node in the upper
// layer. Names starting with ".wh." are refused with EINVAL.
func (n *node) Create(ctx context.Context, name string, opts vfs.CreateOptions) (vfs.Inode, error) {
	return n.makeEntry(ctx, name, false, func(up vfs.Inode) (vfs.Inode, error) {
		return up.Create(ctx, name, opts)
	})
}

// Mkdir makes a directory in the upper layer, opaque if a lower layer has
// the name. Names starting with ".wh." are refused with EINVAL.
func (n *node) Mkdir(ctx context.Context, name string, opts vfs.CreateOptions) (vfs.Inode, error) {
	return n.makeEntry(ctx, name, true, func(up vfs.Inode) (vfs.Inode, error) {
		return up.Mkdir(ctx, name, opts)
	})
}

// Symlink makes a symbolic link in the upper layer. Names starting with
// ".wh." are refused with EINVAL.
func (n *node) Symlink(ctx context.Context, name, target string, opts vfs.CreateOptions) (vfs.Inode, error) {
	return n.makeEntry(ctx, name, false, func(up vfs.Inode) (vfs.Inode, error) {
		return up.Symlink(ctx, name, target, opts)
	})
}

// makeEntry is the body of Create, Mkdir and Symlink: copy the directory up,
// make the entry with mk, make a directory opaque if it would otherwise
// merge with a lower one, and drop a whiteout of the name.
func (n *node) makeEntry(ctx context.Context, name string, isDir bool, mk func(up vfs.Inode) (vfs.Inode, error)) (vfs.Inode, error) {
	if isHidden(name) {
		return nil, errno.EINVAL
	}
	fs := n.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := n.checkNewName(ctx, name); err != nil {
		return nil, err
	}
	var t txn
	child, err := n.makeUpper(ctx, &t, name, isDir, mk)
	if err != nil {
		t.rollback(ctx)
		return nil, err
	}
	st, err := child.Stat(ctx)
	if err != nil {
		// The entry exists now; without its inode number no node can be
		// made, so take it back rather than leave it half-known.
		t.rollback(ctx)
		return nil, lerr(err)
	}
	c := &node{fs: fs, typ: st.Type(), parent: n, name: name, upper: child, subdirs: -1}
	c.copied.Store(true)
	c.ino = fs.inoFor(objKey{0, st.Ino})
	n.attach(name, c)
	if isDir {
		n.addSubdirs(1)
	}
	return c, nil
}

// makeUpper does the layer work of makeEntry; the undo steps go to t.
func (n *node) makeUpper(ctx context.Context, t *txn, name string, isDir bool, mk func(up vfs.Inode) (vfs.Inode, error)) (vfs.Inode, error) {
	if err := n.fs.copyUp(ctx, t, n, -1); err != nil {
		return nil, err
	}
	wh, err := hasWhiteout(ctx, n.upper, name)
	if err != nil {
		return nil, err
	}
	child, err := mk(n.upper)
	if err != nil {
		return nil, lerr(err)
	}
	up := n.upper
	t.push(func(ctx context.Context) {
		if isDir {
			_ = clearMarkers(ctx, child)
			_ = up.Rmdir(ctx, name)
		} else {
			_ = up.Unlink(ctx, name)
		}
	})
	if isDir {
		below, err := lowerPositive(ctx, n, name)
		if err != nil {
			return nil, err
		}
		if below {
			if _, err := createMarker(ctx, child, opaqueName); err != nil {
				return nil, err
			}
		}
	}
	if wh {
		// The new entry already hides the lower one; a whiteout left
		// behind by a failure here would be harmless.
		_ = up.Unlink(ctx, whiteoutName(name))
	}
	return child, nil
}

// Link makes name a new hard link to target, copying both the target and
// this directory up first. Names starting with ".wh." are refused with
// EINVAL.
func (n *node) Link(ctx context.Context, name string, target vfs.Inode) error {
	if isHidden(name) {
		return errno.EINVAL
	}
	tn, ok := target.(*node)
	if !ok || tn.fs != n.fs {
		return errno.EXDEV
	}
	if tn.typ == vfs.TypeDir {
		return errno.EPERM
	}
	fs := n.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := n.checkNewName(ctx, name); err != nil {
		return err
	}
	var t txn
	if err := fs.copyUp(ctx, &t, tn, -1); err != nil {
		t.rollback(ctx)
		return err
	}
	_, err := n.makeUpper(ctx, &t, name, false, func(up vfs.Inode) (vfs.Inode, error) {
		if err := up.Link(ctx, name, tn.upper); err != nil {
			return nil, err
		}
		return tn.upper, nil
	})
	if err != nil {
		t.rollback(ctx)
		return err
	}
	c := &node{fs: fs, typ: tn.typ, parent: n, name: name, upper: tn.upper, ino: tn.ino, subdirs: -1}
	c.copied.Store(true)
	n.attach(name, c)
	return nil
}

// whiteout makes sure a lower layer's name stays hidden once the upper
// entry is gone: it copies n up and creates the whiteout if a lower layer
// shows name. The undo step goes to t.
func (n *node) whiteout(ctx context.Context, t *txn, name string) error {
	below, err := lowerPositive(ctx, n, name)
	if err != nil || !below {
		return err
	}
	if err := n.fs.copyUp(ctx, t, n, -1); err != nil {
		return err
	}
	wname := whiteoutName(name)
	made, err := createMarker(ctx, n.upper, wname)
	if err != nil {
		return err
	}
	if made {
		up := n.upper
		t.push(func(ctx context.Context) { _ = up.Unlink(ctx, wname) })
	}
	return nil
}

// Unlink removes the non-directory name, leaving a whiteout if a lower
// layer has it.
func (n *node) Unlink(ctx context.Context, name string) error {
	if n.typ != vfs.TypeDir {
		return errno.ENOTDIR
	}
	if isHidden(name) {
		return errno.ENOENT
	}
	fs := n.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	c, err := n.lookup(ctx, name)
	if err != nil {
		return err
	}
	if c.typ == vfs.TypeDir {
		return errno.EISDIR
	}
	var t txn
	if err := n.whiteout(ctx, &t, name); err != nil {
		t.rollback(ctx)
		return err
	}
	if c.upper != nil {
		st, err := c.upper.Stat(ctx)
		if err != nil {
			t.rollback(ctx)
			return lerr(err)
		}
		if err := n.upper.Unlink(ctx, name); err != nil {
			t.rollback(ctx)
			return lerr(err)
		}
		if st.Nlink <= 1 {
			fs.forgetUpper(st.Ino)
		}
	}
	n.detach(name)
	return nil
}

// Rmdir removes the directory name, which must be empty in the merged
// view, leaving a whiteout if a lower layer has it.
func (n *node) Rmdir(ctx context.Context, name string) error {
	if n.typ != vfs.TypeDir {
		return errno.ENOTDIR
	}
	if isHidden(name) {
		return errno.ENOENT
	}
	fs := n.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	c, err := n.lookup(ctx, name)
	if err != nil {
		return err
	}
	if c.typ != vfs.TypeDir {
		return errno.ENOTDIR
	}
	if empty, err := fs.mergedEmpty(ctx, c); err != nil {
		return err
	} else if !empty {
		return errno.ENOTEMPTY
	}
	var t txn
	if err := n.whiteout(ctx, &t, name); err != nil {
		t.rollback(ctx)
		return err
	}
	if c.upper != nil {
		st, err := c.upper.Stat(ctx)
		if err == nil {
			err = clearMarkers(ctx, c.upper)
		}
		if err == nil {
			err = n.upper.Rmdir(ctx, name)
		}
		if err != nil {
			t.rollback(ctx)
			return lerr(err)
		}
		fs.forgetUpper(st.Ino)
	}
	n.detach(name)
	n.addSubdirs(-1)
	return nil
}

// Rename moves oldName to newName in newDir as rename(2) does, copying the
// source up first: a directory with lower-layer content is copied up with
// its whole subtree (see the package doc for why this is not EXDEV). A
// lower layer's oldName is whited out. Names starting with ".wh." are
// refused with EINVAL as targets.
func (n *node) Rename(ctx context.Context, oldName string, newDir vfs.Inode, newName string) error {
	if n.typ != vfs.TypeDir {
		return errno.ENOTDIR
	}
	if isHidden(oldName) {
		return errno.ENOENT
	}
	nd, ok := newDir.(*node)
	if !ok || nd.fs != n.fs {
		return errno.EXDEV
	}
	if nd.typ != vfs.TypeDir {
		return errno.ENOTDIR
	}
	if isHidden(newName) {
		return errno.EINVAL
	}
	fs := n.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if n.dead || nd.dead {
		return errno.ENOENT
	}
	src, err := n.lookup(ctx, oldName)
	if err != nil {
		return err
	}
	dst, err := nd.lookup(ctx, newName)
	switch {
	case err == nil:
	case isNotExist(err):
		dst = nil
	default:
		return err
	}
	if dst != nil {
		if dst == src || dst.ino == src.ino {
			// Two names of one file: rename(2) does nothing.
			return nil
		}
		switch {
		case src.typ == vfs.TypeDir && dst.typ != vfs.TypeDir:
			return errno.ENOTDIR
		case src.typ != vfs.TypeDir && dst.typ == vfs.TypeDir:
			return errno.EISDIR
		case dst.typ == vfs.TypeDir:
			if empty, err := fs.mergedEmpty(ctx, dst); err != nil {
				return err
			} else if !empty {
				return errno.ENOTEMPTY
			}
		}
	}
	if src.typ == vfs.TypeDir {
		// The VFS checks this on paths; the node tree must never get a
		// cycle even if the paths it was given were stale.
		for p := nd; p != nil; p = p.parent {
			if p == src {
				return errno.EINVAL
			}
		}
	}
	var t txn
	if err := n.renameUpper(ctx, &t, src, oldName, nd, dst, newName); err != nil {
		t.rollback(ctx)
		return err
	}
	n.unattach(oldName)
	if dst != nil {
		nd.detach(newName)
		if dst.typ == vfs.TypeDir {
			nd.addSubdirs(-1)
		}
	}
	src.parent, src.name = nd, newName
	nd.attach(newName, src)
	if src.typ == vfs.TypeDir {
		n.addSubdirs(-1)
		nd.addSubdirs(1)
		// The moved directory is whole in the upper layer now, and
		// opaque if anything lies beneath its new name.
		dropLowers(src)
	}
	return nil
}

// renameUpper does the layer work of Rename; the undo steps of everything
// before the upper layer's rename go to t.
func (n *node) renameUpper(ctx context.Context, t *txn, src *node, oldName string, nd, dst *node, newName string) error {
	fs := n.fs
	var err error
	if src.typ == vfs.TypeDir && len(src.lowers) > 0 {
		err = fs.copyUpTree(ctx, t, src)
	} else {
		err = fs.copyUp(ctx, t, src, -1)
	}
	if err != nil {
		return err
	}
	if err := fs.copyUp(ctx, t, nd, -1); err != nil {
		return err
	}
	if err := n.whiteout(ctx, t, oldName); err != nil {
		return err
	}
	if src.typ == vfs.TypeDir {
		below, err := lowerPositive(ctx, nd, newName)
		if err != nil {
			return err
		}
		if below {
			made, err := createMarker(ctx, src.upper, opaqueName)
			if err != nil {
				return err
			}
			if made {
				su := src.upper
				t.push(func(ctx context.Context) { _ = su.Unlink(ctx, opaqueName) })
			}
		}
	}
	dstWh := false
	if dst == nil {
		if dstWh, err = hasWhiteout(ctx, nd.upper, newName); err != nil {
			return err
		}
	}
	var dstSt vfs.Stat
	if dst != nil && dst.upper != nil {
		if dstSt, err = dst.upper.Stat(ctx); err != nil {
			return lerr(err)
		}
		if dst.typ == vfs.TypeDir {
			// Empty in the merged view, but its upper copy may hold
			// whiteouts the upper layer would call ENOTEMPTY. From here
			// on nothing can run out of space.
			if err := clearMarkers(ctx, dst.upper); err != nil {
				return err
			}
		}
	}
	if err := n.upper.Rename(ctx, oldName, nd.upper, newName); err != nil {
		return lerr(err)
	}
	if dstWh {
		// Harmless if it stays: the new entry hides the lower one.
		_ = nd.upper.Unlink(ctx, whiteoutName(newName))
	}
	if dst != nil && dst.upper != nil && (dst.typ == vfs.TypeDir || dstSt.Nlink <= 1) {
		fs.forgetUpper(dstSt.Ino)
	}
	return nil
}
