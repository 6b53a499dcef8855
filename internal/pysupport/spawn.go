package pysupport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// The spawn device runs a command to completion for the process that
// uses it: the guest opens it, writes one JSON request, then reads one
// JSON response. CPython on WASI has no fork or exec; this is how its
// subprocess module (patched by the support layer) runs programs. The
// device adds no power: the command is spawned by the calling process
// with kernel.Process.Spawn, so the exec policy, the VM's limits and the
// caller's credentials apply exactly as to any spawn, and the request,
// the output kept and the time waited are all bounded.

// DeviceNumber is the device's Rdev (a Linux "local/experimental" major).
const DeviceNumber = 240 << 8

// Bounds of one request and its result.
const (
	// MaxRequest bounds the request (JSON, stdin included as base64).
	MaxRequest = 8 << 20
	// MaxOutput bounds what is kept of each of stdout and stderr; more
	// is read and dropped, and the response says it was truncated.
	MaxOutput = 16 << 20
	// maxArgs bounds the argument and environment vectors.
	maxArgs = 4096
)

// request is what a guest writes to the device.
type request struct {
	Argv []string `json:"argv"`
	// Env is the child's complete environment.
	Env []string `json:"env"`
	// Cwd is the child's directory; empty inherits the caller's.
	Cwd string `json:"cwd"`
	// Stdin is the child's entire input.
	Stdin []byte `json:"stdin"`
	// MergeStderr sends the child's stderr to its stdout pipe.
	MergeStderr bool `json:"merge_stderr"`
	// TimeoutMS kills the child (and its process group) after that many
	// milliseconds; 0 waits until it exits.
	TimeoutMS int64 `json:"timeout_ms"`
}

// response is what the guest reads back.
type response struct {
	// Error names the errno ("ENOENT": not found, "EACCES": not
	// executable or refused by the policy, ...) when the command could
	// not be started; empty otherwise.
	Error string `json:"error,omitempty"`
	// PID was the child's process id.
	PID int `json:"pid"`
	// Status is the exit status as a shell reports it (128+n for death
	// by signal n).
	Status    int    `json:"status"`
	Stdout    []byte `json:"stdout"`
	Stderr    []byte `json:"stderr"`
	Truncated bool   `json:"truncated"`
	TimedOut  bool   `json:"timed_out"`
}

// parseRequest decodes and checks a request: EINVAL for anything but one
// JSON object with a non-empty argv of plain strings, E2BIG beyond the
// bounds.
func parseRequest(b []byte) (request, error) {
	var req request
	if len(b) > MaxRequest {
		return req, errno.E2BIG
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return req, errno.EINVAL
	}
	if len(req.Argv) > maxArgs || len(req.Env) > maxArgs {
		return req, errno.E2BIG
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" || req.TimeoutMS < 0 {
		return req, errno.EINVAL
	}
	for _, s := range append(append([]string{req.Cwd}, req.Argv...), req.Env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return req, errno.EINVAL
		}
	}
	return req, nil
}

// spawnHandle is one open of the device: it collects the request until
// the first read, runs it then, and serves the response.
type spawnHandle struct {
	mu   sync.Mutex
	req  bytes.Buffer
	resp []byte
	done bool
	off  int
}

// Stream marks the device as non-seekable.
func (h *spawnHandle) Stream() bool { return true }

func (h *spawnHandle) WriteAt(_ context.Context, p []byte, _ int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return 0, errno.EINVAL
	}
	if h.req.Len()+len(p) > MaxRequest {
		return 0, errno.E2BIG
	}
	h.req.Write(p)
	return len(p), nil
}

func (h *spawnHandle) Append(ctx context.Context, p []byte) (int, int64, error) {
	n, err := h.WriteAt(ctx, p, 0)
	return n, 0, err
}

func (h *spawnHandle) ReadAt(ctx context.Context, p []byte, _ int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.done {
		proc, ok := kernel.ProcessFromContext(ctx)
		if !ok {
			return 0, errno.EPERM
		}
		req, err := parseRequest(h.req.Bytes())
		if err != nil {
			return 0, err
		}
		resp, err := run(ctx, proc, req)
		if err != nil {
			return 0, err
		}
		b, err := json.Marshal(resp)
		if err != nil {
			return 0, errno.EIO
		}
		h.req = bytes.Buffer{}
		h.resp, h.done = b, true
	}
	n := copy(p, h.resp[h.off:])
	h.off += n
	return n, nil
}

