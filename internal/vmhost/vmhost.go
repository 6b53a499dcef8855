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
	"path"
	"sort"
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

// Host is one hosted VM. Its methods are safe for concurrent use. File
// operations act as root inside the VM (the host is trusted; permission
// rules govern guests), and what they create belongs to the guest user.
type Host struct {
	vm     *vm.VM
	caller *vfs.Caller // the host acting as root, from the VM's cwd
	cwd    string
	log    *slog.Logger

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
	h := &Host{vm: m, cwd: cwd, log: log, caller: &vfs.Caller{Cwd: cwd, Umask: 0o022}, done: make(chan struct{})}
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

// ReadFile returns the contents of a file, failing with *TooLargeError
// past limit bytes.
func (h *Host) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	f, err := h.vm.VFS.Open(ctx, h.caller, name, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return nil, errno.Path("read", name, err)
	}
	if st.Type() == vfs.TypeDir {
		return nil, errno.Path("read", name, errno.EISDIR)
	}
	if st.Size > limit {
		return nil, &TooLargeError{What: "file " + name, Size: st.Size, Limit: limit}
	}
	buf := make([]byte, 0, max(st.Size, 512))
	for {
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{What: "file " + name, Size: int64(len(buf)), Limit: limit}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(ctx, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return nil, errno.Path("read", name, err)
		}
		if n == 0 {
			return buf, nil
		}
	}
}

// MaxChunk bounds one ReadAt or WriteAt: the unit in which files are
// streamed, so that neither side ever holds more than this of a file.
const MaxChunk = 1 << 20

// ReadAt reads up to n bytes (at most MaxChunk) of the regular file name
// at offset off; fewer bytes (none at the end) mean the end of the file.
// Anything but a regular file (a device such as /dev/zero, a FIFO, a
// directory) is refused with EINVAL (EISDIR for a directory): a stream
// that never ends must not be read by the host.
func (h *Host) ReadAt(ctx context.Context, name string, off int64, n int) ([]byte, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	if off < 0 || n < 0 {
		return nil, errno.Path("read", name, errno.EINVAL)
	}
	n = min(n, MaxChunk)
	f, err := h.vm.VFS.Open(ctx, h.caller, name, vfs.O_RDONLY|vfs.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return nil, errno.Path("read", name, err)
	}
	switch st.Type() {
	case vfs.TypeRegular:
	case vfs.TypeDir:
		return nil, errno.Path("read", name, errno.EISDIR)
	default:
		return nil, errno.Path("read", name, errno.EINVAL)
	}
	buf := make([]byte, n)
	got := 0
	for got < n {
		m, err := f.Pread(ctx, buf[got:], off+int64(got))
		got += m
		if err != nil {
			return nil, errno.Path("read", name, err)
		}
		if m == 0 {
			break
		}
	}
	return buf[:got], nil
}

// WriteAt writes data (at most MaxChunk bytes) into the existing regular
// file name at offset off, without truncating it: with WriteFile of no
// data first, a file is written in bounded pieces.
func (h *Host) WriteAt(ctx context.Context, name string, off int64, data []byte) error {
	if err := h.check(); err != nil {
		return err
	}
	if off < 0 {
		return errno.Path("write", name, errno.EINVAL)
	}
	if len(data) > MaxChunk {
		return &TooLargeError{What: "chunk", Size: int64(len(data)), Limit: MaxChunk}
	}
	f, err := h.vm.VFS.Open(ctx, h.caller, name, vfs.O_WRONLY|vfs.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return errno.Path("write", name, err)
	}
	if st.Type() != vfs.TypeRegular {
		return errno.Path("write", name, errno.EINVAL)
	}
	for len(data) > 0 {
		n, err := f.Pwrite(ctx, data, off)
		if err != nil {
			return errno.Path("write", name, err)
		}
		if n == 0 {
			return errno.Path("write", name, errno.EIO)
		}
		data, off = data[n:], off+int64(n)
	}
	return nil
}

// own gives a file the API just created to the guest user.
func (h *Host) own(ctx context.Context, name string) error {
	return h.vm.VFS.SetAttr(ctx, h.caller, name, false, vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID, UID: vm.UserUID, GID: vm.UserGID})
}

// WriteFile writes data to a file, creating it with perm (before umask)
// or truncating it.
func (h *Host) WriteFile(ctx context.Context, name string, data []byte, perm uint32) error {
	if err := h.check(); err != nil {
		return err
	}
	_, statErr := h.vm.VFS.Lstat(ctx, h.caller, name)
	f, err := h.vm.VFS.Open(ctx, h.caller, name, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, perm)
	if err != nil {
		return err
	}
	defer f.DecRef()
	if errno.Of(statErr) == errno.ENOENT {
		if err := h.own(ctx, name); err != nil {
			return err
		}
	}
	for len(data) > 0 {
		n, err := f.Write(ctx, data)
		if err != nil {
			return errno.Path("write", name, err)
		}
		data = data[n:]
	}
	return nil
}

