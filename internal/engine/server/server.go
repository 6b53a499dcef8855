// Package server is the engine side of the engine protocol: it
// authenticates a connection, hosts the VMs that connection creates
// (through internal/vmhost, as the in-process transport does), runs its
// requests concurrently and streams process I/O with flow control.
//
// A connection may act only on its own VMs and processes: ids are looked
// up in per-connection tables, so another connection's ids do not exist
// for it. When a connection ends, its VMs are closed.
package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/internal/engine/flow"
	"github.com/secexec/secexec/internal/engine/metrics"
	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// Config configures a Server.
type Config struct {
	// Token is the secret a client must present in its Hello
	// (proto.TokenSize bytes).
	Token []byte
	// OneTime makes the token good for one connection only.
	OneTime bool
	// Runtime provides the program loaders of every VM; nil: none.
	Runtime vmhost.Runtime
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// MaxVMs bounds the VMs of one connection (default 4096).
	MaxVMs int
	// MaxRequests bounds the requests one connection has in flight
	// (default 8192); more fail with EAGAIN.
	MaxRequests int
	// HelloTimeout bounds the wait for a Hello (default 10s).
	HelloTimeout time.Duration
	// Metrics records the engine's metrics and answers Metrics
	// requests; nil: a Set of the server's own (Run outcomes only).
	Metrics *metrics.Set
}

// Server serves engine connections.
type Server struct {
	cfg    Config
	log    *slog.Logger
	nextVM atomic.Uint64

	mu        sync.Mutex
	tokenUsed bool
	hosts     map[*vmhost.Host]struct{} // the VMs of all connections
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if len(cfg.Token) != proto.TokenSize {
		return nil, fmt.Errorf("engine server: token must be %d bytes", proto.TokenSize)
	}
	if cfg.MaxVMs <= 0 {
		cfg.MaxVMs = 4096
	}
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = 8192
	}
	if cfg.HelloTimeout <= 0 {
		cfg.HelloTimeout = 10 * time.Second
	}
	cfg.Token = append([]byte(nil), cfg.Token...)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
		cfg.Metrics.ZeroSeries()
	}
	s := &Server{cfg: cfg, log: log, hosts: make(map[*vmhost.Host]struct{})}
	s.registerLive()
	return s, nil
}

// streamKey names one stream of a request or process.
type streamKey struct {
	id uint64
	fd uint8
}

// conn is one client connection.
type conn struct {
	s      *Server
	rw     io.ReadWriteCloser
	w      *proto.Writer
	ctx    context.Context // ends with the connection
	cancel context.CancelFunc

	mu      sync.Mutex
	vms     map[uint64]*hostedVM
	reqs    map[uint64]context.CancelFunc // requests in flight
	inboxes map[streamKey]*flow.Inbox     // streams the client sends: stdin
	uploads map[uint64]*upload            // WriteFile contents arriving
	credits map[streamKey]*flow.Credit    // streams the engine sends: output
	procs   map[uint64]*proc              // spawned processes, by spawn request id
	js      jsState                       // contexts and tool calls (jsctx.go)

	work sync.WaitGroup // request handlers and stream pumps
}

type hostedVM struct {
	id   uint64
	host *vmhost.Host
}

