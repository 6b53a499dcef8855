package vmhost

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/secexec/secexec/kernel/vfs"
)

// Bounds of an embedder's watch: its queue in the kernel. A reader that
// lags (a slow HTTP client) loses events past these, and reads an
// IN_Q_OVERFLOW record in their place, instead of making the host hold
// them.
const (
	WatchQueue      = 1024
	WatchQueueBytes = 256 << 10
	// watchBuf holds at least one record with the longest name.
	watchBuf = vfs.WatchEventHeaderSize + 2*4096
)

// Watch watches name (with recursive, the tree below it) for the
// embedder and returns the stream of its events: struct inotify_event
// records, little-endian, names relative to name. Close ends the watch;
// the stream also ends (io.EOF) when the VM closes.
//
// The guest's watch (Host.Guest) is the guest's inotify: the policy and
// the file modes decide the watch and, below a recursive one, which
// events it sees.
func (fs *Files) Watch(ctx context.Context, name string, recursive bool) (io.ReadCloser, error) {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return nil, err
	}
	h := fs.h
	set := h.vm.VFS.NewWatchSet(vfs.WatchSetOptions{MaxQueued: WatchQueue, MaxQueuedBytes: WatchQueueBytes, MaxQueuedPerWatch: WatchQueue})
	if _, err := set.Add(ctx, fs.caller, name, vfs.WatchOptions{Recursive: recursive}); err != nil {
		set.DecRef()
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-h.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	return &watchStream{set: set, ctx: wctx, cancel: cancel, buf: make([]byte, watchBuf)}, nil
}

// watchStream reads a watch set's records as a byte stream.
type watchStream struct {
	set    *vfs.WatchSet
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once

	mu     sync.Mutex // one Read at a time; guards buf, off and n
	buf    []byte
	off, n int
}

// Read returns records (possibly part of one, for a short p) as they
// come; io.EOF once the watch is closed.
func (s *watchStream) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off == s.n {
		n, err := s.set.Read(s.ctx, s.buf)
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return 0, io.EOF
			}
			return 0, err
		}
		s.off, s.n = 0, n
	}
	n := copy(p, s.buf[s.off:s.n])
	s.off += n
	return n, nil
}

// Close ends the watch and any Read waiting on it.
func (s *watchStream) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.set.DecRef()
	})
	return nil
}
