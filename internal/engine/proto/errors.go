package proto

import (
	"context"
	"errors"

	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// ErrorKind says which Go error type an Error stands for, so the
// receiving end can rebuild one that errors.Is and errors.As treat as the
// original.
type ErrorKind uint8

// Error kinds.
const (
	KindOther       ErrorKind = iota // only Msg (and Errno, if any)
	KindErrno                        // errno.Errno
	KindPath                         // *errno.PathError: Op, Path, Errno
	KindDenied                       // *policy.DeniedError: Domain, Op, Path (target), Rule
	KindPolicy                       // *policy.ParseError: Op (where), Path (reason)
	KindNotFound                     // *kernel.NotFoundError: Path (name)
	KindTooLarge                     // *vmhost.TooLargeError: Path (what), Size, Limit
	KindClosed                       // vmhost.ErrClosed
	KindCanceled                     // context.Canceled
	KindDeadline                     // context.DeadlineExceeded
	KindNoVM                         // ErrNoVM
	KindAuth                         // ErrAuth
	KindProtocol                     // ErrProtocol
	KindThrown                       // *jsctx.ThrownError: Path (the stack)
	KindDead                         // *jsctx.DeadError: Path (the reason)
	KindEvalTimeout                  // jsctx.ErrTimeout with Op "canceled" or "deadline"
	KindJSClosed                     // jsctx.ErrClosed
	KindTool                         // *kernel.ToolError: Op (code), Path (tool), Domain (message)
	kindEnd
)

// MaxErrorText bounds the message of an Error; longer text is cut.
const MaxErrorText = 64 << 10

// ErrNoVM is the error of a request naming a VM or process the connection
// does not own (never created, already closed, or another connection's).
var ErrNoVM = errors.New("engine: no such VM or process")

// ErrAuth is the error of a Hello with a wrong token or version.
var ErrAuth = errors.New("engine: authentication failed")

// Error is an error on the wire.
type Error struct {
	Kind   ErrorKind `cbor:"1,keyasint"`
	Msg    string    `cbor:"2,keyasint,omitempty"` // err.Error() of the original
	Errno  uint16    `cbor:"3,keyasint,omitempty"`
	Op     string    `cbor:"4,keyasint,omitempty"`
	Path   string    `cbor:"5,keyasint,omitempty"`
	Domain string    `cbor:"6,keyasint,omitempty"`
	Rule   int       `cbor:"7,keyasint,omitempty"`
	Size   int64     `cbor:"8,keyasint,omitempty"`
	Limit  int64     `cbor:"9,keyasint,omitempty"`
}

func (e *Error) validate() error {
	if e.Kind >= kindEnd {
		return errors.New("bad error kind")
	}
	if len(e.Msg) > MaxErrorText {
		return errors.New("error text too long")
	}
	return nil
}

// ErrorOf describes err for the wire; nil stays nil.
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if len(msg) > MaxErrorText {
		msg = msg[:MaxErrorText]
	}
	e := &Error{Msg: msg}
	var en errno.Errno
	if errors.As(err, &en) {
		e.Errno = uint16(en)
	}
	var (
		pe *errno.PathError
		de *policy.DeniedError
		ps *policy.ParseError
		nf *kernel.NotFoundError
		tl *vmhost.TooLargeError
		th *jsctx.ThrownError
		dd *jsctx.DeadError
		te *kernel.ToolError
	)
	switch {
	case errors.As(err, &th):
		e.Kind, e.Path = KindThrown, cut(th.Stack)
	case errors.As(err, &dd):
		e.Kind, e.Path = KindDead, cut(dd.Reason)
	case errors.As(err, &te):
		e.Kind, e.Op, e.Path, e.Domain = KindTool, te.Code, te.Tool, cut(te.Message)
	case errors.Is(err, jsctx.ErrTimeout):
		e.Kind, e.Op = KindEvalTimeout, "deadline"
		if errors.Is(err, context.Canceled) {
			e.Op = "canceled"
		}
	case errors.Is(err, jsctx.ErrClosed):
		e.Kind = KindJSClosed
	case errors.As(err, &pe):
		e.Kind, e.Op, e.Path, e.Errno = KindPath, pe.Op, pe.Path, uint16(pe.Err)
	case errors.As(err, &de):
		e.Kind, e.Domain, e.Op, e.Path, e.Rule = KindDenied, string(de.Domain), de.Op, de.Target, de.Rule
	case errors.As(err, &ps):
		e.Kind, e.Op, e.Path = KindPolicy, ps.Where, ps.Reason
	case errors.As(err, &nf):
		e.Kind, e.Path = KindNotFound, nf.Name
	case errors.As(err, &tl):
		e.Kind, e.Path, e.Size, e.Limit = KindTooLarge, tl.What, tl.Size, tl.Limit
	case errors.Is(err, vmhost.ErrClosed):
		e.Kind = KindClosed
	case errors.Is(err, ErrNoVM):
		e.Kind = KindNoVM
	case errors.Is(err, ErrAuth):
		e.Kind = KindAuth
	case errors.Is(err, ErrProtocol):
		e.Kind = KindProtocol
	case errors.Is(err, context.Canceled):
		e.Kind = KindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind = KindDeadline
	case e.Errno != 0:
		e.Kind = KindErrno
	}
	return e
}

// Err rebuilds the error. Its text is the original's; errors.Is and
// errors.As see the original's type (and its errno) through it.
func (e *Error) Err() error {
	if e == nil {
		return nil
	}
	var typed error
	switch e.Kind {
	case KindErrno:
		typed = errno.Errno(e.Errno)
	case KindPath:
		typed = &errno.PathError{Op: e.Op, Path: e.Path, Err: errno.Errno(e.Errno)}
	case KindDenied:
		typed = &policy.DeniedError{Domain: policy.Domain(e.Domain), Op: e.Op, Target: e.Path, Rule: e.Rule}
	case KindPolicy:
		typed = &policy.ParseError{Where: e.Op, Reason: e.Path}
	case KindNotFound:
		typed = &kernel.NotFoundError{Name: e.Path}
	case KindTooLarge:
		typed = &vmhost.TooLargeError{What: e.Path, Size: e.Size, Limit: e.Limit}
	case KindClosed:
		typed = vmhost.ErrClosed
	case KindCanceled:
		typed = context.Canceled
	case KindDeadline:
		typed = context.DeadlineExceeded
	case KindNoVM:
		typed = ErrNoVM
	case KindAuth:
		typed = ErrAuth
	case KindProtocol:
		typed = ErrProtocol
	case KindThrown:
		typed = &jsctx.ThrownError{Stack: e.Path}
	case KindDead:
		typed = &jsctx.DeadError{Reason: e.Path}
	case KindTool:
		typed = &kernel.ToolError{Code: e.Op, Tool: e.Path, Message: e.Domain}
	case KindEvalTimeout:
		cause := context.DeadlineExceeded
		if e.Op == "canceled" {
			cause = context.Canceled
		}
		typed = jsctx.TimeoutErr(cause)
	case KindJSClosed:
		typed = jsctx.ErrClosed
	default:
		if e.Errno != 0 {
			typed = errno.Errno(e.Errno)
		}
	}
	if typed != nil && typed.Error() == e.Msg {
		return typed
	}
	return &remoteError{msg: e.Msg, err: typed}
}

// remoteError keeps the text of an error that wrapped a typed one.
type remoteError struct {
	msg string
	err error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.err }

// cut bounds a guest-influenced text (an exception's stack, a tool's
// message) as the error text is bounded.
func cut(s string) string {
	if len(s) > MaxErrorText {
		return s[:MaxErrorText]
	}
	return s
}
