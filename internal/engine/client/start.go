package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/secexec/secexec/internal/engine/proto"
)

// passEnv lists the variables of the parent's environment an engine gets:
// enough to find its cache directories, tune the Go runtime and report
// what the user asked to see, and nothing else (no credentials, no
// guest-visible host state). Options.Env comes after them and wins.
var passEnv = []string{"HOME", "XDG_CACHE_HOME", "TMPDIR", "PATH", "GOMAXPROCS", "GOGC", "GOMEMLIMIT",
	"GODEBUG", "GOTRACEBACK", "SECEXEC_SOFTWARE_DIR", "SECEXEC_CACHE_DIR", "SECEXEC_SESSION_PHASES", warmEnv}

// warmEnv sets the capacity of the engine's V8 warm pool.
const warmEnv = "SECEXEC_V8_WARM_ISOLATES"

// Options configure Start.
type Options struct {
	// Path is the engine executable; empty means this program
	// (os.Executable), whose main must call the engine entry point when
	// started in engine mode.
	Path string
	// Logger receives the engine's log records (at the levels it has
	// enabled), its other diagnostics (stderr lines, as warnings) and the
	// client's; nil discards them.
	Logger *slog.Logger
	// Env holds "KEY=value" variables the engine gets besides passEnv's,
	// such as the cache directories its client set up.
	Env []string
	// StartTimeout bounds the start and handshake (default 30s).
	StartTimeout time.Duration
	// WarmIsolates is the capacity per key of the engine's V8 warm pool:
	// 0 leaves it to this process's SECEXEC_V8_WARM_ISOLATES (or the
	// default), negative disables the pool.
	WarmIsolates int
}

// ErrNotEngine is returned by Start in a process that was itself started
// as an engine: an embedding program that did not call the engine entry
// point first would otherwise start engines recursively.
var ErrNotEngine = errors.New("secexec: this process was started as an engine but did not serve " +
	"(call secexec.EngineMain when secexec.IsEngine reports true, first thing in main or TestMain)")

// engineProcess is an engine child process.
type engineProcess struct {
	cmd    *exec.Cmd
	stderr *tail
	exited chan struct{} // closed when the process was reaped
	status error         // cmd.Wait's result, set before exited closes
}

// Start starts an engine process connected by a socket pair and
// authenticates to it.
func Start(ctx context.Context, opts Options) (*Conn, error) {
	if os.Getenv(proto.EnvMode) != "" {
		return nil, ErrNotEngine
	}
	path := opts.Path
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("secexec: finding the engine executable: %w", err)
		}
		path = exe
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	token := make([]byte, proto.TokenSize)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	// Both ends are close-on-exec in this process: the engine's end is
	// dup'ed to EngineFD in the child only, so no other child inherits
	// either end (which would keep the socket open after the engine died,
	// hiding its death).
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("secexec: engine socket: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "secexec-engine")
	theirs := os.NewFile(uintptr(fds[1]), "secexec-engine-child")

	// The token goes through a pipe the engine reads once (TokenFD), never
	// the environment, which stays readable in /proc/PID/environ for the
	// engine's whole life. 32 bytes fit the pipe buffer, so the write end
	// is closed before the engine starts.
	tokR, tokW, err := os.Pipe()
	if err != nil {
		_ = mine.Close()
		_ = theirs.Close()
		return nil, fmt.Errorf("secexec: engine token pipe: %w", err)
	}
	_, werr := tokW.Write(token)
	if cerr := tokW.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = tokR.Close()
		_ = mine.Close()
		_ = theirs.Close()
		return nil, fmt.Errorf("secexec: engine token pipe: %w", werr)
	}

	cmd := exec.Command(path)
	cmd.Args = []string{path}
	cmd.Env = engineEnv(opts, log)
	// ExtraFiles[i] becomes descriptor 3+i: EngineFD, then TokenFD.
	cmd.ExtraFiles = []*os.File{theirs, tokR}
	p := &engineProcess{cmd: cmd, stderr: newTail(log), exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	// Its own process group: a terminal's ^C goes to the embedding
	// program, which cancels its calls in order, not to the engine.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = mine.Close()
		_ = theirs.Close()
		_ = tokR.Close()
		return nil, fmt.Errorf("secexec: starting the engine: %w", err)
	}
	_ = theirs.Close()
	_ = tokR.Close()
	go func() {
		p.status = cmd.Wait()
		close(p.exited)
	}()
	nc, err := net.FileConn(mine)
	_ = mine.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("secexec: engine socket: %w", err)
	}
	hctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	c, err := handshake(hctx, nc, token, log, p)
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	// A reaped engine is a lost engine, even if the socket somehow
	// stayed open.
	go func() {
		<-p.exited
		c.fail(p.lost(io.EOF))
	}()
	return c, nil
}

func engineEnv(opts Options, log *slog.Logger) []string {
	warm := opts.WarmIsolates
	env := []string{proto.EnvMode + "=" + proto.ModeValue, proto.EnvLogLevel + "=" + lowestLevel(log).String()}
	set := map[string]bool{}
	for _, kv := range opts.Env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok && !set[k] && (k != warmEnv || warm == 0) {
			env = append(env, k+"="+v)
		}
	}
	if warm != 0 {
		env = append(env, warmEnv+"="+strconv.Itoa(max(warm, 0)))
	}
	return append(env, opts.Env...)
}

