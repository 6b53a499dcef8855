// Package errno defines the one error type every layer of the secexec kernel
// returns: a Linux errno value. Filesystems, the process table, pipes and the
// syscall layers (WASI, the agentOS host ABI, the V8 bridge) all speak Errno,
// so a guest sees the same number whichever path produced it, and no host
// error text ever reaches a guest.
package errno

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// Errno is a Linux error number. The zero value means "no error" and must not
// be returned as an error.
type Errno uint16

// Linux errno values (asm-generic/errno-base.h and errno.h).
const (
	EPERM           Errno = 1
	ENOENT          Errno = 2
	ESRCH           Errno = 3
	EINTR           Errno = 4
	EIO             Errno = 5
	ENXIO           Errno = 6
	E2BIG           Errno = 7
	ENOEXEC         Errno = 8
	EBADF           Errno = 9
	ECHILD          Errno = 10
	EAGAIN          Errno = 11
	ENOMEM          Errno = 12
	EACCES          Errno = 13
	EFAULT          Errno = 14
	EBUSY           Errno = 16
	EEXIST          Errno = 17
	EXDEV           Errno = 18
	ENODEV          Errno = 19
	ENOTDIR         Errno = 20
	EISDIR          Errno = 21
	EINVAL          Errno = 22
	ENFILE          Errno = 23
	EMFILE          Errno = 24
	ENOTTY          Errno = 25
	ETXTBSY         Errno = 26
	EFBIG           Errno = 27
	ENOSPC          Errno = 28
	ESPIPE          Errno = 29
	EROFS           Errno = 30
	EMLINK          Errno = 31
	EPIPE           Errno = 32
	EDOM            Errno = 33
	ERANGE          Errno = 34
	EDEADLK         Errno = 35
	ENAMETOOLONG    Errno = 36
	ENOLCK          Errno = 37
	ENOSYS          Errno = 38
	ENOTEMPTY       Errno = 39
	ELOOP           Errno = 40
	ENODATA         Errno = 61
	EOVERFLOW       Errno = 75
	EBADFD          Errno = 77
	ENOTSOCK        Errno = 88
	EDESTADDRREQ    Errno = 89
	EMSGSIZE        Errno = 90
	EPROTOTYPE      Errno = 91
	ENOPROTOOPT     Errno = 92
	EPROTONOSUPPORT Errno = 93
	EOPNOTSUPP      Errno = 95
	EAFNOSUPPORT    Errno = 97
	EADDRINUSE      Errno = 98
	EADDRNOTAVAIL   Errno = 99
	ENETUNREACH     Errno = 101
	ECONNABORTED    Errno = 103
	ECONNRESET      Errno = 104
	ENOBUFS         Errno = 105
	EISCONN         Errno = 106
	ENOTCONN        Errno = 107
	ETIMEDOUT       Errno = 110
	ECONNREFUSED    Errno = 111
	EHOSTUNREACH    Errno = 113
	EALREADY        Errno = 114
	EINPROGRESS     Errno = 115
	ECANCELED       Errno = 125
)

// EWOULDBLOCK is the same number as EAGAIN on Linux.
const EWOULDBLOCK = EAGAIN

// ENOTSUP is the same number as EOPNOTSUPP on Linux.
const ENOTSUP = EOPNOTSUPP

