package cli_test

import (
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/cli"
)

// --clock, --real-time and --frozen-clock choose the guests' clock; an
// unknown policy or two that disagree are usage errors (exit 2, one line).
func TestClockFlags(t *testing.T) {
	for _, args := range [][]string{
		{"exec", "--clock", "fast", "true"},
		{"exec", "--real-time", "--frozen-clock", "true"},
		{"exec", "--clock", "coarse", "--real-time", "true"},
		{"exec", "--clock", "real", "--frozen-clock", "true"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, "secexec: ") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	// Frozen: the clock stands still within the process.
	const still = `const a = Date.now(), p = performance.now(); let i = 0; while (i++ < 1e6); console.log(Date.now() === a && performance.now() === p)`
	for _, flags := range [][]string{{"--frozen-clock"}, {"--clock", "frozen"}} {
		args := append(append([]string{"exec"}, flags...), "node -e '"+still+"'")
		if code, out, errOut := runCLI(t, "", args...); code != 0 || out != "true\n" {
			t.Errorf("%v: exit %d %q %q", flags, code, out, errOut)
		}
	}
	// The default and --real-time: a deadline loop ends; only real time
	// shows sub-millisecond steps.
	const fine = `const end = Date.now() + 20; let fine = false; while (Date.now() < end) if (performance.now() % 1) fine = true; console.log(fine)`
	for _, c := range []struct {
		flags []string
		want  string
	}{{nil, "false\n"}, {[]string{"--clock", "coarse"}, "false\n"}, {[]string{"--real-time"}, "true\n"}, {[]string{"--clock", "real"}, "true\n"}} {
		args := append(append([]string{"exec"}, c.flags...), "node -e '"+fine+"'")
		if code, out, errOut := runCLI(t, "", args...); code != 0 || out != c.want {
			t.Errorf("%v: exit %d %q (want %q) %q", c.flags, code, out, c.want, errOut)
		}
	}
}
