// Package bootjs builds the bootstrap script of secexec's node runtime:
// the JavaScript half of the Node builtins (src/, our own code) bundled
// with esbuild together with well-kept npm polyfill packages (buffer,
// events, util, readable-stream, ...).
//
// Third-party code is never committed. package.json and package-lock.json
// (our own files) pin every package by version and integrity hash; at
// first use Build runs `npm ci` into a directory of the cache named after
// the lockfile's digest, so npm verifies every tarball against the lock,
// and then bundles. The bundle itself is cached next to it, keyed by the
// digest of the lockfile, our sources and the esbuild version, so a warm
// host pays neither npm nor esbuild.
package bootjs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

//go:embed package.json package-lock.json
var manifest embed.FS

//go:embed src
var sources embed.FS

// Options configure Build.
type Options struct {
	// CacheDir holds the npm install and the bundle. Empty means
	// DefaultCacheDir().
	CacheDir string
	// Logger receives progress logs; nil discards them.
	Logger *slog.Logger
	// NPM is the npm executable; empty looks "npm" up in PATH.
	NPM string
}

// Bundle is a built bootstrap script.
type Bundle struct {
	// Source is the script. Evaluating it defines the runtime (see
	// src/main.js for the protocol with the Go side).
	Source string
	// Digest identifies Source: equal digests mean equal scripts. Code
	// caches and warm isolates are keyed by it.
	Digest string
}

// DefaultCacheDir is where Build caches when Options.CacheDir is empty:
// $SECEXEC_CACHE_DIR/js, or the user cache directory's secexec/js.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("SECEXEC_CACHE_DIR"); d != "" {
		return filepath.Join(d, "js"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("bootjs: no cache directory: %w", err)
	}
	return filepath.Join(d, "secexec", "js"), nil
}

// Build returns the bootstrap bundle, installing the polyfills and
// bundling on first use.
func Build(ctx context.Context, opts Options) (*Bundle, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := opts.CacheDir
	if dir == "" {
		var err error
		if dir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	digest, err := sourceDigest()
	if err != nil {
		return nil, err
	}
	bundlePath := filepath.Join(dir, "bundle-"+digest[:24]+".js")
	if b, err := os.ReadFile(bundlePath); err == nil {
		return &Bundle{Source: string(b), Digest: digest}, nil
	}
	mods, err := install(ctx, dir, opts.NPM, log)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	src, err := bundle(mods)
	if err != nil {
		return nil, err
	}
	log.Debug("bootjs: bundled", "bytes", len(src), "took", time.Since(start))
	if err := writeAtomic(bundlePath, []byte(src)); err != nil {
		log.Warn("bootjs: caching bundle", "err", err)
	}
	// Bundles of other sources are stale; remove them (best effort).
	if old, _ := filepath.Glob(filepath.Join(dir, "bundle-*.js")); len(old) > 1 {
		for _, f := range old {
			if f != bundlePath {
				_ = os.Remove(f)
			}
		}
	}
	return &Bundle{Source: src, Digest: digest}, nil
}

// bundleFormat changes whenever the bundling options do, so that cached
// bundles made with other options are not used.
const bundleFormat = "esbuild-iife-ascii-minified-1"

// lockDigest is the digest of the pinned package set.
func lockDigest() (string, error) {
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := manifest.ReadFile(name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sourceDigest covers everything the bundle depends on: the lock, our
// sources and the bundler's version.
func sourceDigest() (string, error) {
	ld, err := lockDigest()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(ld))
	h.Write([]byte(esbuildVersion()))
	h.Write([]byte(bundleFormat))
	var names []string
	err = fs.WalkDir(sources, "src", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := sources.ReadFile(n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func esbuildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/evanw/esbuild" {
				return d.Version
			}
		}
	}
	return "unknown"
}

// install runs npm ci into a directory named after the lock digest and
// returns its node_modules. Concurrent installers (several test binaries)
// each install into a private directory and rename it into place; the
// loser of the race discards its copy.
func install(ctx context.Context, cacheDir, npm string, log *slog.Logger) (string, error) {
	ld, err := lockDigest()
	if err != nil {
		return "", err
	}
	final := filepath.Join(cacheDir, "polyfills-"+ld[:24])
	mods := filepath.Join(final, "node_modules")
	if _, err := os.Stat(filepath.Join(final, ".complete")); err == nil {
		return mods, nil
	}
	if npm == "" {
		npm, err = exec.LookPath("npm")
		if err != nil {
			return "", errors.New("bootjs: npm is needed once to install the pinned polyfill packages, and was not found in PATH")
		}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("bootjs: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".polyfills-tmp-")
	if err != nil {
		return "", fmt.Errorf("bootjs: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, _ := manifest.ReadFile(name)
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", fmt.Errorf("bootjs: %w", err)
		}
	}
	start := time.Now()
	// --ignore-scripts: no package code runs on the host at install time.
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", tmp)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("bootjs: npm ci failed: %w: %s", err, strings.TrimSpace(out.String()))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", fmt.Errorf("bootjs: %w", err)
	}
	log.Info("bootjs: installed polyfill packages", "dir", final, "took", time.Since(start))
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, ".complete")); serr == nil {
			return mods, nil // another installer won the race
		}
		return "", fmt.Errorf("bootjs: %w", err)
	}
	return mods, nil
}

// bundle runs esbuild over our sources (written next to node_modules so
// that package resolution finds the polyfills).
func bundle(nodeModules string) (string, error) {
	root := filepath.Dir(nodeModules)
	srcDir := filepath.Join(root, "src-"+randomSuffix())
	defer os.RemoveAll(srcDir)
	err := fs.WalkDir(sources, "src", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(srcDir, strings.TrimPrefix(p, "src"))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := sources.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("bootjs: staging sources: %w", err)
	}
	processShim := filepath.Join(srcDir, "internal", "process_shim.js")
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{filepath.Join(srcDir, "main.js")},
		AbsWorkingDir: root,
		NodePaths:     []string{nodeModules},
		Bundle:        true,
		Write:         false,
		Format:        api.FormatIIFE,
		Platform:      api.PlatformBrowser,
		Target:        api.ESNext,
		// ASCII output (non-ASCII escaped) makes V8 store the source as
		// a one-byte string, and minifying halves what every isolate
		// has to take in; identifiers stay, for readable stack traces.
		Charset:          api.CharsetASCII,
		MinifyWhitespace: true,
		MinifySyntax:     true,
		KeepNames:        true,
		LegalComments:    api.LegalCommentsNone,
		LogLevel:         api.LogLevelSilent,
		Define:           map[string]string{"global": "globalThis"},
		Plugins: []api.Plugin{{
			Name: "secexec-process",
			Setup: func(b api.PluginBuild) {
				// Polyfills (readable-stream, util) require the browser
				// "process" package; give them the runtime's real process.
				b.OnResolve(api.OnResolveOptions{Filter: `^process(/|/browser(\.js)?)?$`}, func(api.OnResolveArgs) (api.OnResolveResult, error) {
					return api.OnResolveResult{Path: processShim}, nil
				})
			},
		}},
	})
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return "", fmt.Errorf("bootjs: esbuild: %s", strings.Join(msgs, "\n"))
	}
	if len(res.OutputFiles) != 1 {
		return "", fmt.Errorf("bootjs: esbuild produced %d files", len(res.OutputFiles))
	}
	return string(res.OutputFiles[0].Contents), nil
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp-" + randomSuffix()
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
