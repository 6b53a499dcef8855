package hostfs

import (
	"context"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Statfs values of a host mount. They are synthetic on purpose: the host
// disk's size and live free space are host facts (invariant 1) and a
// side channel (another tenant's writes show in them).
const (
	// StatfsMagic is what Statfs reports as the filesystem type: Linux's
	// V9FS_MAGIC, what a guest of a VM sees for a shared host directory.
	StatfsMagic = 0x01021997
	// UnboundedCapacity is the size Statfs reports for a writable mount
	// without Options.MaxBytes.
	UnboundedCapacity = 1 << 40
	statfsBlock       = 4096
	// dirCost is what a directory is charged. Not its host st_size: on
	// ext4 a directory grows with its entries and never shrinks, so
	// refunding that size at rmdir would refund more than was charged.
	dirCost = 4096
)

// Statfs reports synthetic capacity, never the host filesystem's: a
// read-only mount is full and empty (0 blocks, as a pseudo filesystem);
// a writable one is Options.MaxBytes large (UnboundedCapacity without a
// quota) with that less the mount's growth free.
func (fs *FS) Statfs(context.Context) (vfs.Statfs, error) {
	if err := fs.enter(); err != nil {
		return vfs.Statfs{}, err
	}
	defer fs.exit()
	st := vfs.Statfs{Type: StatfsMagic, BlockSize: statfsBlock, NameMax: vfs.NameMax, ReadOnly: fs.opts.ReadOnly}
	if fs.opts.ReadOnly {
		return st, nil
	}
	capacity := fs.opts.MaxBytes
	if capacity == 0 {
		capacity = UnboundedCapacity
	}
	used := max(fs.quota.usage(), 0)
	st.Blocks = uint64(capacity / statfsBlock)
	st.BlocksFree = uint64(max(capacity-used, 0) / statfsBlock)
	return st, nil
}

// quota accounts the mount's growth: the apparent size (st_size, so a
// sparse file counts at its full length) of regular files the guest grew
// or shrank, of symlinks (their target's length) and directories (dirCost
// each) it made or removed, since the
// mount was made. Content already there counts as zero; removing it makes
// room (the quota bounds how much the guest adds to the host disk, net).
// Changes the host makes meanwhile are not seen.
//
// Every size change is made under mu, between a stat before and after, so
// concurrent writers of one file cannot be charged twice or not at all. A
// file unlinked while open keeps its charge until its last handle closes,
// when its final size is refunded, as its blocks are freed on Linux.
type quota struct {
	max  int64 // 0: unlimited
	mu   sync.Mutex
	used int64
	open map[ownerKey]int // open handles per host inode
}

func newQuota(max int64) *quota { return &quota{max: max, open: make(map[ownerKey]int)} }

func (q *quota) usage() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.used
}

// room is how many bytes may still be added; -1 is unlimited. Called
// with mu held.
func (q *quota) room() int64 {
	if q.max == 0 {
		return -1
	}
	return max(q.max-q.used, 0)
}

// grow runs change, which changes the size of a file from the size a
// stat (through stat) gave under mu, with the room left (-1 unlimited),
// and charges the difference the file's size shows afterwards.
func (q *quota) grow(stat func(*unix.Stat_t) error, change func(size, room int64) error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	var before unix.Stat_t
	if err := stat(&before); err != nil {
		return err
	}
	err := change(before.Size, q.room())
	var after unix.Stat_t
	if stat(&after) == nil && after.Ino == before.Ino && after.Dev == before.Dev {
		q.used += after.Size - before.Size
	}
	return err
}

// fits trims a write of n bytes at off into a file of size, with room
// bytes of quota left (-1 unlimited), to what the quota allows: the file
// may end at size+room at most. ENOSPC when nothing fits.
func fits(n int, off, size, room int64) (int, error) {
	if room < 0 || off+int64(n) <= size {
		return n, nil
	}
	end := size + room
	if off >= end {
		return 0, errno.ENOSPC
	}
	return int(min(int64(n), end-off)), nil
}

// charge adds delta (a made or removed directory or symlink).
func (q *quota) charge(delta int64) {
	q.mu.Lock()
	q.used += delta
	q.mu.Unlock()
}

// opened and closed track open handles of a host inode. closed refunds a
// file whose last link is gone once its last handle closes; st is its
// stat taken just before the descriptor was closed.
func (q *quota) opened(k ownerKey) {
	q.mu.Lock()
	q.open[k]++
	q.mu.Unlock()
}

func (q *quota) closed(k ownerKey, st *unix.Stat_t, statOK bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.open[k]--; q.open[k] > 0 {
		return
	}
	delete(q.open, k)
	if statOK && st.Nlink == 0 {
		q.used -= st.Size
	}
}

// removed refunds a file about to lose the name whose stat is st: a
// regular file's size when that was its last link and no handle holds it
// (else closed will), a directory's or symlink's size always.
func (q *quota) removed(st *unix.Stat_t) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Nlink <= 1 && q.open[keyOf(st)] == 0 {
			q.used -= st.Size
		}
	case unix.S_IFDIR:
		q.used -= dirCost
	case unix.S_IFLNK:
		q.used -= st.Size
	}
}
