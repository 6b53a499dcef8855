package secexec_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// Limits.CPUTime counts CPU time, for WebAssembly programs and node alike:
// a process that waits outlives it, one that computes ends with 124.
func TestCPUTimeCountsCPU(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Limits: secexec.Limits{CPUTime: 300 * time.Millisecond}})
	for _, cmd := range []string{`sleep 0.7`, `node -e 'setTimeout(() => {}, 700)'`} {
		res, err := vm.Exec(ctx, cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 {
			t.Errorf("%s: exit %d %s %q", cmd, res.ExitCode, res.Outcome, res.Stderr)
		}
	}
	for _, cmd := range []string{`yes > /dev/null`, `node -e 'for (;;) {}'`} {
		res, err := vm.Exec(ctx, cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 124 || !strings.Contains(string(res.Stderr), secexec.TimeLimitMessage) {
			t.Errorf("%s: exit %d %s %q", cmd, res.ExitCode, res.Outcome, res.Stderr)
		}
	}
}

// /proc/PID/stat reports the CPU time a process used.
func TestProcStatCPUTime(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	res, err := vm.Exec(ctx, `node -e 'const t = Date.now(); let x = 0; for (let i = 0; i < 5e7; i++) x += i; const f = require("fs").readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" "); console.log(Number(f[11]) + Number(f[12]) > 0)'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(res.Stdout)) != "true" {
		t.Fatalf("utime+stime: %q %q", res.Stdout, res.Stderr)
	}
}
