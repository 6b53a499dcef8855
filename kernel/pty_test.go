package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/devfs"
	"github.com/secexec/secexec/kernel/tty"
	"github.com/secexec/secexec/kernel/vfs"
)

// term is the host's side of a PTY in these tests: it types on the
// master and collects what the terminal shows.
type term struct {
	t      *testing.T
	master vfs.File
	pty    *kernel.PTY
	mu     sync.Mutex
	screen bytes.Buffer
	done   chan struct{}
}

// openTerm allocates a PTY and starts argv as the leader of a new session
// on it, the way vmhost does for Spawn with a terminal.
func openTerm(t *testing.T, k *kernel.Kernel, argv ...string) (*term, *kernel.Process) {
	t.Helper()
	m, s, pty, err := k.NewPTY(tty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{
		Argv: argv, Env: []string{"PATH=/bin"}, Files: []vfs.File{s, s, s}, Setsid: true, Terminal: s,
	})
	s.DecRef()
	if err != nil {
		m.DecRef()
		t.Fatalf("spawn %v on a terminal: %v", argv, err)
	}
	tm := &term{t: t, master: m, pty: pty, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(context.Background(), buf)
			tm.mu.Lock()
			tm.screen.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = p.Signal(kernel.SIGKILL)
		_, _ = p.HostWait(context.Background())
		tm.close()
	})
	return tm, p
}

var closeOnce sync.Map

func (tm *term) close() {
	if _, dup := closeOnce.LoadOrStore(tm, true); !dup {
		tm.master.DecRef()
	}
}

func (tm *term) typ(keys string) {
	tm.t.Helper()
	if _, err := tm.master.Write(context.Background(), []byte(keys)); err != nil {
		tm.t.Fatalf("typing %q: %v", keys, err)
	}
}

func (tm *term) text() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.screen.String()
}

// waitFor waits (generously) until the screen shows want.
func (tm *term) waitFor(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(tm.text(), want) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal never showed %q; it shows %q", want, tm.text())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func waitState(t *testing.T, p *kernel.Process, want kernel.State) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.State() != want {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d in state %c, want %c", p.PID(), p.State(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func hostWait(t *testing.T, p *kernel.Process) kernel.WaitStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := p.HostWait(ctx)
	if err != nil {
		t.Fatalf("pid %d did not exit: %v", p.PID(), err)
	}
	return st
}

// ptyPrograms are the guest programs of the PTY tests.
func ptyPrograms() goLoader {
	return goLoader{
		// lines echoes what each read returns until end of file.
		"lines": func(ctx context.Context, p *kernel.Process) int {
			write(ctx, p, 1, "ready\n")
			buf := make([]byte, 256)
			for {
				n, err := p.Read(ctx, 0, buf)
				if err != nil {
					write(ctx, p, 1, "error "+errno.Of(err).Error()+"\n")
					return 1
				}
				if n == 0 {
					write(ctx, p, 1, "EOF\n")
					return 0
				}
				write(ctx, p, 1, fmt.Sprintf("got[%q]\n", buf[:n]))
			}
		},
		"sleeper": func(ctx context.Context, p *kernel.Process) int {
			write(ctx, p, 1, "sleeping\n")
			_ = p.Sleep(ctx, time.Hour)
			return 0
		},
	}
}

func TestPTYCanonicalInputEchoAndEOF(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, ptyPrograms())
	tm, p := openTerm(t, k, "lines")
	tm.waitFor("ready\r\n")
	tm.typ("ecgo\x7f\x7fho hi\r")
	tm.waitFor(`got["echo hi\n"]`)
	if !strings.Contains(tm.text(), "ecgo\b \b\b \bho hi\r\n") {
		t.Fatalf("echo with erase and CR-LF missing: %q", tm.text())
	}
	tm.typ("abc\x15xyz\x04")
	tm.waitFor(`got["xyz"]`)
	tm.typ("\x04")
	tm.waitFor("EOF\r\n")
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("status %d", st.ShellCode())
	}
}

