package softfs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/secexec/secexec/internal/softfs"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/fs/overlay"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
	"github.com/secexec/secexec/software/aospkg"
)

// pkgEntry is one index entry of a test container.
type pkgEntry struct {
	path   string
	kind   aospkg.Kind
	mode   uint32
	data   string
	target string
}

// buildContainer writes an .aospkg (agentOS ABI §2) with the given
// commands, provides.files and entries. The mount archive holds the file
// data back to back; the index is what readers use.
func buildContainer(name string, cmds, provides [][2]string, entries []pkgEntry) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	var man []byte
	man = binary.LittleEndian.AppendUint16(man, 1)
	man = str(man, name)
	man = str(man, "1.0.0")
	man = append(man, 0) // no agent
	if provides == nil {
		man = append(man, 0)
	} else {
		man = append(man, 1)
		man = binary.AppendUvarint(man, 0) // env
		man = binary.AppendUvarint(man, uint64(len(provides)))
		for _, p := range provides {
			man = str(str(man, p[0]), p[1])
		}
	}
	man = binary.AppendUvarint(man, uint64(len(cmds)))
	for _, c := range cmds {
		man = str(str(man, c[0]), c[1])
	}
	man = binary.AppendUvarint(man, 0) // man pages
	man = append(man, 0)               // no snapshot bundle

	var idx, archive []byte
	idx = binary.LittleEndian.AppendUint16(idx, 1)
	idx = binary.AppendUvarint(idx, uint64(len(entries)))
	for _, e := range entries {
		idx = str(idx, e.path)
		idx = binary.AppendUvarint(idx, uint64(e.kind))
		idx = binary.LittleEndian.AppendUint64(idx, uint64(len(archive)))
		idx = binary.LittleEndian.AppendUint64(idx, uint64(len(e.data)))
		idx = binary.LittleEndian.AppendUint32(idx, e.mode)
		idx = binary.LittleEndian.AppendUint32(idx, 1000)
		idx = binary.LittleEndian.AppendUint32(idx, 1000)
		idx = binary.LittleEndian.AppendUint64(idx, 1700000000)
		if e.kind == aospkg.KindSymlink {
			idx = str(append(idx, 1), e.target)
		} else {
			idx = append(idx, 0)
		}
		archive = append(archive, e.data...)
	}
	out := []byte(aospkg.Magic)
	out = binary.LittleEndian.AppendUint16(out, 1)
	out = binary.LittleEndian.AppendUint16(out, 0)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(man)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(idx)))
	return append(append(append(out, man...), idx...), archive...)
}

// source is a software.Store stand-in over in-memory containers, for the
// tests that need package contents the published set lacks.
type source struct {
	mu    sync.Mutex
	pkgs  map[string]*aospkg.Package
	cmds  map[string]software.Command
	files []software.ProvidedFile
}

func (s *source) Command(name string) (software.Command, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cmds[name]
	return c, ok
}

func (s *source) Commands() []software.Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []software.Command
	for _, c := range s.cmds {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *source) Container(name string) (*aospkg.Package, bool) {
	p, ok := s.pkgs[name]
	return p, ok
}

func (s *source) Provides() software.Provides {
	return software.Provides{Files: s.files}
}

func (s *source) add(name, data string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmds[name] = software.Command{Name: name, Package: "tools", Version: "1.0.0", Entry: "bin/" + name,
		Fingerprint: sha256.Sum256([]byte(data)), Size: int64(len(data))}
}

var modules = map[string]string{"alpha": "\x00asm alpha module", "beta": "\x00asm the beta module"}

