package vfstest

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var fileChecks = []check{
	{"create_write_read", func(t *testing.T, e *env) {
		f := e.mustOpen("/f", vfs.O_RDWR|vfs.O_CREAT, 0o666)
		if n, err := f.Write(e.ctx, []byte("hello, world")); n != 12 || err != nil {
			t.Fatalf("write = %d, %v", n, err)
		}
		if off, err := f.Seek(e.ctx, 0, vfs.SeekSet); off != 0 || err != nil {
			t.Fatalf("seek = %d, %v", off, err)
		}
		if s, err := readAll(e.ctx, f); s != "hello, world" || err != nil {
			t.Fatalf("read back %q, %v", s, err)
		}
		st := e.stat("/f")
		if st.Type() != vfs.TypeRegular || st.Size != 12 || st.Nlink != 1 {
			t.Fatalf("stat = %+v", st)
		}
		if got := e.read("/f"); got != "hello, world" {
			t.Fatalf("reopen reads %q", got)
		}
	}},
	{"read_at_eof", func(t *testing.T, e *env) {
		e.write("/f", "abc")
		f := e.mustOpen("/f", vfs.O_RDONLY, 0)
		buf := make([]byte, 10)
		if n, err := f.Pread(e.ctx, buf, 3); n != 0 || err != nil {
			t.Fatalf("pread at EOF = %d, %v; want 0, nil", n, err)
		}
		if n, err := f.Pread(e.ctx, buf, 1<<40); n != 0 || err != nil {
			t.Fatalf("pread far past EOF = %d, %v; want 0, nil", n, err)
		}
		f.Seek(e.ctx, 0, vfs.SeekEnd)
		if n, err := f.Read(e.ctx, buf); n != 0 || err != nil {
			t.Fatalf("read at EOF = %d, %v; want 0, nil", n, err)
		}
	}},
	{"pread_pwrite", func(t *testing.T, e *env) {
		e.write("/f", "0123456789")
		f := e.mustOpen("/f", vfs.O_RDWR, 0)
		if n, err := f.Pwrite(e.ctx, []byte("AB"), 4); n != 2 || err != nil {
			t.Fatalf("pwrite = %d, %v", n, err)
		}
		buf := make([]byte, 4)
		if n, err := f.Pread(e.ctx, buf, 3); n != 4 || err != nil || string(buf) != "3AB6" {
			t.Fatalf("pread = %d, %v, %q", n, err, buf)
		}
		// Neither moved the offset.
		if off, _ := f.Seek(e.ctx, 0, vfs.SeekCur); off != 0 {
			t.Fatalf("offset after pread/pwrite = %d", off)
		}
		_, err := f.Pread(e.ctx, buf, -1)
		wantErrno(t, "pread(-1)", err, errno.EINVAL)
		_, err = f.Pwrite(e.ctx, buf, -1)
		wantErrno(t, "pwrite(-1)", err, errno.EINVAL)
	}},
	{"sparse_write", func(t *testing.T, e *env) {
		f := e.mustOpen("/f", vfs.O_RDWR|vfs.O_CREAT, 0o644)
		if n, err := f.Pwrite(e.ctx, []byte("x"), 100000); n != 1 || err != nil {
			t.Fatalf("pwrite past end = %d, %v", n, err)
		}
		got := e.read("/f")
		want := strings.Repeat("\x00", 100000) + "x"
		if got != want {
			t.Fatalf("hole does not read as zeros (len %d)", len(got))
		}
	}},
	{"truncate", func(t *testing.T, e *env) {
		e.write("/f", "0123456789")
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetSize, Size: 4})
		if got := e.read("/f"); got != "0123" {
			t.Fatalf("after shrink: %q", got)
		}
		e.setAttr("/f", vfs.SetAttr{Mask: vfs.SetSize, Size: 6})
		if got := e.read("/f"); got != "0123\x00\x00" {
			t.Fatalf("after grow: %q", got)
		}
		f := e.mustOpen("/f", vfs.O_RDWR, 0)
		wantErrno(t, "ftruncate", f.SetAttr(e.ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: 1}), 0)
		if st, _ := f.Stat(e.ctx); st.Size != 1 {
			t.Fatalf("size after ftruncate = %d", st.Size)
		}
		ro := e.mustOpen("/f", vfs.O_RDONLY, 0)
		wantErrno(t, "ftruncate on O_RDONLY", ro.SetAttr(e.ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: 0}), errno.EINVAL)
		err := e.v.SetAttr(e.ctx, e.root, e.p("/f"), true, vfs.SetAttr{Mask: vfs.SetSize, Size: -1})
		wantErrno(t, "truncate to -1", err, errno.EINVAL)
		e.mkdir("/d", 0o755)
		err = e.v.SetAttr(e.ctx, e.root, e.p("/d"), true, vfs.SetAttr{Mask: vfs.SetSize, Size: 0})
		wantErrno(t, "truncate a directory", err, errno.EISDIR)
	}},
	{"seek", func(t *testing.T, e *env) {
		e.write("/f", "0123456789")
		f := e.mustOpen("/f", vfs.O_RDONLY, 0)
		if off, err := f.Seek(e.ctx, -3, vfs.SeekEnd); off != 7 || err != nil {
			t.Fatalf("SEEK_END-3 = %d, %v", off, err)
		}
		if s, _ := readAll(e.ctx, f); s != "789" {
			t.Fatalf("read after seek = %q", s)
		}
		_, err := f.Seek(e.ctx, -1, vfs.SeekSet)
		wantErrno(t, "seek to -1", err, errno.EINVAL)
		_, err = f.Seek(e.ctx, 0, 42)
		wantErrno(t, "bad whence", err, errno.EINVAL)
	}},
	{"unlink_open_file", func(t *testing.T, e *env) {
		e.write("/f", "keep me")
		f := e.mustOpen("/f", vfs.O_RDWR, 0)
		wantErrno(t, "unlink", e.v.Unlink(e.ctx, e.root, e.p("/f")), 0)
		_, err := e.v.Stat(e.ctx, e.root, e.p("/f"))
		wantErrno(t, "stat after unlink", err, errno.ENOENT)
		if s, err := readAll(e.ctx, f); s != "keep me" || err != nil {
			t.Fatalf("read through open fd after unlink = %q, %v", s, err)
		}
		if st, err := f.Stat(e.ctx); err != nil || st.Nlink != 0 {
			t.Fatalf("fstat after unlink: nlink %d, %v", st.Nlink, err)
		}
		if _, err := f.Write(e.ctx, []byte("!")); err != nil {
			t.Fatalf("write after unlink: %v", err)
		}
	}},
	{"large_file", func(t *testing.T, e *env) {
		data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
		f := e.mustOpen("/big", vfs.O_RDWR|vfs.O_CREAT, 0o644)
		if n, err := f.Write(e.ctx, data); n != len(data) || err != nil {
			t.Fatalf("write 1 MiB = %d, %v", n, err)
		}
		if got := e.read("/big"); got != string(data) {
			t.Fatal("1 MiB read back differs")
		}
	}},
	{"mknod_fifo", func(t *testing.T, e *env) {
		// A backend may refuse FIFOs (EPERM, EOPNOTSUPP); one that makes
		// them must report them correctly.
		err := e.v.Mknod(e.ctx, e.root, e.p("/fifo"), vfs.S_IFIFO|0o644)
		switch errno.Of(err) {
		case 0:
			if st := e.lstat("/fifo"); st.Type() != vfs.TypeFIFO || st.Mode&0o777 != 0o644 {
				t.Fatalf("fifo stat = %+v", st)
			}
			// Without a kernel to serve pipes, the VFS cannot open it.
			_, err := e.open(e.root, "/fifo", vfs.O_RDONLY|vfs.O_NONBLOCK, 0)
			wantErrno(t, "open fifo without OpenSpecial", err, errno.ENXIO)
		case errno.EPERM, errno.EOPNOTSUPP:
		default:
			t.Fatalf("mknod fifo: %v", err)
		}
		err = e.v.Mknod(e.ctx, e.root, e.p("/dev"), vfs.S_IFCHR|0o644)
		wantErrno(t, "mknod chardev", err, errno.EPERM)
	}},
}

