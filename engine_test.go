package secexec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/vmhost/vmhosttest"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// transports are the ways a VM can be reached; the suite below runs the
// same tests against each, and they must behave identically.
var transports = []struct {
	name string
	mode secexec.EngineMode
}{
	{"in-process", secexec.EngineInProcess},
	{"shared-engine", secexec.EngineShared},
	{"engine-per-vm", secexec.EnginePerVM},
}

// eachTransport runs fn once per transport; fn's newVM creates a VM with
// the test programs on that transport.
func eachTransport(t *testing.T, fn func(t *testing.T, newVM func(t *testing.T, opts secexec.Options) *secexec.VM)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			fn(t, func(t *testing.T, opts secexec.Options) *secexec.VM {
				t.Helper()
				opts.Engine = tr.mode
				v, err := secexec.NewVMWithTestPrograms(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = v.Close() })
				return v
			})
		})
	}
}

var allowAll = secexec.Options{Permissions: secexec.AllowAll()}

func TestSuiteFiles(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		f := newVM(t, secexec.Options{}).FS()
		// Larger than a protocol chunk, so it crosses in pieces.
		big := vmhosttest.Pattern(3<<20 + 17)
		if err := f.WriteFile(ctx, "big", big, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := f.ReadFile(ctx, "/workspace/big")
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("big file: %d bytes, %v", len(got), err)
		}
		// Empty files read back as empty, not nil-vs-error.
		if err := f.WriteFile(ctx, "empty", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := f.ReadFile(ctx, "empty"); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("empty file: %q %v", got, err)
		}
		// Names are bytes, not necessarily UTF-8.
		odd := "/workspace/\xff\xfe name"
		if err := f.WriteFile(ctx, odd, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		ents, err := f.ReadDir(ctx, "/workspace")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if strings.Join(names, "|") != "big|empty|\xff\xfe name" {
			t.Fatalf("readdir: %q", names)
		}
		info, err := ents[0].Info()
		if err != nil || info.Size() != int64(len(big)) || info.Mode().Perm() != 0o600 || info.ModTime().IsZero() {
			t.Fatalf("info: %v %v", info, err)
		}
		// Errors keep their types and text.
		_, err = f.ReadFile(ctx, "/nope/x")
		var pe *errno.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
			t.Fatalf("missing file: %#v", err)
		}
		if err := f.Mkdir(ctx, "/workspace/big/sub", 0o755); !errors.Is(err, errno.ENOTDIR) {
			t.Fatalf("mkdir under a file: %v", err)
		}
		if _, err := f.ReadFile(ctx, "/workspace"); !errors.Is(err, errno.EISDIR) {
			t.Fatalf("read a directory: %v", err)
		}
		if err := f.Symlink(ctx, "big", "/workspace/l"); err != nil {
			t.Fatal(err)
		}
		if s, err := f.Readlink(ctx, "/workspace/l"); err != nil || s != "big" {
			t.Fatalf("readlink %q %v", s, err)
		}
		if fi, err := f.Stat(ctx, "/workspace/l"); err != nil || fi.Size() != int64(len(big)) {
			t.Fatalf("stat through link: %v %v", fi, err)
		}
		if err := f.Chmod(ctx, "/workspace/big", 0o644|fs.ModeSticky); err != nil {
			t.Fatal(err)
		}
		if fi, _ := f.Lstat(ctx, "/workspace/big"); fi.Mode() != 0o644|fs.ModeSticky {
			t.Fatalf("chmod: %v", fi.Mode())
		}
		if err := f.Rename(ctx, "/workspace/big", "/workspace/moved"); err != nil {
			t.Fatal(err)
		}
		if err := f.RemoveAll(ctx, "/workspace"); err != nil {
			t.Fatal(err)
		}
		if err := f.Mount(ctx, secexec.Mount{Path: "/mnt/m"}); err != nil {
			t.Fatal(err)
		}
		if err := f.Unmount(ctx, "/mnt/m"); err != nil {
			t.Fatal(err)
		}
		if err := f.Unmount(ctx, "/mnt/m"); err == nil {
			t.Fatal("second unmount succeeded")
		}
	})
}

