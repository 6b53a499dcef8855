package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/engine/flow"
	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// VM is a VM on an engine. It offers the operations of vmhost.Host with
// the same arguments, results and errors.
type VM struct {
	*Files // the host's

	c     *Conn
	id    uint64
	audit chan policy.Event
	// tools run the VM's host tools for its guests (jsctx.go), with the
	// VM's bounds.
	tools       kernel.ToolHost
	toolBytes   int
	toolTimeout time.Duration

	mu   sync.Mutex
	done chan struct{}
	err  error
}

// ID returns the VM's id on its connection.
func (v *VM) ID() uint64 { return v.id }

// Conn returns the connection the VM lives on.
func (v *VM) Conn() *Conn { return v.c }

// Done is closed when the VM is closed or its engine is lost.
func (v *VM) Done() <-chan struct{} { return v.done }

// Err returns nil while the VM is usable, vmhost.ErrClosed after Close,
// or an error matching ErrLost after its engine was lost.
func (v *VM) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

func (v *VM) setDone(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err == nil {
		v.err = err
		close(v.done)
	}
}

// fix maps the errors of a call: once the VM is gone, a call fails with
// why it is gone (closed, or lost), whatever the engine said.
func (v *VM) fix(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, proto.ErrNoVM) {
		if e := v.Err(); e != nil {
			return e
		}
		return vmhost.ErrClosed
	}
	return err
}

func (v *VM) call(ctx context.Context, t proto.Type, body any) (*proto.Response, error) {
	if err := v.Err(); err != nil {
		return nil, err
	}
	r, err := v.c.call(ctx, t, body)
	return r, v.fix(err)
}

// Close closes the VM on the engine; it may be called again.
func (v *VM) Close(ctx context.Context) error {
	if err := v.Err(); err != nil {
		return nil
	}
	_, err := v.c.call(context.WithoutCancel(ctx), proto.TCloseVM, &proto.VMRef{VM: v.id})
	v.c.mu.Lock()
	delete(v.c.vms, v.id)
	v.c.mu.Unlock()
	v.setDone(vmhost.ErrClosed)
	if errors.Is(err, proto.ErrNoVM) || errors.Is(err, ErrLost) || errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// Files are the file operations of a VM on an engine, as the host (the
// VM's own methods) or as the guest (Guest): vmhost.Files over the
// connection.
type Files struct {
	v     *VM
	guest bool
}

var _ vmhost.FileOps = (*Files)(nil)

// Guest returns the file operations of the VM's guest user under the
// VM's policy (see vmhost.Files).
func (v *VM) Guest() vmhost.FileOps { return &Files{v: v, guest: true} }

// ReadFile returns the contents of a file, failing with
// *vmhost.TooLargeError past limit bytes.
func (f *Files) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := f.v.Err(); err != nil {
		return nil, err
	}
	id := f.v.c.nextID.Add(1)
	ch, err := f.v.c.begin(id)
	if err != nil {
		return nil, err
	}
	f.v.c.mu.Lock()
	if f.v.c.files != nil {
		f.v.c.files[id] = &download{limit: limit}
	}
	f.v.c.mu.Unlock()
	if err := f.v.c.send(proto.TReadFile, id, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name, Limit: limit}); err != nil {
		f.v.c.forget(id)
		return nil, err
	}
	r, err := f.v.c.wait(ctx, id, ch, false)
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, f.v.fix(r.Err.Err())
	}
	if r.Data == nil {
		r.Data = []byte{}
	}
	return r.Data, nil
}

// ReadAt reads up to n bytes (at most proto.MaxChunk) of the regular
// file name at offset off; see vmhost.Host.ReadAt.
func (f *Files) ReadAt(ctx context.Context, name string, off int64, n int) ([]byte, error) {
	r, err := f.v.call(ctx, proto.TReadFile, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name, Offset: off, Limit: int64(min(max(n, 0), proto.MaxChunk)), Chunk: true})
	if err != nil {
		return nil, err
	}
	if r.Data == nil {
		r.Data = []byte{}
	}
	return r.Data, nil
}

// WriteAt writes data (at most proto.MaxChunk bytes) into the existing
// file name at offset off; see vmhost.Host.WriteAt.
func (f *Files) WriteAt(ctx context.Context, name string, off int64, data []byte) error {
	if len(data) > proto.MaxChunk {
		return &vmhost.TooLargeError{What: "chunk", Size: int64(len(data)), Limit: proto.MaxChunk}
	}
	_, err := f.v.call(ctx, proto.TWriteFile, &proto.WriteFile{VM: f.v.id, Guest: f.guest, Name: name, Size: int64(len(data)), Data: data, Offset: off, At: true})
	return err
}

