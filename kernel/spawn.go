package kernel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Program is a loaded executable, ready to run in a process.
type Program interface {
	// Run executes the program in p and returns its exit code. It must
	// return promptly once ctx (the process context) is cancelled.
	Run(ctx context.Context, p *Process) int
}

// Executable describes the file a spawn resolved to.
type Executable struct {
	// Path is the canonical guest path.
	Path string
	// Stat are its attributes.
	Stat vfs.Stat
	// Header holds the first bytes of the file (up to 256), for magic
	// number checks.
	Header []byte
}

// Loader turns an executable file into a Program, like a binfmt handler.
// Load returns ErrNotMine when the file is not of its kind, so the next
// loader is asked.
type Loader interface {
	Load(ctx context.Context, p *Process, exe Executable) (Program, error)
}

// ErrNotMine is returned by a Loader for files it does not handle.
var ErrNotMine = errors.New("kernel: not an executable of this loader")

// SpawnOptions describe a new process.
type SpawnOptions struct {
	// Argv is the argument vector; Argv[0] names the program. A name
	// without '/' is searched in PATH from Env (or the default PATH).
	Argv []string
	// Path, when set, is the executable to run instead of resolving
	// Argv[0] (execve's first argument).
	Path string
	// Env is the environment, "KEY=value" strings.
	Env []string
	// Cwd is the working directory; empty inherits the parent's.
	Cwd string
	// Files, when non-nil, is the child's complete initial descriptor
	// table (index = fd, nil = closed) instead of inheriting the parent's;
	// each file gets a new reference. The host uses it to wire stdio.
	Files []vfs.File
	// Actions run in order on the child's table after inheritance, with
	// POSIX ordering (see FileAction). They run before the program is
	// resolved, so a FileChdir moves where a relative program path is
	// looked up, and a spawn an action rejects creates no process.
	Actions []FileAction
	// FallbackPath is the search path for a bare program name when Env
	// has no PATH; empty means DefaultPath. agentOS guests want their own
	// PATH to apply then (agentOS ABI §7.1.4).
	FallbackPath string
	// Pgid: -1 (or unset with NewGroup false) inherits the parent's
	// process group; 0 with NewGroup makes a new group led by the child;
	// > 0 joins that group.
	Pgid     int
	NewGroup bool
	// Setsid makes the child the leader of a new session and process
	// group (POSIX_SPAWN_SETSID), without a controlling terminal unless
	// Terminal gives it one.
	Setsid bool
	// Terminal, with Setsid, is a PTY file (master or slave) whose
	// terminal becomes the new session's controlling terminal, with the
	// child's group in the foreground: what a login or `secexec shell`
	// sets up.
	Terminal vfs.File
	// SigMask is the child's initial blocked set.
	SigMask uint64
	// SigDefault is the set of signals whose disposition the child does
	// not inherit even when the parent ignores them (as
	// posix_spawnattr_setsigdefault): a runtime that ignores SIGPIPE for
	// itself, as node does, gives its children the default back.
	SigDefault uint64
	// Umask, when non-nil, replaces the inherited mask.
	Umask *uint32
	// NewJob makes the child the first member of a new sub-job of its
	// parent's job (see Job): what a host-side helper that runs a guest
	// command to completion uses to kill everything that command started
	// without killing its own caller. Host spawns always start a job.
	NewJob bool
	// Creds, when non-nil, are the child's user and group ids instead of
	// the parent's. Only a parent with uid 0 may give other ids (EPERM),
	// as only root may setuid(2); the host spawns the VM's user this way
	// from init.
	Creds *Creds
}

// Creds are a process's user and group ids.
type Creds struct {
	UID, GID uint32
}

// DefaultPath is PATH when the environment has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Spawn creates a child of p running opts.Argv, as posix_spawn(3): it
// resolves the program, checks the exec policy and limits, builds the
// descriptor table and starts the program on its own goroutine.
func (p *Process) Spawn(ctx context.Context, opts SpawnOptions) (*Process, error) {
	return p.k.spawn(ctx, p, opts, false)
}

// SpawnHost creates a process whose parent is init and whose status is
// collected by the host through HostWait.
func (k *Kernel) SpawnHost(ctx context.Context, opts SpawnOptions) (*Process, error) {
	return k.spawn(ctx, k.init, opts, true)
}

