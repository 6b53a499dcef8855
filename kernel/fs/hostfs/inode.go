package hostfs

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// inode is a file of the host directory. It is light on purpose: a path
// relative to the root and the type seen when it was looked up, with no
// host descriptor held, so a guest holding many inodes holds no host
// resources. Every method resolves the path afresh beneath the root, so an
// inode whose file the host moved or removed fails with the host's errno
// (ENOENT, ENOTDIR, ELOOP) rather than reaching another file outside.
//
// An inode opened for I/O also remembers its open handles, so that fstat,
// fchmod, ftruncate and futimens on the open file (which the VFS sends to
// the inode it opened) act on the open host file even after it was
// renamed or unlinked, as they do on Linux.
type inode struct {
	fs   *FS
	path string
	typ  vfs.FileType

	hmu     sync.Mutex
	handles []*handle
}

var (
	_ vfs.Inode = (*inode)(nil)
	_ vfs.Typed = (*inode)(nil)
)

// FileType returns the type the inode had when it was looked up.
func (n *inode) FileType() vfs.FileType { return n.typ }

func (n *inode) child(name string, t vfs.FileType) *inode {
	return &inode{fs: n.fs, path: joinRel(n.path, name), typ: t}
}

// sameFS returns other as an inode of this filesystem, or EXDEV.
func (n *inode) sameFS(other vfs.Inode) (*inode, error) {
	o, ok := other.(*inode)
	if !ok || o.fs != n.fs {
		return nil, errno.EXDEV
	}
	return o, nil
}

// Stat returns the attributes of the file, with the virtual owner.
func (n *inode) Stat(context.Context) (vfs.Stat, error) {
	if h := n.liveHandle(false); h != nil {
		var st unix.Stat_t
		if err := h.fstat(&st); err == nil {
			return n.fs.toStat(&st), nil
		}
		// Closed meanwhile: fall back to the path.
	}
	if err := n.fs.enter(); err != nil {
		return vfs.Stat{}, err
	}
	defer n.fs.exit()
	d, name, err := n.fs.locate(n.path)
	if err != nil {
		return vfs.Stat{}, err
	}
	defer d.close()
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return vfs.Stat{}, hostErr(err)
	}
	return n.fs.toStat(&st), nil
}

// toStat converts a host stat, with the virtual owner, group, setuid and
// setgid bits in place of the host's.
func (fs *FS) toStat(st *unix.Stat_t) vfs.Stat {
	nlink := uint32(st.Nlink)
	if st.Nlink > uint64(^uint32(0)) {
		nlink = ^uint32(0)
	}
	o := fs.owners.get(keyOf(st))
	return vfs.Stat{
		Ino:     st.Ino,
		Mode:    st.Mode&^suidBits | o.suid,
		Nlink:   nlink,
		UID:     o.uid,
		GID:     o.gid,
		Rdev:    st.Rdev,
		Size:    st.Size,
		Blksize: int32(st.Blksize),
		Blocks:  st.Blocks,
		Atime:   time.Unix(st.Atim.Sec, st.Atim.Nsec),
		Mtime:   time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
		Ctime:   time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
	}
}

// hostPerm is the permission part of a guest mode as hostfs applies it on
// the host: setuid and setgid are dropped (nosuid), the sticky bit kept.
func hostPerm(mode uint32) uint32 { return mode & (0o777 | vfs.S_ISVTX) }

// SetAttr applies chown, chmod, truncate and utimes, in that order; the
// first failure stops the rest. Owner, group and the setuid and setgid
// bits change only in the ownership table (see ownerTable); the rest is
// applied to the host file without following a symlink, through an open
// handle of this inode if there is one.
func (n *inode) SetAttr(_ context.Context, attr vfs.SetAttr) error {
	if attr.Mask == 0 {
		return nil
	}
	if n.fs.opts.ReadOnly {
		return errno.EROFS
	}
	if attr.Mask&vfs.SetSize != 0 {
		if attr.Size < 0 {
			return errno.EINVAL
		}
		if attr.Size > n.fs.maxSize {
			return errno.EFBIG
		}
	}
	if h := n.liveHandle(attr.Mask&vfs.SetSize != 0); h != nil {
		err := h.setAttr(n.fs, attr)
		if err != errno.EBADF {
			return err
		}
		// Closed meanwhile: fall back to the path.
	}
	if err := n.fs.enter(); err != nil {
		return err
	}
	defer n.fs.exit()
	d, name, err := n.fs.locate(n.path)
	if err != nil {
		return err
	}
	defer d.close()
	return n.fs.applyAttr(pathAttr{fs: n.fs, dirfd: d.fd, name: name}, attr)
}