// WriteFile writes data to a file, creating it with perm or truncating it.
func (f *Files) WriteFile(ctx context.Context, name string, data []byte, perm uint32) error {
	if err := f.v.Err(); err != nil {
		return err
	}
	first := data[:min(len(data), proto.MaxChunk)]
	id := f.v.c.nextID.Add(1)
	ch, err := f.v.c.begin(id)
	if err != nil {
		return err
	}
	req := &proto.WriteFile{VM: f.v.id, Guest: f.guest, Name: name, Perm: perm, Size: int64(len(data)), Data: first}
	if err := f.v.c.send(proto.TWriteFile, id, req); err != nil {
		f.v.c.forget(id)
		return err
	}
	// The rest follows as file data; the engine holds it until complete.
	for rest := data[len(first):]; len(rest) > 0; {
		n := min(len(rest), proto.MaxChunk)
		if err := f.v.c.send(proto.TData, id, &proto.Data{Fd: proto.FdFile, Bytes: rest[:n], EOF: n == len(rest)}); err != nil {
			f.v.c.forget(id)
			return err
		}
		rest = rest[n:]
	}
	r, err := f.v.c.wait(ctx, id, ch, false)
	if err != nil {
		return err
	}
	return f.v.fix(r.Err.Err())
}

// Mkdir creates one directory.
func (f *Files) Mkdir(ctx context.Context, name string, perm uint32) error {
	_, err := f.v.call(ctx, proto.TMkdir, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name, Mode: perm})
	return err
}

// MkdirAll creates a directory and any missing parents.
func (f *Files) MkdirAll(ctx context.Context, name string, perm uint32) error {
	_, err := f.v.call(ctx, proto.TMkdirAll, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name, Mode: perm})
	return err
}

// ReadDir returns a directory's resolved path and its sorted entries.
func (f *Files) ReadDir(ctx context.Context, name string) (string, []vmhost.DirEntry, error) {
	r, err := f.v.call(ctx, proto.TReadDir, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name})
	if err != nil {
		return "", nil, err
	}
	out := make([]vmhost.DirEntry, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = vmhost.DirEntry{Name: e.Name, Type: vfs.FileType(e.Type)}
	}
	return r.Dir, out, nil
}

// Stat returns the attributes of name.
func (f *Files) Stat(ctx context.Context, name string, follow bool) (vfs.Stat, error) {
	t := proto.TLstat
	if follow {
		t = proto.TStat
	}
	r, err := f.v.call(ctx, t, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name})
	if err != nil {
		return vfs.Stat{}, err
	}
	if r.Stat == nil {
		return vfs.Stat{}, errno.EIO
	}
	s := r.Stat
	return vfs.Stat{Mode: s.Mode, Ino: s.Ino, Nlink: s.Nlink, UID: s.UID, GID: s.GID, Size: s.Size,
		Atime: time.Unix(0, s.Atime), Mtime: time.Unix(0, s.Mtime), Ctime: time.Unix(0, s.Ctime)}, nil
}

// Remove removes name (with all, recursively).
func (f *Files) Remove(ctx context.Context, name string, all bool) error {
	t := proto.TRemove
	if all {
		t = proto.TRemoveAll
	}
	_, err := f.v.call(ctx, t, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name})
	return err
}

// Rename renames oldname to newname.
func (f *Files) Rename(ctx context.Context, oldname, newname string) error {
	_, err := f.v.call(ctx, proto.TRename, &proto.TwoPaths{VM: f.v.id, Guest: f.guest, Old: oldname, New: newname})
	return err
}

// Symlink creates link pointing to target.
func (f *Files) Symlink(ctx context.Context, target, link string) error {
	_, err := f.v.call(ctx, proto.TSymlink, &proto.TwoPaths{VM: f.v.id, Guest: f.guest, Old: target, New: link})
	return err
}

// Readlink returns a symlink's target.
func (f *Files) Readlink(ctx context.Context, name string) (string, error) {
	r, err := f.v.call(ctx, proto.TReadlink, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name})
	if err != nil {
		return "", err
	}
	return r.Target, nil
}

