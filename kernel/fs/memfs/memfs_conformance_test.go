package memfs_test

import (
	"testing"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/vfs/vfstest"
)

func TestConformance(t *testing.T) {
	vfstest.Run(t,
		func(t *testing.T) vfs.FileSystem {
			return memfs.New(memfs.Options{Quota: vfs.NewQuota(64<<20, 100000)})
		},
		func(t *testing.T) vfs.FileSystem { return memfs.New(memfs.Options{ReadOnly: true}) },
	)
}
