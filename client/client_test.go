package client_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/client"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/kernel/policy"
)

// A VM's life: created, listed, described, closed; afterwards (and for
// another tenant, and with a bad token) it is not found.
func TestVMs(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx := context.Background()
	c := s.client(t, alice, client.Options{})
	vm, err := c.NewVM(ctx, client.VMOptions{
		Env:    map[string]string{"GREETING": "hi"},
		Cwd:    "/tmp",
		Limits: client.Limits{MemoryBytes: 64 << 20, FSBytes: 8 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListVMs(ctx)
	if err != nil || len(list) != 1 || list[0].ID != vm.ID() || list[0].State != "running" {
		t.Fatalf("ListVMs: %+v %v", list, err)
	}
	info, err := vm.Info(ctx)
	if err != nil || info.ID != vm.ID() || info.CreatedAt.IsZero() || info.IdleTimeout <= 0 {
		t.Fatalf("Info: %+v %v", info, err)
	}
	res, err := vm.Exec(ctx, `echo "$GREETING $PWD"`, nil)
	if err != nil || string(res.Stdout) != "hi /tmp\n" {
		t.Fatalf("env and cwd: %+v %v", res, err)
	}
	// bob sees none of alice's VMs; a wrong token is refused.
	if _, err := s.client(t, bob, client.Options{}).VM(vm.ID()).Info(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("bob's Info of alice's VM: %v", err)
	}
	if l, err := s.client(t, bob, client.Options{}).ListVMs(ctx); err != nil || len(l) != 0 {
		t.Fatalf("bob's list: %v %v", l, err)
	}
	_, err = s.client(t, "wrong", client.Options{}).ListVMs(ctx)
	var ae *client.Error
	if !errors.Is(err, client.ErrUnauthorized) || !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("wrong token: %v", err)
	}
	// Limits above the server's maximum: a clear 400.
	if _, err := c.NewVM(ctx, client.VMOptions{Limits: client.Limits{MemoryBytes: 1 << 40}}); !errors.Is(err, client.ErrBadRequest) ||
		!strings.Contains(err.Error(), "maximum") {
		t.Fatalf("memory over the maximum: %v", err)
	}
	// A policy is sent as the document it is: exec denied.
	deny := newVM(t, c, client.VMOptions{Permissions: policy.DenyAll().AllowFS(policy.AllFSOps(), "/**")})
	if res, err := deny.Exec(ctx, "echo hi", nil); err != nil || res.ExitCode == 0 {
		t.Fatalf("exec under a policy without exec rules: %+v %v", res, err)
	}
	if err := vm.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := vm.Info(ctx); !errors.Is(err, client.ErrNotFound) || !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("Info after Close: %v", err)
	}
	if _, err := vm.Exec(ctx, "true", nil); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Exec after Close: %v", err)
	}
	if _, err := client.New("ftp://x", client.Options{}); !errors.Is(err, client.ErrBadURL) {
		t.Fatalf("ftp URL: %v", err)
	}
}

