package wasm

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"

	"github.com/secexec/secexec/internal/wasmbin"
)

// A reactor's _initialize (the Go runtime's start-up and its packages'
// init functions) costs milliseconds and does the same thing every time:
// it sees no process (syscalls.WithPrestart: no arguments, environment or
// descriptors, a coarse clock), so its result is one state per module.
// The first prestart of a module records that state, as the memory pages
// _initialize changed and the values of the module's mutable globals;
// later instances are instantiated (which applies the data segments) and
// then given those pages and globals, which is the same state without
// running the initialisation.
//
// That needs every piece of mutable state to be reachable: linear memory
// is, and the globals are when the module exports them all, which
// secexec's build promises by exporting the count global
// (internal/wasmbin.ExportGlobals). A module without it is
// initialised every time. Tables are not captured: a module that changes
// its tables during initialisation (Go does not) would need them.
//
// What a snapshot holds came from the module alone, run before any
// process existed, so it carries nothing of any guest's; each restored
// instance gets fresh memory from the allocator (zero pages) and a copy
// of those pages. Randomness the initialisation drew (Go's runtime seeds)
// is shared by every instance started from the snapshot: programs that
// need per-process randomness read random_get when they run, as the
// shell does for $RANDOM, and crypto/rand always does.

// Bounds on what snapshots may hold in the engine: a snapshot is taken
// only of a memory of at most maxSnapshotMemory bytes, and the engine's
// snapshots hold at most snapshotBudget bytes of pages and maxSnapshots
// modules (the oldest goes first).
const (
	snapshotPage      = 4096
	maxSnapshotMemory = 64 << 20
	snapshotBudget    = 64 << 20
	maxSnapshots      = 8
)

// snapshot is the state _initialize leaves in an instance of one module.
type snapshot struct {
	size    uint32 // the memory's size in bytes
	pages   []snapPage
	names   []string // the exported mutable globals, in order
	globals []uint64
	bytes   int
	// image is the whole memory as a copy-on-write image, for resetting
	// instances of trusted modules after a process (recycle.go); nil
	// where images cannot be made.
	image *memImage
}

type snapPage struct {
	off  uint32
	data []byte
}

// errNoSnapshot says why a module's state cannot be captured.
var errNoSnapshot = errors.New("wasm: module state cannot be snapshotted")

// preInit copies an instantiated, not yet initialised instance's memory,
// or returns nil when the module's state cannot be captured.
func preInit(mod api.Module) []byte {
	mem := mod.Memory()
	if mem == nil || mem.Size() > maxSnapshotMemory || mod.ExportedGlobal(wasmbin.GlobalCountExport) == nil {
		return nil
	}
	b, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil
	}
	return bytes.Clone(b)
}

// takeSnapshot records the state of mod after _initialize, given its
// memory as it was before (pre, from preInit).
func takeSnapshot(mod api.Module, pre []byte) (*snapshot, error) {
	mem := mod.Memory()
	size := mem.Size()
	if size > maxSnapshotMemory {
		return nil, fmt.Errorf("%w: %d bytes of memory", errNoSnapshot, size)
	}
	post, ok := mem.Read(0, size)
	if !ok {
		return nil, errNoSnapshot
	}
	s := &snapshot{size: size}
	zero := make([]byte, snapshotPage)
	for off := uint32(0); off < size; off += snapshotPage {
		end := min(off+snapshotPage, size)
		now := post[off:end]
		var was []byte
		switch {
		case end <= uint32(len(pre)):
			was = pre[off:end]
		case off < uint32(len(pre)):
			was = append(bytes.Clone(pre[off:]), zero[:int(end-off)-(len(pre)-int(off))]...)
		default:
			was = zero[:end-off]
		}
		if !bytes.Equal(now, was) {
			s.pages = append(s.pages, snapPage{off: off, data: bytes.Clone(now)})
			s.bytes += len(now)
		}
	}
	count := mod.ExportedGlobal(wasmbin.GlobalCountExport)
	if count == nil || count.Get() > 1<<16 {
		return nil, errNoSnapshot
	}
	for i := range int(count.Get()) {
		name := wasmbin.GlobalExportPrefix + strconv.Itoa(i)
		g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return nil, fmt.Errorf("%w: %s is not an exported mutable global", errNoSnapshot, name)
		}
		s.names = append(s.names, name)
		s.globals = append(s.globals, g.Get())
	}
	if im, err := newMemImage(post); err == nil {
		s.image = im
		s.bytes += im.stored
	}
	return s, nil
}

