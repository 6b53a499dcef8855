package waiter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/waiter"
)

// flag is a minimal real Waitable: a set of ready events plus a queue,
// changed the way every kernel object must change (state first, then
// Notify).
type flag struct {
	ready atomic.Uint32
	q     waiter.Queue
}

func (f *flag) set(m waiter.EventMask) {
	f.ready.Store(uint32(m))
	f.q.Notify(m)
}

func (f *flag) Readiness(mask waiter.EventMask) waiter.EventMask {
	return waiter.EventMask(f.ready.Load()) & mask
}
func (f *flag) EventRegister(e *waiter.Entry)   { f.q.EventRegister(e) }
func (f *flag) EventUnregister(e *waiter.Entry) { f.q.EventUnregister(e) }

func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestEventValuesMatchLinux(t *testing.T) {
	for _, tc := range []struct {
		m    waiter.EventMask
		want uint32
	}{
		{waiter.EventIn, 0x1}, {waiter.EventPri, 0x2}, {waiter.EventOut, 0x4},
		{waiter.EventErr, 0x8}, {waiter.EventHup, 0x10},
	} {
		if uint32(tc.m) != tc.want {
			t.Errorf("%v = %#x, want %#x", tc.m, uint32(tc.m), tc.want)
		}
	}
}

func TestEventMaskString(t *testing.T) {
	for _, tc := range []struct {
		m    waiter.EventMask
		want string
	}{
		{0, "0"},
		{waiter.EventIn, "In"},
		{waiter.EventIn | waiter.EventHup, "In|Hup"},
		{waiter.AllEvents, "In|Pri|Out|Err|Hup"},
		{waiter.EventOut | 0x100, "Out|0x100"},
	} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("String(%#x) = %q, want %q", uint32(tc.m), got, tc.want)
		}
	}
}

func TestNotifyWakesOnlyIntersectingEntries(t *testing.T) {
	var q waiter.Queue // zero value is usable
	in, inCh := waiter.NewChannelEntry(waiter.EventIn)
	out, outCh := waiter.NewChannelEntry(waiter.EventOut)
	both, bothCh := waiter.NewChannelEntry(waiter.EventIn | waiter.EventHup)
	for _, e := range []*waiter.Entry{in, out, both} {
		q.EventRegister(e)
	}
	for _, tc := range []struct {
		notify             waiter.EventMask
		wantIn, wantOut, b bool
	}{
		{waiter.EventIn, true, false, true},
		{waiter.EventOut, false, true, false},
		{waiter.EventHup, false, false, true},
		{waiter.EventErr, false, false, false},
		{waiter.EventIn | waiter.EventOut, true, true, true},
	} {
		q.Notify(tc.notify)
		if got := pending(inCh); got != tc.wantIn {
			t.Errorf("Notify(%v): in woken = %v", tc.notify, got)
		}
		if got := pending(outCh); got != tc.wantOut {
			t.Errorf("Notify(%v): out woken = %v", tc.notify, got)
		}
		if got := pending(bothCh); got != tc.b {
			t.Errorf("Notify(%v): in|hup woken = %v", tc.notify, got)
		}
	}
}

func TestNotifyNeverBlocksAndCoalesces(t *testing.T) {
	var q waiter.Queue
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	q.EventRegister(e)
	for range 1000 {
		q.Notify(waiter.EventIn) // the channel holds one; the rest are dropped
	}
	if !pending(ch) {
		t.Fatal("no wake-up pending")
	}
	if pending(ch) {
		t.Fatal("wake-ups did not coalesce into one")
	}
}

func TestRegisterUnregister(t *testing.T) {
	var q waiter.Queue
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	q.EventUnregister(e) // not registered: no-op
	q.EventRegister(nil) // ignored
	q.EventRegister(e)
	q.EventRegister(e) // twice: still one registration
	q.EventUnregister(e)
	q.Notify(waiter.AllEvents)
	if pending(ch) {
		t.Fatal("unregistered entry was woken")
	}
	q.EventRegister(e)
	q.Notify(waiter.EventIn)
	if !pending(ch) {
		t.Fatal("re-registered entry was not woken")
	}
	if e.Mask() != waiter.EventIn {
		t.Fatalf("Mask() = %v", e.Mask())
	}
}