func (k *Kernel) spawn(ctx context.Context, parent *Process, opts SpawnOptions, host bool) (*Process, error) {
	if len(opts.Argv) == 0 || opts.Argv[0] == "" && opts.Path == "" {
		return nil, errno.ENOENT
	}
	if n := stringsSize(opts.Argv); n > k.limits.ArgvBytes {
		return nil, fmt.Errorf("spawn %s: argument list of %d bytes: %w", opts.Argv[0], n, errno.E2BIG)
	}
	if n := stringsSize(opts.Env); n > k.limits.EnvBytes {
		return nil, fmt.Errorf("spawn %s: environment of %d bytes: %w", opts.Argv[0], n, errno.E2BIG)
	}
	if err := parent.waitIfStopped(ctx); err != nil {
		return nil, err
	}
	umask := parent.Umask()
	if opts.Umask != nil {
		umask = *opts.Umask & 0o777
	}
	uid, gid := parent.uid, parent.gid
	if c := opts.Creds; c != nil {
		if parent.uid != 0 && (c.UID != uid || c.GID != gid) {
			return nil, errno.EPERM
		}
		uid, gid = c.UID, c.GID
	}
	// The file actions run first, in a table no process owns yet: a
	// spawn they reject never becomes a process.
	fds, ac, cwdSet, err := k.childFiles(ctx, parent, opts,
		vfs.Caller{UID: uid, GID: gid, Cwd: joinCwd(parent.Cwd(), opts.Cwd), Umask: umask})
	if err != nil {
		return nil, err
	}
	tableOwned := false
	defer func() {
		if !tableOwned {
			fds.closeAll()
		}
	}()
	caller := &ac
	if !cwdSet {
		caller.Cwd = parent.Cwd()
		if opts.Cwd != "" {
			real, err := k.vfs.Realpath(ctx, &vfs.Caller{UID: uid, GID: gid, Cwd: parent.Cwd(), Umask: umask}, opts.Cwd)
			if err != nil {
				return nil, err
			}
			caller.Cwd = real
		}
	}
	exe, err := k.findExecutable(ctx, caller, opts)
	if err != nil {
		return nil, err
	}
	if k.authExec != nil {
		if err := k.authExec(ctx, exe.Path, opts.Argv[0]); err != nil {
			return nil, err
		}
	}

	// Reserve the process slot before loading: a fork bomb must hit
	// EAGAIN without paying for module loads.
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, ErrClosed
	}
	if len(k.procs) >= k.limits.Processes+1 { // +1: init does not count
		k.mu.Unlock()
		return nil, fmt.Errorf("spawn %s: %d processes: %w", opts.Argv[0], k.limits.Processes, errno.EAGAIN)
	}
	if !host && parent.job.deadLocked() {
		// The caller's lineage is being killed: nothing may join it.
		k.mu.Unlock()
		return nil, fmt.Errorf("spawn %s: %w: %w", opts.Argv[0], ErrJobKilled, errno.EAGAIN)
	}
	if err := k.checkSpawnBudgetLocked(); err != nil {
		k.mu.Unlock()
		return nil, fmt.Errorf("spawn %s: %w", opts.Argv[0], err)
	}
	c := k.newProcessLocked(parent, append([]string(nil), opts.Argv...), append([]string(nil), opts.Env...), caller.Cwd, caller.Umask, uid, gid)
	c.state = StateNew
	c.hostHandle = host
	c.fds, tableOwned = fds, true
	switch {
	case host:
		c.job = k.newJobLocked(nil)
	case opts.NewJob:
		c.job = k.newJobLocked(parent.job)
	case parent.job != nil:
		c.job = parent.job
	default: // a child of init the host spawned with Spawn
		c.job = k.newJobLocked(nil)
	}
	c.image.Store(&processImage{argv: c.Argv(), env: c.Environ(), exe: exe.Path})
	// The process is visible to kill(2) from here on: its context and mask
	// must exist before the table lock is released.
	c.ctx, c.cancel = context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), procKey{}, c))
	c.sig.blocked = opts.SigMask &^ (bit(SIGKILL) | bit(SIGSTOP))
	k.mu.Unlock()
	// Ignored signals stay ignored across exec, as POSIX says.
	parent.sig.mu.Lock()
	for s := range c.sig.disp {
		if parent.sig.disp[s] == DispositionIgnore && opts.SigDefault&bit(Signal(s)) == 0 {
			c.sig.disp[s] = DispositionIgnore
		}
	}
	parent.sig.mu.Unlock()

	fail := func(err error) (*Process, error) {
		c.fds.closeAll()
		k.mu.Lock()
		c.state = StateZombie
		k.reapLocked(c)
		k.mu.Unlock()
		c.cancel(errExited)
		close(c.done)
		return nil, err
	}
	if err := c.setupGroup(opts); err != nil {
		return fail(err)
	}
	prog, err := k.load(ctx, c, exe)
	if err != nil {
		return fail(err)
	}
	k.mu.Lock()
	c.state = StateRunning
	k.mu.Unlock()
	if d := k.limits.CPUTime; d > 0 {
		go c.watchCPU(d)
	}
	go c.run(prog)
	return c, nil
}

