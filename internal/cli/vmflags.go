package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// vmFlags are the flags every command that creates a VM shares.
type vmFlags struct {
	permissions string
	allowRead   []string
	allowWrite  []string
	allowNet    []string
	allowEnv    []string
	mounts      []string
	env         []string
	cwd         string
	timeout     time.Duration
	fsBytes     int64
	processes   int
	memory      string
	cpuTime     time.Duration
	vmMemory    string
	vmCPUTime   time.Duration
	realTime    bool
	frozenClock bool
	clock       string
	publish     []string
	allowRemote bool
	allowNPM    bool
	allowPip    bool
	// vmID, with --server, names an existing VM to run in.
	vmID string
	// fromSnapshot is STORE-DIR/ID; saveSnapshot a store directory.
	fromSnapshot string
	saveSnapshot string
}

func (f *vmFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.permissions, "permissions", "standard",
		"base permissions: 'standard' (the VM's own files and programs; no network, no host env), 'none', or a JSON policy file")
	fl.StringArrayVar(&f.allowRead, "allow-read", nil, "allow reading guest PATH and beneath (repeatable)")
	fl.StringArrayVar(&f.allowWrite, "allow-write", nil, "allow writing guest PATH and beneath (repeatable)")
	fl.StringArrayVar(&f.allowNet, "allow-net", nil, "allow network access to HOST[:PORT] (repeatable)")
	fl.BoolVar(&f.allowNPM, "allow-npm-registry", false, "allow network access to the npm registry the host's npm uses (npm config get registry), for npm and npx in the VM")
	fl.BoolVar(&f.allowPip, "allow-pip-index", false, "allow network access to the package index the host's pip uses (PIP_INDEX_URL, pip.conf, else PyPI) and point the VM's pip at it")
	fl.StringArrayVar(&f.allowEnv, "allow-env", nil, "pass the host's environment variable KEY into the VM (repeatable)")
	fl.StringArrayVar(&f.mounts, "mount", nil, "mount host directory HOST at guest path GUEST: "+mountSyntax+" (repeatable)")
	fl.StringArrayVarP(&f.env, "env", "e", nil, "set KEY=VALUE in the guest environment (repeatable)")
	fl.StringVar(&f.cwd, "cwd", "", "working directory inside the VM (default "+secexec.Workspace+")")
	fl.DurationVar(&f.timeout, "timeout", 0, "kill the program after this much wall time (exit 124)")
	fl.Var(sizeFlag{&f.fsBytes}, "fs-bytes", "file data the VM may store, e.g. 64M (default 64M); writes beyond it fail with ENOSPC")
	fl.IntVar(&f.processes, "max-processes", 0, "processes the VM may run at once (default 256)")
	fl.StringVar(&f.memory, "memory", "", "guest memory per process, e.g. 64M: WebAssembly linear memory, V8 heap (default 128M)")
	fl.DurationVar(&f.cpuTime, "cpu-time", 0, "CPU time per process before SIGXCPU (the command then exits 124)")
	fl.StringVar(&f.vmMemory, "vm-memory", "", "guest memory of all the VM's processes together, e.g. 512M (default 1G); a process that takes the VM past it is killed")
	fl.DurationVar(&f.vmCPUTime, "vm-cpu-time", 0, "CPU time of all the VM's processes together, host work for them included; then they end with SIGXCPU (exit 124) and spawns fail")
	fl.StringArrayVar(&f.publish, "publish", nil, "serve the guest's TCP port GUESTPORT on the host at [HOST:]HOSTPORT (loopback by default; repeatable)")
	fl.BoolVar(&f.allowRemote, "allow-non-loopback", false, "let --publish listen on a non-loopback address")
	fl.BoolVar(&f.realTime, "real-time", false, "give every guest the real clock at full resolution (by default guests see real time in 1 ms steps); the same as --clock real")
	fl.BoolVar(&f.frozenClock, "frozen-clock", false, "stop the guests' clock at the VM's boot (Date.now, WebAssembly clocks, file times); the same as --clock frozen")
	fl.StringVar(&f.clock, "clock", "", "the guests' clock: coarse (default: real time in 1 ms steps), real or frozen")
	fl.StringVar(&f.vmID, "vm", "", "with --server: run in the existing VM ID (secexec vm create) instead of a fresh one, which is deleted at the end")
	fl.StringVar(&f.fromSnapshot, "from-snapshot", "", "start the VM from snapshot STORE-DIR/ID: its files, env, cwd, hostname, clock and memory mounts (these flags win); permissions and limits come from the flags")
	fl.StringVar(&f.saveSnapshot, "save-snapshot", "", "when the command has run, save the VM to the snapshot store in this directory and print STORE-DIR/ID on stderr")
}

