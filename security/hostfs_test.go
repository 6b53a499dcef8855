package security_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec"
)

// A host process swaps a mounted directory with a symlink to a directory
// outside the mount (and with one to the host's /) while a guest reads,
// lists, writes and renames through it: the guest never sees the outside
// secret and never creates a file outside the mount.
func TestHostMountSwapRace(t *testing.T) {
	root := t.TempDir()
	mnt, outside := filepath.Join(root, "mnt"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(mnt, "dir"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(mnt, "dir", "f"), []byte("inside"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "f"), []byte("OUTSIDE-SECRET"), 0o644))
	must(os.Symlink(outside, filepath.Join(mnt, "abs")))
	must(os.Symlink("../outside", filepath.Join(mnt, "rel")))
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Mounts: []secexec.Mount{{Path: "/mnt/h", HostDir: mnt}}})

	stop := make(chan struct{})
	done := make(chan struct{})
	var swaps atomic.Int64
	go func() {
		defer close(done)
		pairs := [][2]string{{"dir", "abs"}, {"dir", "rel"}}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := pairs[i%2]
			if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(mnt, p[0]), unix.AT_FDCWD, filepath.Join(mnt, p[1]), unix.RENAME_EXCHANGE); err == nil {
				swaps.Add(1)
			}
		}
	}()
	r := node(t, vm, `
const fs = require('fs'); let seen = 0, errs = 0, leaked = 0;
for (let i = 0; i < 3000; i++) {
  for (const f of [() => fs.readFileSync('/mnt/h/dir/f', 'utf8'), () => fs.readdirSync('/mnt/h/dir').join(','),
    () => { fs.writeFileSync('/mnt/h/dir/w' + (i % 7), 'guest'); return '' }, () => { fs.renameSync('/mnt/h/dir/w' + (i % 7), '/mnt/h/dir/v'); return '' },
    () => fs.readFileSync('/mnt/h/dir/../dir/f', 'utf8'), () => fs.realpathSync('/mnt/h/dir/f')]) {
    try { const v = f(); seen++; if (/OUTSIDE|outside/.test(v)) leaked++ } catch (e) { if (!e.code) throw e; errs++ }
  }
}
console.log('leaked', leaked, seen > 0);`)
	close(stop)
	<-done
	expect(t, r, 0, "leaked 0 true")
	if n := swaps.Load(); n < 100 {
		t.Errorf("only %d swaps: the race was not exercised", n)
	}
	ents, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "f" {
		t.Errorf("the guest created files outside the mount: %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "OUTSIDE-SECRET" {
		t.Errorf("outside file changed: %q", b)
	}
	usable(t, vm)
}