// ServeConn serves one connection until it ends or ctx is done, then
// closes the connection and every VM it created. It returns nil when the
// client closed the connection, or why it was closed.
func (s *Server) ServeConn(ctx context.Context, rw io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	c := &conn{
		s: s, rw: rw, w: proto.NewWriter(rw), ctx: ctx, cancel: cancel,
		vms:     make(map[uint64]*hostedVM),
		reqs:    make(map[uint64]context.CancelFunc),
		inboxes: make(map[streamKey]*flow.Inbox),
		uploads: make(map[uint64]*upload),
		credits: make(map[streamKey]*flow.Credit),
		procs:   make(map[uint64]*proc),
	}
	stop := context.AfterFunc(ctx, func() { _ = rw.Close() })
	defer stop()
	err := c.serve()
	cancel()
	_ = rw.Close()
	c.shutdown()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// fatal tells the client why the connection closes, as far as it can.
func (c *conn) fatal(err error) {
	_ = c.w.WriteLast(proto.TFatal, 0, &proto.Fatal{Err: *proto.ErrorOf(err)})
}

func (c *conn) serve() error {
	r := proto.NewReader(bufio.NewReaderSize(c.rw, 64<<10))
	if err := c.hello(r); err != nil {
		c.fatal(err)
		return err
	}
	for {
		f, err := r.Read()
		if err != nil {
			if errors.Is(err, proto.ErrProtocol) {
				c.fatal(err)
			}
			return err
		}
		if err := c.dispatch(f); err != nil {
			c.s.log.Warn("engine: closing connection", "err", err)
			c.fatal(err)
			return err
		}
	}
}

func (c *conn) hello(r *proto.Reader) error {
	type deadliner interface{ SetReadDeadline(time.Time) error }
	if d, ok := c.rw.(deadliner); ok {
		_ = d.SetReadDeadline(time.Now().Add(c.s.cfg.HelloTimeout))
		defer func() { _ = d.SetReadDeadline(time.Time{}) }()
	}
	f, err := r.Read()
	if err != nil {
		return err
	}
	h, ok := f.Body.(*proto.Hello)
	if !ok {
		return fmt.Errorf("%w: first frame is %s, not Hello", proto.ErrProtocol, f.Type)
	}
	if h.Version != proto.Version {
		return fmt.Errorf("%w: protocol version %d, engine speaks %d", proto.ErrAuth, h.Version, proto.Version)
	}
	if subtle.ConstantTimeCompare(h.Token, c.s.cfg.Token) != 1 {
		return proto.ErrAuth
	}
	c.s.mu.Lock()
	if c.s.cfg.OneTime && c.s.tokenUsed {
		c.s.mu.Unlock()
		return proto.ErrAuth
	}
	c.s.tokenUsed = true
	c.s.mu.Unlock()
	return c.w.Write(proto.TWelcome, 0, &proto.Welcome{Version: proto.Version, PID: os.Getpid()})
}

// dispatch handles one frame in the reader goroutine: it must not block
// on anything but the connection's own bookkeeping.
func (c *conn) dispatch(f proto.Frame) error {
	switch b := f.Body.(type) {
	case *proto.Cancel:
		c.mu.Lock()
		cancel := c.reqs[f.ID]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return nil
	case *proto.Data:
		return c.data(f.ID, b)
	case *proto.Credit:
		c.mu.Lock()
		cr := c.credits[streamKey{f.ID, b.Fd}]
		c.mu.Unlock()
		if cr != nil {
			cr.Add(int(b.N))
		}
		return nil
	case *proto.ToolResult:
		c.toolResult(f.ID, b)
		return nil
	case *proto.Close:
		// The client stopped reading an output stream.
		c.mu.Lock()
		cr := c.credits[streamKey{f.ID, b.Fd}]
		c.mu.Unlock()
		if cr != nil {
			cr.Close(errno.EPIPE)
		}
		return nil
	}
	if !f.Type.IsRequest() {
		return fmt.Errorf("%w: %s from a client", proto.ErrProtocol, f.Type)
	}
	return c.request(f)
}

// data routes stream bytes from the client. Bytes for a stream that no
// longer exists (it ended while they were in flight) are dropped.
func (c *conn) data(id uint64, d *proto.Data) error {
	c.mu.Lock()
	in := c.inboxes[streamKey{id, d.Fd}]
	up := c.uploads[id]
	if d.EOF && in != nil {
		delete(c.inboxes, streamKey{id, d.Fd})
	}
	c.mu.Unlock()
	switch {
	case d.Fd == proto.FdFile && up != nil:
		return up.add(d.Bytes, d.EOF)
	case d.Fd == proto.FdStdin && in != nil:
		if err := in.Push(d.Bytes, d.EOF); err != nil {
			return fmt.Errorf("%w: stdin of %d: %v", proto.ErrProtocol, id, err)
		}
	}
	return nil
}

// request registers a request and starts its handler.
func (c *conn) request(f proto.Frame) error {
	c.mu.Lock()
	if _, dup := c.reqs[f.ID]; dup {
		c.mu.Unlock()
		return fmt.Errorf("%w: request id %d in use", proto.ErrProtocol, f.ID)
	}
	if _, dup := c.procs[f.ID]; dup {
		c.mu.Unlock()
		return fmt.Errorf("%w: request id %d is a process", proto.ErrProtocol, f.ID)
	}
	if len(c.reqs) >= c.s.cfg.MaxRequests {
		c.mu.Unlock()
		return c.respond(f.ID, &proto.Response{Err: proto.ErrorOf(fmt.Errorf("engine: too many requests in flight: %w", errno.EAGAIN))})
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.reqs[f.ID] = cancel
	// Streams the client sends right after the request must find their
	// inbox, so it is made here, before the next frame is read.
	var up *upload
	var stdin *flow.Inbox
	switch b := f.Body.(type) {
	case *proto.WriteFile:
		if b.Size > vmhostMaxTransfer {
			delete(c.reqs, f.ID)
			c.mu.Unlock()
			cancel()
			return fmt.Errorf("%w: WriteFile of %d bytes", proto.ErrProtocol, b.Size)
		}
		up = newUpload(b)
		if !up.complete() {
			c.uploads[f.ID] = up
		}
	case *proto.Run:
		if b.Stdin {
			stdin = c.newStdin(f.ID)
		}
	case *proto.Spawn, *proto.Dial, *proto.Watch:
		stdin = c.newStdin(f.ID)
	}
	c.work.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.work.Done()
		resp := c.handle(ctx, f, up, stdin)
		c.mu.Lock()
		delete(c.reqs, f.ID)
		delete(c.uploads, f.ID)
		c.mu.Unlock()
		cancel()
		if resp != nil {
			_ = c.respond(f.ID, resp)
		}
	}()
	return nil
}

// vmhostMaxTransfer bounds one WriteFile; it matches the public API's
// MaxFileTransfer.
const vmhostMaxTransfer = 256 << 20

// newStdin makes the inbox of a process's stdin; c.mu is held.
func (c *conn) newStdin(id uint64) *flow.Inbox {
	in := flow.NewInbox(proto.Window, func(n int) {
		_ = c.w.Write(proto.TCredit, id, &proto.Credit{Fd: proto.FdStdin, N: uint32(n)})
	})
	c.inboxes[streamKey{id, proto.FdStdin}] = in
	return in
}

func (c *conn) respond(id uint64, r *proto.Response) error {
	return c.w.Write(proto.TResponse, id, r)
}

func (c *conn) vm(id uint64) (*hostedVM, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.vms[id]
	if v == nil {
		return nil, proto.ErrNoVM
	}
	return v, nil
}

func errResp(err error) *proto.Response { return &proto.Response{Err: proto.ErrorOf(err)} }

// handle runs one request and returns its response (nil if the handler
// sent it already).
func (c *conn) handle(ctx context.Context, f proto.Frame, up *upload, stdin *flow.Inbox) *proto.Response {
	switch b := f.Body.(type) {
	case *proto.CreateVM:
		return c.createVM(ctx, b)
	case *proto.VMRef:
		return c.closeVM(ctx, b.VM)
	case *proto.Signal:
		c.mu.Lock()
		p := c.procs[b.Proc]
		c.mu.Unlock()
		if p == nil {
			return errResp(proto.ErrNoVM)
		}
		return errResp(p.p.Signal(b.Sig))
	case *proto.Resize:
		c.mu.Lock()
		p := c.procs[b.Proc]
		c.mu.Unlock()
		if p == nil {
			return errResp(proto.ErrNoVM)
		}
		return errResp(p.p.Resize(b.Rows, b.Cols))
	case *proto.WriteFile:
		v, err := c.vm(b.VM)
		if err != nil {
			return errResp(err)
		}
		data, err := up.wait(ctx)
		if err != nil {
			return errResp(err)
		}
		files := filesOf(v.host, b.Guest)
		if b.At {
			return errResp(files.WriteAt(ctx, b.Name, b.Offset, data))
		}
		return errResp(files.WriteFile(ctx, b.Name, data, b.Perm))
	case *proto.PathOp:
		v, err := c.vm(b.VM)
		if err != nil {
			return errResp(err)
		}
		return c.pathOp(ctx, f.ID, f.Type, v.host, b)
	case *proto.TwoPaths:
		v, err := c.vm(b.VM)
		if err != nil {
			return errResp(err)
		}
		files := filesOf(v.host, b.Guest)
		if f.Type == proto.TRename {
			return errResp(files.Rename(ctx, b.Old, b.New))
		}
		return errResp(files.Symlink(ctx, b.Old, b.New))
	case *proto.MountReq:
		v, err := c.vm(b.VM)
		if err != nil {
			return errResp(err)
		}
		return errResp(v.host.Mount(ctx, vm.Mount(b.Mount)))
	case *proto.Run:
		if stdin != nil {
			defer c.endStdin(f.ID, stdin)
		}
		v, err := c.vm(b.VM)
		if err != nil {
			return errResp(err)
		}
		return c.run(ctx, f.ID, v.host, b, stdin)
	case *proto.Spawn:
		v, err := c.vm(b.VM)
		if err != nil {
			c.endStdin(f.ID, stdin)
			return errResp(err)
		}
		c.spawn(ctx, f.ID, v.host, b, stdin)
		return nil
	case *proto.Dial:
		v, err := c.vm(b.VM)
		if err != nil {
			c.endStdin(f.ID, stdin)
			return errResp(err)
		}
		nc, err := v.host.Dial(ctx, b.Port)
		if err != nil {
			c.endStdin(f.ID, stdin)
			return errResp(err)
		}
		c.serveProcess(f.ID, connProcess(nc), stdin)
		return nil
	case *proto.Watch:
		v, err := c.vm(b.VM)
		if err != nil {
			c.endStdin(f.ID, stdin)
			return errResp(err)
		}
		rc, err := filesOf(v.host, b.Guest).Watch(ctx, b.Path, b.Recursive)
		if err != nil {
			c.endStdin(f.ID, stdin)
			return errResp(err)
		}
		c.serveProcess(f.ID, connProcess(readOnly{rc}), stdin)
		return nil
	case *proto.Metrics:
		return c.metrics()
	case *proto.NewContext:
		return c.newContext(ctx, b)
	case *proto.Evaluate:
		return c.evaluate(ctx, b)
	case *proto.ContextRef:
		return c.closeContext(ctx, b.Context)
	case *proto.Snapshot:
		v, err := c.vm(b.VM)
		if err != nil {
			return errResp(err)
		}
		return c.snapshot(ctx, v.host, b)
	}
	return errResp(fmt.Errorf("engine: %s: %w", f.Type, errno.ENOSYS))
}

// metrics answers a Metrics request with the text exposition.
func (c *conn) metrics() *proto.Response {
	var buf bytes.Buffer
	if err := c.s.cfg.Metrics.WriteText(&buf); err != nil {
		return errResp(fmt.Errorf("engine: %w: %w", err, errno.EIO))
	}
	if buf.Len() > proto.MaxChunk {
		return errResp(&vmhost.TooLargeError{What: "metrics", Size: int64(buf.Len()), Limit: proto.MaxChunk})
	}
	return &proto.Response{Data: buf.Bytes()}
}

// endStdin ends a stdin stream the engine no longer reads, telling the
// client to stop sending it.
func (c *conn) endStdin(id uint64, in *flow.Inbox) {
	c.mu.Lock()
	_, live := c.inboxes[streamKey{id, proto.FdStdin}]
	delete(c.inboxes, streamKey{id, proto.FdStdin})
	c.mu.Unlock()
	in.Close()
	if live {
		_ = c.w.Write(proto.TClose, id, &proto.Close{Fd: proto.FdStdin, Err: proto.ErrorOf(errno.EPIPE)})
	}
}

func (c *conn) createVM(ctx context.Context, b *proto.CreateVM) *proto.Response {
	var pol *policy.Policy
	if len(b.Permissions) > 0 {
		p, err := policy.Parse(b.Permissions)
		if err != nil {
			return errResp(err)
		}
		pol = p
	}
	c.mu.Lock()
	if len(c.vms) >= c.s.cfg.MaxVMs {
		c.mu.Unlock()
		return errResp(fmt.Errorf("engine: too many VMs: %w", errno.EAGAIN))
	}
	c.mu.Unlock()
	id := c.s.nextVM.Add(1)
	cfg := vmhost.Config{
		Policy:   pol,
		Limits:   b.Limits,
		Cwd:      b.Cwd,
		Hostname: b.Hostname,
		Clock:    b.Clock,
		Logger:   c.s.log,
		Runtime:  c.s.cfg.Runtime,
	}
	for _, m := range b.Mounts {
		cfg.Mounts = append(cfg.Mounts, vm.Mount(m))
	}
	if len(b.Tools) > 0 {
		cfg.Tools = &remoteTools{c: c, vm: id, names: slices.Clone(b.Tools)}
	}
	if b.Audit {
		cfg.Audit = func(ev policy.Event) {
			_ = c.w.Write(proto.TAudit, id, &proto.Audit{
				Time: ev.Time.UnixNano(), Domain: string(ev.Domain), Op: ev.Op,
				Target: ev.Target, Allowed: ev.Allowed, Rule: ev.Rule, To: ev.To,
			})
		}
	}
	if err := c.seed(ctx, &cfg, b); err != nil {
		return errResp(err)
	}
	h, err := vmhost.New(ctx, cfg)
	if err != nil {
		return errResp(err)
	}
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		_ = h.Close(context.Background())
		return errResp(c.ctx.Err())
	}
	c.vms[id] = &hostedVM{id: id, host: h}
	c.mu.Unlock()
	c.s.track(h)
	return &proto.Response{VM: id}
}

