// Package setup prepares a host to run VMs: it is the one place where
// secexec touches the host beyond reading its caches. It fetches and
// verifies the userland packages and the node polyfills with npm, bundles
// the node bootstrap, compiles newly fetched large modules (CPython) and
// python3's bytecode (pysupport.EnsureBytecode), and creates the cache
// directories.
//
// It runs in the client (the CLI or the program using the SDK) before an
// engine process starts, because an engine hardens itself (seccomp denies
// execve) and so can never run npm; engines only read what set-up left in
// the caches, at the directories the client passes them (Dirs.Env). A
// failed set-up is one *Error that says what is missing and how to fix it,
// and leaves nothing half-written: every cache entry appears by rename
// when complete.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/secexec/secexec/internal/js/bootjs"
	"github.com/secexec/secexec/internal/pysupport"
	"github.com/secexec/secexec/internal/textfmt"
	"github.com/secexec/secexec/internal/tzdata"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/software"
	userwasm "github.com/secexec/secexec/userland/wasm"
)

// EnvCacheDir names the environment variable holding secexec's cache
// root (compiled WebAssembly, the node bootstrap, code caches).
const EnvCacheDir = "SECEXEC_CACHE_DIR"

// Dirs are the host directories a client and its engines share.
type Dirs struct {
	// Software is the userland package store (software.Options.Dir).
	Software string
	// Cache is the cache root: Cache/wasm holds wazero's compilation
	// cache, Cache/js the polyfills, the bootstrap bundle and code caches,
	// Cache/userland the builds of secexec's own commands.
	Cache string
	// Userland is the directory of secexec's own commands (bash, grep, jq,
	// git, curl, tools) as WASI modules: userland/wasm.Dir of Cache, or
	// $SECEXEC_USERLAND_DIR. Empty means that directory; DefaultDirs fills
	// it in when this binary knows its userland source.
	Userland string
}

// DefaultDirs returns the directories from $SECEXEC_SOFTWARE_DIR and
// $SECEXEC_CACHE_DIR, else the user cache directory's secexec/software
// and secexec; both absolute.
func DefaultDirs() (Dirs, error) {
	var d Dirs
	var err error
	if d.Software, err = software.DefaultDir(); err != nil {
		return d, &Error{Step: stepDirs, Err: err}
	}
	if d.Cache = os.Getenv(EnvCacheDir); d.Cache == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return d, &Error{Step: stepDirs, Err: fmt.Errorf("no user cache directory: %w", err)}
		}
		d.Cache = filepath.Join(c, "secexec")
	}
	if d.Software, err = filepath.Abs(d.Software); err == nil {
		d.Cache, err = filepath.Abs(d.Cache)
	}
	if err != nil {
		return d, &Error{Step: stepDirs, Err: err}
	}
	// A binary without its source learns that from Ensure, which says
	// what to do about it; the directories themselves are still known.
	d.Userland, _ = userwasm.Dir(d.Cache)
	return d, nil
}

// UserlandDir returns Userland, or the userland directory of Cache when
// Userland is empty.
func (d Dirs) UserlandDir() (string, error) {
	if d.Userland != "" {
		return d.Userland, nil
	}
	return userwasm.Dir(d.Cache)
}

// WASM is the directory of wazero's compilation cache.
func (d Dirs) WASM() string { return filepath.Join(d.Cache, "wasm") }

// JS is the directory of the node polyfills, bootstrap and code caches.
func (d Dirs) JS() string { return filepath.Join(d.Cache, "js") }

// Python is the directory of python3's bytecode sets
// (pysupport.EnsureBytecode).
func (d Dirs) Python() string { return filepath.Join(d.Cache, "python") }

// Env returns the environment variables that give an engine process
// these directories, so that it never falls back to a default of its own.
func (d Dirs) Env() []string {
	env := []string{software.EnvDir + "=" + d.Software, EnvCacheDir + "=" + d.Cache}
	if dir, err := d.UserlandDir(); err == nil {
		env = append(env, userwasm.EnvDir+"="+dir)
	}
	return env
}

