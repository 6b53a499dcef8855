package hostfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

func TestNewRejectsBadRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	mustWriteFile(t, file, "x")
	for _, tc := range []struct {
		name string
		root string
		opts Options
		want errno.Errno
	}{
		{"empty", "", Options{}, errno.EINVAL},
		{"missing", filepath.Join(dir, "nope"), Options{}, errno.ENOENT},
		{"file", file, Options{}, errno.ENOTDIR},
		{"negative max size", dir, Options{MaxFileSize: -1}, errno.EINVAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.root, tc.opts)
			wantErrno(t, "New", err, tc.want)
			if tc.root != "" && strings.Contains(err.Error(), tc.root) {
				t.Errorf("error %q names the host path", err)
			}
		})
	}
}

func TestBasicOperations(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		ctx := context.Background()
		fs, host := newFS(t, Options{UID: 1000, GID: 100, AllowExternalSymlinks: true}, quirks{noOpenat2: r.noAt2})
		rt := root(t, fs)

		// Files the guest creates are owned by the creator; host files by
		// the mount's default owner.
		mustWriteFile(t, filepath.Join(host, "hostfile"), "")
		if st, _ := walkTo(t, fs, "hostfile").Stat(ctx); st.UID != 1000 || st.GID != 100 {
			t.Fatalf("host file owned by %d:%d, want 1000:100", st.UID, st.GID)
		}
		if err := os.Remove(filepath.Join(host, "hostfile")); err != nil {
			t.Fatal(err)
		}
		me := func(mode uint32) vfs.CreateOptions { return vfs.CreateOptions{Mode: mode, UID: 1000, GID: 100} }
		d, err := rt.Mkdir(ctx, "dir", me(vfs.S_IFDIR|0o750))
		if err != nil {
			t.Fatal(err)
		}
		f, err := d.Create(ctx, "file", me(vfs.S_IFREG|0o640))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Create(ctx, "file", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o640}); err == nil {
			t.Fatal("second Create succeeded")
		} else {
			wantErrno(t, "Create existing", err, errno.EEXIST)
		}
		h, err := f.Open(ctx, vfs.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := h.WriteAt(ctx, []byte("hello world"), 0); err != nil || n != 11 {
			t.Fatalf("WriteAt = %d, %v", n, err)
		}
		buf := make([]byte, 5)
		if n, err := h.ReadAt(ctx, buf, 6); err != nil || string(buf[:n]) != "world" {
			t.Fatalf("ReadAt = %q, %v", buf[:n], err)
		}
		if n, err := h.ReadAt(ctx, buf, 100); n != 0 || err != nil {
			t.Fatalf("ReadAt past EOF = %d, %v; want 0, nil", n, err)
		}
		if err := h.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		wantErrno(t, "second Close", h.Close(), errno.EBADF)
		if got, _ := os.ReadFile(filepath.Join(host, "dir", "file")); string(got) != "hello world" {
			t.Fatalf("host file = %q", got)
		}

		// Modes are exactly what was asked, whatever the host umask;
		// ownership is the virtual owner.
		old := unix.Umask(0o077)
		defer unix.Umask(old)
		g, err := d.Create(ctx, "g", me(vfs.S_IFREG|0o666))
		if err != nil {
			t.Fatal(err)
		}
		sd, err := d.Mkdir(ctx, "sub", vfs.CreateOptions{Mode: vfs.S_IFDIR | 0o775, UID: 1000, GID: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			n    vfs.Inode
			mode uint32
		}{{d, vfs.S_IFDIR | 0o750}, {f, vfs.S_IFREG | 0o640}, {g, vfs.S_IFREG | 0o666}, {sd, vfs.S_IFDIR | 0o775}} {
			st, err := tc.n.Stat(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode != tc.mode || st.UID != 1000 || st.GID != 100 {
				t.Errorf("stat = mode %o uid %d gid %d; want %o 1000 100", st.Mode, st.UID, st.GID, tc.mode)
			}
		}
		if st, _ := d.Stat(ctx); st.Nlink != 3 {
			t.Errorf("dir nlink = %d, want 3", st.Nlink)
		}

		// Symlinks are stored verbatim and typed.
		l, err := d.Symlink(ctx, "link", "../../somewhere/else", vfs.CreateOptions{Mode: vfs.S_IFLNK | 0o777})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := l.Readlink(ctx); err != nil || got != "../../somewhere/else" {
			t.Fatalf("Readlink = %q, %v", got, err)
		}
		if lt, err := d.Lookup(ctx, "link"); err != nil || lt.(vfs.Typed).FileType() != vfs.TypeSymlink {
			t.Fatalf("Lookup link = %v, %v", lt, err)
		}

		// Hard links share the inode.
		if err := rt.Link(ctx, "hard", f); err != nil {
			t.Fatal(err)
		}
		hst, _ := walkTo(t, fs, "hard").Stat(ctx)
		fst, _ := f.Stat(ctx)
		if hst.Ino != fst.Ino || fst.Nlink != 2 {
			t.Fatalf("hard link: ino %d vs %d, nlink %d", hst.Ino, fst.Ino, fst.Nlink)
		}

		// ReadDir lists exactly the entries, typed.
		ents := listAll(t, d, 2)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name+":"+typeName(e.Type))
		}
		slices.Sort(names)
		want := []string{"file:reg", "g:reg", "link:lnk", "sub:dir"}
		if !slices.Equal(names, want) {
			t.Fatalf("ReadDir = %v, want %v", names, want)
		}

		// Rename across directories, replacing a file.
		if err := d.Rename(ctx, "g", rt, "hard"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Lookup(ctx, "g"); err == nil {
			t.Fatal("g still exists after rename")
		}
		if st, _ := f.Stat(ctx); st.Nlink != 1 {
			t.Fatalf("nlink after replacing a link = %d", st.Nlink)
		}
		if err := rt.Rename(ctx, "hard", d, "moved"); err != nil {
			t.Fatal(err)
		}

		// Removal.
		wantErrno(t, "Rmdir non-empty", rt.Rmdir(ctx, "dir"), errno.ENOTEMPTY)
		wantErrno(t, "Unlink dir", d.Unlink(ctx, "sub"), errno.EISDIR)
		wantErrno(t, "Rmdir file", d.Rmdir(ctx, "file"), errno.ENOTDIR)
		for _, name := range []string{"file", "link", "moved"} {
			if err := d.Unlink(ctx, name); err != nil {
				t.Fatalf("Unlink %s: %v", name, err)
			}
		}
		if err := d.Rmdir(ctx, "sub"); err != nil {
			t.Fatal(err)
		}
		if err := rt.Rmdir(ctx, "dir"); err != nil {
			t.Fatal(err)
		}
		if ents := listAll(t, rt, 10); len(ents) != 0 {
			t.Fatalf("root not empty: %v", ents)
		}
	})
}

