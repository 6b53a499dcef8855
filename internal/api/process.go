package api

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"

	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"

	"github.com/secexec/secexec"
)

// MaxProcesses bounds the spawned processes a VM keeps through the API.
const MaxProcesses = 64

// The stream tags of process WebSocket frames: every binary message is
// one tag byte followed by the payload.
const (
	TagStdin    byte = 0 // client → server: bytes for stdin
	TagStdout   byte = 1 // server → client: bytes the process wrote to stdout
	TagStderr   byte = 2 // server → client: bytes written to stderr
	TagExit     byte = 3 // server → client: JSON {exit_code, signal}; the last message
	TagStdinEOF byte = 4 // client → server: close stdin
	TagSignal   byte = 5 // client → server: one byte, the signal number
	TagResize   byte = 6 // client → server: rows and columns, two big-endian uint16s (terminals only)
)

// process is a spawned guest process held until its session ends.
type process struct {
	p      *secexec.Process
	argv   []string
	tty    bool
	mu     sync.Mutex
	attach bool // a WebSocket is (or was) attached: output goes to one reader
	held   *held
}

// maxTerminalSide bounds a terminal's rows and columns.
const maxTerminalSide = 1000

// ProcessJSON describes a spawned process.
type ProcessJSON struct {
	Pid  int      `json:"pid"`
	Argv []string `json:"argv"`
	// TTY is set when the process runs on a terminal.
	TTY bool `json:"tty,omitempty"`
}

// TerminalJSON asks for a terminal: the process's stdin, stdout and
// stderr are its slave side, and the session carries the master side
// (stdout frames are the screen, stderr stays empty, TagResize resizes).
type TerminalJSON struct {
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
	Term string `json:"term,omitempty"`
}

