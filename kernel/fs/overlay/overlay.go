// Package overlay implements a VM's root filesystem: one writable upper
// layer (normally a memfs charged to the VM's quota) stacked over one or
// more read-only lower layers (package trees, a base image), merged into
// one tree the way Linux's overlayfs merges them.
//
// # Merging
//
// A name is looked up in the upper layer first, then in each lower layer in
// priority order. The first layer that has it decides what it is; a
// directory found there is merged with same-named directories in the layers
// beneath, until a layer holds a non-directory by that name, a whiteout for
// it, or the directory is opaque. Markers use the AUFS naming convention so
// that any vfs.FileSystem can be a layer, with no extended attributes
// needed:
//
//   - a whiteout for name is an empty regular file ".wh.name" in the same
//     directory; it hides name in every layer beneath it;
//   - an opaque directory contains ".wh..wh..opq"; it hides every directory
//     of the same name beneath it.
//
// Every layer is read with the same rules, so lower layers built from image
// layers may carry their own whiteouts. A name is at most vfs.NameMax bytes
// but ".wh."+name may not be; the whiteout of a name longer than
// NameMax-4 bytes is ".wh.#" followed by the hex SHA-256 of the name (plain
// AUFS cannot whiteout such names at all).
//
// Names that start with ".wh." are the overlay's own bookkeeping: they are
// never listed or found, and a guest that tries to create one (create,
// mkdir, symlink, link, or rename onto one) gets EINVAL, so a guest can
// neither forge nor reveal a whiteout. Lower layers must therefore not
// contain ordinary files whose names start with ".wh.".
//
// # Copy-up
//
// Every change to an object that lives only in a lower layer (opening it
// for writing, SetAttr, making it the source of a hard link, renaming it,
// creating or removing an entry in a lower-only directory) first copies it
// into the upper layer: parents first, each with its mode, owner and times;
// file data streamed in chunks (holes stay holes); a symlink's target. The
// copies are charged to the upper layer's quota, so ENOSPC propagates, and
// a copy-up that fails is undone completely: the upper layer is left as it
// was. Copy-up restores the times of the upper directory it created the
// copy in, so it is invisible in the merged view. Opening a lower file
// read-only never copies it up, and a read-only handle opened before a
// copy-up switches to the upper copy on its next read, so it sees writes
// made after the copy-up (Linux's overlayfs behaves the same since 4.19).
//
// Removing a name that a lower layer has leaves a whiteout; a directory
// made where a lower layer has the name is made opaque. Rmdir requires the
// directory to be empty in the merged view (ENOTEMPTY otherwise) and
// removes the whiteouts inside its upper copy first.
//
// Renaming a directory that has lower-layer content copies its whole
// subtree up (bounded by the quota, undone on failure) and then renames the
// upper copy and whites out the old name. Linux's overlayfs returns EXDEV
// here unless redirect_dir is on, leaving "mv" to fall back to copy and
// delete; that fallback is not atomic, is slower, and a guest program that
// calls rename(2) directly would see a failure no ordinary filesystem gives,
// so the overlay does the copy itself and the rename stays atomic in the
// merged view.
//
// # Inode numbers
//
// Inode numbers are the overlay's own, assigned on first sight of an object
// (keyed by layer and that layer's inode number) and stable for the life of
// the overlay: an object keeps its number across copy-up, and numbers are
// unique across layers. Hard links across a copy-up are broken, as in
// overlayfs without index=on: a lower file with several names is copied up
// once per name that is changed, each copy is a separate file, and a copy
// gets a fresh inode number (so two different files never share one; the
// remaining lower names keep the old number). A merged directory reports
// an Nlink of 2 plus its subdirectories in the merged view.
//
// # Directory cookies
//
// ReadDir lists the upper layer's entries first, then each lower layer's
// entries that no higher layer has or whites out. A cookie is the layer
// index in the top 8 bits and that layer's own cookie in the low 56 bits,
// so it stays valid while the directory changes; an entry that is copied up
// while a listing is in progress is still listed once, at its lower
// position. Layers' cookies must fit in 56 bits (EOVERFLOW otherwise).
//
// # Concurrency and bounds
//
// One filesystem-wide read-write lock serialises changes to the merged
// namespace and copy-ups (as Linux's rename lock does); lookups, reads and
// listings run concurrently under its read side, and file data is read and
// written without it. A copy-up holds the write lock while it streams data,
// which is bounded by the quota and stops when the context is cancelled.
// The overlay caches one node per merged object it has been asked about, so
// every holder of an inode sees its copy-up and renames; the cache is
// bounded by the number of objects that exist (lower layers are finite and
// the upper layer is bounded by its quota) and forgets removed names.
//
// The layers must not be changed except through the overlay while it is in
// use, and lower layers are never changed by it: they may be shared by many
// overlays. Release releases only the upper layer.
package overlay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

