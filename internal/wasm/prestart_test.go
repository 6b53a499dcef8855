package wasm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// buildReactor compiles a Go package as a WASI reactor (-buildmode=c-shared).
func buildReactor(t testing.TB, pkg string) []byte {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "reactor.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A process that claims a parked instance, initialised before it existed,
// sees its own arguments, environment, working directory and files; so
// does one that initialises its own.
func TestPrestartedReactorIsItsProcess(t *testing.T) {
	env := setup(t)
	v := newVMWith(t, env.eng, env.layer, vm.Config{})
	v.writeFile("/workspace/reactor.wasm", buildReactor(t, "./testdata/reactor"), 0o755)
	if err := v.vm.VFS.Mkdir(context.Background(), vfs.Root, "/workspace/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	v.writeFile("/workspace/sub/hello.txt", []byte("hi from sub\nmore\n"), 0o644)
	ctx := context.Background()
	before := env.eng.Stats()
	for i, arg := range []string{"one", "two words", "three"} {
		envv := append(append([]string(nil), defaultEnv...), "X=x"+arg, "PWD=/workspace/sub")
		r := v.exec(ctx, []string{"/workspace/reactor.wasm", "show", arg}, runOpts{cwd: "/workspace/sub", env: envv})
		want := `args=["show" "` + arg + `"] X="x` + arg + `" wd=/workspace/sub hello="hi from sub" err=<nil>` + "\n"
		if r.code != 0 || string(r.stdout) != want {
			t.Fatalf("run %d: exit %d stdout %q stderr %q, want %q", i, r.code, r.stdout, r.stderr, want)
		}
	}
	after := env.eng.Stats()
	if after.Prestarted-before.Prestarted < 2 {
		t.Fatalf("prestarted claims %d of 3 runs, want at least 2 (misses %d)", after.Prestarted-before.Prestarted, after.PrestartMisses-before.PrestartMisses)
	}
}

// A claimed instance's memory is the process's: a per-process limit below
// its size refuses it, and growth past the limit fails in the guest.
func TestPrestartedReactorMemoryLimits(t *testing.T) {
	env := setup(t)
	prog := buildReactor(t, "./testdata/reactor")
	ctx := context.Background()

	// 2 MiB holds a small program, not an initialised Go runtime.
	small := newVMWith(t, env.eng, env.layer, vm.Config{Limits: kernel.Limits{MemoryBytes: 2 << 20}})
	small.writeFile("/workspace/reactor.wasm", prog, 0o755)
	if r := small.exec(ctx, []string{"true"}, runOpts{}); r.code != 0 {
		t.Fatalf("true under 2 MiB: exit %d stderr %q", r.code, r.stderr)
	}
	for range 2 {
		r := small.exec(ctx, []string{"/workspace/reactor.wasm", "show"}, runOpts{})
		if r.code == 0 || len(r.stdout) != 0 {
			t.Fatalf("2 MiB limit: exit %d stdout %q stderr %q, want refused", r.code, r.stdout, r.stderr)
		}
	}

	mid := newVMWith(t, env.eng, env.layer, vm.Config{Limits: kernel.Limits{MemoryBytes: 64 << 20}})
	mid.writeFile("/workspace/reactor.wasm", prog, 0o755)
	for range 2 {
		r := mid.exec(ctx, []string{"/workspace/reactor.wasm", "grow", "8"}, runOpts{})
		if r.code != 0 || string(r.stdout) != "grew 8\n" {
			t.Fatalf("grow 8 MiB under 64: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		r = mid.exec(ctx, []string{"/workspace/reactor.wasm", "grow", "100"}, runOpts{})
		if r.code == 0 || strings.Contains(string(r.stdout), "grew") {
			t.Fatalf("grow 100 MiB under 64: exit %d stdout %q", r.code, r.stdout)
		}
	}
}

// A claimed instance is killed like any process.
func TestPrestartedReactorKilled(t *testing.T) {
	env := setup(t)
	v := newVMWith(t, env.eng, env.layer, vm.Config{})
	v.writeFile("/workspace/reactor.wasm", buildReactor(t, "./testdata/reactor"), 0o755)
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		r := v.exec(ctx, []string{"/workspace/reactor.wasm", "sleep"}, runOpts{})
		cancel()
		if !r.timedOut || r.code == 0 {
			t.Fatalf("sleep: exit %d timedOut %v", r.code, r.timedOut)
		}
	}
}