func typeName(t vfs.FileType) string {
	switch t {
	case vfs.TypeRegular:
		return "reg"
	case vfs.TypeDir:
		return "dir"
	case vfs.TypeSymlink:
		return "lnk"
	case vfs.TypeFIFO:
		return "fifo"
	}
	return "other"
}

func TestErrnoMapping(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{}, quirks{})
	mustMkdir(t, filepath.Join(host, "d", "full"))
	mustWriteFile(t, filepath.Join(host, "d", "full", "x"), "x")
	mustWriteFile(t, filepath.Join(host, "f"), "data")
	mustSymlink(t, "f", filepath.Join(host, "l"))
	rt := root(t, fs)
	d := walkTo(t, fs, "d")
	f := walkTo(t, fs, "f")
	l := walkTo(t, fs, "l")
	// A stale inode: looked up as a directory, now a file.
	stale := &inode{fs: fs, path: "f", typ: vfs.TypeDir}
	long := strings.Repeat("n", 256)

	cases := []struct {
		name string
		err  func() error
		want errno.Errno
	}{
		{"lookup missing", func() error { _, err := rt.Lookup(ctx, "missing"); return err }, errno.ENOENT},
		{"lookup through file", func() error { _, err := stale.Lookup(ctx, "x"); return err }, errno.ENOTDIR},
		{"lookup long name", func() error { _, err := rt.Lookup(ctx, long); return err }, errno.ENAMETOOLONG},
		{"lookup dotdot", func() error { _, err := rt.Lookup(ctx, ".."); return err }, errno.EINVAL},
		{"lookup slash", func() error { _, err := rt.Lookup(ctx, "d/full"); return err }, errno.EINVAL},
		{"lookup NUL", func() error { _, err := rt.Lookup(ctx, "a\x00b"); return err }, errno.EINVAL},
		{"mkdir existing", func() error { _, err := rt.Mkdir(ctx, "d", vfs.CreateOptions{Mode: 0o755}); return err }, errno.EEXIST},
		{"create over symlink", func() error { _, err := rt.Create(ctx, "l", vfs.CreateOptions{Mode: 0o644}); return err }, errno.EEXIST},
		{"create fifo", func() error { _, err := rt.Create(ctx, "p", vfs.CreateOptions{Mode: vfs.S_IFIFO | 0o644}); return err }, errno.EPERM},
		{"create socket", func() error { _, err := rt.Create(ctx, "s", vfs.CreateOptions{Mode: vfs.S_IFSOCK | 0o644}); return err }, errno.EPERM},
		{"create chardev", func() error {
			_, err := rt.Create(ctx, "c", vfs.CreateOptions{Mode: vfs.S_IFCHR | 0o644, Rdev: 0x103})
			return err
		}, errno.EPERM},
		{"create blockdev", func() error { _, err := rt.Create(ctx, "b", vfs.CreateOptions{Mode: vfs.S_IFBLK | 0o644}); return err }, errno.EPERM},
		{"create in file", func() error { _, err := stale.Create(ctx, "x", vfs.CreateOptions{Mode: 0o644}); return err }, errno.ENOTDIR},
		{"symlink empty target", func() error { _, err := rt.Symlink(ctx, "s", "", vfs.CreateOptions{}); return err }, errno.ENOENT},
		{"symlink long target", func() error {
			_, err := rt.Symlink(ctx, "s", strings.Repeat("a", vfs.PathMax), vfs.CreateOptions{})
			return err
		}, errno.ENAMETOOLONG},
		{"symlink NUL target", func() error { _, err := rt.Symlink(ctx, "s", "a\x00b", vfs.CreateOptions{}); return err }, errno.EINVAL},
		{"rmdir non-empty", func() error { return d.Rmdir(ctx, "full") }, errno.ENOTEMPTY},
		{"rmdir file", func() error { return rt.Rmdir(ctx, "f") }, errno.ENOTDIR},
		{"rmdir missing", func() error { return rt.Rmdir(ctx, "missing") }, errno.ENOENT},
		{"unlink dir", func() error { return rt.Unlink(ctx, "d") }, errno.EISDIR},
		{"unlink missing", func() error { return rt.Unlink(ctx, "missing") }, errno.ENOENT},
		{"rename missing", func() error { return rt.Rename(ctx, "missing", rt, "x") }, errno.ENOENT},
		{"rename dir over non-empty", func() error {
			if _, err := rt.Mkdir(ctx, "e", vfs.CreateOptions{Mode: 0o755}); err != nil {
				return err
			}
			return rt.Rename(ctx, "e", d, "full")
		}, errno.ENOTEMPTY},
		{"rename file over dir", func() error { return rt.Rename(ctx, "f", d, "full") }, errno.EISDIR},
		{"rename dir over file", func() error { return d.Rename(ctx, "full", rt, "f") }, errno.ENOTDIR},
		{"rename dir into itself", func() error { return rt.Rename(ctx, "d", d, "inside") }, errno.EINVAL},
		{"link dir", func() error { return rt.Link(ctx, "dl", d) }, errno.EPERM},
		{"link existing", func() error { return rt.Link(ctx, "l", f) }, errno.EEXIST},
		{"link root", func() error { return d.Link(ctx, "r", rt) }, errno.EPERM},
		{"readlink file", func() error { _, err := f.Readlink(ctx); return err }, errno.EINVAL},
		{"readlink dir", func() error { _, err := d.Readlink(ctx); return err }, errno.EINVAL},
		{"open dir", func() error { _, err := d.Open(ctx, vfs.O_RDONLY); return err }, errno.EISDIR},
		{"open root", func() error { _, err := rt.Open(ctx, vfs.O_RDONLY); return err }, errno.EISDIR},
		{"open symlink", func() error { _, err := l.Open(ctx, vfs.O_RDONLY); return err }, errno.ELOOP},
		{"open bad accmode", func() error { _, err := f.Open(ctx, vfs.O_ACCMODE); return err }, errno.EINVAL},
		{"readdir file", func() error { _, err := f.ReadDir(ctx, 0, 10); return err }, errno.ENOTDIR},
		{"readdir max 0", func() error { _, err := d.ReadDir(ctx, 0, 0); return err }, errno.EINVAL},
		{"truncate dir", func() error { return d.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}) }, errno.EISDIR},
		{"truncate symlink", func() error { return l.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}) }, errno.EINVAL},
		{"truncate negative", func() error { return f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: -1}) }, errno.EINVAL},
		{"chmod symlink", func() error { return l.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}) }, errno.EOPNOTSUPP},
		{"chmod fifo", func() error {
			if err := unix.Mkfifo(filepath.Join(host, "fifo"), 0o644); err != nil {
				return err
			}
			return walkTo(t, fs, "fifo").SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600})
		}, errno.EPERM},
		{"stat removed", func() error {
			gone := &inode{fs: fs, path: "gone", typ: vfs.TypeRegular}
			_, err := gone.Stat(ctx)
			return err
		}, errno.ENOENT},
		{"link from other fs", func() error {
			other, _ := newFS(t, Options{}, quirks{})
			return rt.Link(ctx, "x", walkOther(t, other))
		}, errno.EXDEV},
		{"rename to other fs", func() error {
			other, _ := newFS(t, Options{}, quirks{})
			return rt.Rename(ctx, "f", root(t, other), "f")
		}, errno.EXDEV},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			wantErrno(t, tc.name, err, tc.want)
			if strings.Contains(err.Error(), host) {
				t.Errorf("error %q names the host path", err)
			}
		})
	}
}

