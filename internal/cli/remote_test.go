package cli_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/secexec/secexec/client"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/cli"
)

const remoteToken = "alice-token"

// startServer runs a real API server on a loopback port for the CLI to
// talk to, and returns its URL and a client of it.
func startServer(t *testing.T) (string, *client.Client) {
	t.Helper()
	s, err := api.New(api.Config{Tokens: []api.Token{{Tenant: "alice", Hash: api.HashToken(remoteToken)}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		_ = s.Shutdown(context.Background())
	})
	c, err := client.New(hs.URL, client.Options{Token: remoteToken})
	if err != nil {
		t.Fatal(err)
	}
	return hs.URL, c
}

// vmCount is how many VMs the server holds for the tenant.
func vmCount(t *testing.T, c *client.Client) int {
	t.Helper()
	vms, err := c.ListVMs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(vms)
}

// exec against a server: the same output, exit codes and flag rules as a
// local run, and no VM left behind.
func TestRemoteExec(t *testing.T) {
	url, c := startServer(t)
	remote := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, stdin, append([]string{"--server", url, "--token", remoteToken}, args...)...)
	}
	for _, tc := range []struct {
		stdin string
		args  []string
		code  int
		out   string
		err   string
	}{
		{"", []string{"exec", "echo hello | wc -c"}, 0, "6\n", ""},
		{"", []string{"exec", "node", "-e", "console.log(1)"}, 0, "1\n", ""},
		{"", []string{"exec", "-e", "A=b", "sh", "-c", `echo "$A $*"; echo E >&2; exit 3`, "sh", "--timeout", "1s"}, 3, "b --timeout 1s\n", "E\n"},
		{"", []string{"exec", "echo", "a | b", "$HOME"}, 0, "a | b $HOME\n", ""},
		{"b\na\n", []string{"exec", "sort"}, 0, "a\nb\n", ""},
		{"", []string{"exec", "--cwd", "/tmp", "pwd"}, 0, "/tmp\n", ""},
		{"", []string{"node", "--", "-p", "6*7"}, 0, "42\n", ""},
		{"", []string{"eval", "[1, 2].map(x => x * 2)"}, 0, "[2,4]\n", ""},
		// The policy travels: without exec rules nothing runs.
		{"", []string{"exec", "--permissions", "none", "--allow-read", "/**", "echo", "hi"}, 126, "", ""},
	} {
		code, out, errOut := remote(tc.stdin, tc.args...)
		if code != tc.code || out != tc.out || (tc.err != "" && errOut != tc.err) {
			t.Errorf("%q: exit %d (want %d), stdout %q (want %q), stderr %q", tc.args, code, tc.code, out, tc.out, errOut)
		}
	}
	// run: the host file is copied into the VM and run with its args.
	js := filepath.Join(t.TempDir(), "argv.js")
	must(t, os.WriteFile(js, []byte("console.log(process.argv.slice(2).join(' '), process.cwd())\n"), 0o644))
	if code, out, errOut := remote("", "run", js, "--check", "-e"); code != 0 || out != "--check -e /workspace\n" {
		t.Errorf("run FILE: exit %d, %q %q", code, out, errOut)
	}
	// The wall-clock timeout: 124 and the message a local run prints.
	code, _, errOut := remote("", "exec", "--timeout", "500ms", "sleep 30")
	if code != 124 || !strings.Contains(errOut, "wall-clock timeout") {
		t.Errorf("--timeout: exit %d, stderr %q", code, errOut)
	}
	// --json: the same shape as a local run's.
	code, out, _ := remote("", "exec", "--json", "printf x; exit 2")
	var res struct {
		ExitCode int    `json:"exit_code"`
		Outcome  string `json:"outcome"`
		Stdout   []byte `json:"stdout"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 2 || err != nil || res.ExitCode != 2 || res.Outcome != "failed" || string(res.Stdout) != "x" {
		t.Errorf("--json: exit %d, %q %v", code, out, err)
	}
	// A throw in eval: the stack on stderr, exit 1.
	code, _, errOut = remote("", "eval", `(() => { throw new Error("boom") })()`)
	if code != 1 || !strings.Contains(errOut, "boom") {
		t.Errorf("eval throw: exit %d, stderr %q", code, errOut)
	}
	if n := vmCount(t, c); n != 0 {
		t.Errorf("%d VMs left on the server after one-shot runs", n)
	}

	// $SECEXEC_SERVER and $SECEXEC_TOKEN stand in for the flags.
	t.Setenv("SECEXEC_SERVER", url)
	t.Setenv("SECEXEC_TOKEN", remoteToken)
	if code, out, errOut := runCLI(t, "", "exec", "echo", "env"); code != 0 || out != "env\n" {
		t.Errorf("from the environment: exit %d, %q %q", code, out, errOut)
	}
	t.Setenv("SECEXEC_TOKEN", "wrong")
	if code, _, errOut := runCLI(t, "", "exec", "true"); code != cli.ExitError || !strings.Contains(errOut, "unauthorized") {
		t.Errorf("a wrong token: exit %d, %q", code, errOut)
	}
}

// Flags that reach into this host, and server-only commands without a
// server, are usage errors.
func TestRemoteUsageErrors(t *testing.T) {
	url, _ := startServer(t)
	for _, args := range [][]string{
		{"--server", url, "exec", "--mount", ".:/src", "true"},
		{"--server", url, "exec", "--publish", "8080:80", "true"},
		{"--server", url, "exec", "--vm", "local-x", "--memory", "64M", "true"},
		{"--server", url, "run", "--check", "x.ts"},
		{"--server", "ftp://x", "exec", "true"},
		{"--server", url, "cp", "a", "b"},
		{"--server", url, "cp", "vm1:rel", "b"},
		{"exec", "--vm", "local-x", "true"},
		{"vm", "ls"},
		{"vm", "create"},
		{"vm", "rm", "x"},
		{"cp", "a", "vm:/b"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, "secexec: ") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
}

// A VM made with vm create keeps its files between execs (--vm), is
// listed, takes files in and out with cp, and is gone after vm rm.
func TestRemoteVMAndCp(t *testing.T) {
	url, c := startServer(t)
	remote := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, stdin, append([]string{"--server", url, "--token", remoteToken}, args...)...)
	}
	code, out, errOut := remote("", "vm", "create", "--memory", "64M", "-e", "WHO=vm")
	id := strings.TrimSpace(out)
	if code != 0 || id == "" || errOut != "" {
		t.Fatalf("vm create: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := remote("", "exec", "--vm", id, "echo $WHO > /tmp/f"); code != 0 || out != "" {
		t.Fatalf("exec --vm: %d %q %q", code, out, errOut)
	}
	if code, out, _ := remote("", "exec", "--vm", id, "-e", "X=y", "--cwd", "/tmp", "sh", "-c", `cat f; echo "$X $PWD"`); code != 0 || out != "vm\ny /tmp\n" {
		t.Fatalf("the VM kept nothing: %d %q", code, out)
	}
	code, out, _ = remote("", "vm", "ls")
	if code != 0 || !strings.Contains(out, id) || !strings.HasPrefix(out, "ID ") {
		t.Fatalf("vm ls: %d %q", code, out)
	}
	code, out, _ = remote("", "vm", "ls", "--json")
	var list []struct{ ID, State string }
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 1 || list[0].ID != id || list[0].State != "running" {
		t.Fatalf("vm ls --json: %d %q %v", code, out, err)
	}

	// cp: a file and a tree in, changed in the VM, and back out.
	host := t.TempDir()
	data := []byte{0, 0xff, 'a', '\n'}
	must(t, os.WriteFile(filepath.Join(host, "bin"), data, 0o600))
	tree := filepath.Join(host, "tree")
	must(t, os.MkdirAll(filepath.Join(tree, "sub", "deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(tree, "sub", "deep", "f.txt"), []byte("deep\n"), 0o644))
	must(t, os.Symlink("sub/deep/f.txt", filepath.Join(tree, "link")))
	for _, args := range [][]string{
		{"cp", filepath.Join(host, "bin"), id + ":/work/bin"},
		{"cp", tree, id + ":/work"}, // an existing directory: /work/tree
	} {
		if code, _, errOut := remote("", args...); code != 0 {
			t.Fatalf("%q: exit %d, %q", args, code, errOut)
		}
	}
	code, out, errOut = remote("", "exec", "--vm", id, "od -An -tx1 /work/bin; cat /work/tree/link; echo new > /work/tree/sub/new")
	if code != 0 || strings.Join(strings.Fields(out), " ") != "00 ff 61 0a deep" {
		t.Fatalf("in the VM: %d %q %q", code, out, errOut)
	}
	back := filepath.Join(host, "back")
	if code, _, errOut := remote("", "cp", id+":/work/tree", back); code != 0 {
		t.Fatalf("cp out a tree: %d %q", code, errOut)
	}
	for name, want := range map[string]string{"sub/deep/f.txt": "deep\n", "sub/new": "new\n", "link": "deep\n"} {
		if got, err := os.ReadFile(filepath.Join(back, name)); err != nil || string(got) != want {
			t.Errorf("copied out %s: %q %v", name, got, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(back, "link")); err != nil || l != "sub/deep/f.txt" {
		t.Errorf("the symlink came back as %q %v", l, err)
	}
	if code, _, errOut := remote("", "cp", id+":/work/bin", host); code != 0 { // into a directory: host/bin
		t.Fatalf("cp out a file: %d %q", code, errOut)
	}
	if got, err := os.ReadFile(filepath.Join(host, "bin")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the file came back as %q %v", got, err)
	}
	if code, out, _ := remote("", "cp", id+":/work/tree/sub/new", "-"); code != 0 || out != "new\n" {
		t.Errorf("cp to stdout: %d %q", code, out)
	}
	if code, _, _ := remote("piped\n", "cp", "-", id+":/work/piped"); code != 0 {
		t.Errorf("cp from stdin: %d", code)
	}
	if code, out, _ := remote("", "exec", "--vm", id, "cat", "/work/piped"); code != 0 || out != "piped\n" {
		t.Errorf("the file from stdin: %d %q", code, out)
	}
	if code, _, errOut := remote("", "cp", id+":/nope", host); code != cli.ExitError || !strings.Contains(errOut, "not_found") {
		t.Errorf("cp of a missing file: %d %q", code, errOut)
	}

	if code, _, errOut := remote("", "vm", "rm", id); code != 0 {
		t.Fatalf("vm rm: %d %q", code, errOut)
	}
	if n := vmCount(t, c); n != 0 {
		t.Fatalf("%d VMs after vm rm", n)
	}
	if code, _, errOut := remote("", "exec", "--vm", id, "true"); code != cli.ExitError || !strings.Contains(errOut, "not_found") {
		t.Fatalf("exec in a deleted VM: %d %q", code, errOut)
	}
}

// A directory copied out of a VM lands as the VM has it, symlinks
// included; an archive that tries to write through one of its own
// symlinks, or names a path outside, writes nothing outside the
// destination (what a hostile server could send).
func TestRemoteCpOutStaysInside(t *testing.T) {
	url, c := startServer(t)
	ctx := context.Background()
	vm, err := c.NewVM(ctx, client.VMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	outside := t.TempDir()
	res, err := vm.Exec(ctx, "mkdir -p /tmp/d/z && ln -s "+outside+" /tmp/d/esc && echo x > /tmp/d/z/f", nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	code, _, errOut := runCLI(t, "", "--server", url, "--token", remoteToken, "cp", vm.ID()+":/tmp/d", dst)
	if code != 0 {
		t.Fatalf("cp: %d %q", code, errOut)
	}
	if l, err := os.Readlink(filepath.Join(dst, "esc")); err != nil || l != outside {
		t.Fatalf("the symlink: %q %v", l, err)
	}
	if got, err := os.ReadFile(filepath.Join(dst, "z", "f")); err != nil || string(got) != "x\n" {
		t.Fatalf("z/f: %q %v", got, err)
	}

	for _, entries := range [][]tarEntry{
		{{name: "esc", link: outside}, {name: "esc/owned", data: "x"}},
		{{name: "../owned", data: "x"}},
		{{name: outside + "/owned", data: "x"}},
		{{name: "d/", dir: true}, {name: "d/l", link: ".."}, {name: "d/l/l2", link: ".."}, {name: "d/l/l2/owned", data: "x"}},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, e := range entries {
			h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
			switch {
			case e.dir:
				h.Typeflag, h.Mode = tar.TypeDir, 0o755
			case e.link != "":
				h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
			}
			must(t, tw.WriteHeader(h))
			_, _ = tw.Write([]byte(e.data))
		}
		must(t, tw.Close())
		err := cli.ExtractTar(&buf, filepath.Join(t.TempDir(), "dst"))
		if ents, _ := os.ReadDir(outside); err == nil || len(ents) != 0 {
			t.Fatalf("%+v: error %v, outside holds %v", entries, err, ents)
		}
	}
}

type tarEntry struct {
	name, data, link string
	dir              bool
}

// shell against a server: the command runs on a terminal of a server VM
// (stdin and stdout here are pipes, not a terminal) and its status is
// the CLI's.
func TestRemoteShell(t *testing.T) {
	url, c := startServer(t)
	code, out, errOut := runCLI(t, "hello\r", "--server", url, "--token", remoteToken, "shell", "--", "sh", "-c", `read x; echo "got $x"; stty size; exit 4`)
	if code != 4 || !strings.Contains(out, "got hello") || !strings.Contains(out, "24 80") {
		t.Fatalf("remote shell: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "--server", url, "--token", remoteToken, "exec", "-t", "echo on a terminal")
	if code != 0 || !strings.Contains(out, "on a terminal") {
		t.Fatalf("exec -t: exit %d, %q", code, out)
	}
	if n := vmCount(t, c); n != 0 {
		t.Fatalf("%d VMs left after the shells", n)
	}
}

// SIGINT and SIGTERM to a CLI running a command on a server: exit 130
// and 143 as for a local run, and the VM is deleted.
func TestRemoteSignals(t *testing.T) {
	url, c := startServer(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		cmd := exec.Command(os.Args[0], "--server", url, "--token", remoteToken, "exec", "echo ready; sleep 60")
		cmd.Env = append(os.Environ(), cliProcessEnv+"=1")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "ready\n" {
			_ = cmd.Process.Kill()
			t.Fatalf("first line %q %v; stderr %q", line, err, errb.String())
		}
		if err := cmd.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("%v: the CLI did not end", tc.sig)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
			t.Fatalf("%v: %v, want exit %d; stderr %q", tc.sig, err, tc.code, errb.String())
		}
		if n := vmCount(t, c); n != 0 {
			t.Fatalf("%v: %d VMs left on the server", tc.sig, n)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// `secexec --server URL shell` in a real terminal (tmux): bash on a
// server VM's terminal, a job ended with ^C, a window resize reaching the
// guest, and the shell's exit status as the CLI's.
func TestRemoteShellInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed (.ci/run installs it):", err)
	}
	url, c := startServer(t)
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := "env " + cliProcessEnv + "=1 SECEXEC_TOKEN=" + remoteToken + " '" + os.Args[0] + "' --server " + url + " shell; echo EXITED=$?; sleep 600"
	s.tmux("new-session", "-d", "-x", "100", "-y", "30", cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	prompt := func(sc string) bool {
		lines := strings.Split(strings.TrimRight(sc, "\n "), "\n")
		return strings.HasPrefix(lines[len(lines)-1], "bash-") && strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "$")
	}
	s.waitFor("the bash prompt", prompt)
	s.keys("echo remote-$((6*7)) $COLUMNS", "Enter")
	s.waitText("\nremote-42 100", 1)
	s.keys("echo sleeping; sleep 100", "Enter")
	s.waitText("\nsleeping", 1)
	deadline := time.Now().Add(30 * time.Second)
	for !prompt(s.screen()) {
		if time.Now().After(deadline) {
			t.Fatalf("^C did not end sleep 100:\n%s", s.screen())
		}
		s.keys("C-c")
		time.Sleep(300 * time.Millisecond)
	}
	s.keys("echo rc=$?", "Enter")
	s.waitText("rc=130", 1)
	s.tmux("resize-window", "-t", "0", "-x", "120", "-y", "40")
	s.keys("stty size", "Enter")
	s.waitText("\n40 120", 1)
	if n := vmCount(t, c); n != 1 {
		t.Errorf("%d VMs on the server during the shell, want 1", n)
	}
	s.keys("exit 7", "Enter")
	s.waitText("EXITED=7", 1)
	if n := vmCount(t, c); n != 0 {
		t.Errorf("%d VMs left after the shell", n)
	}
}
