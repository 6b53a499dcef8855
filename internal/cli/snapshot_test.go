package cli_test

import (
	"regexp"
	"testing"
)

// TestExecSnapshotFlags: --save-snapshot saves the VM after the command
// and prints where; --from-snapshot starts another from it.
func TestExecSnapshotFlags(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "", "exec", "--save-snapshot", dir, "-e", "K=v", "echo saved > f")
	if code != 0 {
		t.Fatalf("save: exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`snapshot (\S+) \(1 files`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no snapshot line: %q", stderr)
	}
	code, stdout, stderr := runCLI(t, "", "exec", "--from-snapshot", m[1], `cat f; echo $K`)
	if code != 0 || stdout != "saved\nv\n" {
		t.Fatalf("restore: exit %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "", "exec", "--from-snapshot", dir+"/0123456789abcdef0123456789abcdef", "true"); code == 0 {
		t.Fatalf("a missing snapshot worked: %q", stderr)
	}
}
