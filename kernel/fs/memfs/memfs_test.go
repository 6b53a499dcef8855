package memfs

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

func TestRoot(t *testing.T) {
	clk := newClock()
	fs := New(Options{Now: clk.Now, RootMode: 0o1777, RootUID: 7, RootGID: 8})
	st := mustStat(t, rootOf(t, fs))
	want := vfs.Stat{Ino: 1, Mode: vfs.S_IFDIR | 0o1777, Nlink: 2, UID: 7, GID: 8, Size: 40,
		Blksize: 4096, Atime: clk.Now(), Mtime: clk.Now(), Ctime: clk.Now()}
	if st != want {
		t.Fatalf("root stat = %+v, want %+v", st, want)
	}
	if got := mustStat(t, rootOf(t, New(Options{}))).Mode; got != vfs.S_IFDIR|0o755 {
		t.Fatalf("default root mode = %o, want 40755", got)
	}
	if fs.ReadOnly() {
		t.Fatal("ReadOnly() = true")
	}
}

func TestCreateTypes(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	tests := []struct {
		name     string
		mode     uint32
		rdev     uint64
		wantType vfs.FileType
		wantErr  errno.Errno
		openErr  errno.Errno
	}{
		{"regular", vfs.S_IFREG | 0o640, 0, vfs.TypeRegular, 0, 0},
		{"no-type-bits", 0o600, 0, vfs.TypeRegular, 0, 0},
		{"fifo", vfs.S_IFIFO | 0o600, 0, vfs.TypeFIFO, 0, errno.ENXIO},
		{"socket", vfs.S_IFSOCK | 0o600, 0, vfs.TypeSocket, 0, errno.ENXIO},
		{"chardev", vfs.S_IFCHR | 0o600, 0x0103, vfs.TypeCharDev, 0, errno.ENXIO},
		{"blockdev", vfs.S_IFBLK | 0o600, 0x0801, vfs.TypeBlock, 0, errno.ENXIO},
		{"dir-type", vfs.S_IFDIR | 0o755, 0, 0, errno.EINVAL, 0},
		{"symlink-type", vfs.S_IFLNK | 0o777, 0, 0, errno.EINVAL, 0},
		{"bogus-type", 0o170000 | 0o644, 0, 0, errno.EINVAL, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := root.Create(bg, tc.name, vfs.CreateOptions{Mode: tc.mode, UID: 3, GID: 4, Rdev: tc.rdev})
			wantErr(t, "Create", err, tc.wantErr)
			if err != nil {
				if _, err := root.Lookup(bg, tc.name); !errorsIs(err, errno.ENOENT) {
					t.Fatalf("failed Create left an entry: %v", err)
				}
				return
			}
			st := mustStat(t, n)
			if st.Type() != tc.wantType || st.Mode&vfs.ModePerm != tc.mode&vfs.ModePerm ||
				st.UID != 3 || st.GID != 4 || st.Rdev != tc.rdev || st.Nlink != 1 {
				t.Fatalf("stat = %+v", st)
			}
			if typed, ok := n.(vfs.Typed); !ok || typed.FileType() != tc.wantType {
				t.Fatalf("FileType() disagrees with Stat")
			}
			got, err := root.Lookup(bg, tc.name)
			if err != nil || got != n {
				t.Fatalf("Lookup = %v, %v", got, err)
			}
			h, err := n.Open(bg, vfs.O_RDWR)
			wantErr(t, "Open", err, tc.openErr)
			if h != nil {
				h.Close()
			}
			_, err = root.Create(bg, tc.name, regOpts(0o644))
			wantErr(t, "Create again", err, errno.EEXIST)
		})
	}
}

func errorsIs(err error, e errno.Errno) bool { return errno.Of(err) == e }

