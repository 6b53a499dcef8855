// Package vm assembles one VM: the root filesystem layout, the mounts,
// the permission policy and the kernel. The public secexec package and the
// engine process both build VMs through it, so a VM looks the same however
// it is reached.
package vm

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/secexec/secexec/internal/toolcmd"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/clock"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/devfs"
	"github.com/secexec/secexec/kernel/fs/hostfs"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/fs/overlay"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// The guest user every VM has.
const (
	UserName = "user"
	UserUID  = 1000
	UserGID  = 1000
	UserHome = "/home/user"
	// Workspace is the default working directory.
	Workspace = "/workspace"
)

// Mount describes a filesystem to mount into the VM.
type Mount struct {
	// Path is the absolute guest path; it is created if missing.
	Path string
	// HostDir is a host directory to expose; empty mounts a fresh memory
	// filesystem that counts against the VM's storage quota.
	HostDir string
	// ReadOnly makes the mount read-only.
	ReadOnly bool
	// MaxBytes is the byte quota of a host directory mount
	// (hostfs.Options.MaxBytes); zero means none.
	MaxBytes int64
	// AllowExternalSymlinks lets guests make symlinks that leave a host
	// directory mount (hostfs.Options.AllowExternalSymlinks).
	AllowExternalSymlinks bool
}

// Config describes a VM.
type Config struct {
	// Policy is the permission policy; nil denies everything.
	Policy *policy.Policy
	// Audit receives permission decisions (denials always).
	Audit func(policy.Event)
	// Limits; zero fields take kernel.DefaultLimits.
	Limits kernel.Limits
	// Mounts are mounted in order after the standard layout.
	Mounts []Mount
	// Lowers are extra read-only layers beneath the root (software
	// packages), topmost first.
	Lowers []vfs.FileSystem
	// Hostname is the VM's host name; empty means "secexec".
	Hostname string
	// Clock is the policy of the VM's one clock (kernel/clock), which
	// node, WebAssembly, python, file times and /proc all read: Coarse
	// (the zero value: real time in 1 ms steps), Real or Frozen.
	Clock clock.Policy
	// MemoryBytes is the memory /proc/meminfo reports.
	MemoryBytes uint64
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Tools runs the embedder's host tools; nil: the VM has none. Guests
	// call them under the policy's tool rules.
	Tools kernel.ToolHost
	// Layer, if set, makes the VM's writable memory filesystems (the
	// root's upper layer, /tmp, memory mounts) instead of empty ones: a
	// restore from a snapshot, or a fork.
	Layer LayerFunc
}

// VM is an assembled VM.
type VM struct {
	Kernel  *kernel.Kernel
	VFS     *vfs.VFS
	Quota   *vfs.Quota
	Checker *policy.Checker
	cfg     Config
	upper   *memfs.FS
	lowers  []vfs.FileSystem
}

