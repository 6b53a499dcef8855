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
// digest of the lockfile, our sources and the esbuild version, and
// checked against a checksum stored with it, so a warm host pays neither
// npm nor esbuild. Only the set-up step in the client runs npm; engine
// processes build with Options.Offline.
package bootjs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/secexec/secexec/internal/flock"
	"github.com/secexec/secexec/internal/textfmt"
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
	// Offline never runs npm: a missing polyfill install is reported as
	// ErrNotInstalled. Engine processes, which may not execute programs,
	// build offline; the set-up step (internal/setup) installs first.
	Offline bool
	// Progress, if set, receives a line for each step of a first-time
	// install (what is fetched, how much); nil is quiet.
	Progress io.Writer
}

// Bundle is a built bootstrap script.
type Bundle struct {
	// Source is the script. Evaluating it defines the runtime (see
	// src/main.js for the protocol with the Go side).
	Source string
	// Digest identifies Source: equal digests mean equal scripts. Code
	// caches and warm isolates are keyed by it.
	Digest string
	// Lazy holds the large npm packages the runtime loads only when a
	// guest first uses them (undici for fetch, the WHATWG streams), by
	// package name: CommonJS sources for the runtime's module wrapper,
	// whose require resolves "node:NAME" to the runtime's builtins. Kept
	// out of Source, every isolate neither parses nor holds them.
	Lazy map[string]string
	// Assets holds binary files the lazy chunks read through the runtime
	// instead of decoding them from source text in every process, by
	// name (see LazyAssets).
	Assets map[string][]byte
}

// LazyPackages are the packages built as lazy chunks (Bundle.Lazy): npm
// packages, and the runtime's own sources named in ownLazy.
var LazyPackages = []string{"undici", "web-streams-polyfill", "pako", "test_runner", "llhttp"}

// LazyAssets are the binary files kept beside the lazy chunks (Bundle.Assets):
// llhttp's WebAssembly, which undici ships as base64 text — fetch's (from
// undici) and the http module's ("http-", from the undici-llhttp alias:
// the llhttp host node runs). Decoded once when the bundle is built, a
// process gets the bytes from Go instead of decoding 64 KB of base64 in
// JavaScript on its first fetch or HTTP parser.
var LazyAssets = []string{"llhttp.wasm", "llhttp_simd.wasm", "http-llhttp.wasm", "http-llhttp_simd.wasm"}

// ownLazy maps the lazy chunks built from src/ to their entry file: the
// test runner (node:test, node --test) is large and used by few
// processes; llhttp's WebAssembly (the http module's parser) is loaded
// by the first HTTP parser. Such a chunk reaches the rest of the runtime only through
// "node:" requires, which the chunk's require resolves to the builtins.
var ownLazy = map[string]string{"test_runner": "test_runner/index.js", "llhttp": "internal/http/llhttp_wasm.js"}

// Errors of Build; test with errors.Is.
var (
	// ErrNotInstalled: an offline Build found no polyfill install in the
	// cache. It also matches fs.ErrNotExist.
	ErrNotInstalled = fmt.Errorf("bootjs: the node polyfill packages are not installed: %w", fs.ErrNotExist)
	// ErrInstall: npm could not install the pinned polyfill packages
	// (see *InstallError).
	ErrInstall = errors.New("bootjs: installing the node polyfill packages failed")
)

// InstallError reports a failed `npm ci` of the pinned polyfills.
type InstallError struct {
	Err    error  // from os/exec: exec.ErrNotFound when npm is missing
	Output string // the last lines npm printed, joined by "; "
}

// Error includes npm's last lines.
func (e *InstallError) Error() string {
	s := "bootjs: npm ci of the pinned polyfill packages: " + e.Err.Error()
	if e.Output != "" {
		s += ": " + e.Output
	}
	return s
}

// Unwrap matches ErrInstall and the cause.
func (e *InstallError) Unwrap() []error { return []error{ErrInstall, e.Err} }

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

