package server

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/engine/flow"
	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
)

// readChunk is the most a pump reads from a guest pipe at a time.
const readChunk = 32 << 10

// upload collects the contents of a WriteFile.
type upload struct {
	mu   sync.Mutex
	buf  []byte
	size int64
	done chan struct{}
	err  error
}

func newUpload(b *proto.WriteFile) *upload {
	u := &upload{size: b.Size, done: make(chan struct{})}
	// Grow as data arrives rather than trusting Size for one allocation.
	u.buf = append(make([]byte, 0, min(b.Size, proto.MaxChunk)), b.Data...)
	if int64(len(u.buf)) == u.size {
		close(u.done)
	}
	return u
}

func (u *upload) complete() bool {
	select {
	case <-u.done:
		return true
	default:
		return false
	}
}

func (u *upload) add(p []byte, eof bool) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.complete() || u.err != nil {
		return nil
	}
	if int64(len(u.buf))+int64(len(p)) > u.size {
		return fmt.Errorf("%w: WriteFile contents over the announced size", proto.ErrProtocol)
	}
	u.buf = append(u.buf, p...)
	if int64(len(u.buf)) == u.size {
		close(u.done)
		return nil
	}
	if eof {
		return fmt.Errorf("%w: WriteFile contents under the announced size", proto.ErrProtocol)
	}
	return nil
}

func (u *upload) fail(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.complete() && u.err == nil {
		u.err = err
		close(u.done)
	}
}

func (u *upload) wait(ctx context.Context) ([]byte, error) {
	select {
	case <-u.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.buf, u.err
}

// output is the engine's end of a flow-controlled output stream. Writes
// block until the client grants credit, which is what stops a guest that
// writes faster than the client reads: its pipe fills and it blocks.
type output struct {
	c      *conn
	id     uint64
	fd     uint8
	credit *flow.Credit
}

// newOutput registers an output stream with the initial window.
func (c *conn) newOutput(id uint64, fd uint8) *output {
	o := &output{c: c, id: id, fd: fd, credit: flow.NewCredit(proto.Window)}
	c.mu.Lock()
	c.credits[streamKey{id, fd}] = o.credit
	c.mu.Unlock()
	if c.ctx.Err() != nil {
		o.credit.Close(errno.EPIPE)
	}
	return o
}

// Write sends p, waiting for credit as needed.
func (o *output) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n, err := o.credit.Take(o.c.ctx, min(len(p)-written, proto.MaxChunk))
		if err != nil {
			return written, err
		}
		if err := o.c.w.Write(proto.TData, o.id, &proto.Data{Fd: o.fd, Bytes: p[written : written+n]}); err != nil {
			return written, err
		}
		written += n
	}
	return written, nil
}

// end sends the end of the stream and forgets it.
func (o *output) end() {
	o.c.mu.Lock()
	delete(o.c.credits, streamKey{o.id, o.fd})
	o.c.mu.Unlock()
	if o.credit.Err() == nil {
		_ = o.c.w.Write(proto.TData, o.id, &proto.Data{Fd: o.fd, EOF: true})
	}
	o.credit.Close(nil)
}

// forget ends the stream without an EOF frame: a Run's response ends
// its output streams.
func (o *output) forget() {
	o.c.mu.Lock()
	delete(o.c.credits, streamKey{o.id, o.fd})
	o.c.mu.Unlock()
	o.credit.Close(nil)
}

// pump copies a process's output pipe to the stream, reading only as
// much as the client has room for, then closes the pipe end.
func (o *output) pump(r io.ReadCloser) {
	defer r.Close()
	defer o.end()
	buf := make([]byte, readChunk)
	for {
		n, err := o.credit.Take(o.c.ctx, readChunk)
		if err != nil {
			return // the client stopped reading, or the connection ended
		}
		m, rerr := r.Read(buf[:n])
		if m < n {
			o.credit.Add(n - m)
		}
		if m > 0 {
			if err := o.c.w.Write(proto.TData, o.id, &proto.Data{Fd: o.fd, Bytes: buf[:m]}); err != nil {
				return
			}
		}
		if rerr != nil {
			return
		}
	}
}

