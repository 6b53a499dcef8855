package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/bench"
)

// The tenants of a serve soak: A attacks, B behaves.
const (
	TenantHostile = "hostile"
	TenantSteady  = "steady"
)

// ErrServer is matched by errors about the server subprocess: it could
// not be started, or it went away.
var ErrServer = errors.New("soak: secexec serve")

// serverProc is the `secexec serve` subprocess under test.
type serverProc struct {
	cmd  *exec.Cmd
	pid  int
	url  string
	dir  string
	logs *lineTail
	// exited is closed once the process has ended; exitErr is its
	// status then.
	exited  chan struct{}
	exitErr error
}

// startServer starts `CMD serve` on a loopback port with one token per
// tenant, and waits until it serves. The tokens are returned by tenant.
func startServer(ctx context.Context, cfg *ServeConfig) (*serverProc, map[string]string, error) {
	dir, err := os.MkdirTemp("", "secexec-soak-serve-")
	if err != nil {
		return nil, nil, err
	}
	tokens := map[string]string{TenantHostile: api.NewToken(), TenantSteady: api.NewToken()}
	lines := api.TokenLine(TenantHostile, tokens[TenantHostile]) + "\n" + api.TokenLine(TenantSteady, tokens[TenantSteady]) + "\n"
	tf := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tf, []byte(lines), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	args := append([]string{"serve", "--tokens-file", tf, "--listen", "127.0.0.1:0", "--drain-timeout", "10s"}, cfg.ServerFlags...)
	cmd := exec.Command(cfg.Command, args...)
	cmd.Env = append(os.Environ(), cfg.ServerEnv...)
	// The server ends with this process even if it is killed: a soak
	// must not leave a server (and its engines) behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("%w: starting %s: %v", ErrServer, cfg.Command, err)
	}
	s := &serverProc{cmd: cmd, pid: cmd.Process.Pid, dir: dir, logs: &lineTail{max: 40}, exited: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if _, addr, ok := strings.Cut(line, "serving the API on "); ok {
				select {
				case ready <- strings.TrimSpace(addr):
				default:
				}
			}
			s.logs.add(line)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	select {
	case s.url = <-ready:
		return s, tokens, nil
	case <-s.exited:
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("%w: exited before serving (%v): %s", ErrServer, s.exitErr, strings.Join(s.logs.lines(), " | "))
	case <-time.After(time.Minute):
		err = fmt.Errorf("%w: not serving after a minute", ErrServer)
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.stop()
	return nil, nil, err
}

// alive reports whether the server process still runs.
func (s *serverProc) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// exitStatus describes how the server ended ("" while it runs).
func (s *serverProc) exitStatus() string {
	if s.alive() {
		return ""
	}
	if s.exitErr == nil {
		return "exit status 0"
	}
	return s.exitErr.Error()
}

// stop shuts the server down as an operator does (SIGTERM: drain, close
// the VMs) and returns an error if it had to be killed or failed.
func (s *serverProc) stop() error {
	defer os.RemoveAll(s.dir)
	if !s.alive() {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.exitErr != nil {
			return fmt.Errorf("%w: shut down with %v", ErrServer, s.exitErr)
		}
		return nil
	case <-time.After(45 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("%w: still running 45s after SIGTERM; killed", ErrServer)
	}
}

// lineTail keeps the last lines of a stream.
type lineTail struct {
	mu  sync.Mutex
	max int
	buf []string
}

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(line) > 500 {
		line = line[:500] + "…"
	}
	t.buf = append(t.buf, line)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
}

func (t *lineTail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.buf...)
}

// ProcSample is one process observed: the server or an engine.
type ProcSample struct {
	PID int   `json:"pid"`
	RSS int64 `json:"rss"`
	FDs int   `json:"fds"`
	// Threads is the number of OS threads.
	Threads int `json:"threads,omitempty"`
}

// observe reads a process's RSS, descriptors and threads.
func observe(pid int) ProcSample {
	s := ProcSample{PID: pid, FDs: countFDs(pid)}
	s.RSS, _ = bench.RSS(pid)
	s.Threads = int(statusField(pid, "Threads:"))
	return s
}

// statusField reads a numeric field of /proc/PID/status (kB for sizes,
// returned in bytes), -1 if absent.
func statusField(pid int, name string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return -1
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return -1
		}
		if len(f) == 2 && f[1] == "kB" {
			n <<= 10
		}
		return n
	}
	return -1
}

// resetPeak makes a process's peak RSS (VmHWM) its current RSS, so that
// the peak read later is the peak since now (Linux clear_refs "5").
func resetPeak(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// peakRSS is the process's peak RSS since resetPeak, -1 if unknown.
func peakRSS(pid int) int64 { return statusField(pid, "VmHWM:") }

// engines returns the server's engine processes — its descendants (guest
// processes are no host processes), whichever process started them —
// living ones and zombies apart, oldest first.
func engines(server int) (alive []int, zombies int) {
	parents := []int{server}
	for len(parents) > 0 {
		kids, _ := childrenOf(parents[0])
		parents = parents[1:]
		for _, k := range kids {
			if k.zombie {
				zombies++
				continue
			}
			alive = append(alive, k.pid)
			parents = append(parents, k.pid)
		}
	}
	return alive, zombies
}
