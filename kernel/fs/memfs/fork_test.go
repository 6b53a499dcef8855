package memfs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// walk resolves a slash-separated path from the root of fs.
func walk(t testing.TB, fs *FS, path string) vfs.Inode {
	t.Helper()
	n := rootOf(t, fs)
	for name := range bytes.SplitSeq([]byte(path), []byte("/")) {
		c, err := n.Lookup(bg, string(name))
		if err != nil {
			t.Fatalf("Lookup %q of %q: %v", name, path, err)
		}
		n = c
	}
	return n
}

func mustClone(t testing.TB, fs *FS, q *vfs.Quota) *FS {
	t.Helper()
	c, err := fs.Clone(bg, Options{Quota: q})
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	return c
}

// TestForkHandleHeldAcrossFork: a handle the parent opened before the
// fork writes, appends and truncates only the parent's file, and the
// child's own handles only the child's; renaming the file on one side
// leaves the other's name alone, and two handles of one side still see
// each other's writes (the shared-mapping case).
func TestForkHandleHeldAcrossFork(t *testing.T) {
	src := New(Options{})
	d := mustMkdir(t, rootOf(t, src), "d")
	f := mustCreate(t, d, "f")
	h := mustOpen(t, f, vfs.O_RDWR)
	defer h.Close()
	h2 := mustOpen(t, f, vfs.O_RDWR)
	defer h2.Close()
	mustWrite(t, h, bytes.Repeat([]byte("o"), 3*PageSize), 0)

	dst := mustClone(t, src, nil)
	df := walk(t, dst, "d/f")
	dh := mustOpen(t, df, vfs.O_RDWR)
	defer dh.Close()

	mustWrite(t, h, []byte("PARENT"), PageSize)
	if _, _, err := h.Append(bg, []byte("TAIL")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := h2.ReadAt(bg, buf, PageSize); err != nil || string(buf) != "PARENT" {
		t.Fatalf("second parent handle reads %q, %v", buf, err)
	}
	if _, err := dh.ReadAt(bg, buf, PageSize); err != nil || string(buf) != "oooooo" {
		t.Fatalf("child reads the parent's write: %q, %v", buf, err)
	}
	if st := mustStat(t, df); st.Size != 3*PageSize {
		t.Fatalf("child size %d after the parent appended", st.Size)
	}
	mustWrite(t, dh, []byte("CHILD"), 0)
	if err := df.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 7}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, df); string(got) != "CHILDoo" {
		t.Fatalf("child = %q", got)
	}
	if got := readAll(t, f); len(got) != 3*PageSize+4 || got[0] != 'o' || string(got[PageSize:PageSize+6]) != "PARENT" {
		t.Fatalf("parent changed by the child: %d bytes %q", len(got), got[:8])
	}
	// The parent truncates through its old handle's inode, then renames.
	if err := f.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 1}); err != nil {
		t.Fatal(err)
	}
	if err := d.Rename(bg, "f", rootOf(t, src), "moved"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, h, []byte("P"), 1)
	if got := readAll(t, walk(t, src, "moved")); string(got) != "oP" {
		t.Fatalf("parent = %q", got)
	}
	if got := readAll(t, walk(t, dst, "d/f")); string(got) != "CHILDoo" {
		t.Fatalf("child after the parent's rename = %q", got)
	}
	if _, err := rootOf(t, dst).Lookup(bg, "moved"); errno.Of(err) != errno.ENOENT {
		t.Fatalf("child sees the parent's rename: %v", err)
	}
}