// New builds a VM: an overlay root (a writable memory layer over the base
// image and any package layers), /dev, /proc, a writable /tmp, the
// configured mounts, and a kernel whose pid 1 is ready to adopt orphans.
func New(ctx context.Context, cfg Config) (*VM, error) {
	pol := cfg.Policy
	if pol == nil {
		pol = policy.DenyAll()
	}
	checker, err := policy.Compile(pol)
	if err != nil {
		return nil, fmt.Errorf("vm: permissions: %w", err)
	}
	quiet := checker
	if cfg.Audit != nil {
		checker = checker.WithAudit(cfg.Audit, policy.AuditDenials)
	}
	limits := cfg.Limits
	def := kernel.DefaultLimits()
	if limits.FSBytes == 0 {
		limits.FSBytes = def.FSBytes
	}
	if limits.FSInodes == 0 {
		limits.FSInodes = def.FSInodes
	}
	quota := vfs.NewQuota(limits.FSBytes, limits.FSInodes)
	if cfg.Hostname == "" {
		cfg.Hostname = "secexec"
	}
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = 512 << 20
	}

	// The clock boots first: every filesystem stamps times from it.
	clk, err := clock.New(clock.Options{Policy: cfg.Clock})
	if err != nil {
		return nil, fmt.Errorf("vm: clock: %w", err)
	}

	base, err := baseImage(ctx, cfg.Hostname)
	if err != nil {
		return nil, fmt.Errorf("vm: base image: %w", err)
	}
	tools, err := toolcmd.Layer()
	if err != nil {
		return nil, fmt.Errorf("vm: tool command: %w", err)
	}
	lowers := append(append([]vfs.FileSystem(nil), cfg.Lowers...), tools, base)
	m := &VM{Quota: quota, Checker: checker, cfg: cfg, lowers: lowers}
	upper, err := m.newLayer(ctx, "/", memfs.Options{Quota: quota, Now: clk.Now})
	if err != nil {
		return nil, err
	}
	m.upper = upper
	root, err := overlay.New(upper, lowers...)
	if err != nil {
		_ = upper.Release()
		return nil, fmt.Errorf("vm: root overlay: %w", err)
	}
	v, err := vfs.New(ctx, root, vfs.Options{Authorize: guestAuthorizer(checker),
		AuthorizeMove: guestMoveAuthorizer(checker), Now: clk.Now})
	if err != nil {
		return nil, err
	}
	k, err := kernel.New(kernel.Config{
		VFS:      v,
		Limits:   limits,
		Hostname: cfg.Hostname,
		Clock:    clk,
		Logger:   cfg.Logger,
		AuthorizeExec: func(ctx context.Context, p, argv0 string) error {
			return checker.CheckExec(p)
		},
		// The network is the policy's too: connects, listens and DNS
		// beyond the VM itself are denied unless a net rule allows them.
		Net:           kernel.NetConfig{Authorizer: checker},
		Tools:         cfg.Tools,
		AuthorizeTool: checker.CheckTool,
		ToolVisible:   quiet.CheckTool,
	})
	if err != nil {
		return nil, err
	}
	// The tool command is every VM's, whatever runtime is attached.
	k.RegisterLoader(toolcmd.Loader{})
	m.Kernel, m.VFS = k, v
	if err := v.Mount(ctx, vfs.Root, "/dev", devfs.New(devfs.Options{Terminals: k.Terminals(), Now: clk.Now}), vfs.MountOptions{}); err != nil {
		return nil, fmt.Errorf("vm: mount /dev: %w", err)
	}
	if err := v.Mount(ctx, vfs.Root, "/proc", k.ProcFS(cfg.MemoryBytes), vfs.MountOptions{}); err != nil {
		return nil, fmt.Errorf("vm: mount /proc: %w", err)
	}
	tmp, err := m.newLayer(ctx, "/tmp", memfs.Options{Quota: quota, RootMode: 0o1777, Now: clk.Now})
	if err != nil {
		_ = k.Shutdown(ctx)
		return nil, err
	}
	if err := v.Mount(ctx, vfs.Root, "/tmp", tmp, vfs.MountOptions{}); err != nil {
		return nil, fmt.Errorf("vm: mount /tmp: %w", err)
	}
	if cfg.Hostname != "secexec" {
		files := baseFiles(cfg.Hostname)
		for _, p := range []string{"/etc/hostname", "/etc/hosts"} {
			if err := writeFile(ctx, v, vfs.Root, p, []byte(files[p]), 0o644); err != nil {
				return nil, fmt.Errorf("vm: %s: %w", p, err)
			}
		}
	}
	for _, mt := range cfg.Mounts {
		if err := m.Mount(ctx, mt); err != nil {
			_ = k.Shutdown(ctx)
			return nil, err
		}
	}
	return m, nil
}

type guestKey struct{}

// AsGuest returns a context whose filesystem calls on a VM are decided as
// a guest process's are: the VM's policy is checked on the path the
// kernel resolves, in the same walk that then performs the operation, so
// nothing can change between the check and the use. The embedder's file
// API acting for a guest (an agent's file tools) needs it; pair it with
// the guest's credentials in the vfs.Caller, or file modes still let root
// through.
func AsGuest(ctx context.Context) context.Context {
	return context.WithValue(ctx, guestKey{}, true)
}

// isGuest reports whether a filesystem call is a guest's: it comes from a
// guest process, or from the embedder acting as the guest (AsGuest).
func isGuest(ctx context.Context) bool {
	if _, ok := kernel.ProcessFromContext(ctx); ok {
		return true
	}
	guest, _ := ctx.Value(guestKey{}).(bool)
	return guest
}

