package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/cli"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "secexec ") {
		t.Fatalf("version: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "", "help")
	if code != 0 || !strings.Contains(out, "exec") || !strings.Contains(out, "software") {
		t.Fatalf("help: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--help")
	if code != 0 || !strings.Contains(out, "Usage:") {
		t.Fatalf("--help: %d %q", code, out)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"exec", "--no-such-flag", "true"},
		{"exec"},
		{"version", "extra"},
		{"exec", "--mount", "nocolon", "true"},
		{"exec", "--mount", "/x:relative", "true"},
		{"exec", "--env", "NOEQUALS", "true"},
		{"exec", "--permissions", "/nonexistent/policy.json", "true"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage {
			t.Errorf("%v: exit %d", args, code)
		}
		if !strings.HasPrefix(errOut, "secexec: ") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: want one clear line on stderr, got %q", args, errOut)
		}
	}
	if code, _, _ := runCLI(t, "", "nosuchcommand"); code != cli.ExitUsage {
		t.Errorf("unknown command exited %d", code)
	}
}
