package wasm

import (
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/secexec/secexec/internal/wasm/syscalls"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// program is a loaded WebAssembly command. It holds a reference to its
// compiled module until it has run.
type program struct {
	e   *Engine
	mod *compiled
	// env holds environment defaults of a software command (see
	// software.Command.Env).
	env []string
	// prefix replaces argv[0] when set: the interpreter, its argument and
	// the script path of a "#!" script.
	prefix []string
	// lookup and compile are the load phases, for the phase report.
	lookup, compile time.Duration
	// cache is how the compiled-module lookup of this exec went: "hit"
	// or "miss" (for a script, its interpreter's lookup).
	cache string
}

// argv is the argument vector the guest sees for the vector it was
// started with.
func (pr *program) argv(argv []string) []string {
	if pr.prefix == nil {
		return argv
	}
	out := append([]string(nil), pr.prefix...)
	if len(argv) > 1 {
		out = append(out, argv[1:]...)
	}
	return out
}

// Run runs the program in p, and whatever it execs, until the process
// exits.
func (pr *program) Run(ctx context.Context, p *kernel.Process) int {
	if !pr.e.enter() {
		pr.e.mods.release(pr.mod)
		diag(ctx, p, p.Argv(), "runtime is shut down")
		return 126
	}
	defer pr.e.exit()
	// The guest runs on this goroutine; keeping it on one OS thread makes
	// that thread's CPU clock the process's, which the kernel's CPUTime
	// limit counts.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock, stopClock := kernel.ThreadCPUClock()
	p.SetCPUClock(clock)
	defer stopClock()
	argv, env := pr.argv(p.Argv()), withDefaults(p.Environ(), pr.env)
	cur := pr
	for {
		if cur.mod.shell {
			argv = shellArgv(ctx, p, argv)
		}
		code, next := cur.runOnce(ctx, p, argv, env)
		cur.e.mods.release(cur.mod)
		if next == nil {
			return code
		}
		np, ok := next.Program.(*program)
		if !ok {
			// exec of another runtime's program (JavaScript): it runs in
			// this process with the kernel's view of its arguments.
			return next.Program.Run(ctx, p)
		}
		cur, argv, env = np, np.argv(next.Argv), withDefaults(next.Env, np.env)
	}
}

// runOnce instantiates the module and runs _start. It returns the exit
// status, or the exec request that ended the image.
func (pr *program) runOnce(ctx context.Context, p *kernel.Process, argv, env []string) (int, *syscalls.ExecRequest) {
	env = withPWD(ctx, p, env)
	ph := phases{lookup: pr.lookup, compile: pr.compile, cache: pr.cache}
	if code, req, ok := pr.runParked(ctx, p, argv, env, &ph); ok {
		return code, req
	}
	if pr.mod.reactor {
		if pk := pr.e.pool.take(ctx, pr.mod); pk != nil {
			// The parked instance holds a reference on the module, which
			// the claim now owns until it gives the instance back.
			if st, ok := syscalls.NewPrestartedState(ctx, p, argv, env); ok {
				defer st.Close()
				if pk.mem.claim(p) {
					ph.prestarted = true
					pr.e.pool.claims.Add(1)
					return pr.call(syscalls.WithState(ctx, st), p, argv, pk.mod, "secexec_main", &ph,
						func() { pr.e.pool.giveBack(pr.mod, pk) })
				}
			}
			pr.e.pool.discard(pr.mod, pk)
		}
	}
	// A reactor with a snapshot starts from it in the process itself. The
	// snapshot's Go runtime saw "/" preopened at PrestartRootFD and
	// nothing else, so the process must present that same table
	// (NewPrestartedState), or be initialised from scratch.
	var snap *snapshot
	var st *syscalls.State
	if pr.mod.reactor {
		if snap = pr.e.pool.snaps.lookup(pr.mod); snap != nil {
			var ok bool
			if st, ok = syscalls.NewPrestartedState(ctx, p, argv, env); !ok {
				st, snap = nil, nil
			}
		}
	}
	if st == nil {
		st = syscalls.NewState(ctx, p, argv, env)
	}
	defer st.Close()
	cctx := syscalls.WithState(ctx, st)
	t0 := time.Now()
	alloc := pr.e.alloc
	if lim := p.Kernel().Limits().MemoryBytes; lim > 0 {
		alloc = cappedAllocator{inner: alloc, max: uint64(lim)}
	}
	alloc = reportingAllocator{inner: alloc, p: p}
	mod, err := pr.e.rt.InstantiateModule(experimental.WithMemoryAllocator(cctx, alloc), pr.mod.cm, pr.e.modCfg)
	ph.instantiate = time.Since(t0)
	if err != nil {
		if p.Context().Err() != nil {
			return 1, nil
		}
		pr.e.log.Debug("wasm: instantiate", "pid", p.PID(), "err", err)
		diag(ctx, p, argv, "cannot instantiate module")
		return 1, nil
	}
	if pr.mod.reactor {
		// No parked instance: initialise this one in the process itself,
		// from the module's snapshot when there is one (its memory grows
		// under the process's limits).
		pr.e.pool.misses.Add(1)
		if snap != nil {
			if err := pr.e.pool.snaps.restore(snap, mod); err != nil {
				_ = mod.Close(context.Background())
				diag(ctx, p, argv, "cannot instantiate module")
				return 1, nil
			}
			return pr.call(cctx, p, argv, mod, "secexec_main", &ph, nil)
		}
		if _, err := mod.ExportedFunction("_initialize").Call(cctx); err != nil {
			defer mod.Close(context.Background())
			return pr.exitOf(ctx, p, argv, err)
		}
		return pr.call(cctx, p, argv, mod, "secexec_main", &ph, nil)
	}
	return pr.call(cctx, p, argv, mod, "_start", &ph, nil)
}

// call runs the instance's entry point in the process, then done (nil:
// close the instance).
func (pr *program) call(cctx context.Context, p *kernel.Process, argv []string, mod api.Module, entry string, ph *phases, done func()) (int, *syscalls.ExecRequest) {
	if done == nil {
		done = func() { _ = mod.Close(context.Background()) }
	}
	defer done()
	t1 := time.Now()
	res, err := mod.ExportedFunction(entry).Call(cctx)
	ph.run = time.Since(t1)
	pr.e.reportPhases(ph, p.PID(), argv)
	if err == nil {
		if len(res) == 1 {
			return int(uint32(res[0]) & 0xff), nil
		}
		return 0, nil
	}
	return pr.exitOf(cctx, p, argv, err)
}

// exitOf turns the error that ended a guest's entry point into its exit
// status, or the exec request that replaced its image.
func (pr *program) exitOf(ctx context.Context, p *kernel.Process, argv []string, err error) (int, *syscalls.ExecRequest) {
	if err == nil {
		return 0, nil
	}
	if req, ok := syscalls.IsExec(err); ok {
		return 0, req
	}
	if p.Context().Err() != nil {
		// Killed: the kernel records the signal as the status.
		return 1, nil
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return int(exit.ExitCode() & 0xff), nil
	}
	msg := err.Error()
	if reason, ok := strings.CutPrefix(msg, "wasm error: "); ok {
		reason, _, _ = strings.Cut(reason, "\n")
		diag(ctx, p, argv, "wasm trap: "+reason)
	} else {
		// A host function panicked: a runtime bug, logged in full here and
		// never shown to the guest.
		pr.e.log.Error("wasm: host function failed", "pid", p.PID(), "err", msg)
		diag(ctx, p, argv, "internal error")
	}
	return 1, nil
}

// diag writes a one-line diagnostic to the process's stderr.
func diag(ctx context.Context, p *kernel.Process, argv []string, msg string) {
	name := "wasm"
	if len(argv) > 0 && argv[0] != "" {
		name = path.Base(argv[0])
	}
	_, _ = p.Write(ctx, 2, []byte(name+": "+msg+"\n"))
}

// withDefaults returns env with each "KEY=VALUE" of defs whose key env
// does not set appended.
func withDefaults(env, defs []string) []string {
	if len(defs) == 0 {
		return env
	}
	set := make(map[string]bool, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := env
	for _, kv := range defs {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out[:len(out):len(out)], kv)
		}
	}
	return out
}

