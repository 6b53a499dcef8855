package kernel_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// goLoader runs Go functions as programs: an executable whose first line
// is "#!go:NAME" runs progs[NAME]. The kernel tests use it to drive the
// process table without a WebAssembly or JavaScript engine; those engines
// have their own tests on top of this kernel.
type goLoader map[string]func(ctx context.Context, p *kernel.Process) int

type goProgram func(ctx context.Context, p *kernel.Process) int

func (g goProgram) Run(ctx context.Context, p *kernel.Process) int { return g(ctx, p) }

func (l goLoader) Load(_ context.Context, _ *kernel.Process, exe kernel.Executable) (kernel.Program, error) {
	if !bytes.HasPrefix(exe.Header, []byte("#!go:")) {
		return nil, kernel.ErrNotMine
	}
	name, _, _ := strings.Cut(string(exe.Header[5:]), "\n")
	fn, ok := l[name]
	if !ok {
		return nil, errno.ENOEXEC
	}
	return goProgram(fn), nil
}

func newKernel(t *testing.T, limits kernel.Limits, progs goLoader) *kernel.Kernel {
	t.Helper()
	ctx := context.Background()
	root := memfs.New(memfs.Options{Quota: vfs.NewQuota(64<<20, 16384)})
	v, err := vfs.New(ctx, root, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{VFS: v, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	k.RegisterLoader(progs)
	if err := v.Mkdir(ctx, vfs.Root, "/bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := v.Mkdir(ctx, vfs.Root, "/tmp", 0o1777); err != nil {
		t.Fatal(err)
	}
	for name := range progs {
		writeFile(t, v, "/bin/"+name, "#!go:"+name+"\n", 0o755)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := k.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return k
}

func writeFile(t *testing.T, v *vfs.VFS, path, data string, mode uint32) {
	t.Helper()
	ctx := context.Background()
	f, err := v.Open(ctx, vfs.Root, path, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	if _, err := f.Write(ctx, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// stdio wires a host-side pipe to the child's fd 1 and collects output.
type captured struct {
	r  vfs.File
	mu sync.Mutex
	b  bytes.Buffer
	wg sync.WaitGroup
}

func capture(t *testing.T, k *kernel.Kernel) (*captured, vfs.File) {
	t.Helper()
	r, w, err := k.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &captured{r: r}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer r.DecRef()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(context.Background(), buf)
			c.mu.Lock()
			c.b.Write(buf[:n])
			c.mu.Unlock()
			if n == 0 || err != nil {
				return
			}
		}
	}()
	return c, w
}

func (c *captured) String() string { c.wg.Wait(); return c.b.String() }

func run(t *testing.T, k *kernel.Kernel, argv ...string) (kernel.WaitStatus, string) {
	t.Helper()
	out, w := capture(t, k)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: argv, Files: []vfs.File{nil, w, w}, Env: []string{"PATH=/bin"}})
	w.DecRef()
	if err != nil {
		t.Fatalf("spawn %v: %v", argv, err)
	}
	st, err := p.HostWait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st, out.String()
}

func write(ctx context.Context, p *kernel.Process, fd int, s string) {
	_, _ = p.Write(ctx, fd, []byte(s))
}

func TestSpawnArgvEnvCwdAndExitCode(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"show": func(ctx context.Context, p *kernel.Process) int {
			write(ctx, p, 1, fmt.Sprintf("%q %q %s ppid=%d", p.Argv(), p.Environ(), p.Cwd(), p.PPID()))
			return 7
		},
	})
	st, out := run(t, k, "show", "a b", "c")
	if !st.Exited || st.Code != 7 || st.ShellCode() != 7 {
		t.Fatalf("status %+v", st)
	}
	want := `["show" "a b" "c"] ["PATH=/bin"] / ppid=1`
	if out != want {
		t.Fatalf("got %s, want %s", out, want)
	}
}

