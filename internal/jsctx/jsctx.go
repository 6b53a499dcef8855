// Package jsctx is the in-engine channel between the host side of a
// persistent JavaScript context (internal/vmhost) and the node process
// that serves it (internal/js): evaluation requests go in, values or
// errors come out, without pipes or a process per call. It holds no V8
// code, so the host side does not link V8.
//
// The host creates a Session, puts it into the context it spawns the
// node process with (WithSession), and the node runtime takes it out
// (Claim) before it parses its command line. Only the first Claim gets
// it: processes the context's node spawns inherit the value and must not
// serve the session too.
package jsctx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is the error of evaluations on a context that was closed.
var ErrClosed = errors.New("secexec: JS context is closed")

// ErrTimeout is matched by the error of an evaluation stopped at its
// deadline; the context survives it.
var ErrTimeout = errors.New("secexec: JS evaluation timed out")

// DeadError reports a context whose process ended: its isolate reached
// the heap limit, it was killed, or the guest called process.exit.
// Every later evaluation fails with it too.
type DeadError struct {
	Reason string
}

func (e *DeadError) Error() string { return "secexec: JS context is dead: " + e.Reason }

// ThrownError is an evaluation that threw (or whose promise rejected);
// Stack is the guest's error text.
type ThrownError struct {
	Stack string
}

func (e *ThrownError) Error() string { return "secexec: evaluation failed: " + e.Stack }

// MaxValue bounds the JSON of an evaluation's value, in bytes.
const MaxValue = 4 << 20

// TooLargeError is an evaluation whose value's JSON is over MaxValue.
type TooLargeError struct {
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("secexec: value too large: %d bytes exceeds the limit of %d", e.Size, e.Limit)
}

// Request is one evaluation.
type Request struct {
	// Ctx ends the evaluation: at its deadline or cancellation the
	// server terminates the script and answers ErrTimeout (or the
	// cancellation).
	Ctx  context.Context
	Expr string
	// reply gets exactly one Reply.
	reply chan Reply
}

// Reply is the answer to a Request: the value's JSON or an error.
type Reply struct {
	Value []byte
	Err   error
}

// Answer delivers the reply; only the first call counts.
func (r *Request) Answer(rep Reply) {
	select {
	case r.reply <- rep:
	default:
	}
}

// Options configure a Session.
type Options struct {
	// Background lets the server run its event loop (timers, I/O
	// callbacks) between requests. Without it the loop is paused while
	// no request is in progress: a context does no work its embedder did
	// not ask for.
	Background bool
}

// Session is one context's channel.
type Session struct {
	opts    Options
	reqs    chan *Request
	claimed atomic.Bool
	closing chan struct{}
	done    chan struct{}

	closeOnce sync.Once
	mu        sync.Mutex
	err       error
}

// New returns a session no server has claimed yet.
func New(opts Options) *Session {
	return &Session{opts: opts, reqs: make(chan *Request), closing: make(chan struct{}), done: make(chan struct{})}
}

// Background reports whether the server may work between requests (see
// Options.Background).
func (s *Session) Background() bool { return s.opts.Background }

type sessionKey struct{}

// WithSession returns ctx carrying s for the process spawned with it.
func WithSession(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// Claim returns the session ctx carries if no server claimed it before.
func Claim(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	if s == nil || !s.claimed.CompareAndSwap(false, true) {
		return nil
	}
	return s
}

// Requests delivers the evaluations to the server, one at a time.
func (s *Session) Requests() <-chan *Request { return s.reqs }

// Closing is closed when the host closes the context.
func (s *Session) Closing() <-chan struct{} { return s.closing }

// Done is closed when the server ended (see End).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended: nil while it serves.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// End records that the server stopped (err says why) and fails every
// later evaluation with it. Only the first call counts.
func (s *Session) End(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if err == nil {
		err = &DeadError{Reason: "the context's process ended"}
	}
	s.err = err
	close(s.done)
}

// Close tells the server to stop; evaluations after it fail with
// ErrClosed.
func (s *Session) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// Evaluate submits expr and waits for its reply. It returns at once with
// the session's error once the server has ended, and with ctx's error if
// ctx ends before the server took the request (after that, the server
// answers).
func (s *Session) Evaluate(ctx context.Context, expr string) ([]byte, error) {
	select {
	case <-s.closing:
		return nil, ErrClosed
	default:
	}
	req := &Request{Ctx: ctx, Expr: expr, reply: make(chan Reply, 1)}
	select {
	case s.reqs <- req:
	case <-s.done:
		return nil, s.Err()
	case <-s.closing:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, timeoutErr(ctx.Err())
	}
	var grace <-chan time.Time
	ctxDone := ctx.Done()
	for {
		select {
		case r := <-req.reply:
			return r.Value, r.Err
		case <-s.done:
			// The server may have answered just before it ended.
			select {
			case r := <-req.reply:
				return r.Value, r.Err
			default:
			}
			return nil, s.Err()
		case <-ctxDone:
			// The server terminates the script and answers; one blocked
			// in a host call answers only when that returns, so the
			// caller waits a moment at most.
			ctxDone = nil
			t := time.NewTimer(AnswerGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return nil, timeoutErr(ctx.Err())
		}
	}
}

// AnswerGrace is how long Evaluate waits for the server's answer after
// the evaluation's context ended.
const AnswerGrace = time.Second

// TimeoutErr is the error of an evaluation whose context ended: it
// matches ErrTimeout and the context's own error.
func TimeoutErr(cause error) error { return timeoutErr(cause) }

func timeoutErr(cause error) error {
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	return fmt.Errorf("%w: %w", ErrTimeout, cause)
}
