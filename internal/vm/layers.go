package vm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// Layer is one writable memory filesystem of a VM: the root overlay's
// upper layer (Mount "/"), /tmp, or a memory mount. Together they are
// everything a guest can have written that lives in the VM.
type Layer struct {
	Mount string
	FS    *memfs.FS
}

// LayerFunc makes the memory filesystem to mount at mount, with opts
// (the VM's quota and clock): restored from a snapshot, or cloned from
// another VM. Returning nil, nil makes a fresh empty one.
type LayerFunc func(ctx context.Context, mount string, opts memfs.Options) (*memfs.FS, error)

// newLayer makes the memory filesystem of mount through cfg.Layer.
func (m *VM) newLayer(ctx context.Context, mount string, opts memfs.Options) (*memfs.FS, error) {
	if m.cfg.Layer != nil {
		fs, err := m.cfg.Layer(ctx, mount, opts)
		if err != nil {
			return nil, fmt.Errorf("vm: layer %s: %w", mount, err)
		}
		if fs != nil {
			return fs, nil
		}
	}
	return memfs.New(opts), nil
}

// Layers returns the VM's writable memory filesystems, the root's upper
// layer first, then the mounts by path. Read-only memory mounts are left
// out: nothing can ever have been written to them.
func (m *VM) Layers() []Layer {
	out := []Layer{{Mount: "/", FS: m.upper}}
	for _, mt := range m.VFS.Mounts() {
		if fs, ok := mt.FS.(*memfs.FS); ok && mt.Path != "/" && !mt.ReadOnly && !fs.ReadOnly() {
			out = append(out, Layer{Mount: mt.Path, FS: fs})
		}
	}
	sort.SliceStable(out[1:], func(i, j int) bool { return out[1+i].Mount < out[1+j].Mount })
	return out
}

// Base returns the fingerprint of the VM's read-only layers (software
// packages, the tool command, the base image): what a snapshot of its
// upper layer was taken over and must be restored over.
func (m *VM) Base(ctx context.Context) (string, error) { return Fingerprint(ctx, m.lowers) }

// fingerprints caches Fingerprint per set of layers: lower layers are
// shared by every VM of a process and never change.
var fingerprints sync.Map // string (the layers' identities) -> string

// Fingerprint is a digest of the names, types, modes, owners, sizes,
// times and symlink targets of every object of layers, in order: it
// changes when a package version, the userland or the base image does.
// It is computed once per set of layers and process.
func Fingerprint(ctx context.Context, layers []vfs.FileSystem) (string, error) {
	key := fmt.Sprintf("%p", layers)
	if len(layers) > 0 {
		key = ""
		for _, l := range layers {
			key += fmt.Sprintf("%p,", l)
		}
	}
	if fp, ok := fingerprints.Load(key); ok {
		return fp.(string), nil
	}
	h := sha256.New()
	for _, l := range layers {
		root, err := l.Root(ctx)
		if err != nil {
			return "", err
		}
		if err := digestTree(ctx, h, root, "."); err != nil {
			return "", fmt.Errorf("vm: fingerprint: %w", err)
		}
		h.Write([]byte{0})
	}
	fp := hex.EncodeToString(h.Sum(nil))
	fingerprints.Store(key, fp)
	return fp, nil
}

func digestTree(ctx context.Context, h interface{ Write([]byte) (int, error) }, n vfs.Inode, p string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := n.Stat(ctx)
	if err != nil {
		return err
	}
	var rec [40]byte
	binary.LittleEndian.PutUint32(rec[0:], st.Mode)
	binary.LittleEndian.PutUint32(rec[4:], st.UID)
	binary.LittleEndian.PutUint32(rec[8:], st.GID)
	binary.LittleEndian.PutUint64(rec[12:], uint64(st.Size))
	binary.LittleEndian.PutUint64(rec[20:], uint64(st.Mtime.UnixNano()))
	_, _ = h.Write([]byte(p))
	_, _ = h.Write(rec[:28])
	switch st.Type() {
	case vfs.TypeSymlink:
		t, err := n.Readlink(ctx)
		if err != nil {
			return err
		}
		_, _ = h.Write([]byte(t))
	case vfs.TypeDir:
		// Names in sorted order: a layer may list them in any order (a
		// map's), which must not change the fingerprint.
		var names []string
		var cookie uint64
		for {
			ents, err := n.ReadDir(ctx, cookie, 256)
			if err != nil {
				return err
			}
			if len(ents) == 0 {
				break
			}
			for _, e := range ents {
				cookie = e.Next
				if e.Name != "." && e.Name != ".." {
					names = append(names, e.Name)
				}
			}
		}
		sort.Strings(names)
		for _, name := range names {
			c, err := n.Lookup(ctx, name)
			if err != nil {
				return err
			}
			if err := digestTree(ctx, h, c, p+"/"+name); err != nil {
				return err
			}
		}
	}
	return nil
}
