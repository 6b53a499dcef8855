package js

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// IPC channels (child_process.fork, stdio 'ipc') and extra stdio pipes.
//
// Node gives a forked child one end of a socketpair as descriptor
// NODE_CHANNEL_FD. Here a channel is a pair of duplex ends, each made of
// two kernel pipes (reading one, writing the other), so a channel is
// bounded, counted and accounted exactly as pipes are. Messages are framed
// in JavaScript (child_process.js): one JSON text per line, as Node's
// 'json' serialization.

// maxExtraStdio bounds the stdio entries a spawn may have beyond 0-2.
const maxExtraStdio = 64

// duplexEnd is one end of a channel: it reads one pipe and writes the
// other. Closing its last reference closes both, so the peer reads EOF and
// its writes fail with EPIPE.
type duplexEnd struct {
	vfs.Refs
	vfs.StreamDefaults
	r, w  vfs.File
	ino   uint64
	born  time.Time
	flags atomic.Uint32
	rOnce sync.Once
	wOnce sync.Once
}

var duplexIno atomic.Uint64

func newDuplexEnd(r, w vfs.File, ino uint64, born time.Time) *duplexEnd {
	d := &duplexEnd{r: r, w: w, ino: ino, born: born}
	d.flags.Store(uint32(vfs.O_RDWR))
	d.InitRefs(d.shutdown)
	return d
}

// shutdown closes both pipes now, whoever still holds the end (the loop's
// reader does until it is scheduled): the peer reads EOF at once, and
// reads and writes here fail with EBADF.
func (d *duplexEnd) shutdown() {
	d.shutdownWrite()
	d.rOnce.Do(d.r.DecRef)
}

// shutdownWrite closes the writing pipe only (shutdown(SHUT_WR)): the peer
// reads EOF, and this end can still read what the peer writes.
func (d *duplexEnd) shutdownWrite() { d.wOnce.Do(d.w.DecRef) }

func (d *duplexEnd) Read(ctx context.Context, p []byte) (int, error)  { return d.r.Read(ctx, p) }
func (d *duplexEnd) Write(ctx context.Context, p []byte) (int, error) { return d.w.Write(ctx, p) }
func (d *duplexEnd) SetAttr(context.Context, vfs.SetAttr) error       { return errno.EINVAL }
func (d *duplexEnd) Flags() vfs.OpenFlags                             { return vfs.OpenFlags(d.flags.Load()) }
func (d *duplexEnd) Path() string                                     { return fmt.Sprintf("socket:[%d]", d.ino) }

func (d *duplexEnd) Stat(context.Context) (vfs.Stat, error) {
	return vfs.Stat{Ino: d.ino, Mode: vfs.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096,
		Atime: d.born, Mtime: d.born, Ctime: d.born}, nil
}

// SetFlags applies O_NONBLOCK to both pipes: they belong to this end only.
func (d *duplexEnd) SetFlags(fl vfs.OpenFlags) error {
	nb := fl & vfs.O_NONBLOCK
	d.flags.Store(uint32(vfs.O_RDWR | nb))
	_ = d.r.SetFlags(nb)
	return d.w.SetFlags(nb)
}

func (d *duplexEnd) Readiness(mask waiter.EventMask) waiter.EventMask {
	return d.r.Readiness(mask&^waiter.EventOut) | d.w.Readiness(mask&(waiter.EventOut|waiter.EventErr))
}

func (d *duplexEnd) EventRegister(e *waiter.Entry) {
	d.r.EventRegister(e)
	d.w.EventRegister(e)
}

func (d *duplexEnd) EventUnregister(e *waiter.Entry) {
	d.r.EventUnregister(e)
	d.w.EventUnregister(e)
}

// pipeFiles makes a guest pipe (counted against the VM's pipe limit) and
// returns its two ends as files outside the descriptor table.
func (r *rt) pipeFiles() (rf, wf vfs.File, err error) {
	rfd, wfd, err := r.p.Pipe(vfs.O_CLOEXEC)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = r.p.Close(rfd); _ = r.p.Close(wfd) }()
	if rf, err = r.p.File(rfd); err != nil {
		return nil, nil, err
	}
	if wf, err = r.p.File(wfd); err != nil {
		rf.DecRef()
		return nil, nil, err
	}
	return rf, wf, nil
}

