package kernel

import (
	"context"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/devfs"
	"github.com/secexec/secexec/kernel/tty"
	"github.com/secexec/secexec/kernel/vfs"
)

// Terminals returns the kernel's terminals as /dev shows them (pass it to
// devfs.Options): /dev/ptmx, /dev/pts/N and /dev/tty.
func (k *Kernel) Terminals() devfs.Terminals { return ptsView{k} }

type ptsView struct{ k *Kernel }

func (v ptsView) Indexes() []int {
	v.k.mu.Lock()
	defer v.k.mu.Unlock()
	out := make([]int, 0, len(v.k.ptys))
	for n := range v.k.ptys {
		out = append(out, n)
	}
	return out
}

func (v ptsView) OpenSlave(ctx context.Context, n int, flags vfs.OpenFlags) (vfs.File, error) {
	v.k.mu.Lock()
	t := v.k.ptys[n]
	v.k.mu.Unlock()
	if t == nil {
		return nil, errno.ENOENT
	}
	return t.openSlave(ctx, flags)
}

// OpenMaster is /dev/ptmx: a new terminal of 24x80 whose master the
// caller holds; its slave opens as /dev/pts/N.
func (v ptsView) OpenMaster(_ context.Context, flags vfs.OpenFlags) (vfs.File, error) {
	m, _, err := v.k.newPTY(tty.Winsize{Rows: 24, Cols: 80}, true)
	if err != nil {
		return nil, err
	}
	m.flags.Store(uint32(flags &^ (vfs.O_CREAT | vfs.O_EXCL | vfs.O_TRUNC | vfs.O_NOCTTY | vfs.O_CLOEXEC | vfs.O_NOFOLLOW)))
	return m, nil
}

func (v ptsView) Controlling(ctx context.Context, flags vfs.OpenFlags) (vfs.File, error) {
	p, ok := ProcessFromContext(ctx)
	if !ok || p.k != v.k {
		return nil, errno.ENXIO
	}
	v.k.mu.Lock()
	t := p.ctty
	v.k.mu.Unlock()
	if t == nil {
		return nil, errno.ENXIO
	}
	return t.openSlave(ctx, flags|vfs.O_NOCTTY)
}

// openSlave opens another file of t's slave side. A session leader
// without a controlling terminal that opens a free terminal (without
// O_NOCTTY) acquires it, as on Linux.
func (t *PTY) openSlave(ctx context.Context, flags vfs.OpenFlags) (vfs.File, error) {
	for {
		n := t.files.Load()
		if n <= 0 {
			return nil, errno.ENOENT // being released
		}
		if t.files.CompareAndSwap(n, n+1) {
			break
		}
	}
	if t.t.HungUp() {
		t.release()
		return nil, errno.EIO
	}
	t.t.OpenSlave()
	f := t.newSlaveFile(flags)
	if p, ok := ProcessFromContext(ctx); ok && p.k == t.k && flags&vfs.O_NOCTTY == 0 {
		k := t.k
		k.mu.Lock()
		if p.sid == p.pid && p.ctty == nil && t.sid == 0 {
			_ = k.setControllingTerminalLocked(p, t)
		}
		k.mu.Unlock()
	}
	return f, nil
}