func TestCommandNotFound(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{})
	_, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"nope"}, Env: []string{"PATH=/bin"}})
	var nf *kernel.NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, errno.ENOENT) {
		t.Fatalf("err = %v", err)
	}
	// A file that is not executable is EACCES.
	writeFile(t, k.VFS(), "/bin/data", "#!go:x\n", 0o644)
	root := k.Init()
	_ = root
	_, err = k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/data"}})
	if !errors.Is(err, errno.EACCES) {
		t.Fatalf("non-executable: %v", err)
	}
}

// A pipeline of two processes moves every byte, in order, through a pipe.
func TestPipelineBytesExact(t *testing.T) {
	const size = 8 << 20
	k := newKernel(t, kernel.Limits{}, goLoader{
		"producer": func(ctx context.Context, p *kernel.Process) int {
			buf := make([]byte, 64<<10)
			for i := 0; i < size; i += len(buf) {
				for j := range buf {
					buf[j] = byte((i + j) * 7)
				}
				if _, err := p.Write(ctx, 1, buf); err != nil {
					return 1
				}
			}
			return 0
		},
		"hasher": func(ctx context.Context, p *kernel.Process) int {
			h := sha256.New()
			buf := make([]byte, 10000)
			total := 0
			for {
				n, err := p.Read(ctx, 0, buf)
				h.Write(buf[:n])
				total += n
				if n == 0 || err != nil {
					break
				}
			}
			write(ctx, p, 1, fmt.Sprintf("%d %x", total, h.Sum(nil)))
			return 0
		},
	})
	want := sha256.New()
	buf := make([]byte, 64<<10)
	for i := 0; i < size; i += len(buf) {
		for j := range buf {
			buf[j] = byte((i + j) * 7)
		}
		want.Write(buf)
	}
	ctx := context.Background()
	r, w, err := k.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, ow := capture(t, k)
	prod, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/producer"}, Files: []vfs.File{nil, w}})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/hasher"}, Files: []vfs.File{r, ow}})
	if err != nil {
		t.Fatal(err)
	}
	r.DecRef()
	w.DecRef()
	ow.DecRef()
	if st, _ := prod.HostWait(ctx); st.ShellCode() != 0 {
		t.Fatalf("producer %+v", st)
	}
	if st, _ := cons.HostWait(ctx); st.ShellCode() != 0 {
		t.Fatalf("consumer %+v", st)
	}
	if got, want := out.String(), fmt.Sprintf("%d %x", size, want.Sum(nil)); got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if k.OpenPipes() != 0 {
		t.Fatalf("pipes still open: %d", k.OpenPipes())
	}
}

func TestWaitpidSemantics(t *testing.T) {
	release := make(chan struct{})
	k := newKernel(t, kernel.Limits{}, goLoader{
		"child": func(ctx context.Context, p *kernel.Process) int {
			if len(p.Argv()) > 1 {
				<-release
			}
			return len(p.Argv())
		},
		"parent": func(ctx context.Context, p *kernel.Process) int {
			var log []string
			if _, _, err := p.Wait(ctx, -1, 0); !errors.Is(err, errno.ECHILD) {
				log = append(log, "no-children:"+fmt.Sprint(err))
			}
			slow, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/child", "slow"}})
			if err != nil {
				return 90
			}
			fast, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/child"}})
			if err != nil {
				return 91
			}
			pid, st, err := p.Wait(ctx, fast.PID(), 0)
			if err != nil || pid != fast.PID() || st.Code != 1 {
				log = append(log, fmt.Sprintf("fast %d %+v %v", pid, st, err))
			}
			pid, _, err = p.Wait(ctx, -1, kernel.WNOHANG)
			if err != nil || pid != 0 {
				log = append(log, fmt.Sprintf("wnohang %d %v", pid, err))
			}
			close(release)
			pid, st, err = p.Wait(ctx, -1, 0)
			if err != nil || pid != slow.PID() || st.Code != 2 {
				log = append(log, fmt.Sprintf("any %d %+v %v", pid, st, err))
			}
			if _, _, err := p.Wait(ctx, -1, 0); !errors.Is(err, errno.ECHILD) {
				log = append(log, "after:"+fmt.Sprint(err))
			}
			if _, ok := p.Kernel().Process(slow.PID()); ok {
				log = append(log, "zombie not reaped")
			}
			write(ctx, p, 1, strings.Join(log, ";"))
			return 0
		},
	})
	st, out := run(t, k, "parent")
	if st.ShellCode() != 0 || out != "" {
		t.Fatalf("status %+v, problems: %s", st, out)
	}
}

