package api

// Fault domains: where a tenant's VMs run, and what becomes of a VM whose
// engine process died.

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/secexec/secexec"
)

// Engine placements (Config.Engine, CreateVMRequest.Engine).
const (
	// EnginePerTenant runs the VM in an engine process shared only by
	// VMs of the same tenant (the default): one tenant's fatal V8 error,
	// crash or killed engine loses none of another tenant's VMs.
	EnginePerTenant = "per-tenant"
	// EnginePerVM runs the VM in an engine process of its own: it loses
	// no other VM even of its tenant, at the cost of a process per VM.
	EnginePerVM = "per-vm"
)

// The states of a VM (VMJSON.State).
const (
	StateRunning = "running" // usable
	StateLost    = "lost"    // its engine died; only GET and DELETE are useful
)

// validEngine reports whether e names a placement.
func validEngine(e string) bool { return e == EnginePerTenant || e == EnginePerVM }

// placeVM puts a VM of tenant where engine (or the server's default) says:
// never in an engine another tenant's VMs use.
func (s *Server) placeVM(o *secexec.Options, tenant, engine string) error {
	if engine == "" {
		engine = s.cfg.Engine
	}
	switch engine {
	case EnginePerTenant:
		o.Engine = secexec.EngineShared
		o.EngineGroup = "tenant/" + tenant
	case EnginePerVM:
		o.Engine = secexec.EnginePerVM
		o.EngineGroup = ""
	default:
		return apiError(http.StatusBadRequest, CodeBadRequest, "engine must be %q or %q", EnginePerTenant, EnginePerVM)
	}
	return nil
}

// lostReason is the typed reason of an engine-lost error: a fixed code
// derived from how the engine ended, never text the engine wrote.
func lostReason(err error) string {
	var le *secexec.EngineLostError
	if errors.As(err, &le) && le.Reason != "" {
		return string(le.Reason)
	}
	return "engine_crashed"
}

// lostMessage is the message of an engine_lost answer. The error's own
// text (the engine's exit status and last stderr line: a V8 register
// dump, a Go panic's source paths) goes to the server's log only.
func lostMessage(err error) string {
	return fmt.Sprintf("the engine process running the VM was lost (%s); the VM is gone: delete it and create another", lostReason(err))
}

// watch waits for e's VM to end; when it was lost with its engine, the
// VM is marked lost and its slot of the tenant's VM quota is released at
// once. The entry stays, so that the tenant can see why (GET) and
// remove it (DELETE), until then or until it idles out.
func (g *registry) watch(e *vmEntry, vm *secexec.VM) {
	<-vm.Done()
	err := vm.Err()
	if !errors.Is(err, secexec.ErrEngineLost) {
		return // closed on purpose
	}
	reason := lostReason(err)
	g.mu.Lock()
	if g.vms[e.id] != e || e.released {
		g.mu.Unlock()
		return
	}
	e.released = true
	g.mu.Unlock()
	e.mu.Lock()
	e.lost = reason
	e.mu.Unlock()
	g.unreserve(e.tenant)
	g.s.metrics.lost.WithLabelValues(reason).Inc()
	g.s.cfg.Logger.Warn("VM lost with its engine process", "vm", e.id, "tenant", e.tenant, "reason", reason, "err", err)
}

// engineName is the placement of a VM with o.
func engineName(o secexec.Options) string {
	if o.Engine == secexec.EnginePerVM {
		return EnginePerVM
	}
	return EnginePerTenant
}