// guestAuthorizer checks guest operations against the policy. The
// embedder's own calls (its filesystem API, unless AsGuest) are trusted:
// the policy governs guests, not the host that configured it.
func guestAuthorizer(c *policy.Checker) vfs.Authorizer {
	return func(ctx context.Context, op vfs.Op, p string) error {
		if !isGuest(ctx) {
			return nil
		}
		return c.CheckFS(policy.FSOp(op), p)
	}
}

// guestMoveAuthorizer refuses a guest's link or rename that would give an
// object a name where the policy decides differently (see
// policy.Checker.CheckFSRelocate). The embedder's own calls are trusted.
func guestMoveAuthorizer(c *policy.Checker) vfs.MoveAuthorizer {
	return func(ctx context.Context, op vfs.Op, from, to string, tree bool) error {
		if !isGuest(ctx) {
			return nil
		}
		return c.CheckFSRelocate(policy.FSOp(op), from, to, tree)
	}
}

// Mount adds a mount to a running VM, creating the mount point.
func (m *VM) Mount(ctx context.Context, mt Mount) error {
	if !path.IsAbs(mt.Path) || strings.IndexByte(mt.Path, 0) >= 0 {
		return fmt.Errorf("vm: mount point %q: %w", mt.Path, errno.EINVAL)
	}
	if mt.HostDir == "" && (mt.MaxBytes != 0 || mt.AllowExternalSymlinks) {
		// A memory mount is bounded by the VM's storage quota and holds
		// nothing host tools follow: these options would mean nothing.
		return fmt.Errorf("vm: mount %s: quota and external symlinks apply to host directories only: %w", mt.Path, errno.EINVAL)
	}
	var fs vfs.FileSystem
	if mt.HostDir != "" {
		h, err := hostfs.New(mt.HostDir, hostfs.Options{ReadOnly: mt.ReadOnly, UID: UserUID, GID: UserGID,
			MaxBytes: mt.MaxBytes, AllowExternalSymlinks: mt.AllowExternalSymlinks, Times: m.Kernel.Clock().Stamp})
		if err != nil {
			return fmt.Errorf("vm: mount %s: %w", mt.Path, err)
		}
		fs = h
	} else {
		opts := memfs.Options{Quota: m.Quota, RootUID: UserUID, RootGID: UserGID, ReadOnly: mt.ReadOnly, Now: m.Kernel.Clock().Now}
		if mt.ReadOnly {
			fs = memfs.New(opts)
		} else {
			mfs, err := m.newLayer(ctx, path.Clean(mt.Path), opts)
			if err != nil {
				return err
			}
			fs = mfs
		}
	}
	if err := mkdirAll(ctx, m.VFS, vfs.Root, mt.Path, 0o755); err != nil {
		_ = fs.Release()
		return fmt.Errorf("vm: mount point %s: %w", mt.Path, err)
	}
	if err := m.VFS.Mount(ctx, vfs.Root, mt.Path, fs, vfs.MountOptions{ReadOnly: mt.ReadOnly}); err != nil {
		_ = fs.Release()
		return fmt.Errorf("vm: mount %s: %w", mt.Path, err)
	}
	return nil
}

// Close kills every process and releases the VM.
func (m *VM) Close(ctx context.Context) error {
	err := m.Kernel.Shutdown(ctx)
	for _, mt := range m.VFS.Mounts() {
		if mt.Path != "/" {
			_ = m.VFS.Unmount(ctx, vfs.Root, mt.Path)
		}
	}
	return err
}

// mkdirAll creates dir and its missing parents.
func mkdirAll(ctx context.Context, v *vfs.VFS, c *vfs.Caller, dir string, mode uint32) error {
	st, err := v.Stat(ctx, c, dir)
	if err == nil {
		if st.Type() != vfs.TypeDir {
			return errno.Path("mkdir", dir, errno.ENOTDIR)
		}
		return nil
	}
	if errno.Of(err) != errno.ENOENT {
		return err
	}
	if parent := path.Dir(dir); parent != dir {
		if err := mkdirAll(ctx, v, c, parent, mode); err != nil {
			return err
		}
	}
	if err := v.Mkdir(ctx, c, dir, mode); err != nil && errno.Of(err) != errno.EEXIST {
		return err
	}
	return nil
}