// TestForkDirRenamedOneSide: a directory moved (with its contents) on one
// side stays in place on the other, and what is made in it afterwards
// lands only on the side that made it.
func TestForkDirRenamedOneSide(t *testing.T) {
	src := New(Options{})
	root := rootOf(t, src)
	a := mustMkdir(t, root, "a")
	mustMkdir(t, root, "b")
	mustCreate(t, mustMkdir(t, a, "sub"), "x")
	dst := mustClone(t, src, nil)

	if err := walk(t, dst, "a").Rename(bg, "sub", walk(t, dst, "b"), "sub2"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, walk(t, dst, "b/sub2"), "y")
	if err := root.Rename(bg, "a", root, "a2"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, walk(t, src, "a2/sub"), "z")

	if got := fmt.Sprint(names(t, walk(t, src, "a2/sub"))); got != "[x z]" {
		t.Fatalf("parent a2/sub = %s", got)
	}
	if got := fmt.Sprint(names(t, walk(t, src, "b"))); got != "[]" {
		t.Fatalf("parent b = %s", got)
	}
	if got := fmt.Sprint(names(t, walk(t, dst, "b/sub2"))); got != "[x y]" {
		t.Fatalf("child b/sub2 = %s", got)
	}
	if got := fmt.Sprint(names(t, rootOf(t, dst))); got != "[a b]" {
		t.Fatalf("child root = %s", got)
	}
	if got := fmt.Sprint(names(t, walk(t, dst, "a"))); got != "[]" {
		t.Fatalf("child a = %s", got)
	}
	// Link counts followed the move on each side alone.
	if n := mustStat(t, walk(t, dst, "a")).Nlink; n != 2 {
		t.Fatalf("child a nlink %d", n)
	}
	if n := mustStat(t, walk(t, src, "a2")).Nlink; n != 3 {
		t.Fatalf("parent a2 nlink %d", n)
	}
	// Moving a directory under itself is still refused on the child,
	// whose directory views were made lazily.
	if err := walk(t, dst, "b").Rename(bg, "sub2", walk(t, dst, "b/sub2"), "loop"); errno.Of(err) != errno.EINVAL {
		t.Fatalf("rename into itself: %v", err)
	}
}

// TestForkHardLinks: two names of one file stay one inode on each side,
// each side's writes show under both of its names only, link counts are
// per side, and a link across the two sides is EXDEV.
func TestForkHardLinks(t *testing.T) {
	src := New(Options{})
	root := rootOf(t, src)
	f := mustCreate(t, root, "one")
	mustWrite(t, mustOpen(t, f, vfs.O_WRONLY), []byte("base"), 0)
	d := mustMkdir(t, root, "d")
	if err := d.Link(bg, "two", f); err != nil {
		t.Fatal(err)
	}
	dst := mustClone(t, src, nil)
	one, two := walk(t, dst, "one"), walk(t, dst, "d/two")
	if one != two {
		t.Fatal("the child has two inodes for one hard-linked file")
	}
	h := mustOpen(t, two, vfs.O_RDWR)
	mustWrite(t, h, []byte("CH"), 0)
	h.Close()
	if got := readAll(t, one); string(got) != "CHse" {
		t.Fatalf("child one = %q", got)
	}
	if got := readAll(t, walk(t, src, "d/two")); string(got) != "base" {
		t.Fatalf("parent two = %q", got)
	}
	if err := rootOf(t, dst).Unlink(bg, "one"); err != nil {
		t.Fatal(err)
	}
	if n := mustStat(t, two).Nlink; n != 1 {
		t.Fatalf("child nlink %d", n)
	}
	if n := mustStat(t, f).Nlink; n != 2 {
		t.Fatalf("parent nlink %d after the child unlinked", n)
	}
	wantErr(t, "link across sides", rootOf(t, dst).Link(bg, "x", f), errno.EXDEV)
	wantErr(t, "link across sides", root.Link(bg, "x", two), errno.EXDEV)
}

// TestForkChain: fifty forks of forks, each writing its generation into a
// shared file and making a name; every one sees exactly its ancestors'
// names and its own data, while all of them are alive.
func TestForkChain(t *testing.T) {
	const n = 50
	gens := []*FS{New(Options{})}
	f := mustCreate(t, rootOf(t, gens[0]), "f")
	mustWrite(t, mustOpen(t, f, vfs.O_WRONLY), make([]byte, n), 0)
	for i := 1; i < n; i++ {
		c := mustClone(t, gens[i-1], nil)
		mustCreate(t, rootOf(t, c), fmt.Sprint("g", i))
		h := mustOpen(t, walk(t, c, "f"), vfs.O_RDWR)
		mustWrite(t, h, []byte{byte(i)}, int64(i))
		h.Close()
		gens = append(gens, c)
	}
	// The first writes after all the forks, on the oldest one.
	mustWrite(t, mustOpen(t, f, vfs.O_WRONLY), []byte{0xff}, n-1)
	for i, fs := range gens {
		want := make([]byte, n)
		wantNames := []string{"f"}
		for j := 1; j <= i; j++ {
			want[j] = byte(j)
			wantNames = append(wantNames, fmt.Sprint("g", j))
		}
		if i == 0 {
			want[n-1] = 0xff
		}
		if got := readAll(t, walk(t, fs, "f")); !bytes.Equal(got, want) {
			t.Fatalf("generation %d: f = %v", i, got)
		}
		if got := names(t, rootOf(t, fs)); !slices.Equal(got, wantNames) {
			t.Fatalf("generation %d: names %v", i, got)
		}
	}
}

