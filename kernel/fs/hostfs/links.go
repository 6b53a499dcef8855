package hostfs

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
)

// Symlinks a guest makes in a writable mount are real host symlinks, and
// host tools (an editor, a build, a backup) follow them later with the
// host's resolution, not the VM's. Unless Options.AllowExternalSymlinks is
// set, a link's target must therefore stay inside the mount for the host
// too:
//
//   - absolute targets are refused (on the host they name host paths);
//   - a relative target may start with ".." components, at most as many
//     as the link's directory is deep below the mount's root, and may have
//     no ".." after a normal component. A lexical check of "a/../.." is
//     not enough: the host resolves ".." after following "a", which may be
//     a link to somewhere shallower.
//
// Creating a link that breaks the rule is EPERM. Because a link's ".."
// count is checked against its directory's depth, a rename or hard link
// that moves a symlink to a shallower directory, or a directory holding
// such links to a shallower parent, could make a link leave the mount;
// those fail with EXDEV when they would (mv then falls back to copying,
// and the copy's links are made under the same rule).

// maxScan bounds the entries a directory rename inspects for links that
// the move would send outside the mount; beyond it the rename is EXDEV.
const maxScan = 10000

// depth is the number of components of rel, a directory relative to the
// root ("" is the root itself, depth 0).
func depth(rel string) int {
	if rel == "" {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

// upLevels returns the number of leading ".." components of a relative
// target, and false for an absolute target or one with ".." after a
// normal component.
func upLevels(target string) (int, bool) {
	if strings.HasPrefix(target, "/") {
		return 0, false
	}
	k, normal := 0, false
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if normal {
				return 0, false
			}
			k++
		default:
			normal = true
		}
	}
	return k, true
}

// staysInside reports whether target, the target of a symlink in a
// directory d levels below the root, resolves inside the mount on the host.
func staysInside(d int, target string) bool {
	k, ok := upLevels(target)
	return ok && k <= d
}

// checkNewLink refuses (EPERM) a symlink target that would leave the mount,
// for a link made in the directory dir (relative to the root).
func (fs *FS) checkNewLink(dir, target string) error {
	if fs.opts.AllowExternalSymlinks || staysInside(depth(dir), target) {
		return nil
	}
	return errno.EPERM
}

// checkMove decides whether the file name in dirfd (the directory oldDir),
// whose stat is st, may be moved or linked into newDir: EXDEV when that
// would make a relative symlink (the file, or one beneath it if it is a
// directory) leave the mount. Absolute targets stay what they were, so
// only relative ones are checked, and only when the move goes shallower.
func (fs *FS) checkMove(dirfd int, name string, st *unix.Stat_t, oldDir, newDir string) error {
	if fs.opts.AllowExternalSymlinks || depth(newDir) >= depth(oldDir) {
		return nil
	}
	nd := depth(newDir)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		t, err := readlinkAt(dirfd, name)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(t, "/") && !staysInside(nd, t) {
			return errno.EXDEV
		}
	case unix.S_IFDIR:
		fd, err := openRetry(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return hostErr(err)
		}
		budget := maxScan
		return scanLinks(fd, nd+1, &budget)
	}
	return nil
}

// scanLinks checks every relative symlink beneath the directory fd (which
// it closes) as if that directory were d levels deep.
func scanLinks(fd, d int, budget *int) error {
	f := os.NewFile(uintptr(fd), "scan")
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return errno.EXDEV
	}
	for _, e := range ents {
		if *budget--; *budget < 0 {
			return errno.EXDEV
		}
		switch {
		case e.Type()&os.ModeSymlink != 0:
			t, err := readlinkAt(fd, e.Name())
			if err != nil {
				return errno.EXDEV
			}
			if !strings.HasPrefix(t, "/") && !staysInside(d, t) {
				return errno.EXDEV
			}
		case e.IsDir():
			sub, err := openRetry(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return errno.EXDEV
			}
			if err := scanLinks(sub, d+1, budget); err != nil {
				return err
			}
		}
	}
	return nil
}

// readlinkAt reads the raw target of dirfd/name.
func readlinkAt(dirfd int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", hostErr(err)
	}
	return string(buf[:n]), nil
}
