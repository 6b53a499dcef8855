// Package client is the SDK side of the engine protocol: it starts an
// engine process (or takes an established connection), and offers each
// remote VM through the same operations as an in-process vmhost.Host.
//
// The client treats the engine as untrusted: guest code may have taken it
// over. Every frame is bounded and checked, a stream that sends past its
// credit or a download past its limit is a protocol violation, and after
// one the engine is killed. When the engine dies, every pending call fails
// with an error matching ErrLost at once.
package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/internal/engine/flow"
	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/clock"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// ErrLost is matched by the errors of calls that failed because the
// engine process died or its connection broke.
var ErrLost = errors.New("secexec: engine process lost")

// LostReason classifies how an engine was lost. It is one of the Lost*
// constants, derived from how the process ended (its exit status or
// signal, and whether its runtime reported running out of memory),
// never text the engine wrote: it is safe to show to whoever owns the
// VM, unlike LostError.Cause.
type LostReason string

// The reasons an engine is lost.
const (
	// LostOutOfMemory: the engine's runtime ran out of memory (a V8
	// fatal out-of-memory error, or the Go runtime's), which ends the
	// whole process.
	LostOutOfMemory LostReason = "engine_out_of_memory"
	// LostKilled: the engine was killed by a signal sent to it (SIGKILL,
	// SIGTERM, ...): by an operator, the system's OOM killer, or Kill.
	LostKilled LostReason = "engine_killed"
	// LostProtocolViolation: the engine broke the protocol and the client
	// killed it (a guest may have taken it over).
	LostProtocolViolation LostReason = "engine_protocol_violation"
	// LostCrashed: anything else: a fatal signal in the runtime, a Go
	// panic, an unexpected exit, a connection that broke.
	LostCrashed LostReason = "engine_crashed"
)

// LostError says why an engine was lost. It matches ErrLost.
type LostError struct {
	// Reason is the classified cause, safe to show a tenant.
	Reason LostReason
	// Cause is what was observed, for the embedder's logs: an exit status
	// or signal, a broken connection or a protocol violation, and the
	// last line the engine wrote on stderr (a V8 fatal error or a Go
	// panic: host addresses and source paths). Never show it to the
	// guest or a tenant; Reason is what they may see.
	Cause string
}

func (e *LostError) Error() string { return ErrLost.Error() + ": " + e.Cause }

// Is makes errors.Is(err, ErrLost) true.
func (e *LostError) Is(target error) bool { return target == ErrLost }

type streamKey struct {
	id uint64
	fd uint8
}

// Conn is a connection to an engine. Its methods are safe for concurrent
// use.
type Conn struct {
	rw  io.ReadWriteCloser
	w   *proto.Writer
	log *slog.Logger
	pid int

	proc *engineProcess // nil when the connection was handed in

	nextID atomic.Uint64

	mu      sync.Mutex
	pending map[uint64]chan *proto.Response
	files   map[uint64]*download
	inboxes map[streamKey]*flow.Inbox
	credits map[streamKey]*flow.Credit
	procs   map[uint64]*Process
	vms     map[uint64]*VM
	done    chan struct{}
	err     error
	// toolCalls counts the host tool calls running (jsctx.go).
	toolCalls int
}

// Handshake authenticates on an established connection with token and
// starts serving it. The connection is closed if the handshake fails.
func Handshake(ctx context.Context, rw io.ReadWriteCloser, token []byte, log *slog.Logger) (*Conn, error) {
	return handshake(ctx, rw, token, log, nil)
}

func handshake(ctx context.Context, rw io.ReadWriteCloser, token []byte, log *slog.Logger, p *engineProcess) (*Conn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		rw: rw, w: proto.NewWriter(rw), log: log, proc: p,
		pending: make(map[uint64]chan *proto.Response),
		files:   make(map[uint64]*download),
		inboxes: make(map[streamKey]*flow.Inbox),
		credits: make(map[streamKey]*flow.Credit),
		procs:   make(map[uint64]*Process),
		vms:     make(map[uint64]*VM),
		done:    make(chan struct{}),
	}
	// The handshake must not outlive ctx: closing the connection unblocks
	// the read.
	stop := context.AfterFunc(ctx, func() { _ = rw.Close() })
	defer stop()
	r := proto.NewReader(bufio.NewReaderSize(rw, 64<<10))
	if err := c.w.Write(proto.THello, 0, &proto.Hello{Version: proto.Version, Token: token}); err != nil {
		_ = rw.Close()
		return nil, c.startErr(ctx, err)
	}
	f, err := r.Read()
	if err != nil {
		_ = rw.Close()
		return nil, c.startErr(ctx, err)
	}
	switch b := f.Body.(type) {
	case *proto.Welcome:
		if b.Version != proto.Version {
			_ = rw.Close()
			return nil, fmt.Errorf("secexec: engine speaks protocol %d, want %d", b.Version, proto.Version)
		}
		c.pid = b.PID
	case *proto.Fatal:
		_ = rw.Close()
		return nil, fmt.Errorf("secexec: engine refused the connection: %w", b.Err.Err())
	default:
		_ = rw.Close()
		return nil, fmt.Errorf("secexec: engine handshake: %w: got %s", proto.ErrProtocol, f.Type)
	}
	go c.readLoop(r)
	return c, nil
}