// TestForkWhileParentWrites forks, and forks the forks, while the parent
// keeps making names and then bumping a counter: each fork must hold one
// state the parent passed through (the counter k with names n0..n(k-1),
// n(k) possibly made already), never a mix.
func TestForkWhileParentWrites(t *testing.T) {
	src := New(Options{})
	root := rootOf(t, src)
	cnt := mustCreate(t, root, "count")
	h := mustOpen(t, cnt, vfs.O_RDWR)
	defer h.Close()
	mustWrite(t, h, make([]byte, 8), 0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := root.Create(bg, fmt.Sprint("n", i), regOpts(0o644)); err != nil {
				t.Error(err)
				return
			}
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], i+1)
			if _, err := h.WriteAt(bg, b[:], 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var forks []*FS
	for i := range 40 {
		from := src
		if i%2 == 1 {
			from = forks[len(forks)-1]
		}
		forks = append(forks, mustClone(t, from, nil))
	}
	close(stop)
	wg.Wait()
	for i, fs := range forks {
		k := binary.LittleEndian.Uint64(readAll(t, walk(t, fs, "count")))
		got := names(t, rootOf(t, fs))
		var want []string
		for j := range k {
			want = append(want, fmt.Sprint("n", j))
		}
		wantMore := append(slices.Clone(want), fmt.Sprint("n", k))
		got = slices.DeleteFunc(got, func(s string) bool { return s == "count" })
		if !slices.Equal(got, want) && !slices.Equal(got, wantMore) {
			t.Fatalf("fork %d: counter %d but %d names (last %q)", i, k, len(got), got[len(got)-1])
		}
	}
}

// TestForkQuota: the child is charged what the parent has charged, less
// the parent's open unlinked files; each side's writes, truncates and
// removals move only its own quota; releasing both returns everything.
func TestForkQuota(t *testing.T) {
	pq, cq := vfs.NewQuota(1<<20, 100), vfs.NewQuota(1<<20, 100)
	src := New(Options{Quota: pq})
	root := rootOf(t, src)
	f := mustCreate(t, root, "f")
	mustWrite(t, mustOpen(t, f, vfs.O_WRONLY), make([]byte, 1000), 0)
	if err := root.Link(bg, "f2", f); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Symlink(bg, "ln", "f", vfs.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := mustCreate(t, root, "gone")
	gh := mustOpen(t, gone, vfs.O_RDWR)
	mustWrite(t, gh, make([]byte, 500), 0)
	wantErr(t, "unlink", root.Unlink(bg, "gone"), 0)
	usage := func(q *vfs.Quota) [2]int64 { b, _, n, _ := q.Usage(); return [2]int64{b, n} }
	if got := usage(pq); got != [2]int64{1501, 4} {
		t.Fatalf("parent usage %v", got)
	}

	dst := mustClone(t, src, cq)
	if got := usage(cq); got != [2]int64{1001, 3} {
		t.Fatalf("child charged %v, want [1001 3] (the open unlinked file left out)", got)
	}
	if _, err := rootOf(t, dst).Lookup(bg, "gone"); errno.Of(err) != errno.ENOENT {
		t.Fatal("the child sees an unlinked file")
	}
	if dst.inodes.get(gone.(*file).ino) != nil {
		t.Fatal("the child's table keeps the parent's unlinked file alive")
	}
	// Child writes grow the child's quota only.
	dh := mustOpen(t, walk(t, dst, "f2"), vfs.O_RDWR)
	mustWrite(t, dh, make([]byte, 100), 1000)
	dh.Close()
	if got, want := usage(cq), [2]int64{1101, 3}; got != want {
		t.Fatalf("child usage %v want %v", got, want)
	}
	if got := usage(pq); got != [2]int64{1501, 4} {
		t.Fatalf("parent usage %v after a child write", got)
	}
	// Removing every name on the child credits the child alone.
	for _, n := range []string{"f", "f2", "ln"} {
		wantErr(t, "unlink "+n, rootOf(t, dst).Unlink(bg, n), 0)
	}
	if got := usage(cq); got != [2]int64{0, 0} {
		t.Fatalf("child usage %v after removing everything", got)
	}
	if got := usage(pq); got != [2]int64{1501, 4} {
		t.Fatalf("parent usage %v after the child removed everything", got)
	}
	// The parent's unlinked file is freed by its last close.
	gh.Close()
	if got := usage(pq); got != [2]int64{1001, 3} {
		t.Fatalf("parent usage %v after the last close", got)
	}
	// A truncate on the parent; then release both.
	wantErr(t, "truncate", f.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 10}), 0)
	if got := usage(pq); got != [2]int64{11, 3} {
		t.Fatalf("parent usage %v after truncate", got)
	}
	_ = src.Release()
	_ = dst.Release()
	if usage(pq) != [2]int64{} || usage(cq) != [2]int64{} {
		t.Fatalf("after release: %v %v", usage(pq), usage(cq))
	}
}

