// Package wasm runs WebAssembly (WASI preview 1) programs as secexec
// processes: one wazero runtime per host process, shared by every VM,
// whose guests call the kernel through the host modules of package
// syscalls.
//
// # Caches
//
// Compiling a module is the expensive step (the 118 coreutils modules take
// ~13 s on two cores), so it happens once per module per host process:
// wazero's file compilation cache keeps native code on disk across runs,
// and a bounded in-memory LRU keeps compiled modules keyed by the sha256
// of their bytes. Modules compile lazily, on first exec, and concurrent
// first execs of one module compile it once. Store commands carry their
// fingerprint (see package softfs), so an exec of /usr/bin/ls reads
// nothing; other files (a user's own .wasm) are read and hashed once per
// version, remembered by their attributes.
//
// # Processes
//
// The kernel asks the [Loader] to load an executable; the [Program] it
// returns instantiates a fresh, anonymous module instance per process
// (never shared or reused), runs _start on the process's goroutine with
// the process's context, and returns the exit status: proc_exit's code
// & 0xff, 0 when _start returns, 1 (with a one-line diagnostic on stderr)
// for a trap. A killed process's context is cancelled, wazero closes the
// instance at its next check (WithCloseOnContextDone), and the kernel
// reports the signal. proc_exec replaces the instance in the same
// process.
package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/secexec/secexec/internal/softfs"
	"github.com/secexec/secexec/internal/wasm/syscalls"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

// EnvCacheDir names the environment variable holding secexec's cache
// root; the compilation cache lives in its "wasm" subdirectory.
const EnvCacheDir = "SECEXEC_CACHE_DIR"

// Defaults of Config.
const (
	// DefaultMemoryLimitPages caps each instance's memory at 128 MiB.
	DefaultMemoryLimitPages = 2048
	// DefaultModuleCacheSize is the number of compiled modules kept.
	DefaultModuleCacheSize = 64
	// MaxModuleSize is the largest module file the loader reads (EFBIG
	// beyond).
	MaxModuleSize = 256 << 20
)

// Config configures an Engine. The zero value is usable.
type Config struct {
	// CacheDir is the directory of the on-disk compilation cache. Empty
	// means $SECEXEC_CACHE_DIR/wasm, else os.UserCacheDir()/secexec/wasm.
	CacheDir string
	// NoDiskCache disables the on-disk compilation cache.
	NoDiskCache bool
	// MemoryLimitPages caps every instance's linear memory, in 64 KiB
	// pages; 0 means DefaultMemoryLimitPages. A guest that grows beyond it
	// sees memory.grow fail.
	MemoryLimitPages uint32
	// ModuleCacheSize bounds the compiled modules kept in memory; 0 means
	// DefaultModuleCacheSize.
	ModuleCacheSize int
	// Logger receives debug logs (cache evictions) and errors; nil
	// discards them.
	Logger *slog.Logger
	// NoSnapshots initialises every instance of a reactor module with
	// its _initialize instead of starting instances after the first from
	// a snapshot (snapshot.go); also set by SECEXEC_WASM_SNAPSHOTS=0. For
	// measuring what snapshots save, and as a way out should a module
	// misbehave when restored.
	NoSnapshots bool
}

// Engine is the WebAssembly runtime of a host process, shared by all VMs.
// It is safe for concurrent use.
type Engine struct {
	rt     wazero.Runtime
	cc     wazero.CompilationCache
	log    *slog.Logger
	modCfg wazero.ModuleConfig
	mods   *moduleCache
	hashes *hashCache
	alloc  experimental.MemoryAllocator
	pool   *prestartPool
	parks  *parkPool
	// trustAll recycles reactors that are not the store's (a test's).
	trustAll bool

	layersMu sync.RWMutex
	layers   []*softfs.FS
	byStore  map[softfs.Source]*softfs.FS

	// running counts programs between instantiation and exit; Close waits
	// for them, since their memories are unmapped with the runtime.
	runMu   sync.Mutex
	running int
	closed  bool
	idle    chan struct{}

	// phases turns on per-exec phase reports (SECEXEC_SESSION_PHASES=1).
	phases bool
}

// Stats are the engine's cache counters.
type Stats struct {
	// ModuleHits and ModuleMisses count lookups of compiled modules;
	// every miss compiled (or found on disk) a module once.
	ModuleHits, ModuleMisses uint64
	// ModuleEvictions counts modules dropped from the in-memory cache.
	ModuleEvictions uint64
	// ModulesCached is the number of compiled modules held now.
	ModulesCached int
	// HashHits and HashMisses count fingerprint lookups of files outside
	// the software store; every miss read and hashed a file.
	HashHits, HashMisses uint64
	// Prestarted counts processes that ran on a parked, already
	// initialised reactor instance (prestart.go); PrestartMisses those
	// that initialised their own.
	Prestarted, PrestartMisses uint64
	// Restored counts reactor instances brought up from their module's
	// snapshot instead of running _initialize (snapshot.go).
	Restored uint64
	// Recycled counts instances reset to their module's snapshot after a
	// process and parked again (recycle.go).
	Recycled uint64
	// Parked is how many initialised instances wait for a process now.
	Parked int
	// ParkClaims counts processes that started on a parked command
	// instance (parked.go: python3); ParkMisses those that qualified but
	// found none and started cold.
	ParkClaims, ParkMisses uint64
	// ParkLive counts parked command instances that exist now, waiting
	// or running their process (zero after Close).
	ParkLive int
}

