package vfs

import (
	"context"
	"runtime"
	"strings"

	"github.com/secexec/secexec/kernel/errno"
)

// maxOpenRetries bounds how often Open re-resolves a path whose inode
// vanished between lookup and open.
const maxOpenRetries = 64

// existing resolves path to an object that must exist.
func (v *VFS) existing(ctx context.Context, c *Caller, op, path string, follow bool) (*resolution, error) {
	r, err := v.resolve(ctx, c, path, follow)
	if err != nil {
		return nil, errno.Path(op, path, err)
	}
	if r.node.ino == nil {
		return nil, errno.Path(op, path, errno.ENOENT)
	}
	return r, nil
}

// Open opens path as open(2) does and returns a new open file description
// holding one reference.
func (v *VFS) Open(ctx context.Context, c *Caller, path string, flags OpenFlags, mode uint32) (File, error) {
	return v.open(ctx, c, path, flags, mode, 0)
}

func (v *VFS) open(ctx context.Context, c *Caller, path string, flags OpenFlags, mode uint32, retries int) (File, error) {
	excl := flags&O_CREAT != 0 && flags&O_EXCL != 0
	follow := flags&O_NOFOLLOW == 0 && !excl
	r, err := v.resolve(ctx, c, path, follow)
	if err != nil {
		return nil, errno.Path("open", path, err)
	}
	if r.magic != nil {
		return v.openMagic(ctx, r, flags)
	}
	if r.node.ino == nil {
		if flags&O_CREAT == 0 {
			return nil, errno.Path("open", path, errno.ENOENT)
		}
		if r.dirOnly {
			return nil, errno.Path("open", path, errno.EISDIR)
		}
		ino, err := v.create(ctx, c, r, S_IFREG|(mode&ModePerm), OpWrite)
		if errno.Of(err) == errno.EEXIST && !excl {
			// Lost a race with another creator: open what it made.
			return v.open(ctx, c, path, flags&^O_CREAT, mode, retries)
		}
		if err != nil {
			return nil, errno.Path("open", path, err)
		}
		r.node.ino = ino
		f, err := v.openNode(ctx, c, r, flags&^O_TRUNC, true)
		if err != nil {
			return nil, errno.Path("open", path, err)
		}
		return f, nil
	}
	if excl {
		return nil, errno.Path("open", path, errno.EEXIST)
	}
	f, err := v.openNode(ctx, c, r, flags, false)
	if errno.Of(err) == errno.ENOENT && retries < maxOpenRetries {
		// The inode was unlinked (replaced by a rename, say) between
		// lookup and open. Linux would open the inode it looked up;
		// filesystems here drop an unlinked inode's data at once, so
		// resolve again and open the replacement. Yielding lets a
		// renamer in a tight loop finish its step.
		runtime.Gosched()
		return v.open(ctx, c, path, flags, mode, retries+1)
	}
	if err != nil {
		return nil, errno.Path("open", path, err)
	}
	return f, nil
}

func (v *VFS) openMagic(ctx context.Context, r *resolution, flags OpenFlags) (File, error) {
	f := r.magic
	have := f.Flags()
	if (flags.Writable() && !have.Writable()) || (flags.Readable() && !have.Readable() && flags&O_PATH == 0) {
		return nil, errno.Path("open", r.node.path, errno.EACCES)
	}
	// The magic link handed out the file without a reference, and its
	// owner may be closing it right now: take one only if it is alive.
	if t, ok := f.(interface{ TryIncRef() bool }); ok {
		if !t.TryIncRef() {
			return nil, errno.Path("open", r.node.path, errno.ENOENT)
		}
	} else {
		f.IncRef()
	}
	return f, nil
}

