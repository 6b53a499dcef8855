package vfs

import (
	"context"
	"strings"

	"github.com/secexec/secexec/kernel/errno"
)

// step is one directory (or the final node) on a resolution path.
type step struct {
	path string // canonical absolute guest path
	ino  Inode
	mnt  *Mount
}

// resolution is the outcome of walking a path.
type resolution struct {
	// parent is the directory that holds the final component. For "/"
	// itself parent equals node and name is "".
	parent step
	// name is the final component.
	name string
	// node is the final inode, or has a nil ino when the final component
	// does not exist (the parent does).
	node step
	// magic is set when the final component was a magic link that
	// designates an open file without a path (a pipe via /proc/self/fd/N).
	magic File
	// dirOnly is set when the path ended in '/': the final node must be a
	// directory.
	dirOnly bool
}

// Typed may be implemented by inodes whose type is cheap to report; the
// VFS uses it during resolution instead of a full Stat. An inode's type
// never changes.
type Typed interface {
	FileType() FileType
}

func inodeType(ctx context.Context, ino Inode) (FileType, error) {
	if t, ok := ino.(Typed); ok {
		return t.FileType(), nil
	}
	st, err := ino.Stat(ctx)
	if err != nil {
		return 0, err
	}
	return st.Type(), nil
}

// checkPath validates a guest path before it is walked.
func checkPath(path string) error {
	if path == "" {
		return errno.ENOENT
	}
	if len(path) >= PathMax {
		return errno.ENAMETOOLONG
	}
	if strings.IndexByte(path, 0) >= 0 {
		return errno.EINVAL
	}
	return nil
}

// resolve walks path for c. With follow, a symlink in the final position
// is followed too. A missing final component is not an error: the result
// has a nil node.ino and a valid parent. A missing intermediate component
// is ENOENT.
func (v *VFS) resolve(ctx context.Context, c *Caller, path string, follow bool) (*resolution, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	root := v.rootMount()
	stack := make([]step, 1, 8)
	stack[0] = step{path: "/", ino: root.root, mnt: root}
	if path[0] != '/' {
		cwd := c.Cwd
		if cwd == "" || cwd[0] != '/' {
			cwd = "/"
		}
		if cwd != "/" {
			r, err := v.resolve(ctx, c, cwd, true)
			if err != nil {
				return nil, err
			}
			if r.node.ino == nil {
				return nil, errno.ENOENT
			}
			if t, err := inodeType(ctx, r.node.ino); err != nil {
				return nil, err
			} else if t != TypeDir {
				return nil, errno.ENOTDIR
			}
			stack = v.rebuildStack(ctx, r.node)
			if stack == nil {
				return nil, errno.ENOENT
			}
		}
	}
	dirOnly := strings.HasSuffix(path, "/")
	if dirOnly {
		follow = true
	}
	rest := splitPath(path, nil)
	hops := 0
	for {
		// Skip "." and "..", which never name a final component to create.
		for len(rest) > 0 && (rest[0] == "." || rest[0] == "..") {
			if rest[0] == ".." && len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			rest = rest[1:]
		}
		cur := stack[len(stack)-1]
		if len(rest) == 0 {
			// The path named a directory already on the stack ("/", "a/..").
			parent := cur
			if len(stack) > 1 {
				parent = stack[len(stack)-2]
			}
			return &resolution{parent: parent, node: cur, dirOnly: dirOnly}, nil
		}
		name := rest[0]
		rest = rest[1:]
		if len(name) > NameMax {
			return nil, errno.ENAMETOOLONG
		}
		t, err := inodeType(ctx, cur.ino)
		if err != nil {
			return nil, err
		}
		if t != TypeDir {
			return nil, errno.ENOTDIR
		}
		if err := v.checkAccess(ctx, c, cur.ino, mayExec); err != nil {
			return nil, err
		}
		childPath := joinPath(cur.path, name)
		var child step
		if m := v.mountAt(childPath); m != nil {
			child = step{path: childPath, ino: m.root, mnt: m}
		} else {
			ino, err := cur.ino.Lookup(ctx, name)
			if err != nil {
				if errno.Of(err) == errno.ENOENT && len(rest) == 0 {
					return &resolution{parent: cur, name: name, node: step{path: childPath, mnt: cur.mnt}, dirOnly: dirOnly}, nil
				}
				return nil, err
			}
			child = step{path: childPath, ino: ino, mnt: cur.mnt}
		}
		last := len(rest) == 0
		ct, err := inodeType(ctx, child.ino)
		if err != nil {
			return nil, err
		}
		if ct == TypeSymlink && (!last || follow) {
			hops++
			if hops > MaxSymlinks {
				return nil, errno.ELOOP
			}
			var target string
			if ml, ok := child.ino.(MagicLink); ok {
				p, f, err := ml.Resolve(ctx)
				if err != nil {
					return nil, err
				}
				if f != nil {
					if !last {
						return nil, errno.ENOTDIR
					}
					return &resolution{parent: cur, name: name, node: child, magic: f}, nil
				}
				target = p
			} else {
				target, err = child.ino.Readlink(ctx)
				if err != nil {
					return nil, err
				}
			}
			if target == "" {
				return nil, errno.ENOENT
			}
			if len(target) >= PathMax {
				return nil, errno.ENAMETOOLONG
			}
			if target[0] == '/' {
				stack = stack[:1]
			}
			if strings.HasSuffix(target, "/") && len(rest) == 0 {
				dirOnly = true
			}
			rest = splitPath(target, rest)
			continue
		}
		if !last {
			if ct != TypeDir {
				return nil, errno.ENOTDIR
			}
			stack = append(stack, child)
			continue
		}
		if dirOnly && ct != TypeDir {
			return nil, errno.ENOTDIR
		}
		return &resolution{parent: cur, name: name, node: child, dirOnly: dirOnly}, nil
	}
}

// rebuildStack turns a resolved directory back into a walk stack by
// re-walking its canonical path, which has no symlinks left in it.
func (v *VFS) rebuildStack(ctx context.Context, s step) []step {
	root := v.rootMount()
	stack := []step{{path: "/", ino: root.root, mnt: root}}
	if s.path == "/" {
		return stack
	}
	for _, name := range strings.Split(s.path[1:], "/") {
		cur := stack[len(stack)-1]
		p := joinPath(cur.path, name)
		if m := v.mountAt(p); m != nil {
			stack = append(stack, step{path: p, ino: m.root, mnt: m})
			continue
		}
		ino, err := cur.ino.Lookup(ctx, name)
		if err != nil {
			return nil
		}
		stack = append(stack, step{path: p, ino: ino, mnt: cur.mnt})
	}
	return stack
}

// splitPath splits p into its non-empty components and appends rest.
func splitPath(p string, rest []string) []string {
	n := 0
	for _, part := range strings.Split(p, "/") {
		if part != "" {
			n++
		}
	}
	out := make([]string, 0, n+len(rest))
	for _, part := range strings.Split(p, "/") {
		if part != "" {
			out = append(out, part)
		}
	}
	return append(out, rest...)
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// Realpath resolves path fully (every symlink followed) to the canonical
// absolute path of an existing object.
func (v *VFS) Realpath(ctx context.Context, c *Caller, path string) (string, error) {
	r, err := v.resolve(ctx, c, path, true)
	if err != nil {
		return "", errno.Path("realpath", path, err)
	}
	if r.node.ino == nil && r.magic == nil {
		return "", errno.Path("realpath", path, errno.ENOENT)
	}
	return r.node.path, nil
}
