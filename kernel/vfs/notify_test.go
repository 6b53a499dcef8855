package vfs_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

type wev struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

func (e wev) String() string {
	var parts []string
	for _, b := range []struct {
		m uint32
		n string
	}{
		{vfs.InModify, "MODIFY"}, {vfs.InAttrib, "ATTRIB"}, {vfs.InMovedFrom, "MOVED_FROM"},
		{vfs.InMovedTo, "MOVED_TO"}, {vfs.InCreate, "CREATE"}, {vfs.InDelete, "DELETE"},
		{vfs.InDeleteSelf, "DELETE_SELF"}, {vfs.InMoveSelf, "MOVE_SELF"}, {vfs.InQOverflow, "Q_OVERFLOW"},
		{vfs.InIgnored, "IGNORED"}, {vfs.InIsDir, "ISDIR"},
	} {
		if e.mask&b.m != 0 {
			parts = append(parts, b.n)
		}
	}
	s := fmt.Sprintf("%d %s", e.wd, strings.Join(parts, "|"))
	if e.name != "" {
		s += " " + e.name
	}
	return s
}

// parseEvents decodes struct inotify_event records.
func parseEvents(t testing.TB, b []byte) []wev {
	t.Helper()
	var out []wev
	for len(b) > 0 {
		if len(b) < vfs.WatchEventHeaderSize {
			t.Fatalf("short record: %d bytes", len(b))
		}
		e := wev{
			wd:     int32(binary.LittleEndian.Uint32(b)),
			mask:   binary.LittleEndian.Uint32(b[4:]),
			cookie: binary.LittleEndian.Uint32(b[8:]),
		}
		n := int(binary.LittleEndian.Uint32(b[12:]))
		if n%vfs.WatchEventHeaderSize != 0 || vfs.WatchEventHeaderSize+n > len(b) {
			t.Fatalf("bad name length %d", n)
		}
		name := b[vfs.WatchEventHeaderSize : vfs.WatchEventHeaderSize+n]
		if n > 0 && name[n-1] != 0 {
			t.Fatalf("name not NUL-padded: %q", name)
		}
		e.name = string(bytes.TrimRight(name, "\x00"))
		out = append(out, e)
		b = b[vfs.WatchEventHeaderSize+n:]
	}
	return out
}

// drain reads what is queued without blocking.
func drain(t testing.TB, s *vfs.WatchSet) []wev {
	t.Helper()
	_ = s.SetFlags(vfs.O_NONBLOCK)
	defer func() { _ = s.SetFlags(0) }()
	var out []wev
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(context.Background(), buf)
		if errors.Is(err, errno.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parseEvents(t, buf[:n])...)
	}
}

func evStrings(evs []wev) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.String())
	}
	return strings.Join(s, "\n")
}

type nfs struct {
	t   testing.TB
	v   *vfs.VFS
	c   *vfs.Caller
	ctx context.Context
}

func newNotifyFS(t testing.TB, auth vfs.Authorizer) *nfs {
	t.Helper()
	ctx := context.Background()
	v, err := vfs.New(ctx, memfs.New(memfs.Options{}), vfs.Options{Authorize: auth})
	if err != nil {
		t.Fatal(err)
	}
	return &nfs{t: t, v: v, c: &vfs.Caller{Cwd: "/"}, ctx: ctx}
}

func (n *nfs) ok(err error) {
	n.t.Helper()
	if err != nil {
		n.t.Fatal(err)
	}
}

func (n *nfs) write(path, data string, flags vfs.OpenFlags) {
	n.t.Helper()
	f, err := n.v.Open(n.ctx, n.c, path, vfs.O_WRONLY|vfs.O_CREAT|flags, 0o644)
	n.ok(err)
	defer f.DecRef()
	if data != "" {
		_, err = f.Write(n.ctx, []byte(data))
		n.ok(err)
	}
}

func (n *nfs) set() *vfs.WatchSet {
	s := n.v.NewWatchSet(vfs.WatchSetOptions{})
	n.t.Cleanup(s.DecRef)
	return s
}

func (n *nfs) add(s *vfs.WatchSet, path string, rec bool) int32 {
	n.t.Helper()
	wd, err := s.Add(n.ctx, n.c, path, vfs.WatchOptions{Recursive: rec})
	n.ok(err)
	return wd
}

func expectEvents(t *testing.T, got []wev, want ...string) {
	t.Helper()
	if g, w := evStrings(got), strings.Join(want, "\n"); g != w {
		t.Fatalf("events:\n%s\nwant:\n%s", g, w)
	}
}