// duplexPair makes a channel and installs its ends as close-on-exec
// descriptors.
func (r *rt) duplexPair() (a, b int, err error) {
	r1, w1, err := r.pipeFiles()
	if err != nil {
		return -1, -1, err
	}
	r2, w2, err := r.pipeFiles()
	if err != nil {
		r1.DecRef()
		w1.DecRef()
		return -1, -1, err
	}
	ino := duplexIno.Add(1)
	born := r.p.Kernel().Clock().Now() // fstat times on the VM's clock
	ea, eb := newDuplexEnd(r1, w2, ino, born), newDuplexEnd(r2, w1, ino, born)
	if a, err = r.p.FDs().Install(ea, 0, true); err != nil {
		ea.DecRef()
		eb.DecRef()
		return -1, -1, err
	}
	if b, err = r.p.FDs().Install(eb, 0, true); err != nil {
		_ = r.p.Close(a)
		eb.DecRef()
		return -1, -1, err
	}
	return a, b, nil
}

// spawnExtraRequest is a spawn with descriptors beyond stdio: each Extra
// entry [fd, parentFD] gives the child a copy of the parent's descriptor
// at fd; each Close entry closes fd in the child.
type spawnExtraRequest struct {
	spawnRequest
	Extra [][2]int `json:"extra"`
	Close []int    `json:"close"`
}

// spawnWatched starts a child and watches it until it exits, as the
// "spawn" bridge call does.
func (r *rt) spawnWatched(req *spawnExtraRequest) (*kernel.Process, [3]int, error) {
	if len(req.Argv) == 0 || len(req.Extra)+len(req.Close) > maxExtraStdio {
		return nil, [3]int{}, errno.EINVAL
	}
	if len(r.children) >= maxHandles {
		return nil, [3]int{}, errno.EAGAIN
	}
	var extra []kernel.FileAction
	for _, x := range req.Extra {
		if x[0] < 3 || x[0] >= 3+maxExtraStdio || x[1] < 0 {
			return nil, [3]int{}, errno.EINVAL
		}
		extra = append(extra, kernel.FileDup2{From: x[1], To: x[0]})
	}
	for _, fd := range req.Close {
		if fd < 3 || fd >= 3+maxExtraStdio {
			return nil, [3]int{}, errno.EINVAL
		}
		// 'ignore' beyond stdio only means the child must not have fd;
		// closing one the parent has not open fails a spawn (EBADF).
		if _, err := r.p.FDs().Cloexec(fd); err != nil {
			continue
		}
		extra = append(extra, kernel.FileClose{FD: fd})
	}
	c, parent, err := r.spawnChild(&req.spawnRequest, extra...)
	if err != nil {
		return nil, parent, err
	}
	r.watchChild(c)
	return c, parent, nil
}

// bridgeDuplexPair() → "a,b": two close-on-exec descriptors, the ends
// of a new channel.
func bridgeDuplexPair(r *rt, _ *callArgs) (*v8.Value, error) {
	a, b, err := r.duplexPair()
	if err != nil {
		return nil, err
	}
	return r.string(fmt.Sprintf("%d,%d", a, b))
}

// bridgeSpawnExtra(json) is spawn with extra descriptors (see
// spawnExtraRequest); it returns what spawn returns.
func bridgeSpawnExtra(r *rt, a *callArgs) (*v8.Value, error) {
	var req spawnExtraRequest
	if err := parseRequest(a.str(0), &req); err != nil {
		return nil, err
	}
	return r.spawnReply(r.spawnWatched(&req))
}

// bridgeDuplexShutdown(fd, writeOnly) closes a channel end for everyone
// holding it (disconnect, and a forked child's exit), or only its
// writing half (the end() of an extra stdio pipe).
func bridgeDuplexShutdown(r *rt, a *callArgs) (*v8.Value, error) {
	f, err := r.p.File(a.int(0))
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	d, ok := f.(*duplexEnd)
	if !ok {
		return nil, errno.EINVAL
	}
	if a.bool(1) {
		d.shutdownWrite()
	} else {
		d.shutdown()
	}
	return nil, nil
}

// bridgeIpcCloexec(fd, on) sets or clears close-on-exec: a forked child
// keeps its channel to itself.
func bridgeIpcCloexec(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.FDs().SetCloexec(a.int(0), a.bool(1))
}
