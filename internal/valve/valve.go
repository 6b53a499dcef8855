// Package valve holds a goroutine that produces data (a socket reader, an
// HTTP/2 body pump) while its consumer does not want more: the consumer
// closes the valve, the producer waits at it until it opens again or its
// context ends.
package valve

import (
	"context"
	"sync"
)

// Valve is open or closed; its zero value is not usable (see New).
type Valve struct {
	mu     sync.Mutex
	closed bool
	open   chan struct{} // closed while the valve is open
}

// New returns a valve, closed if closed is true.
func New(closed bool) *Valve {
	g := &Valve{closed: closed, open: make(chan struct{})}
	if !closed {
		close(g.open)
	}
	return g
}

// Set closes the valve (closed true) or opens it; setting the state it is
// in does nothing.
func (g *Valve) Set(closed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed == closed {
		return
	}
	g.closed = closed
	if closed {
		g.open = make(chan struct{})
	} else {
		close(g.open)
	}
}

// Wait returns at once if the valve is open, else when it opens (true) or
// ctx ends (false).
func (g *Valve) Wait(ctx context.Context) bool {
	g.mu.Lock()
	ch, closed := g.open, g.closed
	g.mu.Unlock()
	if !closed {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}