func TestKillSignalsAndShellCodes(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"sleeper": func(ctx context.Context, p *kernel.Process) int {
			_ = p.Sleep(ctx, time.Hour)
			return 0
		},
		"reader": func(ctx context.Context, p *kernel.Process) int {
			// Blocks on a pipe nobody writes to; a kill must interrupt it.
			r, _, err := p.Pipe(0)
			if err != nil {
				return 3
			}
			_, _ = p.Read(ctx, r, make([]byte, 1))
			return 0
		},
	})
	ctx := context.Background()
	for _, tc := range []struct {
		prog string
		sig  kernel.Signal
		code int
	}{
		{"sleeper", kernel.SIGTERM, 143},
		{"sleeper", kernel.SIGKILL, 137},
		{"sleeper", kernel.SIGINT, 130},
		{"reader", kernel.SIGHUP, 129},
		{"reader", kernel.SIGKILL, 137},
	} {
		p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/" + tc.prog}})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		st, err := p.HostWait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Exited || st.Signal != tc.sig || st.ShellCode() != tc.code {
			t.Errorf("%s %v: status %+v code %d", tc.prog, tc.sig, st, st.ShellCode())
		}
	}
	// SIGCHLD and SIGWINCH are ignored by default: the process lives on.
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/sleeper"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Signal(kernel.SIGCHLD)
	_ = p.Signal(kernel.SIGWINCH)
	select {
	case <-p.Done():
		t.Fatal("ignored signal killed the process")
	case <-time.After(50 * time.Millisecond):
	}
	_ = p.Signal(kernel.SIGKILL)
	if _, err := p.HostWait(ctx); err != nil {
		t.Fatal(err)
	}
}

// Writing to a pipe whose reader is gone raises SIGPIPE (exit 141) — how
// `yes | head -n 3` ends.
func TestSIGPIPE(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"yes": func(ctx context.Context, p *kernel.Process) int {
			for {
				if _, err := p.Write(ctx, 1, []byte("y\n")); err != nil {
					return 1 // only reached if SIGPIPE did not kill us
				}
			}
		},
		"head": func(ctx context.Context, p *kernel.Process) int {
			// Six bytes, however the writes were split into reads.
			buf := make([]byte, 6)
			n := 0
			for n < len(buf) {
				k, err := p.Read(ctx, 0, buf[n:])
				if k == 0 || err != nil {
					break
				}
				n += k
			}
			write(ctx, p, 1, string(buf[:n]))
			return 0
		},
	})
	ctx := context.Background()
	r, w, _ := k.NewPipe()
	out, ow := capture(t, k)
	yes, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/yes"}, Files: []vfs.File{nil, w}})
	if err != nil {
		t.Fatal(err)
	}
	head, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/head"}, Files: []vfs.File{r, ow}})
	if err != nil {
		t.Fatal(err)
	}
	r.DecRef()
	w.DecRef()
	ow.DecRef()
	hs, _ := head.HostWait(ctx)
	ys, _ := yes.HostWait(ctx)
	if hs.ShellCode() != 0 || ys.Signal != kernel.SIGPIPE || ys.ShellCode() != 141 {
		t.Fatalf("head %+v yes %+v", hs, ys)
	}
	if got := out.String(); got != "y\ny\ny\n" {
		t.Fatalf("output %q", got)
	}
}

