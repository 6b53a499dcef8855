package wasm

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/tetratelabs/wazero"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// fingerprint is the sha256 of a module's bytes.
type fingerprint = [sha256.Size]byte

// compiled is one entry of the module cache. refs counts the programs
// holding it; an entry evicted while held is closed by its last release,
// so an instance is never created from a closed CompiledModule.
type compiled struct {
	key  fingerprint
	cm   wazero.CompiledModule
	err  error // a module that failed to compile or validate
	refs int
	gone bool // evicted
	// compileT is how long compiling took; compileSeen is set once an
	// exec reported it (the phase report of the exec that waited for it).
	compileT    time.Duration
	compileSeen atomic.Bool
	// shell marks the agentOS shell (brush), the one module that imports
	// host_tty's line-editor calls (read, set_raw_mode); see shellArgv.
	shell bool
	// reactor marks a module that exports _initialize and secexec_main
	// instead of _start: secexec's Go userland, whose instances the
	// prestart pool initialises ahead of need (prestart.go).
	reactor bool
	// trusted marks a module whose content is a software store command's
	// (secexec's own build or a pinned package), whose instances may be
	// recycled (recycle.go).
	trusted atomic.Bool
	elem    *list.Element
}

// flight is a compilation in progress; later callers wait on done.
type flight struct {
	done chan struct{}
}

// moduleCache is the bounded LRU of compiled modules, with one
// compilation per key at a time.
type moduleCache struct {
	e   *Engine
	max int

	mu       sync.Mutex
	lru      list.List // of *compiled, most recent first
	byKey    map[fingerprint]*compiled
	inflight map[fingerprint]*flight

	hits, misses, evictions atomic.Uint64
}

func newModuleCache(e *Engine, max int) *moduleCache {
	return &moduleCache{e: e, max: max, byKey: make(map[fingerprint]*compiled), inflight: make(map[fingerprint]*flight)}
}

// get returns the compiled module for key, compiling the bytes load
// returns on a miss, with a reference the caller must release.
func (c *moduleCache) get(ctx context.Context, key fingerprint, load func() ([]byte, error)) (*compiled, error) {
	ent, _, err := c.lookup(ctx, key, load)
	return ent, err
}

// lookup is get, also reporting whether the module was in the cache
// (a caller that waited for another's compilation counts as a hit).
func (c *moduleCache) lookup(ctx context.Context, key fingerprint, load func() ([]byte, error)) (*compiled, bool, error) {
	for {
		c.mu.Lock()
		if ent := c.byKey[key]; ent != nil {
			c.lru.MoveToFront(ent.elem)
			c.hits.Add(1)
			if ent.err != nil {
				c.mu.Unlock()
				return nil, true, ent.err
			}
			ent.refs++
			c.mu.Unlock()
			return ent, true, nil
		}
		if f := c.inflight[key]; f != nil {
			c.mu.Unlock()
			select {
			case <-f.done:
				continue
			case <-ctx.Done():
				return nil, false, errno.EINTR
			}
		}
		f := &flight{done: make(chan struct{})}
		c.inflight[key] = f
		c.misses.Add(1)
		c.mu.Unlock()

		ent, cacheable, err := c.compile(key, load)
		c.mu.Lock()
		delete(c.inflight, key)
		if cacheable {
			ent.elem = c.lru.PushFront(ent)
			c.byKey[key] = ent
			c.evictLocked()
		}
		if err == nil {
			ent.refs++
		}
		c.mu.Unlock()
		close(f.done)
		if err != nil {
			return nil, false, err
		}
		return ent, false, nil
	}
}

// compile loads and compiles a module and checks it is a command this
// runtime can link. Failures of the module itself are cached (a bad file
// is not compiled again); failures to read it are not.
func (c *moduleCache) compile(key fingerprint, load func() ([]byte, error)) (*compiled, bool, error) {
	b, err := load()
	if err != nil {
		return nil, false, err
	}
	if sha256.Sum256(b) != key {
		// The bytes changed under us (the file was rewritten): do not
		// cache them under a key they do not have.
		return nil, false, errno.EAGAIN
	}
	// Compilation is not abandoned when the first caller dies: others may
	// be waiting for it.
	t0 := time.Now()
	cm, err := c.e.rt.CompileModule(context.Background(), b)
	ent := &compiled{key: key, cm: cm, compileT: time.Since(t0)}
	if err != nil {
		c.e.log.Debug("wasm: module does not compile", "module", hex.EncodeToString(key[:8]), "err", err)
		ent.err = errno.ENOEXEC
		return ent, true, ent.err
	}
	if err := c.checkLinkable(cm); err != nil {
		_ = cm.Close(context.Background())
		ent.cm = nil
		ent.err = err
		return ent, true, err
	}
	for _, f := range cm.ImportedFunctions() {
		// secexec's own stty and tput import host_tty's attribute and
		// size calls; only brush's line editor imports these two.
		if mod, name, _ := f.Import(); mod == "host_tty" && (name == "read" || name == "set_raw_mode") {
			ent.shell = true
		}
	}
	ent.reactor = isReactor(cm)
	return ent, true, nil
}

