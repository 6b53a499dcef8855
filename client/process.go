package client

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/coder/websocket"
)

// Signal is a POSIX signal number, as secexec.Signal.
type Signal int

// Signals a caller commonly sends.
const (
	SIGHUP  Signal = 1
	SIGINT  Signal = 2
	SIGKILL Signal = 9
	SIGTERM Signal = 15
)

// The tags of the process WebSocket's binary frames (docs/api.md): a
// tag byte, then the payload.
const (
	tagStdin    byte = 0
	tagStdout   byte = 1
	tagStderr   byte = 2
	tagExit     byte = 3
	tagStdinEOF byte = 4
	tagSignal   byte = 5
	tagResize   byte = 6
)

// SpawnOptions adjust a Spawn.
type SpawnOptions struct {
	Env map[string]string
	Cwd string
	// PTY runs the program on a terminal of the VM (see secexec.PTY):
	// Stdout is the screen, Stderr stays empty, Resize resizes it.
	PTY *PTY
}

// PTY asks for a terminal of Rows x Cols (1-1000 each).
type PTY struct {
	Rows, Cols int
	// Term is TERM for the program (empty: xterm-256color).
	Term string
}

// ExitStatus is how a spawned process ended.
type ExitStatus struct {
	ExitCode int
	Signal   string
}

// Process is a process spawned on the server, attached over a
// WebSocket. Read Stdout and Stderr concurrently until EOF (a reader
// that stops holds the other stream back); Wait returns its status after
// every output byte was delivered. The server kills the process when
// the session ends: Close or a lost connection.
type Process struct {
	// Stdin sends bytes to the process; Close sends end of input.
	Stdin io.WriteCloser
	// Stdout and Stderr carry what the process writes.
	Stdout io.ReadCloser
	Stderr io.ReadCloser

	pid    int
	conn   *websocket.Conn
	cancel context.CancelFunc
	wmu    sync.Mutex
	done   chan struct{}
	status *ExitStatus
	err    error
}

type spawnJSON struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
	PTY  *ptyJSON          `json:"pty,omitempty"`
}

type ptyJSON struct {
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
	Term string `json:"term,omitempty"`
}

// maxFrame bounds a frame read from the server (output comes in chunks
// of at most 32 KiB).
const maxFrame = 1 << 20

// stdinChunk is the most stdin bytes sent in one frame, below the
// server's frame limit.
const stdinChunk = 32 << 10

// Spawn starts argv in the VM and attaches to its streams. ctx bounds
// the start only; the process runs until it exits, Close, or the VM ends.
func (v *VM) Spawn(ctx context.Context, argv []string, opts *SpawnOptions) (*Process, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("client: spawn: %w", &Error{Code: CodeBadRequest, Message: "empty argv"})
	}
	if opts == nil {
		opts = &SpawnOptions{}
	}
	req := spawnJSON{Argv: argv, Env: opts.Env, Cwd: opts.Cwd}
	if t := opts.PTY; t != nil {
		req.PTY = &ptyJSON{Rows: t.Rows, Cols: t.Cols, Term: t.Term}
	}
	cl, err := jsonCall("POST", v.path("/processes"), req)
	if err != nil {
		return nil, err
	}
	var out struct {
		Pid int `json:"pid"`
	}
	if err := v.c.doJSON(ctx, cl, &out); err != nil {
		return nil, err
	}
	pidPath := v.path("/processes/" + strconv.Itoa(out.Pid))
	conn, err := v.dial(ctx, pidPath+"/ws")
	if err != nil {
		// Unattached, it would live to the server's lifetime limit.
		_ = v.c.doJSON(context.WithoutCancel(ctx), &call{method: "DELETE", path: pidPath}, nil)
		return nil, err
	}
	conn.SetReadLimit(maxFrame)
	sctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	p := &Process{pid: out.Pid, conn: conn, cancel: cancel, done: make(chan struct{}), Stdout: outR, Stderr: errR}
	p.Stdin = &stdinWriter{p: p}
	go p.read(sctx, outW, errW)
	return p, nil
}

// dial opens the WebSocket at the escaped path sub.
func (v *VM) dial(ctx context.Context, sub string) (*websocket.Conn, error) {
	u := v.c.endpoint(sub)
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	h := make(map[string][]string)
	v.c.authorize(h)
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: v.c.hc, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode/100 != 1 && resp.StatusCode/100 != 2 && resp.Body != nil {
			return nil, readError(resp)
		}
		return nil, fmt.Errorf("client: attaching to %s: %w", sub, err)
	}
	return conn, nil
}

