package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxSession drives a real terminal emulator (tmux, with a server of its
// own) the way a person at a keyboard would: keys in, the screen out.
type tmuxSession struct {
	t    *testing.T
	sock string
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

func (s *tmuxSession) screen() string { return s.tmux("capture-pane", "-p", "-t", "0") }

// lastLine is the screen's last line with text.
func (s *tmuxSession) lastLine() string {
	lines := strings.Split(strings.TrimRight(s.screen(), "\n "), "\n")
	return lines[len(lines)-1]
}

// waitFor polls the screen (generously) until ok accepts it.
func (s *tmuxSession) waitFor(what string, ok func(screen string) bool) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sc := s.screen()
		if ok(sc) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %s; it shows:\n%s", what, sc)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *tmuxSession) waitText(want string, n int) {
	s.t.Helper()
	s.waitFor(strings.Repeat("«"+want+"» ", n), func(sc string) bool { return strings.Count(sc, want) >= n })
}

// `secexec shell` in tmux: bash with line editing and history, ^C of a
// job, the node REPL, a window resize, and the shell's exit status.
func TestShellInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed (.ci/run installs it):", err)
	}
	// This test binary is the secexec command when cliProcessEnv is set
	// (see TestMain), so no second binary has to be built and linked.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := "env " + cliProcessEnv + "=1 '" + self + "' shell; echo EXITED=$?; sleep 600"
	s.tmux("new-session", "-d", "-x", "100", "-y", "30", cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })

	prompt := func(sc string) bool {
		lines := strings.Split(strings.TrimRight(sc, "\n "), "\n")
		return strings.HasPrefix(lines[len(lines)-1], "bash-") && strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "$")
	}
	s.waitFor("the bash prompt", prompt)

	// A command, then the same one again from history with arrow-up.
	s.keys("echo tmux-$((6*7))", "Enter")
	s.waitText("\ntmux-42", 1)
	s.waitFor("a new prompt", prompt)
	s.keys("Up")
	s.waitText("echo tmux-$((6*7))", 2)
	s.keys("Enter")
	s.waitText("\ntmux-42", 2)

	// ^C ends the foreground job and the shell prompts again.
	s.keys("echo sleeping; sleep 100", "Enter")
	s.waitText("\nsleeping", 1)
	deadline := time.Now().Add(30 * time.Second)
	for !prompt(s.screen()) {
		if time.Now().After(deadline) {
			t.Fatalf("^C did not end sleep 100:\n%s", s.screen())
		}
		s.keys("C-c")
		time.Sleep(300 * time.Millisecond)
	}
	s.keys("echo rc=$?", "Enter")
	s.waitText("rc=130", 1)

	// node with no script is a REPL on the terminal; it sees the window
	// size, and a resize of the pane.
	s.keys("node", "Enter")
	s.waitFor("the REPL prompt", func(string) bool { return strings.TrimSpace(s.lastLine()) == ">" })
	s.keys("6 * 7 + 0.5", "Enter")
	s.waitText("\n42.5", 1)
	s.keys("process.stdout.on('resize', () => console.log('resized to', process.stdout.columns)) && 'listening'", "Enter")
	s.waitText("\n'listening'", 1)
	s.tmux("resize-window", "-t", "0", "-x", "120", "-y", "40")
	s.waitText("resized to 120", 1)
	s.keys("process.stdout.rows * 1000 + process.stdout.columns", "Enter")
	s.waitText("40120", 1)
	s.keys(".exit", "Enter")
	s.waitFor("the bash prompt after the REPL", prompt)

	// A full-screen program: node in raw mode on the alternate screen
	// gets every key as typed, ^C included, and restores the screen when
	// it quits.
	s.keys(`node -e "process.stdin.setRawMode(true); process.stdout.write('\x1b[?1049hfull-screen ' + process.stdin.isRaw + '\r\n'); process.stdin.on('data', d => { if (d[0] === 113) { process.stdin.setRawMode(false); process.stdout.write('\x1b[?1049l'); process.exit(0) } process.stdout.write('key ' + d.toString('hex') + '\r\n') })"`, "Enter")
	s.waitText("full-screen true", 1)
	s.keys("Up")
	s.waitText("key 1b5b41", 1)
	s.keys("C-c")
	s.waitText("key 03", 1)
	s.keys("q")
	s.waitFor("the shell's screen back", func(sc string) bool { return !strings.Contains(sc, "key 1b5b41") && prompt(sc) })

	s.keys("exit 7", "Enter")
	s.waitText("EXITED=7", 1)
}