func TestSuiteQuotaAndMounts(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "in"), []byte("host"), 0o644); err != nil {
			t.Fatal(err)
		}
		v := newVM(t, secexec.Options{Limits: secexec.Limits{FSBytes: 1 << 20},
			Mounts: []secexec.Mount{{Path: "/mnt/host", HostDir: dir, ReadOnly: true}}, Hostname: "box"})
		if err := v.FS().WriteFile(ctx, "/workspace/x", make([]byte, 2<<20), 0o644); !errors.Is(err, errno.ENOSPC) {
			t.Fatalf("over quota: %v", err)
		}
		if b, err := v.FS().ReadFile(ctx, "/mnt/host/in"); err != nil || string(b) != "host" {
			t.Fatalf("host mount: %q %v", b, err)
		}
		if err := v.FS().WriteFile(ctx, "/mnt/host/new", nil, 0o644); !errors.Is(err, errno.EROFS) {
			t.Fatalf("ro mount: %v", err)
		}
		if b, _ := v.FS().ReadFile(ctx, "/etc/hostname"); string(b) != "box\n" {
			t.Fatalf("hostname %q", b)
		}
	})
}

func TestSuiteBadOptions(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			bad := &policy.Policy{FS: []policy.FSRule{{Effect: "maybe", Paths: []string{"/"}}}}
			_, err := secexec.NewVM(context.Background(), secexec.Options{Engine: tr.mode, Permissions: bad})
			if !errors.Is(err, policy.ErrInvalidPolicy) {
				t.Fatalf("bad policy: %v", err)
			}
			_, err = secexec.NewVM(context.Background(), secexec.Options{Engine: tr.mode,
				Mounts: []secexec.Mount{{Path: "relative"}}})
			if !errors.Is(err, errno.EINVAL) {
				t.Fatalf("bad mount: %v", err)
			}
		})
	}
}

func TestSuiteExec(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		v := newVM(t, allowAll)
		res, err := v.Exec(ctx, "vt-bytes", nil)
		if err != nil || res.ExitCode != 0 || res.Outcome != secexec.Succeeded ||
			!bytes.Equal(res.Stdout, vmhosttest.Pattern(256)) || string(res.Stderr) != "err\n" {
			t.Fatalf("bytes: %+v %v", res, err)
		}
		res, err = v.Exec(ctx, "vt-exit 3", nil)
		if err != nil || res.ExitCode != 3 || res.Outcome != secexec.Failed {
			t.Fatalf("exit 3: %+v %v", res, err)
		}
		res, err = v.Exec(ctx, "no-such-cmd", nil)
		if err != nil || res.ExitCode != 127 || string(res.Stderr) != "secexec: no-such-cmd: command not found\n" {
			t.Fatalf("not found: %+v %v", res, err)
		}
		var errBuf bytes.Buffer
		res, err = v.Exec(ctx, "no-such-cmd", &secexec.ExecOptions{Stderr: &errBuf})
		if err != nil || res.Stderr != nil || errBuf.String() != "secexec: no-such-cmd: command not found\n" {
			t.Fatalf("not found, streamed: %+v %q %v", res, errBuf.String(), err)
		}
		if _, err := v.Run(ctx, nil, nil); !errors.Is(err, errno.EINVAL) {
			t.Fatalf("empty argv: %v", err)
		}
		// Environment and working directory.
		if err := v.FS().MkdirAll(ctx, "/tmp/wd", 0o755); err != nil {
			t.Fatal(err)
		}
		res, _ = v.Exec(ctx, "vt-env", &secexec.ExecOptions{Cwd: "/tmp/wd", Env: map[string]string{"FOO": "bar"}})
		if env := "\n" + string(res.Stdout); !strings.Contains(env, "\nFOO=bar\n") || !strings.Contains(env, "\nPWD=/tmp/wd\n") {
			t.Fatalf("env: %q", res.Stdout)
		}
		// Stdin, larger than every window on the way.
		in := vmhosttest.Pattern(5<<20 + 3)
		res, err = v.Exec(ctx, "vt-cat", &secexec.ExecOptions{Stdin: bytes.NewReader(in)})
		if err != nil || !bytes.Equal(res.Stdout, in) {
			t.Fatalf("cat: %d bytes %v", len(res.Stdout), err)
		}
		res, _ = v.Exec(ctx, "vt-count", &secexec.ExecOptions{Stdin: strings.NewReader("")})
		if string(res.Stdout) != "0\n" {
			t.Fatalf("empty stdin: %q", res.Stdout)
		}
		res, _ = v.Exec(ctx, "vt-count", nil)
		if string(res.Stdout) != "0\n" {
			t.Fatalf("no stdin: %q", res.Stdout)
		}
		// A program that does not read its input still ends.
		res, err = v.Exec(ctx, "vt-exit 0", &secexec.ExecOptions{Stdin: io.LimitReader(zeros{}, 64<<20)})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("unread stdin: %+v %v", res, err)
		}
		// Output limits.
		res, _ = v.Exec(ctx, "vt-spew 100000", &secexec.ExecOptions{MaxOutput: 1000})
		if !res.Truncated || !bytes.Equal(res.Stdout, vmhosttest.Pattern(1000)) {
			t.Fatalf("truncation: %d %v", len(res.Stdout), res.Truncated)
		}
	})
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// slowWriter checks a stream's bytes against the pattern as they come,
// slowly, so that a fast guest must be held back by flow control.
type slowWriter struct {
	n     int
	calls int
	bad   bool
}

