package secexec

import (
	"context"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/engine/server"
	"github.com/secexec/secexec/internal/vmhost/vmhosttest"
)

// [engine] Test seams: the test programs of vmhosttest in both transports.

// EngineMainForTest serves as an engine whose VMs also have the test
// programs.
func EngineMainForTest() {
	log := server.Logger()
	h := NewHost(HostOptions{Logger: log})
	engineMain(h, vmhosttest.New(h.engineRuntime(log)), log)
}

// testProgramsHost is a Host whose in-process VMs have the test programs,
// on the default Host's runtime.
var testProgramsHost = &Host{inProcess: vmhosttest.New(defaultHost.inProcessRuntime(Options{}))}

// NewVMWithTestPrograms creates a VM with the test programs: in process
// on a Host that adds them, in an engine on the default Host (engine VMs
// get them from EngineMainForTest).
func NewVMWithTestPrograms(ctx context.Context, opts Options) (*VM, error) {
	if opts.Engine == EngineInProcess {
		return testProgramsHost.NewVM(ctx, opts)
	}
	return defaultHost.NewVM(ctx, opts)
}

// ResetSetUpForTest forgets which cache directories the default Host has
// set up, so that the next VM checks them again.
func ResetSetUpForTest() { defaultHost.setUp.Clear() }

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
	case pooledVM:
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
	case pooledVM:
		return api.Conn().PID()
	}
	return 0
}

var errNotRemote = errNotRemoteT{}

type errNotRemoteT struct{}

func (errNotRemoteT) Error() string { return "VM is not in an engine process" }
