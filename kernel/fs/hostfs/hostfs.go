// Package hostfs is a vfs.FileSystem backed by a directory of the host,
// mounted into a VM read-only or read-write. It is the one place guest code
// touches the host disk, so it is written to stay beneath its root whatever
// the guest does and whatever host processes do to the tree meanwhile.
//
// Confinement rests on four rules, each enforced by the host kernel rather
// than by string checks:
//
//   - The root directory is opened once (O_PATH|O_DIRECTORY) and every
//     host call is relative to that descriptor; no absolute host path is
//     ever formed after New.
//   - A directory is reached with openat2(RESOLVE_BENEATH|
//     RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV), so the
//     host kernel refuses "..", symlinks and mount crossings atomically,
//     even while the tree is being changed. On kernels without openat2 an
//     equivalent walk opens one component at a time with
//     openat(O_PATH|O_NOFOLLOW) and rejects symlinks, non-directories and
//     other devices on every step.
//   - The final component is only ever used with calls that do not follow
//     a symlink (AT_SYMLINK_NOFOLLOW, O_NOFOLLOW, or calls that never
//     follow, such as unlinkat and renameat). This matters because hostfs
//     creates real host symlinks with guest-chosen targets: a following
//     call on one would act on the host's namespace. Symlinks are resolved
//     by the VFS, in the guest's namespace, through Readlink. (Host tools
//     follow them too, later: so unless the mount allows it, a guest's
//     symlink may not point outside the mount; see links.go.)
//   - Only regular files are ever opened for data. The type is checked on
//     the path first, the file is opened with O_NONBLOCK|O_NOFOLLOW (so a
//     FIFO swapped in meanwhile cannot block), and the opened descriptor is
//     checked again; FIFOs, sockets and devices are refused with ENXIO.
//
// Ownership is virtual. Guest uids mean nothing on the host, and a real
// chown would hand host files to whatever host account a guest named (or,
// for a root host process, let a guest plant setuid-root binaries). So
// hostfs never chowns host files and never sets setuid or setgid on them;
// the guest-visible owner, group and those two bits live in an in-memory
// table keyed by host inode (see ownerTable), and files the guest never
// touched belong to Options.UID and Options.GID. The host's own uids are
// never shown. Host permission checks still apply underneath the guest's:
// the host process can only do what its own credentials allow.
//
// Inodes hold a relative path, not a descriptor, so a guest holding many
// costs no host resources; open handles hold one descriptor each, and
// fstat-like calls on an open file use it, so an open file stays usable
// after it is renamed or unlinked, as on Linux.
//
// Errors are the host's errno values, which are Linux's, converted to
// errno.Errno; no host path or host error text ever reaches the guest.
// Nor do the host disk's size and free space: Statfs is synthetic, and a
// writable mount can carry a byte quota (Options.MaxBytes, quota.go).
package hostfs

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// DefaultMaxFileSize is the file size limit used when Options.MaxFileSize is
// zero, the same as memfs's.
const DefaultMaxFileSize = 1 << 40

// Options configure a host directory filesystem.
type Options struct {
	// ReadOnly makes every mutation fail with EROFS, and opening a file for
	// writing too, whatever the host would allow.
	ReadOnly bool
	// UID and GID are the owner reported to the guest for every file. The
	// host's own uids are never shown.
	UID, GID uint32
	// MaxFileSize bounds the size a guest can give a file by writing or
	// truncating (EFBIG beyond it); zero means DefaultMaxFileSize. Files the
	// host made larger stay readable.
	MaxFileSize int64
	// MaxOwners bounds the entries of the virtual ownership table (files
	// whose guest-visible owner, group, setuid or setgid differ from the
	// defaults); zero means DefaultMaxOwners. Beyond it, creating a file
	// as another owner, chown and chmod u+s fail with ENOSPC.
	MaxOwners int
	// MaxBytes is a byte quota on what the guest adds to the mount: the
	// net growth of apparent file sizes (a sparse file counts at its full
	// length), directories and symlinks since the mount was made (see
	// quota). Writes and truncates beyond it fail with ENOSPC; zero means
	// no quota. Statfs reports it as the mount's size.
	MaxBytes int64
	// AllowExternalSymlinks lets the guest create symlinks whose target
	// is absolute or leaves the mount. Without it such a symlink is
	// refused (EPERM), and renames or hard links that would move a
	// relative symlink to where it leaves the mount fail with EXDEV (mv
	// then copies, re-creating links under the rule): host tools that
	// follow links in the directory later must not be sent outside it.
	AllowExternalSymlinks bool
	// Logger receives diagnostics (such as the openat2 fallback being in
	// use); nil discards them.
	Logger *slog.Logger
}