func TestWatchDirectory(t *testing.T) {
	n := newNotifyFS(t, nil)
	n.ok(n.v.Mkdir(n.ctx, n.c, "/d", 0o755))
	n.write("/d/f", "x", 0)
	s := n.set()
	wd := n.add(s, "/d", false)
	if wd != 1 {
		t.Fatalf("first wd = %d", wd)
	}
	n.write("/d/f", "yy", vfs.O_TRUNC)
	n.write("/d/f", "z", vfs.O_APPEND)
	n.ok(n.v.SetAttr(n.ctx, n.c, "/d/f", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}))
	n.write("/d/g", "1", 0)
	n.ok(n.v.Rename(n.ctx, n.c, "/d/g", "/d/h"))
	n.ok(n.v.Mkdir(n.ctx, n.c, "/d/e", 0o755))
	n.ok(n.v.Rmdir(n.ctx, n.c, "/d/e"))
	n.ok(n.v.Symlink(n.ctx, n.c, "h", "/d/l"))
	n.ok(n.v.Link(n.ctx, n.c, "/d/h", "/d/hl"))
	n.ok(n.v.Unlink(n.ctx, n.c, "/d/h"))
	// Deeper levels are not reported without recursion.
	n.ok(n.v.Mkdir(n.ctx, n.c, "/d/sub", 0o755))
	n.write("/d/sub/x", "1", 0)
	got := drain(t, s)
	expectEvents(t, got,
		// O_TRUNC, the write and the append: identical events coalesce
		// while unread, as inotify's do.
		"1 MODIFY f",
		"1 ATTRIB f",
		"1 CREATE g",
		"1 MODIFY g",
		"1 MOVED_FROM g",
		"1 MOVED_TO h",
		"1 CREATE|ISDIR e",
		"1 DELETE|ISDIR e",
		"1 CREATE l",
		"1 ATTRIB h", // link count
		"1 CREATE hl",
		"1 DELETE h",
		"1 CREATE|ISDIR sub",
	)
	if got[4].cookie == 0 || got[4].cookie != got[5].cookie || got[0].cookie != 0 {
		t.Fatalf("rename cookies: %+v", got[4:6])
	}
}

func TestWatchFileEndsWithObject(t *testing.T) {
	n := newNotifyFS(t, nil)
	n.write("/f", "x", 0)
	s := n.set()
	n.add(s, "/f", false)
	dir := n.add(s, "/", false)
	n.write("/f", "y", vfs.O_APPEND)
	n.ok(n.v.Unlink(n.ctx, n.c, "/f"))
	expectEvents(t, drain(t, s),
		"2 MODIFY f", // the directory hears first, as on Linux
		"1 MODIFY",
		"1 ATTRIB",
		"1 DELETE_SELF",
		"1 IGNORED",
		"2 DELETE f",
	)
	if s.Len() != 1 || n.v.Watches() != 1 {
		t.Fatalf("watches after delete: set %d, vfs %d", s.Len(), n.v.Watches())
	}
	// A new file at the path is not the watched object.
	n.write("/f", "again", 0)
	expectEvents(t, drain(t, s), "2 CREATE f", "2 MODIFY f")
	if err := s.Remove(1); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("remove of an ended watch: %v", err)
	}
	n.ok(s.Remove(dir))
	expectEvents(t, drain(t, s), "2 IGNORED")
	if n.v.Watches() != 0 {
		t.Fatalf("vfs still holds %d watches", n.v.Watches())
	}
}

func TestWatchFollowsRenames(t *testing.T) {
	n := newNotifyFS(t, nil)
	n.ok(n.v.Mkdir(n.ctx, n.c, "/d", 0o755))
	n.ok(n.v.Mkdir(n.ctx, n.c, "/d/sub", 0o755))
	n.ok(n.v.Mkdir(n.ctx, n.c, "/d/sub/deep", 0o755))
	n.write("/t", "target", 0)
	s := n.set()
	n.add(s, "/d/sub", false)      // 1
	n.add(s, "/d/sub/deep", false) // 2
	n.add(s, "/t", false)          // 3
	n.ok(n.v.Rename(n.ctx, n.c, "/d/sub", "/moved"))
	n.write("/moved/x", "", 0)
	n.write("/moved/deep/y", "", 0)
	n.write("/new", "n", 0)
	n.ok(n.v.Rename(n.ctx, n.c, "/new", "/t")) // replaces the watched file
	n.write("/t", "z", vfs.O_APPEND)
	expectEvents(t, drain(t, s),
		"1 MOVE_SELF",
		"1 CREATE x",
		"2 CREATE y",
		"3 DELETE_SELF",
		"3 IGNORED",
	)
}

