// Package js runs JavaScript on V8 (github.com/tommie/v8go) as the node
// command of a secexec VM.
//
// The Engine is a kernel.Loader: an executable whose header starts with
// NodeMagic (the file /usr/bin/node of the engine's Layer) runs as a node
// process. Every process gets a fresh isolate that no other guest used,
// evaluates the bootstrap (the Node builtins, see package bootjs), runs
// the user's code and then an event loop in Go until nothing is pending,
// as Node does. Every builtin that touches the outside world calls a Go
// bridge function that acts on the process through the kernel, so the
// kernel's permissions, limits and errors apply unchanged.
//
// This is the only package that links V8.
package js

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/js/bootjs"
	"github.com/secexec/secexec/internal/js/nodecli"
	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// Config configures an Engine. The zero value is valid.
type Config struct {
	// HeapLimitBytes bounds each isolate's JavaScript heap (default
	// 128 MiB). A process that reaches it is terminated and its isolate
	// discarded.
	HeapLimitBytes uint64
	// ExternalLimitBytes bounds memory held outside the heap (ArrayBuffer
	// and Buffer contents), which V8's heap limit does not count
	// (default: twice the heap limit).
	ExternalLimitBytes uint64
	// TimeLimit, when positive, bounds each node process's wall time;
	// a process past it exits with status 124 after printing
	// "CPU time limit exceeded".
	TimeLimit time.Duration
	// CacheDir holds the polyfill install, the bootstrap bundle and code
	// caches; empty means bootjs.DefaultCacheDir().
	CacheDir string
	// Offline never runs npm: the polyfills must be installed already
	// (bootjs.ErrNotInstalled otherwise). Engine processes run offline.
	Offline bool
	// WarmIsolates is the capacity per key (bootstrap, heap limit) of
	// the pool of pre-booted isolates: 0 takes SECEXEC_V8_WARM_ISOLATES
	// or DefaultWarmIsolates, negative disables the pool; at most 64.
	WarmIsolates int
	// WarmDrainAfter is how long a warm-pool key other than the engine's
	// own (a VM's memory limit gives its isolates another heap limit)
	// stays warm without a claim before its parked isolates are disposed
	// (default DefaultWarmDrainAfter).
	WarmDrainAfter time.Duration
	// CodeCacheDir holds the on-disk code cache (see DiskCacheBytes);
	// empty means the v8cache directory in CacheDir (or in
	// bootjs.DefaultCacheDir()).
	CodeCacheDir string
	// DiskCacheBytes bounds the on-disk code cache, which keeps the
	// bootstrap's code cache and those of large modules (undici,
	// typescript) and transforms across engine processes: 0 means
	// DefaultDiskCacheBytes, negative turns the cache off.
	DiskCacheBytes int64
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// minHeapLimit is the smallest heap an isolate gets: V8 needs a few
// megabytes to run the bootstrap at all.
const minHeapLimit = 8 << 20

// DefaultHeapLimit is the isolate heap limit when Config leaves it 0.
const DefaultHeapLimit = 128 << 20

// NodeMagic starts the header of the executable that runs node.
const NodeMagic = "#!secexec-node\n"

// NodePath is where the engine's layer puts the node executable.
const NodePath = "/usr/bin/node"

// Engine runs node processes. It is safe for concurrent use; one Engine
// serves any number of VMs.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	bundle *bootjs.Bundle
	layer  vfs.FileSystem
	codes  *codeCache
	disk   *diskCache // nil when off
	pool   *pool

	// phases turns on per-process phase timing (SECEXEC_SESSION_PHASES=1).
	phases     bool
	phaseLevel slog.Level

	// testHook, when set (by tests), sees each runtime before disposal.
	testHook func(r *rt)
	// maxRejections, when set (by tests), replaces the bound on recorded
	// promise rejections (rejections_shim.cc's maxRecords).
	maxRejections int
	// exposeBridge (tests only) leaves the bridge reachable as
	// globalThis.__test_bridge.
	exposeBridge bool

	// live counts isolates from creation to disposal (Stats.LiveIsolates).
	live atomic.Int64

	mu        sync.Mutex
	bootCache *v8.CompilerCachedData
	// bootUpgrades counts remakes of bootCache (see upgradeBootCache).
	bootUpgrades int
	// bootBase is the size of the first bootstrap cache, made right
	// after bootstrapping; upgrades stay within maxBootCacheGrowth of it.
	bootBase int
	// bootFromDisk is the bootstrap cache read from disk, if any.
	bootFromDisk *v8.CompilerCachedData
	closed       bool
	running      sync.WaitGroup
	// vmWorkers counts live worker threads per VM (worker.go).
	vmWorkers vmWorkers
}

// ErrClosed is returned when a closed Engine is asked to run a process.
var ErrClosed = errors.New("js: engine is closed")