func newSource(t *testing.T) *source {
	t.Helper()
	entries := []pkgEntry{
		{path: "/", kind: aospkg.KindDir, mode: 0o40755},
		{path: "/bin", kind: aospkg.KindDir, mode: 0o40755},
		{path: "/bin/alpha", kind: aospkg.KindFile, mode: 0o100755, data: modules["alpha"]},
		{path: "/bin/beta", kind: aospkg.KindFile, mode: 0o100755, data: modules["beta"]},
		{path: "/share", kind: aospkg.KindDir, mode: 0o40755},
		{path: "/share/doc", kind: aospkg.KindDir, mode: 0o40755},
		{path: "/share/doc/README", kind: aospkg.KindFile, mode: 0o100644, data: "read me\n"},
		{path: "/share/doc/link", kind: aospkg.KindSymlink, mode: 0o120777, target: "README"},
		{path: "/share/doc/sub", kind: aospkg.KindDir, mode: 0o40755},
	}
	b := buildContainer("tools", [][2]string{{"alpha", "bin/alpha"}, {"beta", "bin/beta"}},
		[][2]string{{"share/doc", "/usr/share/doc/tools"}, {"share/doc", "/usr/bin/evil"}, {"bin/alpha", "/opt/notadir"}}, entries)
	pkg, err := aospkg.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	s := &source{pkgs: map[string]*aospkg.Package{"tools": pkg}, cmds: map[string]software.Command{}}
	for name, data := range modules {
		s.add(name, data)
	}
	for _, p := range pkg.Manifest().Provides.Files {
		s.files = append(s.files, software.ProvidedFile{Package: "tools", Source: p.Source, Target: p.Target})
	}
	return s
}