func TestPTYRawModePassesKeysThrough(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, ptyPrograms())
	tm, p := openTerm(t, k, "lines")
	tm.waitFor("ready")
	if err := p.SetTerminalRaw(0, true); err != nil {
		t.Fatal(err)
	}
	tm.typ("\x03")
	// node's setRawMode is libuv's: output processing stays on, so the
	// program's "\n" still reaches the screen as "\r\n".
	tm.waitFor(`got["\x03"]` + "\r\n")
	if p.State() == kernel.StateZombie {
		t.Fatal("^C in raw mode killed the process")
	}
	tm.typ("\x1b[A")
	tm.waitFor(`got["\x1b[A"]`)
}

func TestPTYSignalCharactersReachForegroundGroup(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, ptyPrograms())
	for _, c := range []struct {
		key  string
		sig  kernel.Signal
		core bool
	}{{"\x03", kernel.SIGINT, false}, {"\x1c", kernel.SIGQUIT, true}} {
		tm, p := openTerm(t, k, "sleeper")
		tm.waitFor("sleeping")
		tm.typ(c.key)
		st := hostWait(t, p)
		if st.Signal != c.sig || st.CoreDump != c.core {
			t.Fatalf("%q: status %+v, want death by %v (core %v)", c.key, st, c.sig, c.core)
		}
	}
	// ^Z stops the job; it runs on after SIGCONT.
	tm, p := openTerm(t, k, "sleeper")
	tm.waitFor("sleeping")
	tm.typ("\x1a")
	waitState(t, p, kernel.StateStopped)
	_ = p.Signal(kernel.SIGCONT)
	waitState(t, p, kernel.StateRunning)
}

// jobctl is a shell in miniature: it runs sleeper as a job in a group of
// its own, in the foreground, and takes the terminal back when the job
// ends.
func jobctl(ctx context.Context, p *kernel.Process) int {
	_, _ = p.SetDisposition(kernel.SIGTTOU, kernel.DispositionIgnore)
	c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"sleeper"}, NewGroup: true})
	if err != nil {
		return 1
	}
	if err := p.Tcsetpgrp(0, c.PID()); err != nil {
		return 2
	}
	if g, err := p.Tcgetpgrp(0); err != nil || g != c.PID() {
		return 3
	}
	_, st, err := p.Wait(ctx, c.PID(), 0)
	if err != nil {
		return 4
	}
	if err := p.Tcsetpgrp(0, p.PGID()); err != nil {
		return 5
	}
	write(ctx, p, 1, "job ended by "+st.Signal.String()+"\n")
	buf := make([]byte, 64)
	n, err := p.Read(ctx, 0, buf)
	if err != nil {
		return 6
	}
	write(ctx, p, 1, fmt.Sprintf("shell read %q\n", buf[:n]))
	return 0
}

func TestPTYJobControlForegroundGroup(t *testing.T) {
	progs := ptyPrograms()
	progs["jobctl"] = jobctl
	k := newKernel(t, kernel.Limits{}, progs)
	tm, p := openTerm(t, k, "jobctl")
	tm.waitFor("sleeping")
	tm.typ("\x03")
	tm.waitFor("job ended by SIGINT")
	tm.typ("ok\n")
	tm.waitFor(`shell read "ok\n"`)
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("the shell failed at step %d (or was hit by the job's ^C)", st.ShellCode())
	}
}