// NewEngine prepares an engine: it builds (or loads from the cache) the
// bootstrap bundle and the layer holding /usr/bin/node.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.HeapLimitBytes == 0 {
		cfg.HeapLimitBytes = DefaultHeapLimit
	}
	if cfg.HeapLimitBytes < minHeapLimit {
		return nil, fmt.Errorf("js: heap limit of %d bytes is below the 8 MiB minimum", cfg.HeapLimitBytes)
	}
	if cfg.ExternalLimitBytes == 0 {
		cfg.ExternalLimitBytes = 2 * cfg.HeapLimitBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	initV8()
	b, err := bootjs.Build(ctx, bootjs.Options{CacheDir: cfg.CacheDir, Offline: cfg.Offline, Logger: log})
	if err != nil {
		return nil, err
	}
	layer, err := newLayer(ctx)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, log: log, bundle: b, layer: layer, codes: newCodeCache(64 << 20)}
	e.disk = newDiskCache(codeCacheDir(cfg), diskCacheBytes(cfg), v8Flags, log)
	e.loadBootCache()
	if os.Getenv("SECEXEC_SESSION_PHASES") == "1" {
		e.phases, e.phaseLevel = true, slog.LevelInfo
	}
	if n := warmCapacity(cfg); n > 0 {
		e.pool = newPool(e, n)
	}
	return e, nil
}

// Loader returns the kernel.Loader that runs node executables.
func (e *Engine) Loader() kernel.Loader { return loader{e} }

// Layer returns a read-only filesystem holding /usr/bin/node, to be
// stacked into a VM's root (vm.Config.Lowers).
func (e *Engine) Layer() vfs.FileSystem { return e.layer }

// Close stops accepting processes and waits for running ones to end
// (they end when their VMs kill them).
func (e *Engine) Close() error {
	e.mu.Lock()
	already := e.closed
	e.closed = true
	e.mu.Unlock()
	if !already && e.pool != nil {
		e.pool.close()
	}
	e.running.Wait()
	e.disk.wait()
	return nil
}

// codeCacheDir is where the on-disk code cache of cfg lives, "" if
// nowhere.
func codeCacheDir(cfg Config) string {
	if cfg.CodeCacheDir != "" {
		return cfg.CodeCacheDir
	}
	dir := cfg.CacheDir
	if dir == "" {
		d, err := bootjs.DefaultCacheDir()
		if err != nil {
			return ""
		}
		dir = d
	}
	return filepath.Join(dir, "v8cache")
}

func diskCacheBytes(cfg Config) int64 {
	if cfg.DiskCacheBytes == 0 {
		return DefaultDiskCacheBytes
	}
	return cfg.DiskCacheBytes
}

// loadBootCache takes the bootstrap's code cache from disk, so that the
// first isolates of a new engine process do not compile the bootstrap.
// The entry holds the size of the first cache of its line (bootBase)
// before the cache itself, so upgrades stay bounded across processes.
func (e *Engine) loadBootCache() {
	b, ok := e.disk.get(diskBoot, e.bundle.Digest)
	if !ok || len(b) <= 8 {
		return
	}
	base := binary.LittleEndian.Uint64(b)
	if base == 0 || base > uint64(len(b)) {
		return
	}
	e.bootCache = &v8.CompilerCachedData{Bytes: b[8:]}
	e.bootFromDisk = e.bootCache
	e.bootBase = int(base)
}

// saveBootCache writes the bootstrap's code cache to disk. Called with
// e.mu held.
func (e *Engine) saveBootCache() {
	if e.disk == nil || e.bootCache == nil {
		return
	}
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(e.bootCache.Bytes)), uint64(e.bootBase))
	e.disk.put(diskBoot, e.bundle.Digest, append(b, e.bootCache.Bytes...))
}

func (e *Engine) acquire() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	e.running.Add(1)
	return nil
}

type loader struct{ e *Engine }

func (l loader) Load(ctx context.Context, p *kernel.Process, exe kernel.Executable) (kernel.Program, error) {
	if len(exe.Header) < len(NodeMagic) || string(exe.Header[:len(NodeMagic)]) != NodeMagic {
		return nil, kernel.ErrNotMine
	}
	return program(l), nil
}

type program struct{ e *Engine }

func (pr program) Run(ctx context.Context, p *kernel.Process) int {
	if err := pr.e.acquire(); err != nil {
		writeString(ctx, p, 2, "node: "+err.Error()+"\n")
		return 70
	}
	defer pr.e.running.Done()
	if sess := jsctx.Claim(ctx); sess != nil {
		// A persistent context (see context.go): node with nothing to
		// run, serving the session's evaluations.
		return runProcess(ctx, pr.e, p, &nodecli.Invocation{Mode: nodecli.ModeEval}, sess)
	}
	inv, err := nodecli.Parse(p.Argv())
	if err != nil {
		writeString(ctx, p, 2, err.Error()+"\n")
		return 9
	}
	switch inv.Mode {
	case nodecli.ModeVersion:
		writeString(ctx, p, 1, "v"+NodeVersion+"\n")
		return 0
	case nodecli.ModeHelp:
		writeString(ctx, p, 1, helpText)
		return 0
	}
	return runProcess(ctx, pr.e, p, inv, nil)
}

// NodeVersion is the Node.js release the runtime reports.
const NodeVersion = "22.12.0"

const helpText = `Usage: node [options] [ script.js ] [arguments]
       node [options] -e "script" [arguments]
       node [options] -p "expression" [arguments]

Options:
  -e, --eval script          evaluate script
  -p, --print script         evaluate script and print result
  -r, --require module       module to preload
  --input-type=module        treat -e/-p/stdin input as an ES module
  -v, --version              print Node.js version
  -h, --help                 print this help

This node runs inside a secexec sandbox.
`

func writeString(ctx context.Context, p *kernel.Process, fd int, s string) {
	b := []byte(s)
	for len(b) > 0 {
		n, err := p.Write(ctx, fd, b)
		if err != nil || n == 0 {
			return
		}
		b = b[n:]
	}
}
