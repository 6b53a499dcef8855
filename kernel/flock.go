package kernel

import (
	"context"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// flock(2) operations.
const (
	LockSH = 1
	LockEX = 2
	LockNB = 4
	LockUN = 8
)

type inodeKey struct{ dev, ino uint64 }

// flockTable holds the advisory whole-file locks of a VM. As with Linux
// flock, a lock belongs to an open file description: dup'ed and inherited
// descriptors share it, and it goes away when the description is released.
type flockTable struct {
	mu      sync.Mutex
	locks   map[inodeKey]map[vfs.File]int // holder → LockSH or LockEX
	changed chan struct{}                 // closed and replaced on every release
}

// alive reports whether a holder's file still has references; a released
// description's locks are dropped lazily.
func alive(f vfs.File) bool {
	if r, ok := f.(interface{ ReadRefs() int64 }); ok {
		return r.ReadRefs() > 0
	}
	return true
}

func (t *flockTable) notifyLocked() {
	if t.changed != nil {
		close(t.changed)
	}
	t.changed = make(chan struct{})
}

// Flock applies a flock(2) operation to the file at fd.
func (p *Process) Flock(ctx context.Context, fd int, op int) error {
	f, err := p.fds.Get(fd)
	if err != nil {
		return err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return err
	}
	key := inodeKey{st.Dev, st.Ino}
	t := &p.k.flocks
	want := op &^ LockNB
	if want != LockSH && want != LockEX && want != LockUN {
		return errno.EINVAL
	}
	for {
		t.mu.Lock()
		if t.locks == nil {
			t.locks = make(map[inodeKey]map[vfs.File]int)
			t.changed = make(chan struct{})
		}
		holders := t.locks[key]
		if want == LockUN {
			if holders != nil {
				delete(holders, f)
				if len(holders) == 0 {
					delete(t.locks, key)
				}
			}
			t.notifyLocked()
			t.mu.Unlock()
			return nil
		}
		conflict := false
		for h, mode := range holders {
			if h == f {
				continue
			}
			if !alive(h) {
				delete(holders, h)
				continue
			}
			if want == LockEX || mode == LockEX {
				conflict = true
			}
		}
		if !conflict {
			if holders == nil {
				holders = make(map[vfs.File]int)
				t.locks[key] = holders
			}
			holders[f] = want
			t.mu.Unlock()
			return nil
		}
		ch := t.changed
		t.mu.Unlock()
		if op&LockNB != 0 {
			return errno.EWOULDBLOCK
		}
		// Holders released by closing their last descriptor do not notify;
		// re-check now and then so such a lock cannot block forever.
		timer := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ch:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return errno.EINTR
		case <-p.ctx.Done():
			timer.Stop()
			return errno.EINTR
		}
		timer.Stop()
	}
}
