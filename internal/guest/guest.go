// Package guest assembles what runs guest programs in the VMs of one host
// process: the userland package store, secexec's own commands, and the
// WebAssembly engine with its compiled-module caches. One Runtime serves
// every VM of the process (in-process VMs and the engine process alike);
// it plugs into each VM as read-only layers and program loaders.
package guest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/secexec/secexec/internal/js"
	"github.com/secexec/secexec/internal/pysupport"
	"github.com/secexec/secexec/internal/setup"
	"github.com/secexec/secexec/internal/tzdata"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
	userwasm "github.com/secexec/secexec/userland/wasm"
)

// Config configures a Runtime.
type Config struct {
	// SoftwareDir is the package cache; empty means software.DefaultDir
	// (or $SECEXEC_SOFTWARE_DIR).
	SoftwareDir string
	// CacheDir is the cache root (setup.Dirs.Cache: compiled modules,
	// the node bootstrap); empty means $SECEXEC_CACHE_DIR or the user
	// cache directory's secexec.
	CacheDir string
	// UserlandDir is the directory of secexec's own commands built as
	// WASI modules; empty means $SECEXEC_USERLAND_DIR or the build of
	// this binary's source in the cache (userland/wasm.Dir).
	UserlandDir string
	// Progress receives package installation progress (a first run
	// fetches the userland); nil reports nothing.
	Progress io.Writer
	// Offline does no set-up: it neither fetches missing packages nor
	// installs the node polyfills, and uses what the caches hold. Engine
	// processes run offline (they may not execute npm); the client set
	// the caches up before starting them (internal/setup).
	Offline bool
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// WarmIsolates is the V8 warm pool's capacity per key (see
	// js.Config.WarmIsolates): 0 takes SECEXEC_V8_WARM_ISOLATES or the
	// default, negative disables the pool.
	WarmIsolates int
}

// Runtime runs guest programs. Its methods are safe for concurrent use.
type Runtime struct {
	store  *software.Store
	wasm   *wasm.Engine
	js     *js.Engine
	layers []vfs.FileSystem
	log    *slog.Logger
	// toolsDir is the host directory of npm and typescript (set-up's
	// Dirs.Tools()/usr/lib/node_modules), "" when the cache lacks them.
	toolsDir string

	closeOnce sync.Once
	closeErr  error
}

// New sets the caches up (unless Offline: see internal/setup), opens the
// package store, adds secexec's own commands, and starts the WebAssembly
// and V8 engines.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dirs, err := dirsOf(cfg)
	if err != nil {
		return nil, err
	}
	if !cfg.Offline {
		if err := setup.Ensure(ctx, setup.Options{Dirs: dirs, Progress: cfg.Progress, Logger: log}); err != nil {
			return nil, err
		}
	}
	store, err := software.Open(ctx, software.Options{Dir: dirs.Software, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("guest: software store: %w", err)
	}
	// The published userland has no grep and no jq and a shell that
	// cannot be trusted with errexit: secexec ships its own.
	userland, err := dirs.UserlandDir()
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("guest: %w", err)
	}
	if err := userwasm.Install(store, userland); err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("guest: %w", err)
	}
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: dirs.WASM(), Logger: log})
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	jsEng, err := js.NewEngine(ctx, js.Config{CacheDir: dirs.JS(), Offline: true, Logger: log, WarmIsolates: cfg.WarmIsolates})
	if err != nil {
		_ = eng.Close(ctx)
		_ = store.Close()
		return nil, err
	}
	bc := loadBytecode(store, dirs, log)
	py := pysupport.LayerWith(bc)
	parkPython(ctx, eng, store, py, bc != nil, log)
	r := &Runtime{store: store, wasm: eng, js: jsEng, log: log}
	r.layers = []vfs.FileSystem{jsEng.Layer(), eng.SoftwareLayer(store), py}
	switch tz, err := tzdata.Layer(ctx, dirs.Cache); {
	case err == nil:
		r.layers = append(r.layers, tz)
	case errors.Is(err, tzdata.ErrNoData):
		log.Debug("guest: no time zone database", "err", err)
	default:
		_ = r.Close(ctx)
		return nil, fmt.Errorf("guest: %w", err)
	}
	if err := r.addTools(ctx, dirs); err != nil {
		_ = r.Close(ctx)
		return nil, err
	}
	return r, nil
}

