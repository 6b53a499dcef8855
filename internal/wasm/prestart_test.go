package wasm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/internal/wasmbin"
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

// snapshotReactor is the test reactor with its globals exported, as
// secexec's build makes its own reactors: the engine may snapshot it.
func snapshotReactor(t testing.TB) []byte {
	t.Helper()
	b, err := wasmbin.ExportGlobals(buildReactor(t, "./testdata/reactor"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Instances after the first start from the module's snapshot, and each
// is in the state initialisation left: init's results are there, and
// nothing of an earlier process's run is.
func TestReactorFromSnapshot(t *testing.T) {
	env := setup(t)
	v := newVMWith(t, env.eng, env.layer, vm.Config{})
	v.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	ctx := context.Background()
	before := env.eng.Stats()
	var first string
	for i := range 5 {
		r := v.exec(ctx, []string{"/workspace/reactor.wasm", "state"}, runOpts{})
		if r.code != 0 || !strings.HasSuffix(string(r.stdout), " runs=1\n") {
			t.Fatalf("run %d: exit %d stdout %q stderr %q", i, r.code, r.stdout, r.stderr)
		}
		if i == 0 {
			first = string(r.stdout)
		} else if string(r.stdout) != first {
			t.Fatalf("run %d printed %q, the first %q", i, r.stdout, first)
		}
		// The arguments, environment and files are still the process's.
		r = v.exec(ctx, []string{"/workspace/reactor.wasm", "show", "x"}, runOpts{env: append(append([]string(nil), defaultEnv...), "X=y")})
		if want := `args=["show" "x"] X="y" wd=/workspace hello="" err=open hello.txt: No such file or directory` + "\n"; string(r.stdout) != want {
			t.Fatalf("show: %q, want %q (stderr %q)", r.stdout, want, r.stderr)
		}
	}
	if n := env.eng.Stats().Restored - before.Restored; n < 6 {
		t.Fatalf("%d of 10 instances came from the snapshot, want most", n)
	}
}

// Memory a process used is never seen by a later one started from the
// snapshot: Go hands out fresh memory unzeroed, trusting the host's to be
// zero, so a reused memory would leak the earlier process's secrets into
// the next one's allocations.
func TestSnapshotMemoryHoldsNothingOfEarlierProcesses(t *testing.T) {
	env := setup(t)
	v := newVMWith(t, env.eng, env.layer, vm.Config{})
	v.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	ctx := context.Background()
	for i := range 3 {
		if r := v.exec(ctx, []string{"/workspace/reactor.wasm", "mark", "16"}, runOpts{}); string(r.stdout) != "marked 16\n" {
			t.Fatalf("mark: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		r := v.exec(ctx, []string{"/workspace/reactor.wasm", "scan", "16"}, runOpts{})
		if string(r.stdout) != "nonzero=0 marker=false\n" {
			t.Fatalf("round %d: a later process saw %q (stderr %q)", i, r.stdout, r.stderr)
		}
	}
}

// With snapshots off, every instance runs its own initialisation.
func TestSnapshotsOff(t *testing.T) {
	t.Setenv("SECEXEC_WASM_SNAPSHOTS", "0")
	env := setup(t)
	ctx := context.Background()
	eng := ownEngine(t)
	v := newVMWith(t, eng, eng.SoftwareLayer(env.store), vm.Config{})
	v.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	for range 3 {
		if r := v.exec(ctx, []string{"/workspace/reactor.wasm", "state"}, runOpts{}); r.code != 0 {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	}
	if n := eng.Stats().Restored; n != 0 {
		t.Fatalf("%d instances restored with snapshots off", n)
	}
}

// An instance nobody claims is discarded after a while (an idle engine
// does not hold one of every command it ever ran), and the next process
// starts from the snapshot without it.
func TestParkedInstanceExpires(t *testing.T) {
	env := setup(t)
	ctx := context.Background()
	eng := ownEngine(t)
	v := newVMWith(t, eng, eng.SoftwareLayer(env.store), vm.Config{})
	v.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	run := func() {
		t.Helper()
		if r := v.exec(ctx, []string{"/workspace/reactor.wasm", "state"}, runOpts{}); r.code != 0 || !strings.HasSuffix(string(r.stdout), "runs=1\n") {
			t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	}
	run()
	waitParked := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for eng.Stats().Parked != n {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %d parked: %+v", n, eng.Stats())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// The refill after the first run parks an instance, which expires.
	restore := wasm.SetParkedIdle(time.Hour)
	run()
	waitParked(1)
	restore()
	t.Cleanup(wasm.SetParkedIdle(50 * time.Millisecond))
	run() // claims the parked one; its refill expires after 50 ms
	waitParked(1)
	waitParked(0)
	before := eng.Stats()
	run()
	after := eng.Stats()
	if after.Restored == before.Restored {
		t.Fatalf("the run after the expiry: before %+v after %+v, want an instance restored from the snapshot", before, after)
	}
}

// A process that finds no parked instance starts from the snapshot in
// itself: it must see its own files by relative path (the snapshot's Go
// runtime knows "/" at the prestart descriptor only), also when several
// start at once.
func TestSnapshotRestoreInProcess(t *testing.T) {
	env := setup(t)
	ctx := context.Background()
	eng := ownEngine(t)
	v := newVMWith(t, eng, eng.SoftwareLayer(env.store), vm.Config{})
	v.writeFile("/workspace/reactor.wasm", snapshotReactor(t), 0o755)
	if err := v.vm.VFS.Mkdir(ctx, vfs.Root, "/workspace/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	v.writeFile("/workspace/sub/hello.txt", []byte("hi from sub\n"), 0o644)
	show := func(arg string) {
		envv := append(append([]string(nil), defaultEnv...), "X=x"+arg, "PWD=/workspace/sub")
		r := v.exec(ctx, []string{"/workspace/reactor.wasm", "show", arg}, runOpts{cwd: "/workspace/sub", env: envv})
		want := `args=["show" "` + arg + `"] X="x` + arg + `" wd=/workspace/sub hello="hi from sub" err=<nil>` + "\n"
		if r.code != 0 || string(r.stdout) != want {
			t.Errorf("%s: exit %d stdout %q stderr %q, want %q", arg, r.code, r.stdout, r.stderr, want)
		}
	}
	show("first") // takes the snapshot (prestart)
	for deadline := time.Now().Add(10 * time.Second); eng.Stats().Parked == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) { // the refill after the first run
			t.Fatalf("no instance parked: %+v", eng.Stats())
		}
	}
	wasm.StopParking(eng)
	show("claims the parked one")
	before := eng.Stats()
	done := make(chan struct{})
	for i := range 6 {
		go func() {
			defer func() { done <- struct{}{} }()
			show(strconv.Itoa(i))
		}()
	}
	for range 6 {
		<-done
	}
	after := eng.Stats()
	if after.PrestartMisses-before.PrestartMisses != 6 || after.Restored-before.Restored != 6 {
		t.Fatalf("before %+v after %+v: want 6 misses restored from the snapshot in their processes", before, after)
	}
}