const (
	// whPrefix starts every whiteout and marker name.
	whPrefix = ".wh."
	// opaqueName marks a directory whose lower namesakes are hidden.
	opaqueName = ".wh..wh..opq"
	// MaxLowers is the most lower layers an overlay can have: the layer
	// index of a directory cookie has 8 bits.
	MaxLowers = 255
	// StatfsMagic is Linux's OVERLAYFS_SUPER_MAGIC, reported by Statfs.
	StatfsMagic = 0x794c7630

	cookieShift = 56
	cookieMask  = 1<<cookieShift - 1
	// copyChunk is the unit in which copy-up streams file data.
	copyChunk = 64 << 10
	// listBatch is how many entries internal full listings read per call.
	listBatch = 256
)

// objKey identifies an object of one layer: the layer index (0 is the
// upper layer, i+1 is lowers[i]) and that layer's inode number.
type objKey struct {
	layer int
	ino   uint64
}

// layerInode is an inode of one layer.
type layerInode struct {
	layer int
	ino   vfs.Inode
}

// FS is an overlay filesystem. Its methods are safe for concurrent use.
type FS struct {
	upper  vfs.FileSystem
	lowers []vfs.FileSystem

	// mu guards the shape of the merged namespace: every node's parent,
	// name, ino, upper, lowers and dead fields. Changes to the namespace
	// and copy-ups take it for writing; lookups and reads for reading.
	mu   sync.RWMutex
	root *node

	// inoMu guards the inode number tables, which readers update too.
	inoMu   sync.Mutex
	inos    map[objKey]uint64
	origins map[uint64]objKey // upper inode number → lower object it was copied from
	lastIno uint64
}

var (
	_ vfs.FileSystem = (*FS)(nil)
	_ vfs.Inode      = (*node)(nil)
	_ vfs.Typed      = (*node)(nil)
	_ vfs.Handle     = (*readHandle)(nil)
)

// New returns an overlay of upper over lowers, which are in priority order
// (the first is topmost). Each layer's root must be a directory. The
// overlay never changes a lower layer, so one lower may be shared by many
// overlays. It fails with EINVAL for a nil layer or more than MaxLowers
// lowers.
func New(upper vfs.FileSystem, lowers ...vfs.FileSystem) (*FS, error) {
	if upper == nil || len(lowers) > MaxLowers {
		return nil, errno.EINVAL
	}
	for _, l := range lowers {
		if l == nil {
			return nil, errno.EINVAL
		}
	}
	fs := &FS{
		upper:   upper,
		lowers:  append([]vfs.FileSystem(nil), lowers...),
		inos:    make(map[objKey]uint64),
		origins: make(map[uint64]objKey),
	}
	// Getting a root never blocks for the filesystems the kernel has, and
	// New has no context in its signature: a background one will do.
	ctx := context.Background()
	uroot, err := upper.Root(ctx)
	if err != nil {
		return nil, lerr(err)
	}
	ust, err := uroot.Stat(ctx)
	if err != nil {
		return nil, lerr(err)
	}
	if ust.Type() != vfs.TypeDir {
		return nil, errno.ENOTDIR
	}
	root := &node{fs: fs, typ: vfs.TypeDir, upper: uroot, subdirs: -1}
	root.copied.Store(true)
	opaque, err := isOpaque(ctx, uroot)
	if err != nil {
		return nil, err
	}
	for i, l := range lowers {
		if opaque {
			break
		}
		r, err := l.Root(ctx)
		if err != nil {
			return nil, lerr(err)
		}
		st, err := r.Stat(ctx)
		if err != nil {
			return nil, lerr(err)
		}
		if st.Type() != vfs.TypeDir {
			return nil, errno.ENOTDIR
		}
		root.lowers = append(root.lowers, layerInode{layer: i + 1, ino: r})
		if opaque, err = isOpaque(ctx, r); err != nil {
			return nil, err
		}
	}
	root.ino = fs.inoFor(objKey{0, ust.Ino})
	fs.root = root
	return fs, nil
}

// Root returns the merged root directory.
func (fs *FS) Root(context.Context) (vfs.Inode, error) { return fs.root, nil }

