package secexec_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// The node REPL on an SDK terminal: ^C stops a busy evaluation and the
// session goes on, and the history outlives the session in the file
// NODE_REPL_HISTORY names, newest first, for the next one to recall.
func TestSuitePTYNodeREPLInterruptAndHistory(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		v := newVM(t, allowAll)
		opts := &secexec.SpawnOptions{PTY: &secexec.PTY{}, Env: map[string]string{"NODE_REPL_HISTORY": "/tmp/repl_history"}}
		p, err := v.Spawn(ctx, []string{"node"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Signal(secexec.SIGKILL) })
		s := newScreen(p)
		s.waitFor(t, "> ", 1)
		s.typ(t, "40 + 2\r")
		s.waitFor(t, "42\r\n", 1)
		// On a colour terminal results are coloured as node's are.
		if !strings.Contains(s.text(), "\x1b[33m42\x1b[39m\r\n") {
			t.Errorf("42 is not yellow: %q", s.text())
		}
		s.typ(t, "let n = 0; while (true) { n++ }\r")
		// ^C reaches the loop only once it runs (the terminal is cooked
		// then): it is typed until the REPL reports the interruption.
		const interrupted = "Uncaught Error: Script execution was interrupted by `SIGINT`"
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(s.text(), interrupted) {
			if time.Now().After(deadline) {
				t.Fatalf("^C did not stop the loop: %q", s.text())
			}
			s.typ(t, "\x03")
			time.Sleep(300 * time.Millisecond)
		}
		// The loop ran and its state is the session's.
		s.typ(t, "n > 0 ? 'ran' : 'never'\r")
		s.waitFor(t, "'ran'\r\n", 1)
		s.typ(t, ".exit\r")
		st, err := p.Wait(ctx)
		if err != nil || st.ExitCode != 0 {
			t.Fatalf("exit: %+v %v", st, err)
		}
		<-s.done
		hist, err := v.FS().ReadFile(ctx, "/tmp/repl_history")
		if err != nil {
			t.Fatal(err)
		}
		if want := ".exit\nn > 0 ? 'ran' : 'never'\nlet n = 0; while (true) { n++ }\n40 + 2"; !strings.HasPrefix(string(hist), want) {
			t.Fatalf("history file %q, want it to start %q", hist, want)
		}

		// The next session recalls the last entry with up-arrow.
		p, err = v.Spawn(ctx, []string{"node"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Signal(secexec.SIGKILL) })
		s = newScreen(p)
		s.waitFor(t, "> ", 1)
		s.typ(t, "\x1b[A\x1b[A\x1b[A\x1b[A\r")
		s.waitFor(t, "42\r\n", 1)
		s.typ(t, "\x04")
		if st, err := p.Wait(ctx); err != nil || st.ExitCode != 0 {
			t.Fatalf("exit: %+v %v", st, err)
		}
	})
}