func (c *conn) closeVM(ctx context.Context, id uint64) *proto.Response {
	c.mu.Lock()
	v := c.vms[id]
	delete(c.vms, id)
	c.mu.Unlock()
	if v == nil {
		return errResp(proto.ErrNoVM)
	}
	err := v.host.Close(ctx)
	c.forgetContexts(id)
	c.s.untrack(v.host)
	_ = c.w.Write(proto.TVMEvent, id, &proto.VMEvent{Event: proto.VMClosed})
	return errResp(err)
}

// filesOf returns the file operations of the host or, with guest, of the
// VM's guest user under the VM's policy.
func filesOf(h *vmhost.Host, guest bool) vmhost.FileOps {
	if guest {
		return h.Guest()
	}
	return h.Files
}

func (c *conn) pathOp(ctx context.Context, id uint64, t proto.Type, host *vmhost.Host, b *proto.PathOp) *proto.Response {
	if t == proto.TUnmount {
		if b.Guest {
			// Mounts are the embedder's: a guest may not change them.
			return errResp(errno.Path("umount", b.Name, errno.EPERM))
		}
		return errResp(host.Unmount(ctx, b.Name))
	}
	h := filesOf(host, b.Guest)
	switch t {
	case proto.TReadFile:
		if b.Chunk {
			data, err := h.ReadAt(ctx, b.Name, b.Offset, int(min(b.Limit, proto.MaxChunk)))
			if err != nil {
				return errResp(err)
			}
			return &proto.Response{Data: data}
		}
		data, err := h.ReadFile(ctx, b.Name, b.Limit)
		if err != nil {
			return errResp(err)
		}
		// All but the last chunk go as Data; the last rides in the
		// Response.
		for len(data) > proto.MaxChunk {
			if err := c.w.Write(proto.TData, id, &proto.Data{Fd: proto.FdFile, Bytes: data[:proto.MaxChunk]}); err != nil {
				return errResp(err)
			}
			data = data[proto.MaxChunk:]
		}
		return &proto.Response{Data: data}
	case proto.TMkdir:
		return errResp(h.Mkdir(ctx, b.Name, b.Mode))
	case proto.TMkdirAll:
		return errResp(h.MkdirAll(ctx, b.Name, b.Mode))
	case proto.TChmod:
		return errResp(h.Chmod(ctx, b.Name, b.Mode))
	case proto.TReadDir:
		dir, ents, err := h.ReadDir(ctx, b.Name)
		if err != nil {
			return errResp(err)
		}
		out := make([]proto.DirEntry, len(ents))
		for i, e := range ents {
			out[i] = proto.DirEntry{Name: e.Name, Type: uint32(e.Type)}
		}
		resp := &proto.Response{Dir: dir, Entries: out}
		if _, err := proto.Append(nil, proto.TResponse, id, resp); errors.Is(err, proto.ErrFrameTooLarge) {
			return errResp(&vmhost.TooLargeError{What: "directory " + b.Name, Size: int64(len(ents)), Limit: int64(len(ents))})
		}
		return resp
	case proto.TStat, proto.TLstat:
		st, err := h.Stat(ctx, b.Name, t == proto.TStat)
		if err != nil {
			return errResp(err)
		}
		return &proto.Response{Stat: StatToWire(st)}
	case proto.TRemove, proto.TRemoveAll:
		return errResp(h.Remove(ctx, b.Name, t == proto.TRemoveAll))
	case proto.TReadlink:
		target, err := h.Readlink(ctx, b.Name)
		if err != nil {
			return errResp(err)
		}
		return &proto.Response{Target: target}
	}
	return errResp(fmt.Errorf("engine: %s: %w", t, errno.ENOSYS))
}

// StatToWire converts file attributes for the wire.
func StatToWire(st vfs.Stat) *proto.Stat {
	return &proto.Stat{Mode: st.Mode, Ino: st.Ino, Nlink: st.Nlink, UID: st.UID, GID: st.GID, Size: st.Size,
		Atime: st.Atime.UnixNano(), Mtime: st.Mtime.UnixNano(), Ctime: st.Ctime.UnixNano()}
}

// shutdown ends everything of a closed connection: requests are
// cancelled (by the connection's context), streams fail, VMs close.
func (c *conn) shutdown() {
	c.mu.Lock()
	vms := make([]*hostedVM, 0, len(c.vms))
	for _, v := range c.vms {
		vms = append(vms, v)
	}
	c.vms = map[uint64]*hostedVM{}
	for _, in := range c.inboxes {
		in.Fail(io.ErrUnexpectedEOF)
	}
	for _, cr := range c.credits {
		cr.Close(errno.EPIPE)
	}
	for _, up := range c.uploads {
		up.fail(io.ErrUnexpectedEOF)
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, v := range vms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = v.host.Close(context.Background())
			c.s.untrack(v.host)
		}()
	}
	wg.Wait()
	c.work.Wait()
}
