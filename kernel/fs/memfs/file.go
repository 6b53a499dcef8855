package memfs

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// file is a regular file. Its data is a sparse set of pages: page i holds
// the bytes [i*PageSize, i*PageSize+len(page)); every byte below size that
// no page holds reads as zero. A page grows only as far as the highest byte
// written into it, so a ten-byte file costs ten bytes, not a page. The
// data is in the core: size, pages, and blocks (512-byte units of stored
// data, for Stat.Blocks).
type file struct {
	inode

	// opens counts this filesystem's open handles; guarded by inode.mu.
	opens int
}

// Stat returns the attributes with the size and the blocks actually
// stored.
func (f *file) Stat(context.Context) (vfs.Stat, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := f.statLocked()
	st.Size = f.c.size
	st.Blocks = f.c.blocks
	return st, nil
}

// SetAttr changes attributes, truncating or extending the file for
// SetSize. A size change is charged (or credited) to the quota first, so
// a failure leaves every attribute untouched.
func (f *file) SetAttr(_ context.Context, attr vfs.SetAttr) error {
	if f.fs.readOnly {
		return errno.EROFS
	}
	f.fs.forkMu.RLock()
	defer f.fs.forkMu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.fs.now()
	if attr.Mask&vfs.SetSize != 0 {
		if f.c.dead {
			return errno.ENOENT
		}
		if err := f.truncateLocked(attr.Size); err != nil {
			return err
		}
		// truncate(2) updates mtime and ctime even when the size stays.
		f.touchLocked(now)
	}
	f.setAttrLocked(attr, now)
	return nil
}

// truncateLocked sets the size, charging growth (holes included) to the
// quota, all or nothing, and freeing the pages beyond a smaller size.
func (f *file) truncateLocked(size int64) error {
	switch {
	case size < 0:
		return errno.EINVAL
	case size > MaxFileSize:
		return errno.EFBIG
	case size > f.c.size:
		if err := f.fs.chargeBytes(size - f.c.size); err != nil {
			return err
		}
	case size < f.c.size:
		f.pagesLocked().dropPagesFrom(size)
		f.fs.releaseBytes(f.c.size - size)
	}
	f.ownLocked().size = size
	return nil
}

// dropPagesFrom frees the data at and after off; the pages must be the
// core's own (pagesLocked).
func (f *core) dropPagesFrom(off int64) {
	first := off / PageSize
	if in := int(off % PageSize); in != 0 {
		if pg, ok := f.pages[first]; ok && len(pg) > in {
			f.setPage(first, pg[:in])
		}
		first++
	}
	last := (f.size - 1) / PageSize
	if last-first+1 <= int64(len(f.pages)) {
		// Fewer indices to visit than stored pages: walk the range.
		for i := first; i <= last; i++ {
			if pg, ok := f.pages[i]; ok {
				f.setPage(i, pg[:0])
			}
		}
		return
	}
	for i, pg := range f.pages {
		if i >= first {
			f.setPage(i, pg[:0])
		}
	}
}

// setPage replaces page i, keeping blocks in step; an empty page is
// deleted.
func (f *core) setPage(i int64, pg []byte) {
	f.blocks += blocksOf(len(pg)) - blocksOf(len(f.pages[i]))
	if len(pg) == 0 {
		delete(f.pages, i)
		delete(f.cowPages, i)
		return
	}
	f.pages[i] = pg
}

func blocksOf(n int) int64 { return int64((n + 511) / 512) }

// readLocked copies the data at off into p; the view's mu must be held.
func (f *core) readLocked(p []byte, off int64) int {
	if off >= f.size {
		return 0
	}
	if rest := f.size - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n := len(p)
	for len(p) > 0 {
		idx, in := off/PageSize, int(off%PageSize)
		chunk := min(len(p), PageSize-in)
		pg := f.pages[idx]
		c := 0
		if in < len(pg) {
			c = copy(p[:chunk], pg[in:])
		}
		clear(p[c:chunk])
		p = p[chunk:]
		off += int64(chunk)
	}
	return n
}

// writeLocked writes p at off, growing the file and charging the growth
// to the quota. If the quota has room for only part of the growth, the
// part that fits is written and its length returned with no error, as a
// short write(2); if nothing fits the error is ENOSPC and the file is
// unchanged. mu must be held exclusively.
func (f *file) writeLocked(p []byte, off int64, now time.Time) (int, error) {
	switch {
	case off < 0:
		return 0, errno.EINVAL
	case len(p) == 0:
		return 0, nil
	case off >= MaxFileSize:
		return 0, errno.EFBIG
	case f.c.dead:
		return 0, errno.EIO
	}
	if room := MaxFileSize - off; int64(len(p)) > room {
		p = p[:room]
	}
	end := off + int64(len(p))
	if size := f.c.size; end > size {
		got, err := f.fs.chargeBytesUpTo(end - size)
		if err != nil && (errno.Of(err) != errno.ENOSPC || off >= size) {
			return 0, err
		}
		// With no room at all, the part of p over existing data still
		// goes in.
		if newEnd := size + got; newEnd < end {
			if newEnd <= off {
				f.fs.releaseBytes(got)
				return 0, errno.ENOSPC
			}
			p = p[:newEnd-off]
			end = newEnd
		}
	}
	c := f.pagesLocked()
	if c.pages == nil {
		c.pages = make(map[int64][]byte)
	}
	n := len(p)
	for len(p) > 0 {
		idx, in := off/PageSize, int(off%PageSize)
		chunk := min(len(p), PageSize-in)
		pg := c.pages[idx]
		if _, cow := c.cowPages[idx]; cow {
			// Shared with a frozen core: write into a copy. growPage may
			// write past len within cap, so it needs the copy as well.
			pg = append(make([]byte, 0, max(len(pg), min(in+chunk, PageSize))), pg...)
			c.pages[idx] = pg
			delete(c.cowPages, idx)
		}
		if need := in + chunk; need > len(pg) {
			pg = growPage(pg, need)
			c.setPage(idx, pg)
		}
		copy(pg[in:], p[:chunk])
		p = p[chunk:]
		off += int64(chunk)
	}
	c.size = max(c.size, end)
	f.touchLocked(now)
	return n, nil
}