var openFlagChecks = []check{
	{"creat_mode_umask", func(t *testing.T, e *env) {
		c := *e.root
		c.Umask = 0o027
		f, err := e.open(&c, "/f", vfs.O_WRONLY|vfs.O_CREAT, 0o777)
		wantErrno(t, "create", err, 0)
		f.DecRef()
		if st := e.stat("/f"); st.Mode != vfs.S_IFREG|0o750 {
			t.Fatalf("mode = %o, want 100750", st.Mode)
		}
	}},
	{"creat_existing_keeps_data", func(t *testing.T, e *env) {
		e.write("/f", "data")
		e.chmod("/f", 0o600)
		f, err := e.open(e.root, "/f", vfs.O_RDWR|vfs.O_CREAT, 0o777)
		wantErrno(t, "open O_CREAT existing", err, 0)
		f.DecRef()
		if st := e.stat("/f"); st.Size != 4 || st.Mode&0o777 != 0o600 {
			t.Fatalf("O_CREAT on existing changed the file: %+v", st)
		}
	}},
	{"excl", func(t *testing.T, e *env) {
		e.write("/f", "x")
		_, err := e.open(e.root, "/f", vfs.O_WRONLY|vfs.O_CREAT|vfs.O_EXCL, 0o644)
		wantErrno(t, "O_EXCL on existing", err, errno.EEXIST)
		e.symlink("/nowhere", "/dangling")
		_, err = e.open(e.root, "/dangling", vfs.O_WRONLY|vfs.O_CREAT|vfs.O_EXCL, 0o644)
		wantErrno(t, "O_EXCL on dangling symlink", err, errno.EEXIST)
		if _, err := e.v.Lstat(e.ctx, e.root, e.p("/nowhere")); !isErrno(err, errno.ENOENT) {
			t.Fatalf("O_EXCL created the symlink's target: %v", err)
		}
		f, err := e.open(e.root, "/new", vfs.O_WRONLY|vfs.O_CREAT|vfs.O_EXCL, 0o644)
		wantErrno(t, "O_EXCL new", err, 0)
		f.DecRef()
	}},
	{"excl_race", func(t *testing.T, e *env) {
		// Of many concurrent O_CREAT|O_EXCL opens, exactly one wins.
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, err := e.open(e.root, "/race", vfs.O_WRONLY|vfs.O_CREAT|vfs.O_EXCL, 0o644)
				if err == nil {
					f.DecRef()
					mu.Lock()
					wins++
					mu.Unlock()
				} else if !isErrno(err, errno.EEXIST) {
					t.Errorf("O_EXCL: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d O_EXCL creators won", wins)
		}
	}},
	{"trunc", func(t *testing.T, e *env) {
		e.write("/f", "0123456789")
		f := e.mustOpen("/f", vfs.O_RDWR|vfs.O_TRUNC, 0)
		if st, _ := f.Stat(e.ctx); st.Size != 0 {
			t.Fatalf("size after O_TRUNC = %d", st.Size)
		}
		if s, _ := readAll(e.ctx, f); s != "" {
			t.Fatalf("O_TRUNC file reads %q", s)
		}
	}},
	{"append", func(t *testing.T, e *env) {
		e.write("/f", "abc")
		f := e.mustOpen("/f", vfs.O_WRONLY|vfs.O_APPEND, 0)
		f.Seek(e.ctx, 0, vfs.SeekSet)
		if n, err := f.Write(e.ctx, []byte("def")); n != 3 || err != nil {
			t.Fatalf("append write = %d, %v", n, err)
		}
		if off, _ := f.Seek(e.ctx, 0, vfs.SeekCur); off != 6 {
			t.Fatalf("offset after append = %d, want 6", off)
		}
		// pwrite on an O_APPEND file appends too, as on Linux.
		if n, err := f.Pwrite(e.ctx, []byte("g"), 0); n != 1 || err != nil {
			t.Fatalf("pwrite = %d, %v", n, err)
		}
		if got := e.read("/f"); got != "abcdefg" {
			t.Fatalf("content = %q", got)
		}
	}},
	{"append_concurrent", func(t *testing.T, e *env) {
		const writers, records = 6, 100
		e.write("/log", "")
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, err := e.open(e.root, "/log", vfs.O_WRONLY|vfs.O_APPEND, 0)
				if err != nil {
					t.Errorf("open: %v", err)
					return
				}
				defer f.DecRef()
				rec := fmt.Sprintf("<%d:%s>\n", w, strings.Repeat("x", 20))
				for range records {
					if n, err := f.Write(e.ctx, []byte(rec)); n != len(rec) || err != nil {
						t.Errorf("append = %d, %v", n, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		lines := strings.Split(strings.TrimSuffix(e.read("/log"), "\n"), "\n")
		if len(lines) != writers*records {
			t.Fatalf("%d records, want %d (lost or torn appends)", len(lines), writers*records)
		}
		for _, l := range lines {
			if len(l) != 24 || l[0] != '<' || l[23] != '>' {
				t.Fatalf("torn record %q", l)
			}
		}
	}},
	{"directory", func(t *testing.T, e *env) {
		e.write("/f", "x")
		e.mkdir("/d", 0o755)
		_, err := e.open(e.root, "/f", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		wantErrno(t, "O_DIRECTORY on file", err, errno.ENOTDIR)
		f, err := e.open(e.root, "/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		wantErrno(t, "O_DIRECTORY on dir", err, 0)
		f.DecRef()
		_, err = e.open(e.root, "/missing", vfs.O_RDONLY|vfs.O_DIRECTORY|vfs.O_CREAT, 0o644)
		if err == nil {
			t.Fatal("O_CREAT|O_DIRECTORY created something")
		}
	}},
	{"nofollow", func(t *testing.T, e *env) {
		e.write("/f", "x")
		e.symlink("f", "/link")
		e.mkdir("/d", 0o755)
		e.write("/d/g", "y")
		e.symlink("d", "/dlink")
		_, err := e.open(e.root, "/link", vfs.O_RDONLY|vfs.O_NOFOLLOW, 0)
		wantErrno(t, "O_NOFOLLOW on symlink", err, errno.ELOOP)
		f, err := e.open(e.root, "/f", vfs.O_RDONLY|vfs.O_NOFOLLOW, 0)
		wantErrno(t, "O_NOFOLLOW on file", err, 0)
		f.DecRef()
		// Only the final component is not followed.
		f, err = e.open(e.root, "/dlink/g", vfs.O_RDONLY|vfs.O_NOFOLLOW, 0)
		wantErrno(t, "O_NOFOLLOW with symlink in the middle", err, 0)
		f.DecRef()
	}},
	{"dir_for_write", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		for _, fl := range []vfs.OpenFlags{vfs.O_WRONLY, vfs.O_RDWR, vfs.O_RDONLY | vfs.O_TRUNC} {
			_, err := e.open(e.root, "/d", fl, 0)
			wantErrno(t, fmt.Sprintf("open dir with %#o", fl), err, errno.EISDIR)
		}
		_, err := e.open(e.root, "/d/", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "O_CREAT on dir path", err, errno.EISDIR)
		_, err = e.open(e.root, "/new/", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "O_CREAT with trailing slash", err, errno.EISDIR)
	}},
	{"creat_on_dir", func(t *testing.T, e *env) {
		// Linux refuses O_CREAT on an existing directory even read-only.
		e.mkdir("/d", 0o755)
		_, err := e.open(e.root, "/d", vfs.O_RDONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "O_RDONLY|O_CREAT on a directory", err, errno.EISDIR)
	}},
	{"access_mode", func(t *testing.T, e *env) {
		e.write("/f", "abc")
		ro := e.mustOpen("/f", vfs.O_RDONLY, 0)
		_, err := ro.Write(e.ctx, []byte("x"))
		wantErrno(t, "write on O_RDONLY", err, errno.EBADF)
		_, err = ro.Pwrite(e.ctx, []byte("x"), 0)
		wantErrno(t, "pwrite on O_RDONLY", err, errno.EBADF)
		wo := e.mustOpen("/f", vfs.O_WRONLY, 0)
		_, err = wo.Read(e.ctx, make([]byte, 3))
		wantErrno(t, "read on O_WRONLY", err, errno.EBADF)
		_, err = wo.Pread(e.ctx, make([]byte, 3), 0)
		wantErrno(t, "pread on O_WRONLY", err, errno.EBADF)
	}},
}

// isErrno reports whether err carries the errno e.
func isErrno(err error, e errno.Errno) bool { return err != nil && errno.Of(err) == e }