func TestStopContinueWithWUNTRACED(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"loop": func(ctx context.Context, p *kernel.Process) int {
			for i := 0; ; i++ {
				if err := p.Sleep(ctx, time.Millisecond); err != nil {
					return 0
				}
			}
		},
		"ctl": func(ctx context.Context, p *kernel.Process) int {
			c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/loop"}})
			if err != nil {
				return 1
			}
			if err := p.Kill(c.PID(), kernel.SIGSTOP); err != nil {
				return 2
			}
			pid, st, err := p.Wait(ctx, c.PID(), kernel.WUNTRACED)
			if err != nil || pid != c.PID() || !st.Stopped || st.Raw()&0xff != 0x7f {
				return 3
			}
			if c.State() != kernel.StateStopped {
				return 4
			}
			_ = p.Kill(c.PID(), kernel.SIGCONT)
			if _, st, err = p.Wait(ctx, c.PID(), kernel.WCONTINUED); err != nil || !st.Continued {
				return 5
			}
			_ = p.Kill(c.PID(), kernel.SIGTERM)
			if _, st, err = p.Wait(ctx, c.PID(), 0); err != nil || st.Signal != kernel.SIGTERM {
				return 6
			}
			return 0
		},
	})
	if st, _ := run(t, k, "ctl"); st.ShellCode() != 0 {
		t.Fatalf("ctl failed at step %d", st.ShellCode())
	}
}

// An orphan is adopted by init and reaped when it exits.
func TestOrphansReparentedAndReaped(t *testing.T) {
	release := make(chan struct{})
	orphanPID := make(chan int, 1)
	k := newKernel(t, kernel.Limits{}, goLoader{
		"orphan": func(ctx context.Context, p *kernel.Process) int {
			<-release
			return 0
		},
		"parent": func(ctx context.Context, p *kernel.Process) int {
			// The orphan must not hold the captured stdout open, or the
			// host would wait for its EOF.
			c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/orphan"},
				Actions: []kernel.FileAction{kernel.FileClose{FD: 1}, kernel.FileClose{FD: 2}}})
			if err != nil {
				return 1
			}
			orphanPID <- c.PID()
			return 0
		},
	})
	if st, _ := run(t, k, "parent"); st.ShellCode() != 0 {
		t.Fatal(st)
	}
	pid := <-orphanPID
	c, ok := k.Process(pid)
	if !ok || c.PPID() != 1 {
		t.Fatalf("orphan not adopted by init: ok=%v", ok)
	}
	close(release)
	<-c.Done()
	if _, ok := k.Process(pid); ok {
		t.Fatal("init did not reap the orphan")
	}
	if n := k.NumProcesses(); n != 1 {
		t.Fatalf("%d processes left, want init only", n)
	}
}

func TestDupSharesOffsetAndCloexecIsNotInherited(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"probe": func(ctx context.Context, p *kernel.Process) int {
			// fd 0 was opened close-on-exec by the parent; fd 3 was not.
			if _, err := p.Fstat(ctx, 0); !errors.Is(err, errno.EBADF) {
				return 1
			}
			if _, err := p.Fstat(ctx, 3); err != nil {
				return 2
			}
			return 0
		},
		"main": func(ctx context.Context, p *kernel.Process) int {
			fd, err := p.Open(ctx, kernel.AtFDCWD, "/tmp/f", vfs.O_RDWR|vfs.O_CREAT|vfs.O_CLOEXEC, 0o644)
			if err != nil || fd != 0 { // the lowest free descriptor
				return 10
			}
			fd2, err := p.Dup(fd, 0, false)
			if err != nil || fd2 != 3 {
				return 11
			}
			write(ctx, p, fd, "hello")
			write(ctx, p, fd2, " world")
			if off, _ := p.Seek(ctx, fd, 0, vfs.SeekCur); off != 11 {
				return 12
			}
			c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/probe"}})
			if err != nil {
				return 13
			}
			_, st, _ := p.Wait(ctx, c.PID(), 0)
			if st.Code != 0 {
				return 20 + st.Code
			}
			if err := p.Dup2(fd, 9, false); err != nil {
				return 14
			}
			buf := make([]byte, 32)
			n, _ := p.Pread(ctx, 9, buf, 0)
			if string(buf[:n]) != "hello world" {
				return 15
			}
			return 0
		},
	})
	if st, _ := run(t, k, "main"); st.ShellCode() != 0 {
		t.Fatalf("failed at step %d", st.ShellCode())
	}
}

