package valve

import (
	"context"
	"testing"
)

func TestValve(t *testing.T) {
	ctx := context.Background()
	g := New(false)
	if !g.Wait(ctx) {
		t.Fatal("an open valve held")
	}
	g.Set(true)
	g.Set(true) // again: nothing
	done, cancelDone := context.WithCancel(ctx)
	cancelDone()
	if g.Wait(done) {
		t.Fatal("a closed valve let a waiter through")
	}
	passed := make(chan bool)
	go func() { passed <- g.Wait(ctx) }()
	select {
	case <-passed:
		t.Fatal("a closed valve let the waiter through")
	default:
	}
	g.Set(false)
	if !<-passed {
		t.Fatal("the waiter did not pass when the valve opened")
	}
	g.Set(false) // again: no double close
	// A context that ends lets a waiter at a closed valve go, with false.
	g = New(true)
	cctx, cancel := context.WithCancel(ctx)
	go func() { passed <- g.Wait(cctx) }()
	cancel()
	if <-passed {
		t.Fatal("Wait reported the valve open when its context ended")
	}
}
