package software

import (
	"bytes"
	"errors"
	"testing"

	"github.com/secexec/secexec/software/aospkg"
	"github.com/secexec/secexec/software/internal/aospkgtest"
)

// FuzzExtract feeds arbitrary bytes to the tarball reader. Tarballs are
// hash-verified before extraction, so this guards the bounds and the
// member-name checks should a pin ever name a hostile tarball.
func FuzzExtract(f *testing.F) {
	good := aospkgtest.Build(aospkg.Manifest{Name: "x", Version: "1", Commands: aospkgtest.Commands("a")},
		[]aospkgtest.File{{Path: "/bin/a", Data: aospkgtest.WasmModule("a")}})
	f.Add(makeTgz(f, member{name: "package/package.json", data: []byte("{}")}, member{name: aospkgMember, data: good}))
	f.Add(makeTgz(f, member{name: "package/../x", data: []byte("x")}))
	f.Add(makeTgz(f, member{name: aospkgMember, typeflag: '2'}))
	f.Add([]byte{0x1f, 0x8b})
	lim := limits{tarball: 1 << 20, unpacked: 4 << 20, aospkg: 1 << 20, members: 1000}
	pin := Pin{Package: "@secexec-test/fuzz", Version: "1.0.0"}
	f.Fuzz(func(t *testing.T, tgz []byte) {
		var out bytes.Buffer
		sum, err := extractAospkg(bytes.NewReader(tgz), &out, pin, lim, func(Event) {})
		if err != nil {
			if !errors.Is(err, ErrBadArchive) {
				t.Fatalf("error %v is not ErrBadArchive", err)
			}
			return
		}
		if len(sum) != 32 || int64(out.Len()) > lim.aospkg {
			t.Fatalf("sum %x, %d bytes out", sum, out.Len())
		}
	})
}
