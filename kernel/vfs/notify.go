package vfs

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

// Watches: the kernel's inotify.
//
// Every mutation of the namespace passes through the VFS, whoever makes it
// (a guest process of any runtime, or the embedder through vm.FS()), so the
// VFS is where changes are reported. A WatchSet is an inotify instance: an
// open file whose reads return struct inotify_event records, with Linux's
// layout and mask bits, for the watches added to it. Watches are kept by
// canonical guest path (filesystems here have no stable inode identity
// across layers): a watch follows its object through renames, as an
// inotify watch follows its inode, and ends (IN_IGNORED) when the object is
// removed or replaced. A write through a descriptor is reported under the
// path the descriptor was opened by.
//
// Bounds. A VFS holds at most WatchLimits.PerVM watches and one owner (a
// process) at most WatchLimits.PerOwner; past either, Add fails with
// ENOSPC, as inotify_add_watch does at max_user_watches. A set queues at
// most MaxQueued events and MaxQueuedBytes bytes, one watch at most
// MaxQueuedPerWatch of them. An event identical to the last one queued is
// dropped (inotify's coalescing). Past a bound, events are dropped and one
// IN_Q_OVERFLOW record takes their place until it is read: with wd -1 when
// the set was full, with the watch's wd when that watch was.
//
// Permission. Adding a watch needs read permission on the object (DAC and
// the policy's read, or readdir for a directory), checked for the caller
// at Add time as Linux does. A recursive watch also reports entries of
// directories below it; each such event is delivered only if the watcher
// may still read that directory (its search path, DAC and the policy),
// checked with the watcher's identity and cached until a directory's mode,
// owner or place changes.

// Event bits of a watch event, with inotify(7)'s values.
const (
	InModify     uint32 = 0x00000002 // file data was written (or truncated)
	InAttrib     uint32 = 0x00000004 // metadata changed: mode, owner, times, link count
	InMovedFrom  uint32 = 0x00000040 // an entry was renamed away from the directory
	InMovedTo    uint32 = 0x00000080 // an entry was renamed into the directory
	InCreate     uint32 = 0x00000100 // an entry was created in the directory
	InDelete     uint32 = 0x00000200 // an entry was removed from the directory
	InDeleteSelf uint32 = 0x00000400 // the watched object was removed or replaced
	InMoveSelf   uint32 = 0x00000800 // the watched object was renamed
	InQOverflow  uint32 = 0x00004000 // events were dropped
	InIgnored    uint32 = 0x00008000 // the watch ended
	InIsDir      uint32 = 0x40000000 // the subject of the event is a directory
)

// WatchEventHeaderSize is the size of struct inotify_event without its
// name: wd, mask, cookie, len, each 32 bits little-endian.
const WatchEventHeaderSize = 16

// WatchLimits bound the watches of one VFS.
type WatchLimits struct {
	// PerOwner is how many watches one owner (a process) may hold.
	PerOwner int
	// PerVM is how many watches the whole VFS may hold.
	PerVM int
}

// DefaultWatchLimits are used for zero fields of WatchLimits.
var DefaultWatchLimits = WatchLimits{PerOwner: 8192, PerVM: 65536}

// Defaults of WatchSetOptions (inotify's max_queued_events is 16384).
const (
	DefaultWatchQueue         = 16384
	DefaultWatchQueueBytes    = 1 << 20
	DefaultWatchQueuePerWatch = 4096
)

// recursiveCacheMax bounds the directories whose permission a recursive
// watch remembers.
const recursiveCacheMax = 256

// WatchSetOptions configure a WatchSet.
type WatchSetOptions struct {
	// Owner is whose per-owner limit the set's watches count against (a
	// process); nil counts them against the set itself.
	Owner any
	// MaxQueued, MaxQueuedBytes and MaxQueuedPerWatch bound the queue;
	// zero means the defaults above.
	MaxQueued         int
	MaxQueuedBytes    int
	MaxQueuedPerWatch int
}

// WatchOptions describe one watch.
type WatchOptions struct {
	// Recursive reports the whole tree below a directory, naming entries
	// by their path relative to it ("sub/file").
	Recursive bool
	// NoFollow watches a final symlink itself (IN_DONT_FOLLOW).
	NoFollow bool
}

