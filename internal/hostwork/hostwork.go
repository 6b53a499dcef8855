// Package hostwork runs computations done on the host for a guest
// (crypto, compression, TLS handshakes) so that their CPU time is charged
// to the guest's process: each runs on a goroutine locked to an OS thread
// of its own, whose CPU clock the kernel counts while it runs.
package hostwork

import (
	"fmt"
	"runtime"
)

// Account is charged the CPU time of host work; *kernel.Process
// implements it. BeginHostWork must be called on the thread doing the
// work and refuses (with an error) when the budget is spent already.
type Account interface {
	BeginHostWork() (end func(), err error)
}

// Go runs fn on a new goroutine locked to its own OS thread, charging
// that thread's CPU time to acct, and sends fn's result (or the
// account's refusal, or a panic as an error) on the returned channel,
// which is buffered: nobody needs to receive.
func Go(acct Account, fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- Run(acct, fn)
	}()
	return done
}

// Run runs fn on the calling goroutine, locked to its OS thread for the
// duration, charging the thread's CPU time to acct.
func Run(acct Account, fn func() error) (err error) {
	runtime.LockOSThread()
	// The thread goes back to the pool only after the clock stopped: the
	// kernel must not count another goroutine's CPU as this work's.
	defer runtime.UnlockOSThread()
	end, err := acct.BeginHostWork()
	if err != nil {
		return err
	}
	defer end()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hostwork: computation panicked: %v", p)
		}
	}()
	return fn()
}
