// Package security_test is secexec's hostile-guest suite: each test is an
// attack from docs/threat-model.md run black-box through the public SDK
// (and, for the engine protocol, against a real engine process), ending
// in the documented typed result with the VM still usable afterwards.
package security_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// TestMain lets this test binary serve as the engine process of the VMs
// its tests create: they run in engine processes by default, so a hostile
// guest meets the same stack as in production.
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	os.Exit(m.Run())
}

// newVM makes a VM that is closed when the test ends.
func newVM(t *testing.T, opts secexec.Options) *secexec.VM {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vm, err := secexec.NewVM(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vm.Close() })
	return vm
}

// run runs argv in vm, bounded by a wall-clock backstop: an attack that
// is not stopped by the VM's own limits fails the test instead of
// hanging it.
func run(t *testing.T, vm *secexec.VM, argv []string, opts *secexec.ExecOptions) *secexec.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := vm.Run(ctx, argv, opts)
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return res
}

// node runs a node script in vm.
func node(t *testing.T, vm *secexec.VM, code string) *secexec.Result {
	t.Helper()
	return run(t, vm, []string{"node", "-e", code}, nil)
}

// sh runs a shell command line in vm.
func sh(t *testing.T, vm *secexec.VM, cmdline string) *secexec.Result {
	t.Helper()
	return run(t, vm, []string{"sh", "-c", cmdline}, nil)
}

// usable checks that vm still runs a WebAssembly command and a node
// process after an attack, and that the attack left no guest process
// behind.
func usable(t *testing.T, vm *secexec.VM) {
	t.Helper()
	if r := run(t, vm, []string{"echo", "ok"}, nil); string(r.Stdout) != "ok\n" {
		t.Fatalf("VM unusable after the attack: echo: exit %d %q %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	if r := node(t, vm, `console.log(1 + 1)`); string(r.Stdout) != "2\n" {
		t.Fatalf("VM unusable after the attack: node: exit %d %q %q", r.ExitCode, r.Stdout, trunc(r.Stderr))
	}
	// Only init and the ls that lists them may be alive.
	r := node(t, vm, `console.log(require('fs').readdirSync('/proc').filter(x => /^\d+$/.test(x)).length)`)
	if n := strings.TrimSpace(string(r.Stdout)); n != "2" {
		t.Fatalf("processes left behind: %s live (want init and this one) %q", n, trunc(r.Stderr))
	}
}

func trunc(b []byte) string {
	if len(b) > 800 {
		return string(b[:800]) + "..."
	}
	return string(b)
}

// expect checks an attack's result: its exit code and a text its stderr
// (or, for node scripts that catch the error, stdout) must hold.
func expect(t *testing.T, r *secexec.Result, code int, text string) {
	t.Helper()
	if r.ExitCode != code || !bytes.Contains(append(append([]byte{}, r.Stdout...), r.Stderr...), []byte(text)) {
		t.Errorf("exit %d (want %d), want %q in output\nstdout %q\nstderr %q", r.ExitCode, code, text, trunc(r.Stdout), trunc(r.Stderr))
	}
}
