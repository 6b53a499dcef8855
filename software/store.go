// Package software is secexec's package store: it fetches the pinned
// agentOS command packages with the ordinary npm client, verifies each
// tarball against its pinned sha512 before using a byte of it, unpacks the
// .aospkg container into a cache directory, and registers the package's
// commands so the kernel can resolve them.
//
// # Cache layout
//
// The cache directory (see [DefaultDir]) holds
//
//	packages/NAME@VERSION.aospkg  the container, as published
//	packages/NAME@VERSION.json    metadata: pin, container sha256, and the
//	                              sha256 of every command module
//	locks/NAME@VERSION.lock       flock(2) lock serialising installs
//	tmp/                          downloads and partial files
//
// Files are written to tmp/ and renamed into place, the metadata last, so
// a reader (another process included) sees a package either completely or
// not at all. A directory populated once works offline: loading needs
// neither npm nor a lock, and may be read-only.
//
// # Commands
//
// Every command named by an installed package's manifest is a [Command],
// aliases included (coreutils' ls, dir and vdir are three commands). Each
// carries the sha256 [Fingerprint] of its module bytes, recorded at install
// time, so byte-identical aliases share one module: a compiled-module cache
// keyed by the fingerprint compiles it once. When two packages provide the
// same command name, the package listed first in the store's pins wins
// (deterministically; the loser is logged). Modules added with
// [Store.Register] shadow package commands of the same name.
package software

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/secexec/secexec/internal/flock"
	"github.com/secexec/secexec/software/aospkg"
)

// EnvDir is the environment variable that overrides the default cache
// directory.
const EnvDir = "SECEXEC_SOFTWARE_DIR"

// Options configures a Store. The zero value is usable.
type Options struct {
	// Dir is the cache directory. Empty means $SECEXEC_SOFTWARE_DIR, or
	// else os.UserCacheDir()/secexec/software.
	Dir string
	// Pins is the set of packages the store may install, in priority order
	// for duplicate command names. Nil means DefaultPins().
	Pins []Pin
	// NPM is the npm executable, a name looked up on PATH or a path.
	// Empty means "npm". It is only run to fetch a missing package.
	NPM string
	// Modules is the set of module packages (plain npm packages shipping
	// one WASI module) the store may install, after Pins in priority
	// order. Nil means DefaultModulePins() when Pins is nil too, and none
	// when Pins is set.
	Modules []ModulePin
	// Logger receives debug and warning logs. Nil discards them.
	Logger *slog.Logger
	// Progress, if set, receives install progress events. It is called
	// synchronously from the installing goroutine and must be quick.
	Progress func(Event)
}

// DefaultDir returns the cache directory used when Options.Dir is empty:
// $SECEXEC_SOFTWARE_DIR if set, else os.UserCacheDir()/secexec/software.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("software: no cache directory (set %s): %w", EnvDir, err)
	}
	return filepath.Join(c, "secexec", "software"), nil
}

// Store is a package cache plus the command table built from the packages
// installed in it. It is safe for concurrent use.
type Store struct {
	dir      string
	npm      string
	log      *slog.Logger
	progress func(Event)
	pins     []Pin
	mpins    []ModulePin
	byName   map[string]Pin
	limits   limits

	// installMu serialises installs of one package within this process;
	// the lock file does the same across processes.
	installMu sync.Map // short name -> *sync.Mutex

	mu         sync.RWMutex
	closed     bool
	pkgs       map[string]*installed // by short name
	mods       map[string]*installedModule
	old        []*aospkg.Package  // replaced by a repair; closed on Close
	cmds       map[string]Command // package commands, after resolution
	modules    map[Fingerprint]*module
	registered map[string]Command
}

// installed is one package present in the cache and open.
type installed struct {
	pin  Pin
	meta metadata
	path string
	pkg  *aospkg.Package
	fps  map[string]Fingerprint // command entry -> module fingerprint
}

// Package describes an installed package.
type Package struct {
	Pin
	// Manifest is the package's decoded manifest.
	Manifest aospkg.Manifest
	// Path is the host path of the cached .aospkg container.
	Path string
	// Size is the container's size in bytes.
	Size int64
}