// growPage extends pg to length need (at most PageSize), zeroing the new
// bytes. Capacity doubles so that appending in small writes is linear,
// but never beyond a page.
func growPage(pg []byte, need int) []byte {
	if need <= cap(pg) {
		old := len(pg)
		pg = pg[:need]
		clear(pg[old:])
		return pg
	}
	c := min(max(need, 2*cap(pg), 64), PageSize)
	np := make([]byte, need, c)
	copy(np, pg)
	return np
}

// freeLocked credits the quota with the file's data and its inode once it
// has neither links nor handles, and forgets it; mu must be held
// exclusively and fs.forkMu shared.
func (f *file) freeLocked() {
	if f.c.dead {
		return
	}
	c := f.ownLocked()
	c.dead = true
	f.fs.releaseBytes(c.size)
	f.fs.releaseInode()
	// The size stays, so a racing Stat of the removed inode still reports
	// it as Linux would; only the data goes.
	c.pages, c.cowPages, c.blocks, c.shared = nil, nil, 0, false
	f.fs.forget(&f.inode)
}

// Open returns a handle on the file's data. A file whose last link and
// handle are gone is ENOENT: whoever still holds the inode lost a race
// with its removal.
func (f *file) Open(_ context.Context, flags vfs.OpenFlags) (vfs.Handle, error) {
	if flags.Writable() && f.fs.readOnly {
		return nil, errno.EROFS
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.c.dead {
		return nil, errno.ENOENT
	}
	f.opens++
	return &handle{f: f, flags: flags}, nil
}

// handle is an open regular file.
type handle struct {
	f      *file
	flags  vfs.OpenFlags
	closed atomic.Bool
}

// ReadAt reads at off; at or beyond the end it returns 0, nil.
func (h *handle) ReadAt(_ context.Context, p []byte, off int64) (int, error) {
	if h.closed.Load() || !h.flags.Readable() {
		return 0, errno.EBADF
	}
	if off < 0 {
		return 0, errno.EINVAL
	}
	h.f.mu.RLock()
	n := h.f.c.readLocked(p, off)
	h.f.mu.RUnlock()
	h.f.touchAtime()
	return n, nil
}

// WriteAt writes at off, growing the file as needed.
func (h *handle) WriteAt(_ context.Context, p []byte, off int64) (int, error) {
	if h.closed.Load() || !h.flags.Writable() {
		return 0, errno.EBADF
	}
	f := h.f
	f.fs.forkMu.RLock()
	defer f.fs.forkMu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writeLocked(p, off, f.fs.now())
}

// Append writes at the end of the file under the inode lock, so
// concurrent appenders never overwrite each other.
func (h *handle) Append(_ context.Context, p []byte) (int, int64, error) {
	if h.closed.Load() || !h.flags.Writable() {
		return 0, 0, errno.EBADF
	}
	f := h.f
	f.fs.forkMu.RLock()
	defer f.fs.forkMu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.writeLocked(p, f.c.size, f.fs.now())
	return n, f.c.size, err
}

// Sync does nothing: memory is as stable as this filesystem gets.
func (h *handle) Sync(context.Context) error {
	if h.closed.Load() {
		return errno.EBADF
	}
	return nil
}

// Close releases the handle; the last close of an unlinked file frees it.
// Closing twice is EBADF.
func (h *handle) Close() error {
	if h.closed.Swap(true) {
		return errno.EBADF
	}
	f := h.f
	f.fs.forkMu.RLock()
	defer f.fs.forkMu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opens--
	if f.opens == 0 && f.c.nlink == 0 {
		f.freeLocked()
	}
	return nil
}

// pagesLocked returns the core with a page map this filesystem may
// change, copying the core and then the map if it is shared with a frozen
// core; mu must be held exclusively and fs.forkMu shared. The pages
// themselves stay shared (cowPages) until each is written, so the first
// write after a fork costs one map entry per page and one page copy, not
// a copy of the file.
func (f *file) pagesLocked() *core {
	c := f.ownLocked()
	if !c.shared {
		return c
	}
	c.shared = false
	pages := make(map[int64][]byte, len(c.pages))
	cow := make(map[int64]struct{}, len(c.pages))
	for i, pg := range c.pages {
		pages[i] = pg
		cow[i] = struct{}{}
	}
	c.pages, c.cowPages = pages, cow
	return c
}
