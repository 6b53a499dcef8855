package waiter_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/waiter"
)

// event is a one-shot readable object: the smallest Waitable.
type event struct {
	fired atomic.Bool
	q     waiter.Queue
}

func (e *event) fire() {
	e.fired.Store(true)        // change the state first,
	e.q.Notify(waiter.EventIn) // then notify
}

func (e *event) Readiness(mask waiter.EventMask) waiter.EventMask {
	if e.fired.Load() {
		return waiter.EventIn & mask
	}
	return 0
}
func (e *event) EventRegister(en *waiter.Entry)   { e.q.EventRegister(en) }
func (e *event) EventUnregister(en *waiter.Entry) { e.q.EventUnregister(en) }

func ExampleWait() {
	var ev event
	go ev.fire()
	ready, err := waiter.Wait(context.Background(), &ev, waiter.EventIn)
	fmt.Println(ready, err)
	// Output: In <nil>
}
