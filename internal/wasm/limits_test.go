package wasm_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// usable checks that a VM still runs commands after a guest misbehaved.
func (v *testVM) usable() {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := v.sh(ctx, "echo ok | tr a-z A-Z; touch /tmp/after && ls /tmp/after")
	if string(r.stdout) != "OK\n/tmp/after\n" || r.code != 0 {
		v.t.Fatalf("VM not usable: stdout %q stderr %q code %d", r.stdout, r.stderr, r.code)
	}
}

// Bytes pass through pipes and files exactly: every byte value, and a
// megabyte of random data.
func TestBinarySafe(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	all := make([]byte, 256*4)
	for i := range all {
		all[i] = byte(i)
	}
	r := v.exec(ctx, []string{"cat"}, runOpts{stdin: all})
	if !bytes.Equal(r.stdout, all) || r.code != 0 {
		t.Errorf("cat of all byte values: got %d bytes (code %d, stderr %q)", len(r.stdout), r.code, r.stderr)
	}
	r = v.exec(ctx, []string{"sh", "-c", "cat > /tmp/bin && cat /tmp/bin | cat"}, runOpts{stdin: all})
	if !bytes.Equal(r.stdout, all) || r.code != 0 {
		t.Errorf("through a file and a pipeline: got %d bytes (code %d, stderr %q)", len(r.stdout), r.code, r.stderr)
	}
	r = v.sh(ctx, "head -c 1000000 /dev/urandom | wc -c")
	if string(r.stdout) != "1000000\n" || r.code != 0 {
		t.Errorf("urandom | wc: stdout %q stderr %q code %d", r.stdout, r.stderr, r.code)
	}
	r = v.exec(ctx, []string{"head", "-c", "3000000", "/dev/urandom"}, runOpts{})
	if len(r.stdout) != 3000000 || r.code != 0 {
		t.Errorf("head -c 3000000 /dev/urandom: %d bytes, code %d", len(r.stdout), r.code)
	}
}

// Processes that write and exit at once lose nothing: all output is
// delivered before the exit is reported.
func TestFastExitDeliversEverything(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	for i := 0; i < 10; i++ {
		r := v.exec(ctx, []string{"head", "-c", "65536", "/dev/zero"}, runOpts{})
		if len(r.stdout) != 65536 || r.code != 0 {
			t.Fatalf("run %d: %d bytes, code %d, stderr %q", i, len(r.stdout), r.code, r.stderr)
		}
		r = v.sh(ctx, "head -c 65536 /dev/zero")
		if len(r.stdout) != 65536 || r.code != 0 {
			t.Fatalf("run %d via sh: %d bytes, code %d", i, len(r.stdout), r.code)
		}
	}
}

// A guest that spins without calling the host stops at the deadline (the
// caller kills it) and the VM goes on.
func TestSpinningGuestStopsAtDeadline(t *testing.T) {
	v := newVM(t, vm.Config{})
	for _, cmd := range []string{
		"while :; do :; done",
		"sh -c 'while :; do :; done'; echo never",
	} {
		ctx := ctxFor(t, 1500*time.Millisecond)
		r := v.sh(ctx, cmd)
		if !r.timedOut || r.status.Signal != kernel.SIGKILL || strings.Contains(string(r.stdout), "never") {
			t.Errorf("%q: timedOut %v status %+v stdout %q", cmd, r.timedOut, r.status, r.stdout)
		}
	}
	v.usable()
}

// A guest that allocates without bound meets the memory-page cap: its
// allocation fails inside the guest, it exits non-zero, the VM goes on.
func TestMemoryCap(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx := ctxFor(t, 120*time.Second)
	r := v.sh(ctx, `x=0123456789abcdef; while :; do x="$x$x"; done`)
	if r.timedOut || r.code == 0 {
		t.Fatalf("unbounded allocation: timedOut %v code %d stderr %.200q", r.timedOut, r.code, r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte("memory allocation")) {
		t.Errorf("stderr %.300q does not report the failed allocation", r.stderr)
	}
	// Rust aborts with a trap: exit status 1 and a one-line diagnostic.
	if r.code != 1 || !bytes.HasSuffix(r.stderr, []byte("\nsh: wasm trap: unreachable\n")) {
		t.Errorf("trap: code %d, stderr ends %q", r.code, r.stderr[max(0, len(r.stderr)-80):])
	}
	v.usable()
}

// A fork bomb is contained by the process limit (EAGAIN reaches the
// shell) and the VM is usable once the bomb's process group is killed.
func TestForkBombContained(t *testing.T) {
	v := newVM(t, vm.Config{Limits: kernel.Limits{Processes: 24}})
	ctx := ctxFor(t, 60*time.Second)
	// brush starts background jobs silently; the foreground /bin/true
	// (not the builtin) after the loop shows the spawn failing with EAGAIN
	// (exit status 126).
	r := v.sh(ctx, `for i in $(seq 1 40); do sleep 60 >/dev/null 2>&1 & done; /bin/true; echo rc=$?`)
	if r.timedOut || string(r.stdout) != "rc=126\n" {
		t.Fatalf("bomb: timedOut %v stdout %.300q stderr %.300q", r.timedOut, r.stdout, r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte("Resource temporarily unavailable")) {
		t.Errorf("no EAGAIN reported: %.300q", r.stderr)
	}
	k := v.vm.Kernel
	if n := k.NumProcesses(); n < 20 {
		t.Errorf("only %d processes while the bomb's sleeps run", n)
	}
	// The sleeps were left in the shell's process group.
	_ = k.Init().Kill(-r.pid, kernel.SIGKILL)
	for k.NumProcesses() > 1 {
		time.Sleep(10 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatalf("%d processes left after the kill", k.NumProcesses())
		}
	}
	v.usable()
}

// Permission denials reach the guest as EACCES, and the VM stays intact.
func TestPermissionDenied(t *testing.T) {
	pol := policy.AllowAll().DenyFS(policy.WriteOps(), "/etc/**")
	v := newVM(t, vm.Config{Policy: pol})
	ctx := ctxFor(t, 60*time.Second)
	r := v.sh(ctx, "touch /etc/x")
	if r.code == 0 || !bytes.Contains(r.stderr, []byte("Permission denied")) {
		t.Errorf("touch /etc/x: code %d stderr %q", r.code, r.stderr)
	}
	r = v.sh(ctx, "echo hi > /etc/y; echo rc=$?; cat /etc/passwd | head -1")
	if string(r.stdout) != "rc=1\nroot:x:0:0:root:/root:/bin/sh\n" {
		t.Errorf("redirect into /etc: stdout %q stderr %q", r.stdout, r.stderr)
	}
	v.usable()
}
