package vfstest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var symlinkChecks = []check{
	{"relative", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/d/f", "rel")
		e.symlink("f", "/d/link")
		e.symlink("../d/f", "/d/up")
		e.symlink("d", "/dlink")
		for _, p := range []string{"/d/link", "/d/up", "/dlink/f", "/dlink/link", "/dlink/../d/f"} {
			if got := e.read(p); got != "rel" {
				t.Fatalf("read %s = %q", p, got)
			}
		}
	}},
	{"absolute", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/d/f", "abs")
		e.symlink(e.p("/d/f"), "/link")
		if got := e.read("/link"); got != "abs" {
			t.Fatalf("read through absolute link = %q", got)
		}
		if !sameFile(e.stat("/link"), e.stat("/d/f")) {
			t.Fatal("stat through link is not the target")
		}
	}},
	{"dangling", func(t *testing.T, e *env) {
		e.symlink("nowhere", "/dangling")
		_, err := e.v.Stat(e.ctx, e.root, e.p("/dangling"))
		wantErrno(t, "stat dangling", err, errno.ENOENT)
		st := e.lstat("/dangling")
		if st.Type() != vfs.TypeSymlink || st.Size != int64(len("nowhere")) {
			t.Fatalf("lstat dangling = %+v", st)
		}
		if got, err := e.v.Readlink(e.ctx, e.root, e.p("/dangling")); got != "nowhere" || err != nil {
			t.Fatalf("readlink = %q, %v", got, err)
		}
		// Creating through a dangling link creates its target.
		f, err := e.open(e.root, "/dangling", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create through dangling link", err, 0)
		f.DecRef()
		if vfs.TypeOf(e.lstat("/nowhere").Mode) != vfs.TypeRegular {
			t.Fatal("target not created")
		}
	}},
	{"readlink", func(t *testing.T, e *env) {
		target := "some/../odd//target/"
		e.symlink(target, "/l")
		if got, err := e.v.Readlink(e.ctx, e.root, e.p("/l")); got != target || err != nil {
			t.Fatalf("readlink = %q, %v; want the target verbatim", got, err)
		}
		e.write("/f", "")
		_, err := e.v.Readlink(e.ctx, e.root, e.p("/f"))
		wantErrno(t, "readlink of a file", err, errno.EINVAL)
		_, err = e.v.Readlink(e.ctx, e.root, e.p("/missing"))
		wantErrno(t, "readlink missing", err, errno.ENOENT)
	}},
	{"symlink_errors", func(t *testing.T, e *env) {
		e.write("/f", "")
		wantErrno(t, "symlink over existing", e.v.Symlink(e.ctx, e.root, "x", e.p("/f")), errno.EEXIST)
		wantErrno(t, "empty target", e.v.Symlink(e.ctx, e.root, "", e.p("/e")), errno.ENOENT)
		wantErrno(t, "target too long", e.v.Symlink(e.ctx, e.root, strings.Repeat("a", vfs.PathMax), e.p("/l")), errno.ENAMETOOLONG)
		wantErrno(t, "symlink in missing dir", e.v.Symlink(e.ctx, e.root, "x", e.p("/no/l")), errno.ENOENT)
	}},
	{"loop", func(t *testing.T, e *env) {
		e.symlink("b", "/a")
		e.symlink("a", "/b")
		e.symlink("self", "/self")
		for _, p := range []string{"/a", "/self", "/a/x"} {
			_, err := e.v.Stat(e.ctx, e.root, e.p(p))
			wantErrno(t, "stat "+p, err, errno.ELOOP)
		}
		_, err := e.open(e.root, "/a", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create through loop", err, errno.ELOOP)
		// lstat of the link itself needs no following.
		if vfs.TypeOf(e.lstat("/a").Mode) != vfs.TypeSymlink {
			t.Fatal("lstat of loop link")
		}
	}},
	{"chain_40_ok_41_eloop", func(t *testing.T, e *env) {
		e.write("/target", "end")
		// l1 -> target, l2 -> l1, ... lN -> l(N-1): reading lN follows N
		// links.
		e.symlink("target", "/l1")
		for i := 2; i <= 41; i++ {
			e.symlink(fmt.Sprintf("l%d", i-1), fmt.Sprintf("/l%d", i))
		}
		if got := e.read("/l40"); got != "end" {
			t.Fatalf("40 hops: %q", got)
		}
		_, err := e.readFile(e.root, "/l41")
		wantErrno(t, "41 hops", err, errno.ELOOP)
	}},
	{"chain_in_middle", func(t *testing.T, e *env) {
		// Hops count across the whole resolution, not per component.
		e.mkdir("/d", 0o755)
		e.write("/d/f", "x")
		e.symlink("d", "/m1")
		for i := 2; i <= 40; i++ {
			e.symlink(fmt.Sprintf("m%d", i-1), fmt.Sprintf("/m%d", i))
		}
		if got := e.read("/m40/f"); got != "x" {
			t.Fatalf("40 hops then a file: %q", got)
		}
		e.symlink("f", "/d/fl")
		_, err := e.readFile(e.root, "/m40/fl")
		wantErrno(t, "40 hops then one more", err, errno.ELOOP)
	}},
	{"trailing_slash", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/f", "")
		e.symlink("d", "/dl")
		e.symlink("f", "/fl")
		if st := e.stat("/dl/"); st.Type() != vfs.TypeDir {
			t.Fatal("dl/ is not the directory")
		}
		_, err := e.v.Lstat(e.ctx, e.root, e.p("/fl/"))
		wantErrno(t, "fl/ (link to file)", err, errno.ENOTDIR)
		_, err = e.v.Stat(e.ctx, e.root, e.p("/f/"))
		wantErrno(t, "f/", err, errno.ENOTDIR)
	}},
	{"symlink_owner", func(t *testing.T, e *env) {
		e.chmod("/", 0o777)
		wantErrno(t, "symlink as user", e.v.Symlink(e.ctx, e.user, "x", e.p("/ul")), 0)
		if st := e.lstat("/ul"); st.UID != 1000 || st.GID != 1000 || st.Mode != vfs.S_IFLNK|0o777 {
			t.Fatalf("symlink stat = %+v", st)
		}
	}},
}

