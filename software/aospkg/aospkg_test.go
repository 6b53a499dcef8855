package aospkg_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/software/aospkg"
	"github.com/secexec/secexec/software/internal/aospkgtest"
)

// fullManifest uses every manifest field, with non-nil empty collections
// where the decoder produces them, so it compares with reflect.DeepEqual.
func fullManifest() aospkg.Manifest {
	return aospkg.Manifest{
		Schema:  1,
		Name:    "demo",
		Version: "1.2.3",
		Agent: &aospkg.Agent{
			ACPEntrypoint: "dist/acp.js",
			Snapshot:      true,
			Env:           map[string]string{"AGENT": "1", "MODE": "x=y"},
			LaunchArgs:    []string{"--fast", ""},
		},
		Provides: &aospkg.Provides{
			Env:   map[string]string{"VIM": "/usr/local/share/vim"},
			Files: []aospkg.ProvidedFile{{Source: "share/vim", Target: "/usr/local/share/vim"}},
		},
		Commands:           []aospkg.Command{{Command: "hello", Entry: "bin/hello"}, {Command: "hi", Entry: "bin/hi"}, {Command: "[", Entry: "bin/["}},
		ManPages:           []aospkg.ManPage{{Section: "1", Page: "hello"}},
		SnapshotBundlePath: "/dist/sdk-snapshot.js",
	}
}

var demoFiles = []aospkgtest.File{
	{Path: "/bin/hello", Data: aospkgtest.WasmModule("hello")},
	{Path: "/bin/hi", Data: aospkgtest.WasmModule("hello")},
	{Path: "/bin/[", Data: aospkgtest.WasmModule("test")},
	{Path: "/bin/link", Symlink: "hello"},
	{Path: "/share/vim/vimrc", Data: []byte("set nocompatible\n"), Perm: 0o644},
	{Path: "/share/empty", Dir: true},
	{Path: "/zero", Data: []byte{}, Perm: 0o600},
}

func openBytes(t testing.TB, b []byte) *aospkg.Package {
	t.Helper()
	p, err := aospkg.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return p
}

func TestOpenValid(t *testing.T) {
	want := fullManifest()
	b := aospkgtest.Build(want, demoFiles)
	p := openBytes(t, b)

	if got := p.Manifest(); !reflect.DeepEqual(got, want) {
		t.Errorf("Manifest() = %+v\nwant %+v", got, want)
	}
	if p.Name() != "demo" || p.Version() != "1.2.3" {
		t.Errorf("Name, Version = %q, %q", p.Name(), p.Version())
	}
	if got := p.Commands(); !reflect.DeepEqual(got, want.Commands) {
		t.Errorf("Commands() = %v", got)
	}
	if h := p.Header(); h.Version != 1 || h.Flags != 0 || p.MountBase() != 16+int64(h.ManifestLen)+int64(h.IndexLen) {
		t.Errorf("Header() = %+v, MountBase() = %d", h, p.MountBase())
	}
	if p.Size() != int64(len(b)) {
		t.Errorf("Size() = %d", p.Size())
	}

	var paths []string
	for _, e := range p.Entries() {
		paths = append(paths, e.Path)
	}
	wantPaths := []string{"/", "/bin", "/bin/[", "/bin/hello", "/bin/hi", "/bin/link", "/share", "/share/empty", "/share/vim", "/share/vim/vimrc", "/zero"}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Errorf("entry paths = %q\nwant %q", paths, wantPaths)
	}

	for _, f := range demoFiles {
		if f.Dir || f.Symlink != "" {
			continue
		}
		got, err := p.ReadFile(f.Path)
		if err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", f.Path, got, err, f.Data)
		}
	}
	// Relative names are relative to the package root; ".." stays inside.
	for _, name := range []string{"bin/hello", "/bin//hello", "/../bin/./hello", "../../bin/hello"} {
		if _, err := p.ReadFile(name); err != nil {
			t.Errorf("ReadFile(%q): %v", name, err)
		}
	}

	e, ok := p.Lookup("/bin/link")
	if !ok || e.Kind != aospkg.KindSymlink || e.LinkTarget != "hello" || e.Mode != 0o120755 || e.FileMode() != fs.ModeSymlink|0o755 {
		t.Errorf("Lookup(/bin/link) = %+v, %v", e, ok)
	}
	e, ok = p.Lookup("/share/vim/vimrc")
	if !ok || e.Kind != aospkg.KindFile || e.Mode != 0o100644 || e.UID != 1000 || e.FileMode() != 0o644 {
		t.Errorf("Lookup(vimrc) = %+v, %v", e, ok)
	}
	if e, ok := p.Lookup("/"); !ok || e.Kind != aospkg.KindDir || !e.FileMode().IsDir() || e.UID != 0 {
		t.Errorf("Lookup(/) = %+v, %v", e, ok)
	}
	if _, ok := p.Lookup("/nope"); ok {
		t.Error("Lookup(/nope) found something")
	}

	sr, err := p.Open("/share/vim/vimrc")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(sr); string(got) != "set nocompatible\n" {
		t.Errorf("Open(vimrc) read %q", got)
	}

	dirTests := []struct {
		dir  string
		want []string
	}{
		{"/", []string{"/bin", "/share", "/zero"}},
		{"/bin", []string{"/bin/[", "/bin/hello", "/bin/hi", "/bin/link"}},
		{"share", []string{"/share/empty", "/share/vim"}},
		{"/share/empty", nil},
	}
	for _, tt := range dirTests {
		ents, err := p.ReadDir(tt.dir)
		if err != nil {
			t.Errorf("ReadDir(%q): %v", tt.dir, err)
			continue
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Path)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ReadDir(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}

	// Chunk 3 is a real tar whose member data sits where the index says.
	tr := tar.NewReader(bytes.NewReader(b[p.MountBase():]))
	members := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("mount archive: %v", err)
		}
		members++
		if h.Typeflag == tar.TypeReg {
			data, _ := io.ReadAll(tr)
			got, err := p.ReadFile(strings.TrimPrefix(h.Name, "."))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("tar member %s differs from ReadFile", h.Name)
			}
		}
	}
	if members != len(wantPaths)-1 {
		t.Errorf("mount archive has %d members, want %d", members, len(wantPaths)-1)
	}
}

