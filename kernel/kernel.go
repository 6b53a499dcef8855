// Package kernel is the virtual kernel of one secexec VM: the process
// table, file descriptor tables, pipes, signals, wait, poll and resource
// limits, on top of the VFS. The syscall layers (WASI and the agentOS host
// ABI for WebAssembly, the bridge for V8) decode guest arguments and call
// the methods of Process; every permission check, limit and POSIX rule
// lives here once, so the two kinds of guest can never disagree.
//
// The kernel does not execute code itself. A Loader (registered by the
// wasm and js runtimes) turns an executable file into a Program, and the
// kernel runs each Program on its own goroutine with the process's
// context, which it cancels when the process is killed.
package kernel

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/clock"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/pipe"
	"github.com/secexec/secexec/kernel/vfs"
)

// ExecAuthorizer decides whether a process may run the executable at the
// resolved guest path under the name argv0. It returns nil or an error
// wrapping errno.EACCES.
type ExecAuthorizer func(ctx context.Context, path, argv0 string) error

// Config configures a Kernel.
type Config struct {
	// VFS is the VM's filesystem namespace.
	VFS *vfs.VFS
	// Limits; zero fields take DefaultLimits.
	Limits Limits
	// AuthorizeExec is consulted before every spawn; nil allows all.
	AuthorizeExec ExecAuthorizer
	// Hostname is the VM's hostname (never the host's).
	Hostname string
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Clock is the VM's clock: every time a guest reads (runtimes, file
	// times, /proc) comes from it. Nil makes a Coarse one booting now.
	Clock *clock.Clock
	// Net configures the VM's network: the policy for the host network
	// and the resolver. The zero value gives a VM whose guests reach each
	// other but nothing outside.
	Net NetConfig
	// Tools runs the embedder's host tools (see CallTool); nil: none.
	Tools ToolHost
	// AuthorizeTool decides each tool call; nil denies them all.
	AuthorizeTool ToolAuthorizer
	// ToolVisible decides which tools ToolNames lists; nil means
	// AuthorizeTool. (A listing is not a call: it should not be audited
	// as a denial.)
	ToolVisible ToolAuthorizer
}

// NetConfig configures the network of a VM (see kernel/netstack).
type NetConfig struct {
	// Authorizer checks every connect, DNS lookup and listen of a guest;
	// *policy.Checker implements it. Nil denies them all (VM-internal
	// connections need no permission).
	Authorizer netstack.Authorizer
	// Resolver resolves host names; nil means netstack's default (DNS from
	// the host's resolv.conf, never its /etc/hosts).
	Resolver netstack.Resolver
	// DNSTimeout bounds one lookup; zero means 10 s.
	DNSTimeout time.Duration
}

// ErrClosed is returned by operations on a kernel that was shut down.
var ErrClosed = errors.New("kernel: VM is closed")

// Kernel is the kernel of one VM.
type Kernel struct {
	vfs        *vfs.VFS
	limits     Limits
	authExec   ExecAuthorizer
	hostname   string
	clock      *clock.Clock
	log        *slog.Logger
	boot       time.Time
	pipeBudget *pipe.Budget
	net        *netstack.Stack
	tools      ToolHost
	authTool   ToolAuthorizer
	toolSeen   ToolAuthorizer
	toolSlots  chan struct{}
	budget     budget // VM-wide CPU and memory, see budget.go

	pipes     atomic.Int64 // guest pipes, limited
	hostPipes atomic.Int64 // stdio pipes made by the host
	fds       atomic.Int64
	nextIno   atomic.Uint64

	flocks flockTable

	loadersMu sync.RWMutex
	loaders   []Loader

	mu      sync.Mutex
	procs   map[int]*Process
	ptys    map[int]*PTY // by index, N of /dev/pts/N
	nextPID int
	init    *Process
	closed  bool
	// exited is broadcast whenever any process changes state, so waiters
	// re-check their children.
	changed *sync.Cond
}

// New returns a kernel with an init process (pid 1) that adopts orphans
// and reaps them.
func New(cfg Config) (*Kernel, error) {
	if cfg.VFS == nil {
		return nil, errors.New("kernel: Config.VFS is nil")
	}
	l := cfg.Limits.withDefaults()
	clk := cfg.Clock
	if clk == nil {
		c, err := clock.New(clock.Options{})
		if err != nil {
			return nil, err
		}
		clk = c
	}
	k := &Kernel{
		vfs:        cfg.VFS,
		limits:     l,
		authExec:   cfg.AuthorizeExec,
		hostname:   cfg.Hostname,
		clock:      clk,
		log:        cfg.Logger,
		boot:       time.Now(),
		pipeBudget: pipe.NewBudget(l.PipeBytes),
		tools:      cfg.Tools,
		authTool:   cfg.AuthorizeTool,
		toolSeen:   cfg.ToolVisible,
		toolSlots:  make(chan struct{}, maxToolCalls),
		net: netstack.New(netstack.Config{
			Authorizer: cfg.Net.Authorizer,
			Resolver:   cfg.Net.Resolver,
			Logger:     cfg.Logger,
			Limits: netstack.Limits{
				Sockets:        l.Sockets,
				BufferBytes:    l.SocketBuffer,
				MemoryBytes:    l.SocketMemory,
				Backlog:        l.ListenBacklog,
				ConnectTimeout: l.ConnectTimeout,
				DNSTimeout:     cfg.Net.DNSTimeout,
			},
			Now: clk.Now,
		}),
		procs:   make(map[int]*Process),
		ptys:    make(map[int]*PTY),
		nextPID: 1,
		budget:  newBudget(),
	}
	if k.hostname == "" {
		k.hostname = "secexec"
	}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	k.changed = sync.NewCond(&k.mu)
	k.nextIno.Store(1 << 32)
	init := k.newProcessLocked(nil, []string{"init"}, nil, "/", 0o022, 0, 0)
	init.fds = newFDTable(l.FDsPerProcess, &k.fds, l.FDsPerVM)
	init.state = StateRunning
	init.ctx, init.cancel = context.WithCancelCause(context.WithValue(context.Background(), procKey{}, init))
	k.init = init
	if l.VMCPUTime > 0 {
		go k.watchVMCPU(l.VMCPUTime)
	}
	return k, nil
}

