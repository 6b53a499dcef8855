package memfs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// TestConcurrentAppend checks that appenders never overwrite each other:
// every record lands whole, and the size is the sum of all of them.
func TestConcurrentAppend(t *testing.T) {
	fs := New(Options{})
	n := mustCreate(t, rootOf(t, fs), "log")
	const writers, records, recLen = 8, 200, 37
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := mustOpen(t, n, vfs.O_WRONLY|vfs.O_APPEND)
			defer h.Close()
			rec := bytes.Repeat([]byte{byte('A' + w)}, recLen)
			for range records {
				if got, _, err := h.Append(bg, rec); got != recLen || err != nil {
					t.Errorf("Append = %d, %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	data := readAll(t, n)
	if len(data) != writers*records*recLen {
		t.Fatalf("size %d, want %d", len(data), writers*records*recLen)
	}
	counts := map[byte]int{}
	for i := 0; i < len(data); i += recLen {
		rec := data[i : i+recLen]
		if !bytes.Equal(rec, bytes.Repeat(rec[:1], recLen)) {
			t.Fatalf("torn record at %d: %q", i, rec)
		}
		counts[rec[0]]++
	}
	for w := range writers {
		if counts[byte('A'+w)] != records {
			t.Fatalf("writer %d: %d records", w, counts[byte('A'+w)])
		}
	}
}

// TestConcurrentReadWriteTruncate runs readers, writers and truncaters on
// one file; under -race it checks the locking, and afterwards that the
// quota matches the final size.
func TestConcurrentReadWriteTruncate(t *testing.T) {
	q := vfs.NewQuota(1<<20, 0)
	fs := New(Options{Quota: q})
	n := mustCreate(t, rootOf(t, fs), "f")
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			h := mustOpen(t, n, vfs.O_RDWR)
			defer h.Close()
			buf := make([]byte, 3*PageSize)
			for range 300 {
				off := r.Int64N(64 * PageSize)
				l := r.IntN(len(buf))
				switch r.IntN(4) {
				case 0:
					h.ReadAt(bg, buf[:l], off)
				case 1:
					h.WriteAt(bg, buf[:l], off)
				case 2:
					h.Append(bg, buf[:l%100])
				case 3:
					n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: off})
				}
			}
		}()
	}
	wg.Wait()
	st := mustStat(t, n)
	if used, _, _, _ := q.Usage(); used != st.Size {
		t.Fatalf("quota charged %d bytes for a file of %d", used, st.Size)
	}
}

// TestConcurrentDirectory creates, removes, looks up and lists entries of
// one directory from many goroutines. Names that exist for the whole run
// must be listed exactly once by every complete ReadDir iteration.
func TestConcurrentDirectory(t *testing.T) {
	fs := New(Options{Quota: vfs.NewQuota(0, 100000)})
	root := rootOf(t, fs)
	d := mustMkdir(t, root, "d")
	const stable = 50
	for i := range stable {
		mustCreate(t, d, fmt.Sprintf("stable%d", i))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("tmp%d-%d", g, i%20)
				switch i % 4 {
				case 0:
					d.Create(bg, name, regOpts(0o644))
				case 1:
					d.Mkdir(bg, name, dirOpts(0o755))
				case 2:
					if d.Unlink(bg, name) != nil {
						d.Rmdir(bg, name)
					}
				case 3:
					d.Lookup(bg, name)
					d.Rename(bg, name, d, name+"r")
					d.Unlink(bg, name+"r")
					d.Rmdir(bg, name+"r")
				}
			}
		}()
	}
	for range 200 {
		seen := map[string]int{}
		cookie := uint64(0)
		for {
			ents, err := d.ReadDir(bg, cookie, 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) == 0 {
				break
			}
			for _, e := range ents {
				seen[e.Name]++
				cookie = e.Next
			}
		}
		for i := range stable {
			if c := seen[fmt.Sprintf("stable%d", i)]; c != 1 {
				t.Fatalf("stable%d listed %d times", i, c)
			}
		}
	}
	close(stop)
	wg.Wait()
}

