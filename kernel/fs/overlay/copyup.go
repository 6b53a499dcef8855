package overlay

import (
	"bytes"
	"context"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// txn collects the undo steps of one overlay operation, so an operation
// that fails part-way (ENOSPC in the middle of a copy-up) leaves the upper
// layer and the nodes exactly as they were.
type txn struct {
	undo []func(context.Context)
}

func (t *txn) push(f func(context.Context)) { t.undo = append(t.undo, f) }

// rollback runs the undo steps, newest first. It runs even if ctx was
// cancelled: a half-done change must not stay behind.
func (t *txn) rollback(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i](ctx)
	}
	t.undo = nil
}

// keepTimes records dir's access and modification times and returns a
// function that puts them back, so that making a copy-up in dir stays
// invisible, as overlayfs keeps it.
func keepTimes(ctx context.Context, dir vfs.Inode) (func(context.Context), error) {
	st, err := dir.Stat(ctx)
	if err != nil {
		return nil, lerr(err)
	}
	return func(ctx context.Context) {
		// Best effort: the times are cosmetic, and failing the whole
		// operation over them would be worse.
		_ = dir.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: st.Atime, Mtime: st.Mtime})
	}, nil
}

// copyUp copies n, and every ancestor not yet in the upper layer, into the
// upper layer. For a regular file, limit >= 0 copies only that many bytes
// (the rest is about to be truncated away). fs.mu must be held for
// writing; on error the caller rolls t back.
func (fs *FS) copyUp(ctx context.Context, t *txn, n *node, limit int64) error {
	var chain []*node
	for p := n; p.upper == nil; p = p.parent {
		if p.dead || p.parent == nil {
			return errno.ENOENT
		}
		chain = append(chain, p)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := int64(-1)
		if i == 0 {
			l = limit
		}
		if err := fs.copyUpOne(ctx, t, chain[i], l); err != nil {
			return err
		}
	}
	return nil
}

// copyUpOne copies n, whose parent is in the upper layer already.
func (fs *FS) copyUpOne(ctx context.Context, t *txn, n *node, limit int64) error {
	if ctx.Err() != nil {
		return errno.EINTR
	}
	src := n.lowers[0]
	st, err := src.ino.Stat(ctx)
	if err != nil {
		return lerr(err)
	}
	pu := n.parent.upper
	restore, err := keepTimes(ctx, pu)
	if err != nil {
		return err
	}
	opts := vfs.CreateOptions{Mode: st.Mode, UID: st.UID, GID: st.GID, Rdev: st.Rdev}
	var up vfs.Inode
	switch st.Type() {
	case vfs.TypeDir:
		up, err = pu.Mkdir(ctx, n.name, opts)
	case vfs.TypeSymlink:
		var target string
		if target, err = src.ino.Readlink(ctx); err == nil {
			up, err = pu.Symlink(ctx, n.name, target, opts)
		}
	default:
		up, err = pu.Create(ctx, n.name, opts)
	}
	if err != nil {
		return lerr(err)
	}
	isDir := st.Type() == vfs.TypeDir
	t.push(func(ctx context.Context) {
		if isDir {
			_ = pu.Rmdir(ctx, n.name)
		} else {
			_ = pu.Unlink(ctx, n.name)
		}
		restore(ctx)
	})
	if st.Type() == vfs.TypeRegular {
		if err := copyData(ctx, src.ino, up, st.Size, limit); err != nil {
			return err
		}
	}
	if err := copyAttrs(ctx, up, st); err != nil {
		return err
	}
	restore(ctx)
	ust, err := up.Stat(ctx)
	if err != nil {
		return lerr(err)
	}
	oldIno, ino := n.ino, n.ino
	if !isDir && st.Nlink > 1 {
		// The copy is a different file from the lower names it leaves
		// behind; give it its own number so no two files share one.
		ino = fs.newIno()
	}
	fs.adoptUpper(ust.Ino, ino, objKey{src.layer, st.Ino})
	n.upper, n.ino = up, ino
	n.copied.Store(true)
	t.push(func(context.Context) {
		fs.forgetUpper(ust.Ino)
		n.upper, n.ino = nil, oldIno
		n.copied.Store(false)
	})
	return nil
}

