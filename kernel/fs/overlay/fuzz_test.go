package overlay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// The layers the model test starts from: every merging rule is in play.
const (
	fuzzUpper spec = `
d /a
f /a/a ua
w /a/b
d /c
o /c
f /c/d ucd
`
	fuzzLower1 spec = `
d /a
f /a/b l1ab
d /a/c
f /a/c/a l1aca
d /b
f /b/a l1ba
l /b/b ../a/a
d /c
f /c/a hidden
f /d l1d
`
	fuzzLower2 spec = `
d /a
d /a/c
f /a/c/b l2acb
d /a/d
d /b
d /b/c
f /b/c/c l2bcc
f /d shadowed
d /c
d /c/c
`
)

// fuzzPath decodes one byte into a path of one to three components
// named a-d, so operations keep colliding with each other and the layers.
func fuzzPath(b byte) string {
	n := 1 + int(b&3)%3
	var sb strings.Builder
	b >>= 2
	for range n {
		sb.WriteByte('/')
		sb.WriteByte("abcd"[b&3])
		b >>= 2
	}
	return sb.String()
}

// copyTree copies the merged view of src into dst (an empty filesystem).
func copyTree(t testing.TB, src, dst *vfs.VFS, dir string) {
	t.Helper()
	names, err := listVFS(src, dir, 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		p := strings.TrimSuffix(dir, "/") + "/" + name
		st, err := src.Lstat(ctx(), vfs.Root, p)
		if err != nil {
			t.Fatal(err)
		}
		switch st.Type() {
		case vfs.TypeDir:
			if err := dst.Mkdir(ctx(), vfs.Root, p, st.Mode&vfs.ModePerm); err != nil {
				t.Fatal(err)
			}
			copyTree(t, src, dst, p)
		case vfs.TypeSymlink:
			target, _ := src.Readlink(ctx(), vfs.Root, p)
			if err := dst.Symlink(ctx(), vfs.Root, target, p); err != nil {
				t.Fatal(err)
			}
		case vfs.TypeRegular:
			f, _ := src.Open(ctx(), vfs.Root, p, vfs.O_RDONLY, 0)
			buf := make([]byte, st.Size)
			n, _ := f.Pread(ctx(), buf, 0)
			f.DecRef()
			g, err := dst.Open(ctx(), vfs.Root, p, vfs.O_WRONLY|vfs.O_CREAT, st.Mode&vfs.ModePerm)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Write(ctx(), buf[:n]); err != nil {
				t.Fatal(err)
			}
			g.DecRef()
		}
	}
}

// fuzzOp applies operation code op with argument bytes a, b to v and
// returns the errno and, for reads, what was read.
func fuzzOp(v *vfs.VFS, op, a, b byte) (errno.Errno, string) {
	c := vfs.Root
	p, q := fuzzPath(a), fuzzPath(b)
	data := strings.Repeat(string(rune('k'+b%8)), 1+int(b%5))
	switch op % 12 {
	case 0, 1: // write at an offset, creating
		f, err := v.Open(ctx(), c, p, vfs.O_WRONLY|vfs.O_CREAT, 0o640)
		if err != nil {
			return errno.Of(err), ""
		}
		defer f.DecRef()
		_, err = f.Pwrite(ctx(), []byte(data), int64(b%7))
		return errno.Of(err), ""
	case 2: // append, no create
		f, err := v.Open(ctx(), c, p, vfs.O_WRONLY|vfs.O_APPEND, 0)
		if err != nil {
			return errno.Of(err), ""
		}
		defer f.DecRef()
		_, err = f.Write(ctx(), []byte(data))
		return errno.Of(err), ""
	case 3:
		return errno.Of(v.SetAttr(ctx(), c, p, true, vfs.SetAttr{Mask: vfs.SetSize, Size: int64(b % 9)})), ""
	case 4:
		return errno.Of(v.Mkdir(ctx(), c, p, 0o750)), ""
	case 5:
		return errno.Of(v.Rmdir(ctx(), c, p)), ""
	case 6:
		return errno.Of(v.Unlink(ctx(), c, p)), ""
	case 7, 8:
		return errno.Of(v.Rename(ctx(), c, p, q)), ""
	case 9:
		if b&1 == 0 {
			return errno.Of(v.Symlink(ctx(), c, q[1:], p)), ""
		}
		return errno.Of(v.Link(ctx(), c, q, p)), ""
	case 10:
		return errno.Of(v.SetAttr(ctx(), c, p, false, vfs.SetAttr{Mask: vfs.SetMode | vfs.SetUID, Mode: uint32(b) & 0o777, UID: uint32(b % 3)})), ""
	default: // read or list, following symlinks
		st, err := v.Stat(ctx(), c, p)
		if err != nil {
			return errno.Of(err), ""
		}
		if st.Type() == vfs.TypeDir {
			names, err := listVFS(v, p, 1+int(b%4))
			return errno.Of(err), strings.Join(names, ",")
		}
		f, err := v.Open(ctx(), c, p, vfs.O_RDONLY, 0)
		if err != nil {
			return errno.Of(err), ""
		}
		defer f.DecRef()
		buf := make([]byte, 64)
		n, err := f.Pread(ctx(), buf, 0)
		return errno.Of(err), string(buf[:n])
	}
}

