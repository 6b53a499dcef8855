package procfs

import (
	"context"
	"sync"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// bytesHandle serves a file whose content was generated at open.
type bytesHandle struct {
	data []byte
}

var _ vfs.Handle = (*bytesHandle)(nil)

// ReadAt copies from the snapshot.
func (h *bytesHandle) ReadAt(_ context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if off >= int64(len(h.data)) {
		return 0, nil
	}
	return copy(p, h.data[off:]), nil
}

// WriteAt fails: the handle was opened read-only.
func (h *bytesHandle) WriteAt(context.Context, []byte, int64) (int, error) { return 0, errno.EBADF }

// Append fails: the handle was opened read-only.
func (h *bytesHandle) Append(context.Context, []byte) (int, int64, error) {
	return 0, 0, errno.EBADF
}

// Sync does nothing.
func (h *bytesHandle) Sync(context.Context) error { return nil }

// Close does nothing.
func (h *bytesHandle) Close() error { return nil }

// stringsHandle serves cmdline and environ: the strings, each followed by a
// NUL. It reads straight from the process's own slice instead of joining a
// copy, so opening the file costs nothing however large the arguments are
// (a guest opening its environment a thousand times must not cost the host
// a thousand copies of it). A cursor remembers where the last read ended,
// so sequential reads cost O(bytes read).
type stringsHandle struct {
	strs []string
	size int64

	mu    sync.Mutex
	idx   int   // index of the string the last read ended in
	start int64 // offset at which strs[idx] starts
}

var _ vfs.Handle = (*stringsHandle)(nil)

func newStringsHandle(strs []string) *stringsHandle {
	h := &stringsHandle{strs: strs}
	for _, s := range strs {
		h.size += int64(len(s)) + 1
	}
	return h
}

// ReadAt copies the bytes at off.
func (h *stringsHandle) ReadAt(_ context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if off >= h.size || len(p) == 0 {
		return 0, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	i, start := 0, int64(0)
	if h.start <= off {
		i, start = h.idx, h.start
	}
	for start+int64(len(h.strs[i]))+1 <= off {
		start += int64(len(h.strs[i])) + 1
		i++
	}
	n := 0
	for n < len(p) && i < len(h.strs) {
		s := h.strs[i]
		if within := off + int64(n) - start; within < int64(len(s)) {
			n += copy(p[n:], s[within:])
			continue
		}
		p[n] = 0
		n++
		start += int64(len(s)) + 1
		i++
	}
	h.idx, h.start = i, start
	return n, nil
}

// WriteAt fails: the handle was opened read-only.
func (h *stringsHandle) WriteAt(context.Context, []byte, int64) (int, error) { return 0, errno.EBADF }

// Append fails: the handle was opened read-only.
func (h *stringsHandle) Append(context.Context, []byte) (int, int64, error) {
	return 0, 0, errno.EBADF
}

// Sync does nothing.
func (h *stringsHandle) Sync(context.Context) error { return nil }

// Close does nothing.
func (h *stringsHandle) Close() error { return nil }