// notifier is the watch registry of a VFS. Its zero value is ready.
type notifier struct {
	active    atomic.Int64 // watches registered: the fast path of every hook
	recursive atomic.Int64 // recursive ones among them
	cookie    atomic.Uint32
	permGen   atomic.Uint64 // bumped when a directory's permission or place changes
	nextIno   atomic.Uint64

	// mu guards the maps, the limits and watch.path / watch.linked. It is
	// never held while a set's lock is taken (the order is set, then
	// notifier).
	mu     sync.RWMutex
	limits WatchLimits
	byPath map[string][]*watch
	owners map[any]int
}

type watch struct {
	set       *WatchSet
	wd        int32
	recursive bool
	owner     any

	// guarded by notifier.mu
	path   string
	linked bool

	// The watcher's identity, for the permission checks of events below a
	// recursive watch: the context carries the process for the policy.
	ctx    context.Context
	caller Caller

	// guarded by set.mu
	queued     int
	overflowed bool

	permMu  sync.Mutex
	permGen uint64
	allowed map[string]bool
}

// SetWatchLimits replaces the watch limits; zero fields mean the defaults.
// Watches already held are kept.
func (v *VFS) SetWatchLimits(l WatchLimits) {
	v.watch.mu.Lock()
	v.watch.limits = l
	v.watch.mu.Unlock()
}

// Watches returns the number of watches held in the VFS.
func (v *VFS) Watches() int { return int(v.watch.active.Load()) }

func (n *notifier) limitsLocked() WatchLimits {
	l := n.limits
	if l.PerOwner <= 0 {
		l.PerOwner = DefaultWatchLimits.PerOwner
	}
	if l.PerVM <= 0 {
		l.PerVM = DefaultWatchLimits.PerVM
	}
	return l
}

// linkLocked registers w at path, or fails with ENOSPC at a limit.
func (n *notifier) linkLocked(w *watch, path string) error {
	l := n.limitsLocked()
	if n.active.Load() >= int64(l.PerVM) || n.owners[w.owner] >= l.PerOwner {
		return errno.ENOSPC
	}
	if n.byPath == nil {
		n.byPath = map[string][]*watch{}
		n.owners = map[any]int{}
	}
	w.path, w.linked = path, true
	n.byPath[path] = append(n.byPath[path], w)
	n.owners[w.owner]++
	n.active.Add(1)
	if w.recursive {
		n.recursive.Add(1)
	}
	return nil
}

// unlinkLocked removes w from the registry if it is still there.
func (n *notifier) unlinkLocked(w *watch) {
	if !w.linked {
		return
	}
	w.linked = false
	ws := n.byPath[w.path]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(n.byPath, w.path)
	} else {
		n.byPath[w.path] = ws
	}
	if n.owners[w.owner]--; n.owners[w.owner] <= 0 {
		delete(n.owners, w.owner)
	}
	n.active.Add(-1)
	if w.recursive {
		n.recursive.Add(-1)
	}
}

// WatchSet is an inotify instance: an open file that reads as a stream of
// struct inotify_event records for the watches added to it. Closing its
// last reference ends every watch.
type WatchSet struct {
	Refs
	StreamDefaults
	v     *VFS
	opts  WatchSetOptions
	ino   uint64
	born  time.Time
	flags atomic.Uint32

	mu         sync.Mutex
	watches    map[int32]*watch
	nextWd     int32
	queue      []queued
	head       int
	bytes      int
	overflowed bool
	closed     bool
	q          waiter.Queue
}

