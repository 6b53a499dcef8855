package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/cli"
)

// secexec's flags end at the first argument of the guest's command line:
// what follows is the guest's, its flags included (issue #24: "secexec
// exec node -e CODE" was read as --env CODE).
func TestFlagsEndAtTheGuestCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "node", "-e", "console.log(1)"}, "1\n"},
		{[]string{"exec", "--timeout", "5s", "node", "-e", "console.log(1)"}, "1\n"},
		{[]string{"exec", "--timeout", "5s", "--", "node", "-e", "console.log(2)"}, "2\n"},
		{[]string{"exec", "--", "node", "-e", "console.log(3)"}, "3\n"},
		// secexec's own flag names after the command are the guest's too;
		// a "--" after the command is the guest's, not secexec's.
		{[]string{"exec", "-e", "A=b", "sh", "-c", `echo "$A $*"`, "sh", "--timeout", "1s", "-e", "X", "--", "--json"}, "b --timeout 1s -e X -- --json\n"},
		// Several arguments are an argv: never re-read by a shell.
		{[]string{"exec", "echo", "a | b", "$HOME", "*"}, "a | b $HOME *\n"},
		// node: secexec's flags, "--", node's.
		{[]string{"node", "--timeout", "5s", "--", "-p", "6*7"}, "42\n"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		if code != 0 || out != tc.want {
			t.Errorf("%q: exit %d, stdout %q (want %q), stderr %q", tc.args, code, out, tc.want, errOut)
		}
	}

	// run: the arguments after FILE are the script's, --check included.
	js := filepath.Join(t.TempDir(), "argv.js")
	if err := os.WriteFile(js, []byte("console.log(process.argv.slice(2).join(' '))\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "run", "--timeout", "5s", js, "--check", "-e", "x")
	if code != 0 || out != "--check -e x\n" {
		t.Errorf("run FILE --check -e x: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// node's own flags before "--" are secexec's: a usage error that says
	// where they go.
	for _, args := range [][]string{{"node", "-e", "console.log(1)"}, {"node", "-p", "1"}} {
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, `node's own`) || !strings.Contains(errOut, "--") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error naming \"--\"", args, code, errOut)
		}
	}
}

// One argument is still a command line that runs under sh -c when it
// needs a shell: the README's first command prints exactly what
// .ci/fresh-machine expects of it, and nothing on stderr.
func TestSingleCommandLineUnchanged(t *testing.T) {
	code, out, errOut := runCLI(t, "", "exec", "echo hello | wc -c")
	if code != 0 || strings.TrimSpace(out) != "6" {
		t.Errorf("pipeline: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "exec", "--", "echo a && echo b")
	if code != 0 || out != "a\nb\n" {
		t.Errorf("-- pipeline: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../.ci/testdata/readme.out")
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "go run ./cmd/secexec exec '"
	var line string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, prefix) {
			line = l
			break
		}
	}
	cmdline, ok := strings.CutSuffix(strings.TrimPrefix(line, prefix), "'")
	if line == "" || !ok || strings.Contains(cmdline, "'") {
		t.Fatalf("README's first command is not exec 'CMDLINE': %q", line)
	}
	code, out, errOut = runCLI(t, "", "exec", cmdline)
	if code != 0 || out != string(want) || errOut != "" {
		t.Errorf("README's first command: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
}

// --fs-bytes takes the sizes --memory does, and the VM holds to it: with
// 1M a 2 MiB file is refused with ENOSPC; with 4M it is written.
func TestFSBytesSizes(t *testing.T) {
	const write = `try { require('fs').writeFileSync('f', Buffer.alloc(2 << 20, 1)); console.log('wrote') } catch (e) { console.log(e.code) }`
	for _, tc := range []struct{ size, want string }{
		{"1M", "ENOSPC\n"},
		{"1048576", "ENOSPC\n"},
		{"1024k", "ENOSPC\n"},
		{"4M", "wrote\n"},
	} {
		code, out, errOut := runCLI(t, "", "exec", "--fs-bytes", tc.size, "node", "-e", write)
		if code != 0 || out != tc.want {
			t.Errorf("--fs-bytes %s: exit %d, stdout %q (want %q), stderr %q", tc.size, code, out, tc.want, errOut)
		}
	}
	// The shell's writer too: the guest command fails with the error.
	code, _, errOut := runCLI(t, "", "exec", "--fs-bytes", "1M", "head -c 2097152 /dev/zero > f")
	if code == 0 || !strings.Contains(strings.ToLower(errOut), "no space") {
		t.Errorf("head > f with --fs-bytes 1M: exit %d, stderr %q", code, errOut)
	}
}

// A size no flag reads is a usage error (exit 2, one line), whichever
// size flag it is given to.
func TestBadSizesAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"exec", "--fs-bytes", "lots", "true"},
		{"exec", "--fs-bytes", "", "true"},
		{"exec", "--fs-bytes", "0", "true"},
		{"exec", "--fs-bytes", "-1M", "true"},
		{"exec", "--fs-bytes", "2T", "true"},
		{"exec", "--fs-bytes", "1.5M", "true"},
		{"exec", "--memory", "12Q", "true"},
		{"exec", "--vm-memory", "M", "true"},
		{"exec", "--mount", "/x:/y:quota=0", "true"},
		{"node", "--fs-bytes", "x", "--", "-p", "1"},
		{"serve", "--max-file-bytes", "64X"},
		{"serve", "--max-request-bytes", "0"},
		{"serve", "--max-output-bytes", "-16M"},
		{"serve", "--max-memory", "1G1"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, "secexec: ") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
			!strings.Contains(errOut, "size such as 64M") {
			t.Errorf("%q: exit %d, stderr %q; want one usage line", args, code, errOut)
		}
	}
	// serve's sizes show their defaults the way they are written.
	code, out, _ := runCLI(t, "", "serve", "--help")
	for _, want := range []string{"--max-file-bytes size", "(default 64M)", "(default 1M)", "(default 16M)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("serve --help: exit %d, no %q in:\n%s", code, want, out)
		}
	}
}

