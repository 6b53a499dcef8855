// Package wasm provides secexec's own userland commands, compiled to WASI
// preview 1 modules (GOOS=wasip1 GOARCH=wasm): bash (also sh; a reactor
// module, see internal/wasm's prestart pool), grep (GNU grep 3.8
// compatible), jq (jq 1.7 command line over gojq), git (go-git), curl
// (also wget) and tools, one multi-call module for xxd, hexdump, file,
// tree, zip, unzip, bzip2, xz, patch, less, more and vi (and their
// bunzip2/bzcat/unxz/xzcat and vim/view/ex forms) that picks the tool from
// argv[0]. Commands maps every command name
// to its module.
//
// The modules are built from this module's Go source at set-up, never
// committed: Ensure compiles them once with the Go toolchain into
// CACHE/userland/DIGEST, where DIGEST is a hash of the userland source
// (and go.mod/go.sum), so a changed source gets a fresh build and an
// unchanged one is never rebuilt. A binary that carries no source path
// (built with -trimpath, as deploy/Dockerfile does) uses a directory of
// prebuilt modules named by $SECEXEC_USERLAND_DIR (Build writes one).
//
// All expect a WASI host that passes the working directory in the PWD
// environment variable (Go's wasip1 port resolves relative paths against
// it) and preopens the directories they may read.
package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/flock"
	"github.com/secexec/secexec/software"
	"github.com/secexec/secexec/userland/internal/wasmbuild"
)

// EnvDir names the environment variable that holds a directory of
// prebuilt modules (NAME.wasm for every name of Names). When it is set,
// that directory is used as it is and nothing is built.
const EnvDir = "SECEXEC_USERLAND_DIR"

// ErrNoSource is matched by the error of a binary that knows no userland
// source to build from (it was built with -trimpath, or its source was
// moved) and was given no prebuilt directory in $SECEXEC_USERLAND_DIR.
var ErrNoSource = errors.New("userland: no Go source to build the userland commands from")

// ErrNoToolchain is matched when the Go toolchain, needed once to build
// the userland commands, is not installed.
var ErrNoToolchain = errors.New("userland: the go command was not found")

// ErrNotBuilt is matched when a directory holds no build of the modules:
// set-up has not run for this source, or a prebuilt directory is
// incomplete.
var ErrNotBuilt = errors.New("userland: the commands are not built")

// Names lists the modules, sorted.
func Names() []string { return slices.Clone(wasmbuild.Commands) }

// Commands maps every command name the modules answer to onto the name of
// the module that implements it: each module under its own name and each
// alias of a multi-call module (xxd → tools). Register every entry to
// install the whole userland.
func Commands() map[string]string {
	m := make(map[string]string)
	for _, name := range wasmbuild.Commands {
		m[name] = name
		for _, alias := range wasmbuild.Aliases[name] {
			m[alias] = name
		}
	}
	return m
}

// Module reads the named module ("git", "grep", ...; a module name, not
// an alias) from dir, a directory that Ensure or Build filled.
func Module(dir, name string) ([]byte, error) {
	if !slices.Contains(wasmbuild.Commands, name) {
		return nil, fmt.Errorf("userland: no module %q: %w", name, fs.ErrNotExist)
	}
	b, err := os.ReadFile(filepath.Join(dir, name+".wasm"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s.wasm", ErrNotBuilt, dir, name)
	}
	return b, err
}

// Store is where Install adds the commands: a *software.Store.
type Store interface {
	Register(name string, wasm []byte) (software.Command, error)
	Alias(name, target string) (software.Command, error)
}

// Install registers every command of the modules in dir (see Dir), aliases
// included. The published userland's shell (brush), which secexec's sh
// and bash hide, stays reachable as "brush" when its package is installed.
func Install(store Store, dir string) error {
	if _, err := store.Alias("brush", "sh"); err != nil && !errors.Is(err, software.ErrNotFound) {
		return fmt.Errorf("userland: brush: %w", err)
	}
	markUsed(dir)
	modules := make(map[string][]byte, len(wasmbuild.Commands))
	for _, name := range wasmbuild.Commands {
		b, err := Module(dir, name)
		if err != nil {
			return err
		}
		modules[name] = b
	}
	cmds := Commands()
	for _, name := range slices.Sorted(maps.Keys(cmds)) {
		if _, err := store.Register(name, modules[cmds[name]]); err != nil {
			return fmt.Errorf("userland: registering %s: %w", name, err)
		}
	}
	return nil
}

// Dir returns the directory that holds (or will hold, once Ensure has
// run) the modules of this binary's userland source under the cache root
// cacheDir: $SECEXEC_USERLAND_DIR when set, else cacheDir/userland/DIGEST.
// It reads the source once per process to hash it.
func Dir(cacheDir string) (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		return filepath.Abs(dir)
	}
	src, err := source()
	if err != nil {
		return "", err
	}
	return filepath.Join(cacheDir, "userland", src.digest), nil
}

