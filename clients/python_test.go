package clients_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/js/bootjs"
)

// hostPython is Debian's interpreter, which sees the httpx and
// websockets packages apt installs (a pyenv python first on PATH would
// not).
const hostPython = "/usr/bin/python3"

// copyTree copies the regular files of a client package src (not its
// testdata, caches, dependencies, build outputs or packed tarballs) to
// dst: packages are built from a copy, so that the build's droppings
// (build/, *.egg-info, dist/, *.tgz) never land in the repository.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if rel != "." && (d.Name() == "testdata" || d.Name() == "__pycache__" || d.Name() == "build" || d.Name() == "node_modules" ||
				d.Name() == "dist" || strings.HasSuffix(d.Name(), ".egg-info")) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(p, ".tgz") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// run runs a command, failing the test with its output if it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// installPythonClient builds the wheel of clients/python and installs it
// into a new venv as a user would (pip install of the wheel, offline,
// its dependencies found among the system's packages); it returns the
// venv's python.
func installPythonClient(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	src, wheels, venv := filepath.Join(tmp, "src"), filepath.Join(tmp, "wheels"), filepath.Join(tmp, "venv")
	copyTree(t, "python", src)
	env := append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1")
	run(t, src, env, hostPython, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", wheels, ".")
	whl, err := filepath.Glob(filepath.Join(wheels, "secexec_client-*-py3-none-any.whl"))
	if err != nil || len(whl) != 1 {
		t.Fatalf("the wheel: %v %v", whl, err)
	}
	run(t, tmp, env, hostPython, "-m", "venv", "--system-site-packages", venv)
	py := filepath.Join(venv, "bin", "python")
	// Without --no-deps: pip checks that httpx and websockets are there.
	run(t, tmp, env, py, "-m", "pip", "install", "--no-index", whl[0])
	return py
}

// testPython runs the Python client's suites, from a directory without
// the package's sources, with the installed wheel.
func testPython(t *testing.T, s *server) {
	py := installPythonClient(t)
	tests := t.TempDir()
	for _, f := range []string{"test_client.py", "test_sse.py"} {
		data, err := os.ReadFile(filepath.Join("python", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tests, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := run(t, tests, append(s.env(), "PYTHONDONTWRITEBYTECODE=1"), py, "-m", "unittest", "-v", "test_sse", "test_client")
	if !strings.Contains(out, "\nOK") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", out)
}

// pyright installs the pinned pyright (python/testdata/pyright) with npm
// ci into the user's cache, once per lockfile, and returns its command.
func pyright(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("python", "testdata", "pyright")
	var both []byte
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		both = append(both, data...)
	}
	sum := sha256.Sum256(both)
	cache, err := bootjs.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(cache, "pyright-"+hex.EncodeToString(sum[:12]))
	bin := filepath.Join(final, "node_modules", ".bin", "pyright")
	if _, err := os.Stat(filepath.Join(final, ".complete")); err == nil {
		return bin
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(cache, ".pyright-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	copyTree(t, dir, tmp)
	run(t, tmp, os.Environ(), "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another test process may have won the race: its copy is as good.
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, ".complete")); serr != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// The Python client is clean under pyright's strict mode (the settings
// are pyproject.toml's [tool.pyright]), resolving httpx and websockets
// as the host python sees them.
func TestPythonTypes(t *testing.T) {
	bin := pyright(t)
	src := filepath.Join(t.TempDir(), "src")
	copyTree(t, "python", src)
	out := run(t, src, os.Environ(), bin, "--pythonpath", hostPython, "--warnings")
	if !strings.Contains(out, "0 errors, 0 warnings") {
		t.Fatalf("pyright:\n%s", out)
	}
	// A typing mistake is caught: the check is not vacuous.
	bad := filepath.Join(src, "secexec_client", "_bad.py")
	if err := os.WriteFile(bad, []byte("def f(x):\n    return x.y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--pythonpath", hostPython)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "reportUnknown") && !strings.Contains(string(out), "reportMissingParameterType") {
		t.Fatalf("pyright passed an untyped function: %v\n%s", err, out)
	}
}