// attrTarget is the file SetAttr changes: a name in a directory, or an open
// descriptor. Neither follows a symlink.
type attrTarget interface {
	stat(st *unix.Stat_t) error
	chmod(mode uint32) error
	truncate(size int64) error
	utimes(ts []unix.Timespec) error
	// touch bumps ctime without changing anything else.
	touch()
}

// applyAttr is SetAttr on a target.
func (fs *FS) applyAttr(t attrTarget, attr vfs.SetAttr) error {
	var st unix.Stat_t
	if err := t.stat(&st); err != nil {
		return err
	}
	typ := st.Mode & unix.S_IFMT
	if attr.Mask&vfs.SetSize != 0 {
		switch typ {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			return errno.EISDIR
		default:
			return errno.EINVAL
		}
	}
	if attr.Mask&vfs.SetMode != 0 {
		switch typ {
		case unix.S_IFREG, unix.S_IFDIR:
		case unix.S_IFLNK:
			// As fchmodat(AT_SYMLINK_NOFOLLOW) answers on Linux.
			return errno.EOPNOTSUPP
		default:
			// FIFOs and the like only the host can have made; leave
			// them be.
			return errno.EPERM
		}
	}
	if attr.Mask&(vfs.SetUID|vfs.SetGID|vfs.SetMode) != 0 {
		err := fs.owners.update(keyOf(&st), func(o owner) owner {
			if attr.Mask&vfs.SetUID != 0 {
				o.uid = attr.UID
			}
			if attr.Mask&vfs.SetGID != 0 {
				o.gid = attr.GID
			}
			if attr.Mask&(vfs.SetUID|vfs.SetGID) != 0 && typ != unix.S_IFDIR {
				// chown clears setuid, and setgid with group exec, of
				// non-directories, as Linux does even for root.
				o.suid &^= vfs.S_ISUID
				if st.Mode&0o010 != 0 {
					o.suid &^= vfs.S_ISGID
				}
			}
			if attr.Mask&vfs.SetMode != 0 {
				o.suid = attr.Mode & suidBits
			}
			return o
		})
		if err != nil {
			return err
		}
	}
	changed := false
	if attr.Mask&vfs.SetMode != 0 {
		if err := t.chmod(hostPerm(attr.Mode)); err != nil {
			return err
		}
		changed = true
	}
	if attr.Mask&vfs.SetSize != 0 {
		err := fs.quota.grow(t.stat, func(size, room int64) error {
			if room >= 0 && attr.Size > size && attr.Size-size > room {
				// Apparent size counts: a sparse 1 TiB file is 1 TiB.
				return errno.ENOSPC
			}
			return t.truncate(attr.Size)
		})
		if err != nil {
			return err
		}
		changed = true
	}
	if attr.Mask&(vfs.SetAtime|vfs.SetMtime) != 0 {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if attr.Mask&vfs.SetAtime != 0 {
			ts[0] = timespec(attr.Atime)
		}
		if attr.Mask&vfs.SetMtime != 0 {
			ts[1] = timespec(attr.Mtime)
		}
		if err := t.utimes(ts); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		// Only ownership or SetCtime: the host file itself did not
		// change, but its ctime should, as a chown's does on Linux.
		t.touch()
	}
	return nil
}

// pathAttr is an attrTarget named by a directory and a name.
type pathAttr struct {
	fs    *FS
	dirfd int
	name  string
}

func (p pathAttr) stat(st *unix.Stat_t) error {
	return hostErr(unix.Fstatat(p.dirfd, p.name, st, unix.AT_SYMLINK_NOFOLLOW))
}

func (p pathAttr) chmod(mode uint32) error { return p.fs.chmodAt(p.dirfd, p.name, mode) }

func (p pathAttr) truncate(size int64) error { return p.fs.truncateAt(p.dirfd, p.name, size) }