type queued struct {
	w      *watch // nil for a set overflow record
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

// size is the record's length on the wire: the header and the name with
// a NUL, padded to the header's size as Linux pads it.
func (e *queued) size() int {
	if e.name == "" {
		return WatchEventHeaderSize
	}
	return WatchEventHeaderSize + padName(len(e.name))
}

func padName(n int) int {
	return (n + WatchEventHeaderSize) &^ (WatchEventHeaderSize - 1)
}

// NewWatchSet returns a new, empty set holding one reference.
func (v *VFS) NewWatchSet(opts WatchSetOptions) *WatchSet {
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = DefaultWatchQueue
	}
	if opts.MaxQueuedBytes <= 0 {
		opts.MaxQueuedBytes = DefaultWatchQueueBytes
	}
	if opts.MaxQueuedPerWatch <= 0 {
		opts.MaxQueuedPerWatch = DefaultWatchQueuePerWatch
	}
	s := &WatchSet{v: v, opts: opts, ino: v.watch.nextIno.Add(1), born: v.opts.Now(), watches: map[int32]*watch{}}
	if s.opts.Owner == nil {
		s.opts.Owner = s
	}
	s.flags.Store(uint32(O_RDONLY))
	s.InitRefs(s.release)
	return s
}

func (s *WatchSet) release() {
	s.mu.Lock()
	s.closed = true
	ws := s.watches
	s.watches = nil
	s.queue, s.head, s.bytes = nil, 0, 0
	n := &s.v.watch
	n.mu.Lock()
	for _, w := range ws {
		n.unlinkLocked(w)
	}
	n.mu.Unlock()
	s.mu.Unlock()
}

// Add watches path for c and returns the watch descriptor. As
// inotify_add_watch, adding an object the set already watches (the same
// canonical path, with the same recursion) returns the existing watch, so
// its events are queued (and coalesced) once.
func (s *WatchSet) Add(ctx context.Context, c *Caller, path string, opts WatchOptions) (int32, error) {
	r, err := s.v.watchable(ctx, c, path, !opts.NoFollow)
	if err != nil {
		return -1, err
	}
	t, err := inodeType(ctx, r.node.ino)
	if err != nil {
		return -1, errno.Path("inotify_add_watch", path, err)
	}
	w := &watch{set: s, recursive: opts.Recursive && t == TypeDir, owner: s.opts.Owner,
		ctx: context.WithoutCancel(ctx), caller: *c}
	w.caller.Groups = append([]uint32(nil), c.Groups...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return -1, errno.EBADF
	}
	n := &s.v.watch
	n.mu.RLock()
	for wd, x := range s.watches {
		if x.path == r.node.path && x.recursive == w.recursive && x.linked {
			n.mu.RUnlock()
			return wd, nil
		}
	}
	n.mu.RUnlock()
	// Descriptors are positive and not reused while the set lives, as
	// Linux allocates them (wrapping after 2^31 only).
	for {
		s.nextWd++
		if s.nextWd <= 0 {
			s.nextWd = 1
		}
		if _, used := s.watches[s.nextWd]; !used {
			break
		}
	}
	w.wd = s.nextWd
	n.mu.Lock()
	err = n.linkLocked(w, r.node.path)
	n.mu.Unlock()
	if err != nil {
		return -1, errno.Path("inotify_add_watch", path, err)
	}
	s.watches[w.wd] = w
	return w.wd, nil
}

// Remove ends the watch wd; an IN_IGNORED record follows in the stream.
// An unknown wd is EINVAL.
func (s *WatchSet) Remove(wd int32) error {
	s.mu.Lock()
	w, ok := s.watches[wd]
	if !ok {
		s.mu.Unlock()
		return errno.EINVAL
	}
	delete(s.watches, wd)
	n := &s.v.watch
	n.mu.Lock()
	n.unlinkLocked(w)
	n.mu.Unlock()
	s.appendLocked(queued{w: w, wd: wd, mask: InIgnored})
	s.mu.Unlock()
	s.q.Notify(waiter.EventIn)
	return nil
}

// Len returns the number of watches in the set.
func (s *WatchSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches)
}

