package vfstest

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

func (e *env) rename(oldp, newp string) error {
	return e.v.Rename(e.ctx, e.root, e.p(oldp), e.p(newp))
}

func (e *env) exists(path string) bool {
	_, err := e.v.Lstat(e.ctx, e.root, e.p(path))
	return err == nil
}

var renameChecks = []check{
	{"file", func(t *testing.T, e *env) {
		e.write("/a", "A")
		ino := e.stat("/a").Ino
		wantErrno(t, "rename", e.rename("/a", "/b"), 0)
		if e.exists("/a") || e.read("/b") != "A" || e.stat("/b").Ino != ino {
			t.Fatal("rename did not move the file")
		}
	}},
	{"replace_file", func(t *testing.T, e *env) {
		e.write("/a", "new")
		e.write("/b", "old")
		old := e.mustOpen("/b", vfs.O_RDONLY, 0)
		wantErrno(t, "rename", e.rename("/a", "/b"), 0)
		if e.exists("/a") || e.read("/b") != "new" {
			t.Fatal("replace failed")
		}
		if s, _ := readAll(e.ctx, old); s != "old" {
			t.Fatalf("open fd of replaced file reads %q", s)
		}
	}},
	{"replace_atomic", func(t *testing.T, e *env) {
		// While one goroutine keeps replacing /target, readers never find
		// it missing or see a half state.
		e.write("/target", "v")
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300 && !stop.Load(); i++ {
				e.write("/tmp", "v")
				if err := e.rename("/tmp", "/target"); err != nil {
					t.Errorf("rename: %v", err)
					return
				}
			}
			stop.Store(true)
		}()
		for !stop.Load() {
			s, err := e.readFile(e.root, "/target")
			if err != nil || s != "v" {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("reader saw %q, %v during replace", s, err)
			}
		}
		wg.Wait()
	}},
	{"dir", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/d/f", "x")
		e.mkdir("/e", 0o755)
		wantErrno(t, "move dir", e.rename("/d", "/e/d2"), 0)
		if e.read("/e/d2/f") != "x" || e.exists("/d") {
			t.Fatal("dir not moved")
		}
		if got := e.stat("/e").Nlink; got != 3 {
			t.Fatalf("new parent nlink = %d, want 3", got)
		}
		// ".." of the moved directory is its new parent.
		if !sameFile(e.stat("/e/d2/.."), e.stat("/e")) {
			t.Fatal("moved dir's .. is not its new parent")
		}
	}},
	{"replace_empty_dir", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/d/f", "x")
		e.mkdir("/e", 0o755)
		wantErrno(t, "dir onto empty dir", e.rename("/d", "/e"), 0)
		if e.read("/e/f") != "x" || e.exists("/d") {
			t.Fatal("dir replace failed")
		}
	}},
	{"enotempty", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.mkdir("/e", 0o755)
		e.write("/e/f", "x")
		wantErrno(t, "dir onto non-empty dir", e.rename("/d", "/e"), errno.ENOTEMPTY)
		if !e.exists("/d") || e.read("/e/f") != "x" {
			t.Fatal("failed rename changed something")
		}
		e.mkdir("/d/sub", 0o755)
		wantErrno(t, "dir onto its ancestor", e.rename("/d/sub", "/d"), errno.ENOTEMPTY)
	}},
	{"type_mismatch", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/f", "")
		wantErrno(t, "file onto dir", e.rename("/f", "/d"), errno.EISDIR)
		wantErrno(t, "dir onto file", e.rename("/d", "/f"), errno.ENOTDIR)
		wantErrno(t, "file to name/ ", e.rename("/f", "/g/"), errno.ENOTDIR)
	}},
	{"into_own_subtree", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.mkdir("/d/e", 0o755)
		wantErrno(t, "dir into itself", e.rename("/d", "/d/x"), errno.EINVAL)
		wantErrno(t, "dir into its subdir", e.rename("/d", "/d/e/x"), errno.EINVAL)
		e.symlink("d/e", "/sl")
		wantErrno(t, "dir into its subdir via symlink", e.rename("/d", "/sl/x"), errno.EINVAL)
		if !e.exists("/d/e") {
			t.Fatal("tree damaged")
		}
	}},
	{"onto_itself", func(t *testing.T, e *env) {
		e.write("/a", "x")
		wantErrno(t, "rename onto itself", e.rename("/a", "/a"), 0)
		e.v.Link(e.ctx, e.root, e.p("/a"), e.p("/b"))
		wantErrno(t, "rename between links of one inode", e.rename("/a", "/b"), 0)
		if !e.exists("/a") || !e.exists("/b") {
			t.Fatal("rename between hard links removed a name")
		}
		e.mkdir("/d", 0o755)
		wantErrno(t, "dir onto itself", e.rename("/d", "/d"), 0)
	}},
	{"missing", func(t *testing.T, e *env) {
		wantErrno(t, "rename missing", e.rename("/nope", "/x"), errno.ENOENT)
		e.write("/a", "")
		wantErrno(t, "rename into missing dir", e.rename("/a", "/no/a"), errno.ENOENT)
	}},
	{"exdev", func(t *testing.T, e *env) {
		e.write("/a", "")
		e.mkdir("/other", 0o755)
		if err := e.v.Mount(e.ctx, vfs.Root, e.p("/other"), e.newFS(t), vfs.MountOptions{}); err != nil {
			t.Fatalf("mount: %v", err)
		}
		wantErrno(t, "rename across mounts", e.rename("/a", "/other/a"), errno.EXDEV)
		wantErrno(t, "rename a mount point", e.rename("/other", "/moved"), errno.EBUSY)
		if !e.exists("/a") {
			t.Fatal("failed rename removed the source")
		}
	}},
	{"symlink_not_followed", func(t *testing.T, e *env) {
		e.write("/f", "")
		e.symlink("f", "/l")
		wantErrno(t, "rename symlink", e.rename("/l", "/l2"), 0)
		if vfs.TypeOf(e.lstat("/l2").Mode) != vfs.TypeSymlink || !e.exists("/f") {
			t.Fatal("rename followed the symlink")
		}
	}},
	{"readdir_after", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/d/a", "")
		e.write("/d/b", "")
		wantErrno(t, "rename", e.rename("/d/a", "/d/c"), 0)
		if got := sorted(e.list("/d", 10)); !slices.Equal(got, []string{".", "..", "b", "c"}) {
			t.Fatalf("entries after rename: %v", got)
		}
	}},
}
