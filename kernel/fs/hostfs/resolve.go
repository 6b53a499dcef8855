package hostfs

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// resolveFlags confine openat2 to the tree beneath the root: no "..", no
// symlinks (the VFS resolves those in the guest's namespace), no /proc
// magic links, no host mount crossings.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS |
	unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// maxResolveRetries bounds how often openat2 is retried when it reports
// EAGAIN because a rename or mount raced with the lookup.
const maxResolveRetries = 16

// A relative path ("rel") names a file beneath the root: "" is the root
// itself, otherwise valid names joined by "/". Paths are built only by
// joinRel from names that validName accepted, so they never hold ".", ".."
// or empty components.

// validName checks a single path component. The VFS already guarantees
// this; hostfs checks again because a bad name here would change which
// host file a relative path designates.
func validName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return errno.EINVAL
	case len(name) > vfs.NameMax:
		return errno.ENAMETOOLONG
	case strings.ContainsAny(name, "/\x00"):
		return errno.EINVAL
	}
	return nil
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// splitRel returns the parent directory and final name of a non-root rel.
func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// dirRef is a directory descriptor that is either borrowed (the root's) or
// owned and closed after use.
type dirRef struct {
	fd    int
	owned bool
}

func (d dirRef) close() {
	if d.owned {
		_ = unix.Close(d.fd)
	}
}

// openDir returns an O_PATH descriptor of the directory rel.
func (fs *FS) openDir(rel string) (dirRef, error) {
	if rel == "" {
		return dirRef{fd: fs.rootFD}, nil
	}
	fd, err := fs.openBeneath(rel, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return dirRef{}, err
	}
	return dirRef{fd: fd, owned: true}, nil
}

// locate returns the parent directory of rel and rel's final name, the
// pair every *at call takes. The root is its own parent, named ".".
func (fs *FS) locate(rel string) (dirRef, string, error) {
	if rel == "" {
		return dirRef{fd: fs.rootFD}, ".", nil
	}
	dir, name := splitRel(rel)
	if err := validName(name); err != nil {
		// Unreachable with paths built by joinRel; a ".." here would name
		// the parent of whatever dir is, so refuse it outright.
		return dirRef{}, "", err
	}
	d, err := fs.openDir(dir)
	return d, name, err
}

// openBeneath opens rel with flags (O_NOFOLLOW and O_CLOEXEC are added,
// and O_NONBLOCK unless O_PATH) without leaving the root: every component
// is resolved by the host kernel with symlinks, ".." and mount crossings
// refused. A final symlink is opened itself with O_PATH, and is ELOOP
// otherwise.
func (fs *FS) openBeneath(rel string, flags int) (int, error) {
	flags |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	if flags&unix.O_PATH == 0 {
		// Never block on a FIFO, whatever raced in.
		flags |= unix.O_NONBLOCK
	}
	if fs.q.noOpenat2 {
		return fs.walk(rel, flags)
	}
	if rel == "" {
		rel = "."
	}
	how := unix.OpenHow{Flags: uint64(flags), Resolve: resolveFlags}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(fs.rootFD, rel, &how)
		if err == nil {
			return fd, nil
		}
		if err == unix.EINTR || (err == unix.EAGAIN && i < maxResolveRetries) {
			continue
		}
		return -1, resolveErr(err)
	}
}

// walk is openBeneath for kernels without openat2. It opens one component
// at a time relative to the previous one, with O_PATH|O_NOFOLLOW, and
// checks each: a symlink is ELOOP (as RESOLVE_NO_SYMLINKS), anything but a
// directory ENOTDIR, another device EACCES (as RESOLVE_NO_XDEV maps). ".."
// never occurs in rel, and because each step is relative to a descriptor
// already beneath the root, a concurrent rename cannot redirect the walk
// outside it. Unlike RESOLVE_NO_XDEV it cannot see a bind mount of the
// same device; that is the one weaker guarantee of this path.
func (fs *FS) walk(rel string, flags int) (int, error) {
	cur := fs.rootFD
	closeCur := func() {
		if cur != fs.rootFD {
			_ = unix.Close(cur)
		}
	}
	last := "."
	if rel != "" {
		comps := strings.Split(rel, "/")
		last = comps[len(comps)-1]
		for _, c := range comps[:len(comps)-1] {
			if validName(c) != nil {
				closeCur()
				return -1, errno.EINVAL
			}
			fd, err := openRetry(cur, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				closeCur()
				return -1, hostErr(err)
			}
			closeCur()
			cur = fd
			if err := fs.checkStep(fd, true); err != nil {
				closeCur()
				return -1, err
			}
		}
		if validName(last) != nil {
			closeCur()
			return -1, errno.EINVAL
		}
	}
	fd, err := openRetry(cur, last, flags, 0)
	closeCur()
	if err != nil {
		return -1, hostErr(err)
	}
	if err := fs.checkStep(fd, false); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// checkStep vets a descriptor the fallback walk just opened.
func (fs *FS) checkStep(fd int, mustBeDir bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return hostErr(err)
	}
	if st.Dev != fs.rootDev {
		return errno.EACCES
	}
	if mustBeDir {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
		case unix.S_IFLNK:
			return errno.ELOOP
		default:
			return errno.ENOTDIR
		}
	}
	return nil
}
