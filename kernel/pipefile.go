package kernel

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/pipe"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// pipeEnd is the open file description of one end of a pipe.
type pipeEnd struct {
	vfs.Refs
	vfs.StreamDefaults
	r     *pipe.Reader
	w     *pipe.Writer
	ino   uint64
	flags atomic.Uint32
	born  time.Time
}

// newPipe creates a pipe. Pipes the host makes to wire a process's stdio
// (guest false) do not count against the guest's pipe limit: there is one
// set per spawn, bounded by the process limit.
func (k *Kernel) newPipe(guest bool) (*pipeEnd, *pipeEnd, error) {
	counter := &k.hostPipes
	if guest {
		counter = &k.pipes
		if n := k.pipes.Add(1); k.limits.Pipes > 0 && n > int64(k.limits.Pipes) {
			k.pipes.Add(-1)
			return nil, nil, errno.EAGAIN
		}
	} else {
		k.hostPipes.Add(1)
	}
	p := pipe.New(pipe.Options{MaxSize: k.limits.PipeSize, Budget: k.pipeBudget})
	ino := k.nextIno.Add(1)
	var open atomic.Int32
	open.Store(2)
	done := func() {
		if open.Add(-1) == 0 {
			counter.Add(-1)
		}
	}
	r := &pipeEnd{r: p.OpenReader(), ino: ino, born: k.clock.Now()}
	r.flags.Store(uint32(vfs.O_RDONLY))
	r.InitRefs(func() { _ = r.r.Close(); done() })
	w := &pipeEnd{w: p.OpenWriter(), ino: ino, born: r.born}
	w.flags.Store(uint32(vfs.O_WRONLY))
	w.InitRefs(func() { _ = w.w.Close(); done() })
	return r, w, nil
}

func (f *pipeEnd) nonblock() bool { return vfs.OpenFlags(f.flags.Load())&vfs.O_NONBLOCK != 0 }

func (f *pipeEnd) Read(ctx context.Context, p []byte) (int, error) {
	if f.r == nil {
		return 0, errno.EBADF
	}
	if f.nonblock() {
		return f.r.TryRead(p)
	}
	return f.r.Read(ctx, p)
}

func (f *pipeEnd) Write(ctx context.Context, p []byte) (int, error) {
	if f.w == nil {
		return 0, errno.EBADF
	}
	if f.nonblock() {
		return f.w.TryWrite(p)
	}
	return f.w.Write(ctx, p)
}

func (f *pipeEnd) Stat(context.Context) (vfs.Stat, error) {
	return vfs.Stat{Ino: f.ino, Mode: vfs.S_IFIFO | 0o600, Nlink: 1, Blksize: 4096,
		Atime: f.born, Mtime: f.born, Ctime: f.born}, nil
}

func (f *pipeEnd) SetAttr(context.Context, vfs.SetAttr) error { return errno.EINVAL }

func (f *pipeEnd) Flags() vfs.OpenFlags { return vfs.OpenFlags(f.flags.Load()) }

func (f *pipeEnd) SetFlags(fl vfs.OpenFlags) error {
	for {
		old := f.flags.Load()
		nw := old&^uint32(vfs.O_APPEND|vfs.O_NONBLOCK) | uint32(fl&(vfs.O_APPEND|vfs.O_NONBLOCK))
		if f.flags.CompareAndSwap(old, nw) {
			return nil
		}
	}
}

func (f *pipeEnd) Path() string { return fmt.Sprintf("pipe:[%d]", f.ino) }

func (f *pipeEnd) Readiness(mask waiter.EventMask) waiter.EventMask {
	if f.r != nil {
		return f.r.Readiness(mask)
	}
	return f.w.Readiness(mask)
}

func (f *pipeEnd) EventRegister(e *waiter.Entry) {
	if f.r != nil {
		f.r.EventRegister(e)
	} else {
		f.w.EventRegister(e)
	}
}

func (f *pipeEnd) EventUnregister(e *waiter.Entry) {
	if f.r != nil {
		f.r.EventUnregister(e)
	} else {
		f.w.EventUnregister(e)
	}
}

// Buffered returns the bytes waiting in the pipe (FIONREAD).
func (f *pipeEnd) Buffered() int {
	if f.r != nil {
		return f.r.Pipe().Len()
	}
	return f.w.Pipe().Len()
}
