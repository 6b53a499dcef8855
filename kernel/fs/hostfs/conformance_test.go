package hostfs

import (
	"testing"

	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/vfs/vfstest"
)

// TestConformance runs the backend-agnostic VFS suite on a read-write
// host directory, with both resolvers, and a read-only one.
func TestConformance(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		vfstest.Run(t,
			func(t *testing.T) vfs.FileSystem {
				fs, _ := newFS(t, Options{}, quirks{noOpenat2: r.noAt2})
				return fs
			},
			func(t *testing.T) vfs.FileSystem {
				fs, _ := newFS(t, Options{ReadOnly: true}, quirks{noOpenat2: r.noAt2})
				return fs
			})
	})
}
