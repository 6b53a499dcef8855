package secexec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/secexec/secexec"
)

// After exec, the process is its new program: /proc shows the new
// command line and executable, and a runtime that takes over (node after
// a WASM shell's exec) gets the new arguments.
func TestExecReplacesImage(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	res, err := vm.Exec(ctx, `sh -c 'exec cat /proc/self/cmdline'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.ReplaceAll(string(res.Stdout), "\x00", " "); got != "cat /proc/self/cmdline " {
		t.Fatalf("cmdline after exec: %q (stderr %q)", got, res.Stderr)
	}
	res, err = vm.Exec(ctx, `sh -c 'exec readlink /proc/self/exe'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); !strings.HasSuffix(got, "/readlink") {
		t.Fatalf("exe after exec: %q (stderr %q)", got, res.Stderr)
	}
	res, err = vm.Exec(ctx, `sh -c 'exec node -e "console.log(JSON.stringify(process.argv.slice(1)))" a b'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != `["a","b"]` {
		t.Fatalf("node after exec: %q (stderr %q)", got, res.Stderr)
	}
}

// A fatal signal a process sends itself takes effect when kill returns,
// as on Linux: the shell runs nothing after it.
func TestSelfKillStopsAtOnce(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	for i := 0; i < 20; i++ {
		res, err := vm.Exec(ctx, `sh -c 'kill -TERM $$; echo survived'`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Stdout) != 0 || res.ExitCode != 128+15 {
			t.Fatalf("run %d: exit %d stdout %q", i, res.ExitCode, res.Stdout)
		}
	}
}
