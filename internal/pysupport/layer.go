package pysupport

import (
	"context"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// layerFS is the read-only support layer: a few directories, the support
// files, and the spawn device.
type layerFS struct {
	root *node
}

// node is a directory, a regular file or a device of the layer.
type node struct {
	vfs.Unsupported
	ino  uint64
	mode uint32
	data []byte
	// Devices: their number and what an open of them returns.
	rdev uint64
	open func() vfs.Handle
	// Directories: children by name and their names in order.
	children map[string]*node
	names    []string
}

var epoch = time.Unix(0, 0).UTC()

// device is a character device of the layer.
type device struct {
	rdev uint64
	open func() vfs.Handle
}

// newLayer builds the tree: each file at its path, each command (an
// executable file) at its path, and each device.
func newLayer(files, commands map[string][]byte, devices map[string]device) *layerFS {
	var ino uint64
	mk := func(mode uint32) *node {
		ino++
		n := &node{ino: ino, mode: mode}
		if mode&vfs.S_IFMT == vfs.S_IFDIR {
			n.children = map[string]*node{}
		}
		return n
	}
	fs := &layerFS{root: mk(vfs.S_IFDIR | 0o755)}
	add := func(p string, leaf *node) {
		dir := fs.root
		parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
		for _, name := range parts[:len(parts)-1] {
			next := dir.children[name]
			if next == nil {
				next = mk(vfs.S_IFDIR | 0o755)
				dir.children[name] = next
				dir.names = append(dir.names, name)
			}
			dir = next
		}
		last := parts[len(parts)-1]
		dir.children[last] = leaf
		dir.names = append(dir.names, last)
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		f := mk(vfs.S_IFREG | 0o644)
		f.data = files[p]
		add(p, f)
	}
	for _, p := range slices.Sorted(maps.Keys(commands)) {
		f := mk(vfs.S_IFREG | 0o755)
		f.data = commands[p]
		add(p, f)
	}
	for _, p := range slices.Sorted(maps.Keys(devices)) {
		d := mk(vfs.S_IFCHR | 0o666)
		d.rdev, d.open = devices[p].rdev, devices[p].open
		add(p, d)
	}
	return fs
}

func (fs *layerFS) Root(context.Context) (vfs.Inode, error) { return fs.root, nil }
func (fs *layerFS) Statfs(context.Context) (vfs.Statfs, error) {
	return vfs.Statfs{BlockSize: 4096, NameMax: vfs.NameMax}, nil
}
func (fs *layerFS) ReadOnly() bool { return true }
func (fs *layerFS) Release() error { return nil }

// FileType reports the node's type without a Stat.
func (n *node) FileType() vfs.FileType { return vfs.TypeOf(n.mode) }

func (n *node) Stat(context.Context) (vfs.Stat, error) {
	st := vfs.Stat{Ino: n.ino, Mode: n.mode, Nlink: 1, Size: int64(len(n.data)), Blksize: 4096,
		Blocks: (int64(len(n.data)) + 511) / 512, Atime: epoch, Mtime: epoch, Ctime: epoch}
	if n.children != nil {
		st.Nlink = 2
	}
	if n.FileType() == vfs.TypeCharDev {
		st.Rdev = n.rdev
	}
	return st, nil
}

func (n *node) SetAttr(context.Context, vfs.SetAttr) error { return errno.EROFS }

func (n *node) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	if n.children == nil {
		return nil, errno.ENOTDIR
	}
	if c := n.children[name]; c != nil {
		return c, nil
	}
	return nil, errno.ENOENT
}

func (n *node) ReadDir(_ context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if n.children == nil {
		return nil, errno.ENOTDIR
	}
	var out []vfs.Dirent
	for i := int(min(cookie, uint64(len(n.names)))); i < len(n.names) && len(out) < max; i++ {
		c := n.children[n.names[i]]
		out = append(out, vfs.Dirent{Name: n.names[i], Ino: c.ino, Type: c.FileType(), Next: uint64(i + 1)})
	}
	return out, nil
}

func (n *node) Open(_ context.Context, flags vfs.OpenFlags) (vfs.Handle, error) {
	switch n.FileType() {
	case vfs.TypeCharDev:
		return n.open(), nil
	case vfs.TypeRegular:
		if flags.Writable() || flags&vfs.O_TRUNC != 0 {
			return nil, errno.EROFS
		}
		return fileHandle{n.data}, nil
	}
	return nil, errno.EISDIR
}

func (n *node) Create(context.Context, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (n *node) Mkdir(context.Context, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (n *node) Symlink(context.Context, string, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (n *node) Link(context.Context, string, vfs.Inode) error           { return errno.EROFS }
func (n *node) Unlink(context.Context, string) error                    { return errno.EROFS }
func (n *node) Rmdir(context.Context, string) error                     { return errno.EROFS }
func (n *node) Rename(context.Context, string, vfs.Inode, string) error { return errno.EROFS }

// fileHandle reads a support file.
type fileHandle struct{ b []byte }

func (h fileHandle) ReadAt(_ context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if off >= int64(len(h.b)) {
		return 0, nil
	}
	return copy(p, h.b[off:]), nil
}
func (fileHandle) WriteAt(context.Context, []byte, int64) (int, error) { return 0, errno.EBADF }
func (fileHandle) Append(context.Context, []byte) (int, int64, error)  { return 0, 0, errno.EBADF }
func (fileHandle) Sync(context.Context) error                          { return nil }
func (fileHandle) Close() error                                        { return nil }
