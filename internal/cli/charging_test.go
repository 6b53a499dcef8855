package cli_test

import (
	"strings"
	"testing"
)

// --vm-cpu-time bounds all the VM's processes together: busy loops that
// have no per-process limit end with the CPU-limit result (exit 124).
// Bad values of the VM-wide flags are usage errors.
func TestVMWideLimitFlags(t *testing.T) {
	code, _, errOut := runCLI(t, "", "exec", "--vm-cpu-time", "1s", "--vm-memory", "512M",
		"node -e 'for(;;);' & node -e 'for(;;);'; wait")
	if code != 124 || !strings.Contains(errOut, "CPU time limit exceeded") {
		t.Fatalf("exit %d stderr %q, want 124 and the CPU-limit message", code, errOut)
	}
	for _, args := range [][]string{
		{"exec", "--vm-memory", "lots", "true"},
		{"exec", "--vm-memory", "0", "true"},
		{"exec", "--vm-cpu-time", "-1s", "true"},
		{"serve", "--max-memory", "lots"},
		{"serve", "--max-cpu-time", "0s"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