// Build returns the bootstrap bundle, installing the polyfills (unless
// Offline) and bundling on first use. A cached bundle is checked against
// the checksum stored with it; a damaged one is rebuilt.
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
	b, err := readBundle(bundlePath)
	if err == nil {
		markUsed(bundlePath)
		b.Digest = digest
		return b, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		log.Warn("bootjs: cached bundle is damaged, rebuilding", "err", err)
		_ = os.Remove(bundlePath)
	}
	mods, fresh, err := install(ctx, dir, opts, log)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	b, err = bundle(mods)
	if err != nil && !fresh && !opts.Offline {
		// A damaged install (files deleted or truncated after it
		// completed) fails to bundle: install it again, once.
		log.Warn("bootjs: bundling from the cached polyfills failed, installing them again", "err", err)
		if err := os.RemoveAll(filepath.Dir(mods)); err != nil {
			return nil, fmt.Errorf("bootjs: %w", err)
		}
		if mods, _, err = install(ctx, dir, opts, log); err != nil {
			return nil, err
		}
		b, err = bundle(mods)
	}
	if err != nil {
		return nil, err
	}
	b.Digest = digest
	log.Debug("bootjs: bundled", "bytes", len(b.Source), "took", time.Since(start))
	if opts.Progress != nil {
		lazy := 0
		for _, l := range b.Lazy {
			lazy += len(l)
		}
		fmt.Fprintf(opts.Progress, "node bootstrap: bundled %s (and %s loaded on first use)\n",
			textfmt.Bytes(int64(len(b.Source))), textfmt.Bytes(int64(lazy)))
	}
	if err := writeBundle(bundlePath, b); err != nil {
		log.Warn("bootjs: caching bundle", "err", err)
	}
	removeUnused(filepath.Join(dir, "bundle-*.js"), bundlePath)
	return b, nil
}

// bundleHeader starts a cached bundle file; the sha256 of everything
// after the header line follows it, so a truncated or altered file is
// caught before V8 sees it, then the sizes of the lazy chunks and the
// assets, which come after the main script in the order of bundleParts.
const bundleHeader = "// secexec-bootstrap sha256="

func readBundle(path string) (*Bundle, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	line, body, ok := strings.Cut(string(data), "\n")
	rest, okHeader := strings.CutPrefix(line, bundleHeader)
	fields := strings.Fields(rest)
	if !ok || !okHeader || len(fields) != 1+len(LazyPackages)+len(LazyAssets) {
		return nil, fmt.Errorf("bootjs: %s: no valid header", filepath.Base(path))
	}
	got := sha256.Sum256([]byte(body))
	if hex.EncodeToString(got[:]) != fields[0] {
		return nil, fmt.Errorf("bootjs: %s: checksum mismatch", filepath.Base(path))
	}
	b := &Bundle{Lazy: make(map[string]string, len(LazyPackages)), Assets: make(map[string][]byte, len(LazyAssets))}
	parts := bundleParts()
	end := len(body)
	for i := len(parts) - 1; i >= 0; i-- {
		n, err := strconv.Atoi(fields[1+i])
		if err != nil || n < 0 || n > end {
			return nil, fmt.Errorf("bootjs: %s: bad chunk size", filepath.Base(path))
		}
		if i < len(LazyPackages) {
			b.Lazy[parts[i]] = body[end-n : end]
		} else {
			b.Assets[parts[i]] = []byte(body[end-n : end])
		}
		end -= n
	}
	b.Source = body[:end]
	return b, nil
}

// bundleParts names what follows the main script in a cached bundle: the
// lazy chunks, then the assets.
func bundleParts() []string {
	return append(slices.Clone(LazyPackages), LazyAssets...)
}

func writeBundle(path string, b *Bundle) error {
	var body strings.Builder
	body.WriteString(b.Source)
	parts := bundleParts()
	sizes := make([]string, len(parts))
	for i, name := range parts {
		part := b.Lazy[name]
		if i >= len(LazyPackages) {
			part = string(b.Assets[name])
		}
		body.WriteString(part)
		sizes[i] = strconv.Itoa(len(part))
	}
	sum := sha256.Sum256([]byte(body.String()))
	return writeAtomic(path, []byte(bundleHeader+hex.EncodeToString(sum[:])+" "+strings.Join(sizes, " ")+"\n"+body.String()))
}

// bundleFormat changes whenever the bundling options do, so that cached
// bundles made with other options are not used.
const bundleFormat = "esbuild-iife-ascii-minified-lazy-6"

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

