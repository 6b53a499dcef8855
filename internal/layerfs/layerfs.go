// Package layerfs builds the small fixed layers secexec puts under a VM's
// root (the node marker, the tool command, /usr/bin links): directories,
// files and symlinks in a memory filesystem whose times are the Unix
// epoch, so every VM, and every build, sees the same bytes.
package layerfs

import (
	"context"
	"fmt"
	"time"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// Entry is one node of a layer: a symlink when Link is set, else a
// directory when Dir is set, else a regular file holding Data.
type Entry struct {
	// Path is absolute; its parent must come earlier in the list.
	Path string
	Dir  bool
	Link string
	Data []byte
	// Mode is the permission bits; zero means 0o755 for a directory and
	// 0o644 for a file.
	Mode uint32
}

// Build returns a memory filesystem holding entries, made in order.
func Build(ctx context.Context, entries []Entry) (vfs.FileSystem, error) {
	epoch := time.Unix(0, 0).UTC()
	fs := memfs.New(memfs.Options{Now: func() time.Time { return epoch }})
	v, err := vfs.New(ctx, fs, vfs.Options{})
	if err != nil {
		return nil, err
	}
	c := &vfs.Caller{Cwd: "/"}
	for _, e := range entries {
		if err := add(ctx, v, c, e); err != nil {
			return nil, fmt.Errorf("layerfs: %s: %w", e.Path, err)
		}
	}
	return fs, nil
}

func add(ctx context.Context, v *vfs.VFS, c *vfs.Caller, e Entry) error {
	switch {
	case e.Link != "":
		return v.Symlink(ctx, c, e.Link, e.Path)
	case e.Dir:
		return v.Mkdir(ctx, c, e.Path, orDefault(e.Mode, 0o755))
	}
	f, err := v.Open(ctx, c, e.Path, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, orDefault(e.Mode, 0o644))
	if err != nil {
		return err
	}
	defer f.DecRef()
	_, err = f.Write(ctx, e.Data)
	return err
}

func orDefault(mode, def uint32) uint32 {
	if mode == 0 {
		return def
	}
	return mode
}

// Dirs returns directory entries for paths, in order.
func Dirs(paths ...string) []Entry {
	out := make([]Entry, len(paths))
	for i, p := range paths {
		out[i] = Entry{Path: p, Dir: true}
	}
	return out
}