// Exec and Run: exit codes, bytes exact both ways, argv never re-read by
// a shell, stdin, streamed output, timeouts and the output limit.
func TestExec(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx := context.Background()
	vm := newVM(t, s.client(t, alice, client.Options{}), client.VMOptions{})
	res, err := vm.Exec(ctx, "echo hello | wc -c", nil)
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "6" || res.Outcome != client.Succeeded {
		t.Fatalf("pipeline: %+v %v", res, err)
	}
	res, err = vm.Exec(ctx, "exit 3", nil)
	if err != nil || res.ExitCode != 3 || res.Outcome != client.Failed {
		t.Fatalf("exit 3: %+v %v", res, err)
	}
	res, err = vm.Run(ctx, []string{"echo", "a | b", "$HOME"}, nil)
	if err != nil || string(res.Stdout) != "a | b $HOME\n" {
		t.Fatalf("argv: %+v %v", res, err)
	}
	bin := []byte{0, 0xff, 0xfe, '\n', 0x80, 'x'}
	res, err = vm.Run(ctx, []string{"cat"}, &client.ExecOptions{Stdin: bytes.NewReader(bin)})
	if err != nil || !bytes.Equal(res.Stdout, bin) {
		t.Fatalf("cat of binary stdin: %+v %v", res, err)
	}
	// Streamed: stdout and stderr to their writers, byte-exact, and no
	// copy in the result.
	var out, errb bytes.Buffer
	res, err = vm.Run(ctx, []string{"node", "-e", `process.stdout.write(Buffer.from([0,255,254])); process.stderr.write("E"); process.exitCode = 5`},
		&client.ExecOptions{Stdout: &out, Stderr: &errb})
	if err != nil || res.ExitCode != 5 || !bytes.Equal(out.Bytes(), []byte{0, 255, 254}) || errb.String() != "E" || res.Stdout != nil {
		t.Fatalf("streamed: %+v %v stdout %q stderr %q", res, err, out.Bytes(), errb.String())
	}
	// The wall-clock timeout: 124, timed_out, reason timeout.
	res, err = vm.Exec(ctx, "sleep 30", &client.ExecOptions{Timeout: 300 * time.Millisecond})
	if err != nil || res.ExitCode != 124 || res.Outcome != client.TimedOut || res.Reason != "timeout" {
		t.Fatalf("timeout: %+v %v", res, err)
	}
	res, err = vm.Exec(ctx, "sleep 30", &client.ExecOptions{Timeout: 300 * time.Millisecond, Stdout: io.Discard})
	if err != nil || res.ExitCode != 124 || res.Outcome != client.TimedOut {
		t.Fatalf("streamed timeout: %+v %v", res, err)
	}
	// Output over the limit: truncated (kept) or stopped (streamed).
	res, err = vm.Exec(ctx, "head -c 100000 /dev/zero", &client.ExecOptions{MaxOutput: 1000})
	if err != nil || !res.Truncated || len(res.Stdout) != 1000 {
		t.Fatalf("kept over the limit: truncated %v, %d bytes, %v", res.Truncated, len(res.Stdout), err)
	}
	out.Reset()
	res, err = vm.Exec(ctx, "head -c 100000 /dev/zero", &client.ExecOptions{MaxOutput: 1000, Stdout: &out})
	if err != nil || !res.Truncated || out.Len() > 2000 {
		t.Fatalf("streamed over the limit: %+v %v (%d bytes)", res, err, out.Len())
	}
	if _, err := vm.Exec(ctx, "  ", nil); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("empty command line: %v", err)
	}
}

