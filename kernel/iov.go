package kernel

import (
	"context"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/pipe"
	"github.com/secexec/secexec/kernel/vfs"
)

// Vectored I/O, once for every guest runtime (WASI fd_read/fd_write and
// node's fs.readv/writev alike). The rules:
//
//   - readv fills the buffers in order and stops at the first one it does
//     not fill. Only the first read may block: on anything but a regular
//     file it returns after the first buffer even when that one filled,
//     so a readv of a pipe returns what was there instead of waiting for
//     more, as Linux's does. A regular file is read on until a short read.
//   - writev of at most PIPE_BUF bytes in all is one write, so it is
//     atomic on a pipe (pipe(7)) and one append with O_APPEND. A longer
//     one writes buffer by buffer and stops at the first short write.
//   - Empty buffers are skipped, as Linux's iov_iter does.
//   - An error after some bytes moved reports those bytes, except EPIPE,
//     which is reported (with its SIGPIPE) so a writer to a closed pipe
//     stops.
//
// off < 0 uses and advances the file offset (readv/writev); off >= 0
// reads or writes at that offset (preadv/pwritev).

// Readv reads from fd into bufs, as readv(2) (off < 0) or preadv(2).
func (p *Process) Readv(ctx context.Context, fd int, bufs [][]byte, off int64) (int, error) {
	f, bctx, release, err := p.ioFile(ctx, fd)
	if err != nil {
		return 0, err
	}
	defer release()
	bufs = nonEmpty(bufs)
	total := 0
	for i, b := range bufs {
		var n int
		if off >= 0 {
			n, err = f.Pread(bctx, b, off+int64(total))
		} else {
			n, err = f.Read(bctx, b)
		}
		total += n
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		if n < len(b) || i == len(bufs)-1 {
			break
		}
		if off < 0 {
			if st, err := f.Stat(bctx); err != nil || st.Type() != vfs.TypeRegular {
				break
			}
		}
	}
	return total, nil
}

// Writev writes bufs to fd, as writev(2) (off < 0) or pwritev(2). A write
// to a pipe without readers raises SIGPIPE, as Write does.
func (p *Process) Writev(ctx context.Context, fd int, bufs [][]byte, off int64) (int, error) {
	f, bctx, release, err := p.ioFile(ctx, fd)
	if err != nil {
		return 0, err
	}
	defer release()
	bufs = nonEmpty(bufs)
	if len(bufs) > 1 {
		size := 0
		for _, b := range bufs {
			size += len(b)
		}
		if size <= pipe.PipeBuf {
			one := make([]byte, 0, size)
			for _, b := range bufs {
				one = append(one, b...)
			}
			bufs = [][]byte{one}
		}
	}
	total := 0
	for _, b := range bufs {
		var n int
		if off >= 0 {
			n, err = f.Pwrite(bctx, b, off+int64(total))
		} else {
			n, err = f.Write(bctx, b)
		}
		total += n
		if err != nil {
			if errno.Of(err) == errno.EPIPE {
				p.sendSignal(SIGPIPE, p.pid)
				return 0, err
			}
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		if n < len(b) {
			break
		}
	}
	return total, nil
}

// nonEmpty returns bufs without its empty buffers.
func nonEmpty(bufs [][]byte) [][]byte {
	for i, b := range bufs {
		if len(b) == 0 {
			out := append([][]byte(nil), bufs[:i]...)
			for _, b := range bufs[i+1:] {
				if len(b) > 0 {
					out = append(out, b)
				}
			}
			return out
		}
	}
	return bufs
}