func TestPollPipe(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"poller": func(ctx context.Context, p *kernel.Process) int {
			r, w, err := p.Pipe(0)
			if err != nil {
				return 1
			}
			fds := []kernel.PollFD{{FD: r, Events: waiter.EventIn}, {FD: w, Events: waiter.EventOut}, {FD: 99, Events: waiter.EventIn}}
			n, err := p.Poll(ctx, fds[:1], 10*time.Millisecond)
			if err != nil || n != 0 {
				return 2
			}
			n, _ = p.Poll(ctx, fds, 0)
			if n != 2 || fds[1].Revents&waiter.EventOut == 0 || fds[2].Revents != 0x20 {
				return 3
			}
			go func() {
				time.Sleep(5 * time.Millisecond)
				write(ctx, p, w, "x")
			}()
			n, err = p.Poll(ctx, fds[:1], -1)
			if err != nil || n != 1 || fds[0].Revents&waiter.EventIn == 0 {
				return 4
			}
			_ = p.Close(w)
			buf := make([]byte, 4)
			_, _ = p.Read(ctx, r, buf)
			n, _ = p.Poll(ctx, fds[:1], -1)
			if n != 1 || fds[0].Revents&waiter.EventHup == 0 {
				return 5
			}
			return 0
		},
	})
	if st, _ := run(t, k, "poller"); st.ShellCode() != 0 {
		t.Fatalf("failed at step %d", st.ShellCode())
	}
}