func TestPTYBackgroundReadGetsSIGTTIN(t *testing.T) {
	progs := ptyPrograms()
	var ignoredErr error
	var mu sync.Mutex
	progs["bgread"] = func(ctx context.Context, p *kernel.Process) int {
		buf := make([]byte, 8)
		_, err := p.Read(ctx, 0, buf)
		if p.Argv()[len(p.Argv())-1] == "ignore" {
			mu.Lock()
			ignoredErr = err
			mu.Unlock()
		}
		return 0
	}
	progs["bgshell"] = func(ctx context.Context, p *kernel.Process) int {
		c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"bgread"}, NewGroup: true})
		if err != nil {
			return 1
		}
		_, st, err := p.Wait(ctx, c.PID(), kernel.WUNTRACED)
		if err != nil || !st.Stopped {
			return 2
		}
		if c.Pending()&(1<<uint(kernel.SIGTTIN)) != 0 {
			return 3
		}
		_ = p.Kill(c.PID(), kernel.SIGKILL)
		_, _, _ = p.Wait(ctx, c.PID(), 0)
		// A background reader that ignores SIGTTIN gets EIO instead.
		c, err = p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"bgread", "ignore"}, NewGroup: true, SigMask: 1 << uint(kernel.SIGTTIN)})
		if err != nil {
			return 4
		}
		if _, st, err = p.Wait(ctx, c.PID(), 0); err != nil || !st.Exited {
			return 5
		}
		write(ctx, p, 1, "done\n")
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)
	tm, p := openTerm(t, k, "bgshell")
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("bgshell failed at step %d", st.ShellCode())
	}
	tm.waitFor("done")
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(ignoredErr, errno.EIO) {
		t.Fatalf("a background read with SIGTTIN blocked returned %v, want EIO", ignoredErr)
	}
}

func TestPTYResizeSendsSIGWINCH(t *testing.T) {
	progs := ptyPrograms()
	progs["winch"] = func(ctx context.Context, p *kernel.Process) int {
		if _, err := p.SetDisposition(kernel.SIGWINCH, kernel.DispositionCatch); err != nil {
			return 1
		}
		ch := p.CaughtSignals()
		ws, err := p.TerminalSize(1)
		if err != nil {
			return 2
		}
		write(ctx, p, 1, fmt.Sprintf("size %dx%d\n", ws.Rows, ws.Cols))
		select {
		case <-ch:
		case <-ctx.Done():
			return 3
		}
		if s, ok := p.TakeSignal(); !ok || s != kernel.SIGWINCH {
			return 4
		}
		ws, _ = p.TerminalSize(0)
		write(ctx, p, 1, fmt.Sprintf("winch %dx%d\n", ws.Rows, ws.Cols))
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)
	tm, p := openTerm(t, k, "winch")
	tm.waitFor("size 24x80")
	tm.pty.Resize(50, 132)
	tm.waitFor("winch 50x132")
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("winch failed at step %d", st.ShellCode())
	}
}

func TestPTYHangupAndLeaderExit(t *testing.T) {
	progs := ptyPrograms()
	progs["nohup"] = func(ctx context.Context, p *kernel.Process) int {
		_, _ = p.SetDisposition(kernel.SIGHUP, kernel.DispositionIgnore)
		write(ctx, p, 1, "ready\n")
		n, err := p.Read(ctx, 0, make([]byte, 8))
		if n != 0 || err != nil {
			return 1
		}
		if _, err := p.Write(ctx, 1, []byte("x")); !errors.Is(err, errno.EIO) {
			return 2
		}
		return 0
	}
	var child sync.Map
	progs["leader"] = func(ctx context.Context, p *kernel.Process) int {
		c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"sleeper"}})
		if err != nil {
			return 1
		}
		child.Store("pid", c)
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)

	// Closing the master: end of file for readers, EIO for writers.
	tm, p := openTerm(t, k, "nohup")
	tm.waitFor("ready")
	tm.close()
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("after hang-up, step %d failed", st.ShellCode())
	}

	// The session leader's exit hangs up its foreground job.
	_, p = openTerm(t, k, "leader")
	hostWait(t, p)
	v, ok := child.Load("pid")
	if !ok {
		t.Fatal("leader started no child")
	}
	c := v.(*kernel.Process)
	<-c.Done()
	if st, _ := c.ExitStatus(); st.Signal != kernel.SIGHUP {
		t.Fatalf("the job left on the terminal ended with %+v, want SIGHUP", st)
	}
}

