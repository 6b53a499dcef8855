// Package vmhost is the host side of one VM: the operations the public
// API offers (files, Run, Spawn), as plain data in and out, on top of an
// assembled internal/vm VM. The in-process transport of package secexec
// and the engine process both call it, so a VM behaves the same whichever
// way it is reached.
package vmhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/clock"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// ErrClosed is returned by operations on a closed VM. Its text is the
// public API's (secexec.ErrClosed), which it is translated to.
var ErrClosed = errors.New("secexec: VM is closed")

// TooLargeError reports a payload over its limit; the public API
// translates it to secexec.TooLargeError, with the same text.
type TooLargeError struct {
	What  string
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("secexec: %s too large: %d bytes exceeds the limit of %d", e.What, e.Size, e.Limit)
}

// Runtime makes programs runnable in the VMs a process hosts: the WASM
// and JS engines, and the software layers holding their commands. One
// Runtime serves many VMs and must be safe for concurrent use.
type Runtime interface {
	// Configure adjusts a VM's configuration before it is built, e.g. to
	// add read-only layers beneath the root.
	Configure(ctx context.Context, cfg *vm.Config) error
	// Attach readies a built VM, e.g. registers loaders with its kernel.
	Attach(ctx context.Context, m *vm.VM) error
}

// Config describes a VM to host.
type Config struct {
	// Policy is the permission policy; nil denies everything.
	Policy *policy.Policy
	// Audit, if set, receives every permission denial.
	Audit func(policy.Event)
	// Limits; zero fields take kernel.DefaultLimits.
	Limits kernel.Limits
	// Mounts are mounted in order after the standard layout.
	Mounts []vm.Mount
	// Cwd is the default working directory, created if missing; empty
	// means vm.Workspace.
	Cwd string
	// Hostname is the VM's host name; empty means "secexec".
	Hostname string
	// Clock is the policy of the VM's clock (see vm.Config.Clock).
	Clock clock.Policy
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Runtime, if set, provides the program loaders.
	Runtime Runtime
	// Tools runs the embedder's host tools; nil: none.
	Tools kernel.ToolHost
	// From, if set, is a snapshot whose memory layers the VM starts with;
	// Mounts must hold a memory mount for each of its layers other than
	// the root and /tmp (MemoryMounts of the snapshotted VM).
	From *Restore
	// ForkOf, if set, is a VM whose memory layers the VM starts with,
	// shared copy-on-write.
	ForkOf *Host
}

// Restore names a snapshot to start a VM from.
type Restore struct {
	Store    snapshot.Store
	Manifest *snapshot.Manifest
}

// Host is one hosted VM. Its methods are safe for concurrent use. Its
// file operations (the embedded Files) act as root inside the VM (the
// host is trusted; permission rules govern guests), and what they create
// belongs to the guest user; Guest's act as the guest.
type Host struct {
	*Files // the host's, acting as root from the VM's cwd

	vm    *vm.VM
	guest *Files // the guest user's, under the VM's policy
	cwd   string
	log   *slog.Logger

	mu     sync.Mutex
	closed bool
	done   chan struct{}
	ctxs   contexts
}

// New builds and hosts a VM.
func New(ctx context.Context, cfg Config) (*Host, error) {
	vc := vm.Config{
		Policy:   cfg.Policy,
		Audit:    cfg.Audit,
		Limits:   cfg.Limits,
		Mounts:   cfg.Mounts,
		Hostname: cfg.Hostname,
		Clock:    cfg.Clock,
		Logger:   cfg.Logger,
		Tools:    cfg.Tools,
	}
	switch {
	case cfg.From != nil && cfg.ForkOf != nil:
		return nil, fmt.Errorf("secexec: a VM is either restored or forked: %w", errno.EINVAL)
	case cfg.From != nil:
		vc.Layer = restoreLayers(cfg.From.Store, cfg.From.Manifest)
	case cfg.ForkOf != nil:
		if err := cfg.ForkOf.check(); err != nil {
			return nil, err
		}
		vc.Layer = cloneLayers(cfg.ForkOf.vm)
		// Memory mounts the parent gained after it was made are the
		// child's too.
		vc.Mounts = withMemoryMounts(vc.Mounts, cfg.ForkOf.MemoryMounts())
	}
	if cfg.Runtime != nil {
		if err := cfg.Runtime.Configure(ctx, &vc); err != nil {
			return nil, err
		}
	}
	m, err := vm.New(ctx, vc)
	if err != nil {
		return nil, err
	}
	if cfg.From != nil {
		base, err := m.Base(ctx)
		if err == nil && base != cfg.From.Manifest.Base {
			err = ErrBaseMismatch
		}
		if err != nil {
			_ = m.Close(ctx)
			return nil, err
		}
	}
	if cfg.Runtime != nil {
		if err := cfg.Runtime.Attach(ctx, m); err != nil {
			_ = m.Close(ctx)
			return nil, err
		}
	}
	cwd := cfg.Cwd
	if cwd == "" {
		cwd = vm.Workspace
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Host{vm: m, cwd: cwd, log: log, done: make(chan struct{})}
	h.Files = &Files{h: h, caller: &vfs.Caller{Cwd: cwd, Umask: 0o022, Owner: &vfs.Owner{UID: vm.UserUID, GID: vm.UserGID}}}
	// The credentials guest programs run with (spawnProcess), and their
	// default umask.
	h.guest = &Files{h: h, caller: &vfs.Caller{UID: vm.UserUID, GID: vm.UserGID, Cwd: cwd, Umask: 0o022}, guest: true}
	if err := h.MkdirAll(ctx, cwd, 0o755); err != nil {
		_ = m.Close(ctx)
		return nil, fmt.Errorf("secexec: working directory: %w", err)
	}
	return h, nil
}

// VM returns the hosted VM.
func (h *Host) VM() *vm.VM { return h.vm }

// Dial connects to the guest's TCP listener on port, as a client on the
// VM's own loopback would; the embedder needs no network permission.
func (h *Host) Dial(ctx context.Context, port uint16) (net.Conn, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return h.vm.Kernel.DialGuest(ctx, port)
}

// Cwd returns the default working directory.
func (h *Host) Cwd() string { return h.cwd }

func (h *Host) check() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	return nil
}

// Close kills every process of the VM and releases it. Every operation
// after it fails with ErrClosed; Close itself may be called again.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.done)
	h.mu.Unlock()
	h.closeContexts()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return h.vm.Close(ctx)
}

// Done is closed when the VM is closed.
func (h *Host) Done() <-chan struct{} { return h.done }

// Err returns nil while the VM is open and ErrClosed after Close.
func (h *Host) Err() error { return h.check() }

// Mount mounts a host directory or a fresh memory filesystem.
func (h *Host) Mount(ctx context.Context, m vm.Mount) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.vm.Mount(ctx, m)
}

// Unmount removes the mount at guestPath.
func (h *Host) Unmount(ctx context.Context, guestPath string) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.vm.VFS.Unmount(ctx, h.caller, guestPath)
}