// copyAttrs gives the copy the original's mode and times (its owner was
// set when it was made). Data writes changed its times, so this runs last.
func copyAttrs(ctx context.Context, up vfs.Inode, st vfs.Stat) error {
	attr := vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: st.Atime, Mtime: st.Mtime}
	if st.Type() == vfs.TypeSymlink {
		// Symlink times are best effort: some filesystems cannot set them
		// (Linux's lutimes support is recent), and a symlink's mode is
		// meaningless.
		_ = up.SetAttr(ctx, attr)
		return nil
	}
	attr.Mask |= vfs.SetMode
	attr.Mode = st.Mode & vfs.ModePerm
	return lerr(up.SetAttr(ctx, attr))
}

// copyData streams up to limit bytes (all if limit < 0) of src into the
// new empty file dst. The size is set first, so an over-quota copy fails
// with ENOSPC before any data moves, and blocks of zeros are skipped so
// holes stay holes.
func copyData(ctx context.Context, src, dst vfs.Inode, size, limit int64) error {
	if limit >= 0 && limit < size {
		size = limit
	}
	if size <= 0 {
		return nil
	}
	if err := dst.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: size}); err != nil {
		return lerr(err)
	}
	rh, err := src.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		return lerr(err)
	}
	defer rh.Close()
	wh, err := dst.Open(ctx, vfs.O_WRONLY)
	if err != nil {
		return lerr(err)
	}
	defer wh.Close()
	buf := make([]byte, min(copyChunk, size))
	for off := int64(0); off < size; {
		if ctx.Err() != nil {
			return errno.EINTR
		}
		want := min(int64(len(buf)), size-off)
		r, err := rh.ReadAt(ctx, buf[:want], off)
		if err != nil {
			return lerr(err)
		}
		if r == 0 {
			// The lower file is shorter than it said; the size is set.
			return nil
		}
		if err := writeNonZero(ctx, wh, buf[:r], off); err != nil {
			return err
		}
		off += int64(r)
	}
	return nil
}

// writeNonZero writes p at off, skipping every page-sized block of zeros:
// they read back as zeros from the hole the truncate left.
func writeNonZero(ctx context.Context, h vfs.Handle, p []byte, off int64) error {
	const block = 4096
	for start := 0; start < len(p); {
		end := min(start+block, len(p))
		if bytes.Count(p[start:end], []byte{0}) == end-start {
			start = end
			continue
		}
		// Extend the run over following non-zero blocks: one write each.
		for end < len(p) {
			next := min(end+block, len(p))
			if bytes.Count(p[end:next], []byte{0}) == next-end {
				break
			}
			end = next
		}
		w, err := h.WriteAt(ctx, p[start:end], off+int64(start))
		if err != nil {
			return lerr(err)
		}
		if w != end-start {
			return errno.EIO
		}
		start = end
	}
	return nil
}

// copyUpTree copies dir and everything beneath it that comes from a lower
// layer into the upper layer, so the upper copy alone holds the whole
// merged subtree. fs.mu must be held for writing; on error the caller
// rolls t back.
func (fs *FS) copyUpTree(ctx context.Context, t *txn, dir *node) error {
	stack := []*node{dir}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := fs.copyUp(ctx, t, d, -1); err != nil {
			return err
		}
		if len(d.lowers) == 0 {
			// Made in the upper layer: nothing beneath comes from below.
			continue
		}
		var names []string
		if err := fs.eachEntry(ctx, d, func(e vfs.Dirent) bool {
			names = append(names, e.Name)
			return true
		}); err != nil {
			return err
		}
		for _, name := range names {
			c, err := d.lookup(ctx, name)
			if err != nil {
				return err
			}
			switch {
			case c.typ == vfs.TypeDir:
				stack = append(stack, c)
			case c.upper == nil:
				if err := fs.copyUp(ctx, t, c, -1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dropLowers detaches dir's cached subtree from the lower layers once it
// lives wholly in the upper layer. fs.mu must be held for writing.
func dropLowers(dir *node) {
	stack := []*node{dir}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(d.lowers) == 0 {
			continue
		}
		d.lowers = nil
		d.cmu.Lock()
		for _, c := range d.children {
			if c.typ == vfs.TypeDir {
				stack = append(stack, c)
			}
		}
		d.cmu.Unlock()
	}
}