// openNode opens an existing inode. created is set when Open just made it,
// so access was granted by the create itself.
func (v *VFS) openNode(ctx context.Context, c *Caller, r *resolution, flags OpenFlags, created bool) (File, error) {
	ino, path, mnt := r.node.ino, r.node.path, r.node.mnt
	st, err := ino.Stat(ctx)
	if err != nil {
		return nil, err
	}
	st.Dev = mnt.Dev
	t := st.Type()
	if t == TypeSymlink {
		// Only reachable with O_NOFOLLOW (or O_EXCL on an existing link).
		if flags&O_PATH != 0 {
			return newPathFile(v, ino, mnt, path, flags), nil
		}
		return nil, errno.ELOOP
	}
	if flags&O_DIRECTORY != 0 && t != TypeDir {
		return nil, errno.ENOTDIR
	}
	if flags&O_PATH != 0 {
		if err := v.authorize(ctx, OpStat, path); err != nil {
			return nil, err
		}
		return newPathFile(v, ino, mnt, path, flags), nil
	}
	if t == TypeDir {
		if flags.Writable() || flags&(O_TRUNC|O_CREAT) != 0 {
			return nil, errno.EISDIR
		}
		if err := v.authorize(ctx, OpReaddir, path); err != nil {
			return nil, err
		}
		if err := checkAccessStat(c, &st, mayRead); err != nil {
			return nil, err
		}
		parentIno := st.Ino
		if r.parent.ino != nil && r.parent.ino != ino {
			if pst, err := r.parent.ino.Stat(ctx); err == nil {
				parentIno = pst.Ino
			}
		}
		return newDirFile(v, ino, mnt, path, flags, st.Ino, parentIno), nil
	}
	if !created {
		if flags.Readable() {
			if err := v.authorize(ctx, OpRead, path); err != nil {
				return nil, err
			}
		}
		if flags.Writable() || flags&O_TRUNC != 0 {
			if err := v.authorize(ctx, OpWrite, path); err != nil {
				return nil, err
			}
		}
		var want uint32
		if flags.Readable() {
			want |= mayRead
		}
		if flags.Writable() || flags&O_TRUNC != 0 {
			want |= mayWrite
		}
		if err := checkAccessStat(c, &st, want); err != nil {
			return nil, err
		}
	}
	if (flags.Writable() || flags&O_TRUNC != 0) && mnt.ReadOnly && t == TypeRegular {
		return nil, errno.EROFS
	}
	switch t {
	case TypeCharDev:
		if fo, ok := ino.(FileOpener); ok {
			return fo.OpenFile(ctx, flags)
		}
	case TypeRegular:
	case TypeFIFO, TypeSocket:
		if v.opts.OpenSpecial == nil {
			return nil, errno.ENXIO
		}
		return v.opts.OpenSpecial(ctx, ino, st, path, flags)
	default:
		return nil, errno.ENXIO
	}
	if flags&O_TRUNC != 0 && t == TypeRegular && flags.Writable() && st.Size != 0 {
		if err := ino.SetAttr(ctx, SetAttr{Mask: SetSize, Size: 0}); err != nil {
			return nil, err
		}
	}
	h, err := ino.Open(ctx, flags)
	if err != nil {
		return nil, err
	}
	if flags&O_TRUNC != 0 && t == TypeRegular && flags.Writable() {
		v.notifyChange(path, InModify, false)
	}
	return newRegularFile(v, ino, mnt, h, path, flags), nil
}

// create makes a new inode at r (whose final component is missing) after
// the policy, read-only and DAC checks. mode carries the type bits.
func (v *VFS) create(ctx context.Context, c *Caller, r *resolution, mode uint32, op Op) (Inode, error) {
	if r.name == "" {
		return nil, errno.EEXIST
	}
	if err := v.authorize(ctx, op, r.node.path); err != nil {
		return nil, err
	}
	if err := v.checkAccess(ctx, c, r.parent.ino, mayWrite|mayExec); err != nil {
		return nil, err
	}
	if r.parent.mnt.ReadOnly {
		return nil, errno.EROFS
	}
	uid, gid := c.owner()
	opts := CreateOptions{Mode: mode &^ (c.Umask & 0o777), UID: uid, GID: gid}
	// BSD group semantics of a setgid directory, as Linux applies them.
	if pst, err := r.parent.ino.Stat(ctx); err == nil && pst.Mode&S_ISGID != 0 {
		opts.GID = pst.GID
		if TypeOf(mode) == TypeDir {
			opts.Mode |= S_ISGID
		}
	}
	var ino Inode
	var err error
	switch TypeOf(mode) {
	case TypeDir:
		ino, err = r.parent.ino.Mkdir(ctx, r.name, opts)
	default:
		ino, err = r.parent.ino.Create(ctx, r.name, opts)
	}
	if err == nil {
		v.notifyCreate(r.node.path, TypeOf(mode) == TypeDir)
	}
	return ino, err
}