func TestPTYControllingTerminalRules(t *testing.T) {
	progs := ptyPrograms()
	progs["check"] = func(ctx context.Context, p *kernel.Process) int {
		if !p.IsTerminal(0) {
			return 1
		}
		st, err := p.Fstat(ctx, 0)
		if err != nil || st.Type() != vfs.TypeCharDev {
			return 2
		}
		r, w, err := p.Pipe(0)
		if err != nil {
			return 3
		}
		if _, err := p.Tcgetpgrp(r); !errors.Is(err, errno.ENOTTY) || p.IsTerminal(w) {
			return 4
		}
		if g, err := p.Tcgetpgrp(0); err != nil || g != p.PID() {
			return 5
		}
		if err := p.Tcsetpgrp(0, 99999); !errors.Is(err, errno.EPERM) {
			return 6
		}
		write(ctx, p, 1, "ok "+strconv.Itoa(p.SID())+"\n")
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)
	tm, p := openTerm(t, k, "check")
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("check failed at step %d", st.ShellCode())
	}
	tm.waitFor(fmt.Sprintf("ok %d", p.PID()))

	// A terminal needs a new session, and one session at a time owns it.
	tm2, p2 := openTerm(t, k, "sleeper")
	tm2.waitFor("sleeping")
	s := tm2.master
	if _, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"sleeper"}, Env: []string{"PATH=/bin"}, Terminal: s}); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("Terminal without Setsid: %v, want EINVAL", err)
	}
	if _, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"sleeper"}, Env: []string{"PATH=/bin"}, Setsid: true, Terminal: s}); !errors.Is(err, errno.EPERM) {
		t.Fatalf("a second session took a terminal in use: %v, want EPERM", err)
	}
	_ = p2.Signal(kernel.SIGKILL)
}

func TestPTYLimit(t *testing.T) {
	k := newKernel(t, kernel.Limits{PTYs: 2}, ptyPrograms())
	var files []vfs.File
	for range 2 {
		m, s, _, err := k.NewPTY(tty.Winsize{})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m, s)
	}
	if _, _, _, err := k.NewPTY(tty.Winsize{}); !errors.Is(err, errno.EAGAIN) {
		t.Fatalf("a third PTY over a limit of 2: %v, want EAGAIN", err)
	}
	files[0].DecRef()
	files[1].DecRef()
	m, s, pty, err := k.NewPTY(tty.Winsize{})
	if err != nil {
		t.Fatalf("a PTY after one was released: %v", err)
	}
	if pty.Index() != 0 || s.Path() != "/dev/pts/0" {
		t.Fatalf("the freed index was not reused: %d %s", pty.Index(), s.Path())
	}
	for _, f := range append(files[2:], m, s) {
		f.DecRef()
	}
}

// A guest that floods its terminal while nobody reads the screen, or a
// host that types without end while the guest does not read, cannot make
// the kernel buffer more than the terminal's bounds.
func TestPTYBuffersAreBounded(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, ptyPrograms())
	m, s, _, err := k.NewPTY(tty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer m.DecRef()
	defer s.DecRef()
	ctx := context.Background()
	if err := s.SetFlags(vfs.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 4096)
	total := 0
	for {
		n, err := s.Write(ctx, chunk)
		total += n
		if errors.Is(err, errno.EAGAIN) {
			break
		}
		if err != nil || total > 1<<20 {
			t.Fatalf("after %d bytes: %v", total, err)
		}
	}
	if total != tty.DefaultOutputMax {
		t.Fatalf("the unread screen took %d bytes, want the bound %d", total, tty.DefaultOutputMax)
	}
	// A blocking writer waits, and goes on once the screen is read.
	if err := s.SetFlags(0); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := s.Write(ctx, []byte("after"))
		wrote <- err
	}()
	buf := make([]byte, 64<<10)
	if _, err := m.Read(ctx, buf); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("blocked writer: %v", err)
	}

	// Typing 1 MiB without a newline never blocks the host, and the guest
	// gets at most one bounded line.
	if _, err := m.Write(ctx, bytes.Repeat([]byte("y"), 1<<20)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(ctx, []byte("\n")); err != nil {
		t.Fatal(err)
	}
	n, err := s.Read(ctx, buf)
	if err != nil || n != tty.DefaultInputMax || buf[n-1] != '\n' {
		t.Fatalf("read %d bytes (%v), want one line of %d ending in a newline", n, err, tty.DefaultInputMax)
	}
}

