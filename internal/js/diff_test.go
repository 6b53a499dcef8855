package js

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDifferential runs the probe scripts of testdata/diff under the
// machine's own node and under secexec and compares their output. The
// probes avoid what legitimately differs (host paths, time, pids).
func TestDifferential(t *testing.T) {
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the differential test needs node on the host (it is also needed to install the polyfills)")
	}
	probes, err := filepath.Glob("testdata/diff/*.*js")
	if err != nil || len(probes) == 0 {
		t.Fatalf("no probes: %v", err)
	}
	v := newVM(t, nil)
	for _, probe := range probes {
		name := filepath.Base(probe)
		t.Run(strings.TrimSuffix(strings.TrimSuffix(name, ".js"), ".mjs"), func(t *testing.T) {
			src, err := os.ReadFile(probe)
			if err != nil {
				t.Fatal(err)
			}
			// Host run, in a private temporary directory.
			tmp := t.TempDir()
			hostFile := filepath.Join(tmp, name)
			if err := os.WriteFile(hostFile, src, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(hostNode, hostFile)
			cmd.Dir = tmp
			cmd.Env = []string{"PATH=" + filepath.Dir(hostNode), "TMPDIR=" + tmp, "HOME=" + tmp}
			var hostOut, hostErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &hostOut, &hostErr
			hostCode := 0
			if err := cmd.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					hostCode = ee.ExitCode()
				} else {
					t.Fatal(err)
				}
			}
			v.writeFile("/workspace/"+name, string(src))
			r := v.run("", "node", name)
			if r.code != hostCode || r.stdout != hostOut.String() {
				t.Errorf("exit %d vs host %d\n--- secexec stdout\n%s\n--- host stdout\n%s\n--- secexec stderr\n%s\n--- host stderr\n%s",
					r.code, hostCode, r.stdout, hostOut.String(), trunc(r.stderr), hostErr.String())
			}
		})
	}
}