// Chmod sets the mode bits of name.
func (f *Files) Chmod(ctx context.Context, name string, mode uint32) error {
	_, err := f.v.call(ctx, proto.TChmod, &proto.PathOp{VM: f.v.id, Guest: f.guest, Name: name, Mode: mode})
	return err
}

// Mount mounts a filesystem.
func (v *VM) Mount(ctx context.Context, m vm.Mount) error {
	_, err := v.call(ctx, proto.TMount, &proto.MountReq{VM: v.id, Mount: proto.Mount(m)})
	return err
}

// Unmount removes a mount.
func (v *VM) Unmount(ctx context.Context, guestPath string) error {
	_, err := v.call(ctx, proto.TUnmount, &proto.PathOp{VM: v.id, Name: guestPath})
	return err
}

// newInbox registers the receiving end of stream (id, fd).
func (c *Conn) newInbox(id uint64, fd uint8) *flow.Inbox {
	in := flow.NewInbox(proto.Window, func(n int) {
		_ = c.send(proto.TCredit, id, &proto.Credit{Fd: fd, N: uint32(n)})
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		in.Fail(c.err)
		return in
	}
	c.inboxes[streamKey{id, fd}] = in
	return in
}

// newCredit registers the sending end of stream (id, fd).
func (c *Conn) newCredit(id uint64, fd uint8) *flow.Credit {
	cr := flow.NewCredit(proto.Window)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		cr.Close(c.err)
		return cr
	}
	c.credits[streamKey{id, fd}] = cr
	return cr
}

// dropStreams forgets the streams of id.
func (c *Conn) dropStreams(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for fd := uint8(0); fd <= proto.FdStderr; fd++ {
		delete(c.inboxes, streamKey{id, fd})
		delete(c.credits, streamKey{id, fd})
	}
}

// consume copies a stream to w. Like the in-process drain, it keeps
// reading after w fails, so a broken writer cannot stall the program.
func consume(in *flow.Inbox, w io.Writer, done *sync.WaitGroup) {
	defer done.Done()
	buf := make([]byte, 64<<10)
	werr := false
	for {
		n, err := in.Read(buf)
		if n > 0 && !werr {
			if _, err := w.Write(buf[:n]); err != nil {
				werr = true
			}
		}
		if err != nil {
			return
		}
	}
}

// sendStdin copies r into stream (id, FdStdin) as credit allows, then
// ends the stream.
func (c *Conn) sendStdin(id uint64, cr *flow.Credit, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := r.Read(buf)
		for off := 0; off < n; {
			k, err := cr.Take(context.Background(), n-off)
			if err != nil {
				return // the engine stopped reading, or the run is over
			}
			if err := c.send(proto.TData, id, &proto.Data{Fd: proto.FdStdin, Bytes: buf[off : off+k]}); err != nil {
				return
			}
			off += k
		}
		if rerr != nil {
			if cr.Err() == nil {
				_ = c.send(proto.TData, id, &proto.Data{Fd: proto.FdStdin, EOF: true})
			}
			return
		}
	}
}