func (h *spawnHandle) Sync(context.Context) error { return nil }
func (h *spawnHandle) Close() error               { return nil }

// killGrace bounds the wait for a command's lineage to end after SIGKILL.
const killGrace = 500 * time.Millisecond

// run spawns req as a child of proc and waits for it, feeding its stdin
// and collecting its output. An error is returned only if the caller was
// interrupted (its context ended); a command that cannot be started is
// reported in the response.
func run(ctx context.Context, proc *kernel.Process, req request) (*response, error) {
	k := proc.Kernel()
	var files [6]vfs.File // stdin r/w, stdout r/w, stderr r/w
	release := func() {
		for i, f := range files {
			if f != nil {
				f.DecRef()
				files[i] = nil
			}
		}
	}
	defer release()
	for i := 0; i < 6; i += 2 {
		r, w, err := k.NewPipe()
		if err != nil {
			return &response{Error: errnoOf(err)}, nil
		}
		files[i], files[i+1] = r, w
	}
	errW := files[5]
	if req.MergeStderr {
		errW = files[3]
	}
	child, err := proc.Spawn(ctx, kernel.SpawnOptions{
		Argv: req.Argv, Env: req.Env, Cwd: req.Cwd, NewGroup: true,
		// A sub-job: everything the command starts, detached or not, can
		// be killed without killing the python process asking.
		NewJob: true,
		Files:  []vfs.File{files[0], files[3], errW},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, errno.EINTR
		}
		return &response{Error: errnoOf(err)}, nil
	}
	// The child holds its ends now; ours must go so EOF can arrive.
	for _, i := range []int{0, 3, 5} {
		files[i].DecRef()
		files[i] = nil
	}
	stdinW, outR, errR := files[1], files[2], files[4]
	files[1], files[2], files[4] = nil, nil, nil

	resp := &response{PID: child.PID()}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		defer stdinW.DecRef()
		b := req.Stdin
		for len(b) > 0 {
			n, err := stdinW.Write(ctx, b)
			if err != nil || n == 0 {
				return
			}
			b = b[n:]
		}
	}()
	var outTrunc, errTrunc bool
	go func() { defer wg.Done(); resp.Stdout, outTrunc = collect(ctx, outR) }()
	go func() { defer wg.Done(); resp.Stderr, errTrunc = collect(ctx, errR) }()

	var timeout <-chan time.Time
	if req.TimeoutMS > 0 {
		t := time.NewTimer(time.Duration(req.TimeoutMS) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-child.Done():
	case <-timeout:
		resp.TimedOut = true
	case <-ctx.Done():
	}
	// Whatever the child left behind (in its group or detached) would
	// hold the pipes open: its whole lineage goes, as after vmhost's Run.
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killGrace)
	_ = child.Job().Kill(kctx)
	cancel()
	_, st, werr := proc.Wait(context.WithoutCancel(ctx), child.PID(), 0)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, errno.EINTR
	}
	if werr != nil {
		return &response{Error: errnoOf(werr)}, nil
	}
	resp.Status = st.ShellCode()
	resp.Truncated = outTrunc || errTrunc
	return resp, nil
}

// collect reads f to EOF, keeping at most MaxOutput bytes, and releases it.
func collect(ctx context.Context, f vfs.File) ([]byte, bool) {
	defer f.DecRef()
	var out bytes.Buffer
	truncated := false
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(ctx, buf)
		keep := max(min(n, MaxOutput-out.Len()), 0)
		out.Write(buf[:keep])
		truncated = truncated || keep < n
		if n == 0 || err != nil {
			return out.Bytes(), truncated
		}
	}
}

// errnoOf returns the name of the errno an error carries, or EIO: names,
// because CPython on WASI numbers errnos differently from Linux.
func errnoOf(err error) string {
	var e errno.Errno
	if errors.As(err, &e) {
		return e.Name()
	}
	return errno.EIO.Name()
}