func TestNonDirectoryRefusesDirectoryOps(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	f := mustCreate(t, root, "f")
	s, err := root.Symlink(bg, "s", "f", vfs.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []vfs.Inode{f, s} {
		_, err := n.Lookup(bg, "x")
		wantErr(t, "Lookup", err, errno.ENOTDIR)
		_, err = n.Create(bg, "x", regOpts(0o644))
		wantErr(t, "Create", err, errno.ENOTDIR)
		_, err = n.Mkdir(bg, "x", dirOpts(0o755))
		wantErr(t, "Mkdir", err, errno.ENOTDIR)
		_, err = n.Symlink(bg, "x", "y", vfs.CreateOptions{})
		wantErr(t, "Symlink", err, errno.ENOTDIR)
		wantErr(t, "Link", n.Link(bg, "x", f), errno.ENOTDIR)
		wantErr(t, "Unlink", n.Unlink(bg, "x"), errno.ENOTDIR)
		wantErr(t, "Rmdir", n.Rmdir(bg, "x"), errno.ENOTDIR)
		wantErr(t, "Rename", n.Rename(bg, "x", root, "y"), errno.ENOTDIR)
		_, err = n.ReadDir(bg, 0, 10)
		wantErr(t, "ReadDir", err, errno.ENOTDIR)
	}
	_, err = f.Readlink(bg)
	wantErr(t, "Readlink(file)", err, errno.EINVAL)
	_, err = root.Readlink(bg)
	wantErr(t, "Readlink(dir)", err, errno.EINVAL)
	_, err = root.Open(bg, vfs.O_RDWR)
	wantErr(t, "Open(dir, O_RDWR)", err, errno.EISDIR)
	_, err = root.Lookup(bg, "missing")
	wantErr(t, "Lookup(missing)", err, errno.ENOENT)
}

func TestReadWrite(t *testing.T) {
	fs := New(Options{})
	f := mustCreate(t, rootOf(t, fs), "f")
	h := mustOpen(t, f, vfs.O_RDWR)
	defer h.Close()

	mustWrite(t, h, []byte("hello"), 0)
	mustWrite(t, h, []byte("world"), PageSize-2) // straddles a page boundary
	want := make([]byte, PageSize+3)
	copy(want, "hello")
	copy(want[PageSize-2:], "world")
	if got := readAll(t, f); !bytes.Equal(got, want) {
		t.Fatalf("content mismatch")
	}
	st := mustStat(t, f)
	if st.Size != PageSize+3 {
		t.Fatalf("size = %d", st.Size)
	}
	// Page 0 stores up to its end, page 1 three bytes: 8 + 1 blocks.
	if st.Blocks != 9 {
		t.Fatalf("blocks = %d, want 9", st.Blocks)
	}

	buf := make([]byte, 10)
	n, err := h.ReadAt(bg, buf, st.Size)
	if n != 0 || err != nil {
		t.Fatalf("ReadAt(EOF) = %d, %v; want 0, nil", n, err)
	}
	n, err = h.ReadAt(bg, buf, 1<<50)
	if n != 0 || err != nil {
		t.Fatalf("ReadAt(far beyond EOF) = %d, %v; want 0, nil", n, err)
	}
	n, err = h.ReadAt(bg, buf, st.Size-2)
	if n != 2 || err != nil || string(buf[:2]) != "ld" {
		t.Fatalf("ReadAt(tail) = %d, %v, %q", n, err, buf[:n])
	}
	_, err = h.ReadAt(bg, buf, -1)
	wantErr(t, "ReadAt(-1)", err, errno.EINVAL)
	_, err = h.WriteAt(bg, buf, -1)
	wantErr(t, "WriteAt(-1)", err, errno.EINVAL)
	if n, err := h.WriteAt(bg, nil, 5); n != 0 || err != nil {
		t.Fatalf("empty WriteAt = %d, %v", n, err)
	}

	n, end, err := h.Append(bg, []byte("!!"))
	if n != 2 || end != PageSize+5 || err != nil {
		t.Fatalf("Append = %d, %d, %v", n, end, err)
	}
}

func TestHoles(t *testing.T) {
	fs := New(Options{})
	f := mustCreate(t, rootOf(t, fs), "f")
	h := mustOpen(t, f, vfs.O_RDWR)
	defer h.Close()
	// Write, shrink into the middle of a page, grow again: the bytes that
	// were cut off must read back as zeros, not as the old data.
	mustWrite(t, h, bytes.Repeat([]byte{0xAA}, 3*PageSize), 0)
	if err := f.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: PageSize + 10}); err != nil {
		t.Fatal(err)
	}
	if err := f.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 3 * PageSize}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, h, []byte{1}, 2*PageSize+100)
	want := make([]byte, 3*PageSize)
	for i := range PageSize + 10 {
		want[i] = 0xAA
	}
	want[2*PageSize+100] = 1
	if got := readAll(t, f); !bytes.Equal(got, want) {
		t.Fatal("holes do not read as zeros")
	}
}

func TestSparseTruncate(t *testing.T) {
	fs := New(Options{})
	n := mustCreate(t, rootOf(t, fs), "big")
	if err := n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	f := n.(*file)
	if len(f.c.pages) != 0 {
		t.Fatalf("truncate allocated %d pages", len(f.c.pages))
	}
	h := mustOpen(t, n, vfs.O_RDWR)
	defer h.Close()
	mustWrite(t, h, []byte("x"), 1<<29)
	if len(f.c.pages) != 1 || cap(f.c.pages[(1<<29)/PageSize]) > 64 {
		t.Fatalf("one byte written stored %d pages", len(f.c.pages))
	}
	st := mustStat(t, n)
	if st.Size != 1<<30 || st.Blocks != 1 {
		t.Fatalf("size %d blocks %d", st.Size, st.Blocks)
	}
	buf := []byte{9, 9, 9}
	if n, err := h.ReadAt(bg, buf, 1<<29-1); n != 3 || err != nil || !bytes.Equal(buf, []byte{0, 'x', 0}) {
		t.Fatalf("ReadAt around the byte = %d, %v, %v", n, err, buf)
	}
	// Shrinking past the page frees it.
	if err := n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 10}); err != nil {
		t.Fatal(err)
	}
	if len(f.c.pages) != 0 || mustStat(t, n).Blocks != 0 {
		t.Fatalf("shrink kept %d pages", len(f.c.pages))
	}
}