// Run runs a program on the engine as vmhost.Host.Run does here: output
// is written to spec's writers as it arrives, and every byte has been
// written when Run returns.
func (v *VM) Run(ctx context.Context, spec vmhost.RunSpec) (*vmhost.Exit, error) {
	if err := v.Err(); err != nil {
		return nil, err
	}
	c := v.c
	id := c.nextID.Add(1)
	outW, errW := spec.Stdout, spec.Stderr
	if outW == nil {
		outW = io.Discard
	}
	if errW == nil {
		errW = io.Discard
	}
	out, errIn := c.newInbox(id, proto.FdStdout), c.newInbox(id, proto.FdStderr)
	var cr *flow.Credit
	if spec.Stdin != nil {
		cr = c.newCredit(id, proto.FdStdin)
	}
	defer func() {
		c.dropStreams(id)
		out.Close()
		errIn.Close()
		if cr != nil {
			cr.Close(nil)
		}
	}()
	ch, err := c.begin(id)
	if err != nil {
		return nil, err
	}
	var consumers sync.WaitGroup
	consumers.Add(2)
	go consume(out, outW, &consumers)
	go consume(errIn, errW, &consumers)
	req := &proto.Run{VM: v.id, Argv: spec.Argv, Env: spec.Env, Cwd: spec.Cwd,
		Timeout: int64(spec.Timeout), Stdin: spec.Stdin != nil}
	if err := c.send(proto.TRun, id, req); err != nil {
		c.forget(id)
		out.Fail(err)
		errIn.Fail(err)
		consumers.Wait()
		return nil, err
	}
	if cr != nil {
		go c.sendStdin(id, cr, spec.Stdin)
	}
	r, err := c.wait(ctx, id, ch, true)
	if err == nil {
		// The response ends the output streams: every byte came before it.
		c.dropStreams(id)
		_ = out.Push(nil, true)
		_ = errIn.Push(nil, true)
	}
	// Wait until the last bytes are written (or the streams failed with
	// the connection).
	consumers.Wait()
	if err != nil {
		return nil, v.fix(err)
	}
	var exit *vmhost.Exit
	if r.Exit != nil {
		exit = &vmhost.Exit{ExitStatus: vmhost.ExitStatus{Code: r.Exit.Code, Signal: r.Exit.Signal},
			Outcome: r.Exit.Outcome, Duration: time.Duration(r.Exit.Duration), Note: r.Exit.Note, Reason: r.Exit.Reason}
	}
	err = v.fix(r.Err.Err())
	if err != nil && exit != nil && exit.Outcome == vmhost.Cancelled && ctx.Err() != nil {
		err = ctx.Err()
	}
	if exit == nil && err == nil {
		err = errno.EIO
	}
	return exit, err
}

// Spawn starts a program on the engine.
func (v *VM) Spawn(ctx context.Context, spec vmhost.SpawnSpec) (vmhost.Process, error) {
	body := &proto.Spawn{VM: v.id, Argv: spec.Argv, Env: spec.Env, Cwd: spec.Cwd}
	if spec.PTY != nil {
		body.PTY = &proto.Winsize{Rows: spec.PTY.Rows, Cols: spec.PTY.Cols}
	}
	p, err := v.start(ctx, proto.TSpawn, body)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Dial connects to the guest's TCP listener on port (see proto.Dial).
func (v *VM) Dial(ctx context.Context, port uint16) (net.Conn, error) {
	p, err := v.start(ctx, proto.TDial, &proto.Dial{VM: v.id, Port: port})
	if err != nil {
		return nil, err
	}
	return newStreamConn(p, port), nil
}

// Watch watches path in the VM (see proto.Watch): the stream of its
// inotify records, which Close ends.
func (f *Files) Watch(ctx context.Context, path string, recursive bool) (io.ReadCloser, error) {
	p, err := f.v.start(ctx, proto.TWatch, &proto.Watch{VM: f.v.id, Path: path, Recursive: recursive, Guest: f.guest})
	if err != nil {
		return nil, err
	}
	return newStreamConn(p, 0), nil
}

// start sends a request that starts a process (Spawn) or a connection
// (Dial) and returns it with its streams.
func (v *VM) start(ctx context.Context, typ proto.Type, body any) (*Process, error) {
	if err := v.Err(); err != nil {
		return nil, err
	}
	c := v.c
	id := c.nextID.Add(1)
	p := &Process{c: c, id: id, exit: make(chan struct{})}
	p.stdout = &streamReader{c: c, id: id, fd: proto.FdStdout, in: c.newInbox(id, proto.FdStdout)}
	p.stderr = &streamReader{c: c, id: id, fd: proto.FdStderr, in: c.newInbox(id, proto.FdStderr)}
	p.stdin = &streamWriter{c: c, id: id, cr: c.newCredit(id, proto.FdStdin)}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.procs[id] = p
	c.mu.Unlock()
	fail := func(err error) (*Process, error) {
		c.mu.Lock()
		delete(c.procs, id)
		c.mu.Unlock()
		c.dropStreams(id)
		return nil, err
	}
	ch, err := c.begin(id)
	if err != nil {
		return fail(err)
	}
	if err := c.send(typ, id, body); err != nil {
		c.forget(id)
		return fail(err)
	}
	// Wait for the answer even past ctx: a process that started must be
	// handed out (or it would run unseen).
	r, err := c.wait(ctx, id, ch, true)
	if err != nil {
		return fail(v.fix(err))
	}
	if r.Err != nil {
		return fail(v.fix(r.Err.Err()))
	}
	p.pid = r.PID
	return p, nil
}

// Process is a process spawned on an engine.
type Process struct {
	c      *Conn
	id     uint64
	pid    int
	stdin  *streamWriter
	stdout *streamReader
	stderr *streamReader

	mu     sync.Mutex
	exit   chan struct{}
	status vmhost.ExitStatus
	err    error
}

func (p *Process) exited(st vmhost.ExitStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exit:
	default:
		p.status = st
		close(p.exit)
	}
}

