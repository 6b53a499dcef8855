package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// replStep is one entry at the REPL prompt: tmux keys, then the number of
// prompt lines ("> " or "... ") it adds to the screen.
type replStep struct {
	keys    []string
	prompts int
}

// replSteps are typed the same way into host node's REPL and into the
// VM's, each in a terminal of its own; the screens must then read the
// same. They cover evaluation, top-level await, require from the working
// directory, a multi-line function, history recall, line editing, ^C of
// a busy loop and of a line, and .exit.
var replSteps = []replStep{
	{[]string{"1+1", "Enter"}, 1},
	{[]string{"const x = await Promise.resolve(5); x", "Enter"}, 1},
	{[]string{"x * 2", "Enter"}, 1},
	{[]string{"require('os').EOL + require('path').basename(require.resolve.paths('x')[0])", "Enter"}, 1},
	{[]string{"function f(a) {", "Enter", "return a + 1", "Enter", "}", "Enter"}, 3},
	{[]string{"f(41)", "Enter"}, 1},
	// Up recalls f(41); ^A and ^E move, ^B steps back a character.
	{[]string{"Up", "C-a", "-", "C-e", "C-b", "BSpace", "0", "Enter"}, 1},
	// ^W deletes a word, ^U the line's start, backspace a character.
	{[]string{"[1, 'two', null, undefined] junk", "C-w", "BSpace", "Enter"}, 1},
	{[]string{"garbage", "C-u", "typeof _ + typeof os + ' ' + _error", "Enter"}, 1},
	{[]string{"nope", "Enter"}, 1},
	{[]string{"_error.message", "Enter"}, 1},
	{[]string{"let o = { a: 1, b: 'x' }", "Enter"}, 1},
	{[]string{"o", "Enter"}, 1},
	{[]string{"while (true) {}", "Enter", "C-c"}, 1},
	{[]string{"1+2", "Enter"}, 1},
	{[]string{"half typed", "C-c"}, 1},
	{[]string{"C-c"}, 1},
	{[]string{".exit", "Enter"}, 0},
}

// nodeStack is the stack and code node prints below an interrupted
// evaluation's first line: its own REPL's frames, which the VM's REPL
// does not imitate.
var nodeStack = regexp.MustCompile(`(?m)^(    at .*|  code: .*|})\n`)

// promptLine is a line that starts with a prompt (tmux drops the
// trailing space of an empty one).
var promptLine = regexp.MustCompile(`(?m)^(>|\.\.\.)( |$)`)

// replTranscript runs cmd in tmux, types the steps and returns the
// screen from the greeting on, with node's version and stack frames
// left out.
func replTranscript(t *testing.T, cmd string, steps []replStep) string {
	t.Helper()
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	s.tmux("new-session", "-d", "-x", "120", "-y", "90", cmd+"; echo EXITED=$?; sleep 600")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	count := func() int { return len(promptLine.FindAllString(s.screen(), -1)) }
	// ready: n prompts, and the screen ends in one (an evaluation's
	// output is complete).
	ready := func(n int) func(string) bool {
		return func(sc string) bool {
			lines := strings.Split(strings.TrimRight(sc, "\n "), "\n")
			return len(promptLine.FindAllString(sc, -1)) >= n && promptLine.MatchString(lines[len(lines)-1])
		}
	}
	s.waitFor("the first prompt", ready(1))
	for _, st := range steps {
		n := count() + st.prompts
		if st.prompts == 0 {
			for _, k := range st.keys {
				s.keys(k)
			}
			continue
		}
		for _, k := range st.keys {
			if k == "C-c" && st.keys[0] == "while (true) {}" {
				// ^C of a busy loop must come once it runs, when the
				// terminal is back in cooked mode: nothing on the screen
				// shows that moment, so the test gives it time.
				time.Sleep(time.Second)
			}
			s.keys(k)
			// Keys come at a typist's pace: node's key decoder times
			// out an escape sequence that arrives in pieces.
			time.Sleep(50 * time.Millisecond)
		}
		s.waitFor(strings.Join(st.keys, " "), ready(n))
	}
	s.waitText("EXITED=", 1)
	sc := s.screen()
	if os.Getenv("REPL_DEBUG") != "" {
		t.Logf("raw screen:\n%s", sc)
	}
	i := strings.Index(sc, "Welcome to Node.js ")
	if i < 0 {
		t.Fatalf("no greeting:\n%s", sc)
	}
	sc = regexp.MustCompile(`Node\.js v[0-9.]+`).ReplaceAllString(sc[i:], "Node.js vX")
	return strings.TrimRight(nodeStack.ReplaceAllString(sc, ""), "\n")
}

