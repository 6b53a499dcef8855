package syscalls

import (
	"github.com/secexec/secexec/kernel/errno"
)

// Errno is a WASI preview1 errno value (not a Linux one).
type Errno uint16

// WASI errno values used by this package.
const (
	ESUCCESS        Errno = 0
	E2BIG           Errno = 1
	EACCES          Errno = 2
	EADDRINUSE      Errno = 3
	EADDRNOTAVAIL   Errno = 4
	EAFNOSUPPORT    Errno = 5
	EAGAIN          Errno = 6
	EALREADY        Errno = 7
	EBADF           Errno = 8
	EBUSY           Errno = 10
	ECANCELED       Errno = 11
	ECHILD          Errno = 12
	ECONNABORTED    Errno = 13
	ECONNREFUSED    Errno = 14
	ECONNRESET      Errno = 15
	EDEADLK         Errno = 16
	EDESTADDRREQ    Errno = 17
	EDOM            Errno = 18
	EEXIST          Errno = 20
	EFAULT          Errno = 21
	EFBIG           Errno = 22
	EHOSTUNREACH    Errno = 23
	EILSEQ          Errno = 25
	EINPROGRESS     Errno = 26
	EINTR           Errno = 27
	EINVAL          Errno = 28
	EIO             Errno = 29
	EISCONN         Errno = 30
	EISDIR          Errno = 31
	ELOOP           Errno = 32
	EMFILE          Errno = 33
	EMLINK          Errno = 34
	EMSGSIZE        Errno = 35
	ENAMETOOLONG    Errno = 37
	ENETUNREACH     Errno = 40
	ENFILE          Errno = 41
	ENOBUFS         Errno = 42
	ENODEV          Errno = 43
	ENOENT          Errno = 44
	ENOEXEC         Errno = 45
	ENOLCK          Errno = 46
	ENOMEM          Errno = 48
	ENOPROTOOPT     Errno = 50
	ENOSPC          Errno = 51
	ENOSYS          Errno = 52
	ENOTCONN        Errno = 53
	ENOTDIR         Errno = 54
	ENOTEMPTY       Errno = 55
	ENOTSOCK        Errno = 57
	ENOTSUP         Errno = 58
	ENOTTY          Errno = 59
	ENXIO           Errno = 60
	EOVERFLOW       Errno = 61
	EPERM           Errno = 63
	EPIPE           Errno = 64
	EPROTONOSUPPORT Errno = 66
	EPROTOTYPE      Errno = 67
	ERANGE          Errno = 68
	EROFS           Errno = 69
	ESPIPE          Errno = 70
	ESRCH           Errno = 71
	ETIMEDOUT       Errno = 73
	ETXTBSY         Errno = 74
	EXDEV           Errno = 75
	// ENODATA is the agentOS ABI's extension (§4.2).
	ENODATA Errno = 78
)

// fromLinux maps the kernel's Linux errno numbers to WASI's.
var fromLinux = map[errno.Errno]Errno{
	errno.EPERM:           EPERM,
	errno.ENOENT:          ENOENT,
	errno.ESRCH:           ESRCH,
	errno.EINTR:           EINTR,
	errno.EIO:             EIO,
	errno.ENXIO:           ENXIO,
	errno.E2BIG:           E2BIG,
	errno.ENOEXEC:         ENOEXEC,
	errno.EBADF:           EBADF,
	errno.ECHILD:          ECHILD,
	errno.EAGAIN:          EAGAIN,
	errno.ENOMEM:          ENOMEM,
	errno.EACCES:          EACCES,
	errno.EFAULT:          EFAULT,
	errno.EBUSY:           EBUSY,
	errno.EEXIST:          EEXIST,
	errno.EXDEV:           EXDEV,
	errno.ENODEV:          ENODEV,
	errno.ENOTDIR:         ENOTDIR,
	errno.EISDIR:          EISDIR,
	errno.EINVAL:          EINVAL,
	errno.ENFILE:          ENFILE,
	errno.EMFILE:          EMFILE,
	errno.ENOTTY:          ENOTTY,
	errno.ETXTBSY:         ETXTBSY,
	errno.EFBIG:           EFBIG,
	errno.ENOSPC:          ENOSPC,
	errno.ESPIPE:          ESPIPE,
	errno.EROFS:           EROFS,
	errno.EMLINK:          EMLINK,
	errno.EPIPE:           EPIPE,
	errno.EDOM:            EDOM,
	errno.ERANGE:          ERANGE,
	errno.EDEADLK:         EDEADLK,
	errno.ENAMETOOLONG:    ENAMETOOLONG,
	errno.ENOLCK:          ENOLCK,
	errno.ENOSYS:          ENOSYS,
	errno.ENOTEMPTY:       ENOTEMPTY,
	errno.ELOOP:           ELOOP,
	errno.ENODATA:         ENODATA,
	errno.EOVERFLOW:       EOVERFLOW,
	errno.EBADFD:          EBADF,
	errno.ENOTSOCK:        ENOTSOCK,
	errno.EDESTADDRREQ:    EDESTADDRREQ,
	errno.EMSGSIZE:        EMSGSIZE,
	errno.EPROTOTYPE:      EPROTOTYPE,
	errno.ENOPROTOOPT:     ENOPROTOOPT,
	errno.EPROTONOSUPPORT: EPROTONOSUPPORT,
	errno.EOPNOTSUPP:      ENOTSUP,
	errno.EAFNOSUPPORT:    EAFNOSUPPORT,
	errno.EADDRINUSE:      EADDRINUSE,
	errno.EADDRNOTAVAIL:   EADDRNOTAVAIL,
	errno.ENETUNREACH:     ENETUNREACH,
	errno.ECONNABORTED:    ECONNABORTED,
	errno.ECONNRESET:      ECONNRESET,
	errno.ENOBUFS:         ENOBUFS,
	errno.EISCONN:         EISCONN,
	errno.ENOTCONN:        ENOTCONN,
	errno.ETIMEDOUT:       ETIMEDOUT,
	errno.ECONNREFUSED:    ECONNREFUSED,
	errno.EHOSTUNREACH:    EHOSTUNREACH,
	errno.EALREADY:        EALREADY,
	errno.EINPROGRESS:     EINPROGRESS,
	errno.ECANCELED:       ECANCELED,
}

// ErrnoOf maps an error returned by the kernel to a WASI errno. nil is
// success; an error without a Linux errno is EIO, so no Go error text or
// unexpected value reaches the guest.
func ErrnoOf(err error) Errno {
	if err == nil {
		return ESUCCESS
	}
	if e, ok := fromLinux[errno.Of(err)]; ok {
		return e
	}
	return EIO
}