// parkPython has the engine start python3 from parked interpreters
// (internal/wasm parked.go) unless SECEXEC_PYTHON_PARKED=0. The parked
// instance's start-up sees the support layer only.
func parkPython(ctx context.Context, eng *wasm.Engine, store *software.Store, py vfs.FileSystem, bytecode bool, log *slog.Logger) {
	if os.Getenv("SECEXEC_PYTHON_PARKED") == "0" {
		return
	}
	if err := pysupport.Park(ctx, eng, store, py, bytecode); err != nil {
		log.Warn("guest: python3 starts cold", "err", err)
	}
}

// loadBytecode returns python3's bytecode from the cache set-up filled,
// or nil (python3 then compiles and unzips on each start, slower but the
// same) when there is none for this module and these support files.
func loadBytecode(store *software.Store, dirs setup.Dirs, log *slog.Logger) *pysupport.Bytecode {
	py, ok := store.Command(software.PythonPin.Commands[0])
	if !ok {
		return nil
	}
	bc, err := pysupport.LoadBytecode(dirs.Python(), py.Fingerprint)
	switch {
	case errors.Is(err, os.ErrNotExist):
		log.Debug("guest: no python bytecode", "err", err)
	case err != nil:
		log.Warn("guest: python bytecode unusable; set-up rebuilds it", "err", err)
	}
	return bc
}

// Configure adds the runtime's read-only layers beneath a VM's root.
func (r *Runtime) Configure(_ context.Context, cfg *vm.Config) error {
	cfg.Lowers = append(append([]vfs.FileSystem(nil), r.layers...), cfg.Lowers...)
	if r.toolsDir != "" {
		// First, so that a mount of the caller's may cover it.
		cfg.Mounts = append([]vm.Mount{{Path: ToolsPath, HostDir: r.toolsDir, ReadOnly: true}}, cfg.Mounts...)
	}
	return nil
}

// Attach registers the program loaders with a VM's kernel.
func (r *Runtime) Attach(_ context.Context, m *vm.VM) error {
	// node's executable is a "#!" marker file: the V8 loader must see it
	// before the WebAssembly loader's generic script handling does.
	m.Kernel.RegisterLoader(r.js.Loader())
	m.Kernel.RegisterLoader(r.wasm.Loader())
	return nil
}

// dirsOf returns the configured directories, defaults filled in.
func dirsOf(cfg Config) (setup.Dirs, error) {
	dirs := setup.Dirs{Software: cfg.SoftwareDir, Cache: cfg.CacheDir, Userland: cfg.UserlandDir}
	if dirs.Software != "" && dirs.Cache != "" {
		return dirs, nil
	}
	def, err := setup.DefaultDirs()
	if err != nil {
		return dirs, err
	}
	if dirs.Software == "" {
		dirs.Software = def.Software
	}
	if dirs.Cache == "" {
		dirs.Cache = def.Cache
	}
	if dirs.Userland == "" && cfg.CacheDir == "" {
		dirs.Userland = def.Userland
	}
	return dirs, nil
}

// Store returns the package store.
func (r *Runtime) Store() *software.Store { return r.store }

// WASM returns the WebAssembly engine.
func (r *Runtime) WASM() *wasm.Engine { return r.wasm }

// JS returns the V8 engine.
func (r *Runtime) JS() *js.Engine { return r.js }

// Close stops the engines; close every VM first.
func (r *Runtime) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.closeErr = errors.Join(r.js.Close(), r.wasm.Close(ctx), r.store.Close())
	})
	return r.closeErr
}
