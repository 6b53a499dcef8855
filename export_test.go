package secexec

import (
	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/engine/server"
	"github.com/secexec/secexec/internal/vmhost/vmhosttest"
)

// [engine] Test seams: the test programs of vmhosttest in both transports.

// EngineMainForTest serves as an engine whose VMs also have the test
// programs.
func EngineMainForTest() {
	log := server.Logger()
	engineMain(vmhosttest.New(engineRuntime(log)), log)
}

// WithTestPrograms gives an in-process VM the test programs (engine VMs
// get them from EngineMainForTest).
func WithTestPrograms(opts Options) Options {
	opts.runtime = vmhosttest.New(runtimeFor(Options{}))
	return opts
}

// ResetSetUpForTest forgets which cache directories this process has set
// up, so that the next VM checks them again.
func ResetSetUpForTest() { setUpDone.Clear() }

// KillEngine kills the engine process of a VM with SIGKILL.
func KillEngine(v *VM) error {
	b, ok := v.b.(*apiBackend)
	if !ok {
		return errNotRemote
	}
	switch api := b.api.(type) {
	case *client.VM:
		return api.Conn().Kill()
	case ownedVM:
		return api.Conn().Kill()
	}
	return errNotRemote
}

// EnginePID returns the pid of a VM's engine process, or 0 in process.
func EnginePID(v *VM) int {
	b, _ := v.b.(*apiBackend)
	switch api := b.api.(type) {
	case *client.VM:
		return api.Conn().PID()
	case ownedVM:
		return api.Conn().PID()
	}
	return 0
}

var errNotRemote = errNotRemoteT{}

type errNotRemoteT struct{}

func (errNotRemoteT) Error() string { return "VM is not in an engine process" }