// Cancelling ctx ends the call and the program; the VM stays usable.
func TestExecCancel(t *testing.T) {
	s := newServer(t, api.Config{})
	vm := newVM(t, s.client(t, alice, client.Options{}), client.VMOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	w := writerFunc(func(p []byte) (int, error) {
		if strings.Contains(string(p), "started") {
			cancel()
		}
		return len(p), nil
	})
	_, err := vm.Exec(ctx, "echo started; sleep 60", &client.ExecOptions{Stdout: w})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled exec: %v", err)
	}
	res, err := vm.Exec(context.Background(), "echo after", nil)
	if err != nil || string(res.Stdout) != "after\n" {
		t.Fatalf("exec after a cancelled one: %+v %v", res, err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Files: names that need escaping, bytes exact, stat, listing, mkdir,
// removal, streamed writes, tar archives both ways, and the errors.
func TestFS(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx := context.Background()
	vm := newVM(t, s.client(t, alice, client.Options{}), client.VMOptions{})
	fsys := vm.FS()
	data := []byte{0, 1, 0xff, '\n', 'z'}
	for _, name := range []string{"/tmp/plain", "/tmp/a b/c?d#e%f", "/tmp/ünï/çödé", "/tmp/%2F"} {
		if err := fsys.WriteFile(ctx, name, data); err != nil {
			t.Fatalf("WriteFile %q: %v", name, err)
		}
		got, err := fsys.ReadFile(ctx, name)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("ReadFile %q: %q %v", name, got, err)
		}
		// The guest sees the same name.
		res, err := vm.Run(ctx, []string{"cat", name}, nil)
		if err != nil || !bytes.Equal(res.Stdout, data) {
			t.Fatalf("guest cat %q: %+v %v", name, res, err)
		}
	}
	fi, err := fsys.Lstat(ctx, "/tmp/a b/c?d#e%f")
	if err != nil || fi.Name != "c?d#e%f" || fi.Size != int64(len(data)) || fi.IsDir() || fi.Type != "file" || fi.Mode != 0o644 {
		t.Fatalf("Lstat: %+v %v", fi, err)
	}
	if err := fsys.MkdirAll(ctx, "/tmp/d/e/f"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFrom(ctx, "/tmp/d/big", io.LimitReader(zeros{}, 3<<20)); err != nil {
		t.Fatal(err)
	}
	ents, err := fsys.ReadDir(ctx, "/tmp/d")
	if err != nil || len(ents) != 2 || ents[0].Name != "big" || ents[0].Size != 3<<20 || ents[1].Name != "e" || !ents[1].IsDir() {
		t.Fatalf("ReadDir: %+v %v", ents, err)
	}
	rc, err := fsys.Open(ctx, "/tmp/d/big")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil || n != 3<<20 {
		t.Fatalf("Open: %d bytes, %v", n, err)
	}
	if err := fsys.Remove(ctx, "/tmp/d"); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("Remove of a non-empty directory: %v", err)
	}
	if _, err := fsys.ReadFile(ctx, "/tmp/d"); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("ReadFile of a directory: %v", err)
	}
	if _, err := fsys.ReadFile(ctx, "/dev/zero"); !errors.Is(err, client.ErrNotRegular) {
		t.Fatalf("ReadFile of a device: %v", err)
	}
	if _, err := fsys.ReadFile(ctx, "relative"); err == nil {
		t.Fatal("a relative path was accepted")
	}

	// Archives: the tree out, into another directory, and back.
	arc, err := fsys.ReadArchive(ctx, "/tmp/d")
	if err != nil {
		t.Fatal(err)
	}
	tarball, err := io.ReadAll(arc)
	arc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteArchive(ctx, "/copy", bytes.NewReader(tarball)); err != nil {
		t.Fatal(err)
	}
	if fi, err := fsys.Lstat(ctx, "/copy/big"); err != nil || fi.Size != 3<<20 {
		t.Fatalf("unpacked big: %+v %v", fi, err)
	}
	if fi, err := fsys.Lstat(ctx, "/copy/e/f"); err != nil || !fi.IsDir() {
		t.Fatalf("unpacked e/f: %+v %v", fi, err)
	}
	// A name that leaves the directory is refused.
	var evil bytes.Buffer
	tw := tar.NewWriter(&evil)
	_ = tw.WriteHeader(&tar.Header{Name: "../escape", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("x"))
	_ = tw.Close()
	if err := fsys.WriteArchive(ctx, "/copy", &evil); !errors.Is(err, client.ErrBadArchive) {
		t.Fatalf("escaping archive: %v", err)
	}
	if err := fsys.RemoveAll(ctx, "/tmp/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Lstat(ctx, "/tmp/d"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Lstat after RemoveAll: %v", err)
	}
	if err := fsys.Remove(ctx, "/tmp/plain"); err != nil {
		t.Fatal(err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Spawn: stdin streamed in and closed, output out, exit status; signals;
// a terminal that resizes; Close kills.
func TestSpawn(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx := context.Background()
	vm := newVM(t, s.client(t, alice, client.Options{}), client.VMOptions{})

	p, err := vm.Spawn(ctx, []string{"sh", "-c", "cat; echo done >&2; exit 7"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(&out, p.Stdout) }()
	go func() { defer wg.Done(); _, _ = io.Copy(&errb, p.Stderr) }()
	big := bytes.Repeat([]byte{0xff, 0, 'a'}, 40000) // over one frame
	if _, err := p.Stdin.Write(big); err != nil {
		t.Fatal(err)
	}
	if err := p.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := p.Wait(ctx)
	wg.Wait()
	if err != nil || st.ExitCode != 7 || !bytes.Equal(out.Bytes(), big) || errb.String() != "done\n" || p.Pid() <= 0 {
		t.Fatalf("cat: %+v %v, %d bytes out (want %d), stderr %q", st, err, out.Len(), len(big), errb.String())
	}

	// A signal ends a process that would run for a minute.
	p, err = vm.Spawn(ctx, []string{"sleep", "60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, p.Stdout) }()
	go func() { _, _ = io.Copy(io.Discard, p.Stderr) }()
	if err := p.Signal(client.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(ctx); err != nil || st.ExitCode != 143 || st.Signal != "SIGTERM" {
		t.Fatalf("SIGTERM: %+v %v", st, err)
	}
	if err := p.Signal(client.SIGKILL); !errors.Is(err, client.ErrProcessDone) {
		t.Fatalf("signal after the exit: %v", err)
	}

	// A terminal: stty reports the size, then the resized one.
	p, err = vm.Spawn(ctx, []string{"sh", "-c", "stty size; read x; stty size"}, &client.SpawnOptions{PTY: &client.PTY{Rows: 30, Cols: 100}})
	if err != nil {
		t.Fatal(err)
	}
	screen := &syncBuf{}
	done := make(chan struct{})
	go func() { defer close(done); _, _ = io.Copy(screen, p.Stdout) }()
	waitFor(t, screen, "30 100")
	if err := p.Resize(40, 120); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stdin.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(ctx); err != nil || st.ExitCode != 0 {
		t.Fatalf("terminal: %+v %v", st, err)
	}
	<-done
	if !strings.Contains(screen.String(), "40 120") {
		t.Fatalf("the resized terminal: %q", screen.String())
	}
	if err := p.Resize(0, 5); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("resize 0x5: %v", err)
	}

	// Close ends a silent process; the server forgets it.
	p, err = vm.Spawn(ctx, []string{"sleep", "60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err == nil {
		t.Fatal("Wait after Close reported an exit status")
	}
	if _, err := vm.Spawn(ctx, []string{}, nil); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("empty argv: %v", err)
	}
}

// syncBuf is a buffer written by one goroutine and read by another.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls b (generously) until it holds want.
func waitFor(t *testing.T, b *syncBuf, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q in %q", want, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// JavaScript: evaluate, execute, a throw, and persistent contexts with
// their timeout.
func TestJS(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx := context.Background()
	vm := newVM(t, s.client(t, alice, client.Options{}), client.VMOptions{})
	v, err := vm.JS().Evaluate(ctx, "Promise.resolve({a: [1, 2]})", nil)
	if err != nil || string(v) != `{"a":[1,2]}` {
		t.Fatalf("Evaluate: %s %v", v, err)
	}
	res, err := vm.JS().Execute(ctx, `console.log(require("os").platform()); process.exit(4)`, nil)
	if err != nil || res.ExitCode != 4 || string(res.Stdout) != "linux\n" {
		t.Fatalf("Execute: %+v %v", res, err)
	}
	var out bytes.Buffer
	res, err = vm.JS().Execute(ctx, `console.log("streamed")`, &client.ExecOptions{Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "streamed\n" {
		t.Fatalf("Execute streamed: %+v %v %q", res, err, out.String())
	}
	_, err = vm.JS().Evaluate(ctx, `throw new Error("boom")`, nil)
	var ae *client.Error
	if !errors.Is(err, client.ErrEval) || !errors.As(err, &ae) || !strings.Contains(ae.Message, "boom") {
		t.Fatalf("throw: %v", err)
	}
	jc, err := vm.JS().NewContext(ctx, &client.ContextOptions{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jc.Evaluate(ctx, "globalThis.n = 41"); err != nil {
		t.Fatal(err)
	}
	if v, err := jc.Evaluate(ctx, "n + 1"); err != nil || string(v) != "42" {
		t.Fatalf("context kept nothing: %s %v", v, err)
	}
	if _, err := jc.Evaluate(ctx, "for(;;){}"); !errors.Is(err, client.ErrEvalTimeout) {
		t.Fatalf("endless loop in a context: %v", err)
	}
	if jc.ID() == "" {
		t.Fatal("a context without an id")
	}
	if err := jc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := jc.Evaluate(ctx, "1"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("closed context: %v", err)
	}
}

// statusRecorder is a transport that reports each answer's status.
type statusRecorder struct {
	mu       sync.Mutex
	statuses []int
	saw429   chan struct{}
}

func (r *statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.statuses = append(r.statuses, resp.StatusCode)
		if resp.StatusCode == 429 && r.saw429 != nil {
			close(r.saw429)
			r.saw429 = nil
		}
		r.mu.Unlock()
	}
	return resp, err
}

func (r *statusRecorder) count(status int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.statuses {
		if s == status {
			n++
		}
	}
	return n
}

// A request refused over the tenant's concurrency quota (429) is tried
// again until the quota has room; without retries the refusal is the
// answer, typed; a draining server's 503 is retried MaxRetries times.
func TestRetries(t *testing.T) {
	s := newServer(t, api.Config{MaxConcurrent: 1})
	ctx := context.Background()
	rec := &statusRecorder{saw429: make(chan struct{})}
	c := s.client(t, alice, client.Options{HTTPClient: &http.Client{Transport: rec}, MaxRetries: 1000, MaxRetryWait: 20 * time.Millisecond})
	vm := newVM(t, c, client.VMOptions{})
	// An attached process holds the tenant's one slot.
	holder, err := vm.Spawn(ctx, []string{"cat"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, holder.Stdout) }()
	go func() { _, _ = io.Copy(io.Discard, holder.Stderr) }()
	noRetry := s.client(t, alice, client.Options{MaxRetries: -1})
	_, err = noRetry.VM(vm.ID()).Exec(ctx, "true", nil)
	var ae *client.Error
	if !errors.Is(err, client.ErrQuota) || !errors.As(err, &ae) || ae.Status != 429 || ae.RetryAfter != time.Second {
		t.Fatalf("over the quota without retries: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		res, err := vm.Exec(ctx, "echo through", nil)
		if err == nil && string(res.Stdout) != "through\n" {
			err = errors.New("stdout " + string(res.Stdout))
		}
		got <- err
	}()
	<-rec.saw429 // refused once at least: now give the slot back
	if err := holder.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the retried exec: %v", err)
	}

	// Draining: every create is 503 shutting_down, tried 1+2 times.
	d := newServer(t, api.Config{})
	rec = &statusRecorder{}
	c = d.client(t, alice, client.Options{HTTPClient: &http.Client{Transport: rec}, MaxRetries: 2, MaxRetryWait: time.Millisecond})
	sctx, cancel := context.WithCancel(ctx)
	cancel()
	_ = d.api.Shutdown(sctx)
	if _, err := c.NewVM(ctx, client.VMOptions{}); !errors.Is(err, client.ErrShuttingDown) || rec.count(503) != 3 {
		t.Fatalf("create while draining: %v after %d answers 503", err, rec.count(503))
	}
}

// Sequential calls of one client share one connection.
func TestConnectionReuse(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx := context.Background()
	c := s.client(t, alice, client.Options{})
	vm := newVM(t, c, client.VMOptions{})
	for i := 0; i < 10; i++ {
		if _, err := vm.Exec(ctx, "true", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := vm.Exec(ctx, "echo x", &client.ExecOptions{Stdout: io.Discard}); err != nil {
			t.Fatal(err)
		}
		if err := vm.FS().WriteFile(ctx, "/tmp/f", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := vm.FS().ReadFile(ctx, "/tmp/f"); err != nil {
			t.Fatal(err)
		}
		if _, err := vm.FS().Lstat(ctx, "/nope"); !errors.Is(err, client.ErrNotFound) {
			t.Fatal(err)
		}
		if _, err := c.ListVMs(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.connections(); n != 1 {
		t.Fatalf("60 sequential calls opened %d connections; want 1", n)
	}
}

// Options.Timeout bounds control calls (a server that never answers
// cannot hold one) but not execs, which their own timeout bounds; a
// context ended while waiting to retry ends the call; Delete is Close
// with a context.
func TestTimeoutsAndDelete(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts and never answers
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	silent, err := client.New("http://"+ln.Addr().String(), client.Options{Token: alice, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if silent.URL() != "http://"+ln.Addr().String() {
		t.Fatalf("URL %q", silent.URL())
	}
	if _, err := silent.ListVMs(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a silent server: %v", err)
	}

	s := newServer(t, api.Config{MaxConcurrent: 1})
	ctx := context.Background()
	// A VM's creation may start an engine: not under 200 ms.
	id := newVM(t, s.client(t, alice, client.Options{}), client.VMOptions{}).ID()
	c := s.client(t, alice, client.Options{Timeout: 200 * time.Millisecond, MaxRetries: 1000})
	vm := c.VM(id)
	res, err := vm.Exec(ctx, "sleep 1; echo slept", nil)
	if err != nil || string(res.Stdout) != "slept\n" {
		t.Fatalf("an exec longer than Options.Timeout: %+v %v", res, err)
	}
	// The tenant's one slot is held; the retries wait until ctx ends.
	holder, err := vm.Spawn(ctx, []string{"cat"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := vm.Exec(cctx, "true", nil); !errors.Is(err, context.Canceled) || !errors.Is(err, client.ErrQuota) {
		t.Fatalf("cancelled while retrying: %v", err)
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	if err := vm.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := vm.Delete(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a second Delete: %v", err)
	}
}
