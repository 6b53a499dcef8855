// Package vfs is the virtual filesystem layer of the secexec kernel: path
// resolution, the mount table, permission checks and open file
// descriptions. It is written once; filesystems (memfs, hostfs, overlay,
// devfs, procfs) plug in beneath it through the FileSystem and Inode
// interfaces and only ever answer questions about one directory at a time.
//
// Resolution walks a path one component at a time from the VM's root,
// keeping the stack of directories it passed through. ".." pops that stack
// and can never go above the root; a symlink's target is spliced into the
// remaining components and resolved in the guest's namespace (never the
// host's), at most MaxSymlinks times; a mount point swaps in the mounted
// filesystem's root. Because backends never see a multi-component path,
// none of them can be tricked into walking outside itself.
//
// Every operation first resolves, then asks the Authorizer about the
// resolved guest path (so a symlink cannot launder a denied target), then
// applies POSIX discretionary access control for the caller's uid and gid,
// and only then calls the filesystem. Link and Rename also ask the
// MoveAuthorizer, so that a new name cannot lead around a rule on the old.
package vfs

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

// Op names a filesystem operation for the Authorizer. The names are the
// permission policy's fs operations.
type Op string

// Operations checked by the Authorizer.
const (
	OpRead     Op = "read"
	OpWrite    Op = "write"
	OpStat     Op = "stat"
	OpReaddir  Op = "readdir"
	OpMkdir    Op = "mkdir"
	OpRemove   Op = "remove"
	OpRename   Op = "rename"
	OpSymlink  Op = "symlink"
	OpLink     Op = "link"
	OpChmod    Op = "chmod"
	OpChown    Op = "chown"
	OpUtimes   Op = "utimes"
	OpTruncate Op = "truncate"
	OpMount    Op = "mount"
)

// Authorizer decides whether op on the resolved absolute guest path is
// allowed. It returns nil or an error that wraps errno.EACCES.
type Authorizer func(ctx context.Context, op Op, path string) error

// MoveAuthorizer decides whether the object at from, a resolved absolute
// guest path, may also (op OpLink) or instead (op OpRename) be named to.
// Rules protect paths, so an object must not reach a name where the
// policy decides differently: "ln secret x" or "mv .git g" would walk
// around a rule on the old name. tree is set when from is a directory,
// whose whole subtree gets new names. It returns nil or an error that
// wraps errno.EACCES.
type MoveAuthorizer func(ctx context.Context, op Op, from, to string, tree bool) error

// SpecialOpener opens inodes the VFS cannot serve itself: named FIFOs and
// sockets. The kernel supplies it because pipes live there.
type SpecialOpener func(ctx context.Context, ino Inode, st Stat, path string, flags OpenFlags) (File, error)

// Options configure a VFS.
type Options struct {
	// Authorize is consulted for every operation; nil allows everything
	// (for trusted, host-side use only).
	Authorize Authorizer
	// AuthorizeMove is consulted for every link and rename after
	// Authorize; nil allows them all. A VFS with a path policy needs
	// both, or links and renames lead around its rules.
	AuthorizeMove MoveAuthorizer
	// OpenSpecial serves FIFOs and sockets; nil makes opening them ENXIO.
	OpenSpecial SpecialOpener
	// Now is the VM's clock, for the times of the files the VFS makes
	// itself (watch sets); nil means time.Now.
	Now func() time.Time
}

// Caller is who performs an operation and from where: the credentials,
// the working directory that relative paths start from, and the umask.
type Caller struct {
	UID    uint32
	GID    uint32
	Groups []uint32
	// Cwd is an absolute guest path. Relative paths resolve from it; the
	// *at system calls pass the directory fd's path here.
	Cwd string
	// Umask is applied to the mode of files and directories created.
	Umask uint32
	// Owner, if set, owns what the caller creates instead of UID and GID.
	// The host acting as root makes the guest user's files this way, in
	// the one walk that creates them: a chown after the fact would look
	// the name up again, and a guest could have swapped a directory on
	// the way for a symlink to a file of root's by then.
	Owner *Owner
}

// Owner is the user and group of a new file.
type Owner struct {
	UID, GID uint32
}

// owner returns the ids a file the caller creates gets.
func (c *Caller) owner() (uid, gid uint32) {
	if c.Owner != nil {
		return c.Owner.UID, c.Owner.GID
	}
	return c.UID, c.GID
}

// Root is a Caller with uid 0 at "/", for host-side setup of a VM.
var Root = &Caller{Cwd: "/", Umask: 0o022}

