// Package secexec runs code its user did not write — POSIX programs
// compiled to WebAssembly and (later) JavaScript on V8 — inside a virtual
// kernel written in Go. Each VM has its own filesystem, processes, pipes,
// environment, permissions (deny by default) and resource limits; nothing
// a guest does touches the host unless a permission rule or a mount allows
// it.
//
// A VM is created with NewVM and used through its filesystem (VM.FS) and
// its process API (VM.Exec, VM.Spawn):
//
//	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
//	if err != nil { ... }
//	defer vm.Close()
//	err = vm.FS().WriteFile(ctx, "/workspace/hello.txt", []byte("hi\n"), 0o644)
//
// VMs run in engine processes owned by a Host: NewVM uses the default
// Host; NewHost makes another, and Options.EngineGroup splits a Host's
// shared engines into fault domains (a guest that crashes its engine
// loses only the VMs of its group).
//
// Errors from guest-visible operations wrap a Linux errno
// (github.com/secexec/secexec/kernel/errno), so errors.Is works with both
// the errno values and the io/fs sentinels such as fs.ErrNotExist.
package secexec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/clock"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// Permissions is the declarative permission policy of a VM: plain data,
// JSON-serialisable. A missing domain denies everything in it; rules are
// evaluated last match wins. See docs/permissions.md.
type Permissions = policy.Policy

// AuditEvent is a permission decision reported to Options.Audit.
type AuditEvent = policy.Event

// AllowAll returns permissions that allow every operation in every domain.
func AllowAll() *Permissions { return policy.AllowAll() }

// DenyAll returns permissions that allow nothing (the default).
func DenyAll() *Permissions { return policy.DenyAll() }

// Limits bound a VM's resources; zero fields take DefaultLimits.
type Limits = kernel.Limits

// DefaultLimits returns the limits a VM gets unless configured otherwise.
func DefaultLimits() Limits { return kernel.DefaultLimits() }

// Clock is the clock policy of a VM (Options.Clock); its text form is
// "coarse", "real" or "frozen" (ParseClock).
type Clock = clock.Policy

// The clock policies.
const (
	// ClockCoarse, the default: real time, monotonic, in steps of 1 ms
	// (with jittered edges), for every guest alike.
	ClockCoarse = clock.Coarse
	// ClockReal: the host's clock at full resolution.
	ClockReal = clock.Real
	// ClockFrozen: time stands still at the VM's boot, for every guest.
	ClockFrozen = clock.Frozen
)

// ParseClock reads "coarse", "real" or "frozen" (empty is coarse); other
// text is an error matching errno.EINVAL.
func ParseClock(s string) (Clock, error) { return clock.ParsePolicy(s) }

// clockOf resolves Options.Clock and its older spelling RealTime.
func clockOf(opts Options) (Clock, error) {
	c := opts.Clock
	if !c.Valid() {
		return 0, fmt.Errorf("secexec: Options.Clock %d: %w", uint8(c), errno.EINVAL)
	}
	if opts.RealTime {
		if c != ClockCoarse && c != ClockReal {
			return 0, fmt.Errorf("secexec: Options.RealTime with Clock %v: %w", c, errno.EINVAL)
		}
		c = ClockReal
	}
	return c, nil
}

// Mount describes a filesystem mounted into a VM.
type Mount struct {
	// Path is the absolute guest path; it is created if missing.
	Path string
	// HostDir is a host directory to expose. Empty mounts a fresh memory
	// filesystem that counts against the VM's storage limit.
	HostDir string
	// ReadOnly makes the mount read-only.
	ReadOnly bool
	// MaxBytes is a byte quota on a host directory mount: how much the
	// guest may add to it (apparent size, so sparse files count in full),
	// net, since the mount was made; content already there counts as
	// zero and removing it makes room. Writes and truncates beyond it fail
	// with ENOSPC. Zero means no quota. df and statfs show it as the
	// mount's size (host mounts never show the host disk's numbers).
	MaxBytes int64
	// AllowExternalSymlinks lets guests create symlinks in a writable host
	// mount that point outside it (absolute targets, or ".." beyond the
	// mount's root). Without it they are refused with EPERM, so host
	// tools that follow links in the directory later stay inside it.
	AllowExternalSymlinks bool
}

// The guest account every VM has, and its default working directory.
const (
	GuestUser = vm.UserName
	GuestUID  = vm.UserUID
	GuestGID  = vm.UserGID
	GuestHome = vm.UserHome
	Workspace = vm.Workspace
)

