package vfstest

import (
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// past is a time every backend can store exactly (whole seconds).
var past = time.Unix(1_000_000_000, 0)

var attrChecks = []check{
	{"chmod", func(t *testing.T, e *env) {
		e.write("/f", "")
		e.chmod("/f", 0o4751)
		if st := e.stat("/f"); st.Mode != vfs.S_IFREG|0o4751 {
			t.Fatalf("mode = %o", st.Mode)
		}
		e.mkdir("/d", 0o755)
		e.chmod("/d", 0o1777)
		if st := e.stat("/d"); st.Mode != vfs.S_IFDIR|0o1777 {
			t.Fatalf("dir mode = %o", st.Mode)
		}
	}},
	{"chmod_follows_symlink", func(t *testing.T, e *env) {
		e.write("/f", "")
		e.symlink("f", "/l")
		e.setAttr("/l", vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600})
		if st := e.stat("/f"); st.Mode&0o777 != 0o600 {
			t.Fatalf("chmod through link: target mode %o", st.Mode)
		}
		if st := e.lstat("/l"); st.Mode != vfs.S_IFLNK|0o777 {
			t.Fatalf("link mode changed to %o", st.Mode)
		}
		// A symlink's own mode cannot change.
		err := e.v.SetAttr(e.ctx, e.root, e.p("/l"), false, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600})
		wantErrno(t, "lchmod", err, errno.EOPNOTSUPP)
		if st := e.lstat("/l"); st.Mode != vfs.S_IFLNK|0o777 {
			t.Fatalf("lchmod changed the link mode to %o", st.Mode)
		}
	}},
	{"chown", func(t *testing.T, e *env) {
		e.write("/f", "")
		e.chown("/f", 123, 456)
		if st := e.stat("/f"); st.UID != 123 || st.GID != 456 {
			t.Fatalf("owner %d:%d", st.UID, st.GID)
		}
		e.symlink("f", "/l")
		err := e.v.SetAttr(e.ctx, e.root, e.p("/l"), false, vfs.SetAttr{Mask: vfs.SetUID, UID: 7})
		wantErrno(t, "lchown", err, 0)
		if st := e.lstat("/l"); st.UID != 7 {
			t.Fatalf("lchown: link uid %d", st.UID)
		}
		if st := e.stat("/f"); st.UID != 123 {
			t.Fatalf("lchown changed the target: uid %d", st.UID)
		}
	}},
	{"chown_clears_setuid", func(t *testing.T, e *env) {
		// chown(2) clears set-user-ID and set-group-ID (with group exec)
		// on a regular file, even when root does it.
		e.write("/f", "")
		e.chmod("/f", 0o6755)
		e.chown("/f", 1, 1)
		if st := e.stat("/f"); st.Mode != vfs.S_IFREG|0o755 {
			t.Fatalf("mode after chown = %o, want 100755", st.Mode)
		}
	}},
	{"creator_owns", func(t *testing.T, e *env) {
		e.chmod("/", 0o777)
		f, err := e.open(e.user, "/mine", vfs.O_WRONLY|vfs.O_CREAT, 0o640)
		wantErrno(t, "create as user", err, 0)
		f.DecRef()
		wantErrno(t, "mkdir as user", e.v.Mkdir(e.ctx, e.user, e.p("/mydir"), 0o700), 0)
		for _, p := range []string{"/mine", "/mydir"} {
			if st := e.stat(p); st.UID != 1000 || st.GID != 1000 {
				t.Fatalf("%s owned by %d:%d, want 1000:1000", p, st.UID, st.GID)
			}
		}
	}},
	{"setgid_dir_inherits_group", func(t *testing.T, e *env) {
		e.mkdir("/g", 0o777)
		e.chown("/g", 0, 500)
		e.chmod("/g", 0o2777)
		f, err := e.open(e.user, "/g/f", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create", err, 0)
		f.DecRef()
		wantErrno(t, "mkdir", e.v.Mkdir(e.ctx, e.user, e.p("/g/sub"), 0o755), 0)
		if st := e.stat("/g/f"); st.GID != 500 {
			t.Fatalf("file gid %d, want 500", st.GID)
		}
		if st := e.stat("/g/sub"); st.GID != 500 || st.Mode&vfs.S_ISGID == 0 {
			t.Fatalf("subdir gid %d mode %o; want 500 with setgid", st.GID, st.Mode)
		}
	}},
	{"utimes", func(t *testing.T, e *env) {
		e.write("/f", "")
		at, mt := past, past.Add(time.Hour)
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: at, Mtime: mt})
		if st := e.stat("/f"); !st.Atime.Equal(at) || !st.Mtime.Equal(mt) {
			t.Fatalf("times %v %v, want %v %v", st.Atime, st.Mtime, at, mt)
		}
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetMtime, Mtime: at})
		if st := e.stat("/f"); !st.Atime.Equal(at) || !st.Mtime.Equal(at) {
			t.Fatal("setting only mtime changed atime")
		}
	}},
	{"mtime_on_write", func(t *testing.T, e *env) {
		e.write("/f", "abc")
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: past, Mtime: past})
		f := e.mustOpen("/f", vfs.O_WRONLY, 0)
		f.Write(e.ctx, []byte("x"))
		st := e.stat("/f")
		if !st.Mtime.After(past) || st.Ctime.Before(st.Mtime) {
			t.Fatalf("after write: mtime %v ctime %v", st.Mtime, st.Ctime)
		}
	}},
	{"mtime_on_truncate", func(t *testing.T, e *env) {
		e.write("/f", "abc")
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetMtime, Mtime: past})
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetSize, Size: 1})
		if st := e.stat("/f"); !st.Mtime.After(past) {
			t.Fatalf("truncate left mtime %v", st.Mtime)
		}
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetMtime, Mtime: past})
		f := e.mustOpen("/f", vfs.O_WRONLY|vfs.O_TRUNC, 0)
		_ = f
		if st := e.stat("/f"); !st.Mtime.After(past) {
			t.Fatalf("O_TRUNC left mtime %v", st.Mtime)
		}
	}},
	{"ctime_on_chmod", func(t *testing.T, e *env) {
		e.write("/f", "")
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetMtime, Mtime: past})
		st0 := e.stat("/f")
		waitPast(st0.Ctime)
		e.chmod("/f", 0o600)
		st1 := e.stat("/f")
		if !st1.Ctime.After(st0.Ctime) {
			t.Fatalf("chmod: ctime %v -> %v", st0.Ctime, st1.Ctime)
		}
		if !st1.Mtime.Equal(past) {
			t.Fatalf("chmod changed mtime to %v", st1.Mtime)
		}
	}},
	{"ctime_on_link_and_rename", func(t *testing.T, e *env) {
		e.write("/f", "")
		st0 := e.stat("/f")
		waitPast(st0.Ctime)
		e.v.Link(e.ctx, e.root, e.p("/f"), e.p("/g"))
		st1 := e.stat("/f")
		if !st1.Ctime.After(st0.Ctime) {
			t.Fatalf("link: ctime %v -> %v", st0.Ctime, st1.Ctime)
		}
		waitPast(st1.Ctime)
		e.v.Rename(e.ctx, e.root, e.p("/g"), e.p("/h"))
		if st2 := e.stat("/h"); !st2.Ctime.After(st1.Ctime) {
			t.Fatalf("rename: ctime %v -> %v", st1.Ctime, st2.Ctime)
		}
	}},
	{"parent_times_on_create_remove", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		touch := func() { e.setAttr("/d", vfs.SetAttr{Mask: vfs.SetMtime, Mtime: past}) }
		ops := []struct {
			name string
			do   func() error
		}{
			{"create", func() error {
				f, err := e.open(e.root, "/d/f", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
				if err == nil {
					f.DecRef()
				}
				return err
			}},
			{"mkdir", func() error { return e.v.Mkdir(e.ctx, e.root, e.p("/d/s"), 0o755) }},
			{"symlink", func() error { return e.v.Symlink(e.ctx, e.root, "x", e.p("/d/l")) }},
			{"link", func() error { return e.v.Link(e.ctx, e.root, e.p("/d/f"), e.p("/d/h")) }},
			{"rename", func() error { return e.v.Rename(e.ctx, e.root, e.p("/d/h"), e.p("/d/h2")) }},
			{"unlink", func() error { return e.v.Unlink(e.ctx, e.root, e.p("/d/f")) }},
			{"rmdir", func() error { return e.v.Rmdir(e.ctx, e.root, e.p("/d/s")) }},
		}
		for _, op := range ops {
			touch()
			wantErrno(t, op.name, op.do(), 0)
			if st := e.stat("/d"); !st.Mtime.After(past) || !st.Ctime.After(past) {
				t.Fatalf("%s left parent mtime %v ctime %v", op.name, st.Mtime, st.Ctime)
			}
		}
	}},
	{"statfs", func(t *testing.T, e *env) {
		st, err := e.v.Statfs(e.ctx, e.root, e.p("/"))
		wantErrno(t, "statfs", err, 0)
		if st.ReadOnly {
			t.Fatal("writable filesystem reports ReadOnly")
		}
		if st.NameMax != 0 && st.NameMax < 14 {
			t.Fatalf("NameMax %d", st.NameMax)
		}
	}},
	{"errors", func(t *testing.T, e *env) {
		err := e.v.SetAttr(e.ctx, e.root, e.p("/missing"), true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o644})
		wantErrno(t, "chmod missing", err, errno.ENOENT)
	}},
}
