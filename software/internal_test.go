package software

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/software/aospkg"
	"github.com/secexec/secexec/software/internal/aospkgtest"
)

// member is one entry of a test tarball.
type member struct {
	name     string
	data     []byte
	typeflag byte // 0 means regular file
}

// makeTgz builds a gzipped tar like `npm pack` produces.
func makeTgz(t testing.TB, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data)), Typeflag: m.typeflag}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeSymlink {
			h.Linkname = "x"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write(m.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testPin pins tgz under a made-up npm name.
func testPin(name string, tgz []byte) Pin {
	sum := sha512.Sum512(tgz)
	return Pin{Package: "@secexec-test/" + name, Version: "1.0.0", Integrity: integrityOf(sum[:])}
}

// testPackage returns a tarball holding a container with the given
// commands; a command's module is WasmModule(tag), with tag defaulting to
// the command name.
func testPackage(t testing.TB, name string, provides *aospkg.Provides, cmds map[string]string) []byte {
	t.Helper()
	m := aospkg.Manifest{Name: name, Version: "1.0.0", Provides: provides}
	var files []aospkgtest.File
	for _, c := range slices.Sorted(func(yield func(string) bool) {
		for k := range cmds {
			if !yield(k) {
				return
			}
		}
	}) {
		tag := cmds[c]
		if tag == "" {
			tag = c
		}
		m.Commands = append(m.Commands, aospkg.Command{Command: c, Entry: "bin/" + c})
		files = append(files, aospkgtest.File{Path: "/bin/" + c, Data: aospkgtest.WasmModule(tag)})
	}
	files = append(files, aospkgtest.File{Path: "/share/doc/README", Data: []byte("hello\n"), Perm: 0o644})
	return makeTgz(t,
		member{name: "package/package.json", data: []byte(`{"name":"x"}`)},
		member{name: "package/dist/index.js", data: []byte("export {}\n")},
		member{name: aospkgMember, data: aospkgtest.Build(m, files)},
	)
}

// writeTgz stores tgz in a fresh directory, as npm pack would.
func writeTgz(t testing.TB, tgz []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pkg.tgz")
	if err := os.WriteFile(p, tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func openTestStore(t testing.TB, dir string, pins []Pin, progress func(Event)) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, Pins: pins, NPM: filepath.Join(t.TempDir(), "no-npm"), Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// installTest installs a test tarball into s the way install does after
// npm pack returns.
func installTest(t testing.TB, s *Store, pin Pin, tgz []byte) error {
	t.Helper()
	ip, err := s.installTarball(context.Background(), pin, writeTgz(t, tgz))
	if err != nil {
		return err
	}
	return s.activate(ip)
}

// cacheFiles lists the files under dir/packages and dir/tmp.
func cacheFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{"packages", "tmp"} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range ents {
			out = append(out, sub+"/"+e.Name())
		}
	}
	return out
}

func TestInstallTarball(t *testing.T) {
	tgz := testPackage(t, "demo", nil, map[string]string{"hello": "", "hi": "hello", "bye": ""})
	pin := testPin("demo", tgz)
	dir := t.TempDir()
	var mu sync.Mutex
	var events []Event
	s := openTestStore(t, dir, []Pin{pin}, func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() })
	if err := installTest(t, s, pin, tgz); err != nil {
		t.Fatal(err)
	}

	want := []string{"packages/demo@1.0.0.aospkg", "packages/demo@1.0.0.json"}
	if got := cacheFiles(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("cache files = %q, want %q", got, want)
	}
	var phases []Phase
	for _, e := range events {
		if e.Package != "demo" || e.Version != "1.0.0" || e.Bytes > e.Total && e.Total != 0 {
			t.Errorf("bad event %+v", e)
		}
		if len(phases) == 0 || phases[len(phases)-1] != e.Phase {
			phases = append(phases, e.Phase)
		}
	}
	if !reflect.DeepEqual(phases, []Phase{PhaseVerifying, PhaseUnpacking, PhaseDone}) {
		t.Errorf("phases = %v", phases)
	}

	hello, ok := s.Command("hello")
	hi, ok2 := s.Command("hi")
	bye, ok3 := s.Command("bye")
	if !ok || !ok2 || !ok3 {
		t.Fatal("commands missing")
	}
	if hello.Fingerprint != hi.Fingerprint || hello.Fingerprint == bye.Fingerprint {
		t.Errorf("fingerprints: hello %s hi %s bye %s", hello.Fingerprint, hi.Fingerprint, bye.Fingerprint)
	}
	if hello.Package != "demo" || hello.Version != "1.0.0" || hello.Entry != "bin/hello" || hello.Size != int64(len(aospkgtest.WasmModule("hello"))) {
		t.Errorf("hello = %+v", hello)
	}
	b, err := hi.Module()
	if err != nil || !bytes.Equal(b, aospkgtest.WasmModule("hello")) || FingerprintOf(b) != hi.Fingerprint {
		t.Errorf("hi.Module() = %q, %v", b, err)
	}

	// A second store over the same directory loads it without fetching.
	s2 := openTestStore(t, dir, []Pin{pin}, nil)
	if got := s2.Installed(); len(got) != 1 || got[0].Name() != "demo" || got[0].Manifest.Name != "demo" || got[0].Size == 0 {
		t.Errorf("Installed() = %+v", got)
	}
	if err := s2.Ensure(context.Background(), "demo"); err != nil {
		t.Errorf("Ensure of a cached package: %v", err)
	}
	if err := s2.Install(context.Background(), "@secexec-test/demo"); err != nil {
		t.Errorf("Install (verify) of a cached package: %v", err)
	}
	if c, ok := s2.Container("demo"); !ok || c.Name() != "demo" {
		t.Error("Container(demo) missing")
	} else if b, err := c.ReadFile("/share/doc/README"); err != nil || string(b) != "hello\n" {
		t.Errorf("README = %q, %v", b, err)
	}
}

func TestInstallTarballTampered(t *testing.T) {
	tgz := testPackage(t, "demo", nil, map[string]string{"hello": ""})
	pin := testPin("demo", tgz)
	for _, at := range []int{0, len(tgz) / 2, len(tgz) - 1} {
		bad := bytes.Clone(tgz)
		bad[at] ^= 0x40
		dir := t.TempDir()
		s := openTestStore(t, dir, []Pin{pin}, nil)
		err := installTest(t, s, pin, bad)
		var ie *IntegrityError
		if !errors.Is(err, ErrIntegrity) || !errors.As(err, &ie) {
			t.Fatalf("byte %d flipped: err = %v, want IntegrityError", at, err)
		}
		if sum := sha512.Sum512(bad); ie.Want != pin.Integrity || ie.Got != integrityOf(sum[:]) {
			t.Errorf("IntegrityError = %+v", ie)
		}
		if files := cacheFiles(t, dir); len(files) != 0 {
			t.Errorf("tampered install left %q", files)
		}
		if len(s.Installed()) != 0 || len(s.Commands()) != 0 {
			t.Error("tampered package is installed")
		}
	}
	// Appending bytes is tampering too.
	s := openTestStore(t, t.TempDir(), []Pin{pin}, nil)
	if err := installTest(t, s, pin, append(bytes.Clone(tgz), 0)); !errors.Is(err, ErrIntegrity) {
		t.Errorf("appended byte: err = %v", err)
	}
}

func TestInstallTarballBad(t *testing.T) {
	good := aospkgtest.Build(aospkg.Manifest{Name: "x", Version: "1", Commands: aospkgtest.Commands("a")},
		[]aospkgtest.File{{Path: "/bin/a", Data: aospkgtest.WasmModule("a")}})
	noEntry := aospkgtest.Build(aospkg.Manifest{Name: "x", Version: "1", Commands: aospkgtest.Commands("a", "b")},
		[]aospkgtest.File{{Path: "/bin/a", Data: aospkgtest.WasmModule("a")}})
	dirEntry := aospkgtest.Build(aospkg.Manifest{Name: "x", Version: "1", Commands: aospkgtest.Commands("a")},
		[]aospkgtest.File{{Path: "/bin/a", Dir: true}})
	tests := []struct {
		name  string
		tgz   []byte
		lim   func(*limits)
		want  error
		cause error
	}{
		{"not gzip", []byte("plain text, not a tarball"), nil, ErrBadArchive, nil},
		{"gzip of garbage", func() []byte {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(bytes.Repeat([]byte("garbage!"), 200))
			zw.Close()
			return b.Bytes()
		}(), nil, ErrBadArchive, nil},
		{"no container", makeTgz(t, member{name: "package/package.json", data: []byte("{}")}), nil, ErrBadArchive, nil},
		{"container elsewhere", makeTgz(t, member{name: "node/dist/package.aospkg", data: good}), nil, ErrBadArchive, nil},
		{"two containers", makeTgz(t, member{name: aospkgMember, data: good}, member{name: "package/dist/./package.aospkg", data: good}), nil, ErrBadArchive, nil},
		{"container is a symlink", makeTgz(t, member{name: aospkgMember, typeflag: tar.TypeSymlink}), nil, ErrBadArchive, nil},
		{"container is a directory", makeTgz(t, member{name: aospkgMember, typeflag: tar.TypeDir}), nil, ErrBadArchive, nil},
		{"dotdot member", makeTgz(t, member{name: "package/../../etc/passwd", data: []byte("x")}, member{name: aospkgMember, data: good}), nil, ErrBadArchive, nil},
		{"absolute member", makeTgz(t, member{name: "/etc/passwd", data: []byte("x")}, member{name: aospkgMember, data: good}), nil, ErrBadArchive, nil},
		{"backslash member", makeTgz(t, member{name: "package\\..\\x", data: []byte("x")}, member{name: aospkgMember, data: good}), nil, ErrBadArchive, nil},
		{"tarball too large", makeTgz(t, member{name: aospkgMember, data: good}), func(l *limits) { l.tarball = 100 }, ErrBadArchive, nil},
		{"container too large", makeTgz(t, member{name: aospkgMember, data: good}), func(l *limits) { l.aospkg = 100 }, ErrBadArchive, nil},
		{"unpacks too large", makeTgz(t, member{name: "package/big", data: make([]byte, 64<<10)}, member{name: aospkgMember, data: good}), func(l *limits) { l.unpacked = 32 << 10 }, ErrBadArchive, nil},
		{"too many members", makeTgz(t, member{name: "package/a"}, member{name: "package/b"}, member{name: aospkgMember, data: good}), func(l *limits) { l.members = 2 }, ErrBadArchive, nil},
		{"container malformed", makeTgz(t, member{name: aospkgMember, data: []byte("\x89AOX is not the magic")}), nil, ErrBadPackage, aospkg.ErrBadMagic},
		{"container truncated", makeTgz(t, member{name: aospkgMember, data: good[:40]}), nil, ErrBadPackage, aospkg.ErrTruncated},
		{"command without module", makeTgz(t, member{name: aospkgMember, data: noEntry}), nil, ErrBadPackage, nil},
		{"command is a directory", makeTgz(t, member{name: aospkgMember, data: dirEntry}), nil, ErrBadPackage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pin := testPin("bad", tt.tgz)
			dir := t.TempDir()
			s := openTestStore(t, dir, []Pin{pin}, nil)
			if tt.lim != nil {
				tt.lim(&s.limits)
			}
			err := installTest(t, s, pin, tt.tgz)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.cause)
			}
			if files := cacheFiles(t, dir); len(files) != 0 {
				t.Errorf("failed install left %q", files)
			}
		})
	}
}

