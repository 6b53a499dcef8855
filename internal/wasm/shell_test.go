package wasm_test

import (
	"context"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
)

// brush drops "2>&1" when its stdout is the pipe it inherited: the
// command's stderr stayed the shell's stderr. The loader works around it
// (shellArgv); without that, these lines reach stderr instead of stdout.
// Still lost: a shell whose stdout is a regular file it inherited
// (`sh script > f` with 2>&1 inside the script).
func TestShellDupsInheritedStdout(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range []struct{ cmd, stdout, stderr string }{
		{"ls /nonexist 2>&1", "ls: cannot access '/nonexist': No such file or directory\n", ""},
		{"{ ls /a; ls /b; } 2>&1", "ls: cannot access '/a': No such file or directory\nls: cannot access '/b': No such file or directory\n", ""},
		{"ls / /nonexist 2>&1 >/dev/null", "ls: cannot access '/nonexist': No such file or directory\n", ""},
		{"echo out; ls /e 1>&2", "out\n", "ls: cannot access '/e': No such file or directory\n"},
		{"sh -c 'ls /n' 2>&1", "ls: cannot access '/n': No such file or directory\n", ""},
		{"sh -c 'ls /n 2>&1' | cat", "ls: cannot access '/n': No such file or directory\n", ""},
	} {
		r := v.sh(ctx, c.cmd)
		if string(r.stdout) != c.stdout || string(r.stderr) != c.stderr {
			t.Errorf("sh -c %q: stdout %q, stderr %q; want %q, %q", c.cmd, r.stdout, r.stderr, c.stdout, c.stderr)
		}
	}
}
