package vmhost

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// ContextSpec describes a persistent JavaScript context.
type ContextSpec struct {
	// Env is the complete environment ("KEY=value"); Cwd the working
	// directory (empty: the VM's).
	Env []string
	Cwd string
	// MaxOutput bounds the stdout and the stderr kept per evaluation
	// (each); 0 means DefaultContextOutput.
	MaxOutput int
	// Background lets the context's timers and I/O callbacks run between
	// evaluations (charged to its process's CPU time like any work of
	// it). Without it the context's event loop is paused while no
	// evaluation is in progress (see internal/js's context server).
	Background bool
}

// DefaultContextOutput bounds the output kept per evaluation and stream.
const DefaultContextOutput = 1 << 20

// MaxEvalValue bounds the JSON of an evaluation's value; a larger one is
// a *TooLargeError (the context lives on).
const MaxEvalValue = jsctx.MaxValue

// maxStack bounds the text of a thrown error kept for the caller.
const maxStack = 64 << 10

// EvalResult is one evaluation of a context: the value's JSON, and what
// the context wrote to stdout and stderr since the previous evaluation
// returned (console output of timers that ran at its start, or in between
// with Background, included).
type EvalResult struct {
	Value     []byte
	Stdout    []byte
	Stderr    []byte
	Truncated bool // output beyond MaxOutput was dropped
}

// JSContext is a persistent JavaScript context wherever it runs: a
// *Context here, or the engine client's handle of one in an engine.
type JSContext interface {
	PID() int
	Evaluate(ctx context.Context, expr string) (*EvalResult, error)
	Close(ctx context.Context) error
}

// Context is a persistent JavaScript context: a node process of the VM
// (it shows in /proc, holds descriptors, obeys the VM's permissions and
// limits) that evaluates one request after the other in the same global
// scope. Evaluations reach it over an in-engine channel (internal/jsctx),
// not through pipes or new processes.
type Context struct {
	h    *Host
	s    *jsctx.Session
	p    *kernel.Process
	out  *capture
	errs *capture

	turn      chan struct{} // one evaluation at a time
	closeOnce sync.Once
}

// NewContext starts a context's node process. Running it needs the same
// exec permission as running node.
func (h *Host) NewContext(ctx context.Context, spec ContextSpec) (JSContext, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	limit := spec.MaxOutput
	if limit <= 0 {
		limit = DefaultContextOutput
	}
	born := h.vm.Kernel.Clock().Now()
	c := &Context{h: h, s: jsctx.New(jsctx.Options{Background: spec.Background}), turn: make(chan struct{}, 1), out: newCapture(limit, "context:[stdout]", born), errs: newCapture(limit, "context:[stderr]", born)}
	null, err := h.vm.VFS.Open(ctx, vfs.Root, "/dev/null", vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer null.DecRef()
	defer c.out.DecRef()
	defer c.errs.DecRef()
	cwd := spec.Cwd
	if cwd == "" {
		cwd = h.cwd
	}
	// The session travels in the spawn's context: the node runtime claims
	// it before parsing its command line. The caller's cancellation must
	// not end the context's process.
	sctx := jsctx.WithSession(context.WithoutCancel(ctx), c.s)
	p, err := h.vm.Kernel.SpawnHost(sctx, kernel.SpawnOptions{
		Argv:     []string{"node"},
		Env:      withPWD(spec.Env, cwd),
		Cwd:      cwd,
		Files:    []vfs.File{null, c.out, c.errs},
		NewGroup: true,
		Creds:    &kernel.Creds{UID: vm.UserUID, GID: vm.UserGID},
	})
	if err != nil {
		return nil, err
	}
	c.p = p
	if !h.addContext(c) {
		c.kill()
		return nil, ErrClosed
	}
	// A context whose process ends for any reason (the VM closed it, a
	// guest killed it) reports it to every later evaluation.
	go func() {
		st, _ := p.HostWait(context.Background())
		c.s.End(deadError(st))
		h.removeContext(c)
	}()
	return c, nil
}

// deadError is the end of a context whose server did not say why.
func deadError(st kernel.WaitStatus) error {
	if !st.Exited && st.Signal != 0 {
		return &jsctx.DeadError{Reason: "the context's process was killed by " + st.Signal.String()}
	}
	return &jsctx.DeadError{Reason: "the context's process ended"}
}

// PID is the context's process id in the VM.
func (c *Context) PID() int { return c.p.PID() }

// Evaluate evaluates expr in the context and returns its value (JSON)
// with the output written meanwhile. A thrown error is a
// *jsctx.ThrownError, ctx ending an error matching jsctx.ErrTimeout (the
// context lives on), a dead context a *jsctx.DeadError.
func (c *Context) Evaluate(ctx context.Context, expr string) (*EvalResult, error) {
	if err := c.h.check(); err != nil {
		return nil, err
	}
	// Waiting for the previous evaluation is bounded by ctx too.
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, jsctx.TimeoutErr(ctx.Err())
	}
	defer func() { <-c.turn }()
	v, err := c.s.Evaluate(ctx, expr)
	if err != nil && c.h.check() != nil {
		return nil, ErrClosed
	}
	var big *jsctx.TooLargeError
	if errors.As(err, &big) {
		err = &TooLargeError{What: "value", Size: big.Size, Limit: big.Limit}
	}
	if len(v) > MaxEvalValue {
		v, err = nil, &TooLargeError{What: "value", Size: int64(len(v)), Limit: MaxEvalValue}
	}
	var th *jsctx.ThrownError
	if errors.As(err, &th) && len(th.Stack) > maxStack {
		err = &jsctx.ThrownError{Stack: th.Stack[:maxStack]}
	}
	res := &EvalResult{Value: v}
	var d1, d2 bool
	res.Stdout, d1 = c.out.take()
	res.Stderr, d2 = c.errs.take()
	res.Truncated = d1 || d2
	return res, err
}

