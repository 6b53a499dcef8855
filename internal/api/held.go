package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/secexec/secexec"
)

// held is the slot a spawned process or a JS context takes in its
// tenant's process quota (Config.MaxTenantProcesses) for as long as it
// lives, with its lifetime limit (Config.MaxProcessLifetime): one that
// outlives it is ended by expire. The slot is given back once, when the
// process or context is forgotten or its VM goes.
type held struct {
	once    sync.Once
	done    chan struct{}
	release func()
	mu      sync.Mutex // guards timer: its own callback may read it
	timer   *time.Timer
}

// hold takes a slot of e's tenant, or fails with 429 quota_exceeded.
// Call arm once the process or context exists, or end if it could not
// be made.
func (s *Server) hold(e *vmEntry) (*held, error) {
	if !s.held.take(e.tenant, s.cfg.MaxTenantProcesses) {
		return nil, &Error{Status: http.StatusTooManyRequests, Code: CodeQuota, RetryAfter: 1,
			Message: fmt.Sprintf("at most %d spawned processes and JS contexts per tenant", s.cfg.MaxTenantProcesses)}
	}
	tenant := e.tenant
	return &held{done: make(chan struct{}), release: func() { s.held.put(tenant) }}, nil
}

// arm starts the lifetime: expire runs when it passes and must end the
// process or context. A VM that goes (deleted, idle, lost) takes its
// processes and contexts with it: their slots come back then.
func (h *held) arm(s *Server, e *vmEntry, what string, expire func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timer = time.AfterFunc(s.cfg.MaxProcessLifetime, func() {
		s.cfg.Logger.Info("ending a "+what+" past its lifetime", "vm", e.id, "tenant", e.tenant, "lifetime", s.cfg.MaxProcessLifetime)
		// The slot comes back first: ending a process may wait on
		// its output, which must not keep the quota held.
		h.end()
		expire()
	})
	vmDone := e.vm.Done() // read here: a resume replaces e.vm
	go func() {
		select {
		case <-h.done:
		case <-vmDone:
			h.end()
		}
	}()
}

// end gives the slot back; later calls do nothing.
func (h *held) end() {
	h.once.Do(func() {
		h.mu.Lock()
		t := h.timer
		h.mu.Unlock()
		if t != nil {
			t.Stop()
		}
		close(h.done)
		h.release()
	})
}

// slots counts each tenant's held slots.
type slots struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts one more slot of tenant unless it has max already.
func (c *slots) take(tenant string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[tenant] >= max {
		return false
	}
	c.n[tenant]++
	return true
}

func (c *slots) put(tenant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[tenant]--; c.n[tenant] <= 0 {
		delete(c.n, tenant)
	}
}

// forgetProcess removes pid from e's processes and gives its slot back.
func (e *vmEntry) forgetProcess(pid int) {
	e.mu.Lock()
	p := e.procs[pid]
	delete(e.procs, pid)
	e.mu.Unlock()
	if p != nil && p.held != nil {
		p.held.end()
	}
}

// endProcess kills p; one without a session is drained and reaped here
// (nobody else will), one with a session ends it, and the session
// forgets it.
func (e *vmEntry) endProcess(ctx context.Context, pid int, p *process) {
	_ = p.p.Signal(secexec.SIGKILL)
	p.mu.Lock()
	attached := p.attach
	p.mu.Unlock()
	if !attached {
		_, _ = io.Copy(io.Discard, p.p.Stdout)
		_, _ = io.Copy(io.Discard, p.p.Stderr)
		_, _ = p.p.Wait(ctx)
		e.forgetProcess(pid)
	}
}

// heldContext is a JS context with its slot; Close closes the context
// and gives the slot back.
type heldContext struct {
	jc   *secexec.JSContext
	held *held
}

func (c *heldContext) Close() error {
	err := c.jc.Close()
	c.held.end()
	return err
}