// TestForkAttributes: modes, owners and times changed on one side stay
// there, and an inode removed on one side but still held by its VFS
// cannot be brought back into the table by a late change (which a later
// fork would then keep alive).
func TestForkAttributes(t *testing.T) {
	clk := newClock()
	src := New(Options{Now: clk.Now})
	root := rootOf(t, src)
	f := mustCreate(t, root, "f")
	d := mustMkdir(t, root, "d")
	dst, err := src.Clone(bg, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	before := mustStat(t, f)
	clk.Tick()
	df := walk(t, dst, "f")
	if err := df.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode | vfs.SetUID | vfs.SetMtime, Mode: 0o600, UID: 7, Mtime: clk.Tick()}); err != nil {
		t.Fatal(err)
	}
	if st := mustStat(t, f); st != before {
		t.Fatalf("parent attributes changed by the child: %+v vs %+v", st, before)
	}
	if st := mustStat(t, df); st.Mode&0o777 != 0o600 || st.UID != 7 || st.Mtime == before.Mtime {
		t.Fatalf("child attributes %+v", st)
	}
	// Reading on the child records an access there only.
	clk.Tick()
	readAll(t, df)
	if mustStat(t, f).Atime != before.Atime {
		t.Fatal("a child read changed the parent's atime")
	}

	wantErr(t, "rmdir", root.Rmdir(bg, "d"), 0)
	ino := d.(*dir).ino
	wantErr(t, "chmod removed dir", d.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}), 0)
	if src.inodes.get(ino) != nil {
		t.Fatal("a change through a stale view put a removed directory back in the table")
	}
	if c := mustClone(t, src, nil); c.inodes.get(ino) != nil {
		t.Fatal("a fork keeps a removed directory")
	}
}

// TestForkRace hammers a parent and its forks from several goroutines at
// once, forking all the while (run with -race): every operation must
// succeed or fail cleanly, and at the end each side still holds its own
// marker file only.
func TestForkRace(t *testing.T) {
	src := New(Options{Quota: vfs.NewQuota(64<<20, 100000)})
	root := rootOf(t, src)
	for i := range 8 {
		d := mustMkdir(t, root, fmt.Sprint("d", i))
		h := mustOpen(t, mustCreate(t, d, "f"), vfs.O_RDWR)
		mustWrite(t, h, bytes.Repeat([]byte{byte(i)}, 2*PageSize), 0)
		h.Close()
	}
	shared := mustOpen(t, walk(t, src, "d0/f"), vfs.O_RDWR)
	defer shared.Close()
	var (
		mu    sync.Mutex
		sides = []*FS{src}
	)
	hammer := func(fs *FS, seed int) {
		r := rootOf(t, fs)
		for i := range 200 {
			d, err := r.Lookup(bg, fmt.Sprint("d", (seed+i)%8))
			if err != nil {
				continue
			}
			name := fmt.Sprint("t", seed, "_", i%5)
			switch i % 6 {
			case 0:
				_, _ = d.Create(bg, name, regOpts(0o644))
			case 1:
				_ = d.Unlink(bg, name)
			case 2:
				if f, err := d.Lookup(bg, "f"); err == nil {
					if h, err := f.Open(bg, vfs.O_RDWR); err == nil {
						_, _ = h.WriteAt(bg, []byte{byte(seed)}, int64(i))
						_, _, _ = h.Append(bg, []byte("x"))
						_ = h.Close()
					}
				}
			case 3:
				_ = d.Rename(bg, name, r, name+"r")
				_ = r.Rename(bg, name+"r", d, name)
			case 4:
				_, _ = d.ReadDir(bg, 0, 100)
				_ = d.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o755})
			case 5:
				if f, err := d.Lookup(bg, "f"); err == nil {
					_ = f.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: int64(PageSize + i)})
				}
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				mu.Lock()
				fs := sides[len(sides)-1-g%len(sides)]
				mu.Unlock()
				hammer(fs, g)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			mu.Lock()
			from := sides[i%len(sides)]
			mu.Unlock()
			c, err := from.Clone(bg, Options{Quota: vfs.NewQuota(64<<20, 100000)})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := shared.WriteAt(bg, []byte("P"), 0); err != nil {
				t.Error(err)
			}
			mu.Lock()
			sides = append(sides, c)
			mu.Unlock()
		}
	}()
	wg.Wait()
	for i, fs := range sides {
		mustCreate(t, rootOf(t, fs), fmt.Sprint("mark", i))
	}
	for i, fs := range sides {
		for j := range sides {
			_, err := rootOf(t, fs).Lookup(bg, fmt.Sprint("mark", j))
			if (err == nil) != (i == j) {
				t.Fatalf("side %d, mark %d: %v", i, j, err)
			}
		}
	}
}