// Mkdir creates one directory.
func (h *Host) Mkdir(ctx context.Context, name string, perm uint32) error {
	if err := h.check(); err != nil {
		return err
	}
	if err := h.vm.VFS.Mkdir(ctx, h.caller, name, perm); err != nil {
		return err
	}
	return h.own(ctx, name)
}

// MkdirAll creates a directory and any missing parents.
func (h *Host) MkdirAll(ctx context.Context, name string, perm uint32) error {
	if err := h.check(); err != nil {
		return err
	}
	if !path.IsAbs(name) {
		name = path.Join(h.cwd, name)
	}
	name = path.Clean(name)
	st, err := h.vm.VFS.Stat(ctx, h.caller, name)
	if err == nil {
		if st.Type() != vfs.TypeDir {
			return errno.Path("mkdir", name, errno.ENOTDIR)
		}
		return nil
	}
	if errno.Of(err) != errno.ENOENT {
		return err
	}
	if parent := path.Dir(name); parent != name {
		if err := h.MkdirAll(ctx, parent, perm); err != nil {
			return err
		}
	}
	if err := h.vm.VFS.Mkdir(ctx, h.caller, name, perm); err != nil {
		if errno.Of(err) == errno.EEXIST {
			return nil
		}
		return err
	}
	return h.own(ctx, name)
}

// DirEntry is one entry of ReadDir.
type DirEntry struct {
	Name string
	Type vfs.FileType
}

// ReadDir returns the entries of a directory sorted by name, without "."
// and "..", and the directory's resolved path (for lstat of an entry).
func (h *Host) ReadDir(ctx context.Context, name string) (string, []DirEntry, error) {
	if err := h.check(); err != nil {
		return "", nil, err
	}
	f, err := h.vm.VFS.Open(ctx, h.caller, name, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return "", nil, err
	}
	defer f.DecRef()
	dir := f.Path()
	var out []DirEntry
	for {
		ents, err := f.ReadDir(ctx, 256)
		if err != nil {
			return "", nil, errno.Path("readdir", name, err)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			out = append(out, DirEntry{Name: e.Name, Type: e.Type})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return dir, out, nil
}

// Stat returns the attributes of name, following a final symlink if
// follow.
func (h *Host) Stat(ctx context.Context, name string, follow bool) (vfs.Stat, error) {
	if err := h.check(); err != nil {
		return vfs.Stat{}, err
	}
	if follow {
		return h.vm.VFS.Stat(ctx, h.caller, name)
	}
	return h.vm.VFS.Lstat(ctx, h.caller, name)
}

// Remove removes a file or an empty directory; with all, name and
// everything beneath it, a missing name not being an error.
func (h *Host) Remove(ctx context.Context, name string, all bool) error {
	if err := h.check(); err != nil {
		return err
	}
	st, err := h.vm.VFS.Lstat(ctx, h.caller, name)
	if err != nil {
		if all && errno.Of(err) == errno.ENOENT {
			return nil
		}
		return err
	}
	if st.Type() != vfs.TypeDir {
		return h.vm.VFS.Unlink(ctx, h.caller, name)
	}
	if all {
		_, ents, err := h.ReadDir(ctx, name)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := h.Remove(ctx, path.Join(name, e.Name), true); err != nil {
				return err
			}
		}
	}
	return h.vm.VFS.Rmdir(ctx, h.caller, name)
}

// Rename renames oldname to newname, replacing newname.
func (h *Host) Rename(ctx context.Context, oldname, newname string) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.vm.VFS.Rename(ctx, h.caller, oldname, newname)
}

// Symlink creates link as a symbolic link to target.
func (h *Host) Symlink(ctx context.Context, target, link string) error {
	if err := h.check(); err != nil {
		return err
	}
	if err := h.vm.VFS.Symlink(ctx, h.caller, target, link); err != nil {
		return err
	}
	return h.own(ctx, link)
}

// Readlink returns the target of a symbolic link.
func (h *Host) Readlink(ctx context.Context, name string) (string, error) {
	if err := h.check(); err != nil {
		return "", err
	}
	return h.vm.VFS.Readlink(ctx, h.caller, name)
}

// Chmod sets the mode bits (permissions, setuid, setgid, sticky) of name.
func (h *Host) Chmod(ctx context.Context, name string, mode uint32) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.vm.VFS.SetAttr(ctx, h.caller, name, true, vfs.SetAttr{Mask: vfs.SetMode, Mode: mode})
}

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
