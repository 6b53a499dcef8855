package js

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/npmtest"
	"github.com/secexec/secexec/internal/vm"
)

// jest 29, unmodified and installed with npm, run as an agent runs it: a
// failing test fails the run (exit 1) on the first run, which writes
// jest's haste map cache in V8's serialization format, and on the next,
// which reads it; a passing suite exits 0; a failure's frames name the
// test file. Host node running the same jest on the same files is the
// oracle. (jest used to exit 0 here with a failing test: its test
// environment replaced the main program's `process` through a vm context,
// and the cache was JSON that the next run could not read.)
func TestJestUnmodified(t *testing.T) {
	mods := npmtest.Install(t, "testdata/npmtools", "npm-tools-")
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the jest test needs node on the host as its oracle")
	}
	const failing = "test('adds', () => { expect(1 + 1).toBe(3); });\ntest('ok', () => { expect(2).toBe(2); });\n"
	const passing = "test('ok', () => { expect(typeof setTimeout).toBe('function'); expect(process.env.HOME).toBeDefined(); });\n"
	const frame = "at Object.toBe (sum.test.js:1:36)"

	host := t.TempDir()
	if err := os.Symlink(mods, filepath.Join(host, "node_modules")); err != nil {
		t.Fatal(err)
	}
	hostRun := func(src string) (int, string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(host, "package.json"), []byte(`{"name":"jt","private":true}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(host, "sum.test.js"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(hostNode, filepath.Join(mods, "jest", "bin", "jest.js"), "--ci", "--cacheDirectory", filepath.Join(host, ".cache"))
		cmd.Dir = host
		cmd.Env = []string{"PATH=" + filepath.Dir(hostNode) + ":/usr/bin:/bin", "HOME=" + host}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		return code, stderr.String()
	}

	v := newVM(t, nil, vm.Mount{Path: "/workspace/node_modules", HostDir: mods, ReadOnly: true})
	v.writeFile("/workspace/package.json", `{"name":"jt","private":true}`)
	vmRun := func(src string) result {
		t.Helper()
		v.writeFile("/workspace/sum.test.js", src)
		return v.run("", "node", "/workspace/node_modules/jest/bin/jest.js", "--ci")
	}

	wantFail, hostErr := hostRun(failing)
	if wantFail != 1 || !strings.Contains(hostErr, frame) {
		t.Fatalf("host jest on a failing test: exit %d\n%s", wantFail, hostErr)
	}
	for _, run := range []string{"first run", "second run (cache read)"} {
		r := vmRun(failing)
		if r.code != wantFail {
			t.Fatalf("%s of a failing test: exit %d, host %d\nstdout:\n%s\nstderr:\n%s", run, r.code, wantFail, r.stdout, trunc(r.stderr))
		}
		if !strings.Contains(r.stderr, frame) || !strings.Contains(r.stderr, "Tests:       1 failed, 1 passed, 2 total") {
			t.Fatalf("%s: the failure does not name the test file's frame %q:\n%s", run, frame, trunc(r.stderr))
		}
	}
	wantPass, hostErr := hostRun(passing)
	if wantPass != 0 {
		t.Fatalf("host jest on a passing test: exit %d\n%s", wantPass, hostErr)
	}
	if r := vmRun(passing); r.code != wantPass || !strings.Contains(r.stderr, "Tests:       1 passed, 1 total") {
		t.Fatalf("passing test: exit %d, host %d\nstderr:\n%s", r.code, wantPass, trunc(r.stderr))
	}
}