var linkChecks = []check{
	{"hard_link", func(t *testing.T, e *env) {
		e.write("/a", "shared")
		wantErrno(t, "link", e.v.Link(e.ctx, e.root, e.p("/a"), e.p("/b")), 0)
		sa, sb := e.stat("/a"), e.stat("/b")
		if !sameFile(sa, sb) || sa.Nlink != 2 {
			t.Fatalf("links: %+v %+v", sa, sb)
		}
		f := e.mustOpen("/b", vfs.O_WRONLY|vfs.O_APPEND, 0)
		f.Write(e.ctx, []byte("!"))
		if got := e.read("/a"); got != "shared!" {
			t.Fatalf("write through one link, read other: %q", got)
		}
		wantErrno(t, "unlink a", e.v.Unlink(e.ctx, e.root, e.p("/a")), 0)
		if st := e.stat("/b"); st.Nlink != 1 {
			t.Fatalf("nlink after unlink = %d", st.Nlink)
		}
		if got := e.read("/b"); got != "shared!" {
			t.Fatalf("data after unlinking the other name: %q", got)
		}
	}},
	{"link_errors", func(t *testing.T, e *env) {
		e.write("/a", "")
		e.write("/b", "")
		e.mkdir("/d", 0o755)
		wantErrno(t, "link onto existing", e.v.Link(e.ctx, e.root, e.p("/a"), e.p("/b")), errno.EEXIST)
		wantErrno(t, "link a directory", e.v.Link(e.ctx, e.root, e.p("/d"), e.p("/d2")), errno.EPERM)
		wantErrno(t, "link missing", e.v.Link(e.ctx, e.root, e.p("/none"), e.p("/n")), errno.ENOENT)
		wantErrno(t, "link into missing dir", e.v.Link(e.ctx, e.root, e.p("/a"), e.p("/no/a")), errno.ENOENT)
	}},
	{"link_symlink_itself", func(t *testing.T, e *env) {
		// link(2) does not follow a final symlink in oldpath.
		e.write("/f", "")
		e.symlink("f", "/s")
		wantErrno(t, "link symlink", e.v.Link(e.ctx, e.root, e.p("/s"), e.p("/s2")), 0)
		if st := e.lstat("/s2"); st.Type() != vfs.TypeSymlink || !sameFile(st, e.lstat("/s")) {
			t.Fatalf("link of symlink = %+v", st)
		}
	}},
	{"link_across_mounts", func(t *testing.T, e *env) {
		e.write("/a", "")
		e.mkdir("/other", 0o755)
		if err := e.v.Mount(e.ctx, vfs.Root, e.p("/other"), e.newFS(t), vfs.MountOptions{}); err != nil {
			t.Fatalf("mount: %v", err)
		}
		wantErrno(t, "link across mounts", e.v.Link(e.ctx, e.root, e.p("/a"), e.p("/other/a")), errno.EXDEV)
	}},
}
