//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// linuxPTYMode is what `stty -g` prints on a fresh Linux pseudo-terminal
// (Debian 12): the tests start both sides from it.
const linuxPTYMode = "500:5:bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0"

// sttyScript exercises stty on a terminal: the displays after each kind
// of change, the window size, and restoring a saved mode. Its output
// does not depend on anything but the terminal's mode and size.
var sttyScript = strings.Join([]string{
	"stty " + linuxPTYMode + " rows 24 cols 80",
	"stty -a", "stty", "stty -g", "stty size", "stty speed",
	"stty -F /dev/tty size", "stty --file=/dev/tty cols 81 < /dev/null", "stty size", "stty -F /dev/tty -g </dev/null", "stty cols 80",
	"s=$(stty -g)",
	"stty raw", "stty", "stty -raw", "stty", "stty sane", "stty",
	"stty -echo", "stty", "stty echo -icanon", "stty", "stty icanon",
	"stty intr ^X quit undef erase ^H min 5 time 2 -ixon", "stty -a",
	"stty cols 100 rows 30", "stty size", "stty -a",
	"stty cbreak -isig nl evenp", "stty", "stty -nl -evenp cooked ek", "stty -g",
	"stty $s", "stty -g", "stty rows 0 cols 0", "stty -a", "stty 9600; stty speed",
	"stty foo; echo rc=$?", "stty size </dev/null; echo rc=$?",
}, "; ")

// TestSttyVMTerminal runs the same stty commands on a VM pseudo-terminal
// and, through script(1), on a host one, and compares the bytes each
// terminal showed (CR-LF and all: the output post-processing follows the
// mode too).
func TestSttyVMTerminal(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	got, code := ptyRunRaw(t, h, sttyScript, 24, 80, "LC_ALL=C.UTF-8")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, got)
	}
	cmd := exec.Command("script", "-qec", "sh -c '"+strings.ReplaceAll(sttyScript, "'", `'\''`)+"'", "/dev/null")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "TERM=xterm"}
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("host script(1) (.ci/run installs bsdutils): %v", err)
	}
	if got != string(want) {
		t.Errorf("the terminals differ%s", firstDiff(got, string(want)))
	}
}

// TestSttyVMOffTerminal checks Debian's error when stdin is a pipe.
func TestSttyVMOffTerminal(t *testing.T) {
	var cases []diffCase
	for _, line := range []string{"stty", "stty -a", "stty -g", "stty size", "stty raw", "stty -echo", "stty foo", "stty rows x"} {
		cases = append(cases, diffCase{script: line + " < /dev/null", stderr: true})
	}
	runCasesWith(t, []string{"stty"}, cases)
}

// ptyScreen is a VM process on a terminal whose output the test reads
// as it comes, to type only once the program is ready for it.
type ptyScreen struct {
	mu  sync.Mutex
	buf bytes.Buffer
	p   vmhost.Process
}

func startPTY(t *testing.T, h *vmhost.Host, script string) *ptyScreen {
	t.Helper()
	p, err := h.Spawn(context.Background(), vmhost.SpawnSpec{Argv: []string{"sh", "-c", script},
		Env: vmtest.Env, PTY: &vmhost.PTYSize{Rows: 24, Cols: 80}})
	if err != nil {
		t.Fatal(err)
	}
	s := &ptyScreen{p: p}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := p.Stdout().Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *ptyScreen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until the screen shows want; the deadline only bounds a
// broken run.
func (s *ptyScreen) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q; it shows %q", want, s.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *ptyScreen) wait(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.p.Wait(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	s.waitFor(t, "DONE")
	return strings.ReplaceAll(s.text(), "\r\n", "\n")
}

// TestSttyVMLineDiscipline checks that stty's settings reach the
// kernel's line discipline: -echo hides typed input, -icanon hands over
// keys without a newline, the window size set by the host shows in stty
// size and tput, and a saved mode restores echo.
func TestSttyVMLineDiscipline(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	s := startPTY(t, h, "s=$(stty -g); stty -echo; echo READY1; read a; echo got=$a; stty $s; "+
		"stty -icanon min 1; echo READY2; x=$(dd bs=1 count=3 2>/dev/null); echo; echo raw=$x; stty sane; "+
		"echo READY3; read b; stty size; tput -T xterm cols lines; stty cols 132 rows 50; stty size; tput -T xterm cols; echo DONE")
	s.waitFor(t, "READY1")
	if _, err := s.p.Stdin().Write([]byte("secret\n")); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, "READY2")
	if _, err := s.p.Stdin().Write([]byte("xyz")); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, "READY3")
	if err := s.p.Resize(40, 120); err != nil {
		t.Fatal(err)
	}
	if _, err := s.p.Stdin().Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	out := s.wait(t)
	if !strings.Contains(out, "READY1\ngot=secret\n") {
		t.Errorf("stty -echo: the typed line was echoed or not read:\n%q", out)
	}
	if !strings.Contains(out, "READY2\nxyz\nraw=xyz\n") {
		t.Errorf("stty -icanon: three keys without a newline were not read:\n%q", out)
	}
	if !strings.Contains(out, "go\n40 120\n120\n40\n50 132\n132\n") {
		t.Errorf("window sizes:\n%q", out)
	}
}

// TestToolsNotTakenForTheShell guards the engine's brush workaround
// (shellArgv rewrites "PROG -c SCRIPT" for the module that imports
// host_tty's line-editor calls): this module imports host_tty too, for
// stty and tput, and "xz -c FILE" into a pipe must keep its arguments.
func TestToolsNotTakenForTheShell(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	r := vmtest.Run(t, h, "", nil, "sh", "-c", "cd /tmp && printf hello > f && xz -c f | xz -dc")
	if r.Stdout != "hello" || r.Exit.Code != 0 {
		t.Errorf("xz -c f | xz -dc: %q, %q, exit %d", r.Stdout, r.Stderr, r.Exit.Code)
	}
}