// Stat returns the attributes of path, following a final symlink.
func (v *VFS) Stat(ctx context.Context, c *Caller, path string) (Stat, error) {
	return v.stat(ctx, c, path, true)
}

// Lstat returns the attributes of path without following a final symlink.
func (v *VFS) Lstat(ctx context.Context, c *Caller, path string) (Stat, error) {
	return v.stat(ctx, c, path, false)
}

func (v *VFS) stat(ctx context.Context, c *Caller, path string, follow bool) (Stat, error) {
	r, err := v.resolve(ctx, c, path, follow)
	if err != nil {
		return Stat{}, errno.Path("stat", path, err)
	}
	if r.magic != nil {
		if err := v.authorize(ctx, OpStat, r.node.path); err != nil {
			return Stat{}, err
		}
		return r.magic.Stat(ctx)
	}
	if r.node.ino == nil {
		return Stat{}, errno.Path("stat", path, errno.ENOENT)
	}
	if err := v.authorize(ctx, OpStat, r.node.path); err != nil {
		return Stat{}, err
	}
	st, err := r.node.ino.Stat(ctx)
	if err != nil {
		return Stat{}, errno.Path("stat", path, err)
	}
	st.Dev = r.node.mnt.Dev
	return st, nil
}

// Mkdir creates a directory.
func (v *VFS) Mkdir(ctx context.Context, c *Caller, path string, mode uint32) error {
	r, err := v.resolve(ctx, c, path, false)
	if err != nil {
		return errno.Path("mkdir", path, err)
	}
	if r.node.ino != nil || r.magic != nil {
		return errno.Path("mkdir", path, errno.EEXIST)
	}
	_, err = v.create(ctx, c, r, S_IFDIR|(mode&ModePerm), OpMkdir)
	return errno.Path("mkdir", path, err)
}

// Mknod creates a regular file, FIFO or socket node. Device nodes are
// refused with EPERM: a guest has no devices to name.
func (v *VFS) Mknod(ctx context.Context, c *Caller, path string, mode uint32) error {
	switch TypeOf(mode) {
	case 0:
		mode |= S_IFREG
	case TypeRegular, TypeFIFO, TypeSocket:
	default:
		return errno.Path("mknod", path, errno.EPERM)
	}
	r, err := v.resolve(ctx, c, path, false)
	if err != nil {
		return errno.Path("mknod", path, err)
	}
	if r.node.ino != nil || r.magic != nil {
		return errno.Path("mknod", path, errno.EEXIST)
	}
	_, err = v.create(ctx, c, r, mode&(S_IFMT|ModePerm), OpWrite)
	return errno.Path("mknod", path, err)
}

// Symlink creates linkpath as a symbolic link to target. The target is
// stored as given and resolved only when the link is followed.
func (v *VFS) Symlink(ctx context.Context, c *Caller, target, linkpath string) error {
	if target == "" {
		return errno.Path("symlink", linkpath, errno.ENOENT)
	}
	if len(target) >= PathMax {
		return errno.Path("symlink", linkpath, errno.ENAMETOOLONG)
	}
	if strings.IndexByte(target, 0) >= 0 {
		return errno.Path("symlink", linkpath, errno.EINVAL)
	}
	r, err := v.resolve(ctx, c, linkpath, false)
	if err != nil {
		return errno.Path("symlink", linkpath, err)
	}
	if r.node.ino != nil || r.magic != nil || r.name == "" {
		return errno.Path("symlink", linkpath, errno.EEXIST)
	}
	if err := v.authorize(ctx, OpSymlink, r.node.path); err != nil {
		return err
	}
	if err := v.checkAccess(ctx, c, r.parent.ino, mayWrite|mayExec); err != nil {
		return errno.Path("symlink", linkpath, err)
	}
	if r.parent.mnt.ReadOnly {
		return errno.Path("symlink", linkpath, errno.EROFS)
	}
	uid, gid := c.owner()
	_, err = r.parent.ino.Symlink(ctx, r.name, target, CreateOptions{Mode: S_IFLNK | 0o777, UID: uid, GID: gid})
	if err == nil {
		v.notifyCreate(r.node.path, false)
	}
	return errno.Path("symlink", linkpath, err)
}

