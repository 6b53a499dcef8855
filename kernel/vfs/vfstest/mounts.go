package vfstest

import (
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// mountOther mounts a fresh filesystem from the factory at path.
func (e *env) mountOther(path string, opts vfs.MountOptions) {
	e.t.Helper()
	e.mkdir(path, 0o755)
	if err := e.v.Mount(e.ctx, vfs.Root, e.p(path), e.newFS(e.t), opts); err != nil {
		e.t.Fatalf("mount %s: %v", path, err)
	}
}

var mountChecks = []check{
	{"dev_differs_across_mounts", func(t *testing.T, e *env) {
		e.mountOther("/other", vfs.MountOptions{})
		if e.stat("/").Dev == e.stat("/other").Dev {
			t.Fatal("two mounts share st_dev")
		}
	}},
	{"readonly_mount", func(t *testing.T, e *env) {
		// The VFS's read-only mount flag holds even over a writable
		// filesystem.
		e.mountOther("/ro", vfs.MountOptions{ReadOnly: true})
		_, err := e.open(e.root, "/ro/f", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create on read-only mount", err, errno.EROFS)
		wantErrno(t, "mkdir on read-only mount", e.v.Mkdir(e.ctx, e.root, e.p("/ro/d"), 0o755), errno.EROFS)
		wantErrno(t, "chmod read-only mount root", e.v.SetAttr(e.ctx, e.root, e.p("/ro"), true,
			vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}), errno.EROFS)
		wantErrno(t, "access W_OK on read-only mount", e.v.Access(e.ctx, e.root, e.p("/ro"), vfs.AccessWrite), errno.EROFS)
		if st, err := e.v.Statfs(e.ctx, e.root, e.p("/ro")); err != nil || !st.ReadOnly {
			t.Fatalf("statfs of read-only mount: %+v, %v", st, err)
		}
		e.write("/still-writable", "x")
	}},
	{"mountpoint_busy", func(t *testing.T, e *env) {
		e.mountOther("/m", vfs.MountOptions{})
		e.write("/f", "")
		e.mkdir("/empty", 0o755)
		wantErrno(t, "rmdir mount point", e.v.Rmdir(e.ctx, e.root, e.p("/m")), errno.EBUSY)
		wantErrno(t, "rename mount point", e.rename("/m", "/m2"), errno.EBUSY)
		wantErrno(t, "rename dir onto mount point", e.rename("/empty", "/m"), errno.EBUSY)
		wantErrno(t, "mount over a mount", e.v.Mount(e.ctx, vfs.Root, e.p("/m"), e.newFS(t), vfs.MountOptions{}), errno.EBUSY)
		wantErrno(t, "mount on a file", e.v.Mount(e.ctx, vfs.Root, e.p("/f"), e.newFS(t), vfs.MountOptions{}), errno.ENOTDIR)
		wantErrno(t, "mount as non-root", e.v.Mount(e.ctx, e.user, e.p("/empty"), e.newFS(t), vfs.MountOptions{}), errno.EPERM)
	}},
	{"unmount", func(t *testing.T, e *env) {
		e.mountOther("/m", vfs.MountOptions{})
		e.write("/m/f", "inside")
		f := e.mustOpen("/m/f", vfs.O_RDONLY, 0)
		wantErrno(t, "unmount", e.v.Unmount(e.ctx, vfs.Root, e.p("/m")), 0)
		if e.exists("/m/f") {
			t.Fatal("mounted file visible after unmount")
		}
		wantErrno(t, "unmount again", e.v.Unmount(e.ctx, vfs.Root, e.p("/m")), errno.EINVAL)
		// Files still open on an unmounted filesystem keep working.
		if s, err := readAll(e.ctx, f); s != "inside" || err != nil {
			t.Fatalf("read after unmount = %q, %v", s, err)
		}
	}},
}
