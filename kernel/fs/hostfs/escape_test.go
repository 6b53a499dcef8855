package hostfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

const secret = "TOP-SECRET-HOST-DATA"

// escapeFixture is a host layout with a secret outside the mounted root
// and hostile symlinks inside it:
//
//	base/outside/secret        the secret
//	base/outside/sub/deep      the secret again, one level down
//	base/root/                 mounted
//	base/root/abs  -> base/outside     (absolute host path)
//	base/root/rel  -> ../outside       (relative, leaves the root)
//	base/root/up   -> ../../../../..   (far above)
//	base/root/etc  -> /etc
//	base/root/sec  -> base/outside/secret
//	base/root/dir/inner                 a real directory
type escapeFixture struct {
	base, root, outside string
}

func newEscapeFixture(t *testing.T) escapeFixture {
	base := t.TempDir()
	f := escapeFixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	mustMkdir(t, f.outside)
	mustWriteFile(t, filepath.Join(f.outside, "secret"), secret)
	mustMkdir(t, filepath.Join(f.outside, "sub"))
	mustWriteFile(t, filepath.Join(f.outside, "sub", "deep"), secret)
	mustMkdir(t, filepath.Join(f.root, "dir", "inner"))
	mustSymlink(t, f.outside, filepath.Join(f.root, "abs"))
	mustSymlink(t, "../outside", filepath.Join(f.root, "rel"))
	mustSymlink(t, "../../../../..", filepath.Join(f.root, "up"))
	mustSymlink(t, "/etc", filepath.Join(f.root, "etc"))
	mustSymlink(t, filepath.Join(f.outside, "secret"), filepath.Join(f.root, "sec"))
	return f
}

// links are the names of the hostile symlinks, and stale directory inodes
// for them: what a guest would hold if the host had swapped a directory
// for the symlink after the guest looked it up.
var hostileLinks = []string{"abs", "rel", "up", "etc", "sec"}

// writableLink reports whether the test may try mutations through a
// hostile link: only through links into the test's own directories, so
// that a broken build fails the test instead of changing the real / or
// /etc.
func writableLink(name string) bool { return name == "abs" || name == "rel" || name == "sec" }

func TestSymlinksNeverFollowed(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		ctx := context.Background()
		fx := newEscapeFixture(t)
		fs := newFSAt(t, fx.root, Options{}, quirks{noOpenat2: r.noAt2})
		before := hostSnapshot(t, fx.outside)
		rt := root(t, fs)
		for _, name := range hostileLinks {
			t.Run(name, func(t *testing.T) {
				l, err := rt.Lookup(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if l.(vfs.Typed).FileType() != vfs.TypeSymlink {
					t.Fatalf("%s looked up as %v, want a symlink", name, l.(vfs.Typed).FileType())
				}
				if st, err := l.Stat(ctx); err != nil || st.Type() != vfs.TypeSymlink {
					t.Fatalf("Stat = %v, %v; want the link itself", st.Type(), err)
				}
				target, err := os.Readlink(filepath.Join(fx.root, name))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := l.Readlink(ctx); err != nil || got != target {
					t.Fatalf("Readlink = %q, %v", got, err)
				}
				_, err = l.Open(ctx, vfs.O_RDONLY)
				wantErrno(t, "Open", err, errno.ELOOP)
				_, err = l.Open(ctx, vfs.O_RDWR)
				wantErrno(t, "Open rw", err, errno.ELOOP)
				if writableLink(name) {
					wantErrno(t, "truncate", l.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}), errno.EINVAL)
					wantErrno(t, "chmod", l.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}), errno.EOPNOTSUPP)
					// utimes applies to the link itself, never its target.
					if err := l.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMtime, Mtime: time.Unix(1, 0)}); err != nil {
						t.Fatalf("utimes on link: %v", err)
					}
				}

				// A stale directory inode naming the link: every
				// directory operation must refuse to pass through it.
				stale := &inode{fs: fs, path: name, typ: vfs.TypeDir}
				reads := map[string]func() error{
					"lookup": func() error { _, err := stale.Lookup(ctx, "secret"); return err },
					"readdir": func() error {
						_, err := stale.ReadDir(ctx, 0, 100)
						return err
					},
					"open child": func() error {
						_, err := (&inode{fs: fs, path: name + "/secret", typ: vfs.TypeRegular}).Open(ctx, vfs.O_RDONLY)
						return err
					},
					"stat child": func() error {
						_, err := (&inode{fs: fs, path: name + "/secret", typ: vfs.TypeRegular}).Stat(ctx)
						return err
					},
					// Two levels down, so the fallback walk passes the
					// link as an intermediate component.
					"read grandchild": func() error {
						data, err := readAll(ctx, &inode{fs: fs, path: name + "/sub/deep", typ: vfs.TypeRegular})
						if err == nil && strings.Contains(string(data), secret) {
							t.Fatal("read the secret")
						}
						return err
					},
					"readdir child": func() error {
						_, err := (&inode{fs: fs, path: name + "/sub", typ: vfs.TypeDir}).ReadDir(ctx, 0, 10)
						return err
					},
				}
				for op, f := range reads {
					wantErrno(t, op+" through "+name, f(), errno.ELOOP, errno.ENOTDIR)
				}
				if !writableLink(name) {
					return
				}
				for op, f := range map[string]func() error{
					"create":  func() error { _, err := stale.Create(ctx, "planted", vfs.CreateOptions{Mode: 0o644}); return err },
					"mkdir":   func() error { _, err := stale.Mkdir(ctx, "planted", vfs.CreateOptions{Mode: 0o755}); return err },
					"symlink": func() error { _, err := stale.Symlink(ctx, "planted", "x", vfs.CreateOptions{}); return err },
					"unlink":  func() error { return stale.Unlink(ctx, "secret") },
					"rmdir":   func() error { return stale.Rmdir(ctx, "secret") },
					"rename":  func() error { return stale.Rename(ctx, "secret", rt, "stolen") },
					"link": func() error {
						return rt.Link(ctx, "stolen", &inode{fs: fs, path: name + "/secret", typ: vfs.TypeRegular})
					},
					"create grandchild": func() error {
						_, err := (&inode{fs: fs, path: name + "/sub", typ: vfs.TypeDir}).Create(ctx, "planted",
							vfs.CreateOptions{Mode: 0o644})
						return err
					},
					"chmod child": func() error {
						return (&inode{fs: fs, path: name + "/secret", typ: vfs.TypeRegular}).SetAttr(ctx,
							vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777})
					},
				} {
					err := f()
					wantErrno(t, op+" through "+name, err, errno.ELOOP, errno.ENOTDIR)
				}
			})
		}
		// Link the symlink itself: the new name is another symlink, not
		// a hard link to the file outside.
		if err := rt.Link(ctx, "linked", walkTo(t, fs, "sec")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(fx.root, "linked")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("linked = %v, %v; want a symlink", fi, err)
		}
		if after := hostSnapshot(t, fx.outside); !mapsEqual(before, after) {
			t.Fatalf("outside changed:\n%v\n%v", before, after)
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(fx.outside, "secret"), &st); err != nil || st.Nlink != 1 {
			t.Fatal("the secret gained a hard link")
		}
	})
}