// BenchmarkFork forks filesystems of 2,000 and 100,000 files (in
// directories of 100, each file 1 KiB): the cost must not grow with the
// tree. Each fork is released before the next.
func BenchmarkFork(b *testing.B) {
	for _, files := range []int{2000, 100000} {
		b.Run(fmt.Sprint("files=", files), func(b *testing.B) {
			src := New(Options{})
			root := rootOf(b, src)
			data := make([]byte, 1024)
			for i := range files / 100 {
				d := mustMkdir(b, root, fmt.Sprint("pkg", i))
				for j := range 100 {
					h := mustOpen(b, mustCreate(b, d, fmt.Sprint("f", j)), vfs.O_WRONLY)
					mustWrite(b, h, data, 0)
					h.Close()
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				c, err := src.Clone(bg, Options{Quota: vfs.NewQuota(1<<30, 1<<20)})
				if err != nil {
					b.Fatal(err)
				}
				_ = c.Release()
			}
		})
	}
}

// BenchmarkForkFirstWrite measures what a fork defers: the first write
// to one file of a 100,000-file tree after a fork (copying that file's
// core, its pages and one path of the inode table), on the parent.
func BenchmarkForkFirstWrite(b *testing.B) {
	src := New(Options{})
	root := rootOf(b, src)
	var h vfs.Handle
	for i := range 1000 {
		d := mustMkdir(b, root, fmt.Sprint("pkg", i))
		for j := range 100 {
			f := mustCreate(b, d, fmt.Sprint("f", j))
			if i == 500 && j == 50 {
				h = mustOpen(b, f, vfs.O_RDWR)
				mustWrite(b, h, make([]byte, 4096), 0)
			}
		}
	}
	defer h.Close()
	b.ReportAllocs()
	for b.Loop() {
		c, err := src.Clone(bg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		mustWrite(b, h, []byte("x"), 0)
		_ = c.Release()
	}
}

// TestForkPagesCopiedOneByOne: the first write after a fork copies the
// page it touches, not the file; the other pages stay shared with the
// other side. A page truncated short and then grown again in place (a
// page's spare capacity) is copied first too, or the growth would write
// into the other side's bytes.
func TestForkPagesCopiedOneByOne(t *testing.T) {
	src := New(Options{})
	f := mustCreate(t, rootOf(t, src), "f")
	h := mustOpen(t, f, vfs.O_RDWR)
	defer h.Close()
	orig := bytes.Repeat([]byte("0123456789"), PageSize)[:4*PageSize]
	mustWrite(t, h, orig, 0)
	dst := mustClone(t, src, nil)
	df := walk(t, dst, "f")

	mustWrite(t, h, []byte("W"), 5)
	pc, cc := f.(*file).c, df.(*file).c
	if &pc.pages[0][0] == &cc.pages[0][0] {
		t.Fatal("the written page is still shared")
	}
	if &pc.pages[1][0] != &cc.pages[1][0] {
		t.Fatal("an unwritten page was copied")
	}
	// Truncate into page 1 on the parent, then grow it in place.
	wantErr(t, "truncate", f.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: PageSize + 10}), 0)
	mustWrite(t, h, []byte("GROW"), PageSize+20)
	if got := readAll(t, df); !bytes.Equal(got, orig) {
		t.Fatalf("the child's data changed: %q", got[PageSize:PageSize+30])
	}
	want := append(append([]byte{}, orig[:PageSize+10]...), make([]byte, 10)...)
	want = append(want, "GROW"...)
	want[5] = 'W'
	if got := readAll(t, f); !bytes.Equal(got, want) {
		t.Fatalf("parent = %q", got[PageSize:])
	}
}
