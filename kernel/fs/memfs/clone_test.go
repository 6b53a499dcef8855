package memfs

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// TestCloneIsolated: after Clone, writes, truncates, creates and removes
// on either side are invisible to the other, including writes through a
// handle opened before the clone.
func TestCloneIsolated(t *testing.T) {
	q := vfs.NewQuota(1<<20, 100)
	src := New(Options{Quota: q})
	root := rootOf(t, src)
	sub := mustMkdir(t, root, "sub")
	f := mustCreate(t, sub, "f")
	h := mustOpen(t, f, vfs.O_RDWR)
	defer h.Close()
	mustWrite(t, h, bytes.Repeat([]byte("a"), 5000), 0)
	if err := root.Link(bg, "hard", f); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Symlink(bg, "ln", "sub/f", vfs.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	q2 := vfs.NewQuota(1<<20, 100)
	dst, err := src.Clone(bg, Options{Quota: q2})
	if err != nil {
		t.Fatal(err)
	}
	if b, _, n, _ := q2.Usage(); b != 5000+int64(len("sub/f")) || n != 4 {
		t.Fatalf("clone charged %d bytes %d inodes, want %d and 4", b, n, 5000+len("sub/f"))
	}
	droot := rootOf(t, dst)
	dsub, err := droot.Lookup(bg, "sub")
	if err != nil {
		t.Fatal(err)
	}
	df, err := dsub.Lookup(bg, "f")
	if err != nil {
		t.Fatal(err)
	}
	dhard, err := droot.Lookup(bg, "hard")
	if err != nil {
		t.Fatal(err)
	}
	if dhard != df {
		t.Fatal("a hard link was not kept as one inode")
	}
	if st, st2 := mustStat(t, f), mustStat(t, df); st.Ino != st2.Ino || st.Nlink != 2 || st2.Nlink != 2 || st.Mtime != st2.Mtime {
		t.Fatalf("stat differs: %+v vs %+v", st, st2)
	}

	// The handle opened before the clone writes to the source only.
	mustWrite(t, h, []byte("PARENT"), 4096)
	if got := readAll(t, df); !bytes.Equal(got, bytes.Repeat([]byte("a"), 5000)) {
		t.Fatalf("clone sees the source's write: %q", got[4090:])
	}
	// A write on the clone's side is invisible to the source.
	dh := mustOpen(t, df, vfs.O_RDWR)
	mustWrite(t, dh, []byte("CHILD"), 0)
	if err := df.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 10}); err != nil {
		t.Fatal(err)
	}
	dh.Close()
	if got := readAll(t, f); !bytes.Equal(got[:5], []byte("aaaaa")) || len(got) != 5000 || string(got[4096:4102]) != "PARENT" {
		t.Fatalf("source changed by the clone: len %d %q", len(got), got[:8])
	}
	if got := readAll(t, df); string(got) != "CHILDaaaaa" {
		t.Fatalf("clone = %q", got)
	}
	// Names made or removed on one side stay there.
	mustCreate(t, root, "onlysrc")
	if err := droot.Unlink(bg, "ln"); err != nil {
		t.Fatal(err)
	}
	if _, err := droot.Lookup(bg, "onlysrc"); errno.Of(err) != errno.ENOENT {
		t.Fatalf("clone sees a new source name: %v", err)
	}
	if _, err := root.Lookup(bg, "ln"); err != nil {
		t.Fatalf("source lost a name the clone removed: %v", err)
	}
	if fmt.Sprint(names(t, droot)) != "[sub hard]" {
		t.Fatalf("clone root = %v", names(t, droot))
	}
}

// TestCloneQuota: a clone that does not fit its quota fails with ENOSPC
// and leaves that quota as it was.
func TestCloneQuota(t *testing.T) {
	src := New(Options{})
	f := mustCreate(t, rootOf(t, src), "big")
	h := mustOpen(t, f, vfs.O_WRONLY)
	mustWrite(t, h, make([]byte, 10000), 0)
	h.Close()
	for range 5 {
		mustCreate(t, mustMkdir(t, rootOf(t, src), fmt.Sprint("d", len(names(t, rootOf(t, src))))), "x")
	}
	for _, q := range []*vfs.Quota{vfs.NewQuota(5000, 100), vfs.NewQuota(1<<20, 3)} {
		_, err := src.Clone(bg, Options{Quota: q})
		wantErr(t, "Clone", err, errno.ENOSPC)
		if b, _, n, _ := q.Usage(); b != 0 || n != 0 {
			t.Fatalf("failed clone left %d bytes %d inodes charged", b, n)
		}
	}
}

// BenchmarkClone clones a tree of 5000 files of 4 KiB each.
func BenchmarkClone(b *testing.B) {
	src := New(Options{})
	root := rootOf(b, src)
	data := make([]byte, 4096)
	for i := range 50 {
		d := mustMkdir(b, root, fmt.Sprint("pkg", i))
		for j := range 100 {
			h := mustOpen(b, mustCreate(b, d, fmt.Sprint("f", j)), vfs.O_WRONLY)
			mustWrite(b, h, data, 0)
			h.Close()
		}
	}
	b.ResetTimer()
	for range b.N {
		c, err := src.Clone(bg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Release()
	}
}

// TestCloneConcurrent clones while a writer changes a file and then
// writes to the shared file from both sides at once (run with -race).
func TestCloneConcurrent(t *testing.T) {
	src := New(Options{})
	f := mustCreate(t, rootOf(t, src), "f")
	h := mustOpen(t, f, vfs.O_RDWR)
	defer h.Close()
	mustWrite(t, h, make([]byte, 3*PageSize), 0)
	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := h.WriteAt(bg, []byte{byte(i)}, int64(i%(3*PageSize))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var clones []*FS
	for range 20 {
		c, err := src.Clone(bg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		clones = append(clones, c)
	}
	close(stop)
	<-wrote
	done := make(chan struct{})
	for _, c := range clones {
		go func() {
			defer func() { done <- struct{}{} }()
			cf, err := rootOf(t, c).Lookup(bg, "f")
			if err != nil {
				t.Error(err)
				return
			}
			ch, err := cf.Open(bg, vfs.O_RDWR)
			if err != nil {
				t.Error(err)
				return
			}
			defer ch.Close()
			buf := make([]byte, PageSize)
			for i := range 50 {
				_, _ = ch.WriteAt(bg, []byte("x"), int64(i))
				_, _ = ch.ReadAt(bg, buf, 0)
			}
		}()
	}
	for range 50 {
		mustWrite(t, h, []byte("y"), 7)
	}
	for range clones {
		<-done
	}
	if got := readAll(t, f); got[7] != 'y' || got[0] == 'x' {
		t.Fatalf("source = %q...", got[:8])
	}
}