// /dev/tty is the caller's controlling terminal and /dev/pts lists the
// terminals; opening /dev/pts/N by a session leader without a terminal
// makes it its controlling terminal.
func TestPTYDevices(t *testing.T) {
	progs := ptyPrograms()
	progs["devtty"] = func(ctx context.Context, p *kernel.Process) int {
		fd, err := p.Open(ctx, kernel.AtFDCWD, "/dev/tty", vfs.O_RDWR, 0)
		if err != nil {
			return 1
		}
		if !p.IsTerminal(fd) {
			return 2
		}
		write(ctx, p, fd, "via /dev/tty\n")
		dir, err := p.Open(ctx, kernel.AtFDCWD, "/dev/pts", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			return 3
		}
		ents, err := p.ReadDir(ctx, dir, 100)
		if err != nil {
			return 4
		}
		var names []string
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				names = append(names, e.Name)
			}
		}
		write(ctx, p, 1, "pts: "+strings.Join(names, ",")+"\n")
		return 0
	}
	progs["notty"] = func(ctx context.Context, p *kernel.Process) int {
		if _, err := p.Open(ctx, kernel.AtFDCWD, "/dev/tty", vfs.O_RDWR, 0); !errors.Is(err, errno.ENXIO) {
			return 1
		}
		if _, err := p.Open(ctx, kernel.AtFDCWD, "/dev/pts/7", vfs.O_RDWR, 0); !errors.Is(err, errno.ENOENT) {
			return 2
		}
		// A new session leader opening a terminal gets it as its own.
		if _, err := p.Setsid(); err != nil {
			return 3
		}
		fd, err := p.Open(ctx, kernel.AtFDCWD, "/dev/pts/"+p.Argv()[1], vfs.O_RDWR, 0)
		if err != nil {
			return 4
		}
		if g, err := p.Tcgetpgrp(fd); err != nil || g != p.PID() {
			return 5
		}
		write(ctx, p, fd, "acquired\n")
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)
	if err := k.VFS().Mkdir(context.Background(), vfs.Root, "/dev", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := k.VFS().Mount(context.Background(), vfs.Root, "/dev", devfs.New(devfs.Options{Terminals: k.Terminals()}), vfs.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	tm, p := openTerm(t, k, "devtty")
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("devtty failed at step %d", st.ShellCode())
	}
	tm.waitFor("via /dev/tty\r\n")
	tm.waitFor(fmt.Sprintf("pts: %d\r\n", tm.pty.Index()))

	m, s, pty, err := k.NewPTY(tty.Winsize{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.DecRef()
	s.DecRef()
	out, w := capture(t, k)
	q, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"notty", strconv.Itoa(pty.Index())}, Env: []string{"PATH=/bin"}, Files: []vfs.File{nil, w, w}})
	w.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	if st := hostWait(t, q); st.ShellCode() != 0 {
		t.Fatalf("notty failed at step %d: %s", st.ShellCode(), out.String())
	}
	buf := make([]byte, 64)
	n, _ := m.Read(context.Background(), buf)
	if string(buf[:n]) != "acquired\r\n" {
		t.Fatalf("the master read %q", buf[:n])
	}
}

