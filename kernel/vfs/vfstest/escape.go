package vfstest

import (
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// vstat stats a VFS path (not mapped through e.p).
func (e *env) vstat(c *vfs.Caller, path string) vfs.Stat {
	e.t.Helper()
	st, err := e.v.Stat(e.ctx, c, path)
	if err != nil {
		e.t.Fatalf("stat %s: %v", path, err)
	}
	return st
}

var escapeChecks = []check{
	{"dotdot_at_root", func(t *testing.T, e *env) {
		root := e.vstat(e.root, "/")
		for _, p := range []string{"/..", "/../..", "/../../..", "/./../.", "//..//..//"} {
			if !sameFile(e.vstat(e.root, p), root) {
				t.Fatalf("%s is not /", p)
			}
		}
		c := *e.root
		c.Cwd = "/"
		if !sameFile(e.vstat(&c, "../../.."), root) {
			t.Fatal("relative ../../.. from / is not /")
		}
	}},
	{"dotdot_then_path", func(t *testing.T, e *env) {
		// "/../../etc" is "/etc": the walk never leaves the root.
		e.mkdir("/etc", 0o755)
		e.write("/etc/passwd", "guest")
		want := e.stat("/etc/passwd")
		for _, p := range []string{"/../../" + e.p("/etc/passwd"), "/.." + e.p("/etc/../etc/passwd")} {
			if !sameFile(e.vstat(e.root, p), want) {
				t.Fatalf("%s is not %s", p, e.p("/etc/passwd"))
			}
		}
		if s, err := e.readFile(e.root, "/../../../etc/passwd"); e.base == "" && (s != "guest" || err != nil) {
			t.Fatalf("/../../../etc/passwd = %q, %v", s, err)
		}
	}},
	{"symlink_dotdot_stays_inside", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.mkdir("/d/e", 0o755)
		e.symlink("../../../../../../../..", "/d/e/up")
		e.symlink("../../../../../../../../etc", "/d/e/etc")
		e.mkdir("/etc", 0o755)
		root := e.vstat(e.root, "/")
		if !sameFile(e.stat("/d/e/up"), root) {
			t.Fatal("symlink to ../../.. escaped the root")
		}
		if e.base == "" && !sameFile(e.stat("/d/e/etc"), e.stat("/etc")) {
			t.Fatal("symlink to ../../../etc is not /etc")
		}
		_, err := e.v.Stat(e.ctx, e.root, e.p("/d/e/up/../../x"))
		wantErrno(t, "past the root through a symlink", err, errno.ENOENT)
	}},
	{"absolute_symlink_is_guest_root", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.symlink("/", "/d/r")
		if !sameFile(e.stat("/d/r"), e.vstat(e.root, "/")) {
			t.Fatal("symlink to / is not the VFS root")
		}
		e.symlink("/../../..", "/d/r2")
		if !sameFile(e.stat("/d/r2"), e.vstat(e.root, "/")) {
			t.Fatal("symlink to /../../.. is not the VFS root")
		}
	}},
	{"mount_dotdot", func(t *testing.T, e *env) {
		// ".." from a mount's root goes to the directory holding the mount
		// point, not to anything of the mounted filesystem.
		e.mkdir("/m", 0o755)
		e.write("/marker", "")
		if err := e.v.Mount(e.ctx, vfs.Root, e.p("/m"), e.newFS(t), vfs.MountOptions{}); err != nil {
			t.Fatalf("mount: %v", err)
		}
		if !sameFile(e.stat("/m/../marker"), e.stat("/marker")) {
			t.Fatal("/m/.. is not the mount's parent")
		}
		c := *e.root
		c.Cwd = e.p("/m")
		if !sameFile(e.vstat(&c, "../marker"), e.stat("/marker")) {
			t.Fatal("relative .. from a mount root")
		}
	}},
}

// readOnlyChecks run against filesystems from the read-only factory. The
// filesystem may hold anything: the checks find a regular file and a
// directory to work on if there are any.
var readOnlyChecks = []check{
	{"mutations_erofs", func(t *testing.T, e *env) {
		ops := map[string]error{
			"create":  openErr(e.open(e.root, "/new", vfs.O_WRONLY|vfs.O_CREAT, 0o644)),
			"mkdir":   e.v.Mkdir(e.ctx, e.root, e.p("/newdir"), 0o755),
			"symlink": e.v.Symlink(e.ctx, e.root, "x", e.p("/newlink")),
			"mknod":   e.v.Mknod(e.ctx, e.root, e.p("/newfifo"), vfs.S_IFIFO|0o644),
			"chmod /": e.v.SetAttr(e.ctx, e.root, e.p("/"), true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}),
			"chown /": e.v.SetAttr(e.ctx, e.root, e.p("/"), true, vfs.SetAttr{Mask: vfs.SetUID, UID: 5}),
			"utimes /": e.v.SetAttr(e.ctx, e.root, e.p("/"), true,
				vfs.SetAttr{Mask: vfs.SetMtime, Mtime: past}),
		}
		for name, err := range ops {
			wantErrno(t, name, err, errno.EROFS)
		}
		st, err := e.v.Statfs(e.ctx, e.root, e.p("/"))
		if err != nil || !st.ReadOnly {
			t.Fatalf("statfs: ReadOnly %v, %v", st.ReadOnly, err)
		}
	}},
	{"existing_entries", func(t *testing.T, e *env) {
		names := e.list("/", 16)
		if len(names) < 2 || names[0] != "." || names[1] != ".." {
			t.Fatalf("listing of a read-only root: %v", names)
		}
		for _, n := range names[2:] {
			p := "/" + n
			st := e.lstat(p)
			wantErrno(t, "unlink "+p, e.v.Unlink(e.ctx, e.root, e.p(p)), expectRemoveErr(st))
			wantErrno(t, "rename "+p, e.rename(p, "/renamed"), errno.EROFS)
			wantErrno(t, "link "+p, e.v.Link(e.ctx, e.root, e.p(p), e.p("/linked")), expectLinkErr(st))
			switch st.Type() {
			case vfs.TypeRegular:
				_, err := e.open(e.root, p, vfs.O_WRONLY, 0)
				wantErrno(t, "open for writing "+p, err, errno.EROFS)
				_, err = e.open(e.root, p, vfs.O_RDONLY|vfs.O_TRUNC, 0)
				wantErrno(t, "O_TRUNC "+p, err, errno.EROFS)
				wantErrno(t, "truncate "+p, e.v.SetAttr(e.ctx, e.root, e.p(p), false,
					vfs.SetAttr{Mask: vfs.SetSize, Size: 0}), errno.EROFS)
				if _, err := e.readFile(e.root, p); err != nil {
					t.Fatalf("read %s: %v", p, err)
				}
			case vfs.TypeDir:
				wantErrno(t, "rmdir "+p, e.v.Rmdir(e.ctx, e.root, e.p(p)), errno.EROFS)
			}
		}
	}},
}

func openErr(f vfs.File, err error) error {
	if f != nil {
		f.DecRef()
	}
	return err
}

func expectRemoveErr(st vfs.Stat) errno.Errno {
	if st.Type() == vfs.TypeDir {
		return errno.EISDIR
	}
	return errno.EROFS
}

func expectLinkErr(st vfs.Stat) errno.Errno {
	if st.Type() == vfs.TypeDir {
		return errno.EPERM
	}
	return errno.EROFS
}
