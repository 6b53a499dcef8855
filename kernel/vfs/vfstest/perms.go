package vfstest

import (
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Permission checks run as e.user (uid and gid 1000) against files that
// root made and chmod'ed.
var permChecks = []check{
	{"read_write_bits", func(t *testing.T, e *env) {
		e.write("/secret", "s")
		e.chmod("/secret", 0o600)
		_, err := e.open(e.user, "/secret", vfs.O_RDONLY, 0)
		wantErrno(t, "read 0600 root file", err, errno.EACCES)
		_, err = e.open(e.user, "/secret", vfs.O_WRONLY, 0)
		wantErrno(t, "write 0600 root file", err, errno.EACCES)
		e.chmod("/secret", 0o604)
		if s, err := e.readFile(e.user, "/secret"); s != "s" || err != nil {
			t.Fatalf("read 0604 as other = %q, %v", s, err)
		}
		_, err = e.open(e.user, "/secret", vfs.O_RDWR, 0)
		wantErrno(t, "open 0604 O_RDWR as other", err, errno.EACCES)
		_, err = e.open(e.user, "/secret", vfs.O_WRONLY|vfs.O_TRUNC, 0)
		wantErrno(t, "O_TRUNC 0604 as other", err, errno.EACCES)
		if e.read("/secret") != "s" {
			t.Fatal("denied O_TRUNC truncated the file")
		}
		// Root is not subject to the read and write bits.
		e.chmod("/secret", 0)
		if e.read("/secret") != "s" {
			t.Fatal("root could not read a 0000 file")
		}
	}},
	{"owner_and_group_classes", func(t *testing.T, e *env) {
		e.write("/f", "x")
		// Owner bits apply to the owner even when group or other would
		// allow more.
		e.chown("/f", 1000, 0)
		e.chmod("/f", 0o077)
		_, err := e.open(e.user, "/f", vfs.O_RDONLY, 0)
		wantErrno(t, "owner with 0077", err, errno.EACCES)
		e.chown("/f", 0, 1000)
		e.chmod("/f", 0o640)
		if _, err := e.readFile(e.user, "/f"); err != nil {
			t.Fatalf("group read of 0640: %v", err)
		}
		_, err = e.open(e.user, "/f", vfs.O_WRONLY, 0)
		wantErrno(t, "group write of 0640", err, errno.EACCES)
		c := *e.user
		c.GID = 2000
		c.Groups = []uint32{1000}
		if _, err := e.readFile(&c, "/f"); err != nil {
			t.Fatalf("supplementary group read: %v", err)
		}
	}},
	{"search_bit", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o700)
		e.write("/d/f", "x")
		e.chmod("/d/f", 0o644)
		_, err := e.v.Stat(e.ctx, e.user, e.p("/d/f"))
		wantErrno(t, "stat through 0700 dir", err, errno.EACCES)
		_, err = e.open(e.user, "/d/f", vfs.O_RDONLY, 0)
		wantErrno(t, "open through 0700 dir", err, errno.EACCES)
		e.chmod("/d", 0o711)
		if _, err := e.v.Stat(e.ctx, e.user, e.p("/d/f")); err != nil {
			t.Fatalf("stat through 0711 dir: %v", err)
		}
		_, err = e.open(e.user, "/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		wantErrno(t, "list 0711 dir", err, errno.EACCES)
	}},
	{"create_needs_write_and_search", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		_, err := e.open(e.user, "/d/f", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create in 0755 root dir", err, errno.EACCES)
		wantErrno(t, "mkdir in 0755 root dir", e.v.Mkdir(e.ctx, e.user, e.p("/d/s"), 0o755), errno.EACCES)
		wantErrno(t, "symlink in 0755 root dir", e.v.Symlink(e.ctx, e.user, "x", e.p("/d/l")), errno.EACCES)
		e.write("/d/g", "")
		wantErrno(t, "unlink in 0755 root dir", e.v.Unlink(e.ctx, e.user, e.p("/d/g")), errno.EACCES)
		wantErrno(t, "rename in 0755 root dir", e.v.Rename(e.ctx, e.user, e.p("/d/g"), e.p("/d/h")), errno.EACCES)
		e.chmod("/d", 0o733)
		f, err := e.open(e.user, "/d/f", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create in 0733 dir", err, 0)
		f.DecRef()
		e.chmod("/d", 0o722)
		_, err = e.open(e.user, "/d/f2", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create in 0722 dir (no search)", err, errno.EACCES)
	}},
	{"chmod_chown_ownership", func(t *testing.T, e *env) {
		e.write("/root", "")
		e.write("/mine", "")
		e.chown("/mine", 1000, 1000)
		wantErrno(t, "chmod others' file", e.v.SetAttr(e.ctx, e.user, e.p("/root"), true,
			vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}), errno.EPERM)
		wantErrno(t, "chmod own file", e.v.SetAttr(e.ctx, e.user, e.p("/mine"), true,
			vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}), 0)
		wantErrno(t, "give own file away", e.v.SetAttr(e.ctx, e.user, e.p("/mine"), true,
			vfs.SetAttr{Mask: vfs.SetUID, UID: 0}), errno.EPERM)
		wantErrno(t, "chgrp own file to a foreign group", e.v.SetAttr(e.ctx, e.user, e.p("/mine"), true,
			vfs.SetAttr{Mask: vfs.SetGID, GID: 0}), errno.EPERM)
		wantErrno(t, "utimes of others' file", e.v.SetAttr(e.ctx, e.user, e.p("/root"), true,
			vfs.SetAttr{Mask: vfs.SetMtime, Mtime: past}), errno.EPERM)
		wantErrno(t, "truncate others' 0644 file", e.v.SetAttr(e.ctx, e.user, e.p("/root"), true,
			vfs.SetAttr{Mask: vfs.SetSize, Size: 0}), errno.EACCES)
	}},
	{"sticky_dir", func(t *testing.T, e *env) {
		e.mkdir("/tmp", 0o777)
		e.chmod("/tmp", 0o1777)
		e.write("/tmp/roots", "")
		wantErrno(t, "unlink others' file in sticky dir", e.v.Unlink(e.ctx, e.user, e.p("/tmp/roots")), errno.EPERM)
		wantErrno(t, "rename others' file in sticky dir",
			e.v.Rename(e.ctx, e.user, e.p("/tmp/roots"), e.p("/tmp/x")), errno.EPERM)
		f, err := e.open(e.user, "/tmp/mine", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create in sticky dir", err, 0)
		f.DecRef()
		wantErrno(t, "unlink own file in sticky dir", e.v.Unlink(e.ctx, e.user, e.p("/tmp/mine")), 0)
	}},
	{"exec_bit_for_root", func(t *testing.T, e *env) {
		e.write("/f", "")
		e.chmod("/f", 0o644)
		wantErrno(t, "root X_OK without x bits", e.v.Access(e.ctx, e.root, e.p("/f"), vfs.AccessExecute), errno.EACCES)
		e.chmod("/f", 0o744)
		wantErrno(t, "root X_OK with owner x", e.v.Access(e.ctx, e.root, e.p("/f"), vfs.AccessExecute), 0)
		wantErrno(t, "user X_OK with owner x only", e.v.Access(e.ctx, e.user, e.p("/f"), vfs.AccessExecute), errno.EACCES)
		wantErrno(t, "user R_OK", e.v.Access(e.ctx, e.user, e.p("/f"), vfs.AccessRead), 0)
	}},
}