// walkOther creates and returns a file of another filesystem.
func walkOther(t *testing.T, other *FS) vfs.Inode {
	n, err := root(t, other).Create(context.Background(), "o", vfs.CreateOptions{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHostErrMapping(t *testing.T) {
	for _, tc := range []struct {
		in   error
		want errno.Errno
	}{
		{unix.ENOENT, errno.ENOENT},
		{unix.ELOOP, errno.ELOOP},
		{unix.ENOSPC, errno.ENOSPC},
		{unix.EDQUOT, errno.Errno(unix.EDQUOT)},
		{&os.PathError{Op: "open", Path: "/secret/host/path", Err: unix.EACCES}, errno.EACCES},
		{errors.New("/host/path: some host text"), errno.EIO},
		{errno.EROFS, errno.EROFS},
	} {
		got := hostErr(tc.in)
		if got != tc.want {
			t.Errorf("hostErr(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if strings.Contains(got.Error(), "/host") || strings.Contains(got.Error(), "/secret") {
			t.Errorf("hostErr(%v) leaks host text: %q", tc.in, got)
		}
	}
	if hostErr(nil) != nil {
		t.Error("hostErr(nil) != nil")
	}
	if resolveErr(unix.EXDEV) != errno.EACCES {
		t.Error("resolution EXDEV should be EACCES")
	}
}

func TestSetAttr(t *testing.T) {
	for _, q := range []struct {
		name string
		q    quirks
	}{{"fchmodat2", quirks{}}, {"reopen", quirks{noFchmodat2: true}}, {"walk", quirks{noOpenat2: true, noFchmodat2: true}}} {
		t.Run(q.name, func(t *testing.T) {
			ctx := context.Background()
			fs, host := newFS(t, Options{UID: 7, GID: 8}, q.q)
			mustWriteFile(t, filepath.Join(host, "f"), "0123456789")
			mustMkdir(t, filepath.Join(host, "d"))
			f, d := walkTo(t, fs, "f"), walkTo(t, fs, "d")

			// A host file that has setuid is reported without it.
			if err := os.Chmod(filepath.Join(host, "f"), os.ModeSetuid|os.ModeSetgid|0o755); err != nil {
				t.Fatal(err)
			}
			if st, _ := f.Stat(ctx); st.Mode != vfs.S_IFREG|0o755 {
				t.Errorf("reported mode %o, want setuid hidden", st.Mode)
			}

			// chmod keeps setuid/setgid virtual: the guest sees them, the
			// host file never has them. Sticky is real.
			if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: vfs.S_ISUID | vfs.S_ISGID | 0o751}); err != nil {
				t.Fatal(err)
			}
			if err := d.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: vfs.S_ISVTX | vfs.S_ISGID | 0o700}); err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Lstat(filepath.Join(host, "f")); fi.Mode() != 0o751 {
				t.Errorf("host mode of f = %v", fi.Mode())
			}
			if fi, _ := os.Lstat(filepath.Join(host, "d")); fi.Mode() != os.ModeDir|os.ModeSticky|0o700 {
				t.Errorf("host mode of d = %v", fi.Mode())
			}
			if st, _ := f.Stat(ctx); st.Mode != vfs.S_IFREG|vfs.S_ISUID|vfs.S_ISGID|0o751 {
				t.Errorf("guest mode of f = %o", st.Mode)
			}
			if st, _ := d.Stat(ctx); st.Mode != vfs.S_IFDIR|vfs.S_ISVTX|vfs.S_ISGID|0o700 {
				t.Errorf("guest mode of d = %o", st.Mode)
			}

			// Truncate grows and shrinks.
			for _, size := range []int64{3, 1 << 20, 0} {
				if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: size}); err != nil {
					t.Fatal(err)
				}
				if st, _ := f.Stat(ctx); st.Size != size {
					t.Fatalf("size = %d, want %d", st.Size, size)
				}
			}

			// Times, including ones before the epoch and past 2262, which UnixNano
			// cannot represent.
			at := time.Date(1950, 1, 2, 3, 4, 5, 6, time.UTC) // before the epoch; ext4 stores 1901..2446
			mt := time.Date(2400, 6, 7, 8, 9, 10, 11, time.UTC)
			if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: at, Mtime: mt}); err != nil {
				t.Fatal(err)
			}
			st, _ := f.Stat(ctx)
			if !st.Atime.Equal(at) || !st.Mtime.Equal(mt) {
				t.Errorf("times = %v %v, want %v %v", st.Atime, st.Mtime, at, mt)
			}
			// Only mtime: atime stays.
			mt2 := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMtime, Mtime: mt2}); err != nil {
				t.Fatal(err)
			}
			st, _ = f.Stat(ctx)
			if !st.Atime.Equal(at) || !st.Mtime.Equal(mt2) {
				t.Errorf("times = %v %v, want %v %v", st.Atime, st.Mtime, at, mt2)
			}

			// Chown is virtual: the guest sees the new owner, the host file
			// keeps its own, ctime moves, and setuid (and setgid, with
			// group exec) is cleared as Linux clears it.
			var hostBefore unix.Stat_t
			if err := unix.Lstat(filepath.Join(host, "f"), &hostBefore); err != nil {
				t.Fatal(err)
			}
			before := st.Ctime
			time.Sleep(20 * time.Millisecond) // let the host's coarse clock pass ctime's granularity
			if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID, UID: 1234, GID: 5678}); err != nil {
				t.Fatal(err)
			}
			st, _ = f.Stat(ctx)
			if st.UID != 1234 || st.GID != 5678 || st.Mode != vfs.S_IFREG|0o751 {
				t.Errorf("after chown: %d:%d mode %o", st.UID, st.GID, st.Mode)
			}
			if !st.Ctime.After(before) {
				t.Errorf("ctime not bumped by chown: %v -> %v", before, st.Ctime)
			}
			var hostAfter unix.Stat_t
			if err := unix.Lstat(filepath.Join(host, "f"), &hostAfter); err != nil {
				t.Fatal(err)
			}
			if hostAfter.Uid != hostBefore.Uid || hostAfter.Gid != hostBefore.Gid || hostAfter.Mode&suidBits != 0 {
				t.Errorf("host owner changed: %d:%d -> %d:%d, mode %o",
					hostBefore.Uid, hostBefore.Gid, hostAfter.Uid, hostAfter.Gid, hostAfter.Mode)
			}
			// Back to the defaults: the table entry goes away.
			if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID, UID: 7, GID: 8}); err != nil {
				t.Fatal(err)
			}
			if err := d.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}); err != nil {
				t.Fatal(err)
			}
			if n := fs.owners.len(); n != 0 {
				t.Errorf("%d ownership entries left", n)
			}
			if err := f.SetAttr(ctx, vfs.SetAttr{}); err != nil {
				t.Errorf("empty SetAttr: %v", err)
			}

			// The root itself can be changed too.
			rt := root(t, fs)
			if err := rt.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o711}); err != nil {
				t.Fatal(err)
			}
			if st, _ := rt.Stat(ctx); st.Mode != vfs.S_IFDIR|0o711 {
				t.Errorf("root mode %o", st.Mode)
			}
		})
	}
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{ReadOnly: true}, quirks{})
	mustWriteFile(t, filepath.Join(host, "f"), "content")
	mustMkdir(t, filepath.Join(host, "d"))
	mustSymlink(t, "f", filepath.Join(host, "l"))
	before := hostSnapshot(t, host)
	if !fs.ReadOnly() {
		t.Fatal("ReadOnly() = false")
	}
	if s, err := fs.Statfs(ctx); err != nil || !s.ReadOnly {
		t.Fatalf("Statfs = %+v, %v", s, err)
	}
	rt, f, d := root(t, fs), walkTo(t, fs, "f"), walkTo(t, fs, "d")
	mutations := map[string]func() error{
		"create":   func() error { _, err := rt.Create(ctx, "n", vfs.CreateOptions{Mode: 0o644}); return err },
		"mkdir":    func() error { _, err := rt.Mkdir(ctx, "n", vfs.CreateOptions{Mode: 0o755}); return err },
		"symlink":  func() error { _, err := rt.Symlink(ctx, "n", "f", vfs.CreateOptions{}); return err },
		"link":     func() error { return rt.Link(ctx, "n", f) },
		"unlink":   func() error { return rt.Unlink(ctx, "f") },
		"rmdir":    func() error { return rt.Rmdir(ctx, "d") },
		"rename":   func() error { return rt.Rename(ctx, "f", d, "g") },
		"chmod":    func() error { return f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}) },
		"chown":    func() error { return f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetUID}) },
		"truncate": func() error { return f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}) },
		"utimes":   func() error { return f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMtime, Mtime: time.Unix(0, 0)}) },
		"ctime":    func() error { return f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetCtime}) },
		"open wr":  func() error { _, err := f.Open(ctx, vfs.O_WRONLY); return err },
		"open rw":  func() error { _, err := f.Open(ctx, vfs.O_RDWR); return err },
	}
	for name, m := range mutations {
		wantErrno(t, name, m(), errno.EROFS)
	}
	if got, err := readAll(ctx, f); err != nil || string(got) != "content" {
		t.Fatalf("read = %q, %v", got, err)
	}
	if ents := listAll(t, rt, 10); len(ents) != 3 {
		t.Fatalf("ReadDir = %v", ents)
	}
	if after := hostSnapshot(t, host); !mapsEqual(before, after) {
		t.Fatalf("host tree changed under a read-only mount:\n%v\n%v", before, after)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestUnicodeNames(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		ctx := context.Background()
		fs, host := newFS(t, Options{}, quirks{noOpenat2: r.noAt2})
		rt := root(t, fs)
		names := []string{
			"héllo wörld", "日本語のファイル", "emoji-😀🚀", "\xff\xfe invalid utf8", "tab\tand\nnewline",
			"spaces  ", " -leading-dash", "x" + strings.Repeat("é", 127), // 255 bytes
			"a:b*c?d\"e<f>g|h\\i",
		}
		for _, name := range names {
			d, err := rt.Mkdir(ctx, name, vfs.CreateOptions{Mode: 0o755})
			if err != nil {
				t.Fatalf("Mkdir %q: %v", name, err)
			}
			f, err := d.Create(ctx, name, vfs.CreateOptions{Mode: 0o644})
			if err != nil {
				t.Fatalf("Create %q: %v", name, err)
			}
			h, err := f.Open(ctx, vfs.O_WRONLY)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.WriteAt(ctx, []byte(name), 0); err != nil {
				t.Fatal(err)
			}
			h.Close()
			if got, err := os.ReadFile(filepath.Join(host, name, name)); err != nil || string(got) != name {
				t.Fatalf("host file %q = %q, %v", name, got, err)
			}
			if got, err := readAll(ctx, walkTo(t, fs, name, name)); err != nil || string(got) != name {
				t.Fatalf("read %q = %q, %v", name, got, err)
			}
		}
		var got []string
		for _, e := range listAll(t, rt, 3) {
			got = append(got, e.Name)
		}
		slices.Sort(got)
		want := slices.Clone(names)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("ReadDir names = %q, want %q", got, want)
		}
		_, err := rt.Create(ctx, strings.Repeat("é", 128), vfs.CreateOptions{Mode: 0o644}) // 256 bytes
		wantErrno(t, "256-byte name", err, errno.ENAMETOOLONG)
	})
}