func TestMaxFileSize(t *testing.T) {
	fs := New(Options{})
	n := mustCreate(t, rootOf(t, fs), "f")
	h := mustOpen(t, n, vfs.O_RDWR)
	defer h.Close()
	wantErr(t, "truncate to max", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: MaxFileSize}), 0)
	wantErr(t, "truncate past max", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: MaxFileSize + 1}), errno.EFBIG)
	wantErr(t, "truncate negative", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: -1}), errno.EINVAL)
	_, err := h.WriteAt(bg, []byte("x"), MaxFileSize)
	wantErr(t, "WriteAt(max)", err, errno.EFBIG)
	_, err = h.WriteAt(bg, []byte("x"), 1<<62)
	wantErr(t, "WriteAt(huge)", err, errno.EFBIG)
	// A write straddling the limit is cut short, as write(2) is.
	if n, err := h.WriteAt(bg, []byte("abcd"), MaxFileSize-2); n != 2 || err != nil {
		t.Fatalf("WriteAt across max = %d, %v; want 2, nil", n, err)
	}
	if _, _, err := h.Append(bg, []byte("x")); !errorsIs(err, errno.EFBIG) {
		t.Fatalf("Append at max: %v", err)
	}
}

func TestQuotaBytes(t *testing.T) {
	q := vfs.NewQuota(10000, 0)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	n := mustCreate(t, root, "f")
	h := mustOpen(t, n, vfs.O_RDWR)
	mustWrite(t, h, make([]byte, 6000), 0)
	// The write only partly fits: the part that does is written.
	if got, err := h.WriteAt(bg, bytes.Repeat([]byte{1}, 6000), 6000); got != 4000 || err != nil {
		t.Fatalf("partial write = %d, %v; want 4000, nil", got, err)
	}
	if used, _, _, _ := q.Usage(); used != 10000 {
		t.Fatalf("used = %d", used)
	}
	_, err := h.WriteAt(bg, []byte{1}, 10000)
	wantErr(t, "write at full quota", err, errno.ENOSPC)
	_, _, err = h.Append(bg, []byte{1})
	wantErr(t, "append at full quota", err, errno.ENOSPC)
	_, err = h.WriteAt(bg, []byte{1}, 50000)
	wantErr(t, "sparse write at full quota", err, errno.ENOSPC)
	// Overwriting stored bytes needs no room, and a write that runs past
	// the end of a full quota stores the part over existing data.
	mustWrite(t, h, []byte("overwrite"), 100)
	if got, err := h.WriteAt(bg, []byte("abcdef"), 9997); got != 3 || err != nil {
		t.Fatalf("write over the end at full quota = %d, %v; want 3, nil", got, err)
	}
	wantErr(t, "grow past quota", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 10001}), errno.ENOSPC)
	if st := mustStat(t, n); st.Size != 10000 {
		t.Fatalf("size after failures = %d", st.Size)
	}
	// A nearly full quota still takes a write that fits exactly.
	wantErr(t, "shrink", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 9990}), 0)
	if got, _, err := h.Append(bg, make([]byte, 100)); got != 10 || err != nil {
		t.Fatalf("append into last room = %d, %v", got, err)
	}
	// A write starting beyond the room is refused whole, holes included.
	wantErr(t, "shrink", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 5000}), 0)
	_, err = h.WriteAt(bg, []byte{1}, 10000)
	wantErr(t, "write just beyond room", err, errno.ENOSPC)
	if got, err := h.WriteAt(bg, []byte{1, 2}, 9999); got != 1 || err != nil {
		t.Fatalf("write straddling room = %d, %v", got, err)
	}

	// Removing the open file keeps its bytes charged until the last close.
	wantErr(t, "Unlink", root.Unlink(bg, "f"), 0)
	if used, _, _, _ := q.Usage(); used != 10000 {
		t.Fatalf("used after unlink with open handle = %d", used)
	}
	h.Close()
	if used, _, inodes, _ := q.Usage(); used != 0 || inodes != 0 {
		t.Fatalf("after close: used %d inodes %d", used, inodes)
	}
}

func TestQuotaInodes(t *testing.T) {
	q := vfs.NewQuota(100, 4)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	f := mustCreate(t, root, "f")
	mustMkdir(t, root, "d")
	if _, err := root.Symlink(bg, "s", "f", vfs.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := root.Link(bg, "l", f); err != nil {
		t.Fatal(err)
	}
	if bytes, _, inodes, _ := q.Usage(); bytes != 1 || inodes != 4 {
		t.Fatalf("usage: %d bytes, %d inodes; want 1, 4", bytes, inodes)
	}
	_, err := root.Create(bg, "g", regOpts(0o644))
	wantErr(t, "Create over quota", err, errno.ENOSPC)
	_, err = root.Mkdir(bg, "e", dirOpts(0o755))
	wantErr(t, "Mkdir over quota", err, errno.ENOSPC)
	_, err = root.Symlink(bg, "t", "f", vfs.CreateOptions{})
	wantErr(t, "Symlink over quota", err, errno.ENOSPC)
	wantErr(t, "Link over quota", root.Link(bg, "m", f), errno.ENOSPC)
	if got := names(t, root); !slices.Equal(got, []string{"f", "d", "s", "l"}) {
		t.Fatalf("failed creates left entries: %v", got)
	}
	// Each removal returns what it took.
	wantErr(t, "Unlink l", root.Unlink(bg, "l"), 0)
	wantErr(t, "Unlink f", root.Unlink(bg, "f"), 0)
	wantErr(t, "Unlink s", root.Unlink(bg, "s"), 0)
	wantErr(t, "Rmdir d", root.Rmdir(bg, "d"), 0)
	if bytes, _, inodes, _ := q.Usage(); bytes != 0 || inodes != 0 {
		t.Fatalf("usage after removing all: %d bytes, %d inodes", bytes, inodes)
	}
	// A symlink target that does not fit the byte quota is refused whole.
	_, err = root.Symlink(bg, "long", strings.Repeat("x", 101), vfs.CreateOptions{})
	wantErr(t, "Symlink over byte quota", err, errno.ENOSPC)
	if bytes, _, inodes, _ := q.Usage(); bytes != 0 || inodes != 0 {
		t.Fatalf("failed symlink leaked: %d bytes, %d inodes", bytes, inodes)
	}
}

func TestUnlinkOpenFile(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	n := mustCreate(t, root, "f")
	h := mustOpen(t, n, vfs.O_RDWR)
	mustWrite(t, h, []byte("still here"), 0)
	wantErr(t, "Unlink", root.Unlink(bg, "f"), 0)
	if st := mustStat(t, n); st.Nlink != 0 {
		t.Fatalf("nlink after unlink = %d", st.Nlink)
	}
	buf := make([]byte, 32)
	if got, err := h.ReadAt(bg, buf, 0); err != nil || string(buf[:got]) != "still here" {
		t.Fatalf("read after unlink = %q, %v", buf[:got], err)
	}
	mustWrite(t, h, []byte("!"), 10)
	// A second handle may still be opened by whoever holds the inode.
	h2 := mustOpen(t, n, vfs.O_RDONLY)
	wantErr(t, "Close", h.Close(), 0)
	if got, _ := h2.ReadAt(bg, buf, 0); string(buf[:got]) != "still here!" {
		t.Fatalf("second handle reads %q", buf[:got])
	}
	wantErr(t, "Close 2", h2.Close(), 0)
	_, err := n.Open(bg, vfs.O_RDONLY)
	wantErr(t, "Open after last close", err, errno.ENOENT)
	wantErr(t, "Link of freed inode", root.Link(bg, "again", n), errno.ENOENT)
	wantErr(t, "truncate freed inode", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 5}), errno.ENOENT)
}

