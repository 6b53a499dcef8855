// Package termpage is the browser terminal `secexec serve --terminal`
// offers at /terminal/: a page that asks for the server token (kept in
// sessionStorage, never in a URL), lists or creates a VM, spawns sh on a
// terminal sized to the window and attaches to it over the process
// WebSocket, authenticated by the token subprotocol. Its terminal
// emulator is xterm.js, fetched from npm at set-up (pinned, verified
// against the registry's integrity), bundled with esbuild and cached;
// no third-party code is part of the repository.
package termpage

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	esbuild "github.com/evanw/esbuild/pkg/api"

	"github.com/secexec/secexec/software"
)

// pins are the npm packages of the page: the terminal emulator and its
// add-on that fits the terminal to its element. Integrity values are the
// registry's dist.integrity for each version.
var pins = []software.Pin{
	{Package: "@xterm/xterm", Version: "5.5.0", Integrity: "sha512-hqJHYaQb5OptNunnyAnkHyM8aCjZ1MEIDTQu1iIbbTD/xops91NB5yq1ZK/dC2JDbVWtF23zUtl9JE2NqwT87A=="},
	{Package: "@xterm/addon-fit", Version: "0.10.0", Integrity: "sha512-UFYkDm4HUahf2lnEyHvio51TNGiLK66mqP2JoATy7hRZeXaGMRDr00JiSF7m63vR5WKATF605yEggJKsw0JpMQ=="},
}

//go:embed page.js
var pageJS string

//go:embed index.html
var indexHTML []byte

// ErrNotSetUp is returned by Dir when the page's assets are not built.
var ErrNotSetUp = errors.New("termpage: the terminal page is not set up")

// Options configure Build.
type Options struct {
	// CacheDir holds the built page (a directory per pin set and page
	// source), e.g. setup.Dirs.Cache/terminal.
	CacheDir string
	// NPM is the npm executable (default "npm").
	NPM string
}

// dirName names the build of these pins and this page source, so a
// change of either builds anew instead of serving a stale bundle.
func dirName() string {
	h := sha256.New()
	for _, p := range pins {
		fmt.Fprintf(h, "%s@%s %s\n", p.Package, p.Version, p.Integrity)
	}
	h.Write([]byte(pageJS))
	return "page-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Dir returns the directory of the built page in cacheDir, or
// ErrNotSetUp.
func Dir(cacheDir string) (string, error) {
	dir := filepath.Join(cacheDir, dirName())
	if _, err := os.Stat(filepath.Join(dir, "terminal.js")); err != nil {
		return "", fmt.Errorf("%w (in %s): %w", ErrNotSetUp, cacheDir, err)
	}
	return dir, nil
}

// Build fetches the pinned packages with npm, verifies them, bundles the
// page with esbuild and keeps the result in o.CacheDir; a build already
// there is reused. It returns the directory Handler serves.
func Build(ctx context.Context, o Options) (string, error) {
	if dir, err := Dir(o.CacheDir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return "", fmt.Errorf("termpage: %w", err)
	}
	tmp, err := os.MkdirTemp(o.CacheDir, ".build-")
	if err != nil {
		return "", fmt.Errorf("termpage: %w", err)
	}
	defer os.RemoveAll(tmp)
	mods := filepath.Join(tmp, "node_modules")
	for _, p := range pins {
		dst := filepath.Join(mods, filepath.FromSlash(p.Package))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("termpage: %w", err)
		}
		if err := software.FetchNodePackage(ctx, o.NPM, p, dst); err != nil {
			return "", fmt.Errorf("termpage: fetching %s: %w", p.Spec(), err)
		}
	}
	out := filepath.Join(tmp, "out")
	res := esbuild.Build(esbuild.BuildOptions{
		Stdin:             &esbuild.StdinOptions{Contents: pageJS, ResolveDir: tmp, Sourcefile: "page.js", Loader: esbuild.LoaderJS},
		Bundle:            true,
		Format:            esbuild.FormatIIFE,
		Target:            esbuild.ES2020,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		NodePaths:         []string{mods},
		Outfile:           filepath.Join(out, "terminal.js"),
		Write:             true,
		LogLevel:          esbuild.LogLevelSilent,
		AbsWorkingDir:     tmp,
		LegalComments:     esbuild.LegalCommentsEndOfFile,
		Loader:            map[string]esbuild.Loader{".css": esbuild.LoaderCSS},
		EntryNames:        "terminal",
		AllowOverwrite:    true,
		Platform:          esbuild.PlatformBrowser,
		MainFields:        []string{"module", "main"},
		Sourcemap:         esbuild.SourceMapNone,
		TreeShaking:       esbuild.TreeShakingTrue,
		ResolveExtensions: []string{".js", ".mjs", ".css"},
	})
	if len(res.Errors) > 0 {
		msgs := make([]string, 0, len(res.Errors))
		for _, m := range res.Errors {
			msgs = append(msgs, m.Text)
		}
		return "", fmt.Errorf("termpage: bundling: %s", strings.Join(msgs, "; "))
	}
	if _, err := os.Stat(filepath.Join(out, "terminal.css")); err != nil {
		return "", fmt.Errorf("termpage: the bundle has no stylesheet: %w", err)
	}
	dir := filepath.Join(o.CacheDir, dirName())
	if err := os.Rename(out, dir); err != nil {
		// Another build got there first: use it.
		if d, derr := Dir(o.CacheDir); derr == nil {
			return d, nil
		}
		return "", fmt.Errorf("termpage: %w", err)
	}
	return dir, nil
}

// Handler serves the page below prefix (e.g. "/terminal/") from dir, a
// directory Build returned. With dir empty (not set up) every request is
// answered 503 with how to set the page up.
func Handler(prefix, dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// The page holds a token: it must not be framed by another site.
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		if dir == "" {
			http.Error(w, "the terminal page is not set up: its assets (xterm.js from npm) could not be fetched and bundled; "+
				"check that npm can reach its registry and restart `secexec serve --terminal` (see the server's log)", http.StatusServiceUnavailable)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, prefix)
		switch name {
		case "", "index.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(indexHTML)
		case "terminal.js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			http.ServeFile(w, r, filepath.Join(dir, "terminal.js"))
		case "terminal.css":
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			http.ServeFile(w, r, filepath.Join(dir, "terminal.css"))
		default:
			http.NotFound(w, r)
		}
	})
}