// read delivers the server's frames until the exit frame or an error.
func (p *Process) read(ctx context.Context, stdout, stderr *io.PipeWriter) {
	var err error
	defer func() {
		if err == nil {
			stdout.Close()
			stderr.Close()
		} else {
			stdout.CloseWithError(err)
			stderr.CloseWithError(err)
		}
		p.err = err
		close(p.done)
		p.cancel()
	}()
	for {
		typ, msg, rerr := p.conn.Read(ctx)
		if rerr != nil {
			err = fmt.Errorf("client: process %d: the session ended before its exit: %w", p.pid, rerr)
			return
		}
		if typ != websocket.MessageBinary || len(msg) == 0 {
			err = fmt.Errorf("client: process %d: a frame without a tag", p.pid)
			_ = p.conn.Close(websocket.StatusUnsupportedData, "want binary frames with a tag byte")
			return
		}
		switch msg[0] {
		case tagStdout, tagStderr:
			w := stdout
			if msg[0] == tagStderr {
				w = stderr
			}
			// A reader that closed its end loses the rest of its
			// stream, not the session.
			_, _ = w.Write(msg[1:])
		case tagExit:
			var st ExitStatus
			var j struct {
				ExitCode int    `json:"exit_code"`
				Signal   string `json:"signal"`
			}
			if derr := json.Unmarshal(msg[1:], &j); derr != nil {
				err = fmt.Errorf("client: process %d: bad exit frame: %w", p.pid, derr)
				return
			}
			st.ExitCode, st.Signal = j.ExitCode, j.Signal
			p.status = &st
			_ = p.conn.Close(websocket.StatusNormalClosure, "")
			return
		default:
			err = fmt.Errorf("client: process %d: unknown frame tag %d", p.pid, msg[0])
			_ = p.conn.Close(websocket.StatusUnsupportedData, "unknown tag")
			return
		}
	}
}

func (p *Process) send(tag byte, b []byte) error {
	msg := make([]byte, 1+len(b))
	msg[0] = tag
	copy(msg[1:], b)
	p.wmu.Lock()
	defer p.wmu.Unlock()
	select {
	case <-p.done:
		return fmt.Errorf("client: process %d: %w", p.pid, ErrProcessDone)
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := p.conn.Write(ctx, websocket.MessageBinary, msg); err != nil {
		return fmt.Errorf("client: process %d: %w", p.pid, err)
	}
	return nil
}

// ErrProcessDone is matched by writes and signals to a process whose
// session has ended.
var ErrProcessDone = errors.New("the process's session has ended")

// Pid returns the process id inside the VM.
func (p *Process) Pid() int { return p.pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig Signal) error {
	if sig < 1 || sig > 64 {
		return fmt.Errorf("client: signal %d: %w", sig, &Error{Code: CodeBadRequest, Message: "signals are 1-64"})
	}
	return p.send(tagSignal, []byte{byte(sig)})
}

// Resize sets the size of the process's terminal (1-1000 each).
func (p *Process) Resize(rows, cols int) error {
	if rows < 1 || rows > 1000 || cols < 1 || cols > 1000 {
		return fmt.Errorf("client: resize %dx%d: %w", rows, cols, &Error{Code: CodeBadRequest, Message: "rows and cols are 1-1000"})
	}
	var b [4]byte
	binary.BigEndian.PutUint16(b[0:], uint16(rows))
	binary.BigEndian.PutUint16(b[2:], uint16(cols))
	return p.send(tagResize, b[:])
}

// Wait waits for the process to exit and returns its status; the error
// says why there is none (the session was cut, or ctx ended first).
func (p *Process) Wait(ctx context.Context) (*ExitStatus, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.status == nil {
		return nil, p.err
	}
	return p.status, nil
}

// Close ends the session, killing the process if it still runs.
func (p *Process) Close() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	// Killed first: a server older than the fix of issue #24 kept a
	// silent process after a session closed in good order.
	_ = p.Signal(SIGKILL)
	err := p.conn.Close(websocket.StatusNormalClosure, "")
	p.cancel()
	<-p.done
	if p.status != nil {
		// The exit frame came (the kill's, or the process's own): the
		// server may have closed the connection before this side's
		// close frame, which is the session's normal end.
		return nil
	}
	return err
}

// stdinWriter sends writes as stdin frames.
type stdinWriter struct{ p *Process }

func (w *stdinWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		c := b[:min(len(b), stdinChunk)]
		if err := w.p.send(tagStdin, c); err != nil {
			return n, err
		}
		n += len(c)
		b = b[len(c):]
	}
	return n, nil
}

func (w *stdinWriter) Close() error { return w.p.send(tagStdinEOF, nil) }
