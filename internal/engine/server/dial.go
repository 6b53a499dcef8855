package server

import (
	"context"
	"io"
	"sync"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
)

// connProcess dresses a connection to a guest server as a process, so
// that a Dial (or Watch: a stream the other way only, see readOnly)
// request is served by the same streams, flow control and
// clean-up as a Spawn: stdin writes to the guest (its end half-closes),
// stdout reads from it, stderr is empty, a signal closes the connection,
// and Wait returns once the guest's side has ended and the connection is
// closed.
func connProcess(nc io.ReadWriteCloser) vmhost.Process {
	cp := &connProc{nc: nc, done: make(chan struct{})}
	cp.out = &connReader{cp: cp}
	return cp
}

type connProc struct {
	nc   io.ReadWriteCloser
	out  *connReader
	once sync.Once
	done chan struct{} // closed when the guest's side ended
}

func (c *connProc) PID() int              { return 0 }
func (c *connProc) Stdin() io.WriteCloser { return connWriter{c.nc} }
func (c *connProc) Stdout() io.ReadCloser { return c.out }
func (c *connProc) Stderr() io.ReadCloser { return io.NopCloser(eofReader{}) }
func (c *connProc) Signal(int) error      { c.end(); return c.nc.Close() }

// Resize fails: a connection has no terminal.
func (c *connProc) Resize(uint16, uint16) error { return errno.ENOTTY }

func (c *connProc) end() { c.once.Do(func() { close(c.done) }) }

func (c *connProc) Wait(ctx context.Context) (vmhost.ExitStatus, error) {
	select {
	case <-c.done:
		_ = c.nc.Close()
		return vmhost.ExitStatus{}, nil
	case <-ctx.Done():
		_ = c.nc.Close()
		return vmhost.ExitStatus{}, ctx.Err()
	}
}

// connReader reads the guest's bytes; their end (or an error) ends the
// connection's "process".
type connReader struct{ cp *connProc }

func (r *connReader) Read(p []byte) (int, error) {
	n, err := r.cp.nc.Read(p)
	if err != nil {
		r.cp.end()
	}
	return n, err
}

func (r *connReader) Close() error { r.cp.end(); return nil }

// connWriter writes to the guest; Close half-closes.
type connWriter struct{ nc io.ReadWriteCloser }

func (w connWriter) Write(p []byte) (int, error) { return w.nc.Write(p) }

func (w connWriter) Close() error {
	if cw, ok := w.nc.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// readOnly is a stream without a way in (a watch's events): writes to
// it fail.
type readOnly struct{ io.ReadCloser }

func (readOnly) Write([]byte) (int, error) { return 0, errno.EBADF }