// VFS returns the VM's filesystem namespace.
func (k *Kernel) VFS() *vfs.VFS { return k.vfs }

// Limits returns the limits in force.
func (k *Kernel) Limits() Limits { return k.limits }

// Hostname returns the VM's hostname.
func (k *Kernel) Hostname() string { return k.hostname }

// Boot returns when the kernel started, on the VM's clock (Clock().Boot()).
func (k *Kernel) Boot() time.Time { return k.clock.Boot() }

// Clock returns the VM's clock, which every runtime reads guest time from.
func (k *Kernel) Clock() *clock.Clock { return k.clock }

// Init returns pid 1.
func (k *Kernel) Init() *Process { return k.init }

// PipeMemory reports the pipe budget's use and limit.
func (k *Kernel) PipeMemory() (used, limit int64) {
	return k.pipeBudget.Used(), k.pipeBudget.Limit()
}

// OpenFDs returns the descriptors open across the VM.
func (k *Kernel) OpenFDs() int { return int(k.fds.Load()) }

// OpenPipes returns the pipes with at least one open end, guest and host.
func (k *Kernel) OpenPipes() int { return int(k.pipes.Load() + k.hostPipes.Load()) }

// RegisterLoader adds a loader; loaders are asked in registration order.
func (k *Kernel) RegisterLoader(l Loader) {
	k.loadersMu.Lock()
	k.loaders = append(k.loaders, l)
	k.loadersMu.Unlock()
}

// Process returns the process with pid, if it exists (zombies included).
func (k *Kernel) Process(pid int) (*Process, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, ok := k.procs[pid]
	return p, ok
}

// PIDs returns the pids of every process, in increasing order.
func (k *Kernel) PIDs() []int {
	k.mu.Lock()
	out := make([]int, 0, len(k.procs))
	for pid := range k.procs {
		out = append(out, pid)
	}
	k.mu.Unlock()
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// NumProcesses returns the live and zombie processes, init included.
func (k *Kernel) NumProcesses() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.procs)
}

// Shutdown kills every process and waits until their programs returned
// or ctx is done. The kernel refuses new processes afterwards.
func (k *Kernel) Shutdown(ctx context.Context) error {
	k.budget.stopOnce.Do(func() { close(k.budget.stop) })
	k.mu.Lock()
	k.closed = true
	var running []*Process
	for _, p := range k.procs {
		if p != k.init && p.state != StateZombie {
			running = append(running, p)
		}
	}
	k.mu.Unlock()
	for _, p := range running {
		p.terminate(SIGKILL)
	}
	for _, p := range running {
		select {
		case <-p.done:
		case <-ctx.Done():
			_ = k.net.Close(ctx) // host sockets close even so
			return ctx.Err()
		}
	}
	k.init.fds.closeAll()
	// Sockets still open (held by the host, or left by the processes)
	// stop now: every host socket and goroutine of the VM is released.
	return k.net.Close(ctx)
}

// processCreds are the identity fields a new process starts with.
func (k *Kernel) newProcessLocked(parent *Process, argv, env []string, cwd string, umask, uid, gid uint32) *Process {
	pid := k.nextPID
	for {
		if _, used := k.procs[pid]; !used && pid > 0 {
			break
		}
		pid++
		if pid > 1<<22 {
			pid = 2
		}
	}
	k.nextPID = pid + 1
	p := &Process{
		k:        k,
		pid:      pid,
		uid:      uid,
		gid:      gid,
		children: make(map[int]*Process),
		done:     make(chan struct{}),
		start:    time.Now(),
	}
	p.image.Store(&processImage{argv: argv, env: env})
	p.setCaller(cwd, umask)
	if parent != nil {
		p.parent = parent
		p.pgid = parent.pgid
		p.sid = parent.sid
		p.ctty = parent.ctty
		p.nice.Store(parent.nice.Load())
		parent.children[pid] = p
	} else {
		p.pgid = pid
		p.sid = pid
	}
	k.procs[pid] = p
	return p
}