// watchable resolves path for a watch and applies its permission checks.
func (v *VFS) watchable(ctx context.Context, c *Caller, path string, follow bool) (*resolution, error) {
	r, err := v.existing(ctx, c, "inotify_add_watch", path, follow)
	if err != nil {
		return nil, err
	}
	if r.magic != nil {
		return nil, errno.Path("inotify_add_watch", path, errno.EINVAL)
	}
	t, err := inodeType(ctx, r.node.ino)
	if err != nil {
		return nil, errno.Path("inotify_add_watch", path, err)
	}
	op := OpRead
	if t == TypeDir {
		op = OpReaddir
	}
	if err := v.authorize(ctx, op, r.node.path); err != nil {
		return nil, err
	}
	if err := v.checkAccess(ctx, c, r.node.ino, mayRead); err != nil {
		return nil, errno.Path("inotify_add_watch", path, err)
	}
	return r, nil
}

// mayList reports whether the owner of the recursive watch w may learn
// the names in dir, a directory below the watched one.
func (v *VFS) mayList(w *watch, dir string) bool {
	gen := v.watch.permGen.Load()
	w.permMu.Lock()
	if w.permGen != gen || w.allowed == nil || len(w.allowed) >= recursiveCacheMax {
		w.allowed, w.permGen = map[string]bool{}, gen
	}
	ok, hit := w.allowed[dir]
	w.permMu.Unlock()
	if hit {
		return ok
	}
	r, err := v.watchable(w.ctx, &w.caller, dir, true)
	ok = err == nil && r.node.path == dir
	w.permMu.Lock()
	if w.permGen == gen {
		w.allowed[dir] = ok
	}
	w.permMu.Unlock()
	return ok
}

// push queues an event for w, applying the coalescing and the bounds.
func (s *WatchSet) push(w *watch, mask, cookie uint32, name string) {
	s.mu.Lock()
	if s.closed || s.watches[w.wd] != w {
		s.mu.Unlock()
		return
	}
	e := queued{w: w, wd: w.wd, mask: mask, cookie: cookie, name: name}
	if s.head < len(s.queue) {
		if l := s.queue[len(s.queue)-1]; l.w == w && l.mask == mask && l.cookie == cookie && l.name == name {
			s.mu.Unlock()
			return
		}
	}
	switch {
	case w.queued >= s.opts.MaxQueuedPerWatch:
		if !w.overflowed {
			w.overflowed = true
			s.appendLocked(queued{w: w, wd: w.wd, mask: InQOverflow})
		}
	case len(s.queue)-s.head >= s.opts.MaxQueued || s.bytes+e.size() > s.opts.MaxQueuedBytes:
		if !s.overflowed {
			s.overflowed = true
			s.appendLocked(queued{wd: -1, mask: InQOverflow})
		}
	default:
		s.appendLocked(e)
	}
	s.mu.Unlock()
	s.q.Notify(waiter.EventIn)
}

func (s *WatchSet) appendLocked(e queued) {
	if s.closed {
		return
	}
	s.queue = append(s.queue, e)
	s.bytes += e.size()
	if e.w != nil {
		e.w.queued++
	}
}

// end finishes a watch whose object went away: w was already unlinked
// from the registry; the set forgets it and queues IN_IGNORED.
func (s *WatchSet) end(w *watch) {
	s.mu.Lock()
	if s.closed || s.watches[w.wd] != w {
		s.mu.Unlock()
		return
	}
	delete(s.watches, w.wd)
	s.appendLocked(queued{w: w, wd: w.wd, mask: InIgnored})
	s.mu.Unlock()
	s.q.Notify(waiter.EventIn)
}

// Read returns whole event records; it blocks until one is queued unless
// the set is non-blocking (EAGAIN). A buffer too small for the first
// record is EINVAL, as on Linux.
func (s *WatchSet) Read(ctx context.Context, p []byte) (int, error) {
	for {
		n, err := s.TryRead(p)
		if err != errno.EAGAIN || s.Flags()&O_NONBLOCK != 0 {
			return n, err
		}
		if _, err := waiter.Wait(ctx, s, waiter.EventIn); err != nil {
			return 0, err
		}
	}
}

// TryRead is Read that never blocks: EAGAIN when nothing is queued.
func (s *WatchSet) TryRead(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.drainLocked(p)
	s.mu.Unlock()
	if n == 0 && err == nil {
		return 0, errno.EAGAIN
	}
	return n, err
}

