package secexec_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/kernel/errno"
)

var engineModes = []secexec.EngineMode{secexec.EngineInProcess, secexec.EngineShared, secexec.EnginePerVM}

func readString(t *testing.T, vm *secexec.VM, name string) string {
	t.Helper()
	b, err := vm.FS().ReadFile(context.Background(), name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

// TestSnapshotRestore saves a VM whose guest wrote files (in the root, in
// /tmp, in a memory mount, over a userland file, and removed one) and
// restores it, in every engine mode: the files, env, cwd and permissions
// come back; the userland is not stored.
func TestSnapshotRestore(t *testing.T) {
	ctx := context.Background()
	for _, mode := range engineModes {
		t.Run(mode.String(), func(t *testing.T) {
			store, err := secexec.OpenSnapshotStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			vm := newVM(t, secexec.Options{Engine: mode, Permissions: secexec.AllowAll(),
				Env: map[string]string{"GREETING": "hi"}, Cwd: "/work",
				Mounts: []secexec.Mount{{Path: "/data"}}})
			r, err := vm.Exec(ctx, `printf 'one\n' > a.txt && mkdir -p sub/deep && printf two > sub/deep/b && ln -s a.txt ln && `+
				`printf tmp > /tmp/t && printf data > /data/d && chmod 600 a.txt`, nil)
			if err != nil || r.ExitCode != 0 {
				t.Fatalf("setup: %v %s", err, r.Stderr)
			}
			// Over the userland's files: a changed one and a removed one.
			if err := vm.FS().WriteFile(ctx, "/etc/os-release", []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := vm.FS().Remove(ctx, "/etc/shells"); err != nil {
				t.Fatal(err)
			}
			snap, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{Labels: map[string]string{"k": "v"}})
			if err != nil {
				t.Fatal(err)
			}
			if snap.Files < 5 || snap.Bytes > 1000 {
				t.Fatalf("snapshot stored %d files, %d bytes: the userland was saved?", snap.Files, snap.Bytes)
			}
			got, err := store.Get(ctx, snap.ID)
			if err != nil || got.Labels["k"] != "v" {
				t.Fatalf("Get: %+v %v", got, err)
			}
			// Changes after the snapshot are not in it.
			if err := vm.FS().WriteFile(ctx, "/work/a.txt", []byte("later"), 0o644); err != nil {
				t.Fatal(err)
			}

			re := newVM(t, secexec.Options{Engine: mode, From: got})
			r, err = re.Exec(ctx, `cat a.txt sub/deep/b ln /tmp/t /data/d /etc/os-release; echo " $GREETING $PWD"; test -e /etc/shells || echo noshells; stat -c %a a.txt; ls /bin/sh >/dev/null && echo userland`, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "one\ntwoone\ntmpdatamine hi /work\nnoshells\n600\nuserland\n"
			if string(r.Stdout) != want || r.ExitCode != 0 {
				t.Fatalf("restored VM: %q (stderr %q), want %q", r.Stdout, r.Stderr, want)
			}
		})
	}
}

// TestSnapshotDeniedRestore: the permissions a VM was saved with are the
// restored VM's, unless the caller gives others.
func TestSnapshotPermissionsKept(t *testing.T) {
	ctx := context.Background()
	store, _ := secexec.OpenSnapshotStore(t.TempDir())
	pol := secexec.AllowAll()
	pol.Net = nil
	vm := newVM(t, secexec.Options{Engine: secexec.EngineInProcess, Permissions: secexec.DenyAll()})
	if err := vm.FS().WriteFile(ctx, "/workspace/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	re := newVM(t, secexec.Options{Engine: secexec.EngineInProcess, From: snap})
	r, _ := re.Exec(ctx, "cat /workspace/f", nil)
	if r.ExitCode == 0 {
		t.Fatalf("a deny-all snapshot restored with permissions: %q", r.Stdout)
	}
}

// TestSnapshotRefusesOtherBase: a snapshot taken over other userland
// layers is refused, and a damaged one is an error, never a VM.
func TestSnapshotRefusesOtherBase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, _ := secexec.OpenSnapshotStore(dir)
	vm := newVM(t, secexec.Options{Engine: secexec.EngineInProcess})
	if err := vm.FS().WriteFile(ctx, "/workspace/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := snapshot.OpenDir(dir)
	m, err := snapshot.Load(ctx, st, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	m.Base = strings.Repeat("0", 64)
	other, err := snapshot.Capture(ctx, st, m.Base, m.Meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := store.Get(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EngineShared} {
		_, err = secexec.NewVM(ctx, secexec.Options{Engine: mode, From: forged})
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "userland") {
			t.Fatalf("%v: restore over another base: %v", mode, err)
		}
	}
	// A deleted snapshot cannot be restored.
	if err := store.Delete(ctx, snap.ID); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EngineShared} {
		if _, err := secexec.NewVM(ctx, secexec.Options{Engine: mode, From: snap}); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%v: restore of a deleted snapshot: %v", mode, err)
		}
	}
	if _, err := store.Get(ctx, snap.ID); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Get of a deleted snapshot: %v", err)
	}
}

// TestForkIsolated: a fork starts with the parent's files, and writes on
// either side afterwards are invisible to the other, including writes
// through a file the parent's guest held open across the fork.
func TestForkIsolated(t *testing.T) {
	ctx := context.Background()
	for _, mode := range engineModes {
		t.Run(mode.String(), func(t *testing.T) {
			parent := newVM(t, secexec.Options{Engine: mode, Permissions: secexec.AllowAll(), Env: map[string]string{"X": "1"}})
			if err := parent.FS().WriteFile(ctx, "/workspace/shared", []byte("before"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := parent.FS().WriteFile(ctx, "/tmp/t", []byte("tmp"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A memory mount made after the VM: the fork has it too.
			if err := parent.FS().Mount(ctx, secexec.Mount{Path: "/late"}); err != nil {
				t.Fatal(err)
			}
			if err := parent.FS().WriteFile(ctx, "/late/l", []byte("late"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A guest holds /workspace/held open and writes to it after
			// the fork.
			p, err := parent.Spawn(ctx, []string{"sh", "-c", `exec 3>/workspace/held; printf a >&3; read line; printf b >&3; echo done`}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if b, _ := parent.FS().ReadFile(ctx, "/workspace/held"); string(b) == "a" {
					break
				}
			}
			child, err := parent.Fork(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = child.Close() })
			if _, err := p.Stdin.Write([]byte("go\n")); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, parent, "/workspace/held"); got != "ab" {
				t.Fatalf("parent held file = %q", got)
			}
			if got := readString(t, child, "/workspace/held"); got != "a" {
				t.Fatalf("child sees the parent's write through an open file: %q", got)
			}
			if got := readString(t, child, "/tmp/t"); got != "tmp" {
				t.Fatalf("child /tmp/t = %q", got)
			}
			if got := readString(t, child, "/late/l"); got != "late" {
				t.Fatalf("child /late/l = %q", got)
			}
			// Writes on each side stay there.
			if err := child.FS().WriteFile(ctx, "/workspace/shared", []byte("child"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := parent.FS().WriteFile(ctx, "/workspace/new", []byte("p"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, parent, "/workspace/shared"); got != "before" {
				t.Fatalf("parent sees the child's write: %q", got)
			}
			if _, err := child.FS().Stat(ctx, "/workspace/new"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("child sees the parent's new file: %v", err)
			}
			r, err := child.Exec(ctx, `echo $X; cat /workspace/shared`, nil)
			if err != nil || string(r.Stdout) != "1\nchild" {
				t.Fatalf("child exec: %q %v", r.Stdout, err)
			}
			// The child outlives its parent.
			if err := parent.Close(); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, child, "/workspace/shared"); got != "child" {
				t.Fatalf("child after parent closed: %q", got)
			}
			if _, err := parent.Fork(ctx); err == nil {
				t.Fatal("fork of a closed VM worked")
			}
		})
	}
}

// BenchmarkFork forks (and closes) an in-process VM holding 2000 files.
func BenchmarkFork(b *testing.B) {
	ctx := context.Background()
	vm, err := secexec.NewVM(ctx, secexec.Options{Engine: secexec.EngineInProcess, Permissions: secexec.AllowAll()})
	if err != nil {
		b.Fatal(err)
	}
	defer vm.Close()
	data := make([]byte, 1024)
	for i := range 2000 {
		if err := vm.FS().MkdirAll(ctx, fmt.Sprintf("/workspace/d%d", i/100), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := vm.FS().WriteFile(ctx, fmt.Sprintf("/workspace/d%d/f%d", i/100, i), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		child, err := vm.Fork(ctx)
		if err != nil {
			b.Fatal(err)
		}
		_ = child.Close()
	}
}

// BenchmarkSnapshotExpress saves and restores a VM holding the
// node_modules of an express app (installed by the host's npm, ~70
// packages), in an engine process as by default, and reports the p50 of
// each and the stored size. "snapshot-first" is the first save into an
// empty store; "snapshot" saves again (nothing new to store); "restore"
// is NewVM from the snapshot and Close; "dir" stores to a directory,
// "s3" to a versitygw on loopback.
func BenchmarkSnapshotExpress(b *testing.B) {
	ctx := context.Background()
	app := b.TempDir()
	if err := os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name":"app","version":"1.0.0","dependencies":{"express":"^4"}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = app
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("npm install: %v\n%s", err, out)
	}
	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
	if err != nil {
		b.Fatal(err)
	}
	defer vm.Close()
	files, pkgs := 0, 0
	err = filepath.WalkDir(app, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(app, p)
		guest := path.Join("/workspace/app", filepath.ToSlash(rel))
		if d.IsDir() {
			if filepath.Base(filepath.Dir(p)) == "node_modules" && !strings.HasPrefix(d.Name(), ".") {
				pkgs++
			}
			return vm.FS().MkdirAll(ctx, guest, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		return vm.FS().WriteFile(ctx, guest, data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
	r, err := vm.Exec(ctx, `node -e "require('/workspace/app/node_modules/express'); console.log('ok')"`, nil)
	if err != nil || string(r.Stdout) != "ok\n" {
		b.Fatalf("express does not load in the VM: %v %q %q", err, r.Stdout, r.Stderr)
	}
	dir := b.TempDir()
	b.Run("dir", func(b *testing.B) {
		benchSnapshots(b, vm, func(i int) (*secexec.SnapshotStore, error) {
			return secexec.OpenSnapshotStore(filepath.Join(dir, fmt.Sprint(i)))
		})
		b.ReportMetric(float64(files), "files")
		b.ReportMetric(float64(pkgs), "packages")
	})
	// The same to S3 (versitygw on loopback, its posix backend on this
	// disk): what a fleet pays per pause and resume.
	b.Run("s3", func(b *testing.B) {
		_, srv := s3SnapshotStore(b, "bench")
		creds := secexec.StoreCredentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
		benchSnapshots(b, vm, func(i int) (*secexec.SnapshotStore, error) {
			return secexec.OpenSnapshotStoreAt(srv.URL(fmt.Sprint("bench-", i)), creds)
		})
	})
}

// benchSnapshots measures a first snapshot of vm to a new store, a second
// one (nothing new to store) and a restore, reporting their p50s.
func benchSnapshots(b *testing.B, vm *secexec.VM, open func(i int) (*secexec.SnapshotStore, error)) {
	ctx := context.Background()
	var first, again, restore []time.Duration
	var snap *secexec.Snapshot
	for b.Loop() {
		store, err := open(len(first))
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if snap, err = vm.Snapshot(ctx, store, secexec.SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err = vm.Snapshot(ctx, store, secexec.SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		re, err := secexec.NewVM(ctx, secexec.Options{From: snap})
		if err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		_ = re.Close()
		first, again, restore = append(first, t1.Sub(t0)), append(again, t2.Sub(t1)), append(restore, t3.Sub(t2))
	}
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(p50(first), "snapshot-first-p50-ms")
	b.ReportMetric(p50(again), "snapshot-p50-ms")
	b.ReportMetric(p50(restore), "restore-p50-ms")
	b.ReportMetric(float64(snap.Stored), "stored-bytes")
}

// TestSnapshotEngineKilledMidway kills a VM's engine process while it
// saves the VM: the call fails with the engine lost, and the snapshot
// taken before is intact and restores.
func TestSnapshotEngineKilledMidway(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, _ := secexec.OpenSnapshotStore(dir)
	vm := newVM(t, secexec.Options{Engine: secexec.EnginePerVM, Permissions: secexec.AllowAll()})
	if err := vm.FS().WriteFile(ctx, "/workspace/keep", []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Enough distinct content that saving takes a while.
	r, err := vm.Exec(ctx, `for d in $(seq 1 40); do mkdir -p /workspace/m/d$d; for f in $(seq 1 50); do echo $d $f $RANDOM > /workspace/m/d$d/f$f; done; done`, nil)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("setup: %v %s", err, r.Stderr)
	}
	done := make(chan error, 1)
	go func() {
		_, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{})
		done <- err
	}()
	// Kill as soon as the engine has staged its first blob.
	for {
		ents, _ := os.ReadDir(filepath.Join(dir, "staging"))
		if len(ents) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the snapshot ended before the kill: %v", err)
		default:
		}
	}
	if err := secexec.KillEngine(vm); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, secexec.ErrEngineLost) {
		t.Fatalf("snapshot with its engine killed: %v", err)
	}
	list, err := store.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != before.ID {
		t.Fatalf("store after the kill: %v %v", list, err)
	}
	re := newVM(t, secexec.Options{Engine: secexec.EngineShared, From: list[0]})
	if got := readString(t, re, "/workspace/keep"); got != "v1" {
		t.Fatalf("restored %q", got)
	}
}

// TestSnapshotRestart: a restored VM starts the snapshot's restart
// commands; SnapshotOptions beyond their bounds are refused.
func TestSnapshotRestart(t *testing.T) {
	ctx := context.Background()
	store, _ := secexec.OpenSnapshotStore(t.TempDir())
	vm := newVM(t, secexec.Options{Engine: secexec.EngineInProcess, Permissions: secexec.AllowAll()})
	if err := vm.FS().WriteFile(ctx, "/workspace/msg", []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{Restart: [][]string{{"sh", "-c", "cat /workspace/msg > /workspace/out"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Get(ctx, snap.ID)
	if err != nil || len(got.Restart) != 1 {
		t.Fatalf("Get: %+v %v", got, err)
	}
	re := newVM(t, secexec.Options{Engine: secexec.EngineInProcess, From: got})
	procs := re.Restarted()
	if len(procs) != 1 {
		t.Fatalf("restarted %d processes", len(procs))
	}
	if st, err := procs[0].Wait(ctx); err != nil || st.ExitCode != 0 {
		t.Fatalf("restart command: %+v %v", st, err)
	}
	if out := readString(t, re, "/workspace/out"); out != "hello" {
		t.Fatalf("out = %q", out)
	}
	labels := map[string]string{}
	for i := range secexec.MaxSnapshotLabels + 1 {
		labels[fmt.Sprint(i)] = "x"
	}
	for _, o := range []secexec.SnapshotOptions{
		{Labels: labels},
		{Labels: map[string]string{"": "x"}},
		{Restart: [][]string{{}}},
		{Restart: make([][]string, secexec.MaxSnapshotRestart+1)},
	} {
		if _, err := vm.Snapshot(ctx, store, o); !errors.Is(err, errno.EINVAL) {
			t.Errorf("options %v: %v", o, err)
		}
	}
	if _, err := vm.Snapshot(ctx, nil, secexec.SnapshotOptions{}); !errors.Is(err, errno.EINVAL) {
		t.Errorf("nil store: %v", err)
	}
}

// TestSnapshotAcrossEngines: a snapshot taken in one engine process
// restores in this process and in another engine process (the same
// userland layers, so the same fingerprint).
func TestSnapshotAcrossEngines(t *testing.T) {
	ctx := context.Background()
	store, _ := secexec.OpenSnapshotStore(t.TempDir())
	vm := newVM(t, secexec.Options{Engine: secexec.EngineShared})
	if err := vm.FS().WriteFile(ctx, "/workspace/f", []byte("across"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// In process, the VM needs the test programs' layer the engines of
	// this test binary have (EngineMainForTest).
	for _, mode := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EnginePerVM} {
		re := newTestProgramsVM(t, secexec.Options{Engine: mode, From: snap})
		if got := readString(t, re, "/workspace/f"); got != "across" {
			t.Fatalf("%v: %q", mode, got)
		}
	}
}
