package vmhost

import (
	"context"
	"fmt"
	"path"

	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
)

// Snapshot saves the VM's writable memory layers to store, with meta (the
// embedder's description of the VM) in the manifest.
func (h *Host) Snapshot(ctx context.Context, store snapshot.Store, meta []byte) (*snapshot.Manifest, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	base, err := h.vm.Base(ctx)
	if err != nil {
		return nil, err
	}
	var srcs []snapshot.Source
	for _, l := range h.vm.Layers() {
		srcs = append(srcs, snapshot.Source{Mount: l.Mount, FS: l.FS})
	}
	return snapshot.Capture(ctx, store, base, meta, srcs)
}

// MemoryMounts returns the paths of the VM's writable memory mounts other
// than the root and /tmp: what a snapshot or fork must mount again.
func (h *Host) MemoryMounts() []string {
	var out []string
	for _, l := range h.vm.Layers() {
		if l.Mount != "/" && l.Mount != "/tmp" {
			out = append(out, l.Mount)
		}
	}
	return out
}

// withMemoryMounts returns mounts with a memory mount added for each of
// paths that no mount of mounts is at.
func withMemoryMounts(mounts []vm.Mount, paths []string) []vm.Mount {
	out := append([]vm.Mount(nil), mounts...)
next:
	for _, p := range paths {
		for _, m := range out {
			if path.Clean(m.Path) == p {
				continue next
			}
		}
		out = append(out, vm.Mount{Path: p})
	}
	return out
}

// ErrBaseMismatch is returned when a snapshot was taken over read-only
// layers (userland, software packages) other than the ones this host has.
var ErrBaseMismatch = fmt.Errorf("secexec: the snapshot's userland layers are not available here: %w", errno.ENOENT)

// restoreLayers fills each memory layer of a new VM from m.
func restoreLayers(store snapshot.Store, m *snapshot.Manifest) vm.LayerFunc {
	return func(ctx context.Context, mount string, opts memfs.Options) (*memfs.FS, error) {
		l := m.Layer(mount)
		if l == nil {
			return nil, nil
		}
		fs := memfs.New(opts)
		if err := snapshot.Restore(ctx, store, l, fs); err != nil {
			_ = fs.Release()
			return nil, err
		}
		return fs, nil
	}
}

// cloneLayers makes each memory layer of a new VM a copy-on-write clone
// of the same layer of parent.
func cloneLayers(parent *vm.VM) vm.LayerFunc {
	layers := parent.Layers()
	return func(ctx context.Context, mount string, opts memfs.Options) (*memfs.FS, error) {
		for _, l := range layers {
			if l.Mount == mount {
				return l.FS.Clone(ctx, opts)
			}
		}
		return nil, nil
	}
}

// SnapshotTo saves the VM to the store at loc (a directory or an s3://
// URL, see snapshot.Open) and returns the snapshot's summary: the same
// call the engine protocol makes.
func (h *Host) SnapshotTo(ctx context.Context, loc string, creds snapshot.Credentials, meta []byte) (snapshot.Summary, error) {
	st, err := snapshot.Open(loc, creds)
	if err != nil {
		return snapshot.Summary{}, err
	}
	m, err := h.Snapshot(ctx, st, meta)
	if err != nil {
		return snapshot.Summary{}, err
	}
	return m.Summary(), nil
}