// Ensure makes sure the modules are built and returns their directory
// (see Dir). It builds them (once: a lock file makes concurrent callers
// wait for one build) when that directory is incomplete, writing a line
// to progress if it is not nil; a build appears by rename when complete,
// so an interrupted one leaves nothing half-written. Older builds beyond
// the newest few are removed.
func Ensure(ctx context.Context, cacheDir string, progress io.Writer) (string, error) {
	dir, err := Dir(cacheDir)
	if err != nil {
		return "", err
	}
	if complete(dir) {
		markUsed(dir)
		return dir, nil
	}
	if os.Getenv(EnvDir) != "" {
		return "", fmt.Errorf("%w: %s (from %s) lacks modules; fill it with `go run ./userland/internal/cmd/buildwasm -out DIR`", ErrNotBuilt, dir, EnvDir)
	}
	src, err := source()
	if err != nil {
		return "", err
	}
	root := filepath.Dir(dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	unlock, err := flock.Lock(ctx, filepath.Join(root, ".lock"))
	if err != nil {
		return "", fmt.Errorf("userland: waiting for another build: %w", err)
	}
	defer unlock()
	if complete(dir) { // built while we waited
		return dir, nil
	}
	if progress != nil {
		fmt.Fprintln(progress, "userland: building secexec's commands (bash, grep, jq, git, curl, tools) from source with the Go toolchain, once")
	}
	tmp, err := os.MkdirTemp(root, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := Build(ctx, src.root, tmp); err != nil {
		return "", err
	}
	_ = os.RemoveAll(dir) // an incomplete build of the same digest
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	prune(root, dir, keepBuilds, time.Now().Add(-keepUsed))
	return dir, nil
}

// A cache keeps the newest keepBuilds builds of different sources, and
// any used in the last keepUsed: a developer switching branches rebuilds
// nothing recent, several worktrees sharing a cache never remove each
// other's builds while they are in use, and the cache does not grow with
// every edit.
const (
	keepBuilds = 3
	keepUsed   = 24 * time.Hour
)

// markUsed records that dir's build is in use (its modification time),
// so that prune keeps it.
func markUsed(dir string) {
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
}

// Build compiles every module from the source tree rooted at moduleRoot
// (the directory of secexec's go.mod) into outDir/NAME.wasm. It needs the
// go command, and the Go module proxy for modules not in the module cache.
func Build(ctx context.Context, moduleRoot, outDir string) error {
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("%w on PATH: set-up builds secexec's userland commands from source once and needs Go "+
			"(or set %s to a directory of prebuilt modules)", ErrNoToolchain, EnvDir)
	}
	return wasmbuild.Build(ctx, filepath.Join(moduleRoot, "userland"), outDir)
}

// SourceRoot returns the directory of secexec's go.mod that this binary was
// built from, or an error matching ErrNoSource.
func SourceRoot() (string, error) {
	src, err := source()
	if err != nil {
		return "", err
	}
	return src.root, nil
}

// Check returns an error matching ErrNotBuilt unless dir holds every
// module.
func Check(dir string) error {
	if !complete(dir) {
		return fmt.Errorf("%w: %s lacks some of %s.wasm", ErrNotBuilt, dir, strings.Join(wasmbuild.Commands, ", "))
	}
	return nil
}

// complete reports whether dir holds every module.
func complete(dir string) bool {
	for _, name := range wasmbuild.Commands {
		if fi, err := os.Stat(filepath.Join(dir, name+".wasm")); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// prune removes the builds in root other than keep beyond the newest n
// that were last used before cutoff.
func prune(root, keep string, n int, cutoff time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type build struct {
		path string
		mod  time.Time
	}
	var builds []build
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || p == keep {
			continue
		}
		if fi, err := e.Info(); err == nil {
			builds = append(builds, build{p, fi.ModTime()})
		}
	}
	sort.Slice(builds, func(i, j int) bool { return builds[i].mod.After(builds[j].mod) })
	for i, b := range builds {
		if i >= n-1 && b.mod.Before(cutoff) {
			_ = os.RemoveAll(b.path)
		}
	}
}

type sourceInfo struct {
	root   string // the directory of go.mod
	digest string
}

var (
	sourceOnce sync.Once
	sourceVal  sourceInfo
	sourceErr  error
)

// source locates and hashes the userland source of this binary, once.
func source() (sourceInfo, error) {
	sourceOnce.Do(func() { sourceVal, sourceErr = locateSource() })
	return sourceVal, sourceErr
}

func locateSource() (sourceInfo, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return sourceInfo{}, fmt.Errorf("%w: this binary was built without source paths (-trimpath); set %s to a directory of prebuilt modules",
			ErrNoSource, EnvDir)
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	digest, err := Digest(root)
	if err != nil {
		return sourceInfo{}, fmt.Errorf("%w: %v; set %s to a directory of prebuilt modules", ErrNoSource, err, EnvDir)
	}
	return sourceInfo{root: root, digest: digest}, nil
}

// Digest hashes what a build of the modules depends on in the source tree
// rooted at moduleRoot: go.mod, go.sum and every file under userland/
// but tests, test data and this package (which builds nothing). The toolchain
// version is left out on purpose: the source defines the commands, and a
// Go upgrade must not cost every user a rebuild.
func Digest(moduleRoot string) (string, error) {
	h := sha256.New()
	add := func(rel string) error {
		b, err := os.ReadFile(filepath.Join(moduleRoot, rel))
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := add(f); err != nil {
			return "", err
		}
	}
	userland := filepath.Join(moduleRoot, "userland")
	self := filepath.Join(userland, "wasm")
	var files []string
	err := filepath.WalkDir(userland, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == self || d.Name() == "testdata" || (p != userland && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") && !strings.HasSuffix(p, ".wasm") {
			rel, _ := filepath.Rel(moduleRoot, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no Go files under %s", userland)
	}
	sort.Strings(files)
	for _, f := range files {
		if err := add(f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}