func (p pathAttr) utimes(ts []unix.Timespec) error {
	return hostErr(unix.UtimesNanoAt(p.dirfd, p.name, ts, unix.AT_SYMLINK_NOFOLLOW))
}

// touch uses chown(-1, -1), which changes nothing but ctime. Best effort:
// ctime is not worth failing a call for.
func (p pathAttr) touch() { _ = unix.Fchownat(p.dirfd, p.name, -1, -1, unix.AT_SYMLINK_NOFOLLOW) }

// timespec converts a time without UnixNano's 1678..2262 range limit.
func timespec(t time.Time) unix.Timespec {
	return unix.Timespec{Sec: t.Unix(), Nsec: int64(t.Nanosecond())}
}

// chmodAt changes the mode of dirfd/name without following a symlink. Linux
// fchmodat ignores AT_SYMLINK_NOFOLLOW, so the file is first pinned with an
// O_PATH|O_NOFOLLOW descriptor, checked not to be a symlink, and changed
// through that descriptor with fchmodat2(AT_EMPTY_PATH) (Linux 6.6), or on
// older kernels through a real descriptor reopened from it.
func (fs *FS) chmodAt(dirfd int, name string, mode uint32) error {
	pfd, err := openRetry(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return hostErr(err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return hostErr(err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		// As fchmodat(AT_SYMLINK_NOFOLLOW) answers on Linux.
		return errno.EOPNOTSUPP
	case unix.S_IFDIR, unix.S_IFREG:
	default:
		// FIFOs and the like only the host can have made; leave them be.
		return errno.EPERM
	}
	if !fs.q.noFchmodat2 {
		err := unix.Fchmodat(pfd, "", mode, unix.AT_EMPTY_PATH)
		// x/sys reports a missing fchmodat2 as EOPNOTSUPP; on a
		// non-symlink that can mean nothing else.
		if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
			return hostErr(err)
		}
	}
	var fd int
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		// "." relative to the pinned directory is that directory.
		fd, err = openRetry(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return hostErr(err)
		}
	} else {
		fd, err = openRegular(dirfd, name, unix.O_RDONLY)
		if err == errno.EACCES {
			fd, err = openRegular(dirfd, name, unix.O_WRONLY)
		}
		if err != nil {
			return err
		}
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return hostErr(err)
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		// Replaced in between: the caller asked about the old file.
		return errno.ENOENT
	}
	return hostErr(unix.Fchmod(fd, mode))
}

// truncateAt sets the size of the regular file dirfd/name through a
// descriptor, since truncate(2) would follow a symlink.
func (fs *FS) truncateAt(dirfd int, name string, size int64) error {
	fd, err := openRegular(dirfd, name, unix.O_WRONLY)
	if err != nil {
		if err == errno.ELOOP || err == errno.ENXIO {
			return errno.EINVAL
		}
		return err
	}
	defer unix.Close(fd)
	return hostErr(ignoringEINTR(func() error { return unix.Ftruncate(fd, size) }))
}

// maxOpenRetries bounds how often openRegular retries when the file was
// replaced by another regular file between its checks.
const maxOpenRetries = 4

// openRegular opens the regular file dirfd/name with acc (an access mode
// and sync flags) without ever blocking or opening anything else. The
// type is checked on the name first, so a FIFO, socket or device is
// refused (ENXIO) without being opened; a directory is EISDIR and a
// symlink ELOOP. The open itself uses O_NOFOLLOW|O_NONBLOCK, so a FIFO
// swapped in after the check cannot block, and the descriptor is checked
// again to be that same regular file.
func openRegular(dirfd int, name string, acc int) (int, error) {
	for i := 0; ; i++ {
		var pre unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &pre, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return -1, hostErr(err)
		}
		switch pre.Mode & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			return -1, errno.EISDIR
		case unix.S_IFLNK:
			return -1, errno.ELOOP
		default:
			return -1, errno.ENXIO
		}
		fd, err := openRetry(dirfd, name, acc|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, hostErr(err)
		}
		var post unix.Stat_t
		if err := unix.Fstat(fd, &post); err != nil {
			_ = unix.Close(fd)
			return -1, hostErr(err)
		}
		if post.Mode&unix.S_IFMT != unix.S_IFREG {
			_ = unix.Close(fd)
			return -1, errno.ENXIO
		}
		if post.Dev == pre.Dev && post.Ino == pre.Ino {
			return fd, nil
		}
		_ = unix.Close(fd)
		if i == maxOpenRetries {
			return -1, errno.EAGAIN
		}
	}
}