func TestWatchRecursive(t *testing.T) {
	n := newNotifyFS(t, nil)
	for _, d := range []string{"/w", "/w/a", "/w/a/b", "/w/priv"} {
		n.ok(n.v.Mkdir(n.ctx, n.c, d, 0o755))
	}
	n.ok(n.v.SetAttr(n.ctx, n.c, "/w/priv", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}))
	user := &vfs.Caller{UID: 1000, GID: 1000, Cwd: "/"}
	s := n.set()
	wd, err := s.Add(n.ctx, user, "/w", vfs.WatchOptions{Recursive: true})
	n.ok(err)
	n.write("/w/top", "", 0)
	n.write("/w/a/b/leaf", "1", 0)
	n.ok(n.v.Rename(n.ctx, n.c, "/w/a/b/leaf", "/w/a/leaf2"))
	n.write("/w/priv/secret", "s", 0) // root's 0700 directory: not for uid 1000
	n.ok(n.v.Rename(n.ctx, n.c, "/w/a/leaf2", "/out"))
	expectEvents(t, drain(t, s),
		fmt.Sprintf("%d CREATE top", wd),
		fmt.Sprintf("%d CREATE a/b/leaf", wd),
		fmt.Sprintf("%d MODIFY a/b/leaf", wd),
		fmt.Sprintf("%d MOVED_FROM a/b/leaf", wd),
		fmt.Sprintf("%d MOVED_TO a/leaf2", wd),
		fmt.Sprintf("%d MOVED_FROM a/leaf2", wd),
	)
	// Opening the directory to the watcher makes its entries visible.
	n.ok(n.v.SetAttr(n.ctx, n.c, "/w/priv", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o755}))
	n.write("/w/priv/public", "", 0)
	expectEvents(t, drain(t, s),
		fmt.Sprintf("%d ATTRIB|ISDIR priv", wd),
		fmt.Sprintf("%d CREATE priv/public", wd),
	)
}

func TestWatchPermission(t *testing.T) {
	deny := func(_ context.Context, op vfs.Op, p string) error {
		if strings.HasPrefix(p, "/denied") && (op == vfs.OpRead || op == vfs.OpReaddir) {
			return errno.EACCES
		}
		return nil
	}
	n := newNotifyFS(t, deny)
	n.ok(n.v.Mkdir(n.ctx, n.c, "/denied", 0o755))
	n.ok(n.v.Mkdir(n.ctx, n.c, "/closed", 0o700))
	n.write("/closed/f", "", 0)
	n.write("/unreadable", "", 0)
	n.ok(n.v.SetAttr(n.ctx, n.c, "/unreadable", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o200}))
	user := &vfs.Caller{UID: 1000, GID: 1000, Cwd: "/"}
	s := n.set()
	for _, p := range []string{"/denied", "/closed", "/closed/f", "/unreadable"} {
		if _, err := s.Add(n.ctx, user, p, vfs.WatchOptions{}); !errors.Is(err, errno.EACCES) {
			t.Errorf("watch %s: %v, want EACCES", p, err)
		}
	}
	if _, err := s.Add(n.ctx, user, "/missing", vfs.WatchOptions{}); !errors.Is(err, errno.ENOENT) {
		t.Errorf("watch /missing: %v", err)
	}
	if n.v.Watches() != 0 {
		t.Fatalf("failed adds left %d watches", n.v.Watches())
	}
}

func TestWatchLimits(t *testing.T) {
	n := newNotifyFS(t, nil)
	n.v.SetWatchLimits(vfs.WatchLimits{PerOwner: 2, PerVM: 3})
	owner := new(int)
	s1 := n.v.NewWatchSet(vfs.WatchSetOptions{Owner: owner})
	s2 := n.v.NewWatchSet(vfs.WatchSetOptions{Owner: owner})
	other := n.set()
	for _, d := range []string{"/a", "/b", "/c", "/d"} {
		n.ok(n.v.Mkdir(n.ctx, n.c, d, 0o755))
	}
	n.add(s1, "/", false)
	n.add(s2, "/", false)
	if _, err := s1.Add(n.ctx, n.c, "/a", vfs.WatchOptions{}); !errors.Is(err, errno.ENOSPC) {
		t.Fatalf("third watch of one owner: %v, want ENOSPC", err)
	}
	n.add(other, "/", false)
	if _, err := other.Add(n.ctx, n.c, "/b", vfs.WatchOptions{}); !errors.Is(err, errno.ENOSPC) {
		t.Fatalf("watch past the VM limit: %v, want ENOSPC", err)
	}
	// Closing a set gives its watches back.
	s1.DecRef()
	s2.DecRef()
	if n.v.Watches() != 1 {
		t.Fatalf("watches after close: %d", n.v.Watches())
	}
	n.add(other, "/c", false)
}