// Statfs reports the upper layer's capacity, which is what writes consume,
// with overlayfs's magic number.
func (fs *FS) Statfs(ctx context.Context) (vfs.Statfs, error) {
	s, err := fs.upper.Statfs(ctx)
	if err != nil {
		return vfs.Statfs{}, lerr(err)
	}
	s.Type = StatfsMagic
	s.ReadOnly = s.ReadOnly || fs.upper.ReadOnly()
	return s, nil
}

// ReadOnly reports whether the upper layer is read-only, in which case
// every change fails with EROFS.
func (fs *FS) ReadOnly() bool { return fs.upper.ReadOnly() }

// Release releases the upper layer. Lower layers are borrowed (several
// overlays may share one) and stay with their owner.
func (fs *FS) Release() error { return fs.upper.Release() }

// inoFor returns the overlay inode number of object k, assigning the next
// free one on first sight.
func (fs *FS) inoFor(k objKey) uint64 {
	fs.inoMu.Lock()
	defer fs.inoMu.Unlock()
	if n, ok := fs.inos[k]; ok {
		return n
	}
	fs.lastIno++
	fs.inos[k] = fs.lastIno
	return fs.lastIno
}

// newIno returns an inode number no object has.
func (fs *FS) newIno() uint64 {
	fs.inoMu.Lock()
	defer fs.inoMu.Unlock()
	fs.lastIno++
	return fs.lastIno
}

// adoptUpper records that upper object u is the copy of lower object
// origin and carries overlay inode number ino.
func (fs *FS) adoptUpper(u uint64, ino uint64, origin objKey) {
	fs.inoMu.Lock()
	defer fs.inoMu.Unlock()
	fs.inos[objKey{0, u}] = ino
	fs.origins[u] = origin
}

// forgetUpper drops the tables' entries of upper object u once its last
// name is gone, so create/unlink loops cannot grow them without bound.
// Nodes still open on it keep their number in the node.
func (fs *FS) forgetUpper(u uint64) {
	fs.inoMu.Lock()
	defer fs.inoMu.Unlock()
	delete(fs.inos, objKey{0, u})
	delete(fs.origins, u)
}

// originOf returns the lower object that upper object u was copied from.
func (fs *FS) originOf(u uint64) (objKey, bool) {
	fs.inoMu.Lock()
	defer fs.inoMu.Unlock()
	k, ok := fs.origins[u]
	return k, ok
}

// isHidden reports whether name is overlay bookkeeping a guest never sees.
func isHidden(name string) bool { return strings.HasPrefix(name, whPrefix) }

// whiteoutName returns the name of the whiteout that hides name.
func whiteoutName(name string) string {
	if len(whPrefix)+len(name) <= vfs.NameMax {
		return whPrefix + name
	}
	sum := sha256.Sum256([]byte(name))
	return whPrefix + "#" + hex.EncodeToString(sum[:])
}

// lerr turns an error from a layer into a bare errno, so that nothing but
// an errno (never a layer's wrapped text) crosses the overlay.
func lerr(err error) error {
	if err == nil {
		return nil
	}
	return errno.Of(err)
}

func isNotExist(err error) bool { return errno.Of(err) == errno.ENOENT }

// exists reports whether dir has an entry called name.
func exists(ctx context.Context, dir vfs.Inode, name string) (bool, error) {
	_, err := dir.Lookup(ctx, name)
	switch {
	case err == nil:
		return true, nil
	case isNotExist(err):
		return false, nil
	default:
		return false, lerr(err)
	}
}

// hasWhiteout reports whether dir whites out name.
func hasWhiteout(ctx context.Context, dir vfs.Inode, name string) (bool, error) {
	return exists(ctx, dir, whiteoutName(name))
}

// isOpaque reports whether dir hides its lower namesakes.
func isOpaque(ctx context.Context, dir vfs.Inode) (bool, error) {
	return exists(ctx, dir, opaqueName)
}

// createMarker creates the marker file name in dir. It reports whether it
// made one: an existing marker is left alone (and must not be removed when
// undoing).
func createMarker(ctx context.Context, dir vfs.Inode, name string) (bool, error) {
	// Markers are empty root-owned regular files with no permissions.
	_, err := dir.Create(ctx, name, vfs.CreateOptions{Mode: vfs.S_IFREG})
	switch {
	case err == nil:
		return true, nil
	case errno.Of(err) == errno.EEXIST:
		return false, nil
	default:
		return false, lerr(err)
	}
}
