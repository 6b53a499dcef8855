package hostfs

import (
	"testing"

	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/vfs/vfstest"
)

// TestConformance runs the backend-agnostic VFS suite on a read-write
// host directory, with both resolvers, and a read-only one. The suite
// makes symlinks of every kind, so the read-write mount allows external
// ones (TestSymlinkRule covers the default).
func TestConformance(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		vfstest.Run(t,
			func(t *testing.T) vfs.FileSystem {
				fs, _ := newFS(t, Options{AllowExternalSymlinks: true}, quirks{noOpenat2: r.noAt2})
				return fs
			},
			func(t *testing.T) vfs.FileSystem {
				fs, _ := newFS(t, Options{ReadOnly: true}, quirks{noOpenat2: r.noAt2})
				return fs
			})
	})
}