// startErr explains a failed handshake.
func (c *Conn) startErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("secexec: starting the engine: %w", ctx.Err())
	}
	if c.proc != nil {
		return fmt.Errorf("secexec: starting the engine: %w", c.proc.lost(err))
	}
	return fmt.Errorf("secexec: engine handshake: %w", err)
}

// PID returns the engine's process id, as it reported it.
func (c *Conn) PID() int { return c.pid }

// Done is closed when the connection ends.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is up, then why it ended (an
// error matching ErrLost, or ErrClosed after Close).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// ErrClosed is the error of calls on a Conn that was closed on purpose.
var ErrClosed = errors.New("secexec: engine connection closed")

// Close closes the connection; the engine it started exits (and is
// killed if it does not within a few seconds). VMs on it are lost.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	if c.proc != nil {
		c.proc.stop(5 * time.Second)
	}
	return nil
}

// CloseContext is Close waiting for the engine to exit until ctx ends
// (then it is killed): by then everything it wrote to stderr has been
// logged.
func (c *Conn) CloseContext(ctx context.Context) error {
	c.fail(ErrClosed)
	if c.proc == nil {
		return nil
	}
	select {
	case <-c.proc.exited:
	case <-ctx.Done():
		_ = c.proc.cmd.Process.Kill()
		<-c.proc.exited
	}
	return nil
}

// Kill kills the engine process (SIGKILL) if this Conn started it.
func (c *Conn) Kill() error {
	if c.proc == nil {
		return errors.New("secexec: engine was not started by this client")
	}
	return c.proc.cmd.Process.Kill()
}

// fail ends the connection with err: every pending call, stream, process
// and VM learns it. The first error wins.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	inboxes, credits, procs, vms := c.inboxes, c.credits, c.procs, c.vms
	c.inboxes, c.credits, c.procs, c.vms = nil, nil, nil, nil
	c.files = nil
	c.mu.Unlock()
	_ = c.rw.Close()
	for _, in := range inboxes {
		in.Fail(err)
	}
	for _, cr := range credits {
		cr.Close(err)
	}
	for _, p := range procs {
		p.lost()
	}
	for _, v := range vms {
		v.setDone(err)
	}
}

// violation ends the connection after the engine broke the protocol; an
// engine that does that is not trusted to keep running.
func (c *Conn) violation(err error) {
	c.log.Error("secexec: engine protocol violation; killing the engine", "err", err)
	if c.proc != nil {
		_ = c.proc.cmd.Process.Kill()
	}
	c.fail(&LostError{Reason: LostProtocolViolation, Cause: err.Error()})
}

func (c *Conn) readLoop(r *proto.Reader) {
	for {
		f, err := r.Read()
		if err != nil {
			if errors.Is(err, proto.ErrProtocol) {
				c.violation(err)
				return
			}
			c.fail(c.lostErr(err))
			return
		}
		if err := c.dispatch(f); err != nil {
			c.violation(err)
			return
		}
	}
}

// lostErr turns a broken connection into a LostError, with the engine's
// exit status when there is one.
func (c *Conn) lostErr(err error) error {
	c.mu.Lock()
	done := c.err
	c.mu.Unlock()
	if done != nil {
		return done
	}
	if c.proc != nil {
		return c.proc.lost(err)
	}
	if errors.Is(err, io.EOF) {
		return &LostError{Reason: LostCrashed, Cause: "connection closed"}
	}
	return &LostError{Reason: LostCrashed, Cause: err.Error()}
}