// Link makes newpath a hard link to oldpath. A final symlink in oldpath is
// not followed, as linkat(2) without AT_SYMLINK_FOLLOW. The policy must
// allow the link operation on both paths, and AuthorizeMove the new name.
func (v *VFS) Link(ctx context.Context, c *Caller, oldpath, newpath string) error {
	o, err := v.existing(ctx, c, "link", oldpath, false)
	if err != nil {
		return err
	}
	n, err := v.resolve(ctx, c, newpath, false)
	if err != nil {
		return errno.Path("link", newpath, err)
	}
	if n.node.ino != nil || n.magic != nil || n.name == "" {
		return errno.Path("link", newpath, errno.EEXIST)
	}
	if err := v.authorize(ctx, OpLink, o.node.path); err != nil {
		return err
	}
	if err := v.authorize(ctx, OpLink, n.node.path); err != nil {
		return err
	}
	if t, err := inodeType(ctx, o.node.ino); err != nil {
		return errno.Path("link", oldpath, err)
	} else if t == TypeDir {
		return errno.Path("link", oldpath, errno.EPERM)
	}
	if o.node.mnt != n.parent.mnt {
		return errno.Path("link", newpath, errno.EXDEV)
	}
	// The new name must not decide anything differently for the object,
	// or a rule on the old name would be walked around through it.
	if err := v.authorizeMove(ctx, OpLink, o.node.path, n.node.path, false); err != nil {
		return err
	}
	if err := v.checkAccess(ctx, c, n.parent.ino, mayWrite|mayExec); err != nil {
		return errno.Path("link", newpath, err)
	}
	if n.parent.mnt.ReadOnly {
		return errno.Path("link", newpath, errno.EROFS)
	}
	if err := n.parent.ino.Link(ctx, n.name, o.node.ino); err != nil {
		return errno.Path("link", newpath, err)
	}
	v.notifyChange(o.node.path, InAttrib, false)
	v.notifyCreate(n.node.path, false)
	return nil
}

// removable resolves path for unlink, rmdir or rename and applies the
// checks they share.
func (v *VFS) removable(ctx context.Context, c *Caller, op, path string, aop Op) (*resolution, error) {
	r, err := v.existing(ctx, c, op, path, false)
	if err != nil {
		return nil, err
	}
	if r.name == "" {
		switch {
		case path == ".." || strings.HasSuffix(path, "/..") || strings.HasSuffix(path, "/../"):
			// As Linux: "d/.." names a directory that holds at least d.
			return nil, errno.Path(op, path, errno.ENOTEMPTY)
		case r.node.path == "/":
			return nil, errno.Path(op, path, errno.EBUSY)
		}
		return nil, errno.Path(op, path, errno.EINVAL)
	}
	if m := v.mountAt(r.node.path); m != nil {
		return nil, errno.Path(op, path, errno.EBUSY)
	}
	if err := v.authorize(ctx, aop, r.node.path); err != nil {
		return nil, err
	}
	if err := v.checkAccess(ctx, c, r.parent.ino, mayWrite|mayExec); err != nil {
		return nil, errno.Path(op, path, err)
	}
	if err := checkSticky(ctx, c, r.parent.ino, r.node.ino); err != nil {
		return nil, errno.Path(op, path, err)
	}
	if r.parent.mnt.ReadOnly {
		return nil, errno.Path(op, path, errno.EROFS)
	}
	return r, nil
}

// Unlink removes a non-directory.
func (v *VFS) Unlink(ctx context.Context, c *Caller, path string) error {
	r, err := v.resolve(ctx, c, path, false)
	if err == nil && r.node.ino != nil && r.name != "" {
		if t, err := inodeType(ctx, r.node.ino); err == nil && t == TypeDir {
			return errno.Path("unlink", path, errno.EISDIR)
		}
	}
	r, err = v.removable(ctx, c, "unlink", path, OpRemove)
	if err != nil {
		return err
	}
	if err := r.parent.ino.Unlink(ctx, r.name); err != nil {
		return errno.Path("unlink", path, err)
	}
	v.notifyRemoved(r.node.path, false)
	return nil
}