func (p *Process) lost() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exit:
	default:
		p.err = p.c.Err()
		close(p.exit)
	}
}

// PID is the process id inside the VM.
func (p *Process) PID() int { return p.pid }

// Stdin is the process's standard input.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the process's standard output.
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// Stderr is the process's standard error.
func (p *Process) Stderr() io.ReadCloser { return p.stderr }

// Signal sends sig to the process.
func (p *Process) Signal(sig int) error {
	_, err := p.c.call(context.Background(), proto.TSignal, &proto.Signal{Proc: p.id, Sig: sig})
	return err
}

// Resize sets the window size of the process's terminal.
func (p *Process) Resize(rows, cols uint16) error {
	_, err := p.c.call(context.Background(), proto.TResize, &proto.Resize{Proc: p.id, Rows: rows, Cols: cols})
	return err
}

// Wait waits for the process to exit.
func (p *Process) Wait(ctx context.Context) (vmhost.ExitStatus, error) {
	select {
	case <-p.exit:
	case <-ctx.Done():
		return vmhost.ExitStatus{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status, p.err
}

// streamReader reads an output stream of a spawned process.
type streamReader struct {
	c    *Conn
	id   uint64
	fd   uint8
	in   *flow.Inbox
	once sync.Once
}

func (r *streamReader) Read(b []byte) (int, error) {
	n, err := r.in.Read(b)
	if errors.Is(err, flow.ErrClosed) {
		err = errno.EBADF
	}
	return n, err
}

func (r *streamReader) Close() error {
	r.once.Do(func() {
		r.in.Close()
		r.c.mu.Lock()
		delete(r.c.inboxes, streamKey{r.id, r.fd})
		r.c.mu.Unlock()
		// Tell the engine, which closes its end of the pipe: the process
		// then gets EPIPE, as it would here.
		_ = r.c.send(proto.TClose, r.id, &proto.Close{Fd: r.fd})
	})
	return nil
}

// streamWriter writes the stdin stream of a spawned process.
type streamWriter struct {
	c    *Conn
	id   uint64
	cr   *flow.Credit
	mu   sync.Mutex // one Write at a time keeps the bytes in order
	once sync.Once
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for n < len(b) {
		k, err := w.cr.Take(context.Background(), min(len(b)-n, proto.MaxChunk))
		if err != nil {
			if errors.Is(err, flow.ErrClosed) {
				err = errno.EPIPE
			}
			return n, err
		}
		if err := w.c.send(proto.TData, w.id, &proto.Data{Fd: proto.FdStdin, Bytes: b[n : n+k]}); err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

func (w *streamWriter) Close() error {
	w.once.Do(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.cr.Err() == nil {
			_ = w.c.send(proto.TData, w.id, &proto.Data{Fd: proto.FdStdin, EOF: true})
		}
		w.cr.Close(errno.EBADF)
		w.c.mu.Lock()
		delete(w.c.credits, streamKey{w.id, proto.FdStdin})
		w.c.mu.Unlock()
	})
	return nil
}

// SnapshotTo has the engine save the VM to the store at loc; see
// vmhost.Host.SnapshotTo.
func (v *VM) SnapshotTo(ctx context.Context, loc string, creds snapshot.Credentials, meta []byte) (snapshot.Summary, error) {
	r, err := v.call(ctx, proto.TSnapshot, &proto.Snapshot{VM: v.id, Store: loc, Meta: meta, Auth: StoreAuth(creds)})
	if err != nil {
		return snapshot.Summary{}, err
	}
	var sum snapshot.Summary
	if err := json.Unmarshal(r.Data, &sum); err != nil {
		return snapshot.Summary{}, fmt.Errorf("%w: snapshot summary: %w", proto.ErrProtocol, err)
	}
	return sum, nil
}

// StoreAuth returns the protocol's form of creds (nil for none).
func StoreAuth(creds snapshot.Credentials) *proto.StoreAuth {
	if creds == (snapshot.Credentials{}) {
		return nil
	}
	return &proto.StoreAuth{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, SessionToken: creds.SessionToken}
}