// Open returns a store over the cache directory, loading every pinned
// package already installed there. It neither fetches nor needs npm.
// Cached packages that fail to load are logged and treated as missing.
func Open(ctx context.Context, opts Options) (*Store, error) {
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("software: cache directory: %w", err)
	}
	pins := opts.Pins
	if pins == nil {
		pins = defaultPins
	}
	s := &Store{
		dir:        dir,
		npm:        opts.NPM,
		log:        opts.Logger,
		progress:   opts.Progress,
		pins:       slices.Clone(pins),
		limits:     defaultLimits,
		byName:     make(map[string]Pin, len(pins)),
		pkgs:       make(map[string]*installed),
		mods:       make(map[string]*installedModule),
		registered: make(map[string]Command),
	}
	if opts.Modules == nil && opts.Pins == nil {
		opts.Modules = DefaultModulePins()
	}
	for _, p := range opts.Modules {
		s.mpins = append(s.mpins, clonePin(p))
	}
	if s.npm == "" {
		s.npm = "npm"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.progress == nil {
		s.progress = func(Event) {}
	}
	for _, p := range s.pins {
		if err := p.validate(); err != nil {
			return nil, err
		}
		if _, dup := s.byName[p.Name()]; dup {
			return nil, fmt.Errorf("%w: %q pinned twice", ErrInvalidPin, p.Name())
		}
		s.byName[p.Name()] = p
	}
	for _, p := range s.mpins {
		if err := p.validate(); err != nil {
			return nil, err
		}
		if _, dup := s.byName[p.Name()]; dup {
			return nil, fmt.Errorf("%w: %q pinned twice", ErrInvalidPin, p.Name())
		}
		s.byName[p.Name()] = p.Pin
	}
	for _, p := range s.pins {
		if err := ctx.Err(); err != nil {
			s.Close()
			return nil, err
		}
		ip, err := s.load(p, false)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("software: ignoring cached package", "package", p.Spec(), "err", err)
			}
			continue
		}
		s.pkgs[p.Name()] = ip
	}
	for _, p := range s.mpins {
		im, err := s.loadModule(p, false)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("software: ignoring cached module", "package", p.Spec(), "err", err)
			}
			continue
		}
		s.mods[p.Name()] = im
	}
	s.rebuild()
	return s, nil
}

// Dir returns the absolute cache directory.
func (s *Store) Dir() string { return s.dir }

// Pins returns the store's pinned package set.
func (s *Store) Pins() []Pin { return slices.Clone(s.pins) }

// Close closes the cached containers. Commands obtained earlier can no
// longer read their modules.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, ip := range s.pkgs {
		errs = append(errs, ip.pkg.Close())
	}
	for _, p := range s.old {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// pinsFor resolves names (short or npm names) to pins. No names means all.
func (s *Store) pinsFor(names []string) ([]Pin, error) {
	if len(names) == 0 {
		return slices.Clone(s.pins), nil
	}
	out := make([]Pin, 0, len(names))
	for _, n := range names {
		p, ok := s.byName[n]
		if !ok {
			p, ok = s.byName[Pin{Package: n}.Name()]
			ok = ok && p.Package == n
		}
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownPackage, n)
		}
		out = append(out, p)
	}
	return out, nil
}

// Ensure makes sure the named packages are installed (all pinned packages
// when no name is given), fetching only those missing from the cache.
// Names are short ("sed") or npm names ("@agentos-software/sed").
func (s *Store) Ensure(ctx context.Context, names ...string) error {
	return s.installAll(ctx, names, false)
}

// Install is Ensure with a full check: a package already in the cache is
// re-hashed against the sha256 recorded at install time and fetched again
// if it no longer matches.
func (s *Store) Install(ctx context.Context, names ...string) error {
	return s.installAll(ctx, names, true)
}

