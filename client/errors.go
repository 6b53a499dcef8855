package client

import (
	"fmt"
	"net/http"
	"time"
)

// Code is the API's machine-readable error code (docs/api.md lists them).
type Code string

// The API's error codes.
const (
	CodeBadRequest     Code = "bad_request"
	CodeUnauthorized   Code = "unauthorized"
	CodeNotFound       Code = "not_found"
	CodeForbidden      Code = "forbidden"
	CodeConflict       Code = "conflict"
	CodeTooLarge       Code = "too_large"
	CodeOutputLimit    Code = "output_too_large"
	CodeQuota          Code = "quota_exceeded"
	CodeNoSpace        Code = "no_space"
	CodeBadPolicy      Code = "bad_permissions"
	CodeBadArchive     Code = "bad_archive"
	CodeNotRegular     Code = "not_regular_file"
	CodeEvalError      Code = "eval_error"
	CodeShuttingDown   Code = "shutting_down"
	CodeTimeout        Code = "timeout"
	CodeWrongReplica   Code = "wrong_replica"
	CodeEngineLost     Code = "engine_lost"
	CodeInternal       Code = "internal"
	CodeNotImplemented Code = "not_implemented"
	CodeMethod         Code = "method_not_allowed"
	CodeUnsupportedMT  Code = "unsupported_media_type"
)

// Error is an error answer of the server: its HTTP status, code and
// message. Match kinds with errors.Is against the Err variables (which
// compare codes) or read it with errors.As.
type Error struct {
	Status  int
	Code    Code
	Message string
	// RetryAfter is what the server's Retry-After header asked for.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "secexec server: " + string(e.Code)
	}
	return fmt.Sprintf("secexec server: %s (%d %s): %s", e.Code, e.Status, http.StatusText(e.Status), e.Message)
}

// Is matches another *Error with the same code: errors.Is(err,
// client.ErrNotFound).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errors to match with errors.Is, one per code a program may act on.
var (
	ErrBadRequest   = &Error{Code: CodeBadRequest}
	ErrUnauthorized = &Error{Code: CodeUnauthorized}
	// ErrNotFound: no such VM (of this tenant), process, context or file.
	ErrNotFound  = &Error{Code: CodeNotFound}
	ErrForbidden = &Error{Code: CodeForbidden}
	// ErrConflict: the file exists, a directory is not empty, a process
	// has a session already.
	ErrConflict    = &Error{Code: CodeConflict}
	ErrTooLarge    = &Error{Code: CodeTooLarge}
	ErrOutputLimit = &Error{Code: CodeOutputLimit}
	// ErrQuota: the tenant's VMs, runs or processes are used up (429);
	// the client retried before answering it.
	ErrQuota      = &Error{Code: CodeQuota}
	ErrNoSpace    = &Error{Code: CodeNoSpace}
	ErrBadPolicy  = &Error{Code: CodeBadPolicy}
	ErrBadArchive = &Error{Code: CodeBadArchive}
	ErrNotRegular = &Error{Code: CodeNotRegular}
	// ErrEval: a JavaScript evaluation threw; the message is the
	// guest's stack.
	ErrEval         = &Error{Code: CodeEvalError}
	ErrShuttingDown = &Error{Code: CodeShuttingDown}
	// ErrEvalTimeout: a JS context evaluation ran past its timeout.
	ErrEvalTimeout  = &Error{Code: CodeTimeout}
	ErrWrongReplica = &Error{Code: CodeWrongReplica}
	// ErrEngineLost: the engine process running the VM died; the VM is
	// gone.
	ErrEngineLost = &Error{Code: CodeEngineLost}
	ErrInternal   = &Error{Code: CodeInternal}
)
