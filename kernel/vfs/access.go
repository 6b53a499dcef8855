package vfs

import (
	"context"
	"slices"

	"github.com/secexec/secexec/kernel/errno"
)

// Access bits, as access(2)'s R_OK, W_OK and X_OK.
const (
	mayExec  = 1
	mayWrite = 2
	mayRead  = 4
)

// Access modes for (*VFS).Access.
const (
	AccessRead    = mayRead
	AccessWrite   = mayWrite
	AccessExecute = mayExec
)

// checkAccess applies POSIX discretionary access control: the owner,
// group or other permission bits of st, whichever class the caller is in.
// Root passes read and write always and execute when any x bit is set (or
// for directories).
func checkAccessStat(c *Caller, st *Stat, want uint32) error {
	if c.UID == 0 {
		if want&mayExec != 0 && st.Type() != TypeDir && st.Mode&0o111 == 0 {
			return errno.EACCES
		}
		return nil
	}
	var bits uint32
	switch {
	case c.UID == st.UID:
		bits = (st.Mode >> 6) & 7
	case c.GID == st.GID || slices.Contains(c.Groups, st.GID):
		bits = (st.Mode >> 3) & 7
	default:
		bits = st.Mode & 7
	}
	if bits&want != want {
		return errno.EACCES
	}
	return nil
}

func (v *VFS) checkAccess(ctx context.Context, c *Caller, ino Inode, want uint32) error {
	if c.UID == 0 && want&mayExec == 0 {
		return nil
	}
	if c.UID == 0 {
		// Root searches any directory; only files need an x bit.
		if t, ok := ino.(Typed); ok && t.FileType() == TypeDir {
			return nil
		}
	}
	st, err := ino.Stat(ctx)
	if err != nil {
		return err
	}
	return checkAccessStat(c, &st, want)
}

// checkSticky enforces the sticky bit of dir (as on /tmp): only the owner of
// the entry, the owner of the directory or root may remove or rename it.
func checkSticky(ctx context.Context, c *Caller, dir, victim Inode) error {
	if c.UID == 0 {
		return nil
	}
	dst, err := dir.Stat(ctx)
	if err != nil {
		return err
	}
	if dst.Mode&S_ISVTX == 0 || dst.UID == c.UID {
		return nil
	}
	vst, err := victim.Stat(ctx)
	if err != nil {
		return err
	}
	if vst.UID == c.UID {
		return nil
	}
	return errno.EPERM
}