var names = map[Errno][2]string{
	EPERM:           {"EPERM", "operation not permitted"},
	ENOENT:          {"ENOENT", "no such file or directory"},
	ESRCH:           {"ESRCH", "no such process"},
	EINTR:           {"EINTR", "interrupted system call"},
	EIO:             {"EIO", "input/output error"},
	ENXIO:           {"ENXIO", "no such device or address"},
	E2BIG:           {"E2BIG", "argument list too long"},
	ENOEXEC:         {"ENOEXEC", "exec format error"},
	EBADF:           {"EBADF", "bad file descriptor"},
	ECHILD:          {"ECHILD", "no child processes"},
	EAGAIN:          {"EAGAIN", "resource temporarily unavailable"},
	ENOMEM:          {"ENOMEM", "cannot allocate memory"},
	EACCES:          {"EACCES", "permission denied"},
	EFAULT:          {"EFAULT", "bad address"},
	EBUSY:           {"EBUSY", "device or resource busy"},
	EEXIST:          {"EEXIST", "file exists"},
	EXDEV:           {"EXDEV", "invalid cross-device link"},
	ENODEV:          {"ENODEV", "no such device"},
	ENOTDIR:         {"ENOTDIR", "not a directory"},
	EISDIR:          {"EISDIR", "is a directory"},
	EINVAL:          {"EINVAL", "invalid argument"},
	ENFILE:          {"ENFILE", "too many open files in system"},
	EMFILE:          {"EMFILE", "too many open files"},
	ENOTTY:          {"ENOTTY", "inappropriate ioctl for device"},
	ETXTBSY:         {"ETXTBSY", "text file busy"},
	EFBIG:           {"EFBIG", "file too large"},
	ENOSPC:          {"ENOSPC", "no space left on device"},
	ESPIPE:          {"ESPIPE", "illegal seek"},
	EROFS:           {"EROFS", "read-only file system"},
	EMLINK:          {"EMLINK", "too many links"},
	EPIPE:           {"EPIPE", "broken pipe"},
	EDOM:            {"EDOM", "numerical argument out of domain"},
	ERANGE:          {"ERANGE", "numerical result out of range"},
	EDEADLK:         {"EDEADLK", "resource deadlock avoided"},
	ENAMETOOLONG:    {"ENAMETOOLONG", "file name too long"},
	ENOLCK:          {"ENOLCK", "no locks available"},
	ENOSYS:          {"ENOSYS", "function not implemented"},
	ENOTEMPTY:       {"ENOTEMPTY", "directory not empty"},
	ELOOP:           {"ELOOP", "too many levels of symbolic links"},
	ENODATA:         {"ENODATA", "no data available"},
	EOVERFLOW:       {"EOVERFLOW", "value too large for defined data type"},
	EBADFD:          {"EBADFD", "file descriptor in bad state"},
	ENOTSOCK:        {"ENOTSOCK", "socket operation on non-socket"},
	EDESTADDRREQ:    {"EDESTADDRREQ", "destination address required"},
	EMSGSIZE:        {"EMSGSIZE", "message too long"},
	EPROTOTYPE:      {"EPROTOTYPE", "protocol wrong type for socket"},
	ENOPROTOOPT:     {"ENOPROTOOPT", "protocol not available"},
	EPROTONOSUPPORT: {"EPROTONOSUPPORT", "protocol not supported"},
	EOPNOTSUPP:      {"EOPNOTSUPP", "operation not supported"},
	EAFNOSUPPORT:    {"EAFNOSUPPORT", "address family not supported by protocol"},
	EADDRINUSE:      {"EADDRINUSE", "address already in use"},
	EADDRNOTAVAIL:   {"EADDRNOTAVAIL", "cannot assign requested address"},
	ENETUNREACH:     {"ENETUNREACH", "network is unreachable"},
	ECONNABORTED:    {"ECONNABORTED", "software caused connection abort"},
	ECONNRESET:      {"ECONNRESET", "connection reset by peer"},
	ENOBUFS:         {"ENOBUFS", "no buffer space available"},
	EISCONN:         {"EISCONN", "transport endpoint is already connected"},
	ENOTCONN:        {"ENOTCONN", "transport endpoint is not connected"},
	ETIMEDOUT:       {"ETIMEDOUT", "connection timed out"},
	ECONNREFUSED:    {"ECONNREFUSED", "connection refused"},
	EHOSTUNREACH:    {"EHOSTUNREACH", "no route to host"},
	EALREADY:        {"EALREADY", "operation already in progress"},
	EINPROGRESS:     {"EINPROGRESS", "operation now in progress"},
	ECANCELED:       {"ECANCELED", "operation canceled"},
}

// Error returns the strerror text, as glibc prints it in lower case.
func (e Errno) Error() string {
	if n, ok := names[e]; ok {
		return n[1]
	}
	return "errno " + strconv.Itoa(int(e))
}

// Name returns the symbolic name, e.g. "ENOENT".
func (e Errno) Name() string {
	if n, ok := names[e]; ok {
		return n[0]
	}
	return "E" + strconv.Itoa(int(e))
}

// Is lets errors.Is match an Errno against the portable io/fs and os
// sentinels, so callers of the public API can test for fs.ErrNotExist.
func (e Errno) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e == ENOENT
	case fs.ErrExist:
		return e == EEXIST || e == ENOTEMPTY
	case fs.ErrPermission:
		return e == EACCES || e == EPERM
	case fs.ErrInvalid:
		return e == EINVAL
	case fs.ErrClosed:
		return e == EBADF
	case os.ErrDeadlineExceeded:
		return e == ETIMEDOUT
	}
	return false
}

// Timeout reports whether the error is a time-out, for net.Error-style checks.
func (e Errno) Timeout() bool { return e == EAGAIN || e == ETIMEDOUT }

// Temporary reports whether retrying could succeed.
func (e Errno) Temporary() bool {
	return e == EINTR || e == EAGAIN || e == EMFILE || e == ENFILE || e.Timeout()
}

// Of extracts the Errno from err (which may wrap it). Errors that carry no
// Errno map to EIO, so a guest never sees a Go error's text; nil maps to 0.
func Of(err error) Errno {
	if err == nil {
		return 0
	}
	var e Errno
	if errors.As(err, &e) {
		return e
	}
	return EIO
}

// PathError records a failed operation on a guest path. Path is always a
// guest path; host paths never appear in it.
type PathError struct {
	Op   string
	Path string
	Err  Errno
}

// Error formats the error like the os package does.
func (e *PathError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the Errno so errors.Is(err, errno.ENOENT) and
// errors.Is(err, fs.ErrNotExist) both work.
func (e *PathError) Unwrap() error { return e.Err }

// Path wraps an errno with the operation and guest path. A nil err stays
// nil. An error that already carries an Errno together with its own
// context (a policy denial naming the operation and path, or an inner
// PathError) is returned unchanged, so the most specific description
// survives; an error without an Errno becomes EIO, so no host error text
// can travel on.
func Path(op, path string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(Errno); ok {
		return &PathError{Op: op, Path: path, Err: e}
	}
	var e Errno
	if errors.As(err, &e) {
		return err
	}
	return &PathError{Op: op, Path: path, Err: EIO}
}