// Rmdir removes an empty directory.
func (v *VFS) Rmdir(ctx context.Context, c *Caller, path string) error {
	r, err := v.removable(ctx, c, "rmdir", path, OpRemove)
	if err != nil {
		return err
	}
	if t, err := inodeType(ctx, r.node.ino); err != nil {
		return errno.Path("rmdir", path, err)
	} else if t != TypeDir {
		return errno.Path("rmdir", path, errno.ENOTDIR)
	}
	if err := r.parent.ino.Rmdir(ctx, r.name); err != nil {
		return errno.Path("rmdir", path, err)
	}
	v.notifyRemoved(r.node.path, true)
	return nil
}

// Rename moves oldpath to newpath atomically, replacing newpath if it
// exists, as rename(2) does. Moving across mounts fails with EXDEV. The
// policy must allow rename on both paths and remove on a replaced
// newpath, and AuthorizeMove the move.
func (v *VFS) Rename(ctx context.Context, c *Caller, oldpath, newpath string) error {
	o, err := v.removable(ctx, c, "rename", oldpath, OpRename)
	if err != nil {
		return err
	}
	n, err := v.resolve(ctx, c, newpath, false)
	if err != nil {
		return errno.Path("rename", newpath, err)
	}
	if n.magic != nil {
		return errno.Path("rename", newpath, errno.EXDEV)
	}
	if n.name == "" {
		if n.node.path == "/" {
			return errno.Path("rename", newpath, errno.EBUSY)
		}
		return errno.Path("rename", newpath, errno.EINVAL)
	}
	if err := v.authorize(ctx, OpRename, n.node.path); err != nil {
		return err
	}
	if o.parent.mnt != n.parent.mnt {
		return errno.Path("rename", newpath, errno.EXDEV)
	}
	ot, err := inodeType(ctx, o.node.ino)
	if err != nil {
		return errno.Path("rename", oldpath, err)
	}
	if o.node.path == n.node.path {
		return nil
	}
	if ot == TypeDir && strings.HasPrefix(n.node.path, o.node.path+"/") {
		return errno.Path("rename", newpath, errno.EINVAL)
	}
	if ot != TypeDir && (n.dirOnly || o.dirOnly) {
		return errno.Path("rename", newpath, errno.ENOTDIR)
	}
	if n.node.ino != nil {
		// Replacing newpath removes what was there.
		if err := v.authorize(ctx, OpRemove, n.node.path); err != nil {
			return err
		}
	}
	// The object, and for a directory everything beneath it, must meet
	// the same rules under its new name.
	if err := v.authorizeMove(ctx, OpRename, o.node.path, n.node.path, ot == TypeDir); err != nil {
		return err
	}
	if n.node.ino != nil {
		if m := v.mountAt(n.node.path); m != nil {
			return errno.Path("rename", newpath, errno.EBUSY)
		}
		if strings.HasPrefix(o.node.path, n.node.path+"/") {
			return errno.Path("rename", newpath, errno.ENOTEMPTY)
		}
		if err := checkSticky(ctx, c, n.parent.ino, n.node.ino); err != nil {
			return errno.Path("rename", newpath, err)
		}
	}
	if err := v.checkAccess(ctx, c, n.parent.ino, mayWrite|mayExec); err != nil {
		return errno.Path("rename", newpath, err)
	}
	if err := o.parent.ino.Rename(ctx, o.name, n.parent.ino, n.name); err != nil {
		return errno.Path("rename", newpath, err)
	}
	v.notifyRename(o.node.path, n.node.path, ot == TypeDir, n.node.ino != nil)
	return nil
}

// Readlink returns the target of the symlink at path.
func (v *VFS) Readlink(ctx context.Context, c *Caller, path string) (string, error) {
	r, err := v.existing(ctx, c, "readlink", path, false)
	if err != nil {
		return "", err
	}
	if err := v.authorize(ctx, OpStat, r.node.path); err != nil {
		return "", err
	}
	s, err := r.node.ino.Readlink(ctx)
	if err != nil {
		return "", errno.Path("readlink", path, err)
	}
	return s, nil
}

// SetAttr changes attributes of path: chmod, chown, truncate and utimes,
// with the ownership rules of Linux. follow selects whether a final
// symlink is followed.
func (v *VFS) SetAttr(ctx context.Context, c *Caller, path string, follow bool, attr SetAttr) error {
	r, err := v.existing(ctx, c, "setattr", path, follow)
	if err != nil {
		return err
	}
	if err := v.setAttr(ctx, c, r.node.ino, r.node.mnt, r.node.path, attr); err != nil {
		return errno.Path(attrOpName(attr.Mask), path, err)
	}
	return nil
}