// Each limit ends in its errno, and the VM works normally afterwards.
func TestLimitsThenUsable(t *testing.T) {
	block := make(chan struct{})
	k := newKernel(t, kernel.Limits{Processes: 5, FDsPerProcess: 16, FDsPerVM: 40, Pipes: 3, ArgvBytes: 100}, goLoader{
		"wait": func(ctx context.Context, p *kernel.Process) int { <-block; return 0 },
		"ok":   func(ctx context.Context, p *kernel.Process) int { return 0 },
		"fds": func(ctx context.Context, p *kernel.Process) int {
			var err error
			n := 0
			for err == nil {
				_, err = p.Open(ctx, kernel.AtFDCWD, "/", vfs.O_RDONLY, 0)
				n++
			}
			// fds 1 and 2 hold stdout and stderr: 14 opens fit.
			if !errors.Is(err, errno.EMFILE) || n != 15 {
				write(ctx, p, 2, fmt.Sprint(n, err))
				return 1
			}
			for fd := 0; fd < 16; fd++ {
				_ = p.Close(fd)
			}
			if _, err := p.Open(ctx, kernel.AtFDCWD, "/", vfs.O_RDONLY, 0); err != nil {
				return 2
			}
			return 0
		},
		"pipes": func(ctx context.Context, p *kernel.Process) int {
			var fds []int
			for i := 0; i < 3; i++ {
				r, w, err := p.Pipe(0)
				if err != nil {
					return 1
				}
				fds = append(fds, r, w)
			}
			if _, _, err := p.Pipe(0); !errors.Is(err, errno.EAGAIN) {
				return 2
			}
			for _, fd := range fds {
				_ = p.Close(fd)
			}
			if _, _, err := p.Pipe(0); err != nil {
				return 3
			}
			return 0
		},
	})
	ctx := context.Background()
	var ps []*kernel.Process
	for i := 0; i < 5; i++ {
		p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/wait"}})
		if err != nil {
			t.Fatal(i, err)
		}
		ps = append(ps, p)
	}
	if _, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/ok"}}); !errors.Is(err, errno.EAGAIN) {
		t.Fatalf("process limit: %v", err)
	}
	close(block)
	for _, p := range ps {
		_, _ = p.HostWait(ctx)
	}
	if st, out := run(t, k, "/bin/ok"); st.ShellCode() != 0 {
		t.Fatal(st, out)
	}
	if st, out := run(t, k, "/bin/fds"); st.ShellCode() != 0 {
		t.Fatal(st, out)
	}
	if st, out := run(t, k, "/bin/pipes"); st.ShellCode() != 0 {
		t.Fatal(st, out)
	}
	_, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/ok", strings.Repeat("x", 200)}})
	if !errors.Is(err, errno.E2BIG) {
		t.Fatalf("argv limit: %v", err)
	}
	_, err = k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/ok"}, Env: []string{"BIG=" + strings.Repeat("x", 2<<20)}})
	if !errors.Is(err, errno.E2BIG) {
		t.Fatalf("env limit: %v", err)
	}
	if st, _ := run(t, k, "/bin/ok"); st.ShellCode() != 0 {
		t.Fatal(st)
	}
	if k.OpenFDs() != 0 || k.OpenPipes() != 0 || k.NumProcesses() != 1 {
		t.Fatalf("leak: fds=%d pipes=%d procs=%d", k.OpenFDs(), k.OpenPipes(), k.NumProcesses())
	}
}

// A fork bomb hits EAGAIN and the VM recovers once it is killed.
func TestForkBombContained(t *testing.T) {
	k := newKernel(t, kernel.Limits{Processes: 20}, goLoader{
		"bomb": func(ctx context.Context, p *kernel.Process) int {
			for {
				if _, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/bomb"}}); err != nil {
					if !errors.Is(err, errno.EAGAIN) {
						return 1
					}
					if p.Sleep(ctx, time.Millisecond) != nil {
						return 0
					}
				}
			}
		},
		"ok": func(ctx context.Context, p *kernel.Process) int { return 0 },
	})
	ctx := context.Background()
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/bomb"}, NewGroup: true})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for k.NumProcesses() < 21 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := k.NumProcesses(); n != 21 {
		t.Fatalf("processes = %d, want the limit 20 + init", n)
	}
	if err := k.Init().Kill(-p.PID(), kernel.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = p.HostWait(ctx)
	for k.NumProcesses() > 1 && time.Now().Before(deadline) {
		_ = k.Init().Kill(-p.PID(), kernel.SIGKILL)
		time.Sleep(time.Millisecond)
	}
	if st, _ := run(t, k, "/bin/ok"); st.ShellCode() != 0 {
		t.Fatal(st)
	}
}