func TestBigFiles(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{}, quirks{})
	f, err := root(t, fs).Create(ctx, "big", vfs.CreateOptions{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.Open(ctx, vfs.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	data := make([]byte, 8<<20)
	_, _ = rand.Read(data)
	if n, err := h.WriteAt(ctx, data, 0); err != nil || n != len(data) {
		t.Fatalf("WriteAt 8 MiB = %d, %v", n, err)
	}
	got, err := readAll(ctx, f)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, equal %v, err %v", len(got), bytes.Equal(got, data), err)
	}
	// Sparse write far beyond 4 GiB: offsets are 64-bit all the way.
	const far = 5<<30 + 12345
	if n, err := h.WriteAt(ctx, []byte("tail"), far); err != nil || n != 4 {
		t.Fatalf("WriteAt 5 GiB = %d, %v", n, err)
	}
	st, _ := f.Stat(ctx)
	if st.Size != far+4 {
		t.Fatalf("size = %d", st.Size)
	}
	buf := make([]byte, 8)
	if n, err := h.ReadAt(ctx, buf, far-4); err != nil || n != 8 || string(buf) != "\x00\x00\x00\x00tail" {
		t.Fatalf("ReadAt around 5 GiB = %q, %v", buf[:n], err)
	}
	if fi, _ := os.Stat(filepath.Join(host, "big")); fi.Size() != far+4 {
		t.Fatalf("host size %d", fi.Size())
	}
	if st.Blocks*512 > 64<<20 {
		t.Fatalf("sparse file allocated %d bytes", st.Blocks*512)
	}
}

func TestMaxFileSize(t *testing.T) {
	for _, q := range []quirks{{}, {noRWFAppend: true}} {
		ctx := context.Background()
		fs, _ := newFS(t, Options{MaxFileSize: 100}, q)
		f, err := root(t, fs).Create(ctx, "f", vfs.CreateOptions{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		h, err := f.Open(ctx, vfs.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := h.WriteAt(ctx, make([]byte, 60), 50); err != nil || n != 50 {
			t.Fatalf("WriteAt crossing the limit = %d, %v; want 50, nil", n, err)
		}
		_, err = h.WriteAt(ctx, []byte("x"), 100)
		wantErrno(t, "WriteAt at the limit", err, errno.EFBIG)
		wantErrno(t, "truncate past the limit", f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: 101}), errno.EFBIG)
		if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: 90}); err != nil {
			t.Fatal(err)
		}
		if n, end, err := h.Append(ctx, make([]byte, 20)); err != nil || n != 10 || end != 100 {
			t.Fatalf("Append crossing the limit = %d, %d, %v; want 10, 100, nil", n, end, err)
		}
		_, _, err = h.Append(ctx, []byte("x"))
		wantErrno(t, "Append at the limit", err, errno.EFBIG)
		h.Close()
	}
}

