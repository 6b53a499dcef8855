package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/kernel"
)

func TestMain(m *testing.M) { vmtest.Main(m) }

// BenchmarkShell measures sh -c in a VM: the shell's start-up, and a
// pipeline of a builtin into a program. brush, the shell it replaces, is
// still there as "brush" for comparison.
func BenchmarkShell(b *testing.B) {
	h := vmtest.NewHost(b, vmhost.Config{})
	for _, bc := range []struct {
		name string
		argv []string
		out  string
	}{
		{"sh_true", []string{"sh", "-c", "true"}, ""},
		{"sh_echo_wc", []string{"sh", "-c", "echo hello | wc -c"}, "6\n"},
		{"brush_true", []string{"brush", "-c", "true"}, ""},
		{"brush_echo_wc", []string{"brush", "-c", "echo hello | wc -c"}, "6\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			vmtest.Run(b, h, "", nil, bc.argv...)
			b.ResetTimer()
			for b.Loop() {
				r := vmtest.Run(b, h, "", nil, bc.argv...)
				if r.Exit.Code != 0 || r.Stdout != bc.out {
					b.Fatalf("%q: stdout %q stderr %q code %d", bc.argv, r.Stdout, r.Stderr, r.Exit.Code)
				}
			}
		})
	}
}

// A runaway shell is a guest process like any other: a loop ends at the
// CPU-time limit and at the caller's timeout, and unbounded string growth
// at the memory limit, while the VM stays usable.
func TestShellBounded(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{Limits: kernel.Limits{CPUTime: time.Second, MemoryBytes: 64 << 20}})

	r := vmtest.Run(t, h, "", nil, "sh", "-c", "while :; do :; done")
	if r.Exit.Signal != "SIGXCPU" && r.Exit.Reason != vmhost.ReasonCPUTime {
		t.Errorf("CPU loop: exit %+v, want ended by the CPU-time limit", r.Exit)
	}

	var out, errb bytes.Buffer
	ex, err := h.Run(context.Background(), vmhost.RunSpec{Argv: []string{"bash", "-c", "while :; do sleep 0.01; done"},
		Env: vmtest.Env, Stdout: &out, Stderr: &errb, Timeout: 300 * time.Millisecond})
	if err != nil || ex.Outcome != vmhost.TimedOut {
		t.Errorf("sleeping loop: %v %+v, want timed out", err, ex)
	}

	r = vmtest.Run(t, h, "", nil, "bash", "-c", "x=0123456789; while :; do x=$x$x; done; echo unreachable")
	if r.Exit.Code == 0 || strings.Contains(r.Stdout, "unreachable") {
		t.Errorf("doubling a string: exit %+v stdout %q, want the process to fail at the memory limit", r.Exit, r.Stdout)
	}
	r = vmtest.Run(t, h, "", nil, "bash", "-c", "a=(); while :; do a+=(xxxxxxxxxxxxxxxx); done")
	if r.Exit.Code == 0 {
		t.Errorf("growing an array: exit %+v, want the process to fail at a limit", r.Exit)
	}

	r = vmtest.Run(t, h, "", nil, "sh", "-c", "set -e; false; echo REACHED")
	if r.Exit.Code != 1 || r.Stdout != "" {
		t.Errorf("set -e after the limits: exit %+v stdout %q", r.Exit, r.Stdout)
	}
}

// Shells after the first start from a snapshot of an initialised one
// (internal/wasm): each still draws its own $RANDOM, from the host's
// random_get, not from the Go runtime's generator that the snapshot
// fixed.
func TestShellRunsFromSnapshot(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	before := vmtest.Shared(t).Engine.Stats().Restored
	r := vmtest.Run(t, h, "", nil, "sh", "-c", `for i in 1 2 3 4 5 6; do sh -c 'echo $RANDOM'; done`)
	if r.Exit.Code != 0 {
		t.Fatalf("exit %+v stderr %q", r.Exit, r.Stderr)
	}
	seen := map[string]bool{}
	for _, v := range strings.Fields(r.Stdout) {
		seen[v] = true
	}
	if len(seen) < 5 {
		t.Errorf("six shells drew %q: $RANDOM repeats across shells", r.Stdout)
	}
	if n := vmtest.Shared(t).Engine.Stats().Restored - before; n < 4 {
		t.Errorf("%d of 7 shells started from the snapshot", n)
	}
}

// The shell's instances are recycled between processes (internal/wasm
// recycle.go): back-to-back `sh -c` runs reuse a reset instance instead
// of instantiating the module each time, and each run is still its own
// process (its arguments, environment, exit status). A change that makes
// every run grow the shell's memory past its snapshot would stop the
// recycling silently; this catches it.
func TestShellInstancesRecycled(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	eng := vmtest.Shared(t).Engine
	vmtest.Run(t, h, "", nil, "sh", "-c", "true")
	before := eng.Stats()
	for i := range 20 {
		want := strings.Repeat("x", i)
		r := vmtest.Run(t, h, "", []string{"V=" + want}, "sh", "-c", `printf '%s\n' "$V"; exit $1`, "sh", "7")
		if r.Stdout != want+"\n" || r.Exit.Code != 7 {
			t.Fatalf("run %d: stdout %q stderr %q exit %+v", i, r.Stdout, r.Stderr, r.Exit)
		}
	}
	after := eng.Stats()
	if n := after.Recycled - before.Recycled; n < 10 {
		t.Fatalf("%d of 20 shells ran on recycled instances: before %+v after %+v", n, before, after)
	}
}

// TestUlimitShowsTheVMsLimits: ulimit reads the limits the kernel
// enforces on each process (from /proc/self/limits) in bash's units, and
// a guest cannot change them.
func TestUlimitShowsTheVMsLimits(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{Limits: kernel.Limits{
		CPUTime: 90 * time.Second, MemoryBytes: 64 << 20, Processes: 37, FDsPerProcess: 99}})
	for script, want := range map[string]string{
		"ulimit -n":                  "99\n",
		"ulimit -Hn":                 "99\n",
		"ulimit -u":                  "37\n",
		"ulimit -t":                  "90\n",
		"ulimit -v":                  "65536\n",
		"ulimit -d":                  "65536\n",
		"ulimit -f":                  "unlimited\n",
		"ulimit -c":                  "0\n",
		"ulimit -H -c":               "unlimited\n",
		"ulimit -n -u":               "open files                          (-n) 99\nmax user processes                  (-u) 37\n",
		"ulimit -c 0; ulimit -c":     "0\n",
		"ulimit -a | grep -c .":      "9\n",
		"ulimit -n 1000000; echo $?": "1\n",
	} {
		r := vmtest.Run(t, h, "", nil, "sh", "-c", script)
		if r.Stdout != want {
			t.Errorf("%s: %q (exit %d, %q), want %q", script, r.Stdout, r.Exit.Code, r.Stderr, want)
		}
	}
	// With nothing configured, the engines' own per-process memory and
	// the kernel's default counts show.
	d := vmtest.NewHost(t, vmhost.Config{})
	r := vmtest.Run(t, d, "", nil, "sh", "-c", "ulimit -v; ulimit -t; ulimit -n")
	want := fmt.Sprintf("%d\nunlimited\n%d\n", kernel.DefaultProcessMemoryBytes/1024, kernel.DefaultLimits().FDsPerProcess)
	if r.Stdout != want {
		t.Errorf("defaults: %q, want %q", r.Stdout, want)
	}
}
