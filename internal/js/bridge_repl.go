package js

import (
	"sync"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// sigintBreak lets ^C stop a REPL evaluation that never returns to the
// event loop (`while(true){}`), as Node's breakEvalOnSigint does: while
// an evaluation is armed, a caught SIGINT terminates the isolate instead
// of queueing a 'SIGINT' event, and the evaluation's caller cancels the
// termination and resumes.
type sigintBreak struct {
	mu    sync.Mutex
	armed bool
	fired bool
	stop  chan struct{} // ends the repeater started when it fired
}

// interrupt is called for each SIGINT the process catches; it reports
// whether an armed evaluation took it.
func (r *rt) interrupt() bool {
	b := &r.sigint
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.armed {
		return false
	}
	if !b.fired {
		b.fired = true
		stop := make(chan struct{})
		b.stop = stop
		// A termination requested while the evaluation is inside a
		// bridge call takes effect when it is back in JavaScript; it is
		// repeated until the evaluation is disarmed in case V8 drops it.
		// Each request is made under the lock and only while this firing
		// is current: one made after disarm (which replRun's
		// cancelTerminate would not see) terminated the REPL's own code
		// after the entry and ended the process with 0.
		go func() {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				b.mu.Lock()
				if b.stop != stop {
					b.mu.Unlock()
					return
				}
				r.iso.TerminateExecution()
				b.mu.Unlock()
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
	}
	return true
}

// disarm ends an armed evaluation and reports whether SIGINT stopped it.
func (b *sigintBreak) disarm() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	fired := b.fired
	if b.stop != nil {
		close(b.stop)
		b.stop = nil
	}
	b.armed, b.fired = false, false
	return fired
}

// bridgeReplRun calls its function argument (which must catch its own
// exceptions) with SIGINT armed to break it. It returns true when SIGINT
// stopped it: the termination is cancelled and the caller reports
// "Script execution interrupted.".
func bridgeReplRun(r *rt, a *callArgs) (*v8.Value, error) {
	call := a.value(0)
	if call == nil || !call.IsFunction() {
		return nil, errno.EINVAL
	}
	fn, err := call.AsFunction()
	if err != nil {
		return nil, errno.EINVAL
	}
	// Only a process that catches SIGINT can be interrupted: the
	// REPL's own listener turns the watch on.
	if !r.sigWatch[kernel.SIGINT] {
		return nil, errno.EINVAL
	}
	r.sigint.mu.Lock()
	if r.sigint.armed {
		r.sigint.mu.Unlock()
		return nil, errno.EBUSY
	}
	r.sigint.armed = true
	r.sigint.mu.Unlock()
	v, callErr := fn.Call(v8.Undefined(r.iso))
	if v != nil {
		v.Release()
	}
	fired := r.sigint.disarm()
	if r.terminated.Load() != termNone {
		// The process was killed or ran out of time: the termination
		// is not the REPL's to cancel.
		return nil, callErr
	}
	if fired {
		if !cancelTerminate(r.rejectIso) {
			r.terminate(termKilled)
			return nil, callErr
		}
		return r.boolean(true), nil
	}
	if callErr != nil {
		return nil, callErr
	}
	return r.boolean(false), nil
}
