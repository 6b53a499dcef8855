package setup

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Set-up fetches the pinned node tools with the host's npm, verifies and
// unpacks them, and records the host npm's registry; a second set-up
// needs neither npm nor the network.
func TestEnsureTools(t *testing.T) {
	d := Dirs{Software: t.TempDir(), Cache: t.TempDir()}
	var progress strings.Builder
	if err := ensureTools(context.Background(), Options{Dirs: d, Progress: &progress}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	mods := filepath.Join(d.Tools(), "usr", "lib", "node_modules")
	for _, f := range []string{"npm/bin/npm-cli.js", "npm/bin/npx-cli.js", "typescript/bin/tsc", "typescript/lib/typescript.js",
		"@types/node/index.d.ts", "undici-types/index.d.ts"} {
		if _, err := os.Stat(filepath.Join(mods, f)); err != nil {
			t.Error(err)
		}
	}
	if fi, err := os.Stat(filepath.Join(mods, "npm/bin/npm-cli.js")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("npm-cli.js: %v %v", fi, err)
	}
	want, err := exec.Command("npm", "config", "get", "registry").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := Registry(d); got != strings.TrimSpace(string(want)) || got == "" {
		t.Fatalf("registry %q, host npm %q", got, want)
	}
	if !strings.Contains(progress.String(), "typescript@") {
		t.Fatalf("progress %q", progress.String())
	}
	// Everything is in place: no npm is run.
	if err := ensureTools(context.Background(), Options{Dirs: d, NPM: "/nonexistent/npm"}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
}

// Only an http(s) URL is taken as a registry.
func TestRegistryValidated(t *testing.T) {
	d := Dirs{Cache: t.TempDir()}
	if Registry(d) != "" {
		t.Fatal("registry without set-up")
	}
	if err := os.MkdirAll(filepath.Join(d.Cache, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	for content, want := range map[string]string{
		"https://npm.example.com/\n":      "https://npm.example.com/",
		"http://10.0.0.5:4873/":           "http://10.0.0.5:4873/",
		"file:///etc/passwd\n":            "",
		"javascript:alert(1)":             "",
		"https://\n":                      "",
		strings.Repeat("https://a/", 300): "",
	} {
		if err := os.WriteFile(d.registryFile(), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := Registry(d); got != want {
			t.Errorf("%.30q: %q, want %q", content, got, want)
		}
	}
}