func TestDuplicateCommands(t *testing.T) {
	a := testPackage(t, "alpha", nil, map[string]string{"dup": "from-alpha", "onlya": ""})
	b := testPackage(t, "beta", nil, map[string]string{"dup": "from-beta", "onlyb": ""})
	pa, pb := testPin("alpha", a), testPin("beta", b)
	dir := t.TempDir()
	s := openTestStore(t, dir, []Pin{pa, pb}, nil)
	// Install in the opposite order to the pins: pin order still decides.
	if err := installTest(t, s, pb, b); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Command("dup"); c.Package != "beta" {
		t.Errorf("with only beta installed, dup comes from %q", c.Package)
	}
	if err := installTest(t, s, pa, a); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Command("dup"); c.Package != "alpha" {
		t.Errorf("dup comes from %q, want alpha (first pinned)", c.Package)
	}
	var names []string
	for _, c := range s.Commands() {
		names = append(names, c.Name+"="+c.Package)
	}
	if want := []string{"dup=alpha", "onlya=alpha", "onlyb=beta"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Commands() = %q, want %q", names, want)
	}
	// Reversed pins over the same cache: beta wins.
	r := openTestStore(t, dir, []Pin{pb, pa}, nil)
	if c, _ := r.Command("dup"); c.Package != "beta" {
		t.Errorf("reversed pins: dup comes from %q", c.Package)
	}
	// The shadowed module is still reachable by fingerprint.
	if _, err := s.Module(FingerprintOf(aospkgtest.WasmModule("from-beta"))); err != nil {
		t.Errorf("Module(beta's dup): %v", err)
	}
}