// Lookup returns the child called name.
func (n *inode) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	if err := n.fs.enter(); err != nil {
		return nil, err
	}
	defer n.fs.exit()
	d, err := n.fs.openDir(n.path)
	if err != nil {
		return nil, err
	}
	defer d.close()
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, hostErr(err)
	}
	return n.child(name, vfs.TypeOf(st.Mode)), nil
}

// mutate is the prologue of every operation that changes this directory:
// it checks the filesystem is writable and name valid, enters the FS and
// opens the directory. done must be called when err is nil.
func (n *inode) mutate(name string) (d dirRef, done func(), err error) {
	if n.fs.opts.ReadOnly {
		return dirRef{}, nil, errno.EROFS
	}
	if err := validName(name); err != nil {
		return dirRef{}, nil, err
	}
	if err := n.fs.enter(); err != nil {
		return dirRef{}, nil, err
	}
	d, err = n.fs.openDir(n.path)
	if err != nil {
		n.fs.exit()
		return dirRef{}, nil, err
	}
	return d, func() { d.close(); n.fs.exit() }, nil
}

// Create makes a new empty regular file. FIFOs, sockets and devices are
// refused with EPERM: the guest's FIFOs are kernel pipes, and a host node
// of that kind would only be a way to reach host objects.
func (n *inode) Create(_ context.Context, name string, opts vfs.CreateOptions) (vfs.Inode, error) {
	switch vfs.TypeOf(opts.Mode) {
	case 0, vfs.TypeRegular:
	case vfs.TypeDir, vfs.TypeSymlink:
		return nil, errno.EINVAL
	default:
		return nil, errno.EPERM
	}
	d, done, err := n.mutate(name)
	if err != nil {
		return nil, err
	}
	defer done()
	perm := hostPerm(opts.Mode)
	fd, err := openRetry(d.fd, name,
		unix.O_CREAT|unix.O_EXCL|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, hostErr(err)
	}
	defer unix.Close(fd)
	// The host process's umask masked perm; the guest's umask was already
	// applied by the VFS, so restore exactly what was asked for. Failing
	// leaves the file with fewer permissions, never more.
	_ = unix.Fchmod(fd, perm)
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err == nil {
		err = n.fs.owners.set(keyOf(&st), newOwner(opts))
	}
	if err != nil {
		// Without its owner recorded the file would belong to someone
		// else; take it back.
		_ = unix.Unlinkat(d.fd, name, 0)
		return nil, hostErr(err)
	}
	return n.child(name, vfs.TypeRegular), nil
}

// Mkdir makes a directory.
func (n *inode) Mkdir(_ context.Context, name string, opts vfs.CreateOptions) (vfs.Inode, error) {
	d, done, err := n.mutate(name)
	if err != nil {
		return nil, err
	}
	defer done()
	perm := hostPerm(opts.Mode)
	if err := unix.Mkdirat(d.fd, name, perm); err != nil {
		return nil, hostErr(err)
	}
	// Undo the host umask, as Create does. chmodAt refuses anything but a
	// directory or file, so a symlink raced in under the name is left
	// alone.
	_ = n.fs.chmodAt(d.fd, name, perm)
	if err := n.fs.recordOwner(d.fd, name, unix.S_IFDIR, newOwner(opts)); err != nil {
		_ = unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR)
		return nil, err
	}
	n.fs.chargeNew(d.fd, name)
	return n.child(name, vfs.TypeDir), nil
}

// recordOwner records o for the new file dirfd/name if it has type typ.
func (fs *FS) recordOwner(dirfd int, name string, typ uint32, o owner) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return hostErr(err)
	}
	if st.Mode&unix.S_IFMT != typ {
		// Replaced already, by a racing caller: not ours to own.
		return nil
	}
	return fs.owners.set(keyOf(&st), o)
}

