package syscalls

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/experimental/wazerotest"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// childView is what a spawned child found: its descriptors (the open file
// descriptions, for identity) and its working directory.
type childView struct {
	files map[int]vfs.File
	cwd   string
}

// viewLoader runs executables starting with "#!view" as a program that
// reports its childView on ch.
type viewLoader struct{ ch chan childView }

type viewProgram struct{ ch chan childView }

func (l viewLoader) Load(_ context.Context, _ *kernel.Process, exe kernel.Executable) (kernel.Program, error) {
	if !bytes.HasPrefix(exe.Header, []byte("#!view")) {
		return nil, kernel.ErrNotMine
	}
	return viewProgram(l), nil
}

func (v viewProgram) Run(_ context.Context, p *kernel.Process) int {
	cv := childView{files: map[int]vfs.File{}, cwd: p.Cwd()}
	for _, fd := range p.FDs().FDs() {
		if f, err := p.File(fd); err == nil {
			cv.files[fd] = f
			f.DecRef() // identity only: the parent keeps the file alive
		}
	}
	v.ch <- cv
	return 0
}

// withViewer registers the viewer program as /tmp/view.
func withViewer(t testing.TB, k *kernel.Kernel) chan childView {
	t.Helper()
	ch := make(chan childView, 1)
	k.RegisterLoader(viewLoader{ch})
	f, err := k.VFS().Open(context.Background(), vfs.Root, "/tmp/view", vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	if _, err := f.Write(context.Background(), []byte("#!view\n")); err != nil {
		t.Fatal(err)
	}
	return ch
}

// rec packs one proc_spawn_v3 file action record.
func rec(op, fd, src, oflag, mode uint32, path string) []byte {
	b := make([]byte, 24, 24+len(path))
	for i, v := range []uint32{op, fd, src, oflag, mode, uint32(len(path))} {
		binary.LittleEndian.PutUint32(b[i*4:], v)
	}
	return append(b, path...)
}

// spawnV3 calls proc_spawn_v3 for exe with the packed actions and returns
// the errno and the child's pid.
func spawnV3(t testing.TB, s *State, exe string, acts []byte, cwd string) (Errno, int) {
	t.Helper()
	const exeAt, argvAt, cwdAt, pidAt, actsAt = 0, 256, 512, 1020, 1024
	mem := wazerotest.NewFixedMemory(1<<16 + len(acts))
	mem.Write(exeAt, []byte(exe))
	mem.Write(argvAt, []byte(exe+"\x00"))
	mem.Write(cwdAt, []byte(cwd))
	mem.Write(actsAt, acts)
	mod := wazerotest.NewModule(mem)
	var fn hostFunc
	for _, f := range processFuncs() {
		if f.name == "proc_spawn_v3" {
			fn = f
		}
	}
	stack := []uint64{exeAt, uint64(len(exe)), argvAt, uint64(len(exe) + 1), 0, 0,
		actsAt, uint64(len(acts)), cwdAt, uint64(len(cwd)), 0, 0, 0, 0, 0, 0, pidAt}
	if err := call(WithState(context.Background(), s), fn, mod, stack); err != nil {
		t.Fatal(err)
	}
	pid, _ := mem.ReadUint32Le(pidAt)
	return Errno(stack[0]), int(pid)
}

// waitGone waits until init has reaped pid, whose descriptors are closed
// by then.
func waitGone(t testing.TB, k *kernel.Kernel, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for slices.Contains(k.PIDs(), pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still there", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// proc_spawn_v3's records become kernel file actions: run in order on
// the child's table, sources included that are close-on-exec in the
// parent; what is still close-on-exec afterwards is dropped.
func TestSpawnActions(t *testing.T) {
	k := newKernel(t, testPasswd, testGroup)
	views := withViewer(t, k)
	ctx := context.Background()
	p := k.Init()
	s := NewState(ctx, p, []string{"t"}, nil) // its preopen takes fd 0
	defer s.Close()
	for range 2 { // stdout and stderr
		if _, err := p.Open(ctx, kernel.AtFDCWD, "/etc/group", vfs.O_RDONLY, 0); err != nil {
			t.Fatal(err)
		}
	}
	r, w, err := p.Pipe(0)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := p.Open(ctx, kernel.AtFDCWD, "/etc/passwd", vfs.O_RDONLY|vfs.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var acts []byte
	acts = append(acts, rec(actChdir, 0, 0, 0, 0, "tmp")...)
	acts = append(acts, rec(actOpen, 9, 0, uint32(vfs.O_WRONLY|vfs.O_CREAT), 0o600, "out")...)
	acts = append(acts, rec(actDup2, 0, uint32(secret), 0, 0, "")...)
	acts = append(acts, rec(actDup2, 1, 9, 0, 0, "")...)
	acts = append(acts, rec(actClose, uint32(r), 0, 0, 0, "")...)
	acts = append(acts, rec(actClosefrom, 9, 0, 0, 0, "")...)
	// A relative program path is looked up in the child's cwd, as the
	// CHDIR action left it.
	e, pid := spawnV3(t, s, "./view", acts, "/")
	if e != ESUCCESS {
		t.Fatalf("proc_spawn_v3: errno %d", e)
	}
	got := <-views
	waitGone(t, k, pid)
	pfile := func(fd int) vfs.File {
		f, err := p.File(fd)
		if err != nil {
			t.Fatal(err)
		}
		f.DecRef()
		return f
	}
	if got.cwd != "/tmp" {
		t.Errorf("child cwd %q", got.cwd)
	}
	if got.files[0] != pfile(secret) {
		t.Error("fd 0 is not the dup of the close-on-exec source")
	}
	if f := got.files[1]; f == nil || f.Path() != "/tmp/out" || got.files[2] != pfile(2) ||
		got.files[r] != nil || got.files[w] != pfile(w) || len(got.files) != 4 {
		t.Errorf("table %v (pipe %d %d)", got.files, r, w)
	}
	st, err := k.VFS().Stat(ctx, vfs.Root, "/tmp/out")
	if err != nil || st.Mode&0o777 != 0o600&^0o022 {
		t.Errorf("opened file: %+v, %v", st, err)
	}
	// Failures: closing what was never open, dup2 from it, bad chdir,
	// malformed records. None starts a process or leaks a descriptor.
	for _, tc := range []struct {
		acts []byte
		want Errno
	}{
		{rec(actClose, 40, 0, 0, 0, ""), EBADF},
		{rec(actDup2, 1, 40, 0, 0, ""), EBADF},
		{rec(actDup2, 100000, 1, 0, 0, ""), EBADF},
		{rec(actChdir, 0, 0, 0, 0, "/etc/passwd"), ENOTDIR},
		{rec(actChdir, 0, 0, 0, 0, ""), ENOENT},
		{rec(actOpen, 3, 0, 0, 0, "/nope"), ENOENT},
		{rec(actFchdir, uint32(secret), 0, 0, 0, ""), ENOTDIR},
		{rec(actOpen, 3, 0, 0, 0, "x")[:20], EINVAL},
		{append(rec(actOpen, 3, 0, 0, 0, "xyz")[:24], 'x'), EINVAL},
		{rec(99, 0, 0, 0, 0, ""), EINVAL},
		{bytes.Repeat(rec(actClose, 0, 0, 0, 0, ""), maxActions+1), E2BIG},
		{append(rec(actOpen, 5, 0, uint32(vfs.O_WRONLY|vfs.O_CREAT), 0o600, "/tmp/made"), rec(actClose, 50, 0, 0, 0, "")...), EBADF},
	} {
		before, procs := k.OpenFDs(), len(k.PIDs())
		if e, _ := spawnV3(t, s, "/tmp/view", tc.acts, "/"); e != tc.want {
			t.Errorf("actions %x: errno %d, want %d", tc.acts[:min(len(tc.acts), 4)], e, tc.want)
		}
		if after := k.OpenFDs(); after != before {
			t.Errorf("actions %x: %d descriptors before, %d after", tc.acts[:min(len(tc.acts), 4)], before, after)
		}
		if n := len(k.PIDs()); n != procs {
			t.Errorf("actions %x: %d processes before, %d after", tc.acts[:min(len(tc.acts), 4)], procs, n)
		}
	}
}

// FuzzSpawnActions decodes arbitrary posix_spawn file action records and
// spawns with them: a malformed record is an errno, and whatever the
// actions did, no descriptor outlives the spawn but the child's.
func FuzzSpawnActions(f *testing.F) {
	f.Add(rec(actDup2, 1, 0, 0, 0, ""))
	f.Add(append(rec(actOpen, 0, 0, 0, 0, "/dev/null"), rec(actOpen, 1, 0, 0o101, 0o644, "/tmp/out")...))
	f.Add(append(rec(actChdir, 0, 0, 0, 0, "/tmp"), rec(actClose, 5, 0, 0, 0, "")...))
	f.Add(append(rec(actFchdir, 3, 0, 0, 0, ""), rec(actClosefrom, 0, 0, 0, 0, "")...))
	f.Add(rec(99, 0, 0, 0, 0, ""))
	f.Add([]byte{1, 0, 0})
	k := newKernel(f, testPasswd, testGroup)
	views := withViewer(f, k)
	s := NewState(context.Background(), k.Init(), []string{"fuzz"}, nil)
	defer s.Close()
	f.Fuzz(func(t *testing.T, acts []byte) {
		decoded, e := decodeActions(acts)
		if e != ESUCCESS && decoded != nil {
			t.Fatalf("errno %d with %d actions", e, len(decoded))
		}
		before := k.OpenFDs()
		e, pid := spawnV3(t, s, "/tmp/view", acts, "/")
		if e == ESUCCESS {
			<-views
			waitGone(t, k, pid)
		}
		_ = k.VFS().Unlink(context.Background(), vfs.Root, "/tmp/out")
		if after := k.OpenFDs(); after != before {
			t.Fatalf("descriptors leaked: %d before, %d after", before, after)
		}
	})
}