func (s *WatchSet) drainLocked(p []byte) (int, error) {
	off := 0
	for s.head < len(s.queue) {
		e := &s.queue[s.head]
		sz := e.size()
		if off+sz > len(p) {
			if off == 0 {
				return 0, errno.EINVAL
			}
			break
		}
		binary.LittleEndian.PutUint32(p[off:], uint32(e.wd))
		binary.LittleEndian.PutUint32(p[off+4:], e.mask)
		binary.LittleEndian.PutUint32(p[off+8:], e.cookie)
		binary.LittleEndian.PutUint32(p[off+12:], uint32(sz-WatchEventHeaderSize))
		name := p[off+WatchEventHeaderSize : off+sz]
		clear(name[copy(name, e.name):])
		off += sz
		s.bytes -= sz
		if e.w != nil {
			e.w.queued--
			if e.mask == InQOverflow {
				e.w.overflowed = false
			}
		} else {
			s.overflowed = false
		}
		*e = queued{}
		s.head++
	}
	if s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	} else if s.head > 1024 && s.head > len(s.queue)/2 {
		s.queue = append(s.queue[:0], s.queue[s.head:]...)
		s.head = 0
	}
	return off, nil
}

// Buffered returns the bytes of the queued records (FIONREAD).
func (s *WatchSet) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Write fails with EINVAL, as on an inotify descriptor.
func (s *WatchSet) Write(context.Context, []byte) (int, error) { return 0, errno.EINVAL }

// Stat describes the set as Linux describes an anonymous inode.
func (s *WatchSet) Stat(context.Context) (Stat, error) {
	return Stat{Ino: s.ino, Mode: 0o600, Nlink: 1, Blksize: 4096, Atime: s.born, Mtime: s.born, Ctime: s.born}, nil
}

// SetAttr fails with EINVAL.
func (s *WatchSet) SetAttr(context.Context, SetAttr) error { return errno.EINVAL }

// Flags returns the access mode and status flags.
func (s *WatchSet) Flags() OpenFlags { return OpenFlags(s.flags.Load()) }

// SetFlags changes O_NONBLOCK.
func (s *WatchSet) SetFlags(fl OpenFlags) error {
	for {
		old := s.flags.Load()
		nw := old&^uint32(statusFlags) | uint32(fl&statusFlags)
		if s.flags.CompareAndSwap(old, nw) {
			return nil
		}
	}
}

// Path is Linux's name for an inotify descriptor.
func (s *WatchSet) Path() string { return "anon_inode:inotify" }

// Readiness reports EventIn while records are queued.
func (s *WatchSet) Readiness(mask waiter.EventMask) waiter.EventMask {
	s.mu.Lock()
	ready := s.head < len(s.queue)
	s.mu.Unlock()
	if ready {
		return mask & waiter.EventIn
	}
	return 0
}

// EventRegister adds a waiter.
func (s *WatchSet) EventRegister(e *waiter.Entry) { s.q.EventRegister(e) }

// EventUnregister removes a waiter.
func (s *WatchSet) EventUnregister(e *waiter.Entry) { s.q.EventUnregister(e) }

// --- hooks: the mutation paths of the VFS report what they did ---

type match struct {
	w    *watch
	name string
	mask uint32
	dir  string // for events below a recursive watch: the directory to check
}

// parentOf returns the directory holding path (an absolute, canonical
// path other than "/").
func parentOf(path string) (dir, name string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "/", path
	}
	if i == 0 {
		return "/", path[1:]
	}
	return path[:i], path[i+1:]
}

