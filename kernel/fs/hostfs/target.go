package hostfs

import (
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hostRoots returns the host paths of the root: as given (made absolute)
// and as the kernel resolved it, which differ when the given path passes
// through a symlink.
func hostRoots(root string, fd int) []string {
	var roots []string
	if abs, err := filepath.Abs(root); err == nil && abs != "/" {
		roots = append(roots, abs)
	}
	buf := make([]byte, unix.PathMax)
	if n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf); err == nil && n < len(buf) {
		if real := string(buf[:n]); real != "/" && (len(roots) == 0 || roots[0] != real) {
			roots = append(roots, real)
		}
	}
	return roots
}

// guestTarget turns the target of the symlink at rel (relative to the
// root) into what the guest sees. A host tool (npm link, a build) often
// writes absolute targets, which would show the guest the host path of
// the mount (invariant 1) and resolve to nothing in the VM; a target
// inside the root is made relative to the link's directory instead,
// which names the same file on both sides. Other targets are the host
// content the embedder chose to share, and are returned as they are.
func (fs *FS) guestTarget(rel, target string) string {
	if !strings.HasPrefix(target, "/") {
		return target
	}
	clean := filepath.Clean(target)
	for _, root := range fs.roots {
		if clean != root && !strings.HasPrefix(clean, root+"/") {
			continue
		}
		inside := strings.TrimPrefix(clean, root)
		r, err := filepath.Rel(filepath.Join("/", filepath.Dir(rel)), filepath.Join("/", inside))
		if err != nil {
			return "."
		}
		return r
	}
	return target
}