func TestHandleModes(t *testing.T) {
	fs := New(Options{})
	n := mustCreate(t, rootOf(t, fs), "f")
	ro := mustOpen(t, n, vfs.O_RDONLY)
	wo := mustOpen(t, n, vfs.O_WRONLY)
	_, err := ro.WriteAt(bg, []byte("x"), 0)
	wantErr(t, "write on O_RDONLY", err, errno.EBADF)
	_, _, err = ro.Append(bg, []byte("x"))
	wantErr(t, "append on O_RDONLY", err, errno.EBADF)
	_, err = wo.ReadAt(bg, make([]byte, 1), 0)
	wantErr(t, "read on O_WRONLY", err, errno.EBADF)
	wantErr(t, "Sync", wo.Sync(bg), 0)
	wantErr(t, "Close", wo.Close(), 0)
	wantErr(t, "Close twice", wo.Close(), errno.EBADF)
	_, err = wo.WriteAt(bg, []byte("x"), 0)
	wantErr(t, "write after close", err, errno.EBADF)
	wantErr(t, "Sync after close", wo.Sync(bg), errno.EBADF)
	ro.Close()
	_, err = ro.ReadAt(bg, make([]byte, 1), 0)
	wantErr(t, "read after close", err, errno.EBADF)
}

func TestHardLinks(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	d := mustMkdir(t, root, "d")
	n := mustCreate(t, root, "f")
	h := mustOpen(t, n, vfs.O_RDWR)
	mustWrite(t, h, []byte("data"), 0)
	h.Close()
	wantErr(t, "Link", d.Link(bg, "g", n), 0)
	wantErr(t, "Link existing name", d.Link(bg, "g", n), errno.EEXIST)
	if st := mustStat(t, n); st.Nlink != 2 {
		t.Fatalf("nlink = %d", st.Nlink)
	}
	g, err := d.Lookup(bg, "g")
	if err != nil || g != n {
		t.Fatalf("Lookup(g) = %v, %v", g, err)
	}
	wantErr(t, "Unlink f", root.Unlink(bg, "f"), 0)
	if st := mustStat(t, n); st.Nlink != 1 {
		t.Fatalf("nlink after unlink = %d", st.Nlink)
	}
	if got := readAll(t, g); string(got) != "data" {
		t.Fatalf("data through other link = %q", got)
	}
	wantErr(t, "Link a directory", root.Link(bg, "dd", d), errno.EPERM)
	other := New(Options{})
	wantErr(t, "Link across filesystems", root.Link(bg, "x", mustCreate(t, rootOf(t, other), "o")), errno.EXDEV)
	// Symlinks and FIFOs can be linked too.
	s, _ := root.Symlink(bg, "s", "target", vfs.CreateOptions{})
	wantErr(t, "Link symlink", root.Link(bg, "s2", s), 0)
	if st := mustStat(t, s); st.Nlink != 2 {
		t.Fatalf("symlink nlink = %d", st.Nlink)
	}
}

func TestMaxLinks(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	n := mustCreate(t, root, "f")
	n.(*file).c.nlink = MaxLinks - 1 // skip creating 65k names
	wantErr(t, "last link", root.Link(bg, "a", n), 0)
	wantErr(t, "link beyond max", root.Link(bg, "b", n), errno.EMLINK)
}