// Close ends the context: its process is killed and later evaluations
// fail with jsctx.ErrClosed. An evaluation in flight is answered with it.
func (c *Context) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		c.s.Close()
		c.kill()
	})
	select {
	case <-c.p.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// kill ends the context's process and every process it started
// (its kernel job), detached ones included.
func (c *Context) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), KillGrace)
	defer cancel()
	_ = c.p.Job().Kill(ctx)
	c.s.End(jsctx.ErrClosed)
}

// contexts are the host's open contexts, closed with it.
type contexts struct {
	set map[*Context]struct{} // under Host.mu
}

func (h *Host) addContext(c *Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	if h.ctxs.set == nil {
		h.ctxs.set = make(map[*Context]struct{})
	}
	h.ctxs.set[c] = struct{}{}
	return true
}

func (h *Host) removeContext(c *Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.ctxs.set, c)
}

// closeContexts ends every context before the VM shuts down, so their
// evaluations report ErrClosed rather than a killed process.
func (h *Host) closeContexts() {
	h.mu.Lock()
	list := make([]*Context, 0, len(h.ctxs.set))
	for c := range h.ctxs.set {
		list = append(list, c)
	}
	h.mu.Unlock()
	for _, c := range list {
		c.closeOnce.Do(func() {
			c.s.Close()
			c.s.End(ErrClosed)
		})
	}
}

// capture is the write end a context's stdout or stderr is: a bounded
// buffer the host takes after each evaluation. Writes never block (past
// the bound they are counted and dropped), so a chatty guest cannot stall
// its context, and they are synchronous, so everything an evaluation
// printed is there when it is answered.
type capture struct {
	vfs.Refs
	vfs.StreamDefaults
	name  string
	limit int

	mu      sync.Mutex
	buf     []byte
	dropped bool
	flags   vfs.OpenFlags
	born    time.Time // on the VM's clock
}

func newCapture(limit int, name string, born time.Time) *capture {
	c := &capture{limit: limit, name: name, flags: vfs.O_WRONLY, born: born}
	c.InitRefs(func() {})
	return c
}

// take returns the bytes written since the last take and whether any
// were dropped.
func (c *capture) take() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, d := c.buf, c.dropped
	c.buf, c.dropped = nil, false
	return b, d
}

func (c *capture) Write(_ context.Context, p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - len(c.buf)
	if room < len(p) {
		c.dropped = true
		if room > 0 {
			c.buf = append(c.buf, p[:room]...)
		}
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

func (c *capture) Read(context.Context, []byte) (int, error) { return 0, errno.EBADF }

func (c *capture) Readiness(mask waiter.EventMask) waiter.EventMask {
	return mask & waiter.EventOut
}

func (c *capture) EventRegister(*waiter.Entry)   {}
func (c *capture) EventUnregister(*waiter.Entry) {}

func (c *capture) Stat(context.Context) (vfs.Stat, error) {
	return vfs.Stat{Mode: vfs.S_IFIFO | 0o200, Nlink: 1, UID: vm.UserUID, GID: vm.UserGID, Blksize: 4096,
		Atime: c.born, Mtime: c.born, Ctime: c.born}, nil
}

func (c *capture) SetAttr(context.Context, vfs.SetAttr) error { return errno.EINVAL }

func (c *capture) Flags() vfs.OpenFlags {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flags
}

func (c *capture) SetFlags(flags vfs.OpenFlags) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flags = vfs.O_WRONLY | flags&(vfs.O_APPEND|vfs.O_NONBLOCK)
	return nil
}

func (c *capture) Path() string { return c.name }