// exec -t runs one command on a terminal of its own: isatty is true for
// it (even when the CLI's own streams are pipes), output has the
// terminal's CR-LF line ends, and the exit status is the command's.
func TestExecWithTerminal(t *testing.T) {
	code, out, errOut := runCLIProcess(t, nil, "exec", "-t", `node -p "[process.stdin.isTTY, process.stdout.isTTY, process.stdout.columns > 0].join(' ')"`)
	if code != 0 || out != "true true true\r\n" {
		t.Fatalf("exec -t: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCLIProcess(t, nil, "exec", "-t", "echo on-a-tty; exit 5")
	if code != 5 || out != "on-a-tty\r\n" {
		t.Fatalf("exec -t with a shell: exit %d, stdout %q", code, out)
	}
	if code, _, _ := runCLIProcess(t, nil, "exec", "-t", "--json", "true"); code != 2 {
		t.Fatalf("exec -t --json: exit %d, want the usage error 2", code)
	}
}

// childrenOf lists the pids whose parent is pid, from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The parent is the second field after the parenthesised name.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// When the engine process dies under `secexec shell`, the CLI reports it
// and the user's terminal is back in its normal mode: what is typed
// afterwards echoes (in raw mode it would not).
func TestShellRestoresTerminalWhenEngineDies(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	s.tmux("new-session", "-d", "-x", "100", "-y", "30", "env "+cliProcessEnv+"=1 '"+self+"' shell; echo EXITED=$?; cat")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	s.waitText("bash-", 1)

	panePID, err := strconv.Atoi(strings.TrimSpace(s.tmux("display-message", "-p", "-t", "0", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	// pane shell → the CLI → its engine.
	var engines []int
	for _, cli := range childrenOf(t, panePID) {
		engines = append(engines, childrenOf(t, cli)...)
	}
	if len(engines) != 1 {
		t.Fatalf("found engines %v under the pane's process %d", engines, panePID)
	}
	if err := syscall.Kill(engines[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitText("EXITED=1", 1)
	s.keys("typed-after-the-crash")
	s.waitText("typed-after-the-crash", 1)
	s.keys("Enter")
	// cat (in cooked mode) got a whole line and wrote it back.
	s.waitText("typed-after-the-crash", 2)
}

// vi and less in `secexec shell`, typed at in tmux: vi edits and writes
// a file, less pages it with line numbers and quits back to the prompt.
func TestEditorsInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed (.ci/run installs it):", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := "env " + cliProcessEnv + "=1 '" + self + "' shell; echo EXITED=$?; sleep 600"
	s.tmux("new-session", "-d", "-x", "80", "-y", "24", cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	prompt := func(sc string) bool {
		lines := strings.Split(strings.TrimRight(sc, "\n "), "\n")
		return strings.HasPrefix(lines[len(lines)-1], "bash-") && strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "$")
	}
	s.waitFor("the bash prompt", prompt)

	s.keys("cd /tmp && printf 'alpha\\nbeta\\n' > t.txt && vi t.txt", "Enter")
	s.waitText(`"t.txt" 2L, 11B`, 1)
	s.keys("d", "d", "p", "A", "!", "Escape")
	s.waitText("alpha!", 1)
	s.keys(":wq", "Enter")
	s.waitFor("the prompt after vi", prompt)
	s.keys("cat -A t.txt", "Enter")
	s.waitText("beta$\nalpha!$", 1)

	s.keys("clear; seq 1 100 > n.txt && less -N n.txt", "Enter")
	s.waitFor("less's first page", func(sc string) bool {
		return strings.HasPrefix(sc, "      1 1\n") && strings.Contains(sc, "     23 23\nn.txt")
	})
	s.keys("G")
	s.waitText("    100 100\n(END)", 1)
	s.keys("q")
	s.waitFor("the prompt after less", prompt)

	s.keys("exit 0", "Enter")
	s.waitText("EXITED=0", 1)
}
