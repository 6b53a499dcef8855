package secexec_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
)

// screen is what an SDK user's terminal emulator would be in the PTY
// test: it collects the output and answers the cursor position query
// (ESC[6n) that bash sends before drawing its prompt.
type screen struct {
	mu       sync.Mutex
	b        bytes.Buffer
	answered int
	p        *secexec.Process
	done     chan struct{}
}

func newScreen(p *secexec.Process) *screen {
	s := &screen{p: p, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := p.Stdout.Read(buf)
			s.mu.Lock()
			s.b.Write(buf[:n])
			queries := bytes.Count(s.b.Bytes(), []byte("\x1b[6n"))
			answer := queries - s.answered
			s.answered = queries
			s.mu.Unlock()
			for range answer {
				_, _ = p.Stdin.Write([]byte("\x1b[1;1R"))
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sgr matches the colour sequences (SGR) a program writes on a colour
// terminal, such as node's REPL results.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// waitFor polls (generously) until the output, without its colours,
// contains want n times.
func (s *screen) waitFor(t *testing.T, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(sgr.ReplaceAllString(s.text(), ""), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q (%d times); it shows %q", want, n, s.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *screen) typ(t *testing.T, keys string) {
	t.Helper()
	if _, err := s.p.Stdin.Write([]byte(keys)); err != nil {
		t.Fatalf("typing %q: %v", keys, err)
	}
}

func TestSuitePTYBash(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		v := newVM(t, allowAll)
		p, err := v.Spawn(ctx, []string{"bash"}, &secexec.SpawnOptions{PTY: &secexec.PTY{Rows: 24, Cols: 80}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Signal(secexec.SIGKILL) })
		s := newScreen(p)
		// bash is interactive only when its stdin is a terminal: the
		// prompt proves isatty, and its line editor runs in raw mode. It
		// turns bracketed paste on whenever it starts reading a line.
		const prompt = "\x1b[?2004h"
		s.waitFor(t, prompt, 1)
		s.waitFor(t, "$ ", 1)
		s.typ(t, "test -t 0 && test -t 1 && test -t 2 && echo pty-$((6*7))\r")
		s.waitFor(t, "pty-42\r\n", 1)
		s.waitFor(t, prompt, 2)

		// /dev/tty is the session's terminal; /dev/pts lists it.
		s.typ(t, "echo via-dev-tty > /dev/tty; ls /dev/pts\r")
		s.waitFor(t, "via-dev-tty\r\n0\r\n", 1)
		s.waitFor(t, prompt, 3)

		// ^C interrupts the foreground job, not the shell.
		s.typ(t, "echo sleeping; sleep 100\r")
		s.waitFor(t, "sleeping\r\n", 1)
		deadline := time.Now().Add(30 * time.Second)
		for strings.Count(s.text(), prompt) < 4 {
			if time.Now().After(deadline) {
				t.Fatalf("^C did not end sleep: %q", s.text())
			}
			s.typ(t, "\x03")
			time.Sleep(500 * time.Millisecond)
		}
		s.typ(t, "echo rc=$?\r")
		s.waitFor(t, "rc=130\r\n", 1)

		// The window size reaches node, after a resize too.
		if err := p.Resize(40, 120); err != nil {
			t.Fatal(err)
		}
		s.typ(t, "node -e 'console.log(process.stdout.isTTY, process.stdout.columns + \"x\" + process.stdout.rows)'\r")
		s.waitFor(t, "true 120x40\r\n", 1)

		s.typ(t, "exit 3\r")
		st, err := p.Wait(ctx)
		if err != nil || st.ExitCode != 3 {
			t.Fatalf("exit: %+v %v", st, err)
		}
		<-s.done
	})
}

func TestSuitePTYNodeREPL(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		v := newVM(t, allowAll)
		p, err := v.Spawn(ctx, []string{"node"}, &secexec.SpawnOptions{PTY: &secexec.PTY{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Signal(secexec.SIGKILL) })
		s := newScreen(p)
		s.waitFor(t, "> ", 1)
		s.typ(t, "let x = 6\r")
		s.waitFor(t, "> ", 2)
		s.typ(t, "x * 7\r")
		s.waitFor(t, "42\r\n", 1)
		s.typ(t, "[process.stdin.isTTY, process.stdout.rows, process.stdout.columns]\r")
		s.waitFor(t, "[ true, 24, 80 ]", 1)
		s.typ(t, "{ a: 1 }\r")
		s.waitFor(t, "{ a: 1 }\r\n", 1)
		s.typ(t, "nope(\r")
		s.waitFor(t, "... ", 1)
		s.typ(t, ")\r")
		s.waitFor(t, "Uncaught ReferenceError: nope is not defined", 1)
		// ^C is caught by the REPL; ^D on an empty line ends it.
		s.typ(t, "\x03")
		s.waitFor(t, "(To exit, press Ctrl+C again or Ctrl+D or type .exit)", 1)
		s.typ(t, "\x04")
		st, err := p.Wait(ctx)
		if err != nil || st.ExitCode != 0 {
			t.Fatalf("exit: %+v %v", st, err)
		}
		// A process without a terminal cannot be resized.
		q, err := v.Spawn(ctx, []string{"sleep", "100"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Resize(10, 10); !errors.Is(err, errno.ENOTTY) {
			t.Fatalf("Resize without a terminal: %v, want ENOTTY", err)
		}
		_ = q.Signal(secexec.SIGKILL)
		_, _ = q.Wait(ctx)
	})
}
