//go:build !wasip1

package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// These tests run make.wasm built from this source (what users run) in
// a real VM, where recipes run in the VM's shell through host_process,
// and GNU make on the host on an identical copy of each case, then
// compare standard output, standard error, the exit status and the
// files left behind.

func TestMain(m *testing.M) { vmtest.Main(m) }

// vmRun runs script in the VM in dir (a guest path).
func vmRun(t *testing.T, h *vmhost.Host, dir, script string) result {
	t.Helper()
	r := vmtest.Run(t, h, "", []string{"TZ=UTC", "LC_ALL=C.UTF-8"}, "sh", "-c", "cd "+dir+" && "+script)
	return result{normalize(r.Stdout, dir), normalize(r.Stderr, dir), r.Exit.Code}
}

// TestDiffVM runs the differential table with make in a VM.
func TestDiffVM(t *testing.T) {
	checkHostMake(t)
	want, got := t.TempDir(), t.TempDir()
	h := vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: got}}})
	hostBin := binWith(t, hostMake)
	for i, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("c%d", i)
			wd, gd := filepath.Join(want, name), filepath.Join(got, name)
			writeFixture(t, wd, c.files)
			writeFixture(t, gd, c.files)
			w := shRun(t, wd, hostBin, c.script())
			g := vmRun(t, h, "/mnt/host/"+name, c.script())
			if c.stderrLines > 0 {
				g.stderr, w.stderr = firstLines(g.stderr, c.stderrLines), firstLines(w.stderr, c.stderrLines)
			}
			compare(t, g, w, snapshot(t, gd), snapshot(t, wd))
		})
	}
}
