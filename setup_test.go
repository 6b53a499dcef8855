package secexec_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec"
)

// freshCaches points this process (and the engines it starts) at new,
// empty cache directories, as on a machine that never ran secexec, and
// returns them.
func freshCaches(t *testing.T) (software, cache string) {
	t.Helper()
	software, cache = t.TempDir(), t.TempDir()
	t.Setenv("SECEXEC_SOFTWARE_DIR", software)
	t.Setenv("SECEXEC_CACHE_DIR", cache)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	secexec.ResetSetUpForTest()
	t.Cleanup(secexec.ResetSetUpForTest)
	return software, cache
}

// withoutNPM runs f with a PATH on which there is no npm.
func withoutNPM(t *testing.T, f func()) {
	t.Helper()
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	defer os.Setenv("PATH", path)
	secexec.ResetSetUpForTest()
	f()
}

// cacheEntries lists the files of dirs other than lock files (which say
// nothing about what is installed).
func cacheEntries(t *testing.T, dirs ...string) []string {
	t.Helper()
	var files []string
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && !strings.HasSuffix(p, ".lock") {
				files = append(files, p)
			}
			return nil
		})
	}
	return files
}

// ownEngineVM creates a VM in an engine process of its own, as a program
// using the SDK would (set-up runs here, the VM in the engine).
func ownEngineVM(ctx context.Context) (*secexec.VM, error) {
	return secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll(), Engine: secexec.EnginePerVM})
}

// wantNPMMissing checks that err is the typed set-up error for a missing
// npm, at step, on one line that says how to fix it.
func wantNPMMissing(t *testing.T, err error, step string) {
	t.Helper()
	var se *secexec.SetUpError
	if !errors.As(err, &se) || !errors.Is(err, secexec.ErrNPMNotFound) {
		t.Fatalf("NewVM without npm: %v (%T), want a SetUpError matching ErrNPMNotFound", err, err)
	}
	if se.Step != step {
		t.Errorf("failed step %q, want %q", se.Step, step)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "install npm") {
		t.Errorf("message %q: want one line that says to install npm", msg)
	}
}

// execWorks checks that a fresh VM runs a shell command and node.
func execWorks(t *testing.T, ctx context.Context) {
	t.Helper()
	vm, err := ownEngineVM(ctx)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	defer vm.Close()
	res, err := vm.Exec(ctx, "echo ok && node -p '6*7'", nil)
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != "ok\n42\n" {
		t.Fatalf("exec = %+v, %v; want ok and 42", res, err)
	}
}

// pythonUsesBytecode checks that python3 in a fresh VM imports the
// standard library from the bytecode set-up built.
func pythonUsesBytecode(t *testing.T, ctx context.Context) {
	t.Helper()
	vm, err := ownEngineVM(ctx)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	defer vm.Close()
	res, err := vm.Exec(ctx, `python3 -c 'import json; print(json.__spec__.origin)'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || string(res.Stdout) != "/opt/secexec/python-stdlib/json/__init__.pyc\n" {
		t.Fatalf("exec: exit %d, stdout %q, stderr %q; want json from the bytecode directory", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// A first run on a machine without npm fails with a typed set-up error
// and leaves the caches empty; with npm it sets everything up in the
// client and the engine (which may not run programs) finds it. Damaged
// cache entries are repaired, and what can be rebuilt without npm is.
func TestSetUpOnEmptyCache(t *testing.T) {
	ctx := context.Background()
	software, cache := freshCaches(t)

	withoutNPM(t, func() {
		_, err := ownEngineVM(ctx)
		wantNPMMissing(t, err, "userland packages")
	})
	if left := cacheEntries(t, software, cache); len(left) > 0 {
		t.Fatalf("a failed set-up left files in the caches: %q", left)
	}

	execWorks(t, ctx) // sets up with npm
	bundles, _ := filepath.Glob(filepath.Join(cache, "js", "bundle-*.js"))
	polyfills, _ := filepath.Glob(filepath.Join(cache, "js", "polyfills-*"))
	coreutils, _ := filepath.Glob(filepath.Join(software, "packages", "coreutils@*.aospkg"))
	if len(bundles) != 1 || len(polyfills) != 1 || len(coreutils) != 1 {
		t.Fatalf("after set-up: bundles %q, polyfills %q, coreutils %q", bundles, polyfills, coreutils)
	}

	t.Run("python3 bytecode is built, and rebuilt when damaged", func(t *testing.T) {
		sets, _ := filepath.Glob(filepath.Join(cache, "python", "bytecode-*"))
		if len(sets) != 1 {
			t.Fatalf("after set-up: python bytecode sets %q, want one", sets)
		}
		pythonUsesBytecode(t, ctx)
		if err := os.WriteFile(sets[0], []byte("/etc/passwd.pyc\x001\x00x"), 0o644); err != nil {
			t.Fatal(err)
		}
		secexec.ResetSetUpForTest()
		withoutNPM(t, func() { pythonUsesBytecode(t, ctx) })
	})

	t.Run("damaged bootstrap is rebuilt without npm", func(t *testing.T) {
		if err := os.WriteFile(bundles[0], []byte("// secexec-bootstrap sha256=00\nthrow 1"), 0o644); err != nil {
			t.Fatal(err)
		}
		withoutNPM(t, func() { execWorks(t, ctx) })
	})

	t.Run("damaged package needs npm, then is fetched again", func(t *testing.T) {
		fi, err := os.Stat(coreutils[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(coreutils[0], fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		withoutNPM(t, func() {
			_, err := ownEngineVM(ctx)
			wantNPMMissing(t, err, "userland packages")
		})
		secexec.ResetSetUpForTest()
		execWorks(t, ctx)
	})

	t.Run("missing polyfills need npm", func(t *testing.T) {
		for _, p := range append(bundles, polyfills...) {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
		}
		withoutNPM(t, func() {
			_, err := ownEngineVM(ctx)
			wantNPMMissing(t, err, "node polyfills")
		})
		if left, _ := filepath.Glob(filepath.Join(cache, "js", "*polyfills*")); len(left) > 1 || len(left) == 1 && !strings.HasSuffix(left[0], ".lock") {
			t.Fatalf("a failed install left %q", left)
		}
		secexec.ResetSetUpForTest()
		execWorks(t, ctx)
	})
}