func (w *slowWriter) Write(p []byte) (int, error) {
	for i, b := range p {
		if b != byte(w.n+i) {
			w.bad = true
		}
	}
	w.n += len(p)
	w.calls++
	if w.calls%64 == 0 {
		time.Sleep(time.Millisecond)
	}
	return len(p), nil
}

func TestSuiteStreamedOutput(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		v := newVM(t, allowAll)
		out, errw := &slowWriter{}, &slowWriter{}
		const n = 48 << 20 // more than MaxOutput and the pipe: only flow control bounds memory
		res, err := v.Exec(context.Background(), "vt-spew "+strconv.Itoa(n), &secexec.ExecOptions{Stdout: out, Stderr: errw})
		if err != nil || res.ExitCode != 0 || out.n != n || out.bad || res.Stdout != nil || res.Truncated {
			t.Fatalf("streamed %d bytes (bad=%v): %+v %v", out.n, out.bad, res, err)
		}
	})
}

func TestSuiteTimeoutAndCancel(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		v := newVM(t, allowAll)
		res, err := v.Exec(context.Background(), "vt-sleep", &secexec.ExecOptions{Timeout: 50 * time.Millisecond})
		if err != nil || res.Outcome != secexec.TimedOut || res.ExitCode != 124 ||
			string(res.Stderr) != secexec.TimeLimitMessage+"\n" {
			t.Fatalf("timeout: %+v %v", res, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(20 * time.Millisecond)
			cancel()
		}()
		res, err = v.Exec(ctx, "vt-sleep", nil)
		if !errors.Is(err, context.Canceled) || res == nil || res.Outcome != secexec.Cancelled {
			t.Fatalf("cancel: %+v %v", res, err)
		}
		// The VM is still usable.
		if res, err := v.Exec(context.Background(), "vt-echo ok", nil); err != nil || string(res.Stdout) != "ok\n" {
			t.Fatalf("after cancel: %+v %v", res, err)
		}
	})
}