// The shell that edits lines in raw mode is spared the signal
// characters; the jobs it runs, and a program it execs into, are not.
func TestPTYTerminalShellShelter(t *testing.T) {
	progs := ptyPrograms()
	progs["editor"] = func(ctx context.Context, p *kernel.Process) int {
		p.SetTerminalShell(true)
		write(ctx, p, 1, "editing\n")
		_ = p.Sleep(ctx, 300*time.Millisecond)
		// Still here after the ^C the test typed meanwhile.
		write(ctx, p, 1, "survived\n")
		p.SetImage("/bin/sleeper", []string{"sleeper"}, nil)
		write(ctx, p, 1, "exec'd\n")
		_ = p.Sleep(ctx, time.Hour)
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)
	tm, p := openTerm(t, k, "editor")
	tm.waitFor("editing")
	tm.typ("\x03")
	tm.waitFor("exec'd")
	tm.typ("\x03")
	if st := hostWait(t, p); st.Signal != kernel.SIGINT {
		t.Fatalf("after exec, ^C left status %+v, want death by SIGINT", st)
	}
	if !strings.Contains(tm.text(), "survived") {
		t.Fatalf("the shell did not survive the first ^C: %q", tm.text())
	}
}

// A guest makes a terminal of its own: /dev/ptmx opens a new master,
// /proc/self/fdinfo names its index (there is no TIOCGPTN), /dev/pts/N
// opens the slave, and the line discipline runs between them. Opens past
// the VM's terminal limit fail with EAGAIN.
func TestPTYFromDevPtmx(t *testing.T) {
	progs := ptyPrograms()
	progs["ptmx"] = func(ctx context.Context, p *kernel.Process) int {
		m, err := p.Open(ctx, kernel.AtFDCWD, "/dev/ptmx", vfs.O_RDWR|vfs.O_NOCTTY, 0)
		if err != nil {
			return 1
		}
		if !p.IsTerminal(m) {
			return 2
		}
		info, err := p.Open(ctx, kernel.AtFDCWD, "/proc/self/fdinfo/"+strconv.Itoa(m), vfs.O_RDONLY, 0)
		if err != nil {
			return 3
		}
		buf := make([]byte, 512)
		n, _ := p.Read(ctx, info, buf)
		_, idx, ok := strings.Cut(string(buf[:n]), "tty-index:\t")
		if !ok {
			return 4
		}
		idx, _, _ = strings.Cut(idx, "\n")
		s, err := p.Open(ctx, kernel.AtFDCWD, "/dev/pts/"+idx, vfs.O_RDWR|vfs.O_NOCTTY, 0)
		if err != nil {
			return 5
		}
		write(ctx, p, m, "typed\n")
		n, err = p.Read(ctx, s, buf)
		if err != nil || string(buf[:n]) != "typed\n" {
			return 6
		}
		write(ctx, p, s, "shown\n")
		var screen string
		for !strings.Contains(screen, "shown\r\n") {
			n, err := p.Read(ctx, m, buf)
			if err != nil {
				return 7
			}
			screen += string(buf[:n])
		}
		if screen != "typed\r\nshown\r\n" {
			return 8
		}
		// The last slave closed: the master reads EIO (hang-up).
		_ = p.Close(s)
		if _, err := p.Read(ctx, m, buf); !errors.Is(err, errno.EIO) {
			return 9
		}
		// The limit counts terminals made through /dev/ptmx too.
		var fds []int
		for {
			fd, err := p.Open(ctx, kernel.AtFDCWD, "/dev/ptmx", vfs.O_RDWR, 0)
			if err != nil {
				if !errors.Is(err, errno.EAGAIN) || len(fds) != 2 {
					return 10
				}
				break
			}
			fds = append(fds, fd)
		}
		write(ctx, p, 1, "pts/"+idx+"\n")
		return 0
	}
	k := newKernel(t, kernel.Limits{PTYs: 3}, progs)
	ctx := context.Background()
	for _, m := range []struct {
		dir string
		fs  vfs.FileSystem
	}{{"/dev", devfs.New(devfs.Options{Terminals: k.Terminals()})}, {"/proc", k.ProcFS(64 << 20)}} {
		if err := k.VFS().Mkdir(ctx, vfs.Root, m.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := k.VFS().Mount(ctx, vfs.Root, m.dir, m.fs, vfs.MountOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	out, w := capture(t, k)
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"ptmx"}, Env: []string{"PATH=/bin"}, Files: []vfs.File{nil, w, w}})
	w.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("ptmx failed at step %d", st.ShellCode())
	}
	if got := out.String(); got != "pts/0\n" {
		t.Errorf("output %q", got)
	}
}