// Options configure a VM. The zero value is a VM that denies everything.
type Options struct {
	// Permissions; nil denies everything (deny by default).
	Permissions *Permissions
	// Audit, if set, receives every permission denial.
	Audit func(AuditEvent)
	// Limits; zero fields take DefaultLimits.
	Limits Limits
	// Mounts are mounted when the VM is created, in order.
	Mounts []Mount
	// Env is the environment every process starts with, on top of the
	// defaults (HOME, USER, PATH, ...). The host's environment is never
	// passed through.
	Env map[string]string
	// Cwd is the default working directory; empty means Workspace.
	Cwd string
	// Hostname is the VM's host name; empty means "secexec".
	Hostname string
	// Clock is the policy of the VM's one clock, which every guest reads
	// (node's Date, performance and hrtime, the WebAssembly clocks and so
	// python's, file times, /proc/uptime): ClockCoarse (the zero value,
	// real time in 1 ms steps that never go backwards), ClockReal (full
	// resolution) or ClockFrozen (time stands still at the VM's boot).
	Clock Clock
	// RealTime is the older spelling of Clock: ClockReal, kept so that
	// existing callers work; with a Clock other than ClockCoarse or
	// ClockReal it is an error.
	RealTime bool
	// Logger receives debug logs; nil discards them. The records of a
	// shared engine process go to HostOptions.Logger, or to the Logger of
	// the VM that started that engine; the records of the in-process
	// runtime go to the Logger of a Host's first in-process VM.
	Logger *slog.Logger
	// Tools are host functions guests may call by name, each call
	// allowed only by a tool rule of Permissions (deny by default) and
	// bounded by Limits.ToolBytes and Limits.ToolTimeout. They run in
	// this program in every engine mode. See Tool.
	Tools map[string]Tool
	// From, if set, is a snapshot the VM starts from: its files, and the
	// options it was taken with for every option left unset here (Env is
	// merged, these variables winning). Its restart commands are started
	// once the VM is up (VM.Restarted). A snapshot taken over other
	// userland layers than this program has is refused with an error
	// matching fs.ErrNotExist.
	From *Snapshot

	// [engine] Where the VM runs; see remote.go.

	// Engine selects where the VM runs: in the shared engine process (the
	// default), in an engine process of its own, or in this process.
	Engine EngineMode
	// EnginePath is the engine executable; empty means this program,
	// whose main must start with the IsEngine/EngineMain one-liner.
	EnginePath string
	// EngineGroup places a VM with Engine EngineShared: it shares an
	// engine process only with the VMs of the same group (and Host,
	// EnginePath and WarmIsolates), so that an engine lost to one group's
	// guest (a V8 fatal error, a crash, a kill) loses no VM of another
	// group. `secexec serve` makes a group of each tenant. Empty is the
	// default group, whose engine stays up until Shutdown; the engine of
	// a named group exits when its last VM is closed. Other engine modes
	// ignore it.
	EngineGroup string
	// WarmIsolates is how many booted V8 isolates the engine keeps
	// parked per kind of node process (bootstrap and heap limit, which
	// Limits.MemoryBytes sets), so that a node process starts without
	// creating one; each costs about 3 MiB. 0 takes
	// $SECEXEC_V8_WARM_ISOLATES or 2; negative disables the pool. The
	// pool belongs to the engine: an engine process of the VM's own
	// (EnginePerVM) takes the VM's value, VMs with different values never
	// share an engine process, and the in-process runtime of a Host takes
	// the value of its first in-process VM.
	WarmIsolates int
}

// ErrClosed is returned by operations on a closed VM.
var ErrClosed = errors.New("secexec: VM is closed")

// VM is one sandbox. Its methods are safe for concurrent use.
type VM struct {
	b    backend
	h    *Host
	opts Options
	env  []string
	fs   *FS

	restartedMu sync.Mutex
	restarted   []*Process

	closeOnce sync.Once
	closeErr  error
}

// NewVM creates a VM on the default Host.
func NewVM(ctx context.Context, opts Options) (*VM, error) { return defaultHost.NewVM(ctx, opts) }

// FS returns the VM's filesystem API.
func (v *VM) FS() *FS { return v.fs }

// Close kills every process of the VM and releases it. It is safe to call
// more than once.
func (v *VM) Close() error {
	v.closeOnce.Do(func() { v.closeErr = v.b.close(context.Background()) })
	return v.closeErr
}

// defaultEnv is the environment a process starts with: the guest's
// identity, a PATH that finds the userland, the host's npm registry for
// the guest's npm (when set-up recorded one), then the caller's variables.
func defaultEnv(opts Options, registry string) []string {
	cwd := opts.Cwd
	if cwd == "" {
		cwd = Workspace
	}
	host := opts.Hostname
	if host == "" {
		host = "secexec"
	}
	env := map[string]string{
		"HOME":     GuestHome,
		"USER":     GuestUser,
		"LOGNAME":  GuestUser,
		"SHELL":    "/bin/sh",
		"PATH":     kernel.DefaultPath,
		"PWD":      cwd,
		"HOSTNAME": host,
		"TMPDIR":   "/tmp",
		"LANG":     "C.UTF-8",
		"TERM":     "dumb",
	}
	if registry != "" {
		env["npm_config_registry"] = registry
		env["npm_config_update_notifier"] = "false"
	}
	for k, val := range opts.Env {
		env[k] = val
	}
	return envList(env)
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// mergeEnv overlays extra on base ("KEY=value" lists), later keys winning.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	m := make(map[string]string, len(base)+len(extra))
	for _, kv := range base {
		k, val, _ := strings.Cut(kv, "=")
		m[k] = val
	}
	for k, val := range extra {
		m[k] = val
	}
	return envList(m)
}
