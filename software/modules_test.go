package software

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/secexec/secexec/software/internal/aospkgtest"
)

// testModulePin pins tgz as a module package whose module is at entry.
func testModulePin(tgz []byte, entry string, cmds ...string) ModulePin {
	return ModulePin{Pin: testPin("mod", tgz), Entry: entry, Commands: cmds, Env: []string{"TESTVAR=1"}}
}

func openModuleStore(t *testing.T, dir string, mp ModulePin) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, Pins: []Pin{}, Modules: []ModulePin{mp},
		NPM: filepath.Join(t.TempDir(), "no-npm")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func installModuleTest(t *testing.T, s *Store, mp ModulePin, tgz []byte) error {
	t.Helper()
	im, err := s.installModuleTarball(context.Background(), mp, writeTgz(t, tgz))
	if err != nil {
		return err
	}
	return s.activateModule(im)
}

func TestModulePackageInstallLoadAndCorruption(t *testing.T) {
	wasm := aospkgtest.WasmModule("py")
	tgz := makeTgz(t, member{name: "package/package.json", data: []byte(`{}`)},
		member{name: "package/dist/py.wasm", data: wasm})
	mp := testModulePin(tgz, "package/dist/py.wasm", "py3", "py")
	dir := t.TempDir()
	s := openModuleStore(t, dir, mp)
	if _, ok := s.Command("py3"); ok {
		t.Fatal("command before install")
	}
	if err := installModuleTest(t, s, mp, tgz); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"py3", "py"} {
		c, ok := s.Command(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		if c.Fingerprint != FingerprintOf(wasm) || c.Size != int64(len(wasm)) || !slices.Equal(c.Env, []string{"TESTVAR=1"}) {
			t.Fatalf("%s: %+v", name, c)
		}
		b, err := c.Module()
		if err != nil || !bytes.Equal(b, wasm) {
			t.Fatalf("%s: module %v", name, err)
		}
		f, ok, err := c.OpenModuleFile()
		if !ok || err != nil {
			t.Fatalf("OpenModuleFile: %v %v", ok, err)
		}
		f.Close()
	}
	if got := s.InstalledModules(); len(got) != 1 || got[0].Package != mp.Package {
		t.Fatalf("InstalledModules = %+v", got)
	}

	// A fresh store finds it in the cache, without npm.
	s2 := openModuleStore(t, dir, mp)
	if _, ok := s2.Command("py"); !ok {
		t.Fatal("not loaded from the cache")
	}
	if err := s2.Ensure(context.Background()); err != nil {
		t.Fatalf("Ensure of a cached module package: %v", err)
	}

	// Same size, one byte changed: reads fail, a full check refetches
	// (and here fails, for want of npm).
	path := filepath.Join(dir, "packages", mp.Name()+"@"+mp.Version+".wasm")
	bad := bytes.Clone(wasm)
	bad[len(bad)-1] ^= 0xff
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := s2.Command("py")
	if _, err := c.Module(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Module of a damaged file: %v, want ErrCorrupt", err)
	}
	if err := s2.Install(context.Background(), mp.Name()); !errors.Is(err, ErrFetch) {
		t.Fatalf("Install over a damaged file: %v, want ErrFetch", err)
	}
	// A file of another size is not loaded at all.
	if err := os.WriteFile(path, wasm[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := openModuleStore(t, dir, mp)
	if _, ok := s3.Command("py"); ok {
		t.Fatal("a truncated module was loaded")
	}
}

func TestModulePackageBadTarballs(t *testing.T) {
	wasm := aospkgtest.WasmModule("x")
	cases := []struct {
		name string
		tgz  []byte
		pin  func(ModulePin) ModulePin
		want error
	}{
		{"missing member", makeTgz(t, member{name: "package/dist/other.wasm", data: wasm}), nil, ErrBadArchive},
		{"twice", makeTgz(t, member{name: "package/dist/x.wasm", data: wasm}, member{name: "package/dist/x.wasm", data: wasm}), nil, ErrBadArchive},
		{"not wasm", makeTgz(t, member{name: "package/dist/x.wasm", data: []byte("#!/bin/sh\necho pwned\n")}), nil, ErrNotWasm},
		{"symlink", makeTgz(t, member{name: "package/dist/x.wasm", typeflag: '2'}), nil, ErrBadArchive},
		{"unsafe name", makeTgz(t, member{name: "../package/dist/x.wasm", data: wasm}), nil, ErrBadArchive},
		{"integrity", makeTgz(t, member{name: "package/dist/x.wasm", data: wasm}), func(p ModulePin) ModulePin {
			p.Integrity = testPin("y", []byte("other")).Integrity
			return p
		}, ErrIntegrity},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mp := testModulePin(tc.tgz, "package/dist/x.wasm", "x")
			if tc.pin != nil {
				mp = tc.pin(mp)
			}
			dir := t.TempDir()
			s := openModuleStore(t, dir, mp)
			if err := installModuleTest(t, s, mp, tc.tgz); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if _, ok := s.Command("x"); ok {
				t.Fatal("command installed from a bad tarball")
			}
			if ents, _ := os.ReadDir(filepath.Join(dir, "packages")); len(ents) != 0 {
				t.Fatalf("cache written: %v", ents)
			}
		})
	}
}

func TestModulePinValidation(t *testing.T) {
	good := testModulePin([]byte("x"), "package/dist/x.wasm", "x")
	cases := map[string]func(*ModulePin){
		"entry escapes":    func(p *ModulePin) { p.Entry = "../x.wasm" },
		"entry absolute":   func(p *ModulePin) { p.Entry = "/etc/passwd" },
		"entry not clean":  func(p *ModulePin) { p.Entry = "package//x.wasm" },
		"no commands":      func(p *ModulePin) { p.Commands = nil },
		"command with /":   func(p *ModulePin) { p.Commands = []string{"a/b"} },
		"command dotdot":   func(p *ModulePin) { p.Commands = []string{".."} },
		"env without =":    func(p *ModulePin) { p.Env = []string{"NOVALUE"} },
		"env empty key":    func(p *ModulePin) { p.Env = []string{"=x"} },
		"env NUL":          func(p *ModulePin) { p.Env = []string{"A=\x00"} },
		"bad integrity":    func(p *ModulePin) { p.Integrity = "sha1-abc" },
		"bad package name": func(p *ModulePin) { p.Package = "Bad Name" },
		"bad version":      func(p *ModulePin) { p.Version = "1.0/../x" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			p := clonePin(good)
			mutate(&p)
			_, err := Open(context.Background(), Options{Dir: t.TempDir(), Pins: []Pin{}, Modules: []ModulePin{p}})
			if !errors.Is(err, ErrInvalidPin) {
				t.Fatalf("got %v, want ErrInvalidPin", err)
			}
		})
	}
	// A module package may not share a short name with a container one.
	_, err := Open(context.Background(), Options{Dir: t.TempDir(), Pins: []Pin{good.Pin}, Modules: []ModulePin{good}})
	if !errors.Is(err, ErrInvalidPin) {
		t.Fatalf("duplicate name: %v", err)
	}
	if err := PythonPin.validate(); err != nil {
		t.Fatalf("PythonPin: %v", err)
	}
}
