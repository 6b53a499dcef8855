package vfstest

import (
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var errnoChecks = []check{
	{"enoent", func(t *testing.T, e *env) {
		_, err := e.v.Stat(e.ctx, e.root, e.p("/missing"))
		wantErrno(t, "stat missing", err, errno.ENOENT)
		_, err = e.open(e.root, "/missing", vfs.O_RDONLY, 0)
		wantErrno(t, "open missing", err, errno.ENOENT)
		_, err = e.open(e.root, "/missing/f", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create under missing dir", err, errno.ENOENT)
		wantErrno(t, "unlink missing", e.v.Unlink(e.ctx, e.root, e.p("/missing")), errno.ENOENT)
		_, err = e.v.Stat(e.ctx, e.root, "")
		wantErrno(t, "empty path", err, errno.ENOENT)
	}},
	{"enotdir", func(t *testing.T, e *env) {
		e.write("/f", "")
		_, err := e.v.Stat(e.ctx, e.root, e.p("/f/x"))
		wantErrno(t, "file as dir", err, errno.ENOTDIR)
		_, err = e.open(e.root, "/f/x", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create under a file", err, errno.ENOTDIR)
		_, err = e.v.Stat(e.ctx, e.root, e.p("/f/"))
		wantErrno(t, "trailing slash on file", err, errno.ENOTDIR)
		_, err = e.v.Stat(e.ctx, e.root, e.p("/f/.."))
		wantErrno(t, "file/..", err, errno.ENOTDIR)
		wantErrno(t, "unlink file/", e.v.Unlink(e.ctx, e.root, e.p("/f/")), errno.ENOTDIR)
		wantErrno(t, "rmdir file/", e.v.Rmdir(e.ctx, e.root, e.p("/f/")), errno.ENOTDIR)
		c := *e.root
		c.Cwd = e.p("/f")
		_, err = e.v.Stat(e.ctx, &c, "x")
		wantErrno(t, "cwd is a file", err, errno.ENOTDIR)
	}},
	{"eisdir", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		_, err := e.open(e.root, "/d", vfs.O_WRONLY, 0)
		wantErrno(t, "open dir for writing", err, errno.EISDIR)
		f := e.mustOpen("/d", vfs.O_RDONLY, 0)
		_, err = f.Read(e.ctx, make([]byte, 10))
		wantErrno(t, "read a dir", err, errno.EISDIR)
		wantErrno(t, "unlink dir", e.v.Unlink(e.ctx, e.root, e.p("/d")), errno.EISDIR)
	}},
	{"eexist", func(t *testing.T, e *env) {
		e.write("/f", "")
		e.mkdir("/d", 0o755)
		wantErrno(t, "mkdir existing", e.v.Mkdir(e.ctx, e.root, e.p("/d"), 0o755), errno.EEXIST)
		wantErrno(t, "symlink existing", e.v.Symlink(e.ctx, e.root, "x", e.p("/d")), errno.EEXIST)
		wantErrno(t, "link existing", e.v.Link(e.ctx, e.root, e.p("/f"), e.p("/d")), errno.EEXIST)
		wantErrno(t, "mknod existing", e.v.Mknod(e.ctx, e.root, e.p("/f"), vfs.S_IFREG|0o644), errno.EEXIST)
	}},
	{"enametoolong_component", func(t *testing.T, e *env) {
		ok := strings.Repeat("n", vfs.NameMax)
		e.write("/"+ok, "255")
		if got := e.read("/" + ok); got != "255" {
			t.Fatalf("255-byte name reads %q", got)
		}
		long := strings.Repeat("n", vfs.NameMax+1)
		_, err := e.open(e.root, "/"+long, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create 256-byte name", err, errno.ENAMETOOLONG)
		_, err = e.v.Stat(e.ctx, e.root, e.p("/"+long))
		wantErrno(t, "stat 256-byte name", err, errno.ENAMETOOLONG)
		wantErrno(t, "mkdir 256-byte name", e.v.Mkdir(e.ctx, e.root, e.p("/"+long), 0o755), errno.ENAMETOOLONG)
		wantErrno(t, "symlink 256-byte name", e.v.Symlink(e.ctx, e.root, "x", e.p("/"+long)), errno.ENAMETOOLONG)
		_, err = e.v.Stat(e.ctx, e.root, e.p("/"+long+"/x"))
		wantErrno(t, "256-byte middle component", err, errno.ENAMETOOLONG)
	}},
	{"enametoolong_path", func(t *testing.T, e *env) {
		// PathMax counts the terminating NUL: 4095 bytes are fine, 4096
		// are not.
		dots := func(n int) string {
			p := e.p("/") + strings.Repeat("/.", (n-len(e.p("/")))/2)
			for len(p) < n {
				p += "/"
			}
			return p
		}
		p := dots(vfs.PathMax - 1)
		if len(p) != vfs.PathMax-1 {
			t.Fatalf("built a %d-byte path", len(p))
		}
		st, err := e.v.Stat(e.ctx, e.root, p)
		wantErrno(t, "4095-byte path", err, 0)
		if !sameFile(st, e.stat("/")) {
			t.Fatal("4095-byte path of dots is not the directory")
		}
		_, err = e.v.Stat(e.ctx, e.root, dots(vfs.PathMax))
		wantErrno(t, "4096-byte path", err, errno.ENAMETOOLONG)
		_, err = e.v.Stat(e.ctx, e.root, strings.Repeat("/x", 100_000))
		wantErrno(t, "200 kB path", err, errno.ENAMETOOLONG)
	}},
	{"nul_byte", func(t *testing.T, e *env) {
		e.write("/f", "")
		for _, p := range []string{"/f\x00", "/f\x00/../g", "/\x00", "/d\x00x"} {
			_, err := e.v.Stat(e.ctx, e.root, e.p(p))
			wantErrno(t, "stat "+strings.ReplaceAll(p, "\x00", `\0`), err, errno.EINVAL)
			_, err = e.open(e.root, p, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
			wantErrno(t, "create "+strings.ReplaceAll(p, "\x00", `\0`), err, errno.EINVAL)
		}
		wantErrno(t, "symlink target with NUL", e.v.Symlink(e.ctx, e.root, "a\x00b", e.p("/l")), errno.EINVAL)
		wantErrno(t, "mkdir with NUL", e.v.Mkdir(e.ctx, e.root, e.p("/a\x00b"), 0o755), errno.EINVAL)
	}},
	{"ebadf", func(t *testing.T, e *env) {
		e.write("/f", "x")
		e.mkdir("/d", 0o755)
		ro := e.mustOpen("/f", vfs.O_RDONLY, 0)
		_, err := ro.Write(e.ctx, []byte("x"))
		wantErrno(t, "write O_RDONLY", err, errno.EBADF)
		wo := e.mustOpen("/f", vfs.O_WRONLY, 0)
		_, err = wo.Read(e.ctx, make([]byte, 1))
		wantErrno(t, "read O_WRONLY", err, errno.EBADF)
		d := e.mustOpen("/d", vfs.O_RDONLY, 0)
		_, err = d.Write(e.ctx, []byte("x"))
		wantErrno(t, "write a dir fd", err, errno.EBADF)
		pf := e.mustOpen("/f", vfs.O_PATH, 0)
		_, err = pf.Read(e.ctx, make([]byte, 1))
		wantErrno(t, "read O_PATH", err, errno.EBADF)
	}},
	{"enotdir_readdir_on_file", func(t *testing.T, e *env) {
		e.write("/f", "")
		f := e.mustOpen("/f", vfs.O_RDONLY, 0)
		_, err := f.ReadDir(e.ctx, 10)
		wantErrno(t, "readdir a file", err, errno.ENOTDIR)
	}},
}