// install returns the node_modules of the pinned polyfills, running npm
// ci into a directory named after the lock digest when there is none
// (fresh reports that it did). Installers of several processes (test
// binaries, CLIs) take a lock; each installs into a private directory
// renamed into place when complete, so a killed install leaves nothing
// that looks installed, and the next installer removes its remains.
func install(ctx context.Context, cacheDir string, opts Options, log *slog.Logger) (mods string, fresh bool, err error) {
	ld, err := lockDigest()
	if err != nil {
		return "", false, err
	}
	final := filepath.Join(cacheDir, "polyfills-"+ld[:24])
	mods = filepath.Join(final, "node_modules")
	complete := func() bool {
		_, err := os.Stat(filepath.Join(final, ".complete"))
		return err == nil
	}
	if complete() {
		markUsed(final)
		return mods, false, nil
	}
	if opts.Offline {
		return "", false, ErrNotInstalled
	}
	npm := opts.NPM
	if npm == "" {
		npm = "npm"
	}
	if npm, err = exec.LookPath(npm); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = &exec.Error{Name: npm, Err: exec.ErrNotFound}
		}
		return "", false, &InstallError{Err: err}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", false, fmt.Errorf("bootjs: %w", err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(cacheDir, "polyfills.lock"))
	if err != nil {
		return "", false, fmt.Errorf("bootjs: lock: %w", err)
	}
	defer unlock()
	if complete() {
		return mods, false, nil // another process installed it meanwhile
	}
	// Under the lock no other install is running: what temp directories
	// there are belong to installs that died.
	if old, _ := filepath.Glob(filepath.Join(cacheDir, ".polyfills-tmp-*")); len(old) > 0 {
		for _, d := range old {
			_ = os.RemoveAll(d)
		}
	}
	_ = os.RemoveAll(final) // an incomplete copy, if any
	tmp, err := os.MkdirTemp(cacheDir, ".polyfills-tmp-")
	if err != nil {
		return "", false, fmt.Errorf("bootjs: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, _ := manifest.ReadFile(name)
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", false, fmt.Errorf("bootjs: %w", err)
		}
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "node polyfills: installing %d pinned packages with npm ci\n", pinnedCount())
	}
	start := time.Now()
	// --ignore-scripts: no package code runs on the host at install time.
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", tmp)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return "", false, &InstallError{Err: err, Output: textfmt.LastLines(out.String(), 5)}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", false, fmt.Errorf("bootjs: %w", err)
	}
	n, size := treeSize(filepath.Join(tmp, "node_modules"))
	log.Info("bootjs: installed polyfill packages", "dir", final, "took", time.Since(start))
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "node polyfills: installed %d files, %s, in %.1fs\n", n, textfmt.Bytes(size), time.Since(start).Seconds())
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", false, fmt.Errorf("bootjs: %w", err)
	}
	removeUnused(filepath.Join(cacheDir, "polyfills-*"), final)
	return mods, true, nil
}

// pinnedCount is the number of direct dependencies package.json pins.
func pinnedCount() int {
	b, _ := manifest.ReadFile("package.json")
	var m struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	_ = json.Unmarshal(b, &m)
	return len(m.Dependencies)
}

// treeSize counts the regular files under dir and their bytes.
func treeSize(dir string) (files int, bytes int64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				files++
				bytes += fi.Size()
			}
		}
		return nil
	})
	return files, bytes
}