// restore brings a freshly instantiated instance of the snapshot's module
// to the snapshot's state. The memory grows through the instance's
// allocator, so a process's limits apply when a process restores.
func (s *snapshot) restore(mod api.Module) error {
	mem := mod.Memory()
	if mem == nil {
		return errNoSnapshot
	}
	if cur := mem.Size(); cur < s.size {
		if _, ok := mem.Grow((s.size - cur + 65535) / 65536); !ok || mem.Size() != s.size {
			return fmt.Errorf("%w: memory cannot grow to %d bytes", errNoSnapshot, s.size)
		}
	} else if cur != s.size {
		return fmt.Errorf("%w: memory of %d bytes, snapshot of %d", errNoSnapshot, cur, s.size)
	}
	for _, p := range s.pages {
		if !mem.Write(p.off, p.data) {
			return errNoSnapshot
		}
	}
	return s.restoreGlobals(mod)
}

// restoreGlobals sets the module's exported mutable globals to the
// snapshot's values.
func (s *snapshot) restoreGlobals(mod api.Module) error {
	for i, name := range s.names {
		g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return errNoSnapshot
		}
		g.Set(s.globals[i])
	}
	return nil
}

// restore restores mod from s and counts it.
func (ss *snapshots) restore(s *snapshot, mod api.Module) error {
	if err := s.restore(mod); err != nil {
		return err
	}
	ss.restored.Add(1)
	return nil
}

// snapshots are the engine's snapshots by module, bounded (see
// snapshotBudget).
type snapshots struct {
	off      bool // Config.NoSnapshots
	restored atomic.Uint64
	mu       sync.Mutex
	byMod    map[*compiled]*snapshot
	order    []*compiled // oldest first
	tried    map[*compiled]bool
	bytes    int
}

// get returns ent's snapshot, or whether the caller should take one: the
// first caller for a module without one is told to, later callers are
// not (a module whose state cannot be captured is tried once).
func (ss *snapshots) get(ent *compiled) (snap *snapshot, take bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.off {
		return nil, false
	}
	if s := ss.byMod[ent]; s != nil {
		return s, false
	}
	if ss.tried[ent] {
		return nil, false
	}
	ss.tried[ent] = true
	return nil, true
}

// lookup returns ent's snapshot, if any.
func (ss *snapshots) lookup(ent *compiled) *snapshot {
	if ss.off {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.byMod[ent]
}

// put keeps s as ent's snapshot (nil: none can be taken), dropping the
// oldest ones beyond the bounds.
func (ss *snapshots) put(ent *compiled, s *snapshot) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s == nil || s.bytes > snapshotBudget {
		if s != nil {
			s.release()
		}
		return
	}
	for len(ss.order) > 0 && (len(ss.order) >= maxSnapshots || ss.bytes+s.bytes > snapshotBudget) {
		old := ss.order[0]
		ss.order = ss.order[1:]
		ss.bytes -= ss.byMod[old].bytes
		ss.byMod[old].release()
		delete(ss.byMod, old)
	}
	ss.byMod[ent] = s
	ss.order = append(ss.order, ent)
	ss.bytes += s.bytes
}

// close forgets every snapshot and releases their images.
func (ss *snapshots) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for ent, s := range ss.byMod {
		s.release()
		delete(ss.byMod, ent)
	}
	ss.order, ss.bytes = nil, 0
}

// release lets go of what the snapshot holds outside the Go heap.
func (s *snapshot) release() {
	if s.image != nil {
		s.image.close()
	}
}

// drop forgets ent, which the module cache evicted: a snapshot (or the
// note that none could be taken) leaves with its module.
func (ss *snapshots) drop(ent *compiled) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.tried, ent)
	if s := ss.byMod[ent]; s != nil {
		ss.bytes -= s.bytes
		s.release()
		delete(ss.byMod, ent)
		ss.order = slices.DeleteFunc(ss.order, func(m *compiled) bool { return m == ent })
	}
}
