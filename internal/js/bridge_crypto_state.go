package js

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/hostwork"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// cryptoState is the Go side of a process's crypto module beyond hashes:
// the operands and extra results of the current operation and a small
// cache of parsed keys. Ciphers, keys and signers keep their state in
// JavaScript, so nothing here outlives an operation but the bounded
// cache. It is made on first use and goes away with the runtime.
type cryptoState struct {
	// in holds the byte operands of the next operation: the scratch
	// buffer carries one byte string per bridge call.
	in [4][]byte
	// out holds the extra byte results of the last operation, fetched
	// one by one with cryptoOut.
	out [2][]byte

	keys keyCache

	// zs holds the live Brotli streams' coders by id (see brotliNew);
	// zMore is what the last brotliPush left to give.
	zs    map[int]*brotliStream
	nextZ int
	zMore bool
}

// maxCryptoInput bounds one byte operand (the bridge's blobs are bounded
// by the same size).
const maxCryptoInput = maxBlobBytes

func (r *rt) cs() *cryptoState {
	if r.crypto == nil {
		r.crypto = &cryptoState{}
		r.crypto.keys.m = map[string]any{}
	}
	return r.crypto
}

// take returns and clears the stashed operand i.
func (c *cryptoState) take(i int) []byte {
	b := c.in[i]
	c.in[i] = nil
	return b
}

// cryptoErr is an error the JavaScript side turns into Node's error for
// code (with msg as the message when it is not empty).
func cryptoErr(code, msg string) error { return guestError("CRYPTO\x00" + code + "\x00" + msg) }

// osslErr is an OpenSSL-style error as Node reports it: code
// ERR_OSSL_<REASON>, message "error:<hex>:<library>::<reason>".
func osslErr(hex, lib, reason, code string) error {
	return guestError("OSSL\x00" + code + "\x00error:" + hex + ":" + lib + "::" + reason + "\x00" + lib + "\x00" + reason)
}

var (
	errOSSLUnsupported = osslErr("1E08010C", "DECODER routines", "unsupported", "ERR_OSSL_UNSUPPORTED")
	errBadDecrypt      = osslErr("1C800064", "Provider routines", "bad decrypt", "ERR_OSSL_BAD_DECRYPT")
	errWrongFinalBlock = osslErr("1C80006B", "Provider routines", "wrong final block length", "ERR_OSSL_WRONG_FINAL_BLOCK_LENGTH")
	errKeyTypeOp       = osslErr("03000096", "digital envelope routines", "operation not supported for this keytype", "ERR_OSSL_EVP_OPERATION_NOT_SUPPORTED_FOR_THIS_KEYTYPE")
)

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
// scrypt's and pbkdf2's cost).
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

func init() {
	register("cryptoIn", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		i, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil || i < 0 || i >= len(r.cs().in) {
			return nil, errno.EINVAL
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		if len(b) > maxCryptoInput {
			return nil, cryptoErr("ERR_OUT_OF_RANGE", fmt.Sprintf("crypto input larger than %d bytes", maxCryptoInput))
		}
		if n >= 0 {
			// The scratch buffer is reused by the next call; a blob is
			// ours already.
			b = append([]byte(nil), b...)
		}
		r.cs().in[i] = b
		return nil, nil
	})
	register("cryptoOut", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		i, err := argInt(args, 0)
		c := r.cs()
		if err != nil || i < 0 || i >= len(c.out) {
			return nil, errno.EINVAL
		}
		b := c.out[i]
		c.out[i] = nil
		return r.bytesResult(b)
	})
}
