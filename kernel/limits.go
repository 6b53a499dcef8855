package kernel

import "time"

// Limits bound what one VM may use. Reaching a limit fails the one
// operation with the errno Linux uses for it and leaves the VM usable.
type Limits struct {
	// FSBytes bounds file data in the VM's memory filesystems (ENOSPC).
	FSBytes int64
	// FSInodes bounds inodes in the VM's memory filesystems (ENOSPC).
	FSInodes int64
	// Processes bounds live and zombie processes (EAGAIN).
	Processes int
	// FDsPerProcess bounds one process's descriptor table (EMFILE).
	FDsPerProcess int
	// FDsPerVM bounds descriptors across all processes (ENFILE).
	FDsPerVM int
	// Pipes bounds open pipes (EAGAIN).
	Pipes int
	// PipeBytes bounds the memory of all pipe buffers together.
	PipeBytes int64
	// PipeSize bounds one pipe's buffer.
	PipeSize int
	// ArgvBytes and EnvBytes bound a spawn's argument and environment
	// strings, counted as execve does with their NUL terminators (E2BIG).
	ArgvBytes int
	EnvBytes  int
	// MemoryBytes bounds one process's guest memory: a WebAssembly
	// instance's linear memory, a V8 isolate's heap. Zero means the
	// engines' defaults (128 MiB each).
	MemoryBytes int64
	// CPUTime bounds how long one process may run. Like RLIMIT_CPU it ends
	// the process with SIGXCPU. It counts CPU time for processes whose
	// runtime registers a clock (both of secexec's do: a WebAssembly
	// program and a node isolate each keep to one OS thread, whose clock
	// they register, see Process.SetCPUClock) and wall time for the
	// others. Zero means no limit.
	CPUTime time.Duration
	// Sockets bounds the open sockets of the VM (ENFILE); they also take
	// descriptors (EMFILE, ENFILE).
	Sockets int
	// SocketBuffer bounds the bytes buffered per direction of a stream
	// connection and in a datagram socket's receive queue: a peer that
	// never reads makes writers block (or get EAGAIN) there.
	SocketBuffer int
	// SocketMemory bounds the buffer memory of all sockets together beyond
	// the 64 KiB each buffer may always hold.
	SocketMemory int64
	// ListenBacklog caps listen(2)'s backlog (SOMAXCONN).
	ListenBacklog int
	// ConnectTimeout bounds a connect to the host network (ETIMEDOUT).
	ConnectTimeout time.Duration
	// ToolBytes bounds the JSON arguments and the JSON result of one host
	// tool call (ERR_TOOL_TOO_LARGE); at most MaxToolBytes.
	ToolBytes int
	// ToolTimeout bounds one host tool call (ERR_TOOL_TIMEOUT).
	ToolTimeout time.Duration
	// PTYs bounds the pseudo-terminals of the VM (EAGAIN).
	PTYs int
	// VMMemoryBytes bounds the memory of all the VM's live processes
	// together (V8 heap and external memory, WebAssembly linear memory,
	// as each runtime reports it, see Process.ReportMemory): a spawn while
	// the VM is at its limit fails with ENOMEM (ErrVMMemory), and when a
	// process's growth takes the VM past it the VM's largest process is
	// ended (SIGKILL, as the OOM killer does).
	// Zero means DefaultVMMemoryBytes; negative means no limit.
	VMMemoryBytes int64
	// VMCPUTime bounds the CPU time of all the VM's processes together,
	// host work charged to them included (see Process.BeginHostWork).
	// When it is spent, every process of the VM ends with SIGXCPU and
	// spawns fail with ErrVMCPUTime. Zero means no limit.
	VMCPUTime time.Duration
}

// DefaultProcessMemoryBytes is the memory each engine gives one process
// when Limits.MemoryBytes is zero (wasm.DefaultMemoryLimitPages,
// js.DefaultHeapLimit).
const DefaultProcessMemoryBytes = 128 << 20

// DefaultVMMemoryBytes is the VM-wide memory limit a VM gets unless
// configured otherwise: eight processes at the engines' default 128 MiB.
const DefaultVMMemoryBytes = 1 << 30

// MaxToolBytes is the largest ToolBytes: a call and its result each
// cross the engine protocol in one frame.
const MaxToolBytes = 8 << 20

// DefaultLimits are the limits a VM gets unless configured otherwise.
func DefaultLimits() Limits {
	return Limits{
		FSBytes:       64 << 20,
		FSInodes:      16384,
		Processes:     256,
		FDsPerProcess: 256,
		FDsPerVM:      1024,
		Pipes:         128,
		PipeBytes:     64 << 20,
		PipeSize:      16 << 20,
		ArgvBytes:     1 << 20,
		EnvBytes:      1 << 20,

		Sockets:        256,
		SocketBuffer:   256 << 10,
		SocketMemory:   16 << 20,
		ListenBacklog:  128,
		ConnectTimeout: 30 * time.Second,
		ToolBytes:      1 << 20,
		ToolTimeout:    30 * time.Second,
		PTYs:           16,
		VMMemoryBytes:  DefaultVMMemoryBytes,
	}
}

// withDefaults fills zero fields from DefaultLimits, so a caller may set
// only the limits it cares about.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.FSBytes, d.FSBytes)
	orDefault(&l.FSInodes, d.FSInodes)
	orDefault(&l.Processes, d.Processes)
	orDefault(&l.FDsPerProcess, d.FDsPerProcess)
	orDefault(&l.FDsPerVM, d.FDsPerVM)
	orDefault(&l.Pipes, d.Pipes)
	orDefault(&l.PipeBytes, d.PipeBytes)
	orDefault(&l.PipeSize, d.PipeSize)
	orDefault(&l.ArgvBytes, d.ArgvBytes)
	orDefault(&l.EnvBytes, d.EnvBytes)
	orDefault(&l.Sockets, d.Sockets)
	orDefault(&l.SocketBuffer, d.SocketBuffer)
	orDefault(&l.SocketMemory, d.SocketMemory)
	orDefault(&l.ListenBacklog, d.ListenBacklog)
	orDefault(&l.ConnectTimeout, d.ConnectTimeout)
	orDefault(&l.ToolBytes, d.ToolBytes)
	orDefault(&l.ToolTimeout, d.ToolTimeout)
	l.ToolBytes = min(l.ToolBytes, MaxToolBytes)
	orDefault(&l.PTYs, d.PTYs)
	orDefault(&l.VMMemoryBytes, d.VMMemoryBytes)
	return l
}

// orDefault sets *v to d when *v is the zero value.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
