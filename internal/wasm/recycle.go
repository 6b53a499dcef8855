package wasm

import (
	"errors"
	"fmt"
	"time"
)

// Recycling: an instance of a trusted reactor whose module has a
// snapshot is not thrown away when its process ends. Its memory is
// reset to the snapshot's image (one copy-on-write mmap over the whole
// memory, memimage_linux.go) and its globals to the snapshot's values,
// and it is parked again for the next process. Instantiating a Go
// module costs a copy of its data segments and the initialisation of its
// function table, about a millisecond of CPU for each `sh -c`; a reset
// costs a system call, and the next process copies only the pages it
// writes.
//
// What a process could leave behind in an instance, and why none of it
// reaches the next one:
//
//   - Linear memory: replaced whole by the image. A private mapping
//     over the same addresses drops every page the process wrote; the
//     image file is sealed, so nothing mapped from it can change it.
//     Memory the process grew beyond the image's size cannot be taken
//     back from wazero: it is replaced by fresh zero pages, up to a
//     bound (maxRecycledGrowth), past which the instance is discarded.
//   - Globals: every mutable global is exported by secexec's build
//     (internal/wasmbin.ExportGlobals) and set back from the snapshot.
//   - Tables: secexec's Go userland never changes its tables (the Go
//     compiler emits no table.set, table.grow or table.init). That is a
//     promise about the module's code, which is why only trusted modules
//     are recycled: those of the software store (secexec's own build and
//     the pinned packages) or a file with the same content. A guest's own
//     reactor, which could write its table and read it back in the next
//     process, is instantiated afresh every time.
//   - The call stack: wazero gives each call of an exported function a
//     stack of its own.
//   - A closed instance (the process was killed, a deadline closed it)
//     is discarded.
//
// The process's memory charge is returned when it ends, as when an
// instance is closed; the reset runs off the process's goroutine, and a
// process that wants the module meanwhile waits for it as for a refill.

// errNotRecyclable says why an instance was discarded instead.
var errNotRecyclable = errors.New("wasm: instance cannot be recycled")

// recyclableLocked reports whether ent's instances are recycled.
func (pp *prestartPool) recyclableLocked(ent *compiled) bool {
	return pp.recyclable(ent, pp.snaps.lookup(ent))
}

// recyclable reports whether ent, whose snapshot is snap, is recycled.
func (pp *prestartPool) recyclable(ent *compiled, snap *snapshot) bool {
	return (ent.trusted.Load() || pp.e.trustAll) && snap != nil && snap.image != nil
}

// giveBack takes back the instance a process claimed from the pool once
// the process's run is over: reset and parked again when it can be, else
// closed (and, if none is on its way, another made).
func (pp *prestartPool) giveBack(ent *compiled, pk *parked) {
	pk.mem.release()
	pp.mu.Lock()
	pp.returnedLocked(ent, pk)
	snap := pp.snaps.lookup(ent)
	if pp.closed || pp.ready[ent] != nil || pp.filling[ent] != nil || !pp.recyclable(ent, snap) || pk.mod.IsClosed() {
		pp.fillLocked(ent)
		pp.mu.Unlock()
		pk.close()
		pp.e.mods.release(ent)
		return
	}
	done := make(chan struct{})
	pp.filling[ent] = done
	pp.wg.Add(1)
	pp.mu.Unlock()
	go func() {
		defer pp.wg.Done()
		err := pk.reset(snap)
		pp.mu.Lock()
		delete(pp.filling, ent)
		keep := err == nil && !pp.closed && pp.ready[ent] == nil
		if keep {
			pp.ready[ent] = pk
			pk.idle = time.AfterFunc(parkedIdle, func() { pp.expire(ent, pk) })
			pp.recycled.Add(1)
		} else {
			pp.e.log.Debug("wasm: not recycled", "err", err)
			pp.fillLocked(ent)
		}
		close(done)
		pp.mu.Unlock()
		if !keep {
			pk.close()
			pp.e.mods.release(ent)
		}
	}()
}

// discard closes an instance a process claimed but could not use.
func (pp *prestartPool) discard(ent *compiled, pk *parked) {
	pk.mem.release()
	pp.mu.Lock()
	pp.returnedLocked(ent, pk)
	pp.fillLocked(ent)
	pp.mu.Unlock()
	pk.close()
	pp.e.mods.release(ent)
}

// returnedLocked stops counting pk among the instances processes hold.
func (pp *prestartPool) returnedLocked(ent *compiled, pk *parked) {
	if pk.out {
		pk.out = false
		pp.out[ent]--
	}
}

// reset brings pk back to snap's state.
func (pk *parked) reset(snap *snapshot) error {
	if err := pk.mem.reset(snap.image); err != nil {
		return err
	}
	return snap.restoreGlobals(pk.mod)
}

// release ends the owner's charge for the memory: its process is over.
func (m *ownedMemory) release() {
	m.mu.Lock()
	p := m.owner
	m.owner, m.max = nil, 0
	m.mu.Unlock()
	if p != nil {
		p.ReportMemory(0)
	}
}

// maxRecycledGrowth is how far past its image's size a memory may have
// grown and still be recycled. The next process is charged for the whole
// memory, and its Go runtime, which knows only the snapshot's end of
// memory, grows it again from its current size when it needs more, so a
// recycled instance creeps upward by each process's growth; this bounds
// the creep, after which the instance is discarded for a fresh one.
func maxRecycledGrowth(size uint64) uint64 { return max(size/4, 4<<20) }

// reset makes the memory im followed by zero pages (see memImage).
func (m *ownedMemory) reset(im *memImage) error {
	r, ok := m.inner.(interface{ resetTo(*memImage) error })
	if !ok {
		return fmt.Errorf("%w: memory of type %T", errNotRecyclable, m.inner)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owner != nil || m.size < im.size || m.size > im.size+maxRecycledGrowth(im.size) {
		return fmt.Errorf("%w: memory of %d bytes, image of %d", errNotRecyclable, m.size, im.size)
	}
	return r.resetTo(im)
}