// installAll installs the named packages, container and module packages
// alike; no names means every pinned package.
func (s *Store) installAll(ctx context.Context, names []string, full bool) error {
	if len(names) == 0 {
		for _, p := range s.pins {
			names = append(names, p.Name())
		}
		for _, p := range s.mpins {
			names = append(names, p.Name())
		}
	}
	for _, n := range names {
		if mp, err := s.modulePin(n); err == nil {
			if err := s.installModule(ctx, mp, full); err != nil {
				return err
			}
			continue
		}
		pins, err := s.pinsFor([]string{n})
		if err != nil {
			return err
		}
		if err := s.install(ctx, pins[0], full); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) install(ctx context.Context, pin Pin, full bool) error {
	name := pin.Name()
	if err := s.checkOpen(); err != nil {
		return err
	}
	m, _ := s.installMu.LoadOrStore(name, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	defer mu.Unlock()

	s.mu.RLock()
	cur := s.pkgs[name]
	s.mu.RUnlock()
	if cur != nil && !full {
		return nil
	}
	if cur != nil {
		err := verifyFile(cur.path, cur.meta.SHA256)
		if err == nil {
			return nil
		}
		s.log.Warn("software: cached package is damaged, fetching again", "package", pin.Spec(), "err", err)
	}

	// Loading needs no lock (files appear by rename, metadata last), so a
	// read-only cache that another process filled still works.
	if cur == nil {
		if ip, err := s.load(pin, full); err == nil {
			return s.activate(ip)
		}
	}
	return s.fetchLocked(ctx, pin, func() bool {
		if cur != nil {
			return false
		}
		ip, err := s.load(pin, full)
		return err == nil && s.activate(ip) == nil
	}, func(tgz string) error {
		ip, err := s.installTarball(ctx, pin, tgz)
		if err != nil {
			return err
		}
		return s.activate(ip)
	})
}

// fetchLocked takes pin's install lock (across processes), asks loaded
// whether another process installed the package meanwhile, and if not
// fetches its tarball with npm into a temporary directory and hands it to
// unpack, which installs it into the cache.
func (s *Store) fetchLocked(ctx context.Context, pin Pin, loaded func() bool, unpack func(tgz string) error) error {
	if err := s.mkdirs(); err != nil {
		return err
	}
	unlock, err := flock.Lock(ctx, filepath.Join(s.dir, "locks", pin.Name()+"@"+pin.Version+".lock"))
	if err != nil {
		return fmt.Errorf("software: %s: lock: %w", pin.Spec(), err)
	}
	defer unlock()

	// Another process may have installed it while we waited for the lock.
	if loaded() {
		return nil
	}
	s.removeStaleTemps(pin)
	tmp, err := os.MkdirTemp(filepath.Join(s.dir, "tmp"), pin.Name()+"@"+pin.Version+"-fetch-")
	if err != nil {
		return fmt.Errorf("software: %w", err)
	}
	defer os.RemoveAll(tmp)

	s.progress(Event{Package: pin.Name(), Version: pin.Version, Phase: PhaseFetching})
	s.log.Debug("software: fetching", "package", pin.Spec())
	tgz, err := s.npmPack(ctx, pin, tmp)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(tgz); err == nil {
		s.progress(Event{Package: pin.Name(), Version: pin.Version, Phase: PhaseFetching, Bytes: fi.Size(), Total: fi.Size()})
	}
	return unpack(tgz)
}

// activate makes ip the installed copy of its package and rebuilds the
// command table.
func (s *Store) activate(ip *installed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		ip.pkg.Close()
		return ErrClosed
	}
	if old := s.pkgs[ip.pin.Name()]; old != nil {
		// Commands handed out earlier may still read from the old file.
		s.old = append(s.old, old.pkg)
	}
	s.pkgs[ip.pin.Name()] = ip
	s.rebuildLocked()
	s.log.Info("software: installed", "package", ip.pin.Spec(), "commands", len(ip.pkg.Commands()))
	s.progress(Event{Package: ip.pin.Name(), Version: ip.pin.Version, Phase: PhaseDone})
	return nil
}

func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// Installed returns the installed pinned packages, in pin order.
func (s *Store) Installed() []Package {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Package
	for _, p := range s.pins {
		if ip := s.pkgs[p.Name()]; ip != nil {
			out = append(out, Package{Pin: p, Manifest: ip.pkg.Manifest(), Path: ip.path, Size: ip.pkg.Size()})
		}
	}
	return out
}

// Container returns the open container of an installed package, for
// mounting its files. It stays valid until the store is closed.
func (s *Store) Container(name string) (*aospkg.Package, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ip := s.pkgs[name]
	if ip == nil {
		return nil, false
	}
	return ip.pkg, true
}

// ProvidedFile is a package directory to mount read-only in the guest.
type ProvidedFile struct {
	Package string // short package name
	Source  string // path relative to the package root
	Target  string // absolute guest path
}

// Provides is what the installed packages contribute to every VM.
type Provides struct {
	// Env holds environment defaults; the first package in pin order that
	// sets a key wins.
	Env map[string]string
	// Files lists read-only mounts in pin order.
	Files []ProvidedFile
}

// Provides merges the installed packages' provides blocks.
func (s *Store) Provides() Provides {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := Provides{Env: map[string]string{}}
	for _, p := range s.pins {
		ip := s.pkgs[p.Name()]
		if ip == nil {
			continue
		}
		pr := ip.pkg.Manifest().Provides
		if pr == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(pr.Env)) {
			if _, set := out.Env[k]; !set {
				out.Env[k] = pr.Env[k]
			}
		}
		for _, f := range pr.Files {
			out.Files = append(out.Files, ProvidedFile{Package: p.Name(), Source: f.Source, Target: f.Target})
		}
	}
	return out
}

func (s *Store) mkdirs() error {
	for _, d := range []string{"packages", "locks", "tmp"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return fmt.Errorf("software: %w", err)
		}
	}
	return nil
}

// removeStaleTemps deletes leftovers of an install of pin that died. The
// caller holds the package's lock, so no live install owns them.
func (s *Store) removeStaleTemps(pin Pin) {
	prefix := pin.Name() + "@" + pin.Version + "-"
	ents, err := os.ReadDir(filepath.Join(s.dir, "tmp"))
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			os.RemoveAll(filepath.Join(s.dir, "tmp", e.Name()))
		}
	}
}

// verifyFile hashes a file with sha256 and compares it with a hex digest.
func verifyFile(name, wantHex string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != wantHex {
		return fmt.Errorf("%w: %s: sha256 %s, recorded %s", ErrCorrupt, filepath.Base(name), got, wantHex)
	}
	return nil
}