// forgetOwner drops the ownership entry of dirfd/name if removing that
// name removes the file (its last link). st is the file's stat from just
// before the removal.
func (fs *FS) forgetOwner(st *unix.Stat_t) {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR || st.Nlink <= 1 {
		fs.owners.forget(keyOf(st))
	}
}

// Symlink makes a symbolic link. The target is stored verbatim; hostfs
// never follows it, the VFS resolves it in the guest's namespace. Unless
// Options.AllowExternalSymlinks is set, a target that would lead a host
// tool outside the mount is refused with EPERM (see links.go).
func (n *inode) Symlink(_ context.Context, name, target string, opts vfs.CreateOptions) (vfs.Inode, error) {
	switch {
	case target == "":
		return nil, errno.ENOENT
	case len(target) >= vfs.PathMax:
		return nil, errno.ENAMETOOLONG
	}
	d, done, err := n.mutate(name)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := n.fs.checkNewLink(n.path, target); err != nil {
		return nil, err
	}
	if err := unix.Symlinkat(target, d.fd, name); err != nil {
		return nil, hostErr(err)
	}
	o := newOwner(opts)
	o.suid = 0
	if err := n.fs.recordOwner(d.fd, name, unix.S_IFLNK, o); err != nil {
		_ = unix.Unlinkat(d.fd, name, 0)
		return nil, err
	}
	n.fs.chargeNew(d.fd, name)
	return n.child(name, vfs.TypeSymlink), nil
}

// Link makes name a hard link to target. linkat without AT_SYMLINK_FOLLOW
// links a symlink itself, so the new name can only ever refer to a file
// that already was beneath the root.
func (n *inode) Link(_ context.Context, name string, target vfs.Inode) error {
	t, err := n.sameFS(target)
	if err != nil {
		return err
	}
	if t.path == "" {
		return errno.EPERM
	}
	d, done, err := n.mutate(name)
	if err != nil {
		return err
	}
	defer done()
	td, tname, err := n.fs.locate(t.path)
	if err != nil {
		return err
	}
	defer td.close()
	var st unix.Stat_t
	if err := unix.Fstatat(td.fd, tname, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return hostErr(err)
	}
	if err := n.fs.checkMove(td.fd, tname, &st, splitDir(t.path), n.path); err != nil {
		return err
	}
	return hostErr(unix.Linkat(td.fd, tname, d.fd, name, 0))
}

// Unlink removes a non-directory.
func (n *inode) Unlink(_ context.Context, name string) error {
	d, done, err := n.mutate(name)
	if err != nil {
		return err
	}
	defer done()
	return n.fs.removeAt(d.fd, name, 0)
}

// Rmdir removes an empty directory.
func (n *inode) Rmdir(_ context.Context, name string) error {
	d, done, err := n.mutate(name)
	if err != nil {
		return err
	}
	defer done()
	return n.fs.removeAt(d.fd, name, unix.AT_REMOVEDIR)
}

// removeAt is unlinkat that drops the ownership entry of a removed file.
func (fs *FS) removeAt(dirfd int, name string, flags int) error {
	var st unix.Stat_t
	known := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	if err := unix.Unlinkat(dirfd, name, flags); err != nil {
		return hostErr(err)
	}
	if known {
		fs.forgetOwner(&st)
		fs.quota.removed(&st)
	}
	return nil
}

// Rename moves oldName to newName in newDir with renameat, which replaces
// the target atomically and never follows symlinks; both directories are
// resolved beneath the root.
func (n *inode) Rename(_ context.Context, oldName string, newDir vfs.Inode, newName string) error {
	nd, err := n.sameFS(newDir)
	if err != nil {
		return err
	}
	if err := validName(newName); err != nil {
		return err
	}
	d, done, err := n.mutate(oldName)
	if err != nil {
		return err
	}
	defer done()
	dst := d
	if nd.path != n.path {
		dst, err = n.fs.openDir(nd.path)
		if err != nil {
			return err
		}
		defer dst.close()
	}
	var src unix.Stat_t
	if err := unix.Fstatat(d.fd, oldName, &src, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return hostErr(err)
	}
	if err := n.fs.checkMove(d.fd, oldName, &src, n.path, nd.path); err != nil {
		return err
	}
	var victim unix.Stat_t
	replaces := unix.Fstatat(dst.fd, newName, &victim, unix.AT_SYMLINK_NOFOLLOW) == nil
	if err := unix.Renameat(d.fd, oldName, dst.fd, newName); err != nil {
		return hostErr(err)
	}
	if replaces {
		var moved unix.Stat_t
		// Renaming a link onto another link of the same file removes
		// nothing.
		if unix.Fstatat(dst.fd, newName, &moved, unix.AT_SYMLINK_NOFOLLOW) != nil || keyOf(&moved) != keyOf(&victim) {
			n.fs.forgetOwner(&victim)
			n.fs.quota.removed(&victim)
		}
	}
	return nil
}

