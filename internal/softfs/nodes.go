package softfs

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software/aospkg"
)

// readerHandle reads a command module straight from its package container
// or its cached module file (closed with the handle).
type readerHandle struct {
	r      io.ReaderAt
	size   int64
	closer io.Closer
}

func (h *readerHandle) ReadAt(_ context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if off >= h.size {
		return 0, nil
	}
	if rest := h.size - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := h.r.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		// Host error text never reaches the guest.
		return n, errno.EIO
	}
	return n, nil
}

func (h *readerHandle) WriteAt(context.Context, []byte, int64) (int, error) { return 0, errno.EBADF }
func (h *readerHandle) Append(context.Context, []byte) (int, int64, error) {
	return 0, 0, errno.EBADF
}
func (h *readerHandle) Sync(context.Context) error { return nil }
func (h *readerHandle) Close() error {
	if h.closer != nil {
		return h.closer.Close()
	}
	return nil
}

// bytesHandle reads a module held in memory.
type bytesHandle struct{ b []byte }

func (h *bytesHandle) ReadAt(_ context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if off >= int64(len(h.b)) {
		return 0, nil
	}
	return copy(p, h.b[off:]), nil
}

func (h *bytesHandle) WriteAt(context.Context, []byte, int64) (int, error) { return 0, errno.EBADF }
func (h *bytesHandle) Append(context.Context, []byte) (int, int64, error) {
	return 0, 0, errno.EBADF
}
func (h *bytesHandle) Sync(context.Context) error { return nil }
func (h *bytesHandle) Close() error               { return nil }

// pkgNode is an entry of a package's mount archive, grafted into the tree
// by provides.files. Directories list the container index; files read the
// container; symlinks return their index target.
type pkgNode struct {
	vfs.Unsupported
	pkg   *aospkg.Package
	entry aospkg.Entry
	// base is the inode number range of this graft.
	base uint64
}

func (n *pkgNode) FileType() vfs.FileType {
	switch n.entry.Kind {
	case aospkg.KindDir:
		return vfs.TypeDir
	case aospkg.KindSymlink:
		return vfs.TypeSymlink
	}
	return vfs.TypeRegular
}

// ino numbers an entry by a 32-bit hash of its path within the graft's
// range: stable, and computed without walking the index.
func (n *pkgNode) ino() uint64 {
	h := fnv.New32a()
	h.Write([]byte(n.entry.Path))
	return n.base + uint64(h.Sum32())
}

func (n *pkgNode) Stat(context.Context) (vfs.Stat, error) {
	e := n.entry
	t := time.Unix(e.Mtime, 0)
	st := vfs.Stat{
		Ino:     n.ino(),
		Mode:    uint32(n.FileType()) | e.Mode&vfs.ModePerm,
		Nlink:   1,
		UID:     e.UID,
		GID:     e.GID,
		Size:    int64(e.Size),
		Blksize: 4096,
		Blocks:  (int64(e.Size) + 511) / 512,
		Atime:   t,
		Mtime:   t,
		Ctime:   t,
	}
	switch e.Kind {
	case aospkg.KindDir:
		st.Nlink = 2
		st.Size = 4096
	case aospkg.KindSymlink:
		st.Size = int64(len(e.LinkTarget))
	}
	return st, nil
}

func (n *pkgNode) SetAttr(context.Context, vfs.SetAttr) error { return errno.EROFS }

func (n *pkgNode) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	if n.entry.Kind != aospkg.KindDir {
		return nil, errno.ENOTDIR
	}
	p := n.entry.Path + "/" + name
	if n.entry.Path == "/" {
		p = "/" + name
	}
	e, ok := n.pkg.Lookup(p)
	if !ok {
		return nil, errno.ENOENT
	}
	return &pkgNode{pkg: n.pkg, entry: e, base: n.base}, nil
}

func (n *pkgNode) ReadDir(ctx context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if n.entry.Kind != aospkg.KindDir {
		return nil, errno.ENOTDIR
	}
	ents, err := n.pkg.ReadDir(n.entry.Path)
	if err != nil {
		return nil, errno.EIO
	}
	var out []vfs.Dirent
	for i := int(min(cookie, uint64(len(ents)))); i < len(ents) && len(out) < max; i++ {
		c := &pkgNode{pkg: n.pkg, entry: ents[i], base: n.base}
		name := ents[i].Path[len(ents[i].Path)-len(baseName(ents[i].Path)):]
		out = append(out, vfs.Dirent{Name: name, Ino: c.ino(), Type: c.FileType(), Next: uint64(i) + 1})
	}
	return out, nil
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

func (n *pkgNode) Readlink(context.Context) (string, error) {
	if n.entry.Kind != aospkg.KindSymlink {
		return "", errno.EINVAL
	}
	return n.entry.LinkTarget, nil
}

func (n *pkgNode) Open(_ context.Context, flags vfs.OpenFlags) (vfs.Handle, error) {
	switch {
	case n.entry.Kind == aospkg.KindDir:
		return nil, errno.EISDIR
	case flags.Writable() || flags&vfs.O_TRUNC != 0:
		return nil, errno.EROFS
	}
	sr, err := n.pkg.Open(n.entry.Path)
	if err != nil {
		return nil, errno.EIO
	}
	return &readerHandle{r: sr, size: sr.Size()}, nil
}

func (n *pkgNode) Create(context.Context, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (n *pkgNode) Mkdir(context.Context, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (n *pkgNode) Symlink(context.Context, string, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (n *pkgNode) Link(context.Context, string, vfs.Inode) error           { return errno.EROFS }
func (n *pkgNode) Unlink(context.Context, string) error                    { return errno.EROFS }
func (n *pkgNode) Rmdir(context.Context, string) error                     { return errno.EROFS }
func (n *pkgNode) Rename(context.Context, string, vfs.Inode, string) error { return errno.EROFS }
