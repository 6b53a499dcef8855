package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// SignalError is the cause of a CLI context that a signal cancelled: the
// command in the VM is killed (with everything it started) and the CLI
// exits 128+n, as a shell reports a command that signal n ended: 130 for
// SIGINT, 143 for SIGTERM.
type SignalError struct {
	Signal syscall.Signal
}

func (e *SignalError) Error() string { return "interrupted by " + e.Signal.String() }

// ExitCode is the CLI's exit status after the signal.
func (e *SignalError) ExitCode() int { return 128 + int(e.Signal) }

// SignalContext returns a context cancelled, with a *SignalError cause,
// when one of sigs arrives. A second signal ends the process at once
// with that signal's status: the user insisted. stop releases the
// signals.
func SignalContext(parent context.Context, sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			ss, _ := s.(syscall.Signal)
			cancel(&SignalError{Signal: ss})
		case <-done:
			return
		}
		select {
		case s := <-ch:
			ss, _ := s.(syscall.Signal)
			os.Exit((&SignalError{Signal: ss}).ExitCode())
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// cancelledCode is the exit status of a command cancelled by ctx: 128+n
// for a signal n, else 130 (an interrupt).
func cancelledCode(ctx context.Context) int {
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) {
		return se.ExitCode()
	}
	return 130
}