func (c *Process) run(prog Program) {
	code := runProgram(c, prog)
	c.settleBudget()
	c.exit(WaitStatus{Exited: true, Code: code})
}

// runProgram runs prog and turns a panic in a runtime into exit status 70
// (EX_SOFTWARE) instead of crashing the host.
func runProgram(c *Process, prog Program) (code int) {
	defer func() {
		if r := recover(); r != nil {
			c.k.log.Error("program panicked", "pid", c.pid, "panic", fmt.Sprint(r))
			code = 70
		}
	}()
	return prog.Run(c.ctx, c)
}

func stringsSize(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s) + 1
	}
	return n
}

func (c *Process) setupGroup(opts SpawnOptions) error {
	k := c.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if opts.Setsid {
		c.sid, c.pgid, c.ctty = c.pid, c.pid, nil
		if opts.Terminal != nil {
			t, ok := PTYOf(opts.Terminal)
			if !ok {
				return errno.ENOTTY
			}
			return k.setControllingTerminalLocked(c, t)
		}
		return nil
	}
	if opts.Terminal != nil {
		return errno.EINVAL
	}
	switch {
	case opts.NewGroup && opts.Pgid <= 0:
		c.pgid = c.pid
	case opts.Pgid > 0:
		ok := false
		for _, q := range k.procs {
			if q.pgid == opts.Pgid && q.sid == c.sid && q.state != StateZombie {
				ok = true
				break
			}
		}
		if !ok {
			return errno.EPERM
		}
		c.pgid = opts.Pgid
	}
	return nil
}

// findExecutable resolves the program of a spawn and reads its header.
func (k *Kernel) findExecutable(ctx context.Context, c *vfs.Caller, opts SpawnOptions) (Executable, error) {
	name := opts.Path
	if name == "" {
		name = opts.Argv[0]
	}
	if strings.Contains(name, "/") {
		return k.openExecutable(ctx, c, name)
	}
	path := DefaultPath
	if opts.FallbackPath != "" {
		path = opts.FallbackPath
	}
	for _, kv := range opts.Env {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[5:]
		}
	}
	firstErr := error(nil)
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		exe, err := k.openExecutable(ctx, c, dir+"/"+name)
		if err == nil {
			return exe, nil
		}
		if e := errno.Of(err); e != errno.ENOENT && e != errno.ENOTDIR && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return Executable{}, firstErr
	}
	return Executable{}, &NotFoundError{Name: name}
}

// NotFoundError reports a program name not found in PATH; shells print it
// as "command not found" and exit 127.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return e.Name + ": command not found" }

// Unwrap makes the error match errno.ENOENT.
func (e *NotFoundError) Unwrap() error { return errno.ENOENT }

func (k *Kernel) openExecutable(ctx context.Context, c *vfs.Caller, path string) (Executable, error) {
	real, err := k.vfs.Realpath(ctx, c, path)
	if err != nil {
		return Executable{}, err
	}
	st, err := k.vfs.Stat(ctx, c, real)
	if err != nil {
		return Executable{}, err
	}
	if st.Type() == vfs.TypeDir {
		return Executable{}, errno.Path("exec", path, errno.EACCES)
	}
	if st.Type() != vfs.TypeRegular {
		return Executable{}, errno.Path("exec", path, errno.EACCES)
	}
	if err := k.vfs.Access(ctx, c, real, vfs.AccessExecute); err != nil {
		return Executable{}, err
	}
	f, err := k.vfs.Open(ctx, c, real, vfs.O_RDONLY, 0)
	if err != nil {
		return Executable{}, err
	}
	defer f.DecRef()
	hdr := make([]byte, 256)
	n, err := f.Pread(ctx, hdr, 0)
	if err != nil {
		return Executable{}, errno.Path("exec", path, err)
	}
	return Executable{Path: real, Stat: st, Header: hdr[:n]}, nil
}

func (k *Kernel) load(ctx context.Context, c *Process, exe Executable) (Program, error) {
	k.loadersMu.RLock()
	loaders := k.loaders
	k.loadersMu.RUnlock()
	for _, l := range loaders {
		prog, err := l.Load(ctx, c, exe)
		if errors.Is(err, ErrNotMine) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return prog, nil
	}
	if f := nativeFormat(exe.Header); f != "" {
		return nativeProgram{path: exe.Path, format: f}, nil
	}
	return nil, errno.Path("exec", exe.Path, errno.ENOEXEC)
}