// standardPermissions is what the CLI grants unless told otherwise: the
// guest may use everything inside its own VM — which holds nothing of the
// host's beyond explicit mounts — but has no network and no host tools.
//
// Listening is part of "inside": a guest's server is reachable only from
// the same VM, and from the host only through --publish.
func standardPermissions() *policy.Policy {
	p := policy.DenyAll().
		AllowFS(policy.AllFSOps(), "/**").
		AllowExec("*", "/**")
	p.Net = append(p.Net, policy.NetRule{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetListen}, Hosts: []string{"*"}})
	return p
}

// publications parses the --publish flags.
func (f *vmFlags) publications() ([]publication, error) {
	var pubs []publication
	for _, s := range f.publish {
		p, err := parsePublish(s, f.allowRemote)
		if err != nil {
			return nil, err
		}
		pubs = append(pubs, p)
	}
	return pubs, nil
}

func (f *vmFlags) options(cmd *cobra.Command) (secexec.Options, error) {
	var opts secexec.Options
	log, err := logger(cmd)
	if err != nil {
		return opts, err
	}
	opts.Logger = log
	var p *policy.Policy
	switch f.permissions {
	case "standard", "":
		p = standardPermissions()
	case "none":
		p = policy.DenyAll()
	default:
		data, err := os.ReadFile(f.permissions)
		if err != nil {
			return opts, &usageError{err: fmt.Errorf("--permissions: %w", err)}
		}
		p, err = policy.Parse(data)
		if err != nil {
			return opts, &usageError{err: fmt.Errorf("--permissions %s: %w", f.permissions, err)}
		}
	}
	if len(f.allowRead) > 0 {
		p.AllowRead(f.allowRead...)
	}
	if len(f.allowWrite) > 0 {
		p.AllowWrite(f.allowWrite...)
	}
	if len(f.allowNet) > 0 {
		p.AllowNet(f.allowNet...)
	}
	if f.allowNPM {
		u, err := secexec.NPMRegistry(cmd.Context())
		if err != nil {
			return opts, err
		}
		p.AllowNet(secexec.NPMRegistryRule(u))
	}
	env := map[string]string{}
	if f.allowPip {
		index := hostPipIndex(cmd.Context())
		rules, err := pipIndexRules(index)
		if err != nil {
			return opts, err
		}
		p.AllowNet(rules...)
		env["PIP_INDEX_URL"] = guestPipIndex(index)
	}
	for _, k := range f.allowEnv {
		p.AllowEnv(k)
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if err := p.Validate(); err != nil {
		return opts, &usageError{err: err}
	}
	for _, kv := range f.env {
		k, v, ok := cutEnv(kv)
		if !ok {
			return opts, &usageError{err: fmt.Errorf("--env %q: want KEY=VALUE", kv)}
		}
		env[k] = v
	}
	for _, m := range f.mounts {
		mt, err := parseMount(m)
		if err != nil {
			return opts, &usageError{err: err}
		}
		opts.Mounts = append(opts.Mounts, mt)
	}
	opts.Permissions = p
	opts.Env = env
	opts.Cwd = f.cwd
	opts.Limits.FSBytes = f.fsBytes
	opts.Limits.Processes = f.processes
	opts.Limits.CPUTime = f.cpuTime
	clk, err := f.clockPolicy()
	if err != nil {
		return opts, &usageError{err: err}
	}
	opts.Clock = clk
	if f.memory != "" {
		n, err := parseSize(f.memory)
		if err != nil {
			return opts, &usageError{err: fmt.Errorf("--memory %q: %w", f.memory, err)}
		}
		opts.Limits.MemoryBytes = n
	}
	if f.vmMemory != "" {
		n, err := parseSize(f.vmMemory)
		if err != nil {
			return opts, &usageError{err: fmt.Errorf("--vm-memory %q: %w", f.vmMemory, err)}
		}
		opts.Limits.VMMemoryBytes = n
	}
	if f.vmCPUTime < 0 {
		return opts, &usageError{err: fmt.Errorf("--vm-cpu-time %s: want a positive duration", f.vmCPUTime)}
	}
	opts.Limits.VMCPUTime = f.vmCPUTime
	if f.fromSnapshot != "" {
		snap, err := openSnapshot(cmd, f.fromSnapshot)
		if err != nil {
			return opts, err
		}
		opts.From = snap
	}
	return opts, nil
}

// cutEnv splits a --env KEY=VALUE; ok is false without a KEY and "=".
func cutEnv(kv string) (k, v string, ok bool) {
	k, v, ok = strings.Cut(kv, "=")
	return k, v, ok && k != ""
}

// openSnapshot reads --from-snapshot STORE-DIR/ID.
func openSnapshot(cmd *cobra.Command, arg string) (*secexec.Snapshot, error) {
	dir, id := filepath.Split(filepath.Clean(arg))
	if dir == "" || id == "" {
		return nil, &usageError{err: fmt.Errorf("--from-snapshot %q: want STORE-DIR/ID", arg)}
	}
	st, err := secexec.OpenSnapshotStore(dir)
	if err != nil {
		return nil, err
	}
	return st.Get(cmd.Context(), id)
}

// saveSnapshot saves vm to the --save-snapshot store, if one was given,
// and prints where it went (STORE-DIR/ID, what --from-snapshot takes) on
// stderr.
func (f *vmFlags) saveSnapshotOf(cmd *cobra.Command, vm *secexec.VM) error {
	if f.saveSnapshot == "" {
		return nil
	}
	st, err := secexec.OpenSnapshotStore(f.saveSnapshot)
	if err != nil {
		return err
	}
	snap, err := vm.Snapshot(cmd.Context(), st, secexec.SnapshotOptions{})
	if err != nil {
		return fmt.Errorf("--save-snapshot: %w", err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "secexec: snapshot %s (%d files, %d bytes, %d stored)\n",
		filepath.Join(st.Dir(), snap.ID), snap.Files, snap.Bytes, snap.Stored)
	return nil
}

// errBadSize is the error of a size that parseSize does not read.
var errBadSize = errors.New("want a positive size such as 64M (a byte count, or with K, M or G: powers of 1024)")

// maxSize bounds every size flag: 1 TiB, far beyond any real limit, and
// far from overflowing an int64 when multiplied.
const maxSize = 1 << 40

// parseSize reads a byte count with an optional K, M or G suffix (powers
// of 1024, either case): the one reader of every size flag of the CLI
// (--fs-bytes, --memory, --vm-memory, --mount quota=, serve's --max-*
// sizes), so that they all take the same forms.
func parseSize(s string) (int64, error) {
	if s == "" {
		return 0, errBadSize
	}
	mult := int64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult, s = 1<<10, s[:len(s)-1]
	case "M":
		mult, s = 1<<20, s[:len(s)-1]
	case "G":
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > maxSize/mult {
		return 0, errBadSize
	}
	return n * mult, nil
}

// formatSize writes n the way parseSize reads it, with the largest suffix
// that keeps it exact (for flag defaults in --help).
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// mountSyntax is the --mount syntax, for help and errors.
const mountSyntax = "HOST:GUEST[:OPTS], OPTS a comma list of ro, rw, quota=SIZE, external-symlinks"

// parseMount parses HOST:GUEST[:OPTS]: ro or rw (the default), quota=SIZE
// (a byte quota on what guests add, ENOSPC beyond it) and
// external-symlinks (guests may create symlinks that leave the mount).
func parseMount(s string) (secexec.Mount, error) {
	parts := strings.Split(s, ":")
	m := secexec.Mount{}
	if len(parts) < 2 || len(parts) > 3 {
		return m, fmt.Errorf("--mount %q: want %s", s, mountSyntax)
	}
	if len(parts) == 3 {
		for _, o := range strings.Split(parts[2], ",") {
			k, v, hasV := strings.Cut(o, "=")
			switch {
			case o == "ro" || o == "rw":
				m.ReadOnly = o == "ro"
			case o == "external-symlinks":
				m.AllowExternalSymlinks = true
			case k == "quota" && hasV && v != "":
				n, err := parseSize(v)
				if err != nil {
					return m, fmt.Errorf("--mount %q: quota: %w", s, err)
				}
				m.MaxBytes = n
			default:
				return m, fmt.Errorf("--mount %q: unknown option %q; want %s", s, o, mountSyntax)
			}
		}
	}
	m.HostDir, m.Path = parts[0], parts[1]
	if m.HostDir == "" || !strings.HasPrefix(m.Path, "/") {
		return m, fmt.Errorf("--mount %q: want %s with an absolute GUEST path", s, mountSyntax)
	}
	return m, nil
}

// clockPolicy resolves --clock, --real-time and --frozen-clock; they may
// be combined only when they agree.
func (f *vmFlags) clockPolicy() (secexec.Clock, error) {
	clk, err := secexec.ParseClock(f.clock)
	if err != nil {
		return clk, fmt.Errorf("--clock: %w", err)
	}
	if f.realTime && f.frozenClock {
		return clk, fmt.Errorf("--real-time and --frozen-clock: %w", errno.EINVAL)
	}
	for _, alias := range []struct {
		set  bool
		flag string
		to   secexec.Clock
	}{{f.realTime, "--real-time", secexec.ClockReal}, {f.frozenClock, "--frozen-clock", secexec.ClockFrozen}} {
		if !alias.set {
			continue
		}
		if f.clock != "" && clk != alias.to {
			return clk, fmt.Errorf("%s with --clock %s: %w", alias.flag, f.clock, errno.EINVAL)
		}
		clk = alias.to
	}
	return clk, nil
}

// sizeFlag is a size flag (parseSize) that sets several limits at once.
type sizeFlag []*int64

func (f sizeFlag) String() string {
	if len(f) == 0 || f[0] == nil || *f[0] == 0 {
		return ""
	}
	return formatSize(*f[0])
}

func (f sizeFlag) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	for _, p := range f {
		*p = n
	}
	return nil
}

func (sizeFlag) Type() string { return "size" }

// intSizeFlag is a size flag (parseSize) for a limit held in an int.
type intSizeFlag struct{ p *int }

func (f intSizeFlag) String() string {
	if f.p == nil || *f.p == 0 {
		return ""
	}
	return formatSize(int64(*f.p))
}

func (f intSizeFlag) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*f.p = int(n)
	return nil
}

func (intSizeFlag) Type() string { return "size" }

// durationsFlag is a positive duration flag that sets several limits at
// once.
type durationsFlag []*time.Duration

func (f durationsFlag) String() string {
	if len(f) == 0 || f[0] == nil || *f[0] == 0 {
		return ""
	}
	return f[0].String()
}

func (f durationsFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 30s")
	}
	for _, p := range f {
		*p = d
	}
	return nil
}

func (durationsFlag) Type() string { return "duration" }