// bundle runs esbuild over our sources (written next to node_modules so
// that package resolution finds the polyfills).
func bundle(nodeModules string) (*Bundle, error) {
	// Each bundler stages in a private directory, but always as "src" in
	// it: module paths end up in the bundle, which must not differ from
	// one build to the next (code caches are keyed by the digest).
	stage, err := os.MkdirTemp(filepath.Dir(nodeModules), ".stage-")
	if err != nil {
		return nil, fmt.Errorf("bootjs: %w", err)
	}
	defer os.RemoveAll(stage)
	srcDir := filepath.Join(stage, "src")
	err = fs.WalkDir(sources, "src", func(p string, d fs.DirEntry, err error) error {
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
		return nil, fmt.Errorf("bootjs: staging sources: %w", err)
	}
	processShim := filepath.Join(srcDir, "internal", "process_shim.js")
	stringDecoder := filepath.Join(srcDir, "string_decoder.js")
	opts := buildOptions(stage, nodeModules)
	opts.EntryPoints = []string{filepath.Join(srcDir, "main.js")}
	opts.Format, opts.Platform = api.FormatIIFE, api.PlatformBrowser
	opts.Plugins = []api.Plugin{{
		Name: "secexec-process",
		Setup: func(b api.PluginBuild) {
			// Polyfills (readable-stream, util) require the browser
			// "process" package; give them the runtime's real process.
			b.OnResolve(api.OnResolveOptions{Filter: `^process(/|/browser(\.js)?)?$`}, func(api.OnResolveArgs) (api.OnResolveResult, error) {
				return api.OnResolveResult{Path: processShim}, nil
			})
			// They get the runtime's StringDecoder too (readable-stream's
			// setEncoding), not the old npm copy of Node's.
			b.OnResolve(api.OnResolveOptions{Filter: `^string_decoder/?$`}, func(api.OnResolveArgs) (api.OnResolveResult, error) {
				return api.OnResolveResult{Path: stringDecoder}, nil
			})
			// The assert polyfill (Node's assert of an earlier release)
			// inspects values and makes its argument errors with the
			// runtime's util and errors, so its messages are Node 22's.
			b.OnResolve(api.OnResolveOptions{Filter: `^(util/?|\./internal/errors|\.\./errors)$`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				if !strings.Contains(filepath.ToSlash(a.Importer), "/node_modules/assert/build/") {
					return api.OnResolveResult{}, nil
				}
				if strings.HasPrefix(a.Path, "util") {
					return api.OnResolveResult{Path: filepath.Join(srcDir, "util.js")}, nil
				}
				return api.OnResolveResult{Path: filepath.Join(srcDir, "internal", "assert_errors.js")}, nil
			})
			// npm packages bundled with the runtime require builtins
			// as "node:NAME": those are the runtime's own, loaded
			// through its registry when first required.
			b.OnResolve(api.OnResolveOptions{Filter: `^node:`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				return api.OnResolveResult{Path: strings.TrimPrefix(a.Path, "node:"), Namespace: "secexec-builtin"}, nil
			})
			b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: "secexec-builtin"}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
				name, _ := json.Marshal(a.Path)
				src := "module.exports = require('./builtins.js').load(" + string(name) + ");"
				return api.OnLoadResult{Contents: &src, ResolveDir: filepath.Join(srcDir, "internal"), Loader: api.LoaderJS}, nil
			})
		},
	}}
	main, err := output(api.Build(opts))
	if err != nil {
		return nil, err
	}
	b := &Bundle{Source: main, Lazy: make(map[string]string, len(LazyPackages)), Assets: make(map[string][]byte, len(LazyAssets))}
	for _, pkg := range LazyPackages {
		if entry, own := ownLazy[pkg]; own {
			b.Lazy[pkg], err = bundleOwnLazy(stage, nodeModules, filepath.Join(srcDir, entry), b.Assets)
		} else {
			b.Lazy[pkg], err = bundleLazy(stage, nodeModules, pkg, b.Assets)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, name := range LazyAssets {
		if _, ok := b.Assets[name]; !ok {
			return nil, fmt.Errorf("bootjs: no chunk provided the asset %s", name)
		}
	}
	return b, nil
}

// lazyEntry names the module a lazy npm chunk is built from when it is
// not the package's main one. undici's is its fetch entry, the one Node
// builds its own copy from: fetch, its classes, WebSocket and EventSource,
// without the mock agents, cache, cookies and interceptors of the full
// package that every first fetch would otherwise evaluate.
var lazyEntry = map[string]string{"undici": "undici/index-fetch.js"}

// bundleLazy builds one lazy chunk: the npm package pkg as CommonJS, its
// "node:" requires left to the runtime's require. Modules that only
// carry an asset as base64 text (assetModules) are replaced by a require
// of the asset, whose bytes go to assets.
func bundleLazy(stage, nodeModules, pkg string, assets map[string][]byte) (string, error) {
	module := pkg
	if e, ok := lazyEntry[pkg]; ok {
		module = e
	}
	entry, _ := json.Marshal(module)
	opts := buildOptions(stage, nodeModules)
	opts.Stdin = &api.StdinOptions{Contents: "module.exports = require(" + string(entry) + ");",
		ResolveDir: stage, Sourcefile: "lazy/" + pkg + ".js", Loader: api.LoaderJS}
	opts.Format, opts.Platform = api.FormatCommonJS, api.PlatformNeutral
	opts.MainFields = []string{"main", "module"}
	opts.External = []string{"node:*", assetPrefix + "*"}
	opts.Plugins = []api.Plugin{assetPlugin(assets)}
	return output(api.Build(opts))
}

// assetPlugin replaces the modules that only carry an asset as base64
// text (assetModules) by a require of the asset, whose bytes go to
// assets.
func assetPlugin(assets map[string][]byte) api.Plugin {
	return api.Plugin{
		Name: "secexec-assets",
		Setup: func(b api.PluginBuild) {
			b.OnLoad(api.OnLoadOptions{Filter: assetModuleFilter}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
				name, ok := assetName(a.Path)
				if !ok {
					return api.OnLoadResult{}, nil
				}
				data, err := decodeAssetModule(a.Path)
				if err != nil {
					return api.OnLoadResult{}, err
				}
				assets[name] = data
				id, _ := json.Marshal(assetPrefix + name)
				src := "module.exports = require(" + string(id) + ");"
				return api.OnLoadResult{Contents: &src, Loader: api.LoaderJS}, nil
			})
		},
	}
}

