package js

import (
	"context"
	"time"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// newLayer builds the read-only layer holding /usr/bin/node: a file whose
// header is NodeMagic, which the engine's loader recognises. A symlink
// /usr/local/bin/node points at it for scripts that hard-code that path;
// /bin/node works because a VM's /bin is a symlink to /usr/bin (a layer
// must not make /bin a directory, or it would hide that symlink).
func newLayer(ctx context.Context) (vfs.FileSystem, error) {
	epoch := time.Unix(0, 0).UTC()
	fs := memfs.New(memfs.Options{Now: func() time.Time { return epoch }})
	v, err := vfs.New(ctx, fs, vfs.Options{})
	if err != nil {
		return nil, err
	}
	c := &vfs.Caller{Cwd: "/"}
	for _, d := range []string{"/usr", "/usr/bin", "/usr/local", "/usr/local/bin"} {
		if err := v.Mkdir(ctx, c, d, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := v.Open(ctx, c, NodePath, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o755)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(ctx, []byte(NodeMagic+"# node is built into secexec: this file only marks the command.\n"))
	f.DecRef()
	if err != nil {
		return nil, err
	}
	for _, l := range []string{"/usr/local/bin/node"} {
		if err := v.Symlink(ctx, c, NodePath, l); err != nil {
			return nil, err
		}
	}
	return fs, nil
}