// withPWD makes PWD name the process's working directory (agentOS ABI
// §5.2): the guest libc takes its cwd from it. A PWD that reaches the same
// directory through symlinks is kept, as shells keep the logical path.
func withPWD(ctx context.Context, p *kernel.Process, env []string) []string {
	cwd := p.Cwd()
	at := -1
	for i, kv := range env {
		if strings.HasPrefix(kv, "PWD=") {
			at = i
		}
	}
	if at >= 0 {
		pwd := env[at][4:]
		if pwd == cwd {
			return env
		}
		if strings.HasPrefix(pwd, "/") {
			if real, err := p.Kernel().VFS().Realpath(ctx, p.Caller(), pwd); err == nil && real == cwd {
				return env
			}
		}
	}
	out := make([]string, 0, len(env)+1)
	for i, kv := range env {
		if i != at && !strings.HasPrefix(kv, "PWD=") {
			out = append(out, kv)
		}
	}
	return append(out, "PWD="+cwd)
}

// shellArgv works around brush (the agentOS sh) losing "2>&1" when its
// own stdout is the one it inherited: it then spawns the command with no
// file action for fd 2, so the child's stderr stays the shell's stderr
// (`sh -c 'ls /x 2>&1'` printed to stderr). A descriptor the shell opened
// itself is dup'ed correctly, so for "sh -c SCRIPT" whose stdout or
// stderr is a pipe, the script first reopens them through /dev/stdout and
// /dev/stderr. Only pipes: reopening a regular file would give the
// shell an offset of its own, and a closed descriptor must stay closed.
func shellArgv(ctx context.Context, p *kernel.Process, argv []string) []string {
	if len(argv) < 3 || argv[1] != "-c" {
		return argv
	}
	var redo []string
	for _, fd := range []int{1, 2} {
		f, err := p.File(fd)
		if err != nil {
			continue
		}
		st, err := f.Stat(ctx)
		f.DecRef()
		if err == nil && st.Mode&vfs.S_IFMT == vfs.S_IFIFO {
			redo = append(redo, fmt.Sprintf("%d>/dev/%s", fd, [...]string{1: "stdout", 2: "stderr"}[fd]))
		}
	}
	if len(redo) == 0 {
		return argv
	}
	out := slices.Clone(argv)
	out[2] = "exec " + strings.Join(redo, " ") + "; " + argv[2]
	return out
}
