package hostfs

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// DefaultMaxOwners is the ownership table size used when Options.MaxOwners
// is zero: about 20 MB of host memory at worst.
const DefaultMaxOwners = 1 << 18

// suidBits are the mode bits hostfs keeps virtual.
const suidBits = vfs.S_ISUID | vfs.S_ISGID

// ownerTable holds the virtual attributes of the package doc: the
// guest-visible owner, group, setuid and setgid bits of host inodes whose
// values differ from the defaults (Options.UID and Options.GID, neither bit).
// Entries are made when a guest creates a file as another owner, chowns, or
// sets setuid/setgid, and dropped when the guest removes the file's last
// link. The table is bounded: beyond Options.MaxOwners entries an operation
// that needs a new one fails with ENOSPC. It lives as long as the FS, so a
// new mount of the same directory starts from the defaults. An entry the
// host orphans (by deleting the file behind the guest's back) lingers, and
// a file the host then creates with the same inode number inherits it;
// files the guest creates always overwrite their entry.
type ownerTable struct {
	mu  sync.Mutex
	m   map[ownerKey]owner
	max int
	def owner
}

// ownerKey identifies a host inode.
type ownerKey struct{ dev, ino uint64 }

func keyOf(st *unix.Stat_t) ownerKey { return ownerKey{dev: st.Dev, ino: st.Ino} }

// owner is the virtual part of a file's attributes.
type owner struct {
	uid, gid uint32
	suid     uint32 // S_ISUID and S_ISGID bits
}

func newOwnerTable(def owner, max int) *ownerTable {
	return &ownerTable{m: make(map[ownerKey]owner), max: max, def: def}
}

func (t *ownerTable) get(k ownerKey) owner {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.m[k]; ok {
		return o
	}
	return t.def
}

// set records o for k; the default owner needs no entry.
func (t *ownerTable) set(k ownerKey, o owner) error {
	return t.update(k, func(owner) owner { return o })
}

// update replaces k's owner with f of it, atomically.
func (t *ownerTable) update(k ownerKey, f func(o owner) owner) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, ok := t.m[k]
	if !ok {
		cur = t.def
	}
	o := f(cur)
	if o == t.def {
		delete(t.m, k)
		return nil
	}
	if !ok && len(t.m) >= t.max {
		return errno.ENOSPC
	}
	t.m[k] = o
	return nil
}

func (t *ownerTable) forget(k ownerKey) {
	t.mu.Lock()
	delete(t.m, k)
	t.mu.Unlock()
}

func (t *ownerTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// newOwner is the virtual owner of a file created with opts.
func newOwner(opts vfs.CreateOptions) owner {
	return owner{uid: opts.UID, gid: opts.GID, suid: opts.Mode & suidBits}
}