// serve refuses a preview secret it cannot read or that is too short to
// sign with, and a preview URL that is not scheme://host, before serving.
func TestServePreviewFlags(t *testing.T) {
	t.Setenv(cli.TokenEnv, "a-token")
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--listen", "127.0.0.1:0", "--preview-secret-file", filepath.Join(t.TempDir(), "none")}, "--preview-secret-file"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--preview-secret-file", short}, "preview secret has 9 bytes"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--preview-url", "https://x/sub"}, "not scheme://host"},
	} {
		code, _, errOut := runCLI(t, "", tc.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want a usage error about %q", tc.args, code, errOut, tc.want)
		}
	}
}

// serve refuses a snapshot store URL that carries credentials or that it
// cannot parse, a credentials file it cannot read or that lacks a key,
// and --snapshot-every without a store, before serving; no error repeats
// a secret.
func TestServeSnapshotStoreFlags(t *testing.T) {
	t.Setenv(cli.TokenEnv, "a-token")
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	half := write("half", "AWS_ACCESS_KEY_ID=AKIAEXAMPLE\n")
	odd := write("odd", "AWS_ACCESS_KEY_ID=AKIAEXAMPLE\nAWS_SECRET_ACCESS_KEY=hunter2\nPASSWORD=hunter2\n")
	noeq := write("noeq", "hunter2\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--snapshot-store", "s3://AKIA:hunter2@bucket/p"}, "must not carry credentials"},
		{[]string{"--snapshot-store", "s3://bucket/p?endpoint=ftp://h"}, "want http(s)://host"},
		{[]string{"--snapshot-store", "s3://bucket/p", "--snapshot-dir", dir}, "both set"},
		{[]string{"--snapshot-store", "s3://bucket/p", "--snapshot-store-credentials", filepath.Join(dir, "none")}, "--snapshot-store-credentials"},
		{[]string{"--snapshot-store", "s3://bucket/p", "--snapshot-store-credentials", half}, "want AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{[]string{"--snapshot-store", "s3://bucket/p", "--snapshot-store-credentials", odd}, `unknown key "PASSWORD"`},
		{[]string{"--snapshot-store", "s3://bucket/p", "--snapshot-store-credentials", noeq}, "line 1 is not KEY=VALUE"},
		{[]string{"--snapshot-every", "1m"}, "snapshot-every needs a snapshot directory or store"},
		{[]string{"--snapshot-dir", dir, "--snapshot-every", "1ms"}, "at least 100ms"},
	} {
		args := append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want a usage error about %q", tc.args, code, errOut, tc.want)
		}
		if strings.Contains(errOut, "hunter2") {
			t.Errorf("%q: the error shows the secret: %s", tc.args, errOut)
		}
	}
}
