package js

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/hostwork"
	"github.com/secexec/secexec/internal/node/brotli"
	"github.com/secexec/secexec/internal/node/ncrypto"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// cryptoState is the Go side of a process's crypto and zlib modules: the
// crypto state (hashes, operands, results, key cache) and the live Brotli
// stream coders. It is made on first use and goes away with the runtime.
type cryptoState struct {
	*ncrypto.State
	zs brotli.Streams
}

func (r *rt) cs() *cryptoState {
	if r.crypto == nil {
		r.crypto = &cryptoState{State: ncrypto.NewState(r.heavy)}
	}
	return r.crypto
}

// nodeError turns the typed errors of ncrypto and brotli into the strings
// the bootstrap JavaScript makes Node's errors from:
// "CRYPTO\0code\0message", "OSSL\0code\0message\0library\0reason" and
// "code\0message\0errno" (zlib). Other errors (errno values) pass as they
// are.
func nodeError(err error) error {
	var ce *ncrypto.Error
	var oe *ncrypto.OpenSSLError
	var ze *brotli.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return guestError("CRYPTO\x00" + ce.Code + "\x00" + ce.Message)
	case errors.As(err, &oe):
		return guestError("OSSL\x00" + oe.Code + "\x00" + oe.Message + "\x00" + oe.Library + "\x00" + oe.Reason)
	case errors.As(err, &ze):
		s := ze.Code
		if ze.Message != "" {
			s += "\x00" + ze.Message
		}
		if ze.Errno != 0 {
			s += "\x00" + strconv.Itoa(ze.Errno)
		}
		return guestError(s)
	case errors.Is(err, ncrypto.ErrTooManyHashes):
		return guestError(err.Error())
	}
	return err
}

// bytesOrError hands b to JavaScript (see bytesResult), or err.
func (r *rt) bytesOrError(b []byte, err error) (*v8.Value, error) {
	if err != nil {
		return nil, nodeError(err)
	}
	return r.bytesResult(b)
}

// numOrError hands n to JavaScript, or err.
func (r *rt) numOrError(n int, err error) (*v8.Value, error) {
	if err != nil {
		return nil, nodeError(err)
	}
	return r.num(n), nil
}

// ownsBytes reports whether b, a bytes argument, is a blob's (the
// call's to keep, or to hand to another goroutine) rather than the
// scratch buffer's, which the next bridge call reuses.
func (r *rt) ownsBytes(b []byte) bool {
	return len(b) > 0 && (len(r.scratch) == 0 || &b[0] != &r.scratch[0])
}

// heavy runs fn, which must not touch r, on a host thread of its own and
// waits for it, for the process to be killed or for its time limit: V8's
// TerminateExecution does not reach Go code, so a long computation in the
// bridge call itself would outlive both. The thread's CPU time is charged
// to the process as it runs (hostwork, kernel.Process.BeginHostWork), so
// the CPU limits count it and end the process when it is spent; the VM's
// host-work slots bound how many such computations run at once for the
// VM, those of killed processes included (Go code cannot be interrupted,
// so a killed process's computation finishes in the background). When
// the wait is abandoned, stop is set: fn checks it where it can stop
// early; where it cannot, its work is bounded by the caller (key sizes,
// scrypt's and pbkdf2's cost). It is the ncrypto.Runner of the process's
// crypto state.
func (r *rt) heavy(fn func(stop *atomic.Bool) error) error {
	var deadline <-chan time.Time
	if tl := r.e.cfg.TimeLimit; tl > 0 {
		t := time.NewTimer(time.Until(r.startT.Add(tl)))
		defer t.Stop()
		deadline = t.C
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	slots := r.p.Kernel().HostWorkSlots()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		r.terminate(termKilled)
		return errno.ECANCELED
	case <-deadline:
		r.terminate(termTimeout)
		return errno.ETIMEDOUT
	}
	stop := new(atomic.Bool)
	done := hostwork.Go(r.p, func() error {
		defer func() { <-slots }()
		return fn(stop)
	})
	select {
	case err := <-done:
		if errors.Is(err, kernel.ErrCPUTime) || errors.Is(err, kernel.ErrVMCPUTime) {
			// The budget was spent before the work began: the kernel
			// ends the process (SIGXCPU).
			r.terminate(termKilled)
			return errno.ECANCELED
		}
		return err
	case <-ctx.Done():
		stop.Store(true)
		r.terminate(termKilled)
		return errno.ECANCELED
	case <-deadline:
		stop.Store(true)
		// Terminate here rather than wait for the watchdog (whose timer
		// fires at about the same time): the error returned to JavaScript
		// must not end the process first, as an uncaught exception.
		r.terminate(termTimeout)
		return errno.ETIMEDOUT
	}
}

// bridgeCryptoIn(slot, data) stashes data as operand slot of the next
// crypto operation (the scratch buffer carries one byte string per call).
func bridgeCryptoIn(r *rt, a *callArgs) (*v8.Value, error) {
	b := a.bytes(1)
	if !r.ownsBytes(b) {
		b = append([]byte(nil), b...)
	}
	return nil, nodeError(r.cs().SetOperand(a.int(0), b))
}

// bridgeCryptoOut(slot) returns extra result slot of the last operation.
func bridgeCryptoOut(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().TakeResult(a.int(0)))
}