func TestEntryInTwoQueues(t *testing.T) {
	var a, b waiter.Queue
	e, ch := waiter.NewChannelEntry(waiter.EventOut)
	a.EventRegister(e)
	b.EventRegister(e)
	b.Notify(waiter.EventOut)
	if !pending(ch) {
		t.Fatal("not woken by second queue")
	}
	a.EventUnregister(e)
	b.Notify(waiter.EventOut)
	if !pending(ch) {
		t.Fatal("unregistering from one queue removed it from the other")
	}
	b.EventUnregister(e)
	a.Notify(waiter.EventOut)
	b.Notify(waiter.EventOut)
	if pending(ch) {
		t.Fatal("woken after unregistering from both")
	}
}

func TestFuncEntryGetsMaskedEvents(t *testing.T) {
	var q waiter.Queue
	var got []waiter.EventMask
	e := waiter.NewFuncEntry(waiter.EventIn|waiter.EventHup, func(m waiter.EventMask) {
		got = append(got, m)
	})
	q.EventRegister(e)
	q.Notify(waiter.EventOut)
	q.Notify(waiter.EventIn | waiter.EventOut)
	q.Notify(waiter.AllEvents)
	want := []waiter.EventMask{waiter.EventIn, waiter.EventIn | waiter.EventHup}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("callback saw %v, want %v", got, want)
	}
}

func TestWaitReadyAtOnce(t *testing.T) {
	var f flag
	f.set(waiter.EventIn | waiter.EventOut)
	// Even a done context does not matter when the object is ready.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := waiter.Wait(ctx, &f, waiter.EventIn|waiter.EventHup)
	if err != nil || got != waiter.EventIn {
		t.Fatalf("Wait = %v, %v; want In, nil", got, err)
	}
}

func TestWaitWakesOnNotify(t *testing.T) {
	var f flag
	// The setter races with Wait's first check, its registration and its
	// re-check: whichever way they interleave, Wait must return.
	go f.set(waiter.EventOut)
	got, err := waiter.Wait(context.Background(), &f, waiter.EventOut)
	if err != nil || got != waiter.EventOut {
		t.Fatalf("Wait = %v, %v", got, err)
	}
}

func TestWaitIgnoresOtherEvents(t *testing.T) {
	var f flag
	ctx, cancel := context.WithCancel(context.Background())
	e := waiter.NewFuncEntry(waiter.EventIn, func(waiter.EventMask) { cancel() })
	f.q.EventRegister(e)
	// EventOut never becomes ready: the EventIn notification must not
	// end Wait; only the cancel its callback issues does.
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Wait(ctx, &f, waiter.EventOut)
		done <- err
	}()
	f.set(waiter.EventIn)
	if err := <-done; !errors.Is(err, errno.EINTR) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait error = %v, want EINTR + Canceled", err)
	}
}

func TestWaitTimeout(t *testing.T) {
	var f flag
	ctx, cancel := context.WithTimeout(context.Background(), 1) // 1ns: expires at once
	defer cancel()
	got, err := waiter.Wait(ctx, &f, waiter.EventIn)
	if got != 0 {
		t.Errorf("events = %v, want 0", got)
	}
	if !errors.Is(err, errno.EINTR) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want EINTR and DeadlineExceeded", err)
	}
	if errno.Of(err) != errno.EINTR {
		t.Fatalf("errno.Of = %v", errno.Of(err))
	}
}

func TestInterruptedCarriesCause(t *testing.T) {
	sig := errors.New("signal 15")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(sig)
	err := waiter.Interrupted(ctx)
	if !errors.Is(err, sig) || errno.Of(err) != errno.EINTR {
		t.Fatalf("Interrupted = %v", err)
	}
	// Even a cause that is itself an errno does not hide EINTR.
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	cancel2(errno.ETIMEDOUT)
	if got := errno.Of(waiter.Interrupted(ctx2)); got != errno.EINTR {
		t.Fatalf("errno.Of = %v, want EINTR", got)
	}
}

// TestConcurrentRegisterNotify runs many waiters against a notifier that
// flips state, under -race: every waiter must finish (no lost wake-up).
func TestConcurrentRegisterNotify(t *testing.T) {
	var f flag
	const waiters = 50
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			if _, err := waiter.Wait(context.Background(), &f, waiter.EventIn); err != nil {
				t.Error(err)
			}
		})
	}
	for range 100 {
		f.set(waiter.EventOut) // not what they wait for
	}
	f.set(waiter.EventIn)
	wg.Wait()
}