// NewEngine creates the runtime and defines the host modules.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pages := cfg.MemoryLimitPages
	if pages == 0 {
		pages = DefaultMemoryLimitPages
	}
	if pages > 65536 {
		return nil, fmt.Errorf("wasm: MemoryLimitPages %d exceeds 65536", pages)
	}
	size := cfg.ModuleCacheSize
	if size <= 0 {
		size = DefaultModuleCacheSize
	}
	// One RuntimeConfig for everything: wazero's cache key includes it.
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(pages).
		WithDebugInfoEnabled(false)
	e := &Engine{log: log, phases: phasesOn()}
	if !cfg.NoDiskCache {
		dir, err := cacheDir(cfg.CacheDir)
		if err == nil {
			e.cc, err = wazero.NewCompilationCacheWithDir(dir)
		}
		if err != nil {
			// A missing cache makes execs slower, never wrong.
			log.Warn("wasm: compilation cache disabled", "err", err)
		} else {
			rc = rc.WithCompilationCache(e.cc)
		}
	}
	e.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := syscalls.Instantiate(ctx, e.rt); err != nil {
		_ = e.Close(ctx)
		return nil, err
	}
	// Anonymous instances may coexist; _start is called by the runner.
	e.modCfg = wazero.NewModuleConfig().WithName("").WithStartFunctions()
	e.alloc = newAllocator()
	e.mods = newModuleCache(e, size)
	e.hashes = newHashCache(256)
	e.pool = newPrestartPool(e)
	e.parks = &parkPool{e: e}
	e.pool.snaps.off = cfg.NoSnapshots || os.Getenv("SECEXEC_WASM_SNAPSHOTS") == "0"
	return e, nil
}

func cacheDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if root := os.Getenv(EnvCacheDir); root != "" {
		return filepath.Join(root, "wasm"), nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "secexec", "wasm"), nil
}

// ErrClosed is returned when a program is loaded after Close.
var ErrClosed = errors.New("wasm: engine is closed")

// Close releases the runtime and its caches. Close the VMs first: it
// waits until every running program has returned, and if ctx ends before
// that it returns ctx's error and leaves the runtime open (guest memories
// must outlive their instances). No program starts after Close.
func (e *Engine) Close(ctx context.Context) error {
	e.runMu.Lock()
	e.closed = true
	var idle chan struct{}
	if e.running > 0 {
		if e.idle == nil {
			e.idle = make(chan struct{})
		}
		idle = e.idle
	}
	e.runMu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var errs []error
	if e.pool != nil {
		e.pool.close()
	}
	if e.parks != nil {
		e.parks.close()
	}
	if e.mods != nil {
		e.mods.closeAll(ctx)
	}
	if e.rt != nil {
		errs = append(errs, e.rt.Close(ctx))
	}
	if e.cc != nil {
		errs = append(errs, e.cc.Close(ctx))
	}
	return errors.Join(errs...)
}

// enter registers a starting program; it fails once Close has begun.
func (e *Engine) enter() bool {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.closed {
		return false
	}
	e.running++
	return true
}

func (e *Engine) isClosed() bool {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	return e.closed
}

func (e *Engine) exit() {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	e.running--
	if e.running == 0 && e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
}

// Stats returns the cache counters.
func (e *Engine) Stats() Stats {
	s := e.mods.stats()
	s.HashHits, s.HashMisses = e.hashes.hits.Load(), e.hashes.misses.Load()
	s.Prestarted, s.PrestartMisses = e.pool.claims.Load(), e.pool.misses.Load()
	s.Restored = e.pool.snaps.restored.Load()
	s.Recycled = e.pool.recycled.Load()
	e.pool.mu.Lock()
	s.Parked = len(e.pool.ready)
	e.pool.mu.Unlock()
	s.ParkClaims, s.ParkMisses = e.parks.claims.Load(), e.parks.misses.Load()
	s.ParkLive = int(e.parks.live.Load())
	e.parks.mu.Lock()
	if e.parks.ready != nil {
		s.Parked++
	}
	e.parks.mu.Unlock()
	return s
}

// Loader returns the kernel loader for WebAssembly modules (and "#!"
// scripts whose interpreter is one). Register it with each VM's kernel.
func (e *Engine) Loader() kernel.Loader { return loader{e} }

// SoftwareLayer returns the read-only filesystem of store's commands (see
// package softfs) for use as a lower layer of VMs' root overlays, and
// lets the loader recognise its files without reading them. The layer is
// made once per store; later calls return the same one, so every VM
// shares it.
func (e *Engine) SoftwareLayer(store *software.Store) vfs.FileSystem {
	e.layersMu.Lock()
	defer e.layersMu.Unlock()
	if fs, ok := e.byStore[store]; ok {
		return fs
	}
	fs := softfs.New(store)
	if e.byStore == nil {
		e.byStore = make(map[softfs.Source]*softfs.FS)
	}
	e.byStore[store] = fs
	e.layers = append(e.layers, fs)
	return fs
}