func TestDirectoryLinkCounts(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	a := mustMkdir(t, root, "a")
	b := mustMkdir(t, root, "b")
	mustMkdir(t, a, "x")
	mustMkdir(t, a, "y")
	mustCreate(t, a, "file")
	nlink := func(n vfs.Inode) uint32 { return mustStat(t, n).Nlink }
	if nlink(root) != 4 || nlink(a) != 4 || nlink(b) != 2 {
		t.Fatalf("nlink root %d a %d b %d", nlink(root), nlink(a), nlink(b))
	}
	wantErr(t, "move x to b", a.Rename(bg, "x", b, "x"), 0)
	if nlink(a) != 3 || nlink(b) != 3 {
		t.Fatalf("after move: a %d b %d", nlink(a), nlink(b))
	}
	mustMkdir(t, b, "z")
	wantErr(t, "replace b/z with a/y", a.Rename(bg, "y", b, "z"), 0)
	if nlink(a) != 2 || nlink(b) != 4 {
		t.Fatalf("after replace: a %d b %d", nlink(a), nlink(b))
	}
	wantErr(t, "Rmdir", b.Rmdir(bg, "z"), 0)
	if nlink(b) != 3 {
		t.Fatalf("after rmdir: b %d", nlink(b))
	}
}

func TestRmdirUnlink(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	d := mustMkdir(t, root, "d")
	mustCreate(t, d, "f")
	mustCreate(t, root, "file")
	wantErr(t, "Rmdir non-empty", root.Rmdir(bg, "d"), errno.ENOTEMPTY)
	wantErr(t, "Rmdir file", root.Rmdir(bg, "file"), errno.ENOTDIR)
	wantErr(t, "Rmdir missing", root.Rmdir(bg, "nope"), errno.ENOENT)
	wantErr(t, "Unlink dir", root.Unlink(bg, "d"), errno.EISDIR)
	wantErr(t, "Unlink missing", root.Unlink(bg, "nope"), errno.ENOENT)
	wantErr(t, "Unlink d/f", d.Unlink(bg, "f"), 0)
	wantErr(t, "Rmdir empty", root.Rmdir(bg, "d"), 0)
	if st := mustStat(t, d); st.Nlink != 0 {
		t.Fatalf("removed dir nlink = %d", st.Nlink)
	}
	// A removed directory stays a directory, but an empty and dead one.
	_, err := d.Create(bg, "new", regOpts(0o644))
	wantErr(t, "Create in removed dir", err, errno.ENOENT)
	_, err = d.Mkdir(bg, "new", dirOpts(0o755))
	wantErr(t, "Mkdir in removed dir", err, errno.ENOENT)
	if got := names(t, d); len(got) != 0 {
		t.Fatalf("removed dir lists %v", got)
	}
	wantErr(t, "Rename into removed dir", root.Rename(bg, "file", d, "file"), errno.ENOENT)
}

func TestRename(t *testing.T) {
	type setup func(t *testing.T, root vfs.Inode)
	files := func(names ...string) setup {
		return func(t *testing.T, root vfs.Inode) {
			for _, n := range names {
				if strings.HasSuffix(n, "/") {
					p := strings.Split(strings.TrimSuffix(n, "/"), "/")
					d := root
					for _, c := range p {
						if x, err := d.Lookup(bg, c); err == nil {
							d = x
						} else {
							d = mustMkdir(t, d, c)
						}
					}
					continue
				}
				mustCreate(t, root, n)
			}
		}
	}
	tests := []struct {
		name           string
		setup          setup
		oldDir, oldN   string
		newDir, newN   string
		want           errno.Errno
		wantRootListed []string
	}{
		{"file to new name", files("a"), "", "a", "", "b", 0, []string{"b"}},
		{"file replaces file", files("a", "b"), "", "a", "", "b", 0, []string{"b"}},
		{"onto itself", files("a"), "", "a", "", "a", 0, []string{"a"}},
		{"missing source", files("a"), "", "nope", "", "b", errno.ENOENT, []string{"a"}},
		{"file onto dir", files("a", "d/"), "", "a", "", "d", errno.EISDIR, []string{"a", "d"}},
		{"dir onto file", files("a", "d/"), "", "d", "", "a", errno.ENOTDIR, []string{"a", "d"}},
		{"dir replaces empty dir", files("d/", "e/"), "", "d", "", "e", 0, []string{"e"}},
		{"dir onto non-empty dir", files("d/", "e/x/"), "", "d", "", "e", errno.ENOTEMPTY, []string{"d", "e"}},
		{"dir into itself", files("d/"), "", "d", "d", "x", errno.EINVAL, []string{"d"}},
		{"dir into own subtree", files("d/x/y/"), "", "d", "d/x/y", "d", errno.EINVAL, []string{"d"}},
		{"dir onto own ancestor", files("d/x/y/"), "d/x", "y", "", "d", errno.ENOTEMPTY, []string{"d"}},
		{"file to other dir", files("a", "d/"), "", "a", "d", "a", 0, []string{"d"}},
		{"file up from subdir", files("d/x/"), "d", "x", "", "x", 0, []string{"d", "x"}},
		{"dir across dirs replaces empty", files("d/x/", "e/x/"), "d", "x", "e", "x", 0, []string{"d", "e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := New(Options{})
			root := rootOf(t, fs)
			tc.setup(t, root)
			walk := func(p string) vfs.Inode {
				n := root
				if p == "" {
					return n
				}
				for _, c := range strings.Split(p, "/") {
					var err error
					if n, err = n.Lookup(bg, c); err != nil {
						t.Fatalf("walk %s: %v", p, err)
					}
				}
				return n
			}
			od, nd := walk(tc.oldDir), walk(tc.newDir)
			moved, _ := od.Lookup(bg, tc.oldN)
			var replaced vfs.Inode
			if tc.want == 0 {
				replaced, _ = nd.Lookup(bg, tc.newN)
			}
			wantErr(t, "Rename", od.Rename(bg, tc.oldN, nd, tc.newN), tc.want)
			if got := names(t, root); !slices.Equal(got, tc.wantRootListed) {
				t.Fatalf("root lists %v, want %v", got, tc.wantRootListed)
			}
			if tc.want != 0 {
				return
			}
			if got, err := nd.Lookup(bg, tc.newN); err != nil || got != moved {
				t.Fatalf("new name resolves to %v, %v", got, err)
			}
			if replaced != nil && replaced != moved {
				if st := mustStat(t, replaced); st.Nlink != 0 {
					t.Fatalf("replaced inode nlink = %d", st.Nlink)
				}
			}
		})
	}
}

