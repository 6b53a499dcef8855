package kernel_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// fdView is what a child found when it started: its open file
// descriptions by descriptor (for identity) and its working directory.
type fdView struct {
	files map[int]vfs.File
	cwd   string
}

// viewKernel returns a kernel whose /bin/view reports its fdView on the
// returned channel.
func viewKernel(t *testing.T) (*kernel.Kernel, chan fdView) {
	t.Helper()
	ch := make(chan fdView, 1)
	k := newKernel(t, kernel.Limits{FDsPerProcess: 64}, goLoader{"view": func(_ context.Context, p *kernel.Process) int {
		v := fdView{files: map[int]vfs.File{}, cwd: p.Cwd()}
		for _, fd := range p.FDs().FDs() {
			if f, err := p.File(fd); err == nil {
				v.files[fd] = f
				f.DecRef() // identity only: the parent keeps it alive
			}
		}
		ch <- v
		return 0
	}})
	return k, ch
}

// spawnView spawns /bin/view from p with acts and returns what it saw
// once it has gone, its descriptors closed.
func spawnView(t *testing.T, k *kernel.Kernel, p *kernel.Process, ch chan fdView, acts ...kernel.FileAction) fdView {
	t.Helper()
	c, err := p.Spawn(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/view"}, Actions: acts})
	if err != nil {
		t.Fatalf("spawn %v: %v", acts, err)
	}
	v := <-ch
	<-c.Done()
	deadline := time.Now().Add(10 * time.Second)
	for slices.Contains(k.PIDs(), c.PID()) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return v
}

func fileAt(t *testing.T, p *kernel.Process, fd int) vfs.File {
	t.Helper()
	f, err := p.File(fd)
	if err != nil {
		t.Fatal(err)
	}
	f.DecRef()
	return f
}

func openAt(t *testing.T, p *kernel.Process, path string, flags vfs.OpenFlags) int {
	t.Helper()
	fd, err := p.Open(context.Background(), kernel.AtFDCWD, path, flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// The file actions run in order on the child's table, each seeing what
// the ones before it did (POSIX), on the parent's whole table: sources
// may be close-on-exec; what still is afterwards is closed.
func TestFileActionsPOSIXOrder(t *testing.T) {
	k, ch := viewKernel(t)
	p := k.Init()
	writeFile(t, k.VFS(), "/tmp/a", "a", 0o644)
	in := openAt(t, p, "/tmp/a", vfs.O_RDONLY)   // 0
	out := openAt(t, p, "/tmp/a", vfs.O_RDONLY)  // 1
	errf := openAt(t, p, "/tmp/a", vfs.O_RDONLY) // 2
	r, w, err := p.Pipe(vfs.O_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	keep := openAt(t, p, "/tmp/a", vfs.O_RDONLY|vfs.O_CLOEXEC)

	t.Run("dup2 then close the source", func(t *testing.T) {
		v := spawnView(t, k, p, ch, kernel.FileDup2{From: w, To: 1}, kernel.FileClose{FD: w})
		if v.files[1] != fileAt(t, p, w) || v.files[w] != nil {
			t.Errorf("child table %v", v.files)
		}
		if fileAt(t, p, w) == nil || fileAt(t, p, out) == nil {
			t.Error("the parent's table changed")
		}
	})
	t.Run("a later source is the child's", func(t *testing.T) {
		// stdout to the pipe, then stderr to stdout: both the pipe, as
		// `cmd >pipe 2>&1`.
		v := spawnView(t, k, p, ch, kernel.FileDup2{From: w, To: 1}, kernel.FileDup2{From: 1, To: 2})
		if v.files[1] != fileAt(t, p, w) || v.files[2] != fileAt(t, p, w) {
			t.Errorf("child table %v", v.files)
		}
	})
	t.Run("close-on-exec dropped unless dup2 to itself", func(t *testing.T) {
		v := spawnView(t, k, p, ch, kernel.FileDup2{From: keep, To: keep})
		if v.files[keep] != fileAt(t, p, keep) || v.files[r] != nil || v.files[w] != nil {
			t.Errorf("child table %v", v.files)
		}
	})
	t.Run("open onto a used descriptor", func(t *testing.T) {
		v := spawnView(t, k, p, ch, kernel.FileOpen{FD: in, Path: "/tmp/b", Flags: vfs.O_WRONLY | vfs.O_CREAT, Mode: 0o600})
		if f := v.files[in]; f == nil || f.Path() != "/tmp/b" || fileAt(t, p, in).Path() != "/tmp/a" {
			t.Errorf("child table %v", v.files)
		}
	})
	t.Run("closefrom", func(t *testing.T) {
		v := spawnView(t, k, p, ch, kernel.FileDup2{From: w, To: 9}, kernel.FileCloseFrom{FD: 3})
		got := slices.Sorted(maps.Keys(v.files))
		if !slices.Equal(got, []int{in, out, errf}) {
			t.Errorf("child descriptors %v", got)
		}
	})
	t.Run("chdir moves later relative opens", func(t *testing.T) {
		if err := k.VFS().Mkdir(context.Background(), vfs.Root, "/tmp/d", 0o755); err != nil {
			t.Fatal(err)
		}
		v := spawnView(t, k, p, ch, kernel.FileChdir{Path: "/tmp/d"},
			kernel.FileOpen{FD: 5, Path: "rel", Flags: vfs.O_WRONLY | vfs.O_CREAT, Mode: 0o600},
			kernel.FileChdir{Path: ".."}, kernel.FileOpen{FD: 6, Path: "a"})
		if v.cwd != "/tmp" || v.files[5] == nil || v.files[5].Path() != "/tmp/d/rel" || v.files[6].Path() != "/tmp/a" {
			t.Errorf("cwd %q, table %v", v.cwd, v.files)
		}
	})
	t.Run("fchdir", func(t *testing.T) {
		dir := openAt(t, p, "/tmp/d", vfs.O_RDONLY|vfs.O_DIRECTORY|vfs.O_CLOEXEC)
		defer p.Close(dir)
		v := spawnView(t, k, p, ch, kernel.FileFchdir{FD: dir})
		if v.cwd != "/tmp/d" || v.files[dir] != nil {
			t.Errorf("cwd %q, table %v", v.cwd, v.files)
		}
	})
	t.Run("open with O_CLOEXEC closes again", func(t *testing.T) {
		v := spawnView(t, k, p, ch, kernel.FileOpen{FD: 7, Path: "/tmp/a", Flags: vfs.O_RDONLY | vfs.O_CLOEXEC})
		if v.files[7] != nil {
			t.Errorf("child table %v", v.files)
		}
	})
}

// A spawn whose actions fail starts no process and leaks no descriptor,
// even after earlier actions opened files; the error is the kernel's
// errno.
func TestFileActionsRejected(t *testing.T) {
	k, _ := viewKernel(t)
	p := k.Init()
	writeFile(t, k.VFS(), "/tmp/a", "a", 0o644)
	open := kernel.FileOpen{FD: 4, Path: "/tmp/a"}
	for _, tc := range []struct {
		name string
		acts []kernel.FileAction
		want error
	}{
		{"close never opened", []kernel.FileAction{open, kernel.FileClose{FD: 40}}, errno.EBADF},
		{"close negative", []kernel.FileAction{kernel.FileClose{FD: -1}}, errno.EBADF},
		{"dup2 from closed", []kernel.FileAction{open, kernel.FileDup2{From: 30, To: 1}}, errno.EBADF},
		{"dup2 from what an action closed", []kernel.FileAction{open, kernel.FileClose{FD: 4}, kernel.FileDup2{From: 4, To: 1}}, errno.EBADF},
		{"dup2 beyond RLIMIT_NOFILE", []kernel.FileAction{open, kernel.FileDup2{From: 4, To: 64}}, errno.EBADF},
		{"open beyond RLIMIT_NOFILE", []kernel.FileAction{kernel.FileOpen{FD: 1000, Path: "/tmp/a"}}, errno.EBADF},
		{"open missing", []kernel.FileAction{open, kernel.FileOpen{FD: 5, Path: "/nope"}}, errno.ENOENT},
		{"open empty path", []kernel.FileAction{kernel.FileOpen{FD: 5}}, errno.ENOENT},
		{"open NUL", []kernel.FileAction{kernel.FileOpen{FD: 5, Path: "a\x00b"}}, errno.EINVAL},
		{"chdir to a file", []kernel.FileAction{open, kernel.FileChdir{Path: "/tmp/a"}}, errno.ENOTDIR},
		{"fchdir to a file", []kernel.FileAction{open, kernel.FileFchdir{FD: 4}}, errno.ENOTDIR},
		{"fchdir closed", []kernel.FileAction{kernel.FileFchdir{FD: 33}}, errno.EBADF},
		{"closefrom negative", []kernel.FileAction{open, kernel.FileCloseFrom{FD: -2}}, errno.EBADF},
		{"nil action", []kernel.FileAction{open, nil}, errno.EINVAL},
		{"too many", slices.Repeat([]kernel.FileAction{kernel.FileClose{FD: 0}}, kernel.MaxFileActions+1), errno.E2BIG},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fds, pids := k.OpenFDs(), len(k.PIDs())
			_, err := p.Spawn(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/view"}, Actions: tc.acts})
			if !errors.Is(err, tc.want) {
				t.Errorf("spawn: %v, want %v", err, tc.want)
			}
			if n := k.OpenFDs(); n != fds {
				t.Errorf("%d descriptors before, %d after", fds, n)
			}
			if n := len(k.PIDs()); n != pids {
				t.Errorf("%d processes before, %d after", pids, n)
			}
		})
	}
	// Closing 0-2 when they are not open is fine: a caller may not know.
	if _, err := p.Spawn(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/nope"},
		Actions: []kernel.FileAction{kernel.FileClose{FD: 2}}}); !errors.Is(err, errno.ENOENT) {
		t.Errorf("spawn of a missing program: %v", err)
	}
}
