package overlay

import (
	"context"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// ReadDir lists the merged directory: the upper layer's entries, then each
// lower layer's entries that no higher layer has or whites out. The cookie
// is (layer index << 56 | that layer's cookie); see the package doc.
func (n *node) ReadDir(ctx context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if n.typ != vfs.TypeDir {
		return nil, errno.ENOTDIR
	}
	if max <= 0 {
		return nil, errno.EINVAL
	}
	n.fs.mu.RLock()
	defer n.fs.mu.RUnlock()
	if n.dead {
		// A removed directory lists as empty, as on Linux.
		return nil, nil
	}
	return n.fs.readDir(ctx, n, cookie, max)
}

// readDir is ReadDir with fs.mu held.
func (fs *FS) readDir(ctx context.Context, dir *node, cookie uint64, max int) ([]vfs.Dirent, error) {
	layers := dir.layers()
	// Resume in the layer the cookie names, or at the start of the next
	// layer present if that one is gone: cookies stay meaningful when a
	// copy-up adds the upper layer in front.
	want, c := int(cookie>>cookieShift), cookie&cookieMask
	pos := 0
	for pos < len(layers) && layers[pos].layer < want {
		pos++
	}
	if pos < len(layers) && layers[pos].layer > want {
		c = 0
	}
	var out []vfs.Dirent
	for pos < len(layers) && len(out) < max {
		if ctx.Err() != nil {
			return nil, errno.EINTR
		}
		ents, err := layers[pos].ino.ReadDir(ctx, c, max-len(out))
		if err != nil {
			return nil, lerr(err)
		}
		if len(ents) == 0 {
			pos, c = pos+1, 0
			continue
		}
		if ents[len(ents)-1].Next == c {
			// A layer whose cookies do not advance would loop forever.
			return nil, errno.EIO
		}
		for _, e := range ents {
			if e.Next > cookieMask {
				return nil, errno.EOVERFLOW
			}
			c = e.Next
			ino, ok, err := fs.emits(ctx, layers, pos, e)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			out = append(out, vfs.Dirent{
				Name: e.Name,
				Ino:  ino,
				Type: e.Type,
				Next: uint64(layers[pos].layer)<<cookieShift | e.Next,
			})
			if len(out) == max {
				break
			}
		}
	}
	return out, nil
}

// emits decides whether entry e of layers[pos] is listed at that position
// and with which overlay inode number. Every visible name is listed at
// exactly one position: that of the layer it is found in, except that an
// upper entry that is a copy-up of the lower entry of the same name in
// this directory is listed at the lower entry's position, so a copy-up
// during a listing neither hides nor repeats it.
func (fs *FS) emits(ctx context.Context, layers []layerInode, pos int, e vfs.Dirent) (uint64, bool, error) {
	if isHidden(e.Name) {
		return 0, false, nil
	}
	d := layers[pos]
	if d.layer == 0 {
		if org, ok := fs.originOf(e.Ino); ok {
			in, err := inPlace(ctx, layers, e.Name, org)
			if err != nil || in {
				return 0, false, err
			}
		}
		return fs.inoFor(objKey{0, e.Ino}), true, nil
	}
	for j := 0; j < pos; j++ {
		child, err := layers[j].ino.Lookup(ctx, e.Name)
		if err == nil {
			if layers[j].layer != 0 {
				return 0, false, nil
			}
			st, err := child.Stat(ctx)
			if err != nil {
				return 0, false, lerr(err)
			}
			if org, ok := fs.originOf(st.Ino); ok && org == (objKey{d.layer, e.Ino}) {
				return fs.inoFor(objKey{0, st.Ino}), true, nil
			}
			return 0, false, nil
		}
		if !isNotExist(err) {
			return 0, false, lerr(err)
		}
		if wh, err := hasWhiteout(ctx, layers[j].ino, e.Name); err != nil || wh {
			return 0, false, err
		}
	}
	return fs.inoFor(objKey{d.layer, e.Ino}), true, nil
}

// inPlace reports whether an upper entry called name, copied up from org,
// is a copy of the entry called name that layer org.layer of this
// directory holds.
func inPlace(ctx context.Context, layers []layerInode, name string, org objKey) (bool, error) {
	for _, l := range layers[1:] {
		if l.layer != org.layer {
			continue
		}
		child, err := l.ino.Lookup(ctx, name)
		if err != nil {
			if isNotExist(err) {
				return false, nil
			}
			return false, lerr(err)
		}
		st, err := child.Stat(ctx)
		if err != nil {
			return false, lerr(err)
		}
		return st.Ino == org.ino, nil
	}
	return false, nil
}

// eachEntry calls fn for every entry of the merged directory. fs.mu must be
// held. It stops early when fn returns false.
func (fs *FS) eachEntry(ctx context.Context, dir *node, fn func(vfs.Dirent) bool) error {
	var cookie uint64
	for {
		ents, err := fs.readDir(ctx, dir, cookie, listBatch)
		if err != nil || len(ents) == 0 {
			return err
		}
		for _, e := range ents {
			if !fn(e) {
				return nil
			}
		}
		cookie = ents[len(ents)-1].Next
	}
}

// countSubdirs returns the number of subdirectories of the merged
// directory, counting once and then keeping the count up to date. fs.mu
// must be held.
func (fs *FS) countSubdirs(ctx context.Context, dir *node) (int, error) {
	dir.cmu.Lock()
	k := dir.subdirs
	dir.cmu.Unlock()
	if k >= 0 {
		return k, nil
	}
	k = 0
	err := fs.eachEntry(ctx, dir, func(e vfs.Dirent) bool {
		if e.Type == vfs.TypeDir {
			k++
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	dir.cmu.Lock()
	dir.subdirs = k
	dir.cmu.Unlock()
	return k, nil
}

// mergedEmpty reports whether the directory has no entries in the merged
// view. fs.mu must be held.
func (fs *FS) mergedEmpty(ctx context.Context, dir *node) (bool, error) {
	ents, err := fs.readDir(ctx, dir, 0, 1)
	return len(ents) == 0, err
}

// clearMarkers removes the whiteouts and opaque marker from an upper
// directory that is empty in the merged view, so the upper layer can
// remove or replace it.
func clearMarkers(ctx context.Context, dir vfs.Inode) error {
	var (
		names  []string
		cookie uint64
	)
	for {
		ents, err := dir.ReadDir(ctx, cookie, listBatch)
		if err != nil {
			return lerr(err)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			if isHidden(e.Name) {
				names = append(names, e.Name)
			}
		}
		cookie = ents[len(ents)-1].Next
	}
	for _, name := range names {
		if err := dir.Unlink(ctx, name); err != nil && !isNotExist(err) {
			return lerr(err)
		}
	}
	return nil
}
