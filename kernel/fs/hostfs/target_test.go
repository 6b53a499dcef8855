package hostfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Absolute symlink targets inside the mounted directory come back
// relative to the link, so a guest learns nothing of the host path and
// the link still names the same file; other targets are unchanged.
func TestReadlinkHidesRootPath(t *testing.T) {
	dir := t.TempDir()
	// The mount is reached through a symlink, as /tmp may be on a host.
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(dir, via); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"top":       filepath.Join(dir, "a", "b"),
		"a/up":      filepath.Join(dir, "x"),
		"a/b/root":  dir,
		"a/b/via":   filepath.Join(via, "a"),
		"a/outside": "/etc/passwd",
		"a/rel":     "../x",
	}
	want := map[string]string{
		"top": "a/b", "a/up": "../x", "a/b/root": "../..", "a/b/via": "..", "a/outside": "/etc/passwd", "a/rel": "../x",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := New(via, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Release()
	for name := range links {
		in := &inode{fs: fs, path: name}
		got, err := in.Readlink(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got != want[name] {
			t.Errorf("%s: %q, want %q", name, got, want[name])
		}
		if strings.Contains(got, dir) || strings.Contains(got, via) {
			t.Errorf("%s: host path in %q", name, got)
		}
	}
}
