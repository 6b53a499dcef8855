// Package npmtest installs npm trees pinned by a lockfile for tests: once
// per content into the secexec cache, outside the repository, so that
// tests run real npm packages without committing them.
package npmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec/internal/js/bootjs"
)

// Install installs the packages of dir (a package.json pinned by its
// package-lock.json, dev dependencies included) with npm ci into the
// cache once, under a name made of prefix and the files' digest, and
// returns the node_modules directory. A failed install fails t.
func Install(t testing.TB, dir, prefix string) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(manifest, lock...))
	cache, err := bootjs.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(cache, prefix+hex.EncodeToString(sum[:12]))
	if _, err := os.Stat(filepath.Join(final, ".complete")); err == nil {
		return filepath.Join(final, "node_modules")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed beside its final place and renamed there when whole, so
	// that concurrent tests never see half a tree.
	tmp, err := os.MkdirTemp(cache, "."+prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, ".complete")); serr != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(final, "node_modules")
}
