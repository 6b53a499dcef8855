package js

import (
	"context"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// fs.watch is built on the kernel's watch sets (kernel/vfs/notify.go), as
// libuv builds it on inotify: a process has one set, open as a
// close-on-exec descriptor, and each FSWatcher is a watch in it.
//
// The loop learns of events the way it learns of pipe data: the
// asynchronous reader (readStart) reads a doorbell, a file that yields one
// byte whenever the set has records queued, and the JavaScript handler
// then drains the set itself (watchRead). Records therefore wait in the
// kernel's queue until the loop takes them, as they wait in inotify's
// until libuv reads them: identical events coalesce and the queue bounds
// apply as on Linux. A referenced doorbell reader keeps the loop alive.

// watchSetOf returns the watch set open at fd, with a reference the
// caller drops. A descriptor that is not a set is EBADF, so JavaScript
// can tell a set the guest closed under it from a bad path.
func (r *rt) watchSetOf(fd int) (*vfs.WatchSet, func(), error) {
	f, err := r.p.File(fd)
	if err != nil {
		return nil, nil, err
	}
	s, ok := f.(*vfs.WatchSet)
	if !ok {
		f.DecRef()
		return nil, nil, errno.EBADF
	}
	return s, f.DecRef, nil
}

// watchBell reads as one byte each time its set has records queued; it
// never consumes them.
type watchBell struct {
	vfs.Refs
	vfs.StreamDefaults
	s *vfs.WatchSet
}

func newWatchBell(s *vfs.WatchSet) *watchBell {
	s.IncRef()
	b := &watchBell{s: s}
	b.InitRefs(s.DecRef)
	return b
}

func (b *watchBell) Read(ctx context.Context, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if _, err := waiter.Wait(ctx, b.s, waiter.EventIn); err != nil {
		return 0, err
	}
	p[0] = 1
	return 1, nil
}

func (b *watchBell) Write(context.Context, []byte) (int, error) { return 0, errno.EBADF }
func (b *watchBell) Stat(ctx context.Context) (vfs.Stat, error) { return b.s.Stat(ctx) }
func (b *watchBell) SetAttr(context.Context, vfs.SetAttr) error { return errno.EINVAL }
func (b *watchBell) Flags() vfs.OpenFlags                       { return vfs.O_RDONLY }
func (b *watchBell) SetFlags(vfs.OpenFlags) error               { return nil }
func (b *watchBell) Path() string                               { return "anon_inode:inotify" }
func (b *watchBell) EventRegister(e *waiter.Entry)              { b.s.EventRegister(e) }
func (b *watchBell) EventUnregister(e *waiter.Entry)            { b.s.EventUnregister(e) }
func (b *watchBell) Readiness(mask waiter.EventMask) waiter.EventMask {
	return b.s.Readiness(mask)
}

// bridgeWatchInit() → the descriptor of a new watch set. Its watches
// count against the process's limit.
func bridgeWatchInit(r *rt, _ *callArgs) (*v8.Value, error) {
	s := r.p.Kernel().VFS().NewWatchSet(vfs.WatchSetOptions{Owner: r.p})
	fd, err := r.p.FDs().Install(s, 0, true)
	if err != nil {
		s.DecRef()
		return nil, err
	}
	return r.num(fd), nil
}

// bridgeWatchBell(fd) → a close-on-exec descriptor of the set's
// doorbell, for readStart.
func bridgeWatchBell(r *rt, a *callArgs) (*v8.Value, error) {
	return r.watchSetCall(a, func(s *vfs.WatchSet) (int, error) {
		b := newWatchBell(s)
		bfd, err := r.p.FDs().Install(b, 0, true)
		if err != nil {
			b.DecRef()
		}
		return bfd, err
	})
}

// bridgeWatchRead(fd) → the byte count of the records now queued, copied
// to the scratch buffer (0 when none).
func bridgeWatchRead(r *rt, a *callArgs) (*v8.Value, error) {
	return r.watchSetCall(a, func(s *vfs.WatchSet) (int, error) {
		n, err := s.TryRead(r.scratch)
		if errno.Of(err) == errno.EAGAIN {
			return 0, nil
		}
		return n, err
	})
}

// bridgeWatchAdd(fd, path, recursive) → the watch descriptor.
func bridgeWatchAdd(r *rt, a *callArgs) (*v8.Value, error) {
	return r.watchSetCall(a, func(s *vfs.WatchSet) (int, error) {
		wd, err := s.Add(r.ctx, r.p.Caller(), a.path(1), vfs.WatchOptions{Recursive: a.bool(2)})
		return int(wd), err
	})
}

// bridgeWatchRm(fd, wd) ends a watch (→ 0).
func bridgeWatchRm(r *rt, a *callArgs) (*v8.Value, error) {
	wd := a.int(1)
	if wd <= 0 || wd > 1<<31-1 {
		return nil, errno.EINVAL
	}
	return r.watchSetCall(a, func(s *vfs.WatchSet) (int, error) {
		return 0, s.Remove(int32(wd))
	})
}

// watchSetCall runs fn with the watch set open at the call's int
// argument 0 and returns the number fn returns.
func (r *rt) watchSetCall(a *callArgs, fn func(*vfs.WatchSet) (int, error)) (*v8.Value, error) {
	s, done, err := r.watchSetOf(a.int(0))
	if err != nil {
		return nil, err
	}
	defer done()
	n, err := fn(s)
	if err != nil {
		return nil, err
	}
	return r.num(n), nil
}
