package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// Code is a stable, machine-readable error code of the API. Clients
// switch on it; the message is for people.
type Code string

// The error codes the API answers with (docs/api.md lists them).
const (
	CodeBadRequest     Code = "bad_request"      // malformed JSON, parameters or paths
	CodeUnauthorized   Code = "unauthorized"     // no or unknown bearer token
	CodeNotFound       Code = "not_found"        // no such route, VM (of this tenant), process or file
	CodeForbidden      Code = "forbidden"        // the guest filesystem refused (EACCES, EPERM, EROFS)
	CodeConflict       Code = "conflict"         // exists already, not empty, busy
	CodeTooLarge       Code = "too_large"        // a request body, file or archive over its limit
	CodeOutputLimit    Code = "output_too_large" // a streamed exec wrote more than the output limit
	CodeQuota          Code = "quota_exceeded"   // the tenant's VM or concurrency quota is used up
	CodeNoSpace        Code = "no_space"         // the VM's storage limit (ENOSPC)
	CodeBadPolicy      Code = "bad_permissions"  // the permissions document is invalid or not allowed
	CodeBadArchive     Code = "bad_archive"      // a tar upload with an escaping name, a sparse or unsupported entry
	CodeNotRegular     Code = "not_regular_file" // a read of a device, FIFO or socket
	CodeEvalError      Code = "eval_error"       // a JavaScript expression threw
	CodeShuttingDown   Code = "shutting_down"    // the server is draining
	CodeTimeout        Code = "timeout"          // a JS context evaluation ran past its timeout
	CodeWrongReplica   Code = "wrong_replica"    // the VM lives on another replica that cannot be reached
	CodeEngineLost     Code = "engine_lost"      // the engine process running the VM died
	CodeInternal       Code = "internal"         // anything else
	CodeNotImplemented Code = "not_implemented"  // a feature this build lacks
	CodeMethod         Code = "method_not_allowed"
	CodeUnsupportedMT  Code = "unsupported_media_type"
)

// Error is an API error: an HTTP status, a stable code and a message.
// Handlers return it (or any error, which errorFor classifies).
type Error struct {
	Status  int
	Code    Code
	Message string
	// RetryAfter, if positive, is sent as the Retry-After header (seconds).
	RetryAfter int
	Err        error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Err }

func apiError(status int, code Code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// errorBody is the one JSON shape of every error answer.
type errorBody struct {
	Error struct {
		Code    Code   `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errorFor classifies err as an *Error: guest filesystem errnos map to
// their HTTP meaning, policy and size errors to theirs.
func errorFor(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var tl *secexec.TooLargeError
	var pe *policy.ParseError
	var he *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Message: fmt.Sprintf("request body larger than %d bytes", he.Limit), Err: err}
	case errors.As(err, &tl):
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Message: tl.Error(), Err: err}
	case errors.As(err, &pe):
		return &Error{Status: http.StatusBadRequest, Code: CodeBadPolicy, Message: pe.Error(), Err: err}
	case errors.Is(err, secexec.ErrEngineLost):
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeEngineLost, Message: lostMessage(err), Err: err}
	case errors.Is(err, secexec.ErrClosed):
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "the VM is closed", Err: err}
	case errors.Is(err, secexec.ErrEvalTimeout) && errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusGatewayTimeout, Code: CodeTimeout, Message: err.Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeShuttingDown, Message: err.Error(), Err: err}
	}
	var en errno.Errno
	if errors.As(err, &en) {
		status, code := http.StatusBadRequest, CodeBadRequest
		switch {
		case errors.Is(err, fs.ErrNotExist):
			status, code = http.StatusNotFound, CodeNotFound
		case en == errno.EACCES || en == errno.EPERM || en == errno.EROFS:
			status, code = http.StatusForbidden, CodeForbidden
		case en == errno.EEXIST || en == errno.ENOTEMPTY || en == errno.EBUSY:
			status, code = http.StatusConflict, CodeConflict
		case en == errno.ENOSPC:
			status, code = http.StatusInsufficientStorage, CodeNoSpace
		case en == errno.EFBIG:
			status, code = http.StatusRequestEntityTooLarge, CodeTooLarge
		}
		return &Error{Status: status, Code: code, Message: err.Error(), Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: err.Error(), Err: err}
}

// writeError answers with err in the API's error shape.
func writeError(w http.ResponseWriter, err error) {
	e := errorFor(err)
	var b errorBody
	b.Error.Code, b.Error.Message = e.Code, e.Message
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.RetryAfter))
	}
	writeJSON(w, e.Status, b)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