func TestFlock(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"locker": func(ctx context.Context, p *kernel.Process) int {
			a, _ := p.Open(ctx, kernel.AtFDCWD, "/tmp/lock", vfs.O_RDWR|vfs.O_CREAT, 0o644)
			b, _ := p.Open(ctx, kernel.AtFDCWD, "/tmp/lock", vfs.O_RDWR, 0)
			if err := p.Flock(ctx, a, kernel.LockEX); err != nil {
				return 1
			}
			// A second description conflicts; a dup of the first shares the lock.
			if err := p.Flock(ctx, b, kernel.LockSH|kernel.LockNB); !errors.Is(err, errno.EAGAIN) {
				return 2
			}
			d, _ := p.Dup(a, 0, false)
			if err := p.Flock(ctx, d, kernel.LockEX|kernel.LockNB); err != nil {
				return 3
			}
			// Closing every descriptor of the holder releases its lock.
			_ = p.Close(a)
			_ = p.Close(d)
			if err := p.Flock(ctx, b, kernel.LockEX|kernel.LockNB); err != nil {
				return 4
			}
			if err := p.Flock(ctx, b, kernel.LockUN); err != nil {
				return 5
			}
			c, _ := p.Open(ctx, kernel.AtFDCWD, "/tmp/lock", vfs.O_RDONLY, 0)
			if p.Flock(ctx, b, kernel.LockSH) != nil || p.Flock(ctx, c, kernel.LockSH|kernel.LockNB) != nil {
				return 6
			}
			done := make(chan error, 1)
			go func() { done <- p.Flock(ctx, c, kernel.LockEX) }()
			time.Sleep(20 * time.Millisecond)
			_ = p.Flock(ctx, b, kernel.LockUN)
			if err := <-done; err != nil {
				return 7
			}
			return 0
		},
	})
	if st, _ := run(t, k, "locker"); st.ShellCode() != 0 {
		t.Fatalf("failed at step %d", st.ShellCode())
	}
}

// The per-VM descriptor limit (ENFILE) holds across processes.
func TestVMWideFDLimit(t *testing.T) {
	hold := make(chan struct{})
	opened := make(chan error, 8)
	k := newKernel(t, kernel.Limits{FDsPerProcess: 30, FDsPerVM: 40}, goLoader{
		"hog": func(ctx context.Context, p *kernel.Process) int {
			var err error
			for err == nil {
				_, err = p.Open(ctx, kernel.AtFDCWD, "/", vfs.O_RDONLY, 0)
			}
			opened <- err
			<-hold
			return 0
		},
	})
	ctx := context.Background()
	a, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/hog"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-opened; !errors.Is(err, errno.EMFILE) {
		t.Fatalf("first hog: %v", err)
	}
	b, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/hog"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-opened; !errors.Is(err, errno.ENFILE) {
		t.Fatalf("second hog: %v", err)
	}
	if n := k.OpenFDs(); n != 40 {
		t.Fatalf("open fds = %d, want the VM limit 40", n)
	}
	close(hold)
	_, _ = a.HostWait(ctx)
	_, _ = b.HostWait(ctx)
	if n := k.OpenFDs(); n != 0 {
		t.Fatalf("fds leaked: %d", n)
	}
}

// Limits.CPUTime ends a process with SIGXCPU, as RLIMIT_CPU does.
func TestCPUTimeLimit(t *testing.T) {
	k := newKernel(t, kernel.Limits{CPUTime: 50 * time.Millisecond}, goLoader{
		"spin": func(ctx context.Context, p *kernel.Process) int {
			<-ctx.Done()
			return 0
		},
		"quick": func(ctx context.Context, p *kernel.Process) int { return 3 },
	})
	st, _ := run(t, k, "spin")
	if st.Signal != kernel.SIGXCPU || st.ShellCode() != 128+24 {
		t.Fatalf("spin: %+v", st)
	}
	if st, _ := run(t, k, "quick"); !st.Exited || st.Code != 3 {
		t.Fatalf("quick: %+v", st)
	}
}

// With a CPU clock registered, the CPUTime limit counts CPU time: a
// process that waits outlives the limit, one that spins does not.
func TestCPUTimeLimitCountsCPU(t *testing.T) {
	k := newKernel(t, kernel.Limits{CPUTime: 100 * time.Millisecond}, goLoader{
		"waits": func(ctx context.Context, p *kernel.Process) int {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			clock, stop := kernel.ThreadCPUClock()
			defer stop()
			p.SetCPUClock(clock)
			select {
			case <-time.After(400 * time.Millisecond):
				return 0
			case <-ctx.Done():
				return 1
			}
		},
		"spins": func(ctx context.Context, p *kernel.Process) int {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			clock, stop := kernel.ThreadCPUClock()
			defer stop()
			p.SetCPUClock(clock)
			for ctx.Err() == nil {
			}
			return 0
		},
	})
	if st, _ := run(t, k, "waits"); !st.Exited || st.Code != 0 {
		t.Fatalf("waits: %+v", st)
	}
	if st, _ := run(t, k, "spins"); st.Signal != kernel.SIGXCPU {
		t.Fatalf("spins: %+v", st)
	}
}