func TestSuiteSpawn(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		v := newVM(t, allowAll)
		p, err := v.Spawn(ctx, []string{"vt-cat"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Pid() < 2 {
			t.Fatalf("pid %d", p.Pid())
		}
		in := vmhosttest.Pattern(2<<20 + 1)
		go func() {
			_, _ = p.Stdin.Write(in)
			_ = p.Stdin.Close()
		}()
		var errOut []byte
		done := make(chan struct{})
		go func() {
			errOut, _ = io.ReadAll(p.Stderr)
			close(done)
		}()
		out, err := io.ReadAll(p.Stdout)
		<-done
		if err != nil || !bytes.Equal(out, in) || len(errOut) != 0 {
			t.Fatalf("cat: %d bytes, %v", len(out), err)
		}
		st, err := p.Wait(ctx)
		if err != nil || st.ExitCode != 0 {
			t.Fatalf("wait: %+v %v", st, err)
		}
		// Signals.
		p, err = v.Spawn(ctx, []string{"vt-sleep"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Signal(secexec.SIGKILL); err != nil {
			t.Fatal(err)
		}
		st, err = p.Wait(ctx)
		if err != nil || st.ExitCode != 137 || st.Signal != "SIGKILL" {
			t.Fatalf("killed: %+v %v", st, err)
		}
		if b, _ := io.ReadAll(p.Stdout); len(b) != 0 {
			t.Fatalf("stdout of killed: %q", b)
		}
		// Wait with a context that ends.
		p, _ = v.Spawn(ctx, []string{"vt-sleep"}, nil)
		wctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := p.Wait(wctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("wait cancelled: %v", err)
		}
		_ = p.Signal(secexec.SIGKILL)
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		// A reader that stops reading breaks the writer's pipe.
		p, _ = v.Spawn(ctx, []string{"vt-spew", "100000000"}, nil)
		buf := make([]byte, 1000)
		if _, err := io.ReadFull(p.Stdout, buf); err != nil || !bytes.Equal(buf, vmhosttest.Pattern(1000)) {
			t.Fatalf("first bytes: %v", err)
		}
		_ = p.Stdout.Close()
		st, err = p.Wait(ctx)
		if err != nil || st.ExitCode == 0 {
			t.Fatalf("writer to a closed pipe: %+v %v", st, err)
		}
		// Input after the process exited fails; a failed spawn is an error.
		p, _ = v.Spawn(ctx, []string{"vt-exit", "0"}, nil)
		_, _ = p.Wait(ctx)
		if _, err := io.ReadAll(p.Stdout); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Spawn(ctx, []string{"no-such-cmd"}, nil); !errors.Is(err, errno.ENOENT) {
			t.Fatalf("spawn missing: %v", err)
		}
	})
}

func TestSuiteAudit(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		events := make(chan secexec.AuditEvent, 16)
		v := newVM(t, secexec.Options{Audit: func(ev secexec.AuditEvent) { events <- ev }})
		res, err := v.Exec(context.Background(), "vt-echo hi", nil)
		if err != nil || res.ExitCode != 126 {
			t.Fatalf("denied exec: %+v %v", res, err)
		}
		ev := <-events
		if ev.Domain != policy.DomainExec || ev.Allowed || ev.Target != "/usr/bin/vt-echo" {
			t.Fatalf("audit: %+v", ev)
		}
	})
}

