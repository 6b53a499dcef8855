package secexec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// WatchOp is what happened to a watched file.
type WatchOp string

// The operations a Watcher reports.
const (
	WatchCreate WatchOp = "create" // an entry was created (or a hard link made)
	WatchWrite  WatchOp = "write"  // a file's data was written or truncated
	WatchAttrib WatchOp = "attrib" // mode, owner, times or link count changed
	WatchRemove WatchOp = "remove" // an entry, or the watched path itself, was removed
	// WatchRenameFrom and WatchRenameTo are the two halves of a rename
	// within the watched tree; Cookie pairs them.
	WatchRenameFrom WatchOp = "rename_from"
	WatchRenameTo   WatchOp = "rename_to"
	WatchMoveSelf   WatchOp = "move_self" // the watched path itself was renamed
	// WatchOverflow means events were dropped because the reader lagged
	// (the kernel's queue for the watch was full): rescan what matters.
	WatchOverflow WatchOp = "overflow"
	// WatchEnded means the watch ended (its path was removed or
	// replaced); no events follow.
	WatchEnded WatchOp = "ended"
)

// WatchEvent is one change under a watched path.
type WatchEvent struct {
	Op WatchOp `json:"op"`
	// Name is the entry's path relative to the watched path ("sub/f"),
	// empty when the event is about the watched path itself.
	Name  string `json:"name,omitempty"`
	IsDir bool   `json:"is_dir,omitempty"`
	// Cookie pairs a rename's two halves (0 otherwise).
	Cookie uint32 `json:"cookie,omitempty"`
}

// WatchOptions configure FS.Watch.
type WatchOptions struct {
	// Recursive reports the whole tree below a directory.
	Recursive bool
}

// Watcher is a watch on a path in a VM (see FS.Watch).
type Watcher struct {
	rc     io.ReadCloser
	mu     sync.Mutex // one Next at a time
	hdr    [vfs.WatchEventHeaderSize]byte
	once   sync.Once
	closed atomic.Bool
}

// maxWatchName bounds an event's name as the stream carries it (the
// kernel's longest path, padded): a larger length is a corrupt stream.
const maxWatchName = 8192

// Watch watches name, a file or directory of the VM, and returns a
// Watcher whose Next reads its events in order. Changes made by anyone —
// guest processes of any runtime, or the embedder through FS — are
// reported. The kernel queues a bounded number of events for a watcher
// that does not keep up; past it they are dropped and a WatchOverflow
// event takes their place. Close the Watcher when done.
func (f *FS) Watch(ctx context.Context, name string, opts *WatchOptions) (*Watcher, error) {
	if opts == nil {
		opts = &WatchOptions{}
	}
	if err := f.b.err(); err != nil {
		return nil, err
	}
	rc, err := f.b.watch(ctx, name, opts.Recursive)
	if err != nil {
		return nil, err
	}
	return &Watcher{rc: rc}, nil
}

// Next returns the next event, waiting for one. It returns io.EOF after
// the watcher or its VM is closed; after a WatchEnded event it waits for
// nothing more (close the watcher). If ctx ends first, the watcher is
// closed (a read in flight cannot be called back otherwise) and ctx's
// error returned.
func (w *Watcher) Next(ctx context.Context) (WatchEvent, error) {
	type result struct {
		ev  WatchEvent
		err error
	}
	// The read blocks until an event comes; ctx ending closes nothing,
	// so the read goes on in the background and its event is kept.
	done := make(chan result, 1)
	go func() {
		ev, err := w.read()
		done <- result{ev, err}
	}()
	select {
	case r := <-done:
		return r.ev, r.err
	case <-ctx.Done():
		_ = w.Close()
		<-done
		return WatchEvent{}, ctx.Err()
	}
}

// read reads one record.
func (w *Watcher) read() (WatchEvent, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if _, err := io.ReadFull(w.rc, w.hdr[:]); err != nil {
			// A VM in an engine of its own closes by closing the
			// engine's connection, which may end the stream before
			// the VM's end does: both are the watch's end.
			if w.closed.Load() || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, client.ErrClosed) {
				return WatchEvent{}, io.EOF
			}
			return WatchEvent{}, apiErr(err)
		}
		mask := binary.LittleEndian.Uint32(w.hdr[4:])
		cookie := binary.LittleEndian.Uint32(w.hdr[8:])
		n := binary.LittleEndian.Uint32(w.hdr[12:])
		if n > maxWatchName {
			return WatchEvent{}, fmt.Errorf("secexec: watch: a %d-byte name: %w", n, errno.EIO)
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(w.rc, name); err != nil {
			return WatchEvent{}, io.EOF
		}
		ev := WatchEvent{Name: strings.TrimRight(string(name), "\x00"), IsDir: mask&vfs.InIsDir != 0, Cookie: cookie}
		switch {
		case mask&vfs.InQOverflow != 0:
			ev.Op = WatchOverflow
		case mask&vfs.InCreate != 0:
			ev.Op = WatchCreate
		case mask&vfs.InModify != 0:
			ev.Op = WatchWrite
		case mask&vfs.InAttrib != 0:
			ev.Op = WatchAttrib
		case mask&(vfs.InDelete|vfs.InDeleteSelf) != 0:
			ev.Op = WatchRemove
		case mask&vfs.InMovedFrom != 0:
			ev.Op = WatchRenameFrom
		case mask&vfs.InMovedTo != 0:
			ev.Op = WatchRenameTo
		case mask&vfs.InMoveSelf != 0:
			ev.Op = WatchMoveSelf
		case mask&vfs.InIgnored != 0:
			ev.Op = WatchEnded
		default:
			continue // a bit this API does not report
		}
		return ev, nil
	}
}

// Close ends the watch; a Next waiting returns io.EOF.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() { w.closed.Store(true); err = w.rc.Close() })
	return err
}