// Mount is one entry of the mount table.
type Mount struct {
	// Path is the canonical absolute guest path of the mount point.
	Path string
	// FS is the mounted filesystem.
	FS FileSystem
	// Dev is the device number reported in Stat.Dev for its inodes.
	Dev uint64
	// ReadOnly is the mount flag; it holds even if FS is writable.
	ReadOnly bool

	root Inode
}

// VFS is one VM's filesystem namespace.
type VFS struct {
	opts Options

	mu      sync.RWMutex
	mounts  map[string]*Mount // by canonical mount point path
	nextDev atomic.Uint64

	watch notifier // fs watches (notify.go)
}

// MountOptions are the flags of a mount.
type MountOptions struct {
	ReadOnly bool
}

// New returns a VFS whose root is rootFS.
func New(ctx context.Context, rootFS FileSystem, opts Options) (*VFS, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	v := &VFS{opts: opts, mounts: make(map[string]*Mount)}
	root, err := rootFS.Root(ctx)
	if err != nil {
		return nil, err
	}
	v.mounts["/"] = &Mount{Path: "/", FS: rootFS, root: root, Dev: v.nextDev.Add(1), ReadOnly: rootFS.ReadOnly()}
	return v, nil
}

// Mount mounts fs at target, which must resolve to an existing directory.
// Mounting over an existing mount point fails with EBUSY.
func (v *VFS) Mount(ctx context.Context, c *Caller, target string, fs FileSystem, opts MountOptions) error {
	r, err := v.resolve(ctx, c, target, true)
	if err != nil {
		return errno.Path("mount", target, err)
	}
	if r.node.ino == nil {
		return errno.Path("mount", target, errno.ENOENT)
	}
	p := r.node.path
	if err := v.authorize(ctx, OpMount, p); err != nil {
		return err
	}
	if c.UID != 0 {
		return errno.Path("mount", target, errno.EPERM)
	}
	if t, err := inodeType(ctx, r.node.ino); err != nil {
		return errno.Path("mount", target, err)
	} else if t != TypeDir {
		return errno.Path("mount", target, errno.ENOTDIR)
	}
	root, err := fs.Root(ctx)
	if err != nil {
		return errno.Path("mount", target, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.mounts[p]; ok {
		return errno.Path("mount", target, errno.EBUSY)
	}
	v.mounts[p] = &Mount{Path: p, FS: fs, root: root, Dev: v.nextDev.Add(1), ReadOnly: opts.ReadOnly || fs.ReadOnly()}
	return nil
}

// Unmount removes the mount at target and releases its filesystem. It
// fails with EBUSY if another mount lies beneath it, and EINVAL if target
// is not a mount point. Files still open on it keep working until closed.
func (v *VFS) Unmount(ctx context.Context, c *Caller, target string) error {
	p, err := v.Realpath(ctx, c, target)
	if err != nil {
		return errno.Path("umount", target, err)
	}
	if err := v.authorize(ctx, OpMount, p); err != nil {
		return err
	}
	if c.UID != 0 {
		return errno.Path("umount", target, errno.EPERM)
	}
	v.mu.Lock()
	m, ok := v.mounts[p]
	if !ok || p == "/" {
		v.mu.Unlock()
		if p == "/" {
			return errno.Path("umount", target, errno.EBUSY)
		}
		return errno.Path("umount", target, errno.EINVAL)
	}
	for q := range v.mounts {
		if strings.HasPrefix(q, p+"/") {
			v.mu.Unlock()
			return errno.Path("umount", target, errno.EBUSY)
		}
	}
	delete(v.mounts, p)
	v.mu.Unlock()
	return m.FS.Release()
}

// Mounts returns the mount table sorted by path.
func (v *VFS) Mounts() []Mount {
	v.mu.RLock()
	out := make([]Mount, 0, len(v.mounts))
	for _, m := range v.mounts {
		out = append(out, *m)
	}
	v.mu.RUnlock()
	sortMounts(out)
	return out
}

func sortMounts(ms []Mount) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].Path < ms[j-1].Path; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func (v *VFS) mountAt(path string) *Mount {
	v.mu.RLock()
	m := v.mounts[path]
	v.mu.RUnlock()
	return m
}

func (v *VFS) rootMount() *Mount { return v.mountAt("/") }

func (v *VFS) authorize(ctx context.Context, op Op, path string) error {
	if v.opts.Authorize == nil {
		return nil
	}
	return v.opts.Authorize(ctx, op, path)
}

func (v *VFS) authorizeMove(ctx context.Context, op Op, from, to string, tree bool) error {
	if v.opts.AuthorizeMove == nil {
		return nil
	}
	return v.opts.AuthorizeMove(ctx, op, from, to, tree)
}