func (c *Conn) dispatch(f proto.Frame) error {
	switch b := f.Body.(type) {
	case *proto.Response:
		c.mu.Lock()
		ch := c.pending[f.ID]
		delete(c.pending, f.ID)
		d := c.files[f.ID]
		delete(c.files, f.ID)
		c.mu.Unlock()
		if d != nil {
			if err := d.add(b.Data); err != nil {
				return err
			}
			b.Data = d.buf
		}
		if ch != nil {
			ch <- b
		}
	case *proto.Data:
		if b.Fd == proto.FdFile {
			c.mu.Lock()
			d := c.files[f.ID]
			c.mu.Unlock()
			if d != nil {
				return d.add(b.Bytes)
			}
			return nil
		}
		k := streamKey{f.ID, b.Fd}
		c.mu.Lock()
		in := c.inboxes[k]
		if b.EOF {
			delete(c.inboxes, k)
		}
		c.mu.Unlock()
		if in != nil {
			if err := in.Push(b.Bytes, b.EOF); err != nil {
				return fmt.Errorf("%w: stream %d/%d: %v", proto.ErrProtocol, f.ID, b.Fd, err)
			}
		}
	case *proto.Credit:
		c.mu.Lock()
		cr := c.credits[streamKey{f.ID, b.Fd}]
		c.mu.Unlock()
		if cr != nil {
			cr.Add(int(b.N))
		}
	case *proto.Close:
		k := streamKey{f.ID, b.Fd}
		c.mu.Lock()
		cr := c.credits[k]
		delete(c.credits, k)
		c.mu.Unlock()
		if cr != nil {
			err := b.Err.Err()
			if err == nil {
				err = flow.ErrClosed
			}
			cr.Close(err)
		}
	case *proto.Exit:
		c.mu.Lock()
		p := c.procs[f.ID]
		delete(c.procs, f.ID)
		c.mu.Unlock()
		if p != nil {
			p.exited(vmhost.ExitStatus{Code: b.Code, Signal: b.Signal})
		}
	case *proto.VMEvent:
		if b.Event == proto.VMClosed {
			c.mu.Lock()
			v := c.vms[f.ID]
			delete(c.vms, f.ID)
			c.mu.Unlock()
			if v != nil {
				v.setDone(vmhost.ErrClosed)
			}
		}
	case *proto.Audit:
		c.mu.Lock()
		v := c.vms[f.ID]
		c.mu.Unlock()
		if v != nil && v.audit != nil {
			ev := policy.Event{Time: time.Unix(0, b.Time), Domain: policy.Domain(b.Domain), Op: b.Op,
				Target: b.Target, Allowed: b.Allowed, Rule: b.Rule, To: b.To}
			select {
			case v.audit <- ev:
			case <-v.done:
			}
		}
	case *proto.ToolCall:
		c.runTool(f.ID, b)
	case *proto.Fatal:
		return fmt.Errorf("engine closed the connection: %w", b.Err.Err())
	default:
		return fmt.Errorf("%w: %s from an engine", proto.ErrProtocol, f.Type)
	}
	return nil
}

// download collects the contents of a ReadFile, up to its limit.
type download struct {
	limit int64
	buf   []byte
}

func (d *download) add(p []byte) error {
	if int64(len(d.buf))+int64(len(p)) > d.limit {
		return fmt.Errorf("%w: ReadFile contents over the limit", proto.ErrProtocol)
	}
	d.buf = append(d.buf, p...)
	return nil
}

// begin registers request id; its response will arrive on the channel.
func (c *Conn) begin(id uint64) (chan *proto.Response, error) {
	ch := make(chan *proto.Response, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	c.pending[id] = ch
	return ch, nil
}

// forget drops a request that will never be waited for.
func (c *Conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	delete(c.files, id)
	c.mu.Unlock()
}

func (c *Conn) send(t proto.Type, id uint64, body any) error {
	if err := c.w.Write(t, id, body); err != nil {
		if errors.Is(err, proto.ErrProtocol) {
			return err // ours: an oversized request, say
		}
		return c.lostErr(err)
	}
	return nil
}

// wait waits for the response to request id. If ctx ends first, the
// engine is asked to cancel; with drain the call then still waits for
// the response (Run reports how the cancelled program ended), without it
// the call returns ctx.Err() at once.
func (c *Conn) wait(ctx context.Context, id uint64, ch chan *proto.Response, drain bool) (*proto.Response, error) {
	cancelled := false
	for {
		var ctxDone <-chan struct{}
		if !cancelled {
			ctxDone = ctx.Done()
		}
		select {
		case r := <-ch:
			return r, nil
		case <-c.done:
			select {
			case r := <-ch:
				return r, nil
			default:
			}
			return nil, c.Err()
		case <-ctxDone:
			cancelled = true
			_ = c.send(proto.TCancel, id, &proto.Cancel{})
			if !drain {
				c.forget(id)
				return nil, ctx.Err()
			}
		}
	}
}

// call sends a request and waits for its response.
func (c *Conn) call(ctx context.Context, t proto.Type, body any) (*proto.Response, error) {
	return c.callDrain(ctx, t, body, false)
}

// callDrain is call that, with drain, waits for the response even after
// ctx ended (see wait).
func (c *Conn) callDrain(ctx context.Context, t proto.Type, body any, drain bool) (*proto.Response, error) {
	id := c.nextID.Add(1)
	ch, err := c.begin(id)
	if err != nil {
		return nil, err
	}
	if err := c.send(t, id, body); err != nil {
		c.forget(id)
		return nil, err
	}
	r, err := c.wait(ctx, id, ch, drain)
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return r, r.Err.Err()
	}
	return r, nil
}