// checkLinkable rejects modules this runtime cannot run, so exec fails
// with ENOEXEC instead of the process dying at instantiation: they must
// be WASI commands (export _start), or reactors with secexec_main (see
// isReactor), whose every import is a function of the host modules
// defined here, with the same signature.
func (c *moduleCache) checkLinkable(cm wazero.CompiledModule) error {
	if _, ok := cm.ExportedFunctions()["_start"]; !ok && !isReactor(cm) {
		return errno.ENOEXEC
	}
	if len(cm.ImportedMemories()) > 0 {
		return errno.ENOEXEC
	}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		host := c.e.rt.Module(mod)
		if host == nil {
			return errno.ENOEXEC
		}
		def, ok := host.ExportedFunctionDefinitions()[name]
		if !ok || !slices.Equal(def.ParamTypes(), f.ParamTypes()) || !slices.Equal(def.ResultTypes(), f.ResultTypes()) {
			return errno.ENOEXEC
		}
	}
	return nil
}

func (c *moduleCache) evictLocked() {
	for c.lru.Len() > c.max {
		ent := c.lru.Remove(c.lru.Back()).(*compiled)
		delete(c.byKey, ent.key)
		ent.gone = true
		c.evictions.Add(1)
		if c.e.pool != nil {
			c.e.pool.snaps.drop(ent)
		}
		c.e.log.Debug("wasm: compiled module evicted", "module", hex.EncodeToString(ent.key[:8]), "held", ent.refs)
		if ent.refs == 0 && ent.cm != nil {
			_ = ent.cm.Close(context.Background())
		}
	}
}

// retain takes another reference on an entry a caller holds, unless it
// was evicted.
func (c *moduleCache) retain(ent *compiled) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ent.gone || ent.cm == nil {
		return false
	}
	ent.refs++
	return true
}

// release drops a reference taken by get.
func (c *moduleCache) release(ent *compiled) {
	c.mu.Lock()
	ent.refs--
	closeIt := ent.refs == 0 && ent.gone && ent.cm != nil
	c.mu.Unlock()
	if closeIt {
		_ = ent.cm.Close(context.Background())
	}
}

func (c *moduleCache) closeAll(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		ent := c.lru.Remove(c.lru.Front()).(*compiled)
		delete(c.byKey, ent.key)
		ent.gone = true
		if ent.refs == 0 && ent.cm != nil {
			_ = ent.cm.Close(ctx)
		}
	}
}

func (c *moduleCache) stats() Stats {
	c.mu.Lock()
	n := c.lru.Len()
	c.mu.Unlock()
	return Stats{ModuleHits: c.hits.Load(), ModuleMisses: c.misses.Load(), ModuleEvictions: c.evictions.Load(), ModulesCached: n}
}

// fileKey identifies one version of a file in one VM: a write changes the
// change time, which no guest can set back, so a key names exact bytes.
// The VM is held weakly, so a dead VM's entries can never match a new VM
// that reuses its address.
type fileKey struct {
	vfs          weak.Pointer[vfs.VFS]
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

func keyOf(v *vfs.VFS, st *vfs.Stat) fileKey {
	return fileKey{vfs: weak.Make(v), dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtime.UnixNano(), ctime: st.Ctime.UnixNano()}
}

// hashCache remembers the fingerprints of module files outside the
// software store, bounded LRU.
type hashCache struct {
	max          int
	mu           sync.Mutex
	lru          list.List // of *hashEntry
	m            map[fileKey]*list.Element
	hits, misses atomic.Uint64
}

type hashEntry struct {
	key fileKey
	fp  fingerprint
}

func newHashCache(max int) *hashCache {
	return &hashCache{max: max, m: make(map[fileKey]*list.Element)}
}

func (h *hashCache) get(k fileKey) (fingerprint, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if el, ok := h.m[k]; ok {
		h.lru.MoveToFront(el)
		h.hits.Add(1)
		return el.Value.(*hashEntry).fp, true
	}
	h.misses.Add(1)
	return fingerprint{}, false
}

func (h *hashCache) put(k fileKey, fp fingerprint) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if el, ok := h.m[k]; ok {
		el.Value.(*hashEntry).fp = fp
		h.lru.MoveToFront(el)
		return
	}
	h.m[k] = h.lru.PushFront(&hashEntry{key: k, fp: fp})
	for h.lru.Len() > h.max {
		e := h.lru.Remove(h.lru.Back()).(*hashEntry)
		delete(h.m, e.key)
	}
}
