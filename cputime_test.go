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