// FS is a host directory mounted as a filesystem. Its methods, and those of
// its inodes and handles, are safe for concurrent use.
type FS struct {
	opts    Options
	maxSize int64
	seed    maphash.Seed // keys readdir cookies in hashed mode
	owners  *ownerTable
	quota   *quota

	rootFD  int
	rootDev uint64 // st_dev of the root, for the fallback walk's XDEV check
	// roots are the root's host path as given and as resolved: symlink
	// targets that name them are turned relative (see Readlink), never
	// shown to the guest.
	roots []string

	// mu guards closed: every operation that uses rootFD holds it for
	// reading, so Release cannot close the descriptor (whose number the
	// process could then reuse for something else) under a running call.
	mu     sync.RWMutex
	closed bool

	q quirks
}

// quirks select code paths that depend on the host kernel and filesystem.
// New detects them; tests set them to exercise every path on one machine.
type quirks struct {
	noOpenat2     bool // walk component by component instead of openat2
	noFchmodat2   bool // chmod through a reopened descriptor
	noRWFAppend   bool // append by toggling O_APPEND instead of RWF_APPEND
	hashedReaddir bool // readdir cookies from name hashes, not d_off
}

var _ vfs.FileSystem = (*FS)(nil)

// New opens root, a host directory, as a filesystem. root is trusted host
// configuration: it is resolved once, with symlinks followed, and from then
// on the filesystem is confined to the directory it named. The caller
// should Release the FS when it is no longer mounted.
func New(root string, opts Options) (*FS, error) {
	if root == "" {
		return nil, fmt.Errorf("hostfs: empty root: %w", errno.EINVAL)
	}
	if opts.MaxFileSize < 0 || opts.MaxOwners < 0 || opts.MaxBytes < 0 {
		return nil, fmt.Errorf("hostfs: negative limit: %w", errno.EINVAL)
	}
	fd, err := openRetry(unix.AT_FDCWD, root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("hostfs: open root: %w", hostErr(err))
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("hostfs: stat root: %w", hostErr(err))
	}
	fs := &FS{
		opts:    opts,
		maxSize: opts.MaxFileSize,
		seed:    maphash.MakeSeed(),
		rootFD:  fd,
		rootDev: st.Dev,
		roots:   hostRoots(root, fd),
		quota:   newQuota(opts.MaxBytes),
	}
	if fs.maxSize == 0 {
		fs.maxSize = DefaultMaxFileSize
	}
	maxOwners := opts.MaxOwners
	if maxOwners == 0 {
		maxOwners = DefaultMaxOwners
	}
	fs.owners = newOwnerTable(owner{uid: opts.UID, gid: opts.GID}, maxOwners)
	fs.q.noOpenat2 = !probeOpenat2(fd)
	fs.q.hashedReaddir = !stableDirOffsets(fd)
	if opts.Logger != nil {
		opts.Logger.Debug("hostfs: mounted host directory",
			"openat2", !fs.q.noOpenat2, "hashedReaddir", fs.q.hashedReaddir, "readOnly", opts.ReadOnly)
	}
	return fs, nil
}

// Root returns the root directory inode.
func (fs *FS) Root(context.Context) (vfs.Inode, error) {
	if err := fs.enter(); err != nil {
		return nil, err
	}
	defer fs.exit()
	return &inode{fs: fs, path: "", typ: vfs.TypeDir}, nil
}

// ReadOnly reports whether the filesystem was mounted read-only.
func (fs *FS) ReadOnly() bool { return fs.opts.ReadOnly }

// Release closes the root directory. Operations still in flight finish
// first; later ones fail with EBADF. Handles already open keep working
// until closed, as files of an unmounted filesystem do on Linux.
func (fs *FS) Release() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return errno.EBADF
	}
	fs.closed = true
	return hostErr(unix.Close(fs.rootFD))
}

// enter starts an operation that uses rootFD; exit must follow if it
// succeeds.
func (fs *FS) enter() error {
	fs.mu.RLock()
	if fs.closed {
		fs.mu.RUnlock()
		return errno.EBADF
	}
	return nil
}

func (fs *FS) exit() { fs.mu.RUnlock() }

// probeOpenat2 reports whether openat2 with the resolve flags works. Old
// kernels answer ENOSYS, and some seccomp profiles EPERM.
func probeOpenat2(rootFD int) bool {
	fd, err := unix.Openat2(rootFD, ".", &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: resolveFlags,
	})
	if err != nil {
		return false
	}
	_ = unix.Close(fd)
	return true
}
