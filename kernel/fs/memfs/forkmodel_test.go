package memfs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// deepCopy copies fs into a new filesystem through the public API alone,
// one object at a time: the model of what Clone must be equivalent to.
func deepCopy(t testing.TB, fs *FS, opts Options) *FS {
	t.Helper()
	dst := New(opts)
	seen := map[uint64]vfs.Inode{}
	var dirs []func()
	var cp func(src, to vfs.Inode)
	cp = func(src, to vfs.Inode) {
		for _, e := range listDir(t, src) {
			n, err := src.Lookup(bg, e.Name)
			if err != nil {
				t.Fatal(err)
			}
			st := mustStat(t, n)
			if prev, ok := seen[st.Ino]; ok {
				if err := to.Link(bg, e.Name, prev); err != nil {
					t.Fatal(err)
				}
				continue
			}
			opts := vfs.CreateOptions{Mode: st.Mode, UID: st.UID, GID: st.GID}
			var c vfs.Inode
			switch st.Type() {
			case vfs.TypeDir:
				c, err = to.Mkdir(bg, e.Name, opts)
				if err == nil {
					cp(n, c)
				}
			case vfs.TypeSymlink:
				target, _ := n.Readlink(bg)
				c, err = to.Symlink(bg, e.Name, target, opts)
			default:
				c, err = to.Create(bg, e.Name, opts)
				if err == nil {
					h := mustOpen(t, c, vfs.O_WRONLY)
					if st.Size > 0 {
						mustWrite(t, h, readAll(t, n), 0)
					}
					_ = h.Close()
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			seen[st.Ino] = c
			mask := vfs.SetMtime
			if st.Type() != vfs.TypeSymlink {
				mask |= vfs.SetMode
			}
			// Directories last, after their entries changed their times.
			dirs = append(dirs, func() {
				if err := c.SetAttr(bg, vfs.SetAttr{Mask: mask, Mode: st.Mode, Mtime: st.Mtime}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	cp(rootOf(t, fs), rootOf(t, dst))
	for _, f := range slices.Backward(dirs) {
		f()
	}
	st := mustStat(t, rootOf(t, fs))
	if err := rootOf(t, dst).SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode | vfs.SetMtime | vfs.SetUID | vfs.SetGID, Mode: st.Mode, UID: st.UID, GID: st.GID, Mtime: st.Mtime}); err != nil {
		t.Fatal(err)
	}
	return dst
}

func listDir(t testing.TB, d vfs.Inode) []vfs.Dirent {
	t.Helper()
	var out []vfs.Dirent
	for cookie := uint64(0); ; {
		ents, err := d.ReadDir(bg, cookie, 64)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			return out
		}
		out = append(out, ents...)
		cookie = ents[len(ents)-1].Next
	}
}

// dump describes every name of fs, its attributes and data (not inode
// numbers or access and change times, which a copy cannot reproduce);
// hard links show as equal link groups.
func dump(t testing.TB, fs *FS) string {
	t.Helper()
	var b strings.Builder
	group := map[uint64]string{}
	var walkDir func(d vfs.Inode, path string)
	walkDir = func(d vfs.Inode, path string) {
		for _, e := range listDir(t, d) {
			n, err := d.Lookup(bg, e.Name)
			if err != nil {
				t.Fatal(err)
			}
			st := mustStat(t, n)
			p := path + "/" + e.Name
			if g, ok := group[st.Ino]; ok {
				fmt.Fprintf(&b, "%s = %s\n", p, g)
				continue
			}
			group[st.Ino] = p
			fmt.Fprintf(&b, "%s %o %d/%d n%d s%d m%d", p, st.Mode, st.UID, st.GID, st.Nlink, st.Size, st.Mtime.UnixNano())
			switch st.Type() {
			case vfs.TypeDir:
				b.WriteString("\n")
				walkDir(n, p)
			case vfs.TypeSymlink:
				target, _ := n.Readlink(bg)
				fmt.Fprintf(&b, " -> %s\n", target)
			default:
				fmt.Fprintf(&b, " %q\n", readAll(t, n))
			}
		}
	}
	st := mustStat(t, rootOf(t, fs))
	fmt.Fprintf(&b, "/ %o n%d m%d\n", st.Mode, st.Nlink, st.Mtime.UnixNano())
	walkDir(rootOf(t, fs), "")
	return b.String()
}

// modelPaths are the names the fuzz target works on.
var modelPaths = []string{"a", "b", "d", "d/a", "d/b", "d/e", "d/e/a", "e", "e/a"}

// forkWorld is one side of FuzzForkModel: a filesystem and its open
// handles (with the inodes they were opened on).
type forkWorld struct {
	fs      *FS
	q       *vfs.Quota
	handles [3]vfs.Handle
	inodes  [3]vfs.Inode
}

func (w *forkWorld) close() {
	for i, h := range w.handles {
		if h != nil {
			_ = h.Close()
			w.handles[i], w.inodes[i] = nil, nil
		}
	}
}

// resolve finds the parent directory of path and its last name.
func (w *forkWorld) resolve(path string) (vfs.Inode, string, error) {
	d, err := w.fs.Root(bg)
	parts := strings.Split(path, "/")
	for _, p := range parts[:len(parts)-1] {
		if d, err = d.Lookup(bg, p); err != nil {
			return nil, "", err
		}
	}
	return d, parts[len(parts)-1], err
}

func (w *forkWorld) lookup(path string) (vfs.Inode, error) {
	d, name, err := w.resolve(path)
	if err != nil {
		return nil, err
	}
	return d.Lookup(bg, name)
}

// apply runs one decoded operation and describes its result.
func (w *forkWorld) apply(op, a, b, arg byte) string {
	pa, pb := modelPaths[int(a)%len(modelPaths)], modelPaths[int(b)%len(modelPaths)]
	slot := int(arg) % len(w.handles)
	res := func(n int, err error) string { return fmt.Sprint(n, " ", errno.Of(err)) }
	d, name, err := w.resolve(pa)
	if err != nil && op%14 < 10 {
		return res(0, err)
	}
	switch op % 14 {
	case 0:
		_, err = d.Create(bg, name, regOpts(0o644))
	case 1:
		_, err = d.Mkdir(bg, name, dirOpts(0o755))
	case 2:
		err = d.Unlink(bg, name)
	case 3:
		err = d.Rmdir(bg, name)
	case 4:
		var nd vfs.Inode
		var nn string
		if nd, nn, err = w.resolve(pb); err == nil {
			err = d.Rename(bg, name, nd, nn)
		}
	case 5:
		var n, nd vfs.Inode
		var nn string
		if n, err = d.Lookup(bg, name); err == nil {
			if nd, nn, err = w.resolve(pb); err == nil {
				if n.(node).base().typ == vfs.TypeDir {
					err = errno.EPERM
				} else {
					err = nd.Link(bg, nn, n)
				}
			}
		}
	case 6:
		_, err = d.Symlink(bg, name, pb, vfs.CreateOptions{})
	case 7:
		var n vfs.Inode
		if n, err = d.Lookup(bg, name); err == nil && n.(node).base().typ != vfs.TypeSymlink {
			err = n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetMode, Mode: uint32(arg) & 0o777})
		}
	case 8: // write through a fresh handle, as a path write does
		var n vfs.Inode
		if n, err = d.Lookup(bg, name); err == nil {
			var h vfs.Handle
			if h, err = n.Open(bg, vfs.O_RDWR); err == nil {
				var c int
				c, err = h.WriteAt(bg, pattern(int(arg)*37%9000+1, b), int64(b)*97)
				_ = h.Close()
				return res(c, err)
			}
		}
	case 9:
		var n vfs.Inode
		if n, err = d.Lookup(bg, name); err == nil {
			err = n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: int64(arg) * 61})
		}
	case 10: // open into a slot, replacing what it held
		var n vfs.Inode
		if n, err = w.lookup(pa); err == nil {
			var h vfs.Handle
			if h, err = n.Open(bg, vfs.O_RDWR); err == nil {
				if w.handles[slot] != nil {
					_ = w.handles[slot].Close()
				}
				w.handles[slot], w.inodes[slot] = h, n
			}
		}
	case 11:
		if h := w.handles[slot]; h != nil {
			c, err := h.WriteAt(bg, pattern(int(b)*53%7000+1, a), int64(a)*131)
			return res(c, err)
		}
	case 12:
		if n := w.inodes[slot]; n != nil {
			err = n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: int64(b) * 29})
		}
	case 13:
		if h := w.handles[slot]; h != nil {
			p := make([]byte, 64)
			c, err := h.ReadAt(bg, p, int64(b)*17)
			return fmt.Sprintf("%s %q", res(c, err), p[:c])
		}
	}
	return res(0, err)
}