func TestHandleAfterClose(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{}, quirks{})
	mustWriteFile(t, filepath.Join(host, "f"), "x")
	h, err := walkTo(t, fs, "f").Open(ctx, vfs.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = h.ReadAt(ctx, make([]byte, 1), 0)
	wantErrno(t, "ReadAt", err, errno.EBADF)
	_, err = h.WriteAt(ctx, []byte("x"), 0)
	wantErrno(t, "WriteAt", err, errno.EBADF)
	_, _, err = h.Append(ctx, []byte("x"))
	wantErrno(t, "Append", err, errno.EBADF)
	wantErrno(t, "Sync", h.Sync(ctx), errno.EBADF)
	_, err = h.ReadAt(ctx, make([]byte, 1), -1)
	wantErrno(t, "negative offset", err, errno.EINVAL)
}

func TestRelease(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{}, quirks{})
	mustWriteFile(t, filepath.Join(host, "f"), "still here")
	f := walkTo(t, fs, "f")
	h, err := f.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := fs.Release(); err != nil {
		t.Fatal(err)
	}
	wantErrno(t, "second Release", fs.Release(), errno.EBADF)
	// f has an open handle, so its Stat is fstat and keeps working; a
	// path-only inode does not.
	if _, err := f.Stat(ctx); err != nil {
		t.Errorf("fstat after Release: %v", err)
	}
	_, err = (&inode{fs: fs, path: "f", typ: vfs.TypeRegular}).Stat(ctx)
	wantErrno(t, "Stat after Release", err, errno.EBADF)
	_, err = fs.Root(ctx)
	wantErrno(t, "Root after Release", err, errno.EBADF)
	_, err = fs.Statfs(ctx)
	wantErrno(t, "Statfs after Release", err, errno.EBADF)
	buf := make([]byte, 20)
	if n, err := h.ReadAt(ctx, buf, 0); err != nil || string(buf[:n]) != "still here" {
		t.Fatalf("open handle after Release: %q, %v", buf[:n], err)
	}
}