func TestRenameHardLinksOfOneInode(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	n := mustCreate(t, root, "a")
	wantErr(t, "Link", root.Link(bg, "b", n), 0)
	wantErr(t, "Rename a->b", root.Rename(bg, "a", root, "b"), 0)
	if got := names(t, root); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("rename between links of one inode changed the dir: %v", got)
	}
	if st := mustStat(t, n); st.Nlink != 2 {
		t.Fatalf("nlink = %d", st.Nlink)
	}
}

func TestRenameErrors(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	mustCreate(t, root, "a")
	f := mustCreate(t, root, "f")
	wantErr(t, "newDir is a file", root.Rename(bg, "a", f, "x"), errno.ENOTDIR)
	other := rootOf(t, New(Options{}))
	wantErr(t, "across filesystems", root.Rename(bg, "a", other, "a"), errno.EXDEV)
	// A replaced file that is still open keeps its data until closed.
	h := mustOpen(t, f, vfs.O_RDWR)
	mustWrite(t, h, []byte("old"), 0)
	wantErr(t, "replace open file", root.Rename(bg, "a", root, "f"), 0)
	buf := make([]byte, 3)
	if n, _ := h.ReadAt(bg, buf, 0); string(buf[:n]) != "old" {
		t.Fatalf("replaced open file reads %q", buf[:n])
	}
	h.Close()
}

func TestReadDir(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	var want []string
	for i := range 100 {
		name := fmt.Sprintf("f%03d", i)
		if i%10 == 0 {
			mustMkdir(t, root, name)
		} else {
			mustCreate(t, root, name)
		}
		want = append(want, name)
	}
	if got := names(t, root); !slices.Equal(got, want) {
		t.Fatalf("ReadDir order = %v", got)
	}
	ents, err := root.ReadDir(bg, 0, 2)
	if err != nil || len(ents) != 2 || ents[0].Type != vfs.TypeDir || ents[1].Type != vfs.TypeRegular {
		t.Fatalf("first batch = %+v, %v", ents, err)
	}
	if n, _ := root.Lookup(bg, "f001"); mustStat(t, n).Ino != ents[1].Ino {
		t.Fatal("Dirent.Ino differs from Stat.Ino")
	}
	_, err = root.ReadDir(bg, 0, 0)
	wantErr(t, "ReadDir(max 0)", err, errno.EINVAL)
	if ents, err := root.ReadDir(bg, 1<<60, 10); err != nil || len(ents) != 0 {
		t.Fatalf("ReadDir past the end = %v, %v", ents, err)
	}

	// Remove most entries mid-iteration (forcing compaction) and add new
	// ones: the survivors after the cookie still come exactly once, in
	// order, and the new entries follow.
	cookie := uint64(0)
	var got []string
	ents, _ = root.ReadDir(bg, cookie, 25)
	for _, e := range ents {
		got = append(got, e.Name)
		cookie = e.Next
	}
	for i := range 100 {
		if i%3 != 0 {
			name := fmt.Sprintf("f%03d", i)
			if i%10 == 0 {
				wantErr(t, "Rmdir", root.Rmdir(bg, name), 0)
			} else {
				wantErr(t, "Unlink", root.Unlink(bg, name), 0)
			}
		}
	}
	mustCreate(t, root, "new")
	for {
		ents, err := root.ReadDir(bg, cookie, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			got = append(got, e.Name)
			cookie = e.Next
		}
	}
	var wantAll []string
	for i := range 100 {
		if i < 25 || i%3 == 0 {
			wantAll = append(wantAll, fmt.Sprintf("f%03d", i))
		}
	}
	wantAll = append(wantAll, "new")
	if !slices.Equal(got, wantAll) {
		t.Fatalf("iteration across removals = %v\nwant %v", got, wantAll)
	}
	if d := root.(*dir); d.c.removed*2 > len(d.c.order) && d.c.removed > 16 {
		t.Fatalf("no compaction: %d removed of %d", d.c.removed, len(d.c.order))
	}
}

func TestReadDirRenameKeepsPlace(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, root, n)
	}
	ents, _ := root.ReadDir(bg, 0, 2) // a, b
	// Replacing "b" by renaming "c" onto it keeps b's place, so a reader
	// past b does not see it again.
	wantErr(t, "Rename", root.Rename(bg, "c", root, "b"), 0)
	rest, _ := root.ReadDir(bg, ents[1].Next, 10)
	if len(rest) != 0 {
		t.Fatalf("after rename-replace, rest = %+v", rest)
	}
	if got := names(t, root); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("names = %v", got)
	}
}