// SpawnRequest is the body of POST /v1/vms/{id}/processes.
type SpawnRequest struct {
	Cmd  string            `json:"cmd,omitempty"`
	Argv []string          `json:"argv,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
	PTY  *TerminalJSON     `json:"pty,omitempty"`
}

func (s *Server) spawn(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	var req SpawnRequest
	if err := s.decodeJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	argv, err := (&ExecRequest{Cmd: req.Cmd, Argv: req.Argv}).argv()
	if err != nil {
		writeError(w, err)
		return
	}
	if s.draining.Load() {
		writeError(w, apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
		return
	}
	e.mu.Lock()
	n := len(e.procs)
	e.mu.Unlock()
	if n >= MaxProcesses {
		writeError(w, &Error{Status: http.StatusTooManyRequests, Code: CodeQuota, RetryAfter: 1,
			Message: "at most 64 spawned processes per VM"})
		return
	}
	// The process outlives this request: it ends with its session, a
	// DELETE, or the VM.
	opts := &secexec.SpawnOptions{Env: req.Env, Cwd: req.Cwd}
	if t := req.PTY; t != nil {
		if t.Rows < 1 || t.Rows > maxTerminalSide || t.Cols < 1 || t.Cols > maxTerminalSide {
			writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "pty rows and cols must be 1-1000"))
			return
		}
		opts.PTY = &secexec.PTY{Rows: t.Rows, Cols: t.Cols, Term: t.Term}
	}
	// It holds a slot of the tenant's process quota until it is
	// forgotten, and is ended at the lifetime limit.
	h, err := s.hold(e)
	if err != nil {
		writeError(w, err)
		return
	}
	p, err := e.vm.Spawn(context.WithoutCancel(r.Context()), argv, opts)
	if err != nil {
		h.end()
		writeError(w, err)
		return
	}
	proc := &process{p: p, argv: argv, tty: opts.PTY != nil, held: h}
	pid := p.Pid()
	h.arm(s, e, "process", func() { e.endProcess(context.Background(), pid, proc) })
	e.mu.Lock()
	e.procs[pid] = proc
	e.mu.Unlock()
	writeJSON(w, http.StatusCreated, ProcessJSON{Pid: p.Pid(), Argv: argv, TTY: opts.PTY != nil})
}

func (s *Server) listProcesses(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	e.mu.Lock()
	out := []ProcessJSON{}
	for pid, p := range e.procs {
		out = append(out, ProcessJSON{Pid: pid, Argv: p.argv, TTY: p.tty})
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	writeJSON(w, http.StatusOK, map[string]any{"processes": out})
}

func (e *vmEntry) process(r *http.Request) (int, *process) {
	pid, err := strconv.Atoi(chi.URLParam(r, "pid"))
	if err != nil {
		return 0, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return pid, e.procs[pid]
}

func (s *Server) killProcess(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	pid, p := e.process(r)
	if p == nil {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such process"))
		return
	}
	e.endProcess(r.Context(), pid, p)
	w.WriteHeader(http.StatusNoContent)
}

// wsSession is one attached WebSocket, cut when draining times out.
type wsSession struct{ cancel context.CancelFunc }

// attach serves a process's streams over a WebSocket (see the Tag
// constants). Output frames come in the order written per stream; the
// exit frame comes after every output byte. When the session ends the
// process is killed and forgotten.
func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	pid, p := e.process(r)
	if p == nil {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such process"))
		return
	}
	p.mu.Lock()
	busy := p.attach
	p.attach = true
	p.mu.Unlock()
	if busy {
		writeError(w, apiError(http.StatusConflict, CodeConflict, "the process has a session already"))
		return
	}
	end, err := s.begin(e.tenant)
	if err != nil {
		p.mu.Lock()
		p.attach = false
		p.mu.Unlock()
		writeError(w, err)
		return
	}
	defer end()
	defer e.use()()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{SubprotocolV1}})
	if err != nil {
		return // Accept answered the request
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	sess := &wsSession{cancel: cancel}
	s.mu.Lock()
	s.sessions[sess] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, sess)
		s.mu.Unlock()
		cancel()
		_ = p.p.Signal(secexec.SIGKILL)
		e.forgetProcess(pid)
	}()
	c.SetReadLimit(int64(s.cfg.MaxBodyBytes) + 1)
	// Killing the process on a cut session unblocks the output copies.
	go func() {
		<-ctx.Done()
		_ = p.p.Signal(secexec.SIGKILL)
	}()
	var wmu sync.Mutex
	send := func(tag byte, b []byte) error {
		msg := make([]byte, 1+len(b))
		msg[0] = tag
		copy(msg[1:], b)
		wmu.Lock()
		defer wmu.Unlock()
		return c.Write(ctx, websocket.MessageBinary, msg)
	}
	go s.readStdin(ctx, c, p.p, cancel)
	var wg sync.WaitGroup
	pump := func(tag byte, rd io.Reader) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := rd.Read(buf)
			if n > 0 && send(tag, buf[:n]) != nil {
				cancel()
				_, _ = io.Copy(io.Discard, rd)
				return
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go pump(TagStdout, p.p.Stdout)
	go pump(TagStderr, p.p.Stderr)
	wg.Wait()
	st, err := p.p.Wait(ctx)
	if err != nil {
		_ = c.Close(websocket.StatusInternalError, "wait failed")
		return
	}
	// Forgotten before the exit frame, so a client that saw it finds
	// the process gone.
	e.forgetProcess(pid)
	leaveEarly(r)
	b, _ := json.Marshal(map[string]any{"exit_code": st.ExitCode, "signal": st.Signal})
	if send(TagExit, b) == nil {
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
}

// readStdin applies the client's frames: stdin bytes, end of stdin,
// signals. A text frame or an unknown tag ends the session.
func (s *Server) readStdin(ctx context.Context, c *websocket.Conn, p *secexec.Process, cancel context.CancelFunc) {
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			// However it ended — a cut connection or a close in good
			// order — no output can reach the client any more: the
			// process ends with its session instead of running on
			// unseen, holding the tenant's slot.
			cancel()
			return
		}
		if typ != websocket.MessageBinary || len(msg) == 0 {
			_ = c.Close(websocket.StatusUnsupportedData, "want binary frames with a tag byte")
			cancel()
			return
		}
		switch msg[0] {
		case TagStdin:
			if _, err := p.Stdin.Write(msg[1:]); err != nil {
				_ = p.Stdin.Close()
			}
		case TagStdinEOF:
			_ = p.Stdin.Close()
		case TagSignal:
			if len(msg) != 2 || msg[1] == 0 || msg[1] > 64 {
				_ = c.Close(websocket.StatusPolicyViolation, "a signal frame is the tag and one signal number 1-64")
				cancel()
				return
			}
			_ = p.Signal(secexec.Signal(msg[1]))
		case TagResize:
			rows, cols := 0, 0
			if len(msg) == 5 {
				rows, cols = int(binary.BigEndian.Uint16(msg[1:])), int(binary.BigEndian.Uint16(msg[3:]))
			}
			if rows < 1 || rows > maxTerminalSide || cols < 1 || cols > maxTerminalSide {
				_ = c.Close(websocket.StatusPolicyViolation, "a resize frame is the tag and rows, cols as big-endian uint16s, 1-1000")
				cancel()
				return
			}
			_ = p.Resize(rows, cols) // ENOTTY for a process without a terminal: nothing to do
		default:
			_ = c.Close(websocket.StatusUnsupportedData, "unknown tag")
			cancel()
			return
		}
	}
}