func TestWatchQueueBounds(t *testing.T) {
	n := newNotifyFS(t, nil)
	s := n.v.NewWatchSet(vfs.WatchSetOptions{MaxQueued: 6, MaxQueuedPerWatch: 3})
	defer s.DecRef()
	n.ok(n.v.Mkdir(n.ctx, n.c, "/a", 0o755))
	n.ok(n.v.Mkdir(n.ctx, n.c, "/b", 0o755))
	n.add(s, "/a", false)
	n.add(s, "/b", false)
	for i := range 5 {
		n.write(fmt.Sprintf("/a/%d", i), "", 0)
	}
	for i := range 2 {
		n.write(fmt.Sprintf("/b/%d", i), "", 0)
	}
	// Watch 1 stops at its bound, with one overflow record; then the set
	// is full (6 records): b/1 is dropped for a set overflow record.
	n.write("/b/2", "", 0)
	expectEvents(t, drain(t, s),
		"1 CREATE 0", "1 CREATE 1", "1 CREATE 2", "1 Q_OVERFLOW",
		"2 CREATE 0", "2 CREATE 1", "-1 Q_OVERFLOW",
	)
	// Reading made room again.
	n.write("/a/x", "", 0)
	expectEvents(t, drain(t, s), "1 CREATE x")
	// The byte bound: a set of 64 bytes holds two records with short names.
	s2 := n.v.NewWatchSet(vfs.WatchSetOptions{MaxQueuedBytes: 64})
	defer s2.DecRef()
	n.add(s2, "/a", false)
	for i := range 4 {
		n.write(fmt.Sprintf("/a/n%d", i), "", 0)
	}
	expectEvents(t, drain(t, s2), "1 CREATE n0", "1 CREATE n1", "-1 Q_OVERFLOW")
}

func TestWatchRead(t *testing.T) {
	n := newNotifyFS(t, nil)
	s := n.set()
	n.add(s, "/", false)
	// A buffer too small for one record.
	n.write("/a-rather-long-name", "", 0)
	if _, err := s.Read(n.ctx, make([]byte, 20)); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("short buffer: %v", err)
	}
	drain(t, s)
	// A blocking read waits for the next event.
	got := make(chan []wev, 1)
	go func() {
		buf := make([]byte, 4096)
		k, err := s.Read(n.ctx, buf)
		if err != nil {
			got <- nil
			return
		}
		got <- parseEvents(t, buf[:k])
	}()
	time.Sleep(10 * time.Millisecond)
	n.write("/later", "", 0)
	expectEvents(t, <-got, "1 CREATE later")
	// A cancelled read ends with EINTR.
	ctx, cancel := context.WithCancel(n.ctx)
	go cancel()
	if _, err := s.Read(ctx, make([]byte, 4096)); !errors.Is(err, errno.EINTR) {
		t.Fatalf("cancelled read: %v", err)
	}
	if st, err := s.Stat(n.ctx); err != nil || st.Mode != 0o600 || s.Path() != "anon_inode:inotify" {
		t.Fatalf("stat: %+v %v %s", st, err, s.Path())
	}
}

// TestWatchConcurrent runs mutations, watch changes and set closes at
// once (for the race detector and lock order).
func TestWatchConcurrent(t *testing.T) {
	n := newNotifyFS(t, nil)
	n.ok(n.v.Mkdir(n.ctx, n.c, "/c", 0o777))
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
				p := fmt.Sprintf("/c/%d-%d", g, i%8)
				if f, err := n.v.Open(n.ctx, n.c, p, vfs.O_WRONLY|vfs.O_CREAT, 0o644); err == nil {
					_, _ = f.Write(n.ctx, []byte("x"))
					f.DecRef()
				}
				_ = n.v.Rename(n.ctx, n.c, p, p+"r")
				_ = n.v.Unlink(n.ctx, n.c, p+"r")
			}
		}()
	}
	for range 50 {
		s := n.v.NewWatchSet(vfs.WatchSetOptions{MaxQueued: 64})
		wd, err := s.Add(n.ctx, n.c, "/c", vfs.WatchOptions{Recursive: true})
		n.ok(err)
		_, _ = s.Add(n.ctx, n.c, "/", vfs.WatchOptions{})
		drain(t, s)
		_ = s.Remove(wd)
		s.DecRef()
	}
	close(stop)
	wg.Wait()
	if n.v.Watches() != 0 {
		t.Fatalf("%d watches left", n.v.Watches())
	}
}