func TestProvidesMerge(t *testing.T) {
	a := testPackage(t, "alpha", &aospkg.Provides{
		Env:   map[string]string{"SHARED": "alpha", "A": "1"},
		Files: []aospkg.ProvidedFile{{Source: "share/doc", Target: "/usr/share/doc/alpha"}},
	}, map[string]string{"a": ""})
	b := testPackage(t, "beta", &aospkg.Provides{Env: map[string]string{"SHARED": "beta", "B": "2"}}, map[string]string{"b": ""})
	pa, pb := testPin("alpha", a), testPin("beta", b)
	s := openTestStore(t, t.TempDir(), []Pin{pa, pb}, nil)
	for _, x := range []struct {
		p   Pin
		tgz []byte
	}{{pb, b}, {pa, a}} {
		if err := installTest(t, s, x.p, x.tgz); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Provides()
	want := Provides{
		Env:   map[string]string{"SHARED": "alpha", "A": "1", "B": "2"},
		Files: []ProvidedFile{{Package: "alpha", Source: "share/doc", Target: "/usr/share/doc/alpha"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Provides() = %+v, want %+v", got, want)
	}
}

// TestDamagedCache covers cache files that changed after install: such a
// package is not loaded (it will be fetched again), and module bytes that
// changed in place are refused.
func TestDamagedCache(t *testing.T) {
	tgz := testPackage(t, "demo", nil, map[string]string{"hello": ""})
	pin := testPin("demo", tgz)
	fresh := func(t *testing.T) (dir string, base string) {
		dir = t.TempDir()
		if err := installTest(t, openTestStore(t, dir, []Pin{pin}, nil), pin, tgz); err != nil {
			t.Fatal(err)
		}
		return dir, filepath.Join(dir, "packages", "demo@1.0.0")
	}
	edit := func(t *testing.T, name string, f func([]byte) []byte) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notLoaded := []struct {
		name   string
		damage func(t *testing.T, base string)
	}{
		{"metadata garbage", func(t *testing.T, base string) {
			edit(t, base+".json", func([]byte) []byte { return []byte("{not json") })
		}},
		{"metadata for another version", func(t *testing.T, base string) {
			edit(t, base+".json", func(b []byte) []byte { return bytes.Replace(b, []byte(`"1.0.0"`), []byte(`"1.0.1"`), 1) })
		}},
		{"metadata fingerprint missing", func(t *testing.T, base string) {
			edit(t, base+".json", func(b []byte) []byte { return bytes.Replace(b, []byte(`"bin/hello"`), []byte(`"bin/other"`), 1) })
		}},
		{"container truncated", func(t *testing.T, base string) {
			edit(t, base+".aospkg", func(b []byte) []byte { return b[:len(b)-1] })
		}},
		{"container garbage", func(t *testing.T, base string) {
			edit(t, base+".aospkg", func(b []byte) []byte { return bytes.Repeat([]byte{'x'}, len(b)) })
		}},
		{"container missing", func(t *testing.T, base string) {
			if err := os.Remove(base + ".aospkg"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range notLoaded {
		t.Run(tt.name, func(t *testing.T) {
			dir, base := fresh(t)
			tt.damage(t, base)
			s := openTestStore(t, dir, []Pin{pin}, nil)
			if len(s.Installed()) != 0 {
				t.Fatal("damaged package was loaded")
			}
			// Ensure tries to fetch it again, which fails here: no npm.
			if err := s.Ensure(context.Background(), "demo"); !errors.Is(err, ErrFetch) {
				t.Errorf("Ensure = %v, want ErrFetch", err)
			}
		})
	}

	t.Run("module bytes changed in place", func(t *testing.T) {
		dir, base := fresh(t)
		mod := aospkgtest.WasmModule("hello")
		edit(t, base+".aospkg", func(b []byte) []byte {
			i := bytes.Index(b, mod)
			b[i+len(mod)-1] ^= 1
			return b
		})
		s := openTestStore(t, dir, []Pin{pin}, nil)
		c, ok := s.Command("hello")
		if !ok {
			t.Fatal("package with a damaged module should still load (sizes match)")
		}
		if _, err := c.Module(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Module() = %v, want ErrCorrupt", err)
		}
		if _, err := s.Module(c.Fingerprint); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Store.Module() = %v, want ErrCorrupt", err)
		}
		if err := s.Ensure(context.Background(), "demo"); err != nil {
			t.Errorf("Ensure does not re-hash: %v", err)
		}
		// Install re-hashes, finds the damage, and tries to fetch again.
		if err := s.Install(context.Background(), "demo"); !errors.Is(err, ErrFetch) {
			t.Errorf("Install = %v, want ErrFetch", err)
		}
	})
}

func TestSafeMemberName(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"package/dist/package.aospkg", "package/dist/package.aospkg", true},
		{"package/./dist//package.aospkg", "package/dist/package.aospkg", true},
		{"package/dist/", "package/dist", true},
		{"", "", false},
		{"/etc/passwd", "", false},
		{"package/../x", "", false},
		{"..", "", false},
		{"package/a\x00b", "", false},
		{"package\\..\\x", "", false},
	}
	for _, tt := range tests {
		got, ok := safeMemberName(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("safeMemberName(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCappedBuffer(t *testing.T) {
	head := &cappedBuffer{max: 5}
	tail := &cappedBuffer{max: 5, keepTail: true}
	for _, w := range []string{"abc", "defg", "hij"} {
		for _, c := range []*cappedBuffer{head, tail} {
			if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
	}
	if head.String() != "abcde" || tail.String() != "fghij" {
		t.Errorf("head %q, tail %q", head.String(), tail.String())
	}
}

func TestPinValidation(t *testing.T) {
	good := defaultPins[1]
	tests := []struct {
		name string
		pin  Pin
	}{
		{"empty name", Pin{"", good.Version, good.Integrity}},
		{"upper case", Pin{"@agentos-software/Sed", good.Version, good.Integrity}},
		{"path in name", Pin{"@agentos-software/../sed", good.Version, good.Integrity}},
		{"nested scope", Pin{"@a/b/c", good.Version, good.Integrity}},
		{"empty version", Pin{good.Package, "", good.Integrity}},
		{"range version", Pin{good.Package, "^0.3.4", good.Integrity}},
		{"slash version", Pin{good.Package, "0.3.4/../x", good.Integrity}},
		{"sha1 integrity", Pin{good.Package, good.Version, "sha1-" + strings.Repeat("A", 27) + "="}},
		{"short digest", Pin{good.Package, good.Version, "sha512-AAAA"}},
		{"bad base64", Pin{good.Package, good.Version, "sha512-" + strings.Repeat("!", 88)}},
		{"two hashes", Pin{good.Package, good.Version, good.Integrity + " " + good.Integrity}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(context.Background(), Options{Dir: t.TempDir(), Pins: []Pin{tt.pin}})
			if !errors.Is(err, ErrInvalidPin) {
				t.Errorf("Open = %v, want ErrInvalidPin", err)
			}
		})
	}
	_, err := Open(context.Background(), Options{Dir: t.TempDir(), Pins: []Pin{good, {"@other/sed", good.Version, good.Integrity}}})
	if !errors.Is(err, ErrInvalidPin) {
		t.Errorf("two pins with one short name: %v", err)
	}
}

func TestStaleTempsRemoved(t *testing.T) {
	tgz := testPackage(t, "demo", nil, map[string]string{"hello": ""})
	pin := testPin("demo", tgz)
	dir := t.TempDir()
	s := openTestStore(t, dir, []Pin{pin}, nil)
	if err := s.mkdirs(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "tmp", "demo@1.0.0-123.aospkg")
	other := filepath.Join(dir, "tmp", "other@1.0.0-123.aospkg")
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The fetch fails (no npm), but the dead install's leftovers go first.
	if err := s.Ensure(context.Background(), "demo"); !errors.Is(err, ErrFetch) {
		t.Fatalf("Ensure = %v", err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Error("stale temp file of demo was kept")
	}
	if _, err := os.Stat(other); err != nil {
		t.Error("another package's temp file was removed")
	}
}

func TestErrorStrings(t *testing.T) {
	for _, err := range []error{
		&IntegrityError{Spec: "@a/b@1", Want: "sha512-x", Got: "sha512-y"},
		&FetchError{Spec: "@a/b@1", Err: errors.New("exit status 1"), Stderr: "npm error 404\n"},
	} {
		if s := err.Error(); !strings.Contains(s, "@a/b@1") || !strings.HasPrefix(s, "software: ") {
			t.Errorf("%T.Error() = %q", err, s)
		}
	}
}

// An npm that stalls (here: a program that never answers) is stopped at
// the attempt's time limit and tried once more; the fetch then fails with
// a FetchError that says so, instead of hanging the set-up.
func TestNPMPackStallIsBounded(t *testing.T) {
	old := npmPackTimeout
	npmPackTimeout = 300 * time.Millisecond
	t.Cleanup(func() { npmPackTimeout = old })
	dir := t.TempDir()
	stall := filepath.Join(dir, "npm")
	count := filepath.Join(dir, "count")
	if err := os.WriteFile(stall, []byte("#!/bin/sh\necho x >> "+count+"\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := npmPack(context.Background(), stall, Pin{Package: "@agentos-software/sed", Version: "0.3.4"}, t.TempDir())
	var fe *FetchError
	if !errors.As(err, &fe) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrFetch) {
		t.Fatalf("stalled npm: %v, want a FetchError for the deadline", err)
	}
	if b, _ := os.ReadFile(count); strings.Count(string(b), "x") != 2 {
		t.Errorf("npm was started %d times, want 2 (one retry)", strings.Count(string(b), "x"))
	}
}