// FuzzForkModel runs decoded operations on a parent and its fork (and
// forks of either, replacing the other side) and the same operations on
// two filesystems kept apart by deep copies made through the public API:
// every result, every tree and every quota must be the same. Handles
// opened before a fork stay with their side.
func FuzzForkModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 255, 0, 0, 0, 0, 11, 0, 1, 5, 0, 1, 0, 0, 11, 1, 2, 0, 12, 0, 0, 3})
	f.Add([]byte{1, 0, 2, 0, 0, 0, 0, 3, 0, 0, 5, 0, 3, 0, 4, 255, 0, 0, 0, 4, 1, 2, 0, 7, 2, 0, 1, 1, 255, 1, 0, 0, 2, 0, 8, 0, 1, 0, 9})
	f.Add([]byte{0, 0, 0, 0, 0, 6, 0, 1, 0, 0, 10, 0, 0, 0, 1, 2, 0, 0, 0, 0, 255, 0, 0, 0, 0, 11, 0, 0, 4, 1, 13, 0, 0, 0, 1, 255, 1, 0, 0, 0, 8, 1, 0, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 600 {
			return
		}
		clk := newClock()
		mk := func() *forkWorld {
			q := vfs.NewQuota(1<<20, 64)
			return &forkWorld{fs: New(Options{Quota: q, Now: clk.Now}), q: q}
		}
		real, model := [2]*forkWorld{mk(), nil}, [2]*forkWorld{mk(), nil}
		fork := func(s int) {
			for _, w := range []*forkWorld{real[1-s], model[1-s]} {
				if w != nil {
					w.close()
					_ = w.fs.Release()
				}
			}
			q, mq := vfs.NewQuota(1<<20, 64), vfs.NewQuota(1<<20, 64)
			c, err := real[s].fs.Clone(bg, Options{Quota: q, Now: clk.Now})
			if err != nil {
				t.Fatalf("Clone: %v", err)
			}
			real[1-s] = &forkWorld{fs: c, q: q}
			model[1-s] = &forkWorld{fs: deepCopy(t, model[s].fs, Options{Quota: mq, Now: clk.Now}), q: mq}
		}
		check := func(step int) {
			for s := range 2 {
				if real[s] == nil {
					continue
				}
				if got, want := dump(t, real[s].fs), dump(t, model[s].fs); got != want {
					t.Fatalf("step %d side %d:\n%s\nwant\n%s", step, s, got, want)
				}
				rb, _, rn, _ := real[s].q.Usage()
				mb, _, mn, _ := model[s].q.Usage()
				if rb != mb || rn != mn {
					t.Fatalf("step %d side %d: quota %d bytes %d inodes, model %d %d", step, s, rb, rn, mb, mn)
				}
			}
		}
		defer func() {
			for s := range 2 {
				for _, w := range []*forkWorld{real[s], model[s]} {
					if w != nil {
						w.close()
					}
				}
			}
		}()
		for step := 0; len(data) >= 5; step++ {
			op, side, a, b, arg := data[0], int(data[1]&1), data[2], data[3], data[4]
			data = data[5:]
			clk.Tick()
			if real[side] == nil {
				side = 0
			}
			if op == 255 {
				fork(side)
				check(step)
				continue
			}
			got := real[side].apply(op, a, b, arg)
			want := model[side].apply(op, a, b, arg)
			if got != want {
				t.Fatalf("step %d: op %d side %d on %q: %s, model %s", step, op%14, side, modelPaths[int(a)%len(modelPaths)], got, want)
			}
		}
		check(-1)
	})
}
