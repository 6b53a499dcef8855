package devfs

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var epoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

func newFS(t *testing.T) *FS {
	t.Helper()
	return New(Options{Now: func() time.Time { return epoch }})
}

func lookup(t *testing.T, fs *FS, names ...string) vfs.Inode {
	t.Helper()
	ctx := context.Background()
	ino, err := fs.Root(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		ino, err = ino.Lookup(ctx, n)
		if err != nil {
			t.Fatalf("lookup %v: %v", names, err)
		}
	}
	return ino
}

func wantErrno(t *testing.T, what string, err error, want errno.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %s", what, err, want.Name())
	}
}

func TestDevices(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	tests := []struct {
		name         string
		major, minor uint32
	}{
		{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7},
		{"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0},
	}
	seen := map[uint64]string{}
	for _, tc := range tests {
		st, err := lookup(t, fs, tc.name).Stat(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Type() != vfs.TypeCharDev || st.Mode&vfs.ModePerm != 0o666 {
			t.Errorf("%s: mode %#o, want char device 0666", tc.name, st.Mode)
		}
		if Major(st.Rdev) != tc.major || Minor(st.Rdev) != tc.minor {
			t.Errorf("%s: rdev %d:%d, want %d:%d", tc.name, Major(st.Rdev), Minor(st.Rdev), tc.major, tc.minor)
		}
		if st.Nlink != 1 || st.UID != 0 || st.GID != 0 || !st.Mtime.Equal(epoch) {
			t.Errorf("%s: stat %+v", tc.name, st)
		}
		if prev, ok := seen[st.Ino]; ok {
			t.Errorf("%s and %s share inode %d", prev, tc.name, st.Ino)
		}
		seen[st.Ino] = tc.name
	}
}

func TestMakedev(t *testing.T) {
	tests := []struct {
		major, minor uint32
		want         uint64
	}{
		{1, 3, 0x103},
		{5, 0, 0x500},
		{136, 0, 0x8800},
		{0xfff, 0xff, 0xfffff},
		{0x1000, 0x100, 0x0000100000100000},
		{0xffffffff, 0xffffffff, 0xffffffffffffffff},
	}
	for _, tc := range tests {
		got := Makedev(tc.major, tc.minor)
		if got != tc.want {
			t.Errorf("Makedev(%#x, %#x) = %#x, want %#x", tc.major, tc.minor, got, tc.want)
		}
		if Major(got) != tc.major || Minor(got) != tc.minor {
			t.Errorf("round trip of %#x:%#x gave %#x:%#x", tc.major, tc.minor, Major(got), Minor(got))
		}
	}
}

func open(t *testing.T, fs *FS, name string) vfs.Handle {
	t.Helper()
	h, err := lookup(t, fs, name).Open(context.Background(), vfs.O_RDWR)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	if s, ok := h.(vfs.StreamHandle); !ok || !s.Stream() {
		t.Errorf("%s: handle is not a stream", name)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func TestReadWrite(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	junk := bytes.Repeat([]byte{0xa5}, 3*chunk+17)
	tests := []struct {
		name     string
		readN    int // bytes a read of len(junk) returns
		zeros    bool
		writeErr errno.Errno
	}{
		{name: "null", readN: 0},
		{name: "zero", readN: len(junk), zeros: true},
		{name: "full", readN: len(junk), zeros: true, writeErr: errno.ENOSPC},
		{name: "random", readN: len(junk)},
		{name: "urandom", readN: len(junk)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t, fs, tc.name)
			buf := bytes.Clone(junk)
			n, err := h.ReadAt(ctx, buf, 12345)
			if err != nil || n != tc.readN {
				t.Fatalf("read: %d, %v; want %d", n, err, tc.readN)
			}
			switch {
			case tc.zeros && !bytes.Equal(buf, make([]byte, len(buf))):
				t.Error("read did not fill with zeros")
			case tc.readN == 0 && !bytes.Equal(buf, junk):
				t.Error("empty read touched the buffer")
			case !tc.zeros && tc.readN > 0 && bytes.Count(buf, []byte{0xa5}) > len(buf)/16:
				t.Error("random read left the buffer mostly untouched")
			}
			n, err = h.WriteAt(ctx, junk, 0)
			if tc.writeErr != 0 {
				wantErrno(t, "write", err, tc.writeErr)
				_, _, err = h.Append(ctx, junk)
				wantErrno(t, "append", err, tc.writeErr)
				return
			}
			if err != nil || n != len(junk) {
				t.Errorf("write: %d, %v", n, err)
			}
			if n, _, err := h.Append(ctx, junk); err != nil || n != len(junk) {
				t.Errorf("append: %d, %v", n, err)
			}
			if err := h.Sync(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestRandomDiffers(t *testing.T) {
	h := open(t, newFS(t), "urandom")
	a, b := make([]byte, 32), make([]byte, 32)
	ctx := context.Background()
	if _, err := h.ReadAt(ctx, a, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ReadAt(ctx, b, 0); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Error("two reads of /dev/urandom returned the same 32 bytes")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("host entropy path /secret") }

func TestRandomSourceError(t *testing.T) {
	fs := New(Options{Random: failingReader{}})
	h := open(t, fs, "random")
	_, err := h.ReadAt(context.Background(), make([]byte, 8), 0)
	wantErrno(t, "read", err, errno.EIO)
	if err != nil && bytes.Contains([]byte(err.Error()), []byte("secret")) {
		t.Errorf("host error text leaked: %v", err)
	}
}

func TestReadCancelled(t *testing.T) {
	fs := newFS(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"zero", "urandom"} {
		_, err := open(t, fs, name).ReadAt(ctx, make([]byte, 10), 0)
		wantErrno(t, name, err, errno.EINTR)
	}
}

func TestReadAllocs(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	buf := make([]byte, 2*chunk+5)
	for _, name := range []string{"null", "zero", "full", "urandom", "random"} {
		h := open(t, fs, name)
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := h.ReadAt(ctx, buf, 0); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per read", name, allocs)
		}
	}
}

func TestTTY(t *testing.T) {
	fs := newFS(t)
	for _, fl := range []vfs.OpenFlags{vfs.O_RDONLY, vfs.O_WRONLY, vfs.O_RDWR} {
		_, err := lookup(t, fs, "tty").Open(context.Background(), fl)
		wantErrno(t, "open tty", err, errno.ENXIO)
	}
}

func TestSymlinks(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	tests := map[string]string{
		"stdin":  "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2",
		"fd":     "/proc/self/fd",
	}
	for name, want := range tests {
		ino := lookup(t, fs, name)
		got, err := ino.Readlink(ctx)
		if err != nil || got != want {
			t.Errorf("readlink %s = %q, %v; want %q", name, got, err, want)
		}
		st, _ := ino.Stat(ctx)
		if st.Type() != vfs.TypeSymlink || st.Mode&0o777 != 0o777 || st.Size != int64(len(want)) {
			t.Errorf("%s: stat %+v", name, st)
		}
		if _, ok := ino.(vfs.MagicLink); ok {
			t.Errorf("%s is a magic link; only /proc's links are", name)
		}
	}
	_, err := lookup(t, fs, "null").Readlink(ctx)
	wantErrno(t, "readlink null", err, errno.EINVAL)
}

func TestReadDir(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	root := lookup(t, fs)
	want := []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}
	all, err := root.ReadDir(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range all {
		names = append(names, e.Name)
		st, _ := lookup(t, fs, e.Name).Stat(ctx)
		if st.Ino != e.Ino || st.Type() != e.Type {
			t.Errorf("%s: dirent %+v disagrees with stat ino %d type %#o", e.Name, e, st.Ino, st.Type())
		}
	}
	if len(names) != len(want) {
		t.Fatalf("readdir = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("readdir = %v, want %v", names, want)
		}
	}
	// Reading one at a time with the cookies gives the same list.
	var cookie uint64
	for i := 0; ; i++ {
		ents, err := root.ReadDir(ctx, cookie, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			if i != len(want) {
				t.Errorf("paged readdir ended after %d entries", i)
			}
			break
		}
		if ents[0].Name != want[i] {
			t.Errorf("paged entry %d = %q, want %q", i, ents[0].Name, want[i])
		}
		cookie = ents[0].Next
	}
	if ents, err := root.ReadDir(ctx, 1<<63, 5); err != nil || len(ents) != 0 {
		t.Errorf("readdir past the end: %v, %v", ents, err)
	}
	_, err = root.ReadDir(ctx, 0, 0)
	wantErrno(t, "readdir max 0", err, errno.EINVAL)
	for _, d := range []string{"shm", "pts"} {
		if ents, err := lookup(t, fs, d).ReadDir(ctx, 0, 10); err != nil || len(ents) != 0 {
			t.Errorf("%s: %v, %v; want empty", d, ents, err)
		}
	}
	_, err = lookup(t, fs, "null").ReadDir(ctx, 0, 10)
	wantErrno(t, "readdir null", err, errno.ENOTDIR)
}

func TestDirStat(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	tests := []struct {
		path  []string
		mode  uint32
		nlink uint32
	}{
		{nil, vfs.S_IFDIR | 0o755, 4},
		{[]string{"shm"}, vfs.S_IFDIR | vfs.S_ISVTX | 0o777, 2},
		{[]string{"pts"}, vfs.S_IFDIR | 0o755, 2},
	}
	for _, tc := range tests {
		st, err := lookup(t, fs, tc.path...).Stat(ctx)
		if err != nil || st.Mode != tc.mode || st.Nlink != tc.nlink {
			t.Errorf("%v: mode %#o nlink %d (%v), want %#o %d", tc.path, st.Mode, st.Nlink, err, tc.mode, tc.nlink)
		}
	}
	if sf, err := fs.Statfs(ctx); err != nil || sf.Type != tmpfsMagic || sf.Files != 14 {
		t.Errorf("statfs %+v, %v", sf, err)
	}
	if fs.ReadOnly() || fs.Release() != nil {
		t.Error("ReadOnly or Release")
	}
}

func TestImmutableTree(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	opts := vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644}
	for _, d := range [][]string{nil, {"shm"}, {"pts"}} {
		dir := lookup(t, fs, d...)
		_, err := dir.Create(ctx, "new", opts)
		wantErrno(t, "create", err, errno.EPERM)
		_, err = dir.Mkdir(ctx, "new", opts)
		wantErrno(t, "mkdir", err, errno.EPERM)
		_, err = dir.Symlink(ctx, "new", "/x", opts)
		wantErrno(t, "symlink", err, errno.EPERM)
		wantErrno(t, "link", dir.Link(ctx, "new", lookup(t, fs, "null")), errno.EPERM)
		wantErrno(t, "unlink missing", dir.Unlink(ctx, "nope"), errno.ENOENT)
		wantErrno(t, "rmdir missing", dir.Rmdir(ctx, "nope"), errno.ENOENT)
		wantErrno(t, "rename missing", dir.Rename(ctx, "nope", dir, "x"), errno.ENOENT)
		_, err = dir.Lookup(ctx, "nope")
		wantErrno(t, "lookup", err, errno.ENOENT)
	}
	root := lookup(t, fs)
	_, err := root.Create(ctx, "null", opts)
	wantErrno(t, "create existing", err, errno.EEXIST)
	_, err = root.Mkdir(ctx, "shm", opts)
	wantErrno(t, "mkdir existing", err, errno.EEXIST)
	wantErrno(t, "unlink null", root.Unlink(ctx, "null"), errno.EPERM)
	wantErrno(t, "unlink stdout", root.Unlink(ctx, "stdout"), errno.EPERM)
	wantErrno(t, "rmdir shm", root.Rmdir(ctx, "shm"), errno.EPERM)
	wantErrno(t, "rename", root.Rename(ctx, "zero", root, "one"), errno.EPERM)
	_, err = root.Open(ctx, vfs.O_RDONLY)
	wantErrno(t, "open dir", err, errno.EISDIR)
	_, err = lookup(t, fs, "null").Lookup(ctx, "x")
	wantErrno(t, "lookup in device", err, errno.ENOTDIR)
}

func TestSetAttr(t *testing.T) {
	fs := newFS(t)
	ctx := context.Background()
	for _, name := range []string{"null", "zero", "tty"} {
		ino := lookup(t, fs, name)
		wantErrno(t, "chmod", ino.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}), errno.EPERM)
		wantErrno(t, "chown", ino.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetUID, UID: 1000}), errno.EPERM)
		wantErrno(t, "truncate", ino.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}), errno.EINVAL)
		if st, _ := ino.Stat(ctx); st.Mode != vfs.S_IFCHR|0o666 || st.UID != 0 {
			t.Errorf("%s: a refused change still changed %+v", name, st)
		}
	}
	// Timestamps may change, as touch /dev/null works on Linux.
	ino := lookup(t, fs, "null")
	later := epoch.Add(time.Hour)
	if err := ino.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: later, Mtime: later}); err != nil {
		t.Fatal(err)
	}
	if st, _ := ino.Stat(ctx); !st.Mtime.Equal(later) || !st.Atime.Equal(later) {
		t.Errorf("times not set: %+v", st)
	}
	root := lookup(t, fs)
	wantErrno(t, "chmod /dev", root.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}), errno.EPERM)
	wantErrno(t, "truncate /dev", root.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}), errno.EISDIR)
	wantErrno(t, "chmod link", lookup(t, fs, "stdout").SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode}), errno.EPERM)
}

func TestConcurrentUse(t *testing.T) {
	fs := New(Options{})
	ctx := context.Background()
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			buf := make([]byte, 4096)
			for range 200 {
				root, _ := fs.Root(ctx)
				ino, err := root.Lookup(ctx, "urandom")
				if err != nil {
					t.Error(err)
					return
				}
				h, _ := ino.Open(ctx, vfs.O_RDWR)
				_, _ = h.ReadAt(ctx, buf, 0)
				_ = ino.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMtime, Mtime: time.Now()})
				_, _ = ino.Stat(ctx)
				_ = h.Close()
			}
		}()
	}
	for range 4 {
		<-done
	}
}