// A parent that ignores SIGPIPE passes that on to its children, unless
// the spawn resets it (SigDefault), as node's child_process does.
func TestSigDefaultResetsIgnoredSignals(t *testing.T) {
	var withReset, inherited kernel.WaitStatus
	k := newKernel(t, kernel.Limits{}, goLoader{
		"victim": func(ctx context.Context, p *kernel.Process) int {
			_ = p.Signal(kernel.SIGPIPE)
			return 0 // reached only when SIGPIPE is ignored
		},
		"parent": func(ctx context.Context, p *kernel.Process) int {
			if _, err := p.SetDisposition(kernel.SIGPIPE, kernel.DispositionIgnore); err != nil {
				return 2
			}
			for i, opts := range []kernel.SpawnOptions{
				{Argv: []string{"/bin/victim"}, SigDefault: ^uint64(0)},
				{Argv: []string{"/bin/victim"}},
			} {
				c, err := p.Spawn(ctx, opts)
				if err != nil {
					return 3
				}
				_, st, err := p.Wait(ctx, c.PID(), 0)
				if err != nil {
					return 4
				}
				if i == 0 {
					withReset = st
				} else {
					inherited = st
				}
			}
			return 0
		},
	})
	ctx := context.Background()
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/parent"}})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := p.HostWait(ctx); st.ShellCode() != 0 {
		t.Fatalf("parent: %+v", st)
	}
	if withReset.Signal != kernel.SIGPIPE || inherited.Signal != 0 || inherited.ShellCode() != 0 {
		t.Fatalf("with reset %+v, inherited %+v", withReset, inherited)
	}
}

// PendingCaught names the signals TakeSignal would hand a process that
// catches them: pending, unblocked and caught; a blocked one waits and
// a default one is not the process's to take.
func TestPendingCaught(t *testing.T) {
	var got [4]uint64
	k := newKernel(t, kernel.Limits{}, goLoader{
		"catcher": func(ctx context.Context, p *kernel.Process) int {
			if _, err := p.SetDisposition(kernel.SIGUSR1, kernel.DispositionCatch); err != nil {
				return 2
			}
			if _, err := p.SetDisposition(kernel.SIGUSR2, kernel.DispositionCatch); err != nil {
				return 3
			}
			got[0] = p.PendingCaught()
			if _, err := p.SigMask(kernel.SigBlock, 1<<uint(kernel.SIGUSR2)); err != nil {
				return 4
			}
			_ = p.Signal(kernel.SIGUSR1)
			_ = p.Signal(kernel.SIGUSR2)
			got[1] = p.PendingCaught()
			if s, ok := p.TakeSignal(); !ok || s != kernel.SIGUSR1 {
				return 5
			}
			got[2] = p.PendingCaught()
			if _, err := p.SigMask(kernel.SigUnblock, 1<<uint(kernel.SIGUSR2)); err != nil {
				return 6
			}
			got[3] = p.PendingCaught()
			return 0
		},
	})
	ctx := context.Background()
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"/bin/catcher"}})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := p.HostWait(ctx); st.ShellCode() != 0 {
		t.Fatalf("catcher: %+v", st)
	}
	usr1, usr2 := uint64(1)<<uint(kernel.SIGUSR1), uint64(1)<<uint(kernel.SIGUSR2)
	if want := [4]uint64{0, usr1, 0, usr2}; got != want {
		t.Fatalf("PendingCaught: %#x, want %#x", got, want)
	}
}