// The VM's REPL on a terminal against host node's (the oracle) on the
// same keys.
func TestREPLInTmuxLikeHostNode(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed (.ci/run installs it):", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("host node is needed as the oracle:", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// History off for host node: the test must not touch the host's.
	hostNode := "env NODE_REPL_HISTORY= '" + node + "'"
	vmNode := "env " + cliProcessEnv + "=1 '" + self + "' exec -t node"
	// ^D on an empty line and ^C twice end the REPL too.
	for _, steps := range [][]replStep{
		{{[]string{"2**10", "Enter"}, 1}, {[]string{"C-d"}, 0}},
		{{[]string{"C-c"}, 1}, {[]string{"C-c"}, 0}},
	} {
		if got, want := replTranscript(t, vmNode, steps), replTranscript(t, hostNode, steps); got != want {
			t.Errorf("the VM's REPL differs from host node's.\nVM:\n%s\n\nhost node:\n%s", got, want)
		}
	}
	want := replTranscript(t, hostNode, replSteps)
	got := replTranscript(t, vmNode, replSteps)
	if got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Errorf("line %d: VM %q, host node %q", i+1, g[i], w[i])
				break
			}
		}
		t.Fatalf("the VM's REPL differs from host node's.\nVM:\n%s\n\nhost node:\n%s", got, want)
	}
	for _, line := range []string{"> 1+2\n3", "Uncaught Error: Script execution was interrupted by `SIGINT`", "> -f(40)\n-41", "EXITED=0"} {
		if !strings.Contains(got, line) {
			t.Errorf("the transcript lacks %q:\n%s", line, got)
		}
	}
}

// A script's readline question on a terminal edits the answer as host
// node's does, and the script exits once readline is closed (a paused
// stdin does not keep it alive).
func TestReadlineQuestionInTmuxLikeHostNode(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed (.ci/run installs it):", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("host node is needed as the oracle:", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const script = `const rl = require('readline').createInterface({ input: process.stdin, output: process.stdout }); ` +
		`rl.question('name? ', (a) => { console.log('hi ' + a + '|'); rl.close(); })`
	run := func(cmd string) string {
		s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
		s.tmux("new-session", "-d", "-x", "80", "-y", "10", cmd+` -e "$SCRIPT"; echo EXITED=$?; sleep 600`)
		t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
		s.waitText("name?", 1)
		for _, k := range []string{"bobx", "BSpace", "Left", "Left", "Right", "C-a", "Right", "C-e", "!", "Enter"} {
			s.keys(k)
			time.Sleep(50 * time.Millisecond)
		}
		s.waitText("EXITED=", 1)
		sc := s.screen()
		return strings.TrimRight(sc[strings.Index(sc, "name?"):], "\n")
	}
	t.Setenv("SCRIPT", script)
	want := run("'" + node + "'")
	got := run("env " + cliProcessEnv + "=1 '" + self + "' exec -t node")
	if got != want || !strings.Contains(got, "hi bob!|\nEXITED=0") {
		t.Fatalf("VM:\n%s\n\nhost node:\n%s", got, want)
	}
}