// TestCraftedPaths feeds inodes with paths the VFS can never produce
// (".." components, absolute paths, empty components), as a bug elsewhere
// might: resolution must still stay beneath the root.
func TestCraftedPaths(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		ctx := context.Background()
		fx := newEscapeFixture(t)
		fs := newFSAt(t, fx.root, Options{}, quirks{noOpenat2: r.noAt2})
		for _, p := range []string{
			"../outside/secret", "dir/../../outside/secret", fx.outside + "/secret",
			"dir//../../outside/secret", "./../outside/secret", "dir/./../../outside/secret",
		} {
			n := &inode{fs: fs, path: p, typ: vfs.TypeRegular}
			if got, err := readAll(ctx, n); err == nil || strings.Contains(string(got), secret) {
				t.Errorf("read %q = %q, %v", p, got, err)
			}
			if _, err := n.Stat(ctx); err == nil {
				t.Errorf("stat %q succeeded", p)
			}
			d := &inode{fs: fs, path: p[:strings.LastIndexByte(p, '/')], typ: vfs.TypeDir}
			if ents, err := d.ReadDir(ctx, 0, 100); err == nil {
				t.Errorf("readdir %q = %v", d.path, ents)
			}
			if _, err := d.Create(ctx, "planted", vfs.CreateOptions{Mode: 0o644}); err == nil {
				t.Errorf("create in %q succeeded", d.path)
			}
		}
		if _, err := os.Lstat(filepath.Join(fx.outside, "planted")); err == nil {
			t.Fatal("a file was planted outside the root")
		}
	})
}