func TestFileErrors(t *testing.T) {
	p := openBytes(t, aospkgtest.Build(fullManifest(), demoFiles))
	tests := []struct {
		name string
		op   func() error
		want errno.Errno
	}{
		{"read missing", func() error { _, err := p.ReadFile("/bin/nope"); return err }, errno.ENOENT},
		{"read dir", func() error { _, err := p.ReadFile("/bin"); return err }, errno.EISDIR},
		{"read symlink", func() error { _, err := p.ReadFile("/bin/link"); return err }, errno.ELOOP},
		{"open missing", func() error { _, err := p.Open("nope"); return err }, errno.ENOENT},
		{"readdir missing", func() error { _, err := p.ReadDir("/nope"); return err }, errno.ENOENT},
		{"readdir file", func() error { _, err := p.ReadDir("/zero"); return err }, errno.ENOTDIR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			var pe *errno.PathError
			if !errors.As(err, &pe) || !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want PathError with %v", err, tt.want.Name())
			}
		})
	}
	if _, err := p.ReadFile("/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error %v does not match fs.ErrNotExist", err)
	}
}

func TestSchema2(t *testing.T) {
	m := aospkg.Manifest{
		Schema: 2, Name: "v2", Version: "0.1.0",
		Commands: aospkgtest.Commands("a"),
		ManPages: []aospkg.ManPage{},
	}
	p := openBytes(t, aospkgtest.Build(m, []aospkgtest.File{{Path: "/bin/a", Data: []byte("x")}}))
	if got := p.Manifest(); !reflect.DeepEqual(got, m) {
		t.Errorf("Manifest() = %+v, want %+v", got, m)
	}
}

func TestManifestIsCopied(t *testing.T) {
	p := openBytes(t, aospkgtest.Build(fullManifest(), demoFiles))
	m := p.Manifest()
	m.Commands[0].Command = "changed"
	m.Agent.Env["AGENT"] = "changed"
	m.Provides.Files[0].Target = "/changed"
	p.Commands()[0].Entry = "changed"
	p.Entries()[0].Path = "changed"
	if !reflect.DeepEqual(p.Manifest(), fullManifest()) {
		t.Error("modifying returned values changed the package")
	}
	if e, ok := p.Lookup("/"); !ok || e.Path != "/" {
		t.Error("modifying Entries() changed the index")
	}
}

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "demo.aospkg")
	if err := os.WriteFile(name, aospkgtest.Build(fullManifest(), demoFiles), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := aospkg.OpenFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := p.ReadFile("bin/hello"); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := aospkg.OpenFile(dir); err == nil {
		t.Error("OpenFile(directory) succeeded")
	}
	if _, err := aospkg.OpenFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile(missing) = %v", err)
	}
	bad := filepath.Join(dir, "bad.aospkg")
	if err := os.WriteFile(bad, []byte("not a package at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := aospkg.OpenFile(bad); !errors.Is(err, aospkg.ErrBadMagic) {
		t.Errorf("OpenFile(bad) = %v", err)
	}
}

// shortReader announces more bytes than it has.
type shortReader struct{ b []byte }

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// failingReader fails every read with a host error.
type failingReader struct{}

var errDisk = errors.New("disk on fire")

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errDisk }

func TestReaderErrors(t *testing.T) {
	b := aospkgtest.Build(fullManifest(), demoFiles)
	_, err := aospkg.Open(shortReader{b[:40]}, int64(len(b)))
	if !errors.Is(err, aospkg.ErrTruncated) {
		t.Errorf("short reader: %v, want ErrTruncated", err)
	}
	_, err = aospkg.Open(failingReader{}, int64(len(b)))
	var fe *aospkg.FormatError
	if !errors.Is(err, errDisk) || errors.As(err, &fe) {
		t.Errorf("failing reader: %v, want the reader's error, not a FormatError", err)
	}

	// A file that shrinks after Open reads as EIO, not as short data: here
	// the reader holds the metadata but not the file data it announced.
	p := openBytes(t, b)
	q, err := aospkg.Open(shortReader{b[:p.MountBase()+2]}, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.ReadFile("/bin/hello"); !errors.Is(err, errno.EIO) {
		t.Errorf("ReadFile after shrink = %v, want EIO", err)
	}
}

// TestPrefixesAndFlips checks that no truncation and no single-byte change
// of a valid container makes Open panic or return an untyped error.
func TestPrefixesAndFlips(t *testing.T) {
	b := aospkgtest.Build(fullManifest(), demoFiles)
	p := openBytes(t, b)
	meta := int(p.MountBase())
	for n := range meta {
		_, err := aospkg.Open(bytes.NewReader(b[:n]), int64(n))
		var fe *aospkg.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("prefix %d: err = %v, want FormatError", n, err)
		}
	}
	c := bytes.Clone(b)
	for i := range meta {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			c[i] ^= x
			_, err := aospkg.Open(bytes.NewReader(c), int64(len(c)))
			var fe *aospkg.FormatError
			if err != nil && !errors.As(err, &fe) {
				t.Fatalf("flip %d^%#x: err = %v, want FormatError", i, x, err)
			}
			c[i] ^= x
		}
	}
}