func TestSymlink(t *testing.T) {
	q := vfs.NewQuota(0, 0)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	s, err := root.Symlink(bg, "s", "../some/where", vfs.CreateOptions{Mode: 0o600, UID: 5, GID: 6})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Readlink(bg); got != "../some/where" || err != nil {
		t.Fatalf("Readlink = %q, %v", got, err)
	}
	st := mustStat(t, s)
	if st.Mode != vfs.S_IFLNK|0o777 || st.Size != 13 || st.UID != 5 || st.GID != 6 {
		t.Fatalf("symlink stat = %+v", st)
	}
	_, err = s.Open(bg, vfs.O_RDONLY)
	wantErr(t, "Open symlink", err, errno.ELOOP)
	wantErr(t, "truncate symlink", s.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize}), errno.EINVAL)
	wantErr(t, "chmod symlink", s.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}), errno.EOPNOTSUPP)
	wantErr(t, "chown symlink", s.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetUID, UID: 9}), 0)
	if st := mustStat(t, s); st.Mode != vfs.S_IFLNK|0o777 || st.UID != 9 {
		t.Fatalf("symlink after chown: %+v", st)
	}
	_, err = root.Symlink(bg, "e", "", vfs.CreateOptions{})
	wantErr(t, "empty target", err, errno.ENOENT)
	_, err = root.Symlink(bg, "l", strings.Repeat("a", vfs.PathMax), vfs.CreateOptions{})
	wantErr(t, "long target", err, errno.ENAMETOOLONG)
	_, err = root.Symlink(bg, "s", "x", vfs.CreateOptions{})
	wantErr(t, "existing name", err, errno.EEXIST)
	if used, _, _, _ := q.Usage(); used != 13 {
		t.Fatalf("symlink charged %d bytes", used)
	}
}

func TestSetAttr(t *testing.T) {
	clk := newClock()
	fs := New(Options{Now: clk.Now})
	root := rootOf(t, fs)
	n := mustCreate(t, root, "f")
	at := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC)
	mt := time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)
	now := clk.Tick()
	err := n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode | vfs.SetUID | vfs.SetGID | vfs.SetAtime | vfs.SetMtime,
		Mode: vfs.S_IFDIR | 0o4711, UID: 10, GID: 20, Atime: at, Mtime: mt})
	if err != nil {
		t.Fatal(err)
	}
	st := mustStat(t, n)
	if st.Mode != vfs.S_IFREG|0o4711 || st.UID != 10 || st.GID != 20 ||
		!st.Atime.Equal(at) || !st.Mtime.Equal(mt) || !st.Ctime.Equal(now) {
		t.Fatalf("stat after SetAttr = %+v", st)
	}
	now = clk.Tick()
	wantErr(t, "SetCtime", n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetCtime}), 0)
	if st := mustStat(t, n); !st.Ctime.Equal(now) || !st.Mtime.Equal(mt) {
		t.Fatalf("SetCtime: %+v", st)
	}
	wantErr(t, "truncate dir", root.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize}), errno.EISDIR)
	wantErr(t, "chmod dir", root.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}), 0)
	if st := mustStat(t, root); st.Mode != vfs.S_IFDIR|0o700 {
		t.Fatalf("root mode = %o", st.Mode)
	}
	fifo, _ := root.Create(bg, "p", vfs.CreateOptions{Mode: vfs.S_IFIFO | 0o600})
	wantErr(t, "chown fifo", fifo.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetUID, UID: 3}), 0)
	wantErr(t, "truncate fifo", fifo.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize}), errno.EINVAL)
}

func TestTimes(t *testing.T) {
	clk := newClock()
	fs := New(Options{Now: clk.Now})
	root := rootOf(t, fs)
	check := func(what string, n vfs.Inode, a, m, c time.Time) {
		t.Helper()
		st := mustStat(t, n)
		if !st.Atime.Equal(a) || !st.Mtime.Equal(m) || !st.Ctime.Equal(c) {
			t.Fatalf("%s: atime %v mtime %v ctime %v; want %v %v %v", what,
				st.Atime, st.Mtime, st.Ctime, a, m, c)
		}
	}
	t0 := clk.Now()
	t1 := clk.Tick()
	n := mustCreate(t, root, "f")
	check("new file", n, t1, t1, t1)
	check("parent after create", root, t0, t1, t1)

	t2 := clk.Tick()
	h := mustOpen(t, n, vfs.O_RDWR)
	mustWrite(t, h, []byte("abc"), 0)
	check("after write", n, t1, t2, t2)

	t3 := clk.Tick()
	h.ReadAt(bg, make([]byte, 3), 0)
	check("after read", n, t3, t2, t2)

	t4 := clk.Tick()
	n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600})
	check("after chmod", n, t3, t2, t4)

	t5 := clk.Tick()
	n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 3})
	check("after same-size truncate", n, t3, t5, t5)

	t6 := clk.Tick()
	h.Append(bg, []byte("d"))
	check("after append", n, t3, t6, t6)

	t7 := clk.Tick()
	root.Link(bg, "g", n)
	check("after link", n, t3, t6, t7)
	check("parent after link", root, t0, t7, t7)

	t8 := clk.Tick()
	d := mustMkdir(t, root, "d")
	root.Rename(bg, "g", d, "g")
	check("after rename", n, t3, t6, t8)
	check("old parent after rename", root, t0, t8, t8)
	check("new parent after rename", d, t8, t8, t8)

	t9 := clk.Tick()
	d.Unlink(bg, "g")
	check("after unlink", n, t3, t6, t9)
	check("parent after unlink", d, t8, t9, t9)

	t10 := clk.Tick()
	root.ReadDir(bg, 0, 10)
	check("dir after readdir", root, t10, t8, t8)

	clk.Tick()
	h.WriteAt(bg, nil, 0)
	check("after empty write", n, t3, t6, t9)
	h.Close()
}