// TestEscapeThroughVFS mounts the host directory as a VM's root and tries
// the classic escapes through guest paths: symlinks are resolved by the VFS
// in the guest's namespace, so none of them reaches the host's files.
func TestEscapeThroughVFS(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		ctx := context.Background()
		fx := newEscapeFixture(t)
		fs := newFSAt(t, fx.root, Options{}, quirks{noOpenat2: r.noAt2})
		v, err := vfs.New(ctx, fs, vfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := &vfs.Caller{Cwd: "/", Umask: 0o022}
		for _, p := range []string{
			"/abs/secret", "/rel/secret", "/up/outside/secret", "/sec", "/etc/passwd",
			"/../outside/secret", "/dir/../../outside/secret", "/up/etc/passwd", "/etc/hostname",
		} {
			f, err := v.Open(ctx, c, p, vfs.O_RDONLY, 0)
			if err == nil {
				buf := make([]byte, 4096)
				n, _ := f.Read(ctx, buf)
				f.DecRef()
				t.Fatalf("open %s succeeded, read %q", p, buf[:n])
			}
			if strings.Contains(err.Error(), fx.base) {
				t.Errorf("error %q names a host path", err)
			}
		}
		// Writes through hostile links land inside the root, if anywhere.
		// (Only links into the test's own directories are tried: a broken
		// build must not be able to write into the real /etc.)
		for _, p := range []string{"/abs/planted", "/rel/planted", "/up/planted", "/up/outside/planted"} {
			if f, err := v.Open(ctx, c, p, vfs.O_WRONLY|vfs.O_CREAT, 0o644); err == nil {
				f.DecRef()
			}
			_ = v.Mkdir(ctx, c, p+"-dir", 0o755)
		}
		if ents, _ := os.ReadDir(fx.outside); len(ents) != 2 {
			t.Fatalf("outside holds %v", ents)
		}
		// "/up" resolves to the guest's root: "/up/dir" is "/dir".
		if st, err := v.Stat(ctx, c, "/up/dir/inner"); err != nil || st.Type() != vfs.TypeDir {
			t.Fatalf("stat /up/dir/inner = %v, %v", st.Type(), err)
		}
	})
}

func TestFIFONeverOpened(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		ctx := context.Background()
		fs, host := newFS(t, Options{}, quirks{noOpenat2: r.noAt2})
		if err := unix.Mkfifo(filepath.Join(host, "fifo"), 0o666); err != nil {
			t.Fatal(err)
		}
		rt := root(t, fs)
		p, err := rt.Lookup(ctx, "fifo")
		if err != nil {
			t.Fatal(err)
		}
		if p.(vfs.Typed).FileType() != vfs.TypeFIFO {
			t.Fatalf("type %v", p.(vfs.Typed).FileType())
		}
		// Any of these would block forever if the FIFO were opened
		// without O_NONBLOCK (no writer or reader exists); and it must
		// not be opened at all.
		noOpens(t, filepath.Join(host, "fifo"), func() {
			for _, fl := range []vfs.OpenFlags{vfs.O_RDONLY, vfs.O_WRONLY, vfs.O_RDWR} {
				_, err := p.Open(ctx, fl)
				wantErrno(t, "Open fifo", err, errno.ENXIO)
			}
		})
		wantErrno(t, "truncate fifo", p.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}), errno.EINVAL)
		wantErrno(t, "chmod fifo", p.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}), errno.EPERM)
		ents := listAll(t, rt, 10)
		if len(ents) != 1 || ents[0].Type != vfs.TypeFIFO {
			t.Fatalf("ReadDir = %+v", ents)
		}
		// Through the VFS without a special opener: ENXIO, no block.
		v, err := vfs.New(ctx, fs, vfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Open(ctx, &vfs.Caller{Cwd: "/"}, "/fifo", vfs.O_RDONLY, 0)
		wantErrno(t, "vfs open fifo", err, errno.ENXIO)
	})
}

// TestDeviceNeverOpened checks a device node the host placed in the tree
// is refused before it is opened. /dev/null is a safe device to try with:
// a hard link to it is not possible across filesystems, so it is made with
// mknod when the process may (root), and the check then runs on it.
func TestDeviceNeverOpened(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{}, quirks{})
	err := unix.Mknod(filepath.Join(host, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
	if err != nil {
		// Without CAP_MKNOD a socket stands in as a non-regular,
		// non-FIFO node.
		fd, serr := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if serr != nil {
			t.Fatal(serr)
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(host, "null")}); err != nil {
			t.Fatal(err)
		}
	}
	n := walkTo(t, fs, "null")
	noOpens(t, filepath.Join(host, "null"), func() {
		for _, fl := range []vfs.OpenFlags{vfs.O_RDONLY, vfs.O_WRONLY, vfs.O_RDWR} {
			_, err := n.Open(ctx, fl)
			wantErrno(t, "Open device", err, errno.ENXIO)
		}
		wantErrno(t, "truncate device", n.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}), errno.EINVAL)
	})
}

// noOpens runs f and fails if the host file at path was opened meanwhile,
// as inotify reports it (opening a device can have side effects, so a
// refusal after the fact is not enough). It first checks that an open of
// that file is seen at all.
func noOpens(t *testing.T, path string, f func()) {
	t.Helper()
	ifd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ifd)
	if _, err := unix.InotifyAddWatch(ifd, path, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		buf := make([]byte, 4096)
		total := 0
		for {
			n, err := unix.Read(ifd, buf)
			if err == unix.EAGAIN {
				return total
			}
			if err != nil {
				t.Fatal(err)
			}
			total += n / unix.SizeofInotifyEvent
		}
	}
	// Calibrate: a non-blocking open of the node must be reported.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		if count() == 0 {
			t.Fatal("inotify did not report a real open")
		}
	}
	f()
	if n := count(); n != 0 {
		t.Fatalf("the host node was opened %d times", n)
	}
}