// Options configure Ensure.
type Options struct {
	// Dirs are the directories to fill.
	Dirs Dirs
	// Progress, if set, receives a line for each step of work done (a
	// package fetched, with its size); a set-up that finds everything in
	// place writes nothing.
	Progress io.Writer
	// NPM is the npm executable; empty means "npm" on PATH. It runs only
	// when something is missing.
	NPM string
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Ensure makes sure everything an engine needs is in the caches: the
// cache directories, the pinned userland packages, secexec's own commands
// (built from source with the Go toolchain), the node bootstrap and the
// node tools (npm and typescript, with the host's npm registry), and
// python3's bytecode (built by python3 itself, in a VM). It does
// no work, and needs neither npm, Go nor the network, when all of it is
// there already.
func Ensure(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, dir := range []string{opts.Dirs.Software, opts.Dirs.WASM(), opts.Dirs.JS()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &Error{Step: stepDirs, Err: err}
		}
	}
	fetched, err := ensureUserland(ctx, opts, log)
	if err != nil {
		return &Error{Step: stepUserland, Err: err}
	}
	// Modules just fetched compile, secexec's commands build, and the
	// node tools are fetched, while the node bootstrap is built.
	compiled := make(chan error, 1)
	go func() { compiled <- precompile(ctx, opts, log, fetched) }()
	tools := make(chan error, 1)
	go func() { tools <- ensureTools(ctx, opts, log) }()
	own := make(chan error, 1)
	go func() {
		err := ensureOwnCommands(ctx, opts)
		if err == nil {
			// The zones come with the toolchain the commands were built
			// with; a toolchain without them leaves VMs without zones.
			if terr := tzdata.Ensure(ctx, opts.Dirs.Cache); terr != nil && !errors.Is(terr, tzdata.ErrNoData) {
				err = terr
			}
		}
		own <- err
	}()
	_, err = bootjs.Build(ctx, bootjs.Options{CacheDir: opts.Dirs.JS(), NPM: opts.NPM,
		Progress: opts.Progress, Logger: log})
	cerr, terr, oerr := <-compiled, <-tools, <-own
	if cerr == nil {
		if err := ensureBytecode(ctx, opts, log); err != nil {
			return &Error{Step: stepBytecode, Err: err}
		}
	}
	if oerr != nil {
		return &Error{Step: stepOwn, Err: oerr}
	}
	if err != nil {
		return &Error{Step: stepNode, Err: err}
	}
	if cerr != nil {
		return &Error{Step: stepCompile, Err: cerr}
	}
	if terr != nil {
		return &Error{Step: stepTools, Err: terr}
	}
	return nil
}

// precompile compiles the commands of module packages fetched by this
// set-up into the WebAssembly cache on disk: CPython's 26 MB module takes
// tens of seconds to compile, which its first run would otherwise pay.
func precompile(ctx context.Context, opts Options, log *slog.Logger, fetched []software.ModulePin) error {
	if len(fetched) == 0 {
		return nil
	}
	st, err := software.Open(ctx, software.Options{Dir: opts.Dirs.Software, Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: opts.Dirs.WASM(), Logger: log})
	if err != nil {
		return err
	}
	defer eng.Close(ctx)
	for _, p := range fetched {
		c, ok := st.Command(p.Commands[0])
		if !ok {
			continue
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "userland: compiling %s (%s, once)\n", p.Commands[0], textfmt.Bytes(c.Size))
		}
		if err := eng.Precompile(ctx, c); err != nil {
			return fmt.Errorf("%s: %w", p.Spec(), err)
		}
	}
	return nil
}

// ensureBytecode builds python3's bytecode (the standard library's out of
// its zip, the support files' compiled) unless the cache holds it for this
// module and these sources: python3 runs it on every start.
func ensureBytecode(ctx context.Context, opts Options, log *slog.Logger) error {
	st, err := software.Open(ctx, software.Options{Dir: opts.Dirs.Software, Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	py, ok := st.Command(software.PythonPin.Commands[0])
	if !ok {
		return nil
	}
	// Checked, not only present: a damaged set is built again.
	if err := pysupport.CheckBytecode(opts.Dirs.Python(), py.Fingerprint); err == nil {
		return nil
	}
	if opts.Progress != nil {
		fmt.Fprintln(opts.Progress, "userland: compiling python3's bytecode (once)")
	}
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: opts.Dirs.WASM(), Logger: log})
	if err != nil {
		return err
	}
	defer eng.Close(ctx)
	_, _, err = pysupport.EnsureBytecode(ctx, pysupport.BytecodeOptions{Dir: opts.Dirs.Python(), Engine: eng, Store: st})
	return err
}

// ensureOwnCommands builds secexec's own commands into the userland
// directory unless they are there.
func ensureOwnCommands(ctx context.Context, opts Options) error {
	want, err := userwasm.Dir(opts.Dirs.Cache)
	if opts.Dirs.Userland != "" && (err != nil || want != opts.Dirs.Userland) {
		// A directory of the caller's: used as it is, never built into.
		return userwasm.Check(opts.Dirs.Userland)
	}
	_, err = userwasm.Ensure(ctx, opts.Dirs.Cache, opts.Progress)
	return err
}