func TestReadOnly(t *testing.T) {
	q := vfs.NewQuota(1000, 10)
	fs := New(Options{ReadOnly: true, Quota: q})
	if !fs.ReadOnly() {
		t.Fatal("ReadOnly() = false")
	}
	root := rootOf(t, fs)
	other := rootOf(t, New(Options{}))
	ops := map[string]func() error{
		"Create":  func() error { _, err := root.Create(bg, "f", regOpts(0o644)); return err },
		"Mkdir":   func() error { _, err := root.Mkdir(bg, "d", dirOpts(0o755)); return err },
		"Symlink": func() error { _, err := root.Symlink(bg, "s", "t", vfs.CreateOptions{}); return err },
		"Link":    func() error { return root.Link(bg, "l", root) },
		"Unlink":  func() error { return root.Unlink(bg, "f") },
		"Rmdir":   func() error { return root.Rmdir(bg, "d") },
		"Rename":  func() error { return root.Rename(bg, "a", root, "b") },
		"Rename across": func() error {
			return root.Rename(bg, "a", other, "b")
		},
		"SetAttr": func() error { return root.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}) },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			wantErr(t, name, op(), errno.EROFS)
		})
	}
	if got := names(t, root); len(got) != 0 {
		t.Fatalf("read-only fs lists %v", got)
	}
	st, _ := fs.Statfs(bg)
	if !st.ReadOnly {
		t.Fatal("Statfs.ReadOnly = false")
	}
	if used, _, inodes, _ := q.Usage(); used != 0 || inodes != 0 {
		t.Fatalf("read-only fs charged %d bytes %d inodes", used, inodes)
	}
}

func TestStatfs(t *testing.T) {
	q := vfs.NewQuota(1<<20, 100)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	h := mustOpen(t, mustCreate(t, root, "f"), vfs.O_RDWR)
	mustWrite(t, h, make([]byte, 8192), 0)
	h.Close()
	st, err := fs.Statfs(bg)
	if err != nil {
		t.Fatal(err)
	}
	want := vfs.Statfs{Type: Magic, BlockSize: 4096, Blocks: 256, BlocksFree: 254, Files: 100, FilesFree: 99, NameMax: 255}
	if st != want {
		t.Fatalf("Statfs = %+v, want %+v", st, want)
	}
	st, _ = New(Options{}).Statfs(bg)
	if st.Type != Magic || st.Blocks != 0 || st.Files != 0 {
		t.Fatalf("unlimited Statfs = %+v", st)
	}
}

func TestRelease(t *testing.T) {
	q := vfs.NewQuota(1<<20, 100)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	n := mustCreate(t, root, "f")
	mustMkdir(t, root, "d")
	h := mustOpen(t, n, vfs.O_RDWR)
	mustWrite(t, h, make([]byte, 5000), 0)
	if err := fs.Release(); err != nil {
		t.Fatal(err)
	}
	if used, _, inodes, _ := q.Usage(); used != 0 || inodes != 0 {
		t.Fatalf("after Release: %d bytes %d inodes charged", used, inodes)
	}
	// Reading still works; growing cannot charge anymore.
	if got, err := h.ReadAt(bg, make([]byte, 10), 0); got != 10 || err != nil {
		t.Fatalf("read after Release = %d, %v", got, err)
	}
	_, _, err := h.Append(bg, []byte("x"))
	wantErr(t, "append after Release", err, errno.EIO)
	_, err = root.Create(bg, "g", regOpts(0o644))
	wantErr(t, "create after Release", err, errno.EIO)
	// Removing things after Release must not credit the quota again.
	h.Close()
	wantErr(t, "Unlink", root.Unlink(bg, "f"), 0)
	wantErr(t, "Rmdir", root.Rmdir(bg, "d"), 0)
	if err := fs.Release(); err != nil {
		t.Fatal(err)
	}
	if used, _, inodes, _ := q.Usage(); used != 0 || inodes != 0 {
		t.Fatalf("double credit: %d bytes %d inodes", used, inodes)
	}
}

func TestInodeNumbersUnique(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	seen := map[uint64]bool{mustStat(t, root).Ino: true}
	for i := range 50 {
		var n vfs.Inode
		switch i % 3 {
		case 0:
			n = mustCreate(t, root, fmt.Sprint(i))
		case 1:
			n = mustMkdir(t, root, fmt.Sprint(i))
		default:
			n, _ = root.Symlink(bg, fmt.Sprint(i), "x", vfs.CreateOptions{})
		}
		ino := mustStat(t, n).Ino
		if seen[ino] {
			t.Fatalf("inode number %d reused", ino)
		}
		seen[ino] = true
	}
}
