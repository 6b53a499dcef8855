package hostfs

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
)

// hostErr converts an error of a host system call to the kernel's errno.
// Linux numbers are the same on both sides, so the value passes through;
// anything that is not an errno (it should not happen) becomes EIO, so no
// host error text can reach a guest.
func hostErr(err error) error {
	if err == nil {
		return nil
	}
	var e unix.Errno
	if errors.As(err, &e) {
		if e == 0 || e > 0xffff {
			return errno.EIO
		}
		return errno.Errno(e)
	}
	var k errno.Errno
	if errors.As(err, &k) {
		return k
	}
	return errno.EIO
}

// resolveErr converts an error of resolving a directory beneath the root.
// Crossing a host mount point is refused there (RESOLVE_NO_XDEV, or the
// fallback walk's device check); the guest sees EACCES, since EXDEV would
// suggest a rename across mounts it never attempted.
func resolveErr(err error) error {
	if err == unix.EXDEV {
		return errno.EACCES
	}
	return hostErr(err)
}

// ignoringEINTR retries f while it is interrupted by a signal, which the Go
// runtime sends to its threads for preemption.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// openRetry is openat that retries EINTR.
func openRetry(dirfd int, path string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, path, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