// assetName is the asset an asset module holds. The http module's llhttp
// (the undici-llhttp alias) is another build than fetch's (undici's
// own), under the same file names: its assets are prefixed "http-".
func assetName(path string) (string, bool) {
	name, ok := assetModules[filepath.Base(path)]
	if ok && strings.Contains(filepath.ToSlash(path), "/undici-llhttp/") {
		name = "http-" + name
	}
	return name, ok
}

// assetPrefix starts the require id by which a lazy chunk reads an asset
// (Bundle.Assets); the runtime's chunk loader (src/internal/lazy.js)
// resolves it.
const assetPrefix = "secexec:asset/"

// assetModules maps the files of npm packages that hold an asset as
// base64 text to the asset's name; assetModuleFilter matches them for
// esbuild. undici 6's llhttp modules are Buffer.from(BASE64, 'base64'),
// undici 7's const wasmBase64 = BASE64 and Buffer.from(wasmBase64, 'base64').
var (
	assetModules      = map[string]string{"llhttp-wasm.js": "llhttp.wasm", "llhttp_simd-wasm.js": "llhttp_simd.wasm"}
	assetModuleFilter = `[/\\]llhttp[/\\]llhttp(_simd)?-wasm\.js$`
	base64Module      = regexp.MustCompile(`\bBuffer\.from\(\s*'([A-Za-z0-9+/=]+)'\s*,\s*'base64'\s*\)`)
	base64Const       = regexp.MustCompile(`\bconst wasmBase64 = '([A-Za-z0-9+/=]+)'`)
	base64Use         = regexp.MustCompile(`\bBuffer\.from\(\s*wasmBase64\s*,\s*'base64'\s*\)`)
)

// decodeAssetModule returns the bytes of the one base64 literal an asset
// module holds. A module of another shape (a new undici release) fails
// the build rather than shipping undecoded text.
func decodeAssetModule(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bootjs: %w", err)
	}
	m := base64Module.FindAllSubmatch(src, -1)
	if len(m) == 0 && base64Use.Match(src) {
		// undici 7: the literal in a const, decoded on first use.
		m = base64Const.FindAllSubmatch(src, -1)
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("bootjs: %s: expected one base64 Buffer literal, found %d", filepath.Base(path), len(m))
	}
	data, err := base64.StdEncoding.DecodeString(string(m[0][1]))
	if err != nil {
		return nil, fmt.Errorf("bootjs: %s: %w", filepath.Base(path), err)
	}
	return data, nil
}

// bundleOwnLazy builds a lazy chunk from the runtime's own sources, from
// entry; its "node:" requires are left to the runtime's require.
func bundleOwnLazy(stage, nodeModules, entry string, assets map[string][]byte) (string, error) {
	opts := buildOptions(stage, nodeModules)
	opts.EntryPoints = []string{entry}
	opts.Format, opts.Platform = api.FormatCommonJS, api.PlatformNeutral
	opts.External = []string{"node:*", assetPrefix + "*"}
	opts.Plugins = []api.Plugin{assetPlugin(assets)}
	return output(api.Build(opts))
}

// buildOptions are the esbuild options every bundle shares.
func buildOptions(stage, nodeModules string) api.BuildOptions {
	return api.BuildOptions{
		AbsWorkingDir: stage,
		NodePaths:     []string{nodeModules},
		Bundle:        true,
		Write:         false,
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
		Define:           bundleDefines,
	}
}

// bundleDefines are the compile-time constants of every bundle.
// __UNDICI_IS_NODE__: undici behaves as the copy inside Node does
// (fetch's default user-agent is "node").
var bundleDefines = map[string]string{"global": "globalThis", "__UNDICI_IS_NODE__": "true"}

// output returns the one output file of an esbuild run, or its errors.
func output(res api.BuildResult) (string, error) {
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

// unusedAfter is how long a bundle or polyfill install of another source
// must have gone unused before an install removes it. Two secexec builds
// (an upgrade in progress, two projects pinning different versions) share
// one cache directory; removing the other's files at once made its next
// engine start fail offline.
const unusedAfter = 7 * 24 * time.Hour

// markUsed records that path served a process start (best effort): its
// modification time is what removeUnused ages.
func markUsed(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// removeUnused removes the entries matching pattern, other than keep,
// that nobody has used for unusedAfter (best effort).
func removeUnused(pattern, keep string) {
	old, _ := filepath.Glob(pattern)
	for _, p := range old {
		if p == keep {
			continue
		}
		if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > unusedAfter {
			_ = os.RemoveAll(p)
		}
	}
}
