package software

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A package tree is unpacked without its first path component (package/
// or, for @types packages, the package's own name); exec bits survive as
// 0755. Names that leave the tree, links and devices fail the whole
// unpack, and the limits hold.
func TestUnpackPackageTree(t *testing.T) {
	pin := Pin{Package: "@types/node", Version: "1.0.0"}
	dst := filepath.Join(t.TempDir(), "tree")
	tgz := makeTgz(t, member{name: "node/package.json", data: []byte(`{"name":"@types/node"}`)},
		member{name: "node/fs/promises.d.ts", data: []byte("export {}")}, member{name: "node/bin", typeflag: '5'})
	if err := unpackPackageTree(bytes.NewReader(tgz), dst, pin, nodePackageLimits); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "fs", "promises.d.ts")); err != nil || string(b) != "export {}" {
		t.Fatalf("%q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "package.json")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%v %v", fi, err)
	}

	for name, tgz := range map[string][]byte{
		"dotdot":      makeTgz(t, member{name: "package/../../escape", data: []byte("x")}),
		"absolute":    makeTgz(t, member{name: "/etc/passwd", data: []byte("x")}),
		"symlink":     makeTgz(t, member{name: "package/link", typeflag: '2'}),
		"device":      makeTgz(t, member{name: "package/dev", typeflag: '3'}),
		"not-gzip":    []byte("plain"),
		"duplicate":   makeTgz(t, member{name: "package/a", data: []byte("1")}, member{name: "package/a", data: []byte("2")}),
		"file-as-dir": makeTgz(t, member{name: "package/a", data: []byte("1")}, member{name: "package/a/b", data: []byte("2")}),
	} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "tree")
			err := unpackPackageTree(bytes.NewReader(tgz), dst, pin, nodePackageLimits)
			if !errors.Is(err, ErrBadArchive) {
				t.Fatalf("%v, want ErrBadArchive", err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "escape")); err == nil {
				t.Fatal("a member escaped the tree")
			}
		})
	}

	big := makeTgz(t, member{name: "package/big", data: bytes.Repeat([]byte("x"), 1<<20)})
	lim := limits{tarball: 1 << 20, unpacked: 64 << 10, members: 10}
	if err := unpackPackageTree(bytes.NewReader(big), filepath.Join(t.TempDir(), "t"), pin, lim); !errors.Is(err, ErrBadArchive) {
		t.Fatalf("over the size limit: %v", err)
	}
	var many []member
	for range 11 {
		many = append(many, member{name: "package/d", typeflag: '5'})
	}
	if err := unpackPackageTree(bytes.NewReader(makeTgz(t, many...)), filepath.Join(t.TempDir(), "t"), pin, lim); !errors.Is(err, ErrBadArchive) {
		t.Fatalf("over the member limit: %v", err)
	}
}

// The pins of the node tools are valid.
func TestNodeToolPins(t *testing.T) {
	for _, p := range NodeToolPins() {
		if err := p.validate(); err != nil {
			t.Error(err)
		}
	}
}

// FuzzUnpackPackageTree feeds arbitrary bytes to the package unpacker:
// it fails with ErrBadArchive or writes only beneath its directory.
func FuzzUnpackPackageTree(f *testing.F) {
	f.Add(makeTgz(f, member{name: "package/package.json", data: []byte("{}")}, member{name: "package/lib/a.js", data: []byte("1")}))
	f.Add(makeTgz(f, member{name: "package/../x", data: []byte("x")}))
	f.Add(makeTgz(f, member{name: "package/l", typeflag: '2'}))
	f.Add([]byte{0x1f, 0x8b})
	lim := limits{tarball: 1 << 20, unpacked: 4 << 20, members: 100}
	pin := Pin{Package: "fuzz", Version: "1.0.0"}
	f.Fuzz(func(t *testing.T, tgz []byte) {
		root := t.TempDir()
		dst := filepath.Join(root, "tree")
		err := unpackPackageTree(bytes.NewReader(tgz), dst, pin, lim)
		if err != nil && !errors.Is(err, ErrBadArchive) {
			t.Fatalf("error %v is not ErrBadArchive", err)
		}
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if e.Name() != "tree" {
				t.Fatalf("wrote %s outside the tree", e.Name())
			}
		}
	})
}
