package js

import (
	"context"
	"encoding/json"
	"github.com/secexec/secexec/internal/valve"
	"sync"
	"sync/atomic"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// readChunk is how much one asynchronous read delivers at most.
const readChunk = 64 << 10

// maxHandles bounds the asynchronous readers and children of a process.
const maxHandles = 4096

// reader reads a descriptor on its own goroutine and posts each chunk to
// the loop, waiting until the loop delivered it before reading on.
type reader struct {
	h   int
	ref bool
	// once marks a reader of one read (fs.read on a pipe or terminal):
	// it ends with its first chunk.
	once   bool
	cancel context.CancelFunc
	valve  *valve.Valve // closed while JavaScript has paused the reader
}

func (rd *reader) stop() { rd.cancel() }

// post sends an event to the loop unless ctx ends first.
func (r *rt) post(ctx context.Context, ev event) bool {
	select {
	case r.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *rt) startReader(fd, h int) error {
	return r.startReadLoop(fd, h, func(ctx context.Context, f vfs.File) (event, bool) {
		buf := make([]byte, readChunk)
		n, err := f.Read(ctx, buf)
		ev := event{kind: "data", data: buf[:n]}
		if err != nil && n == 0 {
			ev.code = errnoName(err)
		}
		return ev, n == 0 || err != nil
	})
}

// startReadOnce reads fd once, up to n bytes (at most readChunk), on a
// goroutine and posts what it got to the loop as reader h's chunk, so
// that fs.read on a pipe or a terminal waits without stopping the loop
// (a Go WebAssembly program, esbuild-wasm's service, reads its stdin so
// while its timers must run).
func (r *rt) startReadOnce(fd, h, n int) error {
	if n <= 0 || n > readChunk {
		n = readChunk
	}
	if err := r.startReadLoop(fd, h, func(ctx context.Context, f vfs.File) (event, bool) {
		buf := make([]byte, n)
		got, err := f.Read(ctx, buf)
		ev := event{kind: "data", data: buf[:got]}
		if err != nil && got == 0 {
			ev.code = errnoName(err)
		}
		return ev, true
	}); err != nil {
		return err
	}
	r.readers[h].once = true
	return nil
}

// startReadLoop registers reader h of fd and runs next on a goroutine of
// its own: each event next returns is delivered to the loop (addressed to
// h) before next runs again, so a reader holds at most one chunk, and
// pausing h stops the reads. It ends after the event next marks last.
func (r *rt) startReadLoop(fd, h int, next func(ctx context.Context, f vfs.File) (ev event, last bool)) error {
	if len(r.readers) >= maxHandles {
		return errno.EMFILE
	}
	if _, dup := r.readers[h]; dup {
		return errno.EINVAL
	}
	f, err := r.p.File(fd)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.ctx)
	rd := &reader{h: h, ref: true, cancel: cancel, valve: valve.New(false)}
	r.readers[h] = rd
	go func() {
		defer f.DecRef()
		for {
			if !rd.valve.Wait(ctx) {
				return
			}
			ev, last := next(ctx, f)
			if ctx.Err() != nil {
				return
			}
			ev.a = h
			if _, acked := r.deliver(ctx, ev); !acked || last {
				return
			}
		}
	}()
	return nil
}

// deliver posts ev to the loop and waits until the loop handled it. It
// reports whether the event was posted at all (else the caller still owns
// what it carries) and whether it was handled before ctx ended.
func (r *rt) deliver(ctx context.Context, ev event) (posted, acked bool) {
	ev.ack = make(chan struct{})
	if !r.post(ctx, ev) {
		return false, false
	}
	select {
	case <-ev.ack:
		return true, true
	case <-ctx.Done():
		return true, false
	}
}

func errnoName(err error) string {
	if e := errno.Of(err); e != 0 {
		return e.Name()
	}
	return "EIO"
}

// child is a process spawned asynchronously, watched until it exits.
type child struct {
	pid    int
	ref    bool
	cancel context.CancelFunc
}

func (c *child) stop() { c.cancel() }

type spawnRequest struct {
	Argv      []string `json:"argv"`
	Path      string   `json:"path"`
	Env       []string `json:"env"`
	Cwd       string   `json:"cwd"`
	Stdio     []any    `json:"stdio"`
	Detached  bool     `json:"detached"`
	Timeout   float64  `json:"timeout"`
	KillSig   int      `json:"killSignal"`
	MaxBuffer float64  `json:"maxBuffer"`
	HasInput  bool     `json:"hasInput"`
}

// spawnStdio wires the child's descriptors 0-2. It returns the actions
// for the spawn, the parent's end of each pipe (-1 if none) and the
// child's ends, which the parent closes once the child has them.
func (r *rt) spawnStdio(stdio []any) (acts []kernel.FileAction, parent [3]int, childEnds []int, err error) {
	parent = [3]int{-1, -1, -1}
	fail := func(e error) ([]kernel.FileAction, [3]int, []int, error) {
		for _, fd := range parent {
			if fd >= 0 {
				_ = r.p.Close(fd)
			}
		}
		for _, fd := range childEnds {
			_ = r.p.Close(fd)
		}
		return nil, [3]int{-1, -1, -1}, nil, e
	}
	for i := 0; i < 3; i++ {
		var s any = "pipe"
		if i < len(stdio) {
			s = stdio[i]
		}
		switch v := s.(type) {
		case string:
			switch v {
			case "pipe":
				rfd, wfd, err := r.p.Pipe(vfs.O_CLOEXEC)
				if err != nil {
					return fail(err)
				}
				if i == 0 {
					parent[i] = wfd
					childEnds = append(childEnds, rfd)
					acts = append(acts, kernel.FileDup2{From: rfd, To: 0})
				} else {
					parent[i] = rfd
					childEnds = append(childEnds, wfd)
					acts = append(acts, kernel.FileDup2{From: wfd, To: i})
				}
			case "ignore":
				acts = append(acts, kernel.FileOpen{FD: i, Path: "/dev/null", Flags: vfs.O_RDWR})
			default:
				return fail(errno.EINVAL)
			}
		case float64:
			if v < 0 || v > 1<<20 || v != float64(int(v)) {
				return fail(errno.EINVAL)
			}
			acts = append(acts, kernel.FileDup2{From: int(v), To: i})
		default:
			return fail(errno.EINVAL)
		}
	}
	return acts, parent, childEnds, nil
}

// watchChild keeps the loop alive for child c and posts its "exit" event
// when it ends.
func (r *rt) watchChild(c *kernel.Process) {
	ctx, cancel := context.WithCancel(r.ctx)
	ch := &child{pid: c.PID(), ref: true, cancel: cancel}
	r.children[ch.pid] = ch
	go func() {
		_, st, err := r.p.Wait(ctx, ch.pid, 0)
		if err != nil {
			return
		}
		code, sig := statusCode(st)
		r.post(ctx, event{kind: "exit", a: ch.pid, b: code, c: sig})
	}()
}

// spawnChild starts req's child; extra actions run after the stdio ones.
func (r *rt) spawnChild(req *spawnRequest, extra ...kernel.FileAction) (*kernel.Process, [3]int, error) {
	if len(req.Argv) == 0 {
		return nil, [3]int{}, errno.EINVAL
	}
	acts, parent, childEnds, err := r.spawnStdio(req.Stdio)
	if err != nil {
		return nil, parent, err
	}
	acts, temps, err := liftSources(r.p, append(acts, extra...))
	childEnds = append(childEnds, temps...)
	if err != nil {
		for _, fd := range childEnds {
			_ = r.p.Close(fd)
		}
		for _, fd := range parent {
			if fd >= 0 {
				_ = r.p.Close(fd)
			}
		}
		return nil, [3]int{-1, -1, -1}, err
	}
	// Children start with every signal at its default, as libuv's spawn
	// gives them (node itself ignores SIGPIPE).
	opts := kernel.SpawnOptions{Argv: req.Argv, Path: req.Path, Env: req.Env, Cwd: req.Cwd,
		Actions: acts, NewGroup: req.Detached, SigDefault: ^uint64(0)}
	c, err := r.p.Spawn(r.ctx, opts)
	for _, fd := range childEnds {
		_ = r.p.Close(fd)
	}
	if err != nil {
		for _, fd := range parent {
			if fd >= 0 {
				_ = r.p.Close(fd)
			}
		}
		return nil, [3]int{-1, -1, -1}, err
	}
	return c, parent, nil
}

// liftSources gives node's stdio mapping its meaning under the kernel's
// POSIX-ordered file actions. Node (libuv) reads every source descriptor
// from the parent's table, all at once: stdio [0, 2, 1] swaps stdout and
// stderr. The kernel runs the actions one after another on the child's
// table, where an earlier action may already have replaced a later
// action's source. So each source below the highest target is first
// duplicated in the parent (close-on-exec) above every target, where no
// action writes; the caller closes the returned copies after the spawn.
func liftSources(p *kernel.Process, acts []kernel.FileAction) ([]kernel.FileAction, []int, error) {
	floor := 0
	for _, a := range acts {
		switch a := a.(type) {
		case kernel.FileDup2:
			floor = max(floor, a.To+1)
		case kernel.FileOpen:
			floor = max(floor, a.FD+1)
		case kernel.FileClose:
			floor = max(floor, a.FD+1)
		}
	}
	out := make([]kernel.FileAction, len(acts))
	var temps []int
	for i, a := range acts {
		out[i] = a
		d, ok := a.(kernel.FileDup2)
		if !ok || d.From >= floor {
			continue
		}
		nfd, err := p.Dup(d.From, floor, true)
		if err != nil {
			for _, fd := range temps {
				_ = p.Close(fd)
			}
			return nil, nil, err
		}
		temps = append(temps, nfd)
		out[i] = kernel.FileDup2{From: nfd, To: d.To}
	}
	return out, temps, nil
}

func statusCode(st kernel.WaitStatus) (code, sig int) {
	if st.Exited {
		return st.Code & 0xff, 0
	}
	return 0, int(st.Signal)
}

// bridgeReadStart starts reader h of fd: its chunks come to the loop as
// "data" events.
func bridgeReadStart(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.startReader(a.int(0), a.int(1))
}

// bridgeReadOnce reads fd once, up to n bytes, as reader h.
func bridgeReadOnce(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.startReadOnce(a.int(0), a.int(1), a.int(2))
}

// bridgeReadPause, bridgeReadStop and bridgeReadRef act on reader h; a
// handle that is not a reader (one that ended) is no error.
func bridgeReadPause(r *rt, a *callArgs) (*v8.Value, error) {
	if rd, ok := r.readers[a.int(0)]; ok {
		rd.valve.Set(a.bool(1))
	}
	return nil, nil
}

func bridgeReadStop(r *rt, a *callArgs) (*v8.Value, error) {
	h := a.int(0)
	if rd, ok := r.readers[h]; ok {
		delete(r.readers, h)
		rd.stop()
	}
	return nil, nil
}

func bridgeReadRef(r *rt, a *callArgs) (*v8.Value, error) {
	if rd, ok := r.readers[a.int(0)]; ok {
		rd.ref = a.bool(1)
	}
	return nil, nil
}

// bridgeWriteAsync writes data to fd on a goroutine and posts a "write"
// event with id when all of it is written or the write failed.
func bridgeWriteAsync(r *rt, a *callArgs) (*v8.Value, error) {
	fd, id := a.int(0), a.int(2)
	if r.writes >= maxHandles {
		return nil, errno.EAGAIN
	}
	data := append([]byte(nil), a.bytes(1)...)
	f, err := r.p.File(fd)
	if err != nil {
		return nil, err
	}
	r.writes++
	go func() {
		defer f.DecRef()
		var code string
		for len(data) > 0 {
			w, err := f.Write(r.ctx, data)
			data = data[w:]
			if err != nil {
				code = errnoName(err)
				break
			}
			if w == 0 {
				code = "EIO"
				break
			}
		}
		r.post(r.ctx, event{kind: "write", a: id, code: code})
	}()
	return nil, nil
}

// bridgeSpawn(json) starts the child a spawnRequest describes and
// watches it; it returns {"pid", "fds"}, the parent's ends of its stdio
// pipes.
func bridgeSpawn(r *rt, a *callArgs) (*v8.Value, error) {
	var req spawnExtraRequest
	if err := parseRequest(a.str(0), &req.spawnRequest); err != nil {
		return nil, err
	}
	return r.spawnReply(r.spawnWatched(&req))
}

func bridgeChildRef(r *rt, a *callArgs) (*v8.Value, error) {
	if c, ok := r.children[a.int(0)]; ok {
		c.ref = a.bool(1)
	}
	return nil, nil
}

// parseRequest decodes a bridge call's JSON argument into req.
func parseRequest(s string, req any) error {
	if err := json.Unmarshal([]byte(s), req); err != nil {
		return errno.EINVAL
	}
	return nil
}

// spawnReply is what spawn and spawnExtra return for a child started
// with spawnWatched.
func (r *rt) spawnReply(c *kernel.Process, fds [3]int, err error) (*v8.Value, error) {
	if err != nil {
		return nil, err
	}
	out, _ := json.Marshal(map[string]any{"pid": c.PID(), "fds": fds})
	return r.string(string(out))
}

// bridgeSpawnSync runs a child to completion: it feeds stdin (input,
// when the request says it has one), collects stdout and stderr (each
// bounded by maxBuffer) and waits for the exit and for the pipes to
// close.
func bridgeSpawnSync(r *rt, a *callArgs) (*v8.Value, error) {
	var req spawnRequest
	if err := parseRequest(a.str(0), &req); err != nil {
		return nil, err
	}
	var input []byte
	if req.HasInput {
		if !a.has(1) {
			return nil, errno.EINVAL
		}
		input = append([]byte(nil), a.bytes(1)...)
	}
	maxBuf := int64(1 << 20)
	if req.MaxBuffer < 0 {
		maxBuf = maxBlobBytes / 4
	} else if req.MaxBuffer > 0 {
		maxBuf = int64(min(req.MaxBuffer, float64(maxBlobBytes/4)))
	}
	// stdout and stderr together never hold more than the process's
	// memory limit has left (maxBuffer: Infinity included): past it the
	// call fails with ENOBUFS, as past maxBuffer, before the host buffers
	// more.
	var room atomic.Int64
	room.Store(int64(r.hostBudget()))
	c, fds, err := r.spawnChild(&req)
	if err != nil {
		return nil, err
	}
	// Take the parent's pipe ends out of the descriptor table: only this
	// call uses them.
	var files [3]vfs.File
	for i, fd := range fds {
		if fd >= 0 {
			files[i], _ = r.p.File(fd)
			_ = r.p.Close(fd)
		}
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errCode string
		outs    [3][]byte
	)
	killSig := kernel.Signal(req.KillSig)
	if killSig <= 0 || killSig >= kernel.NSig {
		killSig = kernel.SIGTERM
	}
	setErr := func(code string) {
		mu.Lock()
		if errCode == "" {
			errCode = code
		}
		mu.Unlock()
	}
	if f := files[0]; f != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.DecRef()
			data := input
			for len(data) > 0 {
				n, err := f.Write(ctx, data)
				if err != nil || n == 0 {
					return
				}
				data = data[n:]
			}
		}()
	}
	for i := 1; i < 3; i++ {
		f := files[i]
		if f == nil {
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer f.DecRef()
			buf := make([]byte, 32<<10)
			for {
				n, err := f.Read(ctx, buf)
				if n > 0 {
					if room.Add(-int64(n)) < 0 {
						setErr("ENOBUFS")
						_ = c.Signal(killSig)
						return
					}
					if int64(len(outs[i])+n) > maxBuf {
						// The read that passes maxBuffer is kept whole,
						// as libuv's spawn_sync keeps it (so at most one
						// read more than maxBuffer is held).
						outs[i] = append(outs[i], buf[:n]...)
						setErr("ENOBUFS")
						_ = c.Signal(killSig)
						return
					}
					outs[i] = append(outs[i], buf[:n]...)
				}
				if n == 0 || err != nil {
					return
				}
			}
		}(i)
	}
	var timer *time.Timer
	if req.Timeout > 0 {
		timer = time.AfterFunc(time.Duration(req.Timeout*float64(time.Millisecond)), func() {
			setErr("ETIMEDOUT")
			_ = c.Signal(killSig)
		})
	}
	_, st, werr := r.p.Wait(r.ctx, c.PID(), 0)
	if timer != nil {
		timer.Stop()
	}
	if werr != nil {
		cancel()
		wg.Wait()
		return nil, werr
	}
	// Wait for the pipes to drain and close, as Node does; descendants
	// holding them open keep this call waiting until they exit or the
	// process is killed.
	wg.Wait()
	code, sig := statusCode(st)
	res := map[string]any{"pid": c.PID(), "status": code, "signal": sig, "stdout": 0, "stderr": 0}
	if errCode != "" {
		res["error"] = errCode
	}
	for i, key := range []string{"", "stdout", "stderr"} {
		if i == 0 || files[i] == nil {
			continue
		}
		id, err := r.newBlob(outs[i], len(outs[i]))
		if err != nil {
			return nil, err
		}
		res[key] = id
	}
	out, _ := json.Marshal(res)
	return r.string(string(out))
}

// --- signals ---

func (r *rt) watchSignal(sig kernel.Signal, on bool) error {
	if sig == kernel.SIGKILL || sig == kernel.SIGSTOP {
		return errno.EINVAL
	}
	d := kernel.DispositionDefault
	if on {
		d = kernel.DispositionCatch
	}
	if _, err := r.p.SetDisposition(sig, d); err != nil {
		return err
	}
	first := len(r.sigWatch) == 0
	r.sigWatch[sig] = on
	if first && on {
		ch := r.p.CaughtSignals()
		go func() {
			for {
				select {
				case <-ch:
				case <-r.ctx.Done():
					return
				}
				for {
					// Counted before it leaves the kernel's pending set,
					// so the loop never sees it in neither place.
					r.sigInFlight.Add(1)
					s, ok := r.p.TakeSignal()
					if !ok {
						r.sigInFlight.Add(-1)
						break
					}
					if s == kernel.SIGINT && r.interrupt() {
						r.sigInFlight.Add(-1)
						continue
					}
					if !r.post(r.ctx, event{kind: "signal", a: int(s)}) {
						r.sigInFlight.Add(-1)
						return
					}
				}
			}
		}()
	}
	return nil
}

func (r *rt) stopSignals() {}
