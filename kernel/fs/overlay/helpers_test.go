package overlay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// A tree spec describes a layer's content, one entry per line:
//
//	d PATH [MODE [UID GID]]      directory
//	f PATH DATA [MODE [UID GID]] regular file ("-" for empty data)
//	l PATH TARGET                symlink
//	p PATH                       FIFO
//	h PATH OLDPATH               hard link
//	w PATH                       whiteout (raw ".wh." file, for lower layers)
//	o PATH                       opaque marker in directory PATH
//
// Parents must be listed before their children.
type spec string

// lowerTime is the mtime every spec entry gets, so tests can tell a copy
// that kept its times from one that did not.
var lowerTime = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

func ctx() context.Context { return context.Background() }

// build makes a memfs holding sp, writing it through the memfs inodes
// directly so raw ".wh." names are allowed.
func build(t testing.TB, sp spec) *memfs.FS {
	t.Helper()
	return buildQ(t, sp, nil)
}

// buildQ is build with the filesystem charged to q.
func buildQ(t testing.TB, sp spec, q *vfs.Quota) *memfs.FS {
	t.Helper()
	fs := memfs.New(memfs.Options{Quota: q})
	root, _ := fs.Root(ctx())
	var made []vfs.Inode
	for _, line := range strings.Split(string(sp), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dir, name := walkParent(t, root, f[1])
		perm := func(i int, def uint32) vfs.CreateOptions {
			o := vfs.CreateOptions{Mode: def}
			if len(f) > i {
				var m uint32
				fmt.Sscanf(f[i], "%o", &m)
				o.Mode = m
			}
			if len(f) > i+2 {
				fmt.Sscanf(f[i+1], "%d", &o.UID)
				fmt.Sscanf(f[i+2], "%d", &o.GID)
			}
			return o
		}
		var ino vfs.Inode
		var err error
		switch f[0] {
		case "d":
			o := perm(2, 0o755)
			o.Mode |= vfs.S_IFDIR
			ino, err = dir.Mkdir(ctx(), name, o)
		case "f":
			o := perm(3, 0o644)
			o.Mode |= vfs.S_IFREG
			ino, err = dir.Create(ctx(), name, o)
			if err == nil && f[2] != "-" {
				var h vfs.Handle
				if h, err = ino.Open(ctx(), vfs.O_WRONLY); err == nil {
					_, err = h.WriteAt(ctx(), []byte(f[2]), 0)
					h.Close()
				}
			}
		case "l":
			ino, err = dir.Symlink(ctx(), name, f[2], vfs.CreateOptions{Mode: vfs.S_IFLNK | 0o777})
		case "p":
			ino, err = dir.Create(ctx(), name, vfs.CreateOptions{Mode: vfs.S_IFIFO | 0o620, UID: 3, GID: 4})
		case "h":
			var target vfs.Inode
			d2, n2 := walkParent(t, root, f[2])
			if target, err = d2.Lookup(ctx(), n2); err == nil {
				err = dir.Link(ctx(), name, target)
			}
		case "w":
			_, err = dir.Create(ctx(), whiteoutName(name), vfs.CreateOptions{Mode: vfs.S_IFREG})
		case "o":
			var d vfs.Inode
			if d, err = dir.Lookup(ctx(), name); err == nil {
				_, err = d.Create(ctx(), opaqueName, vfs.CreateOptions{Mode: vfs.S_IFREG})
			}
		default:
			t.Fatalf("bad spec line %q", line)
		}
		if err != nil {
			t.Fatalf("spec %q: %v", line, err)
		}
		if ino != nil {
			made = append(made, ino)
		}
	}
	// Times last: making children changed their parents' times.
	for _, ino := range made {
		if err := ino.SetAttr(ctx(), vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: lowerTime, Mtime: lowerTime}); err != nil {
			t.Fatalf("times: %v", err)
		}
	}
	return fs
}

// walkParent returns the directory holding path's last component.
func walkParent(t testing.TB, root vfs.Inode, path string) (vfs.Inode, string) {
	t.Helper()
	parts := strings.Split(strings.Trim(path, "/"), "/")
	d := root
	for _, p := range parts[:len(parts)-1] {
		var err error
		if d, err = d.Lookup(ctx(), p); err != nil {
			t.Fatalf("walk %s: %v", path, err)
		}
	}
	return d, parts[len(parts)-1]
}

// env is an overlay mounted as the root of a VFS.
type env struct {
	t     testing.TB
	ov    *FS
	v     *vfs.VFS
	upper *memfs.FS
	lower []*memfs.FS
	quota *vfs.Quota
}