func TestStatfs(t *testing.T) {
	fs, _ := newFS(t, Options{}, quirks{})
	s, err := fs.Statfs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.BlockSize <= 0 || s.Blocks == 0 || s.NameMax != 255 || s.ReadOnly {
		t.Fatalf("Statfs = %+v", s)
	}
}

func TestParseRelease(t *testing.T) {
	for _, tc := range []struct {
		in         string
		maj, minor int
		ok         bool
	}{
		{"6.18.44-fc-v1045", 6, 18, true},
		{"5.4.0", 5, 4, true},
		{"4.19", 4, 19, true},
		{"6.6-rc1", 6, 6, true},
		{"garbage", 0, 0, false},
		{"6", 0, 0, false},
		{"6.x", 0, 0, false},
		{"", 0, 0, false},
	} {
		maj, minor, ok := parseRelease(tc.in)
		if maj != tc.maj || minor != tc.minor || ok != tc.ok {
			t.Errorf("parseRelease(%q) = %d, %d, %v", tc.in, maj, minor, ok)
		}
	}
	if !kernelAtLeast(2, 6) {
		t.Error("kernelAtLeast(2, 6) = false on a kernel with openat2")
	}
}

func TestOwnershipTable(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{UID: 1, GID: 1, MaxOwners: 2}, quirks{})
	rt := root(t, fs)
	as := func(uid uint32, mode uint32) vfs.CreateOptions {
		return vfs.CreateOptions{Mode: mode, UID: uid, GID: uid}
	}

	// Default-owned files need no entry.
	if _, err := rt.Create(ctx, "plain", as(1, 0o644)); err != nil {
		t.Fatal(err)
	}
	a, err := rt.Create(ctx, "a", as(100, 0o644))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Symlink(ctx, "l", "a", as(200, vfs.S_IFLNK|0o777)); err != nil {
		t.Fatal(err)
	}
	if n := fs.owners.len(); n != 2 {
		t.Fatalf("%d entries, want 2", n)
	}
	// The table is full: creating as another owner fails and leaves
	// nothing behind; chown of an untracked file too.
	_, err = rt.Create(ctx, "b", as(300, 0o644))
	wantErrno(t, "create beyond MaxOwners", err, errno.ENOSPC)
	_, err = rt.Mkdir(ctx, "dir", as(300, vfs.S_IFDIR|0o755))
	wantErrno(t, "mkdir beyond MaxOwners", err, errno.ENOSPC)
	_, err = rt.Symlink(ctx, "l2", "x", as(300, 0))
	wantErrno(t, "symlink beyond MaxOwners", err, errno.ENOSPC)
	for _, name := range []string{"b", "dir", "l2"} {
		if _, err := os.Lstat(filepath.Join(host, name)); err == nil {
			t.Errorf("%s left behind after ENOSPC", name)
		}
	}
	plain := walkTo(t, fs, "plain")
	wantErrno(t, "chown beyond MaxOwners", plain.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetUID, UID: 5}), errno.ENOSPC)
	wantErrno(t, "chmod u+s beyond MaxOwners", plain.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: vfs.S_ISUID | 0o755}), errno.ENOSPC)
	// Tracked files can still change.
	if err := a.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetGID, GID: 42}); err != nil {
		t.Fatal(err)
	}

	// Hard links share the entry; it goes with the last link.
	if err := rt.Link(ctx, "a2", a); err != nil {
		t.Fatal(err)
	}
	if st, _ := walkTo(t, fs, "a2").Stat(ctx); st.UID != 100 || st.GID != 42 {
		t.Fatalf("hard link owned by %d:%d", st.UID, st.GID)
	}
	if err := rt.Unlink(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n := fs.owners.len(); n != 2 {
		t.Fatalf("entry dropped while a link remains: %d entries", n)
	}
	// Rename over the last link drops it too.
	if err := rt.Rename(ctx, "plain", rt, "a2"); err != nil {
		t.Fatal(err)
	}
	if n := fs.owners.len(); n != 1 {
		t.Fatalf("%d entries after replacing the last link, want 1", n)
	}
	if err := rt.Unlink(ctx, "l"); err != nil {
		t.Fatal(err)
	}
	if n := fs.owners.len(); n != 0 {
		t.Fatalf("%d entries after unlinking everything", n)
	}
	// Directories: rmdir drops the entry.
	d, err := rt.Mkdir(ctx, "dir", as(300, vfs.S_IFDIR|vfs.S_ISGID|0o755))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := d.Stat(ctx); st.UID != 300 || st.Mode != vfs.S_IFDIR|vfs.S_ISGID|0o755 {
		t.Fatalf("new dir: uid %d mode %o", st.UID, st.Mode)
	}
	if err := rt.Rmdir(ctx, "dir"); err != nil {
		t.Fatal(err)
	}
	if n := fs.owners.len(); n != 0 {
		t.Fatalf("%d entries after rmdir", n)
	}
}