// TestConcurrentRenames moves files and directories between directories
// that are each other's ancestors and siblings, from many goroutines at
// once. It must not deadlock (the lock order), and afterwards every file
// must still be somewhere exactly once and every link count must add up.
func TestConcurrentRenames(t *testing.T) {
	q := vfs.NewQuota(0, 100000)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	// dirs: root/a, root/b, root/a/c, root/b/d and a few movable subtrees.
	a := mustMkdir(t, root, "a")
	b := mustMkdir(t, root, "b")
	c := mustMkdir(t, a, "c")
	d := mustMkdir(t, b, "d")
	dirs := []vfs.Inode{root, a, b, c, d}
	const nfiles = 40
	for i := range nfiles {
		mustCreate(t, dirs[i%len(dirs)], fmt.Sprintf("f%d", i))
	}
	for i := range 6 {
		m := mustMkdir(t, dirs[i%len(dirs)], fmt.Sprintf("m%d", i))
		mustCreate(t, m, "inner")
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for range 2000 {
				from, to := dirs[r.IntN(len(dirs))], dirs[r.IntN(len(dirs))]
				var name string
				if r.IntN(3) == 0 {
					name = fmt.Sprintf("m%d", r.IntN(6))
				} else {
					name = fmt.Sprintf("f%d", r.IntN(nfiles))
				}
				err := from.Rename(bg, name, to, name)
				switch errno.Of(err) {
				case 0, errno.ENOENT:
				default:
					t.Errorf("Rename: %v", err)
					return
				}
				// Moving the fixed directories around too exercises the
				// ancestor ordering; EINVAL is the into-own-subtree refusal.
				if r.IntN(10) == 0 {
					dn := []string{"c", "d"}[r.IntN(2)]
					err := from.Rename(bg, dn, to, dn)
					switch errno.Of(err) {
					case 0, errno.ENOENT, errno.EINVAL, errno.ENOTEMPTY:
					default:
						t.Errorf("Rename %s: %v", dn, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()

	// Every file and movable directory is present exactly once, and the
	// link counts match the tree.
	seen := map[string]int{}
	var walk func(n vfs.Inode)
	walk = func(n vfs.Inode) {
		subdirs := 0
		for _, name := range names(t, n) {
			child, err := n.Lookup(bg, name)
			if err != nil {
				t.Fatal(err)
			}
			seen[name]++
			if _, ok := child.(*dir); ok {
				subdirs++
				walk(child)
			}
		}
		if st := mustStat(t, n); st.Nlink != uint32(2+subdirs) {
			t.Fatalf("dir nlink %d with %d subdirs", st.Nlink, subdirs)
		}
	}
	walk(root)
	for i := range nfiles {
		if seen[fmt.Sprintf("f%d", i)] != 1 {
			t.Fatalf("f%d seen %d times", i, seen[fmt.Sprintf("f%d", i)])
		}
	}
	for i := range 6 {
		if seen[fmt.Sprintf("m%d", i)] != 1 {
			t.Fatalf("m%d seen %d times", i, seen[fmt.Sprintf("m%d", i)])
		}
	}
	if _, _, inodes, _ := q.Usage(); inodes != int64(4+nfiles+12) {
		t.Fatalf("inodes charged %d, want %d", inodes, 4+nfiles+12)
	}
}

// TestConcurrentQuota writes from many goroutines into separate files
// under one small quota: the quota is never exceeded, every write either
// lands (in full or in part) or fails with ENOSPC, and removing everything
// returns the quota to zero.
func TestConcurrentQuota(t *testing.T) {
	const limit = 256 << 10
	q := vfs.NewQuota(limit, 1000)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("f%d", g)
			n, err := root.Create(bg, name, regOpts(0o644))
			if err != nil {
				t.Error(err)
				return
			}
			h, _ := n.Open(bg, vfs.O_RDWR)
			defer h.Close()
			buf := make([]byte, 5000)
			for i := range 100 {
				_, _, err := h.Append(bg, buf)
				if err != nil && errno.Of(err) != errno.ENOSPC {
					t.Errorf("Append: %v", err)
				}
				if used, _, _, _ := q.Usage(); used > limit {
					t.Errorf("quota exceeded: %d", used)
				}
				if i%10 == 9 {
					n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: 1000})
				}
			}
		}()
	}
	wg.Wait()
	var total int64
	for g := range 8 {
		n, _ := root.Lookup(bg, fmt.Sprintf("f%d", g))
		total += mustStat(t, n).Size
		root.Unlink(bg, fmt.Sprintf("f%d", g))
	}
	if total > limit {
		t.Fatalf("files hold %d bytes, over the quota", total)
	}
	if used, _, inodes, _ := q.Usage(); used != 0 || inodes != 0 {
		t.Fatalf("after removal: %d bytes, %d inodes", used, inodes)
	}
}

// TestRenameSiblingDirsNoDeadlock races a same-directory rename of one
// sibling directory onto another (which locks both) against renames that
// move files between the two siblings (which lock both as parents, in
// either order). A lock order that ignored one against the other would
// deadlock here.
func TestRenameSiblingDirsNoDeadlock(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	s := mustMkdir(t, root, "S")
	d := mustMkdir(t, root, "T")
	mustCreate(t, d, "keep") // T stays non-empty: S onto T is ENOTEMPTY
	mustCreate(t, s, "x")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 3000 {
			err := root.Rename(bg, "S", root, "T")
			if errno.Of(err) != errno.ENOTEMPTY {
				t.Errorf("S onto T: %v", err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 3000 {
			from, to := s, d
			if i%2 == 1 {
				from, to = d, s
			}
			if err := from.Rename(bg, "x", to, "x"); err != nil {
				t.Errorf("move x: %v", err)
				return
			}
		}
	}()
	wg.Wait()
}

// TestConcurrentChaos runs random namespace operations on a small tree
// from several goroutines: creates, mkdirs, removals, links, writes and
// renames of files and directories within and across directories. It
// must not deadlock or race, and afterwards the tree must be consistent:
// directory link counts match their subdirectories, and the quota holds
// exactly one inode per name (the open handles are all closed), and every
// file's link count is its number of names.
func TestConcurrentChaos(t *testing.T) {
	q := vfs.NewQuota(1<<20, 100000)
	fs := New(Options{Quota: q})
	root := rootOf(t, fs)
	names := []string{"a", "b", "c", "d"}
	// pick walks from the root to a random directory at most 3 deep.
	pick := func(r *rand.Rand) vfs.Inode {
		cur := root
		for range r.IntN(4) {
			n, err := cur.Lookup(bg, names[r.IntN(len(names))])
			if err != nil {
				break
			}
			if _, ok := n.(*dir); !ok {
				break
			}
			cur = n
		}
		return cur
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 3))
			for range 4000 {
				d1, d2 := pick(r), pick(r)
				n1, n2 := names[r.IntN(len(names))], names[r.IntN(len(names))]
				var err error
				switch r.IntN(8) {
				case 0:
					_, err = d1.Create(bg, n1, regOpts(0o644))
				case 1:
					_, err = d1.Mkdir(bg, n1, dirOpts(0o755))
				case 2:
					err = d1.Unlink(bg, n1)
				case 3:
					err = d1.Rmdir(bg, n1)
				case 4, 5:
					err = d1.Rename(bg, n1, d2, n2)
				case 6:
					var n vfs.Inode
					if n, err = d1.Lookup(bg, n1); err == nil {
						if _, isDir := n.(*dir); !isDir {
							err = d2.Link(bg, n2, n)
						}
					}
				case 7:
					var n vfs.Inode
					if n, err = d1.Lookup(bg, n1); err == nil {
						var h vfs.Handle
						if h, err = n.Open(bg, vfs.O_RDWR); err == nil {
							h.WriteAt(bg, make([]byte, r.IntN(5000)), int64(r.IntN(5000)))
							h.Close()
						}
					}
				}
				switch errno.Of(err) {
				case 0, errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR,
					errno.EINVAL, errno.ENOSPC, errno.EPERM, errno.ELOOP, errno.ENXIO:
				default:
					t.Errorf("unexpected error: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()

	entries := 0
	var bytes int64
	seen := map[vfs.Inode]bool{}
	links := map[vfs.Inode]uint32{}
	var walk func(d vfs.Inode)
	walk = func(d vfs.Inode) {
		subdirs := 0
		cookie := uint64(0)
		for {
			ents, err := d.ReadDir(bg, cookie, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) == 0 {
				break
			}
			for _, e := range ents {
				cookie = e.Next
				entries++
				c, err := d.Lookup(bg, e.Name)
				if err != nil {
					t.Fatalf("listed %q but Lookup: %v", e.Name, err)
				}
				if _, ok := c.(*dir); ok {
					subdirs++
					walk(c)
				} else {
					links[c]++
					if !seen[c] {
						seen[c] = true
						bytes += mustStat(t, c).Size
					}
				}
			}
		}
		if st := mustStat(t, d); st.Nlink != uint32(2+subdirs) {
			t.Fatalf("directory nlink %d with %d subdirectories", st.Nlink, subdirs)
		}
	}
	walk(root)
	for n, want := range links {
		if got := mustStat(t, n).Nlink; got != want {
			t.Fatalf("file with %d names has nlink %d", want, got)
		}
	}
	used, _, inodes, _ := q.Usage()
	if inodes != int64(entries) || used != bytes {
		t.Fatalf("quota: %d inodes for %d names, %d bytes for %d", inodes, entries, used, bytes)
	}
}