// checkOverlay checks invariants only the overlay has: listed inode
// numbers match Stat, distinct objects have distinct numbers, the upper
// layer never holds a name beside its whiteout.
func checkOverlay(t testing.TB, e *env) {
	t.Helper()
	byIno := map[uint64]string{}
	var walk func(dir string)
	walk = func(dir string) {
		f, err := e.v.Open(ctx(), vfs.Root, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.DecRef()
		for {
			ents, err := f.ReadDir(ctx(), 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) == 0 {
				return
			}
			for _, d := range ents {
				if d.Name == "." || d.Name == ".." {
					continue
				}
				p := strings.TrimSuffix(dir, "/") + "/" + d.Name
				st := e.stat(p)
				if st.Ino != d.Ino || st.Type() != d.Type {
					t.Fatalf("%s: dirent ino %d type %o, stat ino %d type %o", p, d.Ino, d.Type, st.Ino, st.Type())
				}
				if q, ok := byIno[st.Ino]; ok && (st.Type() == vfs.TypeDir || st.Nlink < 2) {
					t.Fatalf("%s and %s share ino %d", p, q, st.Ino)
				}
				byIno[st.Ino] = p
				if st.Type() == vfs.TypeDir {
					walk(p)
				}
			}
		}
	}
	walk("/")
	up := dump(t, e.upper)
	for p := range up {
		i := strings.LastIndex(p, "/")
		name := p[i+1:]
		if isHidden(name) && name != opaqueName {
			if _, ok := up[p[:i+1]+strings.TrimPrefix(name, whPrefix)]; ok {
				t.Fatalf("upper has %s beside its whiteout", p)
			}
		}
	}
}

// FuzzOps runs a decoded sequence of operations on an overlay and, in
// step, on a plain memfs holding the same initial merged tree: every
// result and the final tree must match, the overlay's own invariants must
// hold, and the lower layers must be untouched.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 0x01, 0x02, 6, 0x01, 0, 5, 0x0d, 0, 7, 0x04, 0x09})
	f.Add([]byte{7, 0x04, 0x1c, 11, 0x1c, 3, 4, 0x04, 0, 7, 0x1c, 0x04, 11, 0x04, 0})
	f.Add([]byte{9, 0x21, 0x01, 10, 0x21, 7, 2, 0x21, 4, 8, 0x02, 0x08})
	f.Add([]byte{5, 0x08, 0, 4, 0x08, 0, 11, 0x08, 0, 6, 0x01, 0, 5, 0x04, 0})
	f.Fuzz(runOps)
}

// runOps is the body of FuzzOps: prog is a sequence of (op, arg, arg)
// byte triples, at most 64 of them.
func runOps(t *testing.T, prog []byte) {
	if len(prog) > 3*64 {
		prog = prog[:3*64]
	}
	e := newEnv(t, 0, fuzzUpper, fuzzLower1, fuzzLower2)
	lowerBefore := []map[string]string{dump(t, e.lower[0]), dump(t, e.lower[1])}
	model, err := vfs.New(ctx(), memfs.New(memfs.Options{}), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	copyTree(t, e.v, model, "/")
	if d := diffMaps(tree(t, e.v), tree(t, model)); len(d) != 0 {
		t.Fatalf("initial trees differ:\n%s", strings.Join(d, "\n"))
	}
	var log []string
	for i := 0; i+2 < len(prog); i += 3 {
		op, a, b := prog[i], prog[i+1], prog[i+2]
		gotErr, got := fuzzOp(e.v, op, a, b)
		wantErr, want := fuzzOp(model, op, a, b)
		log = append(log, fmt.Sprintf("op %d %s %s -> %v %q", op%12, fuzzPath(a), fuzzPath(b), wantErr, want))
		if gotErr != wantErr || got != want {
			t.Fatalf("%s\noverlay: %v %q", strings.Join(log, "\n"), gotErr, got)
		}
	}
	if d := diffMaps(tree(t, e.v), tree(t, model)); len(d) != 0 {
		t.Fatalf("%s\ntrees differ:\n%s", strings.Join(log, "\n"), strings.Join(d, "\n"))
	}
	checkOverlay(t, e)
	for i, l := range e.lower {
		if d := diffMaps(lowerBefore[i], dump(t, l)); len(d) != 0 {
			t.Fatalf("lower %d changed:\n%s", i, strings.Join(d, "\n"))
		}
	}
}

// FuzzReadDir lists a merged directory from arbitrary cookies with
// arbitrary batch sizes: no error, no panic, no name twice from one
// starting point, and cookie 0 lists the whole merged directory.
func FuzzReadDir(f *testing.F) {
	f.Add(uint64(0), uint8(1))
	f.Add(uint64(1)<<56|3, uint8(2))
	f.Add(uint64(2)<<56, uint8(255))
	f.Add(^uint64(0), uint8(0))
	e := newEnv(f, 0, fuzzUpper, fuzzLower1, fuzzLower2)
	root, _ := e.ov.Root(ctx())
	f.Fuzz(func(t *testing.T, cookie uint64, max uint8) {
		for _, dir := range []string{"", "a", "b", "c"} {
			d := root
			if dir != "" {
				var err error
				if d, err = root.Lookup(ctx(), dir); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[string]bool{}
			c := cookie
			for range 100 {
				ents, err := d.ReadDir(ctx(), c, int(max%8))
				if max%8 == 0 {
					if err == nil {
						t.Fatal("max 0 accepted")
					}
					break
				}
				if err != nil {
					t.Fatalf("%s from %#x: %v", dir, c, err)
				}
				if len(ents) == 0 {
					break
				}
				for _, e := range ents {
					if seen[e.Name] || isHidden(e.Name) {
						t.Fatalf("%s from %#x: %s listed badly", dir, cookie, e.Name)
					}
					seen[e.Name] = true
				}
				c = ents[len(ents)-1].Next
			}
		}
	})
}