// VMConfig describes a VM to create on the engine.
type VMConfig struct {
	Policy   *policy.Policy
	Audit    func(policy.Event)
	Limits   kernel.Limits
	Mounts   []vm.Mount
	Cwd      string
	Hostname string
	// Clock is the policy of the VM's clock (see vm.Config.Clock).
	Clock clock.Policy
	// Tools are the host tools this program runs for the VM's guests
	// (the engine asks with ToolCall); nil: none.
	Tools kernel.ToolHost
	// FromStore and FromID name a snapshot in a store (a directory or
	// an s3:// URL, authenticated by FromCreds) that the VM starts from;
	// ForkOf is a VM of this connection it forks.
	FromStore, FromID string
	FromCreds         snapshot.Credentials
	ForkOf            *VM
}

// auditQueue bounds the audit events waiting for a slow Audit callback;
// past it the engine's sender (a guest's syscall) waits.
const auditQueue = 1024

// NewVM creates a VM on the engine.
func (c *Conn) NewVM(ctx context.Context, cfg VMConfig) (*VM, error) {
	req := &proto.CreateVM{Limits: cfg.Limits, Cwd: cfg.Cwd, Hostname: cfg.Hostname, Audit: cfg.Audit != nil, Clock: cfg.Clock,
		FromStore: cfg.FromStore, FromID: cfg.FromID, FromAuth: StoreAuth(cfg.FromCreds)}
	if cfg.ForkOf != nil {
		if cfg.ForkOf.c != c {
			return nil, fmt.Errorf("secexec: fork of a VM on another engine: %w", errno.EXDEV)
		}
		if err := cfg.ForkOf.Err(); err != nil {
			return nil, err
		}
		req.ForkOf = cfg.ForkOf.id
	}
	if cfg.Tools != nil {
		req.Tools = cfg.Tools.Names()
	}
	if cfg.Policy != nil {
		b, err := json.Marshal(cfg.Policy)
		if err != nil {
			return nil, fmt.Errorf("secexec: permissions: %w", err)
		}
		req.Permissions = b
	}
	for _, m := range cfg.Mounts {
		req.Mounts = append(req.Mounts, proto.Mount(m))
	}
	// Wait for the answer even if ctx ends, so that a VM the engine made
	// regardless is closed rather than leaked.
	r, err := c.callDrain(ctx, proto.TCreateVM, req, true)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		go func() { _, _ = c.call(context.Background(), proto.TCloseVM, &proto.VMRef{VM: r.VM}) }()
		return nil, ctx.Err()
	}
	v := &VM{c: c, id: r.VM, done: make(chan struct{}), tools: cfg.Tools}
	v.Files = &Files{v: v}
	lim := kernel.DefaultLimits()
	v.toolBytes, v.toolTimeout = lim.ToolBytes, lim.ToolTimeout
	if cfg.Limits.ToolBytes > 0 {
		v.toolBytes = min(cfg.Limits.ToolBytes, kernel.MaxToolBytes)
	}
	if cfg.Limits.ToolTimeout > 0 {
		v.toolTimeout = cfg.Limits.ToolTimeout
	}
	if cfg.Audit != nil {
		v.audit = make(chan policy.Event, auditQueue)
		go func() {
			for {
				select {
				case ev := <-v.audit:
					cfg.Audit(ev)
				case <-v.done:
					return
				}
			}
		}()
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.vms[v.id] = v
	c.mu.Unlock()
	return v, nil
}

// VMs returns how many VMs are open on the connection.
func (c *Conn) VMs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vms)
}