// notifyEntry reports an event on the entry at path: watches of its
// directory get mask with the entry's name, recursive watches above get
// it with the path relative to them, and watches of path itself get self
// (none when 0).
func (v *VFS) notifyEntry(path string, mask, self, cookie uint32) {
	n := &v.watch
	if n.active.Load() == 0 {
		return
	}
	var ms []match
	n.mu.RLock()
	// Linux reports to the directory's watches first, then to the
	// object's own.
	dir, name := parentOf(path)
	if path != "/" {
		for _, w := range n.byPath[dir] {
			ms = append(ms, match{w: w, name: name, mask: mask})
		}
	}
	if self != 0 {
		for _, w := range n.byPath[path] {
			ms = append(ms, match{w: w, mask: self})
		}
	}
	if path != "/" {
		if n.recursive.Load() > 0 {
			for a := dir; a != "/"; {
				a, _ = parentOf(a)
				for _, w := range n.byPath[a] {
					if w.recursive {
						rel := path[len(a)+1:]
						if a == "/" {
							rel = path[1:]
						}
						ms = append(ms, match{w: w, name: rel, mask: mask, dir: dir})
					}
				}
			}
		}
	}
	n.mu.RUnlock()
	for _, m := range ms {
		if m.dir != "" && !v.mayList(m.w, m.dir) {
			continue
		}
		m.w.set.push(m.w, m.mask, cookie, m.name)
	}
}

func dirBit(isDir bool) uint32 {
	if isDir {
		return InIsDir
	}
	return 0
}

// notifyCreate reports a new entry at path.
func (v *VFS) notifyCreate(path string, isDir bool) {
	v.notifyEntry(path, InCreate|dirBit(isDir), 0, 0)
}

// notifyChange reports changed data (InModify) or metadata (InAttrib) of
// the object at path.
func (v *VFS) notifyChange(path string, mask uint32, isDir bool) {
	if v.watch.active.Load() == 0 {
		return
	}
	if isDir && mask&InAttrib != 0 {
		v.watch.permGen.Add(1)
	}
	v.notifyEntry(path, mask|dirBit(isDir), mask, 0)
}

// notifyAttr reports a SetAttr on path.
func (v *VFS) notifyAttr(path string, m SetAttrMask, isDir bool) {
	var mask uint32
	if m&SetSize != 0 {
		mask |= InModify
	}
	if m&^(SetSize|SetCtime) != 0 {
		mask |= InAttrib
	}
	if mask != 0 {
		v.notifyChange(path, mask, isDir)
	}
}

// notifyRemoved reports that the entry at path was removed: its watches
// end, and its directory hears of it.
func (v *VFS) notifyRemoved(path string, isDir bool) {
	n := &v.watch
	if n.active.Load() == 0 {
		return
	}
	n.mu.Lock()
	dead := n.byPath[path]
	for _, w := range append([]*watch(nil), dead...) {
		n.unlinkLocked(w)
	}
	n.mu.Unlock()
	for _, w := range dead {
		if !isDir {
			w.set.push(w, InAttrib, 0, "")
		}
		w.set.push(w, InDeleteSelf, 0, "")
		w.set.end(w)
	}
	v.notifyEntry(path, InDelete|dirBit(isDir), 0, 0)
}

// notifyRename reports a rename: the two directories hear of it with one
// cookie, watches of the moved object (and below it) follow it to its new
// path, and watches of a replaced target end.
func (v *VFS) notifyRename(oldPath, newPath string, isDir, replaced bool) {
	n := &v.watch
	if n.active.Load() == 0 {
		return
	}
	if isDir {
		n.permGen.Add(1)
	}
	cookie := n.cookie.Add(1)
	var dead, moved []*watch
	n.mu.Lock()
	if replaced {
		dead = n.byPath[newPath]
		for _, w := range append([]*watch(nil), dead...) {
			n.unlinkLocked(w)
		}
	}
	var keys []string
	for k := range n.byPath {
		if k == oldPath || strings.HasPrefix(k, oldPath+"/") {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		ws := n.byPath[k]
		delete(n.byPath, k)
		nk := newPath + k[len(oldPath):]
		for _, w := range ws {
			w.path = nk
		}
		n.byPath[nk] = append(n.byPath[nk], ws...)
		if k == oldPath {
			moved = ws
		}
	}
	n.mu.Unlock()
	bit := dirBit(isDir)
	v.notifyEntry(oldPath, InMovedFrom|bit, 0, cookie)
	v.notifyEntry(newPath, InMovedTo|bit, 0, cookie)
	for _, w := range moved {
		w.set.push(w, InMoveSelf, 0, "")
	}
	for _, w := range dead {
		w.set.push(w, InDeleteSelf, 0, "")
		w.set.end(w)
	}
}