// TestPTYTerminalAttr covers tcgetattr/tcsetattr and the window size
// calls (host_tty get_attr, set_attr, get_size, set_size): the mode set
// is the mode read back, save that a pseudo-terminal stays 8-bit without
// parity (as Linux's pty_set_termios keeps it); -echo silences echo;
// TCSAFLUSH drops unread input; a new size raises SIGWINCH; descriptors
// that are not terminals fail with ENOTTY; and a background process
// changing the mode gets SIGTTOU.
func TestPTYTerminalAttr(t *testing.T) {
	progs := ptyPrograms()
	progs["attr"] = func(ctx context.Context, p *kernel.Process) int {
		tm, err := p.TerminalAttr(0)
		if err != nil || tm != tty.DefaultTermios() {
			return 1
		}
		tm.Lflag &^= tty.ECHO
		tm.Cflag = tm.Cflag&^tty.CSIZE | tty.PARENB
		tm.Cc[tty.VMIN] = 5
		if err := p.SetTerminalAttr(ctx, 0, tm, false); err != nil {
			return 2
		}
		got, _ := p.TerminalAttr(1)
		want := tm
		want.Cflag = want.Cflag&^tty.PARENB | tty.CS8
		if got != want {
			return 3
		}
		write(ctx, p, 1, "quiet\n")
		buf := make([]byte, 64)
		n, err := p.Read(ctx, 0, buf)
		if err != nil || string(buf[:n]) != "hidden\n" {
			return 4
		}
		write(ctx, p, 1, "flush\n")
		// Wait for the typed line, then discard it with TCSAFLUSH.
		fds := []kernel.PollFD{{FD: 0, Events: 0x01}}
		if _, err := p.Poll(ctx, fds, -1); err != nil {
			return 5
		}
		if err := p.SetTerminalAttr(ctx, 0, tty.DefaultTermios(), true); err != nil {
			return 6
		}
		write(ctx, p, 1, "again\n")
		if n, err = p.Read(ctx, 0, buf); err != nil || string(buf[:n]) != "kept\n" {
			return 7
		}
		if _, err := p.SetDisposition(kernel.SIGWINCH, kernel.DispositionCatch); err != nil {
			return 8
		}
		ch := p.CaughtSignals()
		if err := p.SetTerminalSize(0, tty.Winsize{Rows: 7, Cols: 9}); err != nil {
			return 9
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 10
		}
		if ws, err := p.TerminalSize(2); err != nil || ws != (tty.Winsize{Rows: 7, Cols: 9}) {
			return 11
		}
		r, w, err := p.Pipe(0)
		if err != nil {
			return 12
		}
		for _, fd := range []int{r, w} {
			if _, err := p.TerminalAttr(fd); !errors.Is(err, errno.ENOTTY) {
				return 13
			}
			if err := p.SetTerminalAttr(ctx, fd, tm, false); !errors.Is(err, errno.ENOTTY) {
				return 14
			}
			if err := p.SetTerminalSize(fd, tty.Winsize{}); !errors.Is(err, errno.ENOTTY) {
				return 15
			}
		}
		if _, err := p.TerminalAttr(99); !errors.Is(err, errno.EBADF) {
			return 16
		}
		c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"bgattr"}, NewGroup: true})
		if err != nil {
			return 17
		}
		if _, st, err := p.Wait(ctx, c.PID(), kernel.WUNTRACED); err != nil || !st.Stopped {
			return 18
		}
		_ = p.Kill(c.PID(), kernel.SIGKILL)
		_, _, _ = p.Wait(ctx, c.PID(), 0)
		write(ctx, p, 1, "done\n")
		return 0
	}
	progs["bgattr"] = func(ctx context.Context, p *kernel.Process) int {
		_ = p.SetTerminalAttr(ctx, 0, tty.DefaultTermios(), false)
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)
	tm, p := openTerm(t, k, "attr")
	tm.waitFor("quiet")
	tm.typ("hidden\n")
	tm.waitFor("flush")
	tm.typ("dropped\n")
	tm.waitFor("again")
	tm.typ("kept\n")
	if st := hostWait(t, p); st.ShellCode() != 0 {
		t.Fatalf("attr failed at step %d; the screen shows %q", st.ShellCode(), tm.text())
	}
	if s := tm.text(); strings.Contains(s, "hidden") || strings.Contains(s, "dropped\r\nkept") {
		t.Errorf("echo was on while -echo, or the flushed line echoed: %q", s)
	}
}