// ExitToWire converts the result of a Run.
func ExitToWire(e *vmhost.Exit) *proto.Exit {
	return &proto.Exit{Code: e.Code, Signal: e.Signal, Outcome: e.Outcome, Duration: int64(e.Duration), Note: e.Note, Reason: e.Reason}
}

func (c *conn) run(ctx context.Context, id uint64, h *vmhost.Host, b *proto.Run, stdin *flow.Inbox) *proto.Response {
	out, errw := c.newOutput(id, proto.FdStdout), c.newOutput(id, proto.FdStderr)
	spec := vmhost.RunSpec{
		Argv: b.Argv, Env: b.Env, Cwd: b.Cwd, Timeout: time.Duration(b.Timeout),
		Stdout: out, Stderr: errw,
	}
	if stdin != nil {
		spec.Stdin = contextReader{ctx: c.ctx, in: stdin}
	}
	exit, err := h.Run(ctx, spec)
	// vmhost.Run returns after both pipes reached EOF, so every byte has
	// been sent; the response that follows ends both streams (no EOF
	// frames: two fewer messages on the exec path).
	out.forget()
	errw.forget()
	resp := errResp(err)
	if exit != nil {
		resp.Exit = ExitToWire(exit)
		c.s.cfg.Metrics.ObserveRun(exit.Outcome, exit.Duration)
	} else {
		c.s.cfg.Metrics.ObserveRun("error", -1)
	}
	return resp
}

// contextReader reads an inbox until the connection ends.
type contextReader struct {
	ctx context.Context
	in  *flow.Inbox
}

func (r contextReader) Read(p []byte) (int, error) { return r.in.ReadContext(r.ctx, p) }

// proc is a spawned process and the goroutines serving its streams.
type proc struct {
	p    vmhost.Process
	left sync.WaitGroup
}

func (c *conn) spawn(ctx context.Context, id uint64, h *vmhost.Host, b *proto.Spawn, stdin *flow.Inbox) {
	spec := vmhost.SpawnSpec{Argv: b.Argv, Env: b.Env, Cwd: b.Cwd}
	if b.PTY != nil {
		spec.PTY = &vmhost.PTYSize{Rows: b.PTY.Rows, Cols: b.PTY.Cols}
	}
	p, err := h.Spawn(ctx, spec)
	if err != nil {
		c.endStdin(id, stdin)
		_ = c.respond(id, errResp(err))
		return
	}
	c.serveProcess(id, p, stdin)
}

// serveProcess streams a started process (or a connection dressed as one) to
// the client: its response with the pid first, then its output, input and
// exit.
func (c *conn) serveProcess(id uint64, p vmhost.Process, stdin *flow.Inbox) {
	pr := &proc{p: p}
	out, errw := c.newOutput(id, proto.FdStdout), c.newOutput(id, proto.FdStderr)
	c.mu.Lock()
	c.procs[id] = pr
	c.mu.Unlock()
	// The response goes first, so the client knows the pid before any
	// output or the exit.
	_ = c.respond(id, &proto.Response{PID: p.PID()})

	pr.left.Add(4)
	c.work.Add(4)
	go func() {
		defer c.work.Done()
		defer pr.left.Done()
		out.pump(p.Stdout())
	}()
	go func() {
		defer c.work.Done()
		defer pr.left.Done()
		errw.pump(p.Stderr())
	}()
	go func() {
		defer c.work.Done()
		defer pr.left.Done()
		c.feed(id, stdin, p.Stdin())
	}()
	go func() {
		defer c.work.Done()
		defer pr.left.Done()
		st, err := p.Wait(c.ctx)
		if err == nil {
			_ = c.w.Write(proto.TExit, id, &proto.Exit{Code: st.Code, Signal: st.Signal})
		}
		// A process that exited reads no more input.
		c.endStdin(id, stdin)
	}()
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		pr.left.Wait()
		c.mu.Lock()
		delete(c.procs, id)
		c.mu.Unlock()
	}()
}

// feed copies a process's stdin stream into its pipe; at the end of the
// stream it closes the pipe, so the process sees EOF.
func (c *conn) feed(id uint64, in *flow.Inbox, w io.WriteCloser) {
	defer w.Close()
	buf := make([]byte, readChunk)
	for {
		n, err := in.ReadContext(c.ctx, buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				c.endStdin(id, in)
				return
			}
		}
		if err != nil {
			return
		}
	}
}