// newEnv builds an overlay of an empty upper (charged to a quota of
// maxBytes, 0 = unlimited) over lowers built from specs (first = top).
func newEnv(t testing.TB, maxBytes int64, upper spec, lowers ...spec) *env {
	t.Helper()
	e := &env{t: t, quota: vfs.NewQuota(maxBytes, 0)}
	e.upper = buildQ(t, upper, e.quota)
	var ls []vfs.FileSystem
	for _, sp := range lowers {
		l := build(t, sp)
		e.lower = append(e.lower, l)
		ls = append(ls, l)
	}
	ov, err := New(e.upper, ls...)
	if err != nil {
		t.Fatal(err)
	}
	e.ov = ov
	if e.v, err = vfs.New(ctx(), ov, vfs.Options{}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) read(path string) string {
	e.t.Helper()
	f, err := e.v.Open(ctx(), vfs.Root, path, vfs.O_RDONLY, 0)
	if err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
	defer f.DecRef()
	var out []byte
	buf := make([]byte, 7)
	for {
		n, err := f.Read(ctx(), buf)
		if err != nil {
			e.t.Fatalf("read %s: %v", path, err)
		}
		if n == 0 {
			return string(out)
		}
		out = append(out, buf[:n]...)
	}
}

func (e *env) write(path string, flags vfs.OpenFlags, data string) error {
	e.t.Helper()
	f, err := e.v.Open(ctx(), vfs.Root, path, vfs.O_WRONLY|flags, 0o644)
	if err != nil {
		return err
	}
	defer f.DecRef()
	_, err = f.Write(ctx(), []byte(data))
	return err
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) stat(path string) vfs.Stat {
	e.t.Helper()
	st, err := e.v.Lstat(ctx(), vfs.Root, path)
	if err != nil {
		e.t.Fatalf("lstat %s: %v", path, err)
	}
	return st
}

// ls lists a directory through an open directory file, without . and ..
func (e *env) ls(path string) []string {
	e.t.Helper()
	names, err := listVFS(e.v, path, 3)
	if err != nil {
		e.t.Fatalf("ls %s: %v", path, err)
	}
	return names
}

func listVFS(v *vfs.VFS, path string, batch int) ([]string, error) {
	f, err := v.Open(ctx(), vfs.Root, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	var out []string
	for {
		ents, err := f.ReadDir(ctx(), batch)
		if err != nil {
			return nil, err
		}
		if len(ents) == 0 {
			sort.Strings(out)
			return out, nil
		}
		for _, d := range ents {
			if d.Name != "." && d.Name != ".." {
				out = append(out, d.Name)
			}
		}
	}
}

func wantErrno(t testing.TB, what string, err error, want errno.Errno) {
	t.Helper()
	if want == 0 {
		if err != nil {
			t.Fatalf("%s: %v, want success", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %s", what, err, want.Name())
	}
}

// dump describes every object of a raw layer, whiteouts included: type,
// permissions, owner, size, data or target, and the mtime of files.
func dump(t testing.TB, fs vfs.FileSystem) map[string]string {
	t.Helper()
	out := map[string]string{}
	root, err := fs.Root(ctx())
	if err != nil {
		t.Fatal(err)
	}
	var walk func(vfs.Inode, string)
	walk = func(d vfs.Inode, path string) {
		var cookie uint64
		for {
			ents, err := d.ReadDir(ctx(), cookie, 64)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) == 0 {
				return
			}
			for _, e := range ents {
				cookie = e.Next
				c, err := d.Lookup(ctx(), e.Name)
				if err != nil {
					t.Fatal(err)
				}
				p := path + "/" + e.Name
				out[p] = describe(t, c, true)
				if e.Type == vfs.TypeDir {
					walk(c, p)
				}
			}
		}
	}
	walk(root, "")
	return out
}

// describe summarises one inode for comparisons.
func describe(t testing.TB, ino vfs.Inode, withTimes bool) string {
	t.Helper()
	st, err := ino.Stat(ctx())
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%o %d:%d", st.Mode, st.UID, st.GID)
	switch st.Type() {
	case vfs.TypeRegular:
		h, err := ino.Open(ctx(), vfs.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, st.Size)
		n, err := h.ReadAt(ctx(), buf, 0)
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprintf(" nlink=%d %q", st.Nlink, buf[:n])
		if withTimes {
			s += " " + st.Mtime.UTC().Format(time.RFC3339Nano)
		}
	case vfs.TypeSymlink:
		target, err := ino.Readlink(ctx())
		if err != nil {
			t.Fatal(err)
		}
		s += " -> " + target
	case vfs.TypeDir:
		if withTimes {
			s += " " + st.Mtime.UTC().Format(time.RFC3339Nano)
		}
	}
	return s
}

// tree describes the merged view through the VFS, without times or
// inode numbers: what a guest sees.
func tree(t testing.TB, v *vfs.VFS) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(string)
	walk = func(dir string) {
		names, err := listVFS(v, dir, 5)
		if err != nil {
			t.Fatalf("list %s: %v", dir, err)
		}
		for _, name := range names {
			p := strings.TrimSuffix(dir, "/") + "/" + name
			st, err := v.Lstat(ctx(), vfs.Root, p)
			if err != nil {
				t.Fatalf("lstat %s: %v", p, err)
			}
			s := fmt.Sprintf("%o %d:%d", st.Mode, st.UID, st.GID)
			switch st.Type() {
			case vfs.TypeRegular:
				f, err := v.Open(ctx(), vfs.Root, p, vfs.O_RDONLY, 0)
				if err != nil {
					t.Fatalf("open %s: %v", p, err)
				}
				buf := make([]byte, st.Size+1)
				n, err := f.Pread(ctx(), buf, 0)
				f.DecRef()
				if err != nil {
					t.Fatalf("read %s: %v", p, err)
				}
				s += fmt.Sprintf(" nlink=%d size=%d %q", st.Nlink, st.Size, buf[:n])
			case vfs.TypeSymlink:
				target, err := v.Readlink(ctx(), vfs.Root, p)
				if err != nil {
					t.Fatalf("readlink %s: %v", p, err)
				}
				s += " -> " + target
			case vfs.TypeDir:
				s += fmt.Sprintf(" nlink=%d", st.Nlink)
				walk(p)
			}
			out[p] = s
		}
	}
	walk("/")
	return out
}

// diffMaps reports the keys on which two descriptions differ.
func diffMaps(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s: %q vs %q", k, a[k], b[k]))
		}
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
