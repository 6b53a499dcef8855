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