// Readlink returns the symlink's target.
func (n *inode) Readlink(context.Context) (string, error) {
	if err := n.fs.enter(); err != nil {
		return "", err
	}
	defer n.fs.exit()
	d, name, err := n.fs.locate(n.path)
	if err != nil {
		return "", err
	}
	defer d.close()
	buf := make([]byte, vfs.PathMax)
	m, err := unix.Readlinkat(d.fd, name, buf)
	if err != nil {
		return "", hostErr(err)
	}
	if m >= len(buf) {
		// Linux targets are shorter than PathMax; a longer one could not
		// be resolved by the VFS anyway.
		return "", errno.ENAMETOOLONG
	}
	return n.fs.guestTarget(n.path, string(buf[:m])), nil
}

// Open opens the regular file for I/O. Directories are EISDIR, symlinks
// ELOOP; FIFOs, sockets and devices ENXIO, and are never opened on the
// host.
func (n *inode) Open(_ context.Context, flags vfs.OpenFlags) (vfs.Handle, error) {
	if flags.Writable() && n.fs.opts.ReadOnly {
		return nil, errno.EROFS
	}
	if err := n.fs.enter(); err != nil {
		return nil, err
	}
	defer n.fs.exit()
	d, name, err := n.fs.locate(n.path)
	if err != nil {
		return nil, err
	}
	defer d.close()
	acc := unix.O_RDONLY
	switch flags & vfs.O_ACCMODE {
	case vfs.O_WRONLY:
		acc = unix.O_WRONLY
	case vfs.O_RDWR:
		acc = unix.O_RDWR
	case vfs.O_ACCMODE:
		return nil, errno.EINVAL
	}
	// O_SYNC includes the O_DSYNC bit.
	if flags&vfs.O_SYNC == vfs.O_SYNC {
		acc |= unix.O_SYNC
	} else if flags&vfs.O_DSYNC != 0 {
		acc |= unix.O_DSYNC
	}
	fd, err := openRegular(d.fd, name, acc)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, hostErr(err)
	}
	h := &handle{
		fd:          fd,
		ino:         n,
		writable:    flags.Writable(),
		maxSize:     n.fs.maxSize,
		noRWFAppend: n.fs.q.noRWFAppend,
		quota:       n.fs.quota,
		key:         keyOf(&st),
	}
	n.fs.quota.opened(h.key)
	n.hmu.Lock()
	n.handles = append(n.handles, h)
	n.hmu.Unlock()
	return h, nil
}

// liveHandle returns an open handle of this inode (a writable one if
// writable is set), or nil.
func (n *inode) liveHandle(writable bool) *handle {
	n.hmu.Lock()
	defer n.hmu.Unlock()
	for _, h := range n.handles {
		if h.writable || !writable {
			return h
		}
	}
	return nil
}

// dropHandle forgets a closed handle.
func (n *inode) dropHandle(h *handle) {
	n.hmu.Lock()
	defer n.hmu.Unlock()
	for i, x := range n.handles {
		if x == h {
			n.handles = append(n.handles[:i], n.handles[i+1:]...)
			return
		}
	}
}

// chargeNew charges the quota for the directory or symlink dirfd/name the
// guest just made: dirCost, or the link's size (its target's length).
func (fs *FS) chargeNew(dirfd int, name string) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		fs.quota.charge(dirCost)
		return
	}
	fs.quota.charge(st.Size)
}

// splitDir is the directory part of rel.
func splitDir(rel string) string {
	dir, _ := splitRel(rel)
	return dir
}