func TestWatchSameObjectSameWatch(t *testing.T) {
	n := newNotifyFS(t, nil)
	n.ok(n.v.Mkdir(n.ctx, n.c, "/d", 0o755))
	n.ok(n.v.Symlink(n.ctx, n.c, "d", "/link"))
	s := n.set()
	a := n.add(s, "/d", false)
	b := n.add(s, "/link", false) // the same directory
	r := n.add(s, "/d", true)     // another kind of watch
	if a != b || r == a || s.Len() != 2 {
		t.Fatalf("wds %d %d %d, %d watches", a, b, r, s.Len())
	}
	n.write("/d/x", "", 0)
	n.write("/d/x", "1", vfs.O_TRUNC)
	expectEvents(t, drain(t, s), "1 CREATE x", "2 CREATE x", "1 MODIFY x", "2 MODIFY x", "1 MODIFY x", "2 MODIFY x")
	// A single watch coalesces the truncation and the write.
	s2 := n.set()
	n.add(s2, "/d", false)
	n.write("/d/x", "2", vfs.O_TRUNC)
	expectEvents(t, drain(t, s2), "1 MODIFY x")
}

// FuzzWatchOps runs guest-chosen sequences of namespace changes and watch
// operations: whatever the order, nothing panics, every record read is
// well formed, bounds hold, and closing the sets leaves no watch behind.
func FuzzWatchOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{7, 0, 7, 1, 0, 2, 3, 9, 4, 5, 10, 8, 6, 11, 11})
	f.Add(bytes.Repeat([]byte{0, 8, 2}, 40))
	f.Add([]byte("\x07\x00\x08\x11\x22\x33\x44\x55\x66\x0a\x0b\xff\xfe"))
	names := []string{"/a", "/a/b", "/a/b/c", "/x", "/a/x", "/a/b/x", "/y"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 400 {
			ops = ops[:400]
		}
		n := newNotifyFS(t, nil)
		n.v.SetWatchLimits(vfs.WatchLimits{PerOwner: 6, PerVM: 8})
		sets := []*vfs.WatchSet{
			n.v.NewWatchSet(vfs.WatchSetOptions{Owner: 1, MaxQueued: 8, MaxQueuedPerWatch: 3}),
			n.v.NewWatchSet(vfs.WatchSetOptions{Owner: 1, MaxQueuedBytes: 96}),
			n.v.NewWatchSet(vfs.WatchSetOptions{}),
		}
		buf := make([]byte, 512)
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%12, int(ops[i+1])
			p := names[arg%len(names)]
			q := names[(arg/7)%len(names)]
			s := sets[arg%len(sets)]
			switch op {
			case 0:
				_ = n.v.Mkdir(n.ctx, n.c, p, 0o755)
			case 1:
				if f, err := n.v.Open(n.ctx, n.c, p, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o644); err == nil {
					_, _ = f.Write(n.ctx, []byte("data"))
					f.DecRef()
				}
			case 2:
				_ = n.v.Rename(n.ctx, n.c, p, q)
			case 3:
				_ = n.v.Unlink(n.ctx, n.c, p)
			case 4:
				_ = n.v.Rmdir(n.ctx, n.c, p)
			case 5:
				_ = n.v.SetAttr(n.ctx, n.c, p, true, vfs.SetAttr{Mask: vfs.SetMode, Mode: uint32(arg) & 0o777})
			case 6:
				_ = n.v.Symlink(n.ctx, n.c, q, p)
			case 7, 8:
				_, _ = s.Add(n.ctx, n.c, p, vfs.WatchOptions{Recursive: op == 8})
			case 9:
				_ = s.Remove(int32(arg % 6))
			case 10, 11:
				k, err := s.TryRead(buf[:16+arg%len(buf[16:])])
				if err == nil {
					for _, e := range parseEvents(t, buf[:k]) {
						if e.wd == 0 || e.wd < -1 || (e.wd == -1 && e.mask != vfs.InQOverflow) {
							t.Fatalf("bad record %v", e)
						}
					}
				} else if !errors.Is(err, errno.EAGAIN) && !errors.Is(err, errno.EINVAL) {
					t.Fatalf("read: %v", err)
				}
			}
			if w := n.v.Watches(); w > 8 {
				t.Fatalf("%d watches past the VM limit", w)
			}
			if s.Buffered() > vfs.DefaultWatchQueueBytes+4200 {
				t.Fatalf("queue of %d bytes", s.Buffered())
			}
		}
		for _, s := range sets {
			s.DecRef()
		}
		if w := n.v.Watches(); w != 0 {
			t.Fatalf("%d watches left after closing every set", w)
		}
	})
}
