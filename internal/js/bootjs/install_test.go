package bootjs

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// leftovers lists what a failed Build left in dir besides its lock file.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != "polyfills.lock" {
			out = append(out, e.Name())
		}
	}
	return out
}

// An engine process builds offline: with nothing installed it reports
// ErrNotInstalled and writes nothing.
func TestBuildOfflineNeedsInstall(t *testing.T) {
	dir := t.TempDir()
	_, err := Build(context.Background(), Options{CacheDir: dir, Offline: true, NPM: "/no/such/npm"})
	if !errors.Is(err, ErrNotInstalled) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("offline Build on an empty cache = %v, want ErrNotInstalled", err)
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Fatalf("left %q", left)
	}
}

// Without npm, Build fails with an InstallError that matches
// exec.ErrNotFound; with npm failing (no registry reachable) it fails with
// npm's own words, and neither leaves a partial install behind.
func TestBuildInstallFailures(t *testing.T) {
	t.Run("no npm", func(t *testing.T) {
		dir := t.TempDir()
		_, err := Build(context.Background(), Options{CacheDir: dir, NPM: filepath.Join(t.TempDir(), "npm")})
		var ie *InstallError
		if !errors.As(err, &ie) || !errors.Is(err, ErrInstall) || !errors.Is(err, exec.ErrNotFound) {
			t.Fatalf("Build without npm = %v, want an InstallError matching exec.ErrNotFound", err)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Fatalf("left %q", left)
		}
	})
	t.Run("no registry", func(t *testing.T) {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Fatal("npm is needed (.ci/run installs it)")
		}
		// The real npm, with an empty cache of its own and a registry
		// address on which nothing listens.
		t.Setenv("npm_config_cache", t.TempDir())
		t.Setenv("npm_config_registry", "http://127.0.0.1:9/")
		t.Setenv("npm_config_fetch_retries", "0")
		dir := t.TempDir()
		_, err := Build(context.Background(), Options{CacheDir: dir})
		var ie *InstallError
		if !errors.As(err, &ie) || ie.Output == "" || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Build with no registry = %v, want a one-line InstallError with npm's output", err)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Fatalf("left %q", left)
		}
	})
}

// A first Build installs and reports its steps; a second does no work and
// says nothing; a damaged bundle is rebuilt (offline too), and a damaged
// install is installed again.
func TestBuildInstallsOnceAndRepairs(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed (.ci/run installs it)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	var progress bytes.Buffer
	b, err := Build(ctx, Options{CacheDir: dir, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node polyfills: installing", "node polyfills: installed", "node bootstrap: bundled"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress %q lacks %q", progress.String(), want)
		}
	}

	progress.Reset()
	b2, err := Build(ctx, Options{CacheDir: dir, Progress: &progress, NPM: "/no/such/npm"})
	if err != nil || b2.Source != b.Source || progress.Len() > 0 {
		t.Fatalf("second Build: %v, same source %v, progress %q", err, b2 != nil && b2.Source == b.Source, progress.String())
	}

	bundles, _ := filepath.Glob(filepath.Join(dir, "bundle-*.js"))
	if len(bundles) != 1 {
		t.Fatalf("bundles %q", bundles)
	}
	data, err := os.ReadFile(bundles[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-2] ^= 0x20 // one flipped bit in the script
	if err := os.WriteFile(bundles[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	b3, err := Build(ctx, Options{CacheDir: dir, Offline: true})
	if err != nil || b3.Source != b.Source {
		t.Fatalf("Build over a damaged bundle: %v", err)
	}

	// A polyfill deleted after the install completed: bundling fails, so
	// the install is made again.
	if err := os.Remove(bundles[0]); err != nil {
		t.Fatal(err)
	}
	mods, _ := filepath.Glob(filepath.Join(dir, "polyfills-*", "node_modules", "buffer", "index.js"))
	if len(mods) != 1 {
		t.Fatalf("installed buffer: %q", mods)
	}
	if err := os.Remove(mods[0]); err != nil {
		t.Fatal(err)
	}
	b4, err := Build(ctx, Options{CacheDir: dir})
	if err != nil || b4.Source != b.Source {
		t.Fatalf("Build over a damaged install: %v", err)
	}
	if _, err := os.Stat(mods[0]); err != nil {
		t.Errorf("the damaged install was not repaired: %v", err)
	}

	// Another secexec build's files in the same cache: the next install
	// or bundle removes them only once unused for a week, so the other
	// build's engines keep working meanwhile.
	long := time.Now().Add(-8 * 24 * time.Hour)
	for _, name := range []string{"polyfills-recent", "polyfills-old"} {
		if err := os.MkdirAll(filepath.Join(dir, name, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"bundle-recent.js", "bundle-old.js"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"polyfills-old", "bundle-old.js"} {
		if err := os.Chtimes(filepath.Join(dir, name), long, long); err != nil {
			t.Fatal(err)
		}
	}
	current, _ := filepath.Glob(filepath.Join(dir, "bundle-????????????????????????.js"))
	if len(current) != 1 {
		t.Fatalf("current bundle: %q", current)
	}
	if err := os.Remove(current[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, Options{CacheDir: dir, Offline: true}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"polyfills-recent": true, "bundle-recent.js": true, "bundle-old.js": false} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}
