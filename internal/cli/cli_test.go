package cli_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/secexec/secexec"
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
		{"exec", "--mount", "/x:/y:bogus", "true"},
		{"exec", "--mount", "/x:/y:rw,quota=lots", "true"},
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

// The CLI runs VMs in engine processes: this test binary re-executed.
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	// Started by runCLIProcess: be the secexec command.
	if os.Getenv(cliProcessEnv) == "1" {
		// As cmd/secexec: SIGINT and SIGTERM stop the command.
		ctx, stop := cli.SignalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		secexec.Shutdown(context.Background()) // as cmd/secexec does
		os.Exit(code)
	}
	os.Exit(m.Run())
}

const cliProcessEnv = "SECEXEC_TEST_RUN_CLI"

// runCLIProcess runs the CLI as a process of its own (this test binary),
// with env added to this process's environment, so that it starts its own
// engine with that environment, as a user's command does.
func runCLIProcess(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), cliProcessEnv+"=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// The engine's records reach the command's stderr when asked for: the
// per-exec phases with SECEXEC_SESSION_PHASES=1 (each node start naming
// its warm-pool result), everything down to debug with --log-level.
func TestEngineLogsReachStderr(t *testing.T) {
	code, out, errOut := runCLIProcess(t, []string{"SECEXEC_SESSION_PHASES=1"}, "exec", "node -e '' ; node -e ''")
	if code != 0 || out != "" {
		t.Fatalf("exec: %d %q %s", code, out, errOut)
	}
	warm := regexp.MustCompile(`msg="js: session phases" .*warm_worker=warm_worker_(hit|miss) .*bootstrap=`)
	if n := len(warm.FindAllString(errOut, -1)); n != 2 {
		t.Errorf("%d js phase lines naming the warm-pool result, want 2:\n%s", n, errOut)
	}
	if !strings.Contains(errOut, `msg="wasm: session phases" pid=`) {
		t.Errorf("no wasm phase line (the shell's):\n%s", errOut)
	}

	code, _, errOut = runCLIProcess(t, nil, "--log-level", "debug", "exec", "true")
	if code != 0 || !strings.Contains(errOut, "level=DEBUG") {
		t.Errorf("--log-level debug: exit %d, stderr:\n%s", code, errOut)
	}
	code, _, errOut = runCLIProcess(t, nil, "exec", "true")
	if code != 0 || errOut != "" {
		t.Errorf("default level: exit %d, stderr %q (want nothing)", code, errOut)
	}
	if code, _, errOut = runCLIProcess(t, nil, "--log-level", "loud", "exec", "true"); code != 2 || !strings.Contains(errOut, "--log-level") {
		t.Errorf("bad --log-level: exit %d, %q", code, errOut)
	}
}

func TestExecAsAUserWould(t *testing.T) {
	// stdin passes through; the exit code is the guest's.
	code, out, _ := runCLI(t, "b\na\n", "exec", "sort")
	if code != 0 || out != "a\nb\n" {
		t.Fatalf("sort: %d %q", code, out)
	}
	code, _, _ = runCLI(t, "", "exec", "exit 42")
	if code != 42 {
		t.Fatalf("exit 42: %d", code)
	}
	code, _, errOut := runCLI(t, "", "exec", "no-such-command")
	if code != 127 || !strings.Contains(errOut, "not found") {
		t.Fatalf("not found: %d %q", code, errOut)
	}
	// Binary stdout is byte-exact.
	var all strings.Builder
	for i := 0; i < 256; i++ {
		all.WriteByte(byte(i))
	}
	code, out, _ = runCLI(t, all.String(), "exec", "cat")
	if code != 0 || out != all.String() {
		t.Fatalf("binary cat: %d, %d bytes", code, len(out))
	}
	code, out, _ = runCLI(t, "", "exec", "--json", "printf abc")
	if code != 0 || !strings.Contains(out, `"stdout":"YWJj"`) || !strings.Contains(out, `"outcome":"succeeded"`) {
		t.Fatalf("json: %d %q", code, out)
	}
	code, _, errOut = runCLI(t, "", "exec", "--timeout", "200ms", "sleep 5")
	if code != 124 || !strings.Contains(errOut, "timed out after 200ms (wall-clock timeout)") || strings.Contains(errOut, "CPU time") {
		t.Fatalf("timeout: %d %q", code, errOut)
	}
}

func TestNodeEvalRun(t *testing.T) {
	code, out, _ := runCLI(t, "", "eval", "[1 + 1, 'x']")
	if code != 0 || out != "[2,\"x\"]\n" {
		t.Fatalf("eval: %d %q", code, out)
	}
	code, _, errOut := runCLI(t, "", "eval", "null.x")
	if code != 1 || !strings.Contains(errOut, "TypeError") {
		t.Fatalf("eval error: %d %q", code, errOut)
	}
	code, out, _ = runCLI(t, "", "node", "--", "-p", "6*7")
	if code != 0 || out != "42\n" {
		t.Fatalf("node -p: %d %q", code, out)
	}
	dir := t.TempDir()
	ts := filepath.Join(dir, "main.ts")
	if err := os.WriteFile(ts, []byte("const n: number = 21;\nconsole.log(n * 2, process.argv[2]);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "run", ts, "arg")
	if code != 0 || out != "42 arg\n" {
		t.Fatalf("run .ts: %d %q %q", code, out, errOut)
	}
}