// TestOpenFileOutlivesPath checks fstat, fchmod, ftruncate and futimens on
// an open file keep working after its name is gone, as on Linux.
func TestOpenFileOutlivesPath(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{}, quirks{})
	mustWriteFile(t, filepath.Join(host, "f"), "0123456789")
	f := walkTo(t, fs, "f")
	ro, err := f.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rw, err := f.Open(ctx, vfs.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(host, "f")); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat(ctx)
	if err != nil || st.Nlink != 0 || st.Size != 10 {
		t.Fatalf("fstat after unlink = nlink %d size %d, %v", st.Nlink, st.Size, err)
	}
	mt := time.Unix(1_000_000_000, 0)
	if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode | vfs.SetSize | vfs.SetMtime, Mode: 0o600, Size: 4, Mtime: mt}); err != nil {
		t.Fatal(err)
	}
	st, _ = f.Stat(ctx)
	if st.Mode != vfs.S_IFREG|0o600 || st.Size != 4 || !st.Mtime.Equal(mt) {
		t.Fatalf("after fchmod/ftruncate/futimens: mode %o size %d mtime %v", st.Mode, st.Size, st.Mtime)
	}
	// With only a read-only handle left, truncation has no descriptor to
	// use and falls back to the (gone) path.
	rw.Close()
	wantErrno(t, "truncate via read-only handle", f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}), errno.ENOENT)
	if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o640}); err != nil {
		t.Fatal(err)
	}
	ro.Close()
	_, err = f.Stat(ctx)
	wantErrno(t, "stat once closed", err, errno.ENOENT)
}

func TestReadDirRemovedDir(t *testing.T) {
	fs, host := newFS(t, Options{}, quirks{})
	mustMkdir(t, filepath.Join(host, "d"))
	d := walkTo(t, fs, "d")
	if err := os.Remove(filepath.Join(host, "d")); err != nil {
		t.Fatal(err)
	}
	if ents, err := d.ReadDir(context.Background(), 0, 10); err != nil || len(ents) != 0 {
		t.Fatalf("ReadDir of a removed dir = %v, %v", ents, err)
	}
}