// lowestLevel is the lowest level log has enabled (ERROR when none is):
// the engine need not write records nobody reads.
func lowestLevel(log *slog.Logger) slog.Level {
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		if log.Enabled(context.Background(), l) {
			return l
		}
	}
	return slog.LevelError
}

// lost describes the engine's end after its connection failed with err.
// The connection usually breaks a moment before the process is reaped;
// waiting briefly for the exit status gives the better explanation.
func (p *engineProcess) lost(err error) *LostError {
	select {
	case <-p.exited:
	case <-time.After(time.Second):
	}
	cause := ""
	reason := LostCrashed
	select {
	case <-p.exited:
		cause = "engine exited"
		if p.status != nil {
			cause = "engine " + p.status.Error() // "signal: killed", "exit status 2"
		}
		reason = exitReason(p.status)
	default:
		cause = "connection to the engine broke"
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) {
			cause += ": " + err.Error()
		}
	}
	// A runtime that ran out of memory ends the process as any fatal
	// error does (V8 traps; the Go runtime then exits with status 2): its
	// out-of-memory banner on stderr is what tells the two apart.
	if p.stderr.outOfMemory() {
		reason = LostOutOfMemory
	}
	if last := p.stderr.lastLine(); last != "" {
		cause += " (" + last + ")"
	}
	return &LostError{Reason: reason, Cause: cause}
}

// exitReason classifies an engine's exit status (cmd.Wait's result): a
// signal sent to it is a kill; a fatal signal of its own, a Go runtime
// crash (exit status 2) or any other exit is a crash.
func exitReason(status error) LostReason {
	var ee *exec.ExitError
	if errors.As(status, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			switch ws.Signal() {
			case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
				return LostKilled
			}
		}
	}
	return LostCrashed
}

// oomBanners are the lines the engine's runtimes write on stderr when they
// run out of memory and end the process: V8's fatal errors ("# Fatal
// JavaScript out of memory: ...", "Fatal process out of memory: ...",
// "Fatal JavaScript invalid size error ...", the heap-limit message) and
// the Go runtime's. Guest output never goes to the engine's stderr.
var oomBanners = []string{
	"Fatal JavaScript out of memory",
	"Fatal process out of memory",
	"Fatal JavaScript invalid size error",
	"JavaScript heap out of memory",
	"fatal error: runtime: out of memory",
}

// stop waits up to d for the engine to exit after its connection closed,
// then kills it.
func (p *engineProcess) stop(d time.Duration) {
	select {
	case <-p.exited:
		return
	case <-time.After(d):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// tail reads the engine's stderr: it passes each log record the engine
// wrote (a JSON line, see server.Logger) on to the client's logger at its
// level, logs other lines (a V8 fatal error, a Go panic) as warnings, and
// keeps the last line for error messages. It never holds more than
// tailSize bytes.
type tail struct {
	log  *slog.Logger
	mu   sync.Mutex
	line []byte // the line being assembled
	last string // the last complete non-empty line
	oom  bool   // a line other than a log record was an oomBanners line
}

const tailSize = 4 << 10

func newTail(log *slog.Logger) *tail { return &tail{log: log} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := tailSize - len(t.line)
			t.line = append(t.line, p[:min(room, len(p))]...)
			break
		}
		room := tailSize - len(t.line)
		t.line = append(t.line, p[:min(room, i)]...)
		t.emit(t.line)
		t.line = t.line[:0]
		p = p[i+1:]
	}
	return n, nil
}

// emit handles one complete line.
func (t *tail) emit(line []byte) {
	if rec, ok := decodeRecord(line); ok {
		t.last = rec.Message
		if h := t.log.Handler(); h.Enabled(context.Background(), rec.Level) {
			_ = h.Handle(context.Background(), rec)
		}
		return
	}
	if s := strings.TrimSpace(string(line)); s != "" {
		t.last = s
		t.log.Warn("secexec engine: " + s)
		for _, b := range oomBanners {
			if strings.Contains(s, b) {
				t.oom = true
			}
		}
	}
}

// outOfMemory reports whether the engine said it ran out of memory.
func (t *tail) outOfMemory() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.oom
}

// decodeRecord reads a JSON log line of the engine back into a record,
// keeping its attributes in order; it reports false for anything else.
func decodeRecord(line []byte) (slog.Record, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
		return slog.Record{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return slog.Record{}, false
	}
	var when time.Time
	var level slog.Level
	var msg string
	var attrs []slog.Attr
	haveLevel, haveMsg := false, false
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return slog.Record{}, false
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return slog.Record{}, false
		}
		switch s, _ := v.(string); key {
		case slog.TimeKey:
			when, _ = time.Parse(time.RFC3339Nano, s)
		case slog.LevelKey:
			haveLevel = level.UnmarshalText([]byte(s)) == nil
		case slog.MessageKey:
			msg, haveMsg = s, true
		default:
			attrs = append(attrs, slog.Any(key, jsonValue(v)))
		}
	}
	if !haveLevel || !haveMsg {
		return slog.Record{}, false
	}
	if when.IsZero() {
		when = time.Now()
	}
	rec := slog.NewRecord(when, level, msg, 0)
	rec.AddAttrs(attrs...)
	return rec, true
}

// jsonValue turns a decoded JSON number into an int64 or float64.
func jsonValue(v any) any {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
		if f, err := n.Float64(); err == nil {
			return f
		}
		return n.String()
	}
	return v
}

func (t *tail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.last
	if l := strings.TrimSpace(string(t.line)); l != "" {
		s = l
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