func attrOpName(m SetAttrMask) string {
	switch {
	case m&SetSize != 0:
		return "truncate"
	case m&(SetUID|SetGID) != 0:
		return "chown"
	case m&SetMode != 0:
		return "chmod"
	default:
		return "utimes"
	}
}

// setAttr is shared by path- and fd-based attribute changes.
func (v *VFS) setAttr(ctx context.Context, c *Caller, ino Inode, mnt *Mount, path string, attr SetAttr) error {
	st, err := ino.Stat(ctx)
	if err != nil {
		return err
	}
	owner := c.UID == 0 || c.UID == st.UID
	if attr.Mask&SetMode != 0 {
		if err := v.authorize(ctx, OpChmod, path); err != nil {
			return err
		}
		if !owner {
			return errno.EPERM
		}
	}
	if attr.Mask&(SetUID|SetGID) != 0 {
		if err := v.authorize(ctx, OpChown, path); err != nil {
			return err
		}
		// chown clears set-user-ID and (with group execute) set-group-ID
		// on regular files, so a file cannot gain privileges by changing
		// hands.
		if st.Type() == TypeRegular && attr.Mask&SetMode == 0 {
			clear := uint32(S_ISUID)
			if st.Mode&0o010 != 0 {
				clear |= S_ISGID
			}
			if st.Mode&clear != 0 {
				attr.Mask |= SetMode
				attr.Mode = st.Mode & ModePerm &^ clear
			}
		}
		if c.UID != 0 {
			// An owner may only change the group, to one of its own.
			if attr.Mask&SetUID != 0 && attr.UID != st.UID || !owner {
				return errno.EPERM
			}
			if attr.Mask&SetGID != 0 && attr.GID != c.GID && !containsGID(c.Groups, attr.GID) {
				return errno.EPERM
			}
		}
	}
	if attr.Mask&SetSize != 0 {
		if err := v.authorize(ctx, OpTruncate, path); err != nil {
			return err
		}
		switch st.Type() {
		case TypeDir:
			return errno.EISDIR
		case TypeRegular:
		default:
			return errno.EINVAL
		}
		if attr.Size < 0 {
			return errno.EINVAL
		}
		if err := checkAccessStat(c, &st, mayWrite); err != nil {
			return err
		}
	}
	if attr.Mask&(SetAtime|SetMtime) != 0 {
		if err := v.authorize(ctx, OpUtimes, path); err != nil {
			return err
		}
		if !owner && checkAccessStat(c, &st, mayWrite) != nil {
			return errno.EPERM
		}
	}
	if mnt.ReadOnly {
		return errno.EROFS
	}
	if err := ino.SetAttr(ctx, attr); err != nil {
		return err
	}
	v.notifyAttr(path, attr.Mask, st.Type() == TypeDir)
	return nil
}

func containsGID(gs []uint32, g uint32) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

// Access checks whether c may access path with mode (AccessRead,
// AccessWrite, AccessExecute bits; 0 tests existence), as access(2).
func (v *VFS) Access(ctx context.Context, c *Caller, path string, mode uint32) error {
	r, err := v.existing(ctx, c, "access", path, true)
	if err != nil {
		return err
	}
	if err := v.authorize(ctx, OpStat, r.node.path); err != nil {
		return err
	}
	if mode&mayWrite != 0 && r.node.mnt.ReadOnly {
		return errno.Path("access", path, errno.EROFS)
	}
	if err := v.checkAccess(ctx, c, r.node.ino, mode&7); err != nil {
		return errno.Path("access", path, err)
	}
	return nil
}

// Statfs reports the capacity of the filesystem holding path.
func (v *VFS) Statfs(ctx context.Context, c *Caller, path string) (Statfs, error) {
	r, err := v.existing(ctx, c, "statfs", path, true)
	if err != nil {
		return Statfs{}, err
	}
	if err := v.authorize(ctx, OpStat, r.node.path); err != nil {
		return Statfs{}, err
	}
	s, err := r.node.mnt.FS.Statfs(ctx)
	if err != nil {
		return Statfs{}, errno.Path("statfs", path, err)
	}
	s.ReadOnly = s.ReadOnly || r.node.mnt.ReadOnly
	return s, nil
}