// newVFS mounts the filesystem as the lower layer of an overlay root, as
// a VM does.
func newVFS(t *testing.T, fs *softfs.FS) *vfs.VFS {
	t.Helper()
	ctx := context.Background()
	root, err := overlay.New(memfs.New(memfs.Options{}), fs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := vfs.New(ctx, root, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readAll(t *testing.T, v *vfs.VFS, p string) string {
	t.Helper()
	ctx := context.Background()
	f, err := v.Open(ctx, vfs.Root, p, vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer f.DecRef()
	var out []byte
	buf := make([]byte, 3) // small reads exercise offsets
	for {
		n, err := f.Read(ctx, buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		if n == 0 {
			return string(out)
		}
	}
}

func TestLayout(t *testing.T) {
	v := newVFS(t, softfs.New(newSource(t)))
	ctx := context.Background()
	for _, name := range []string{"alpha", "beta"} {
		for _, p := range []string{"/usr/bin/" + name, "/bin/" + name} {
			if got := readAll(t, v, p); got != modules[name] {
				t.Errorf("%s = %q", p, got)
			}
			st, err := v.Stat(ctx, vfs.Root, p)
			if err != nil || st.Mode != vfs.S_IFREG|0o755 || st.Size != int64(len(modules[name])) || st.UID != 0 {
				t.Errorf("stat %s = %+v, %v", p, st, err)
			}
		}
	}
	if target, err := v.Readlink(ctx, vfs.Root, "/bin"); err != nil || target != "usr/bin" {
		t.Errorf("/bin -> %q, %v", target, err)
	}
	if got := readAll(t, v, "/usr/share/doc/tools/README"); got != "read me\n" {
		t.Errorf("provided file = %q", got)
	}
	if got := readAll(t, v, "/usr/share/doc/tools/link"); got != "read me\n" {
		t.Errorf("provided symlink = %q", got)
	}
	// Grafts onto the command directories, and non-directories, are refused.
	for _, p := range []string{"/usr/bin/evil", "/opt/notadir"} {
		if _, err := v.Stat(ctx, vfs.Root, p); !errors.Is(err, errno.ENOENT) {
			t.Errorf("%s: %v", p, err)
		}
	}
	names := func(dir string) []string {
		f, err := v.Open(ctx, vfs.Root, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.DecRef()
		var out []string
		for {
			ents, err := f.ReadDir(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) == 0 {
				slices.Sort(out)
				return out
			}
			if n := ents[0].Name; n != "." && n != ".." {
				out = append(out, n)
			}
		}
	}
	if got := names("/usr/bin"); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("/usr/bin = %q", got)
	}
	if got := names("/usr/share/doc/tools"); !slices.Equal(got, []string{"README", "link", "sub"}) {
		t.Errorf("provided dir = %q", got)
	}
}

// The filesystem never changes; a write goes to the overlay's upper layer,
// and that copy is no longer the command.
func TestReadOnlyAndCopyUp(t *testing.T) {
	src := newSource(t)
	fs := softfs.New(src)
	v := newVFS(t, fs)
	ctx := context.Background()
	root, _ := fs.Root(ctx)
	usr, _ := root.Lookup(ctx, "usr")
	bin, _ := usr.Lookup(ctx, "bin")
	if _, err := bin.Create(ctx, "x", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644}); !errors.Is(err, errno.EROFS) {
		t.Errorf("create: %v", err)
	}
	alpha, _ := bin.Lookup(ctx, "alpha")
	if _, err := alpha.Open(ctx, vfs.O_RDWR); !errors.Is(err, errno.EROFS) {
		t.Errorf("open for writing: %v", err)
	}
	if id, ok := alpha.(softfs.ContentIDer); !ok || id.ContentID() != sha256.Sum256([]byte(modules["alpha"])) {
		t.Error("ContentID is not the module's sha256")
	}
	c, want, ok := fs.CommandAt("/usr/bin/alpha")
	st, err := v.Stat(ctx, vfs.Root, "/bin/alpha")
	if !ok || c.Name != "alpha" || err != nil || !softfs.SameFile(st, want) {
		t.Fatalf("CommandAt: %v %+v / %+v %v", ok, want, st, err)
	}
	if _, _, ok := fs.CommandAt("/bin/alpha"); ok {
		t.Error("CommandAt takes canonical paths only")
	}
	// Rewrite the command through the overlay.
	f, err := v.Open(ctx, vfs.Root, "/usr/bin/alpha", vfs.O_WRONLY|vfs.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(ctx, []byte("\x00asm evil"))
	f.DecRef()
	st, _ = v.Stat(ctx, vfs.Root, "/usr/bin/alpha")
	if _, want, _ := fs.CommandAt("/usr/bin/alpha"); softfs.SameFile(st, want) {
		t.Error("a guest's copy of a command still matches it")
	}
	// Even a copy with the same size and times set back does not match:
	// the change time cannot be set.
	f, _ = v.Open(ctx, vfs.Root, "/usr/bin/alpha", vfs.O_WRONLY|vfs.O_TRUNC, 0)
	_, _ = f.Write(ctx, []byte(modules["alpha"]))
	f.DecRef()
	_ = v.SetAttr(ctx, vfs.Root, "/usr/bin/alpha", true, vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: want.Mtime, Mtime: want.Mtime})
	st, _ = v.Stat(ctx, vfs.Root, "/usr/bin/alpha")
	if softfs.SameFile(st, want) {
		t.Error("forged times make a copy match")
	}
}

// Directory cookies stay valid while commands are added during a listing.
func TestReadDirCookiesStable(t *testing.T) {
	src := newSource(t)
	fs := softfs.New(src)
	ctx := context.Background()
	root, _ := fs.Root(ctx)
	usr, _ := root.Lookup(ctx, "usr")
	bin, _ := usr.Lookup(ctx, "bin")
	for i := 0; i < 40; i++ {
		src.add(string(rune('a'+i%26))+string(rune('a'+i/26)), "\x00asm")
	}
	seen := map[string]int{}
	var cookie uint64
	for i := 0; ; i++ {
		ents, err := bin.ReadDir(ctx, cookie, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			seen[e.Name]++
			if e.Next>>56 != 0 {
				t.Fatalf("cookie %#x uses the overlay's top byte", e.Next)
			}
		}
		cookie = ents[len(ents)-1].Next
		src.add("new"+string(rune('a'+i)), "\x00asm") // appear mid-listing
	}
	// Every command that existed for the whole listing appears once;
	// those added during it appear at most once.
	for name := range modules {
		if seen[name] != 1 {
			t.Errorf("%s listed %d times", name, seen[name])
		}
	}
	if len(seen) < 42 {
		t.Errorf("listed %d commands, want at least 42", len(seen))
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", name, n)
		}
	}
}

func TestStatfs(t *testing.T) {
	fs := softfs.New(newSource(t))
	st, err := fs.Statfs(context.Background())
	if err != nil || !st.ReadOnly || st.BlockSize != 4096 || st.Files < 2 || st.BlocksFree != 0 {
		t.Errorf("statfs %+v, %v", st, err)
	}
	if !fs.ReadOnly() || fs.Release() != nil {
		t.Error("ReadOnly/Release")
	}
}