func TestSuiteClosed(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		v := newVM(t, allowAll)
		if v.Err() != nil {
			t.Fatal(v.Err())
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		<-v.Done()
		if !errors.Is(v.Err(), secexec.ErrClosed) {
			t.Fatalf("Err after close: %v", v.Err())
		}
		if _, err := v.FS().ReadFile(ctx, "/etc/passwd"); !errors.Is(err, secexec.ErrClosed) {
			t.Fatalf("read after close: %v", err)
		}
		if _, err := v.Exec(ctx, "vt-echo", nil); !errors.Is(err, secexec.ErrClosed) {
			t.Fatalf("exec after close: %v", err)
		}
		if _, err := v.Spawn(ctx, []string{"vt-echo"}, nil); !errors.Is(err, secexec.ErrClosed) {
			t.Fatalf("spawn after close: %v", err)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// --- engine process only ---

func newEngineVM(t *testing.T, mode secexec.EngineMode) *secexec.VM {
	t.Helper()
	v, err := secexec.NewVM(context.Background(), secexec.Options{Engine: mode, Permissions: secexec.AllowAll()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return v
}

func TestEngineTopologies(t *testing.T) {
	a, b := newEngineVM(t, secexec.EngineShared), newEngineVM(t, secexec.EngineShared)
	if secexec.EnginePID(a) == 0 || secexec.EnginePID(a) != secexec.EnginePID(b) {
		t.Fatalf("shared engine pids %d %d", secexec.EnginePID(a), secexec.EnginePID(b))
	}
	c, d := newEngineVM(t, secexec.EnginePerVM), newEngineVM(t, secexec.EnginePerVM)
	pc, pd := secexec.EnginePID(c), secexec.EnginePID(d)
	if pc == pd || pc == secexec.EnginePID(a) || pc == os.Getpid() {
		t.Fatalf("per-VM engine pids %d %d", pc, pd)
	}
	// Closing a VM with its own engine ends that engine.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pc, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("engine %d still there after Close: %v", pc, err)
	}
	if _, err := d.Exec(context.Background(), "vt-echo", nil); err != nil {
		t.Fatal(err)
	}
}

func TestEngineKilledMidExec(t *testing.T) {
	ctx := context.Background()
	v := newEngineVM(t, secexec.EngineShared)
	other := newEngineVM(t, secexec.EngineShared)
	oldPID := secexec.EnginePID(v)
	p, err := other.Spawn(ctx, []string{"vt-sleep"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	type result struct {
		res *secexec.Result
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		close(started)
		r, err := v.Exec(ctx, "vt-sleep", nil)
		done <- result{r, err, time.Now()}
	}()
	<-started
	// Wait until the exec is running in the engine.
	for {
		b, err := v.FS().ReadFile(ctx, "/proc/2/cmdline")
		if err == nil && strings.HasPrefix(string(b), "vt-sleep") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	killed := time.Now()
	if err := secexec.KillEngine(v); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !errors.Is(r.err, secexec.ErrEngineLost) || r.res != nil {
		t.Fatalf("exec on a killed engine: %+v %v", r.res, r.err)
	}
	var le *secexec.EngineLostError
	if !errors.As(r.err, &le) || !strings.Contains(le.Error(), "killed") || le.Reason != secexec.EngineKilled {
		t.Fatalf("lost error: %v", r.err)
	}
	if d := r.at.Sub(killed); d > time.Second {
		t.Fatalf("the pending exec failed %v after the kill, want < 1s", d)
	}
	// Every VM on the engine reports it, and so does everything of theirs.
	<-other.Done()
	if !errors.Is(other.Err(), secexec.ErrEngineLost) {
		t.Fatalf("other VM: %v", other.Err())
	}
	if _, err := p.Wait(ctx); !errors.Is(err, secexec.ErrEngineLost) {
		t.Fatalf("wait: %v", err)
	}
	if _, err := p.Stdout.Read(make([]byte, 1)); !errors.Is(err, secexec.ErrEngineLost) {
		t.Fatalf("read: %v", err)
	}
	if _, err := other.FS().Stat(ctx, "/"); !errors.Is(err, secexec.ErrEngineLost) {
		t.Fatalf("stat: %v", err)
	}
	if err := other.Close(); err != nil {
		t.Fatalf("close of a lost VM: %v", err)
	}
	// The next VM gets a fresh engine.
	fresh := newEngineVM(t, secexec.EngineShared)
	if pid := secexec.EnginePID(fresh); pid == oldPID || pid == 0 {
		t.Fatalf("fresh engine pid %d (old %d)", pid, oldPID)
	}
	if res, err := fresh.Exec(ctx, "vt-echo alive", nil); err != nil || string(res.Stdout) != "alive\n" {
		t.Fatalf("fresh engine: %+v %v", res, err)
	}
}

func TestEngineManyVMs(t *testing.T) {
	const n = 100
	ctx := context.Background()
	pids := make([]int, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	vms := make([]*secexec.VM, n)
	procs := make([]*secexec.Process, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
			if err != nil {
				errs <- err
				return
			}
			vms[i] = v
			pids[i] = secexec.EnginePID(v)
			name := fmt.Sprintf("/workspace/f%d", i)
			data := []byte(strings.Repeat(strconv.Itoa(i), 1000))
			if err := v.FS().WriteFile(ctx, name, data, 0o644); err != nil {
				errs <- err
				return
			}
			// A process left in flight while the others work.
			p, err := v.Spawn(ctx, []string{"vt-sleep"}, nil)
			if err != nil {
				errs <- err
				return
			}
			procs[i] = p
			res, err := v.Exec(ctx, "vt-cat", &secexec.ExecOptions{Stdin: bytes.NewReader(data)})
			if err != nil || !bytes.Equal(res.Stdout, data) {
				errs <- fmt.Errorf("vm %d: exec: %v %v", i, res, err)
				return
			}
			if res, err := v.Exec(ctx, "true", nil); err != nil || (res.ExitCode != 0 && res.ExitCode != 127) {
				errs <- fmt.Errorf("vm %d: true: %v %v", i, res, err)
				return
			}
			got, err := v.FS().ReadFile(ctx, name)
			if err != nil || !bytes.Equal(got, data) {
				errs <- fmt.Errorf("vm %d: read back: %v", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	for i := range n {
		if pids[i] != pids[0] || pids[i] == 0 {
			t.Fatalf("VM %d on engine %d, VM 0 on %d", i, pids[i], pids[0])
		}
		// Each VM sees its own files only.
		if _, err := vms[i].FS().Stat(ctx, fmt.Sprintf("/workspace/f%d", (i+1)%n)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("VM %d sees another VM's file: %v", i, err)
		}
		_ = procs[i].Signal(secexec.SIGKILL)
		if st, err := procs[i].Wait(ctx); err != nil || st.Signal != "SIGKILL" {
			t.Fatalf("VM %d: %+v %v", i, st, err)
		}
		if err := vms[i].Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// engineStatus reads a /proc status field of every thread of an engine.
func engineStatus(t *testing.T, pid int, field string) []string {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue // the thread just exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}

func TestEngineHardening(t *testing.T) {
	// A descriptor this process leaks to its children by mistake (no
	// close-on-exec) must not stay open in the engine.
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(p[0]), "r")
	syscall.CloseOnExec(p[0])
	defer r.Close()
	v := newEngineVM(t, secexec.EnginePerVM)
	_ = syscall.Close(p[1])
	// Only the engine could still hold the write end: EOF proves it does not.
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("leaked descriptor still open in the engine: %d %v", n, err)
	}
	pid := secexec.EnginePID(v)
	for _, tc := range []struct{ field, want string }{
		{"NoNewPrivs", "1"},
		{"Seccomp", "2"},
	} {
		got := engineStatus(t, pid, tc.field)
		if len(got) == 0 {
			t.Fatalf("%s: no threads", tc.field)
		}
		for _, g := range got {
			if g != tc.want {
				t.Fatalf("%s = %v, want %s on every thread", tc.field, got, tc.want)
			}
		}
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(line, "Max core file size") && !strings.Contains(line, " 0 ") {
			t.Fatalf("core dumps allowed: %q", line)
		}
	}
	st, err := os.Stat(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil || st.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Fatalf("engine is dumpable: %v", err)
	}
	// Its environment holds no token: the token came through a pipe
	// (proto.TokenFD). /proc/PID/environ shows the environment the process
	// started with, whatever it unset since; reading it needs root, as the
	// engine is not dumpable.
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("reading the engine's environ (needs root): %v", err)
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if k, _, _ := strings.Cut(kv, "="); strings.Contains(strings.ToUpper(k), "TOKEN") {
			t.Errorf("engine environment holds %q", k)
		}
	}
	if len(env) == 0 {
		t.Error("empty environ: the check read nothing")
	}
}

// BenchmarkExecTransport measures what the engine process adds to an
// Exec: the same trivial program in process and through the engine.
func BenchmarkExecTransport(b *testing.B) {
	for _, tr := range transports {
		for _, cmd := range []string{"vt-exit 0", "true"} {
			b.Run(tr.name+"/"+cmd, func(b *testing.B) {
				opts := secexec.Options{Engine: tr.mode, Permissions: secexec.AllowAll()}
				v, err := secexec.NewVMWithTestPrograms(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				defer v.Close()
				ctx := context.Background()
				if _, err := v.Exec(ctx, cmd, nil); err != nil { // warm caches
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if _, err := v.Exec(ctx, cmd, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A V8 fatal out-of-memory error (one allocation far past the heap limit
// aborts the whole process, which no isolate setting prevents) kills at
// most its engine: the caller gets a typed error, VMs on other engines
// carry on, and the next VM gets a fresh engine.
func TestV8FatalOOMLosesOnlyItsEngine(t *testing.T) {
	ctx := context.Background()
	bystander := newEngineVM(t, secexec.EnginePerVM)
	victim := newEngineVM(t, secexec.EnginePerVM)
	res, err := victim.Exec(ctx, `node -e 'new Array(2e8).fill(1.5)'`, nil)
	if !errors.Is(err, secexec.ErrEngineLost) {
		t.Fatalf("fatal OOM: result %+v, err %v; want ErrEngineLost", res, err)
	}
	var lost *secexec.EngineLostError
	if !errors.As(err, &lost) {
		t.Fatalf("error %T is not an EngineLostError", err)
	}
	if lost.Reason != secexec.EngineOutOfMemory {
		t.Fatalf("reason %q (%v), want %q", lost.Reason, err, secexec.EngineOutOfMemory)
	}
	if _, err := victim.Exec(ctx, "true", nil); !errors.Is(err, secexec.ErrEngineLost) {
		t.Fatalf("the lost VM still answers: %v", err)
	}
	if r, err := bystander.Exec(ctx, "echo alive", nil); err != nil || string(r.Stdout) != "alive\n" {
		t.Fatalf("bystander: %v %v", r, err)
	}
	fresh := newEngineVM(t, secexec.EnginePerVM)
	if r, err := fresh.Exec(ctx, `node -e 'console.log(1)'`, nil); err != nil || string(r.Stdout) != "1\n" {
		t.Fatalf("fresh VM: %v %v", r, err)
	}
}

// The VM's per-process limits end a guest in its typed result, on every
// transport, and the next command in the same VM works.
func TestSuitePerProcessLimits(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(t *testing.T, opts secexec.Options) *secexec.VM) {
		ctx := context.Background()
		opts := allowAll
		opts.Limits = secexec.Limits{MemoryBytes: 32 << 20, CPUTime: 2 * time.Second}
		v := newVM(t, opts)
		// CPU time: the spinning process gets SIGXCPU and Exec reports 124.
		res, err := v.Exec(ctx, `node -e 'for (;;) {}'`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 124 || res.Outcome != secexec.TimedOut || !strings.Contains(string(res.Stderr), secexec.TimeLimitMessage) {
			t.Fatalf("cpu limit: %d %s %q", res.ExitCode, res.Outcome, res.Stderr)
		}
		// Memory: a V8 heap past the VM's limit, and a WebAssembly memory.
		res, err = v.Exec(ctx, `node -e 'const a = []; for (;;) a.push(new Array(1e5).fill(1))'`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || res.Outcome != secexec.Failed {
			t.Fatalf("heap limit: %d %s %q", res.ExitCode, res.Outcome, res.Stderr)
		}
		res, err = v.Exec(ctx, `awk 'BEGIN { s = "x"; for (;;) s = s s }'`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || res.Outcome != secexec.Failed {
			t.Fatalf("wasm memory limit: %d %s %q", res.ExitCode, res.Outcome, res.Stderr)
		}
		res, err = v.Exec(ctx, `echo still here`, nil)
		if err != nil || string(res.Stdout) != "still here\n" {
			t.Fatalf("after the limits: %v %v", res, err)
		}
	})
}

// In every lane (in process, the shared engine, an engine per VM; WASM
// and node; direct and through the shell), a process that writes 64 KiB
// and exits at once delivers every byte before its exit is reported.
func TestSuiteFastExitOutput(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		v := newVM(t, allowAll)
		for _, cmd := range []string{
			`head -c 65536 /dev/zero`,
			`sh -c 'head -c 65536 /dev/zero'`,
			`node -e 'process.stdout.write("x".repeat(65536))'`,
			`node -e 'require("fs").writeSync(1, "y".repeat(65536)); process.exit(0)'`,
		} {
			for i := 0; i < 10; i++ {
				res, err := v.Exec(ctx, cmd, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.ExitCode != 0 || len(res.Stdout) != 65536 {
					t.Fatalf("%s run %d: exit %d, %d bytes, stderr %q", cmd, i, res.ExitCode, len(res.Stdout), res.Stderr)
				}
			}
		}
	})
}

// node's clock is frozen per process unless the VM asks for the real one.
func TestSuiteRealTime(t *testing.T) {
	const probe = `node -e 'const a = Date.now(), p = performance.now(); let x = 0; for (let i = 0; i < 3e6; i++) x += i; console.log(Date.now() === a && performance.now() === p)'`
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		for _, real := range []bool{false, true} {
			opts := allowAll
			opts.RealTime = real
			res, err := newVM(t, opts).Exec(ctx, probe, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.TrimSpace(string(res.Stdout)), fmt.Sprint(!real); got != want {
				t.Errorf("RealTime %v: frozen = %s, want %s (stderr %q)", real, got, want, res.Stderr)
			}
		}
	})
}
