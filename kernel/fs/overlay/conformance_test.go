package overlay

import (
	"testing"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/vfs/vfstest"
)

// conformanceLower is lower-layer content the suite does not know about:
// it lives under names the suite never uses, so its checks of what they
// create are unaffected, while every lookup, listing and nlink of the root
// goes through a merged directory.
const conformanceLower spec = `
d /usr
d /usr/lib
f /usr/lib/libc.so ELF
l /usr/lib/libc.so.6 libc.so
d /opt
f /opt/hostname secexec
d /opt/empty
`

// TestConformance runs the VFS conformance suite on overlays of an empty
// memfs upper over an empty lower, and over a lower with content, plus
// the read-only variant (a read-only upper).
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lower spec
	}{
		{"empty-lower", ""},
		{"lower-with-content", conformanceLower},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newFS := func(t *testing.T) vfs.FileSystem {
				ov, err := New(memfs.New(memfs.Options{}), build(t, tc.lower), memfs.New(memfs.Options{}))
				if err != nil {
					t.Fatal(err)
				}
				return ov
			}
			newRO := func(t *testing.T) vfs.FileSystem {
				ov, err := New(memfs.New(memfs.Options{ReadOnly: true}), build(t, tc.lower))
				if err != nil {
					t.Fatal(err)
				}
				return ov
			}
			vfstest.Run(t, newFS, newRO)
		})
	}
}
