package js

import (
	"context"

	"github.com/secexec/secexec/internal/layerfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// newLayer builds the read-only layer holding /usr/bin/node: a file whose
// header is NodeMagic, which the engine's loader recognises. A symlink
// /usr/local/bin/node points at it for scripts that hard-code that path;
// /bin/node works because a VM's /bin is a symlink to /usr/bin (a layer
// must not make /bin a directory, or it would hide that symlink).
func newLayer(ctx context.Context) (vfs.FileSystem, error) {
	return layerfs.Build(ctx, append(layerfs.Dirs("/usr", "/usr/bin", "/usr/local", "/usr/local/bin"),
		layerfs.Entry{Path: NodePath, Mode: 0o755, Data: []byte(NodeMagic + "# node is built into secexec: this file only marks the command.\n")},
		layerfs.Entry{Path: "/usr/local/bin/node", Link: NodePath}))
}
