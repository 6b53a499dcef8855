package vfs

import (
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
)

// Quota bounds the storage of a VM's in-memory filesystems: file data bytes
// and inode count. One Quota is shared by every memory-backed filesystem of
// a VM (the overlay's upper layer, /tmp, memory mounts), so a guest cannot
// dodge the limit by writing elsewhere. Exceeding it is ENOSPC, and the
// filesystem stays fully usable: releasing data makes room again.
//
// A nil *Quota is unlimited.
type Quota struct {
	maxBytes  int64
	maxInodes int64
	bytes     atomic.Int64
	inodes    atomic.Int64
}

// NewQuota returns a quota of maxBytes file-data bytes and maxInodes inodes;
// a value <= 0 means unlimited for that dimension.
func NewQuota(maxBytes, maxInodes int64) *Quota {
	return &Quota{maxBytes: maxBytes, maxInodes: maxInodes}
}

// ChargeBytes reserves n bytes, or fails with ENOSPC and reserves nothing.
func (q *Quota) ChargeBytes(n int64) error {
	if q == nil || n <= 0 {
		return nil
	}
	return charge(&q.bytes, q.maxBytes, n)
}

// ReleaseBytes returns n bytes.
func (q *Quota) ReleaseBytes(n int64) {
	if q != nil && n > 0 {
		q.bytes.Add(-n)
	}
}

// ChargeInode reserves one inode, or fails with ENOSPC.
func (q *Quota) ChargeInode() error {
	if q == nil {
		return nil
	}
	return charge(&q.inodes, q.maxInodes, 1)
}

// ReleaseInode returns one inode.
func (q *Quota) ReleaseInode() {
	if q != nil {
		q.inodes.Add(-1)
	}
}

// ChargeInodes reserves n inodes at once, or fails with ENOSPC and
// reserves nothing: a fork charges a whole tree in one step.
func (q *Quota) ChargeInodes(n int64) error {
	if q == nil || n <= 0 {
		return nil
	}
	return charge(&q.inodes, q.maxInodes, n)
}

// ReleaseInodes returns n inodes.
func (q *Quota) ReleaseInodes(n int64) {
	if q != nil && n > 0 {
		q.inodes.Add(-n)
	}
}

// Usage reports the bytes and inodes in use and the limits (0 = none).
func (q *Quota) Usage() (bytes, maxBytes, inodes, maxInodes int64) {
	if q == nil {
		return 0, 0, 0, 0
	}
	return q.bytes.Load(), q.maxBytes, q.inodes.Load(), q.maxInodes
}

func charge(v *atomic.Int64, limit, n int64) error {
	for {
		cur := v.Load()
		if limit > 0 && (cur+n > limit || cur+n < cur) {
			return errno.ENOSPC
		}
		if v.CompareAndSwap(cur, cur+n) {
			return nil
		}
	}
}