// ensureUserland installs the pinned packages and returns the module
// packages it fetched.
func ensureUserland(ctx context.Context, opts Options, log *slog.Logger) ([]software.ModulePin, error) {
	so := software.Options{Dir: opts.Dirs.Software, NPM: opts.NPM, Logger: log}
	if opts.Progress != nil {
		so.Progress = progress(opts.Progress)
	}
	st, err := software.Open(ctx, so)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	had := map[string]bool{}
	for _, p := range st.InstalledModules() {
		had[p.Name()] = true
	}
	missing := len(st.Pins()) - len(st.Installed()) + len(st.ModulePins()) - len(had)
	if missing > 0 && opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "userland: fetching %d pinned packages with npm pack\n", missing)
	}
	if err := st.Ensure(ctx); err != nil {
		return nil, err
	}
	var fetched []software.ModulePin
	for _, p := range st.InstalledModules() {
		if !had[p.Name()] {
			fetched = append(fetched, p)
		}
	}
	return fetched, nil
}

// progress prints one line per installed package, with its size.
func progress(w io.Writer) func(software.Event) {
	fetched := map[string]int64{}
	return func(e software.Event) {
		switch {
		case e.Phase == software.PhaseFetching && e.Total > 0:
			fetched[e.Package] = e.Total
		case e.Phase == software.PhaseDone:
			fmt.Fprintf(w, "userland: %s %s installed (%s)\n", e.Package, e.Version, textfmt.Bytes(fetched[e.Package]))
		}
	}
}

// The steps of set-up, as Error.Step names them.
const (
	stepDirs     = "cache directories"
	stepUserland = "userland packages"
	stepNode     = "node polyfills"
	stepCompile  = "WebAssembly compilation"
	stepOwn      = "userland commands (built from source)"
	stepTools    = "node tools (npm, typescript)"
	stepBytecode = "python bytecode"
)

// ErrNPMNotFound is matched by an *Error whose cause is that npm, needed
// once to fetch the pinned packages, is not installed.
var ErrNPMNotFound = errors.New("setup: npm not found")

// Error is a failed set-up. Its message is one line that says what failed,
// why, and what to do about it. It wraps the cause (software.ErrFetch,
// software.ErrIntegrity, bootjs.ErrInstall, exec.ErrNotFound, a
// *fs.PathError, ...), and matches ErrNPMNotFound when npm is missing.
type Error struct {
	// Step is what failed: "cache directories", "userland packages",
	// "node polyfills" or "node tools (npm, typescript)".
	Step string
	// Err is the cause.
	Err error
}

// Error says what failed and how to fix it, on one line.
func (e *Error) Error() string {
	cause := oneLine(e.Err.Error())
	switch {
	case errors.Is(e.Err, exec.ErrNotFound):
		return "set-up needs npm once, to fetch the pinned userland and node polyfill packages, and npm was not found on PATH: " +
			"install npm (Debian or Ubuntu: apt-get install npm) and run again"
	case errors.Is(e.Err, software.ErrIntegrity):
		return "set-up refused a package: " + cause + ": nothing from it was installed; " +
			"check which registry npm uses (npm config get registry) and run again"
	case errors.Is(e.Err, software.ErrFetch), errors.Is(e.Err, bootjs.ErrInstall):
		return "set-up of the " + e.Step + " failed: " + cause + ": " +
			"check the network and the registry npm uses (npm config get registry), then run again"
	case errors.Is(e.Err, userwasm.ErrNoToolchain):
		return "set-up builds secexec's own commands (bash, grep, jq, git, curl) from source once and needs Go, " +
			"which was not found on PATH: install Go (Debian or Ubuntu: apt-get install golang-go) " +
			"or set " + userwasm.EnvDir + " to a directory of prebuilt modules"
	case errors.Is(e.Err, userwasm.ErrNoSource), errors.Is(e.Err, userwasm.ErrNotBuilt):
		return "set-up of the " + e.Step + " failed: " + cause
	case errors.Is(e.Err, os.ErrPermission):
		return "set-up cannot write its cache: " + cause + ": set " + software.EnvDir + " and " + EnvCacheDir +
			" to writable directories"
	}
	return "set-up of the " + e.Step + " failed: " + cause
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches ErrNPMNotFound when npm is missing.
func (e *Error) Is(target error) bool {
	return target == ErrNPMNotFound && errors.Is(e.Err, exec.ErrNotFound)
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
