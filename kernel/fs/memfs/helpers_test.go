package memfs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// fakeClock is a deterministic clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Tick advances the clock by one second and returns the new time.
func (c *fakeClock) Tick() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

var bg = context.Background()

func regOpts(perm uint32) vfs.CreateOptions {
	return vfs.CreateOptions{Mode: vfs.S_IFREG | perm}
}

func dirOpts(perm uint32) vfs.CreateOptions {
	return vfs.CreateOptions{Mode: vfs.S_IFDIR | perm}
}

func rootOf(t testing.TB, fs *FS) vfs.Inode {
	t.Helper()
	r, err := fs.Root(bg)
	if err != nil {
		t.Fatalf("Root: %v", err)
	}
	return r
}

func mustCreate(t testing.TB, d vfs.Inode, name string) vfs.Inode {
	t.Helper()
	n, err := d.Create(bg, name, regOpts(0o644))
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	return n
}

func mustMkdir(t testing.TB, d vfs.Inode, name string) vfs.Inode {
	t.Helper()
	n, err := d.Mkdir(bg, name, dirOpts(0o755))
	if err != nil {
		t.Fatalf("Mkdir(%q): %v", name, err)
	}
	return n
}

func mustOpen(t testing.TB, n vfs.Inode, flags vfs.OpenFlags) vfs.Handle {
	t.Helper()
	h, err := n.Open(bg, flags)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return h
}

func mustStat(t testing.TB, n vfs.Inode) vfs.Stat {
	t.Helper()
	st, err := n.Stat(bg)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	return st
}

func mustWrite(t testing.TB, h vfs.Handle, p []byte, off int64) {
	t.Helper()
	n, err := h.WriteAt(bg, p, off)
	if err != nil || n != len(p) {
		t.Fatalf("WriteAt(%d bytes at %d) = %d, %v", len(p), off, n, err)
	}
}

func readAll(t testing.TB, n vfs.Inode) []byte {
	t.Helper()
	h := mustOpen(t, n, vfs.O_RDONLY)
	defer h.Close()
	st := mustStat(t, n)
	buf := make([]byte, st.Size)
	got, err := h.ReadAt(bg, buf, 0)
	if err != nil || int64(got) != st.Size {
		t.Fatalf("ReadAt all = %d, %v; size %d", got, err, st.Size)
	}
	return buf
}

// wantErr fails the test unless err is the errno want (nil for success).
func wantErr(t testing.TB, what string, err error, want errno.Errno) {
	t.Helper()
	if want == 0 {
		if err != nil {
			t.Fatalf("%s: unexpected error %v", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %s", what, err, want.Name())
	}
}

// names lists a directory completely through ReadDir.
func names(t testing.TB, d vfs.Inode) []string {
	t.Helper()
	var out []string
	cookie := uint64(0)
	for {
		ents, err := d.ReadDir(bg, cookie, 3)
		if err != nil {
			t.Fatalf("ReadDir: %v", err)
		}
		if len(ents) == 0 {
			return out
		}
		for _, e := range ents {
			out = append(out, e.Name)
			cookie = e.Next
		}
	}
}