// TestProcShowsTerminalAndMemory checks what ps reads from /proc: a
// process on /dev/pts/N has tty_nr 136:N and its foreground group as
// tpgid, one without a terminal 0 and -1, and the memory its runtime
// reported is its size and resident set.
func TestProcShowsTerminalAndMemory(t *testing.T) {
	progs := ptyPrograms()
	stat := func(ctx context.Context, p *kernel.Process) []string {
		fd, err := p.Open(ctx, kernel.AtFDCWD, "/proc/self/stat", vfs.O_RDONLY, 0)
		if err != nil {
			return nil
		}
		defer func() { _ = p.Close(fd) }()
		buf := make([]byte, 1024)
		n, _ := p.Read(ctx, fd, buf)
		s := string(buf[:n])
		return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	}
	progs["statself"] = func(ctx context.Context, p *kernel.Process) int {
		p.ReportMemory(3 << 20)
		f := stat(ctx, p)
		if len(f) < 22 {
			return 1
		}
		// Fields 7, 8, 23 and 24 of proc(5), counted after "pid (comm)".
		write(ctx, p, 1, fmt.Sprintf("tty=%s tpgid=%s pgid=%d vsize=%s rss=%s\n", f[4], f[5], p.PGID(), f[20], f[21]))
		return 0
	}
	k := newKernel(t, kernel.Limits{}, progs)
	ctx := context.Background()
	if err := k.VFS().Mkdir(ctx, vfs.Root, "/proc", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := k.VFS().Mount(ctx, vfs.Root, "/proc", k.ProcFS(64<<20), vfs.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	tm, p := openTerm(t, k, "statself")
	hostWait(t, p)
	want := fmt.Sprintf("tty=%d tpgid=%d pgid=%d vsize=%d rss=768", 136<<8|tm.pty.Index(), p.PID(), p.PID(), 3<<20)
	tm.waitFor(want)

	out, w := capture(t, k)
	q, err := k.SpawnHost(ctx, kernel.SpawnOptions{Argv: []string{"statself"}, Env: []string{"PATH=/bin"}, Files: []vfs.File{nil, w, w}})
	w.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	hostWait(t, q)
	if got, want := out.String(), fmt.Sprintf("tty=0 tpgid=-1 pgid=%d vsize=%d rss=768\n", q.PGID(), 3<<20); got != want {
		t.Errorf("without a terminal: %q, want %q", got, want)
	}
}
