//go:build !wasip1

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// These tests run git.wasm built from this source (what users run) in a
// real VM, and the same scripts
// with the host's git (the reference), with a fixed author, committer
// and dates so that commit hashes must come out identical.

func TestMain(m *testing.M) { vmtest.Main(m) }

// hostGit is the reference implementation.
const hostGit = "/usr/bin/git"

// identityEnv fixes everything a commit hash depends on besides content.
var identityEnv = []string{
	"GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_AUTHOR_DATE=2024-01-02T03:04:05+01:00",
	"GIT_COMMITTER_NAME=Charles Babbage", "GIT_COMMITTER_EMAIL=cb@example.com", "GIT_COMMITTER_DATE=2024-01-02T03:04:05+01:00",
}

// output is what one command printed, and how it ended.
type output struct {
	stdout, stderr string
	code           int
}

// hostSh runs a shell command on the host in dir with the host's git.
func hostSh(t *testing.T, dir, script string) output {
	t.Helper()
	if _, err := os.Stat(hostGit); err != nil {
		t.Fatalf("host git (the reference; .ci/run installs it): %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8", "TZ=UTC"}, identityEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return output{out.String(), errb.String(), code}
}

// vmSh runs a shell command in the VM's working directory.
func vmSh(t *testing.T, h *vmhost.Host, script string) output {
	t.Helper()
	r := vmtest.Run(t, h, "", identityEnv, "sh", "-c", script)
	return output{r.Stdout, r.Stderr, r.Exit.Code}
}

// compareWithHost runs each command in the VM and on the host, in the
// directory where the first (git init ... repo) made the repository, and
// compares what they print and how they end.
func compareWithHost(t *testing.T, h *vmhost.Host, cmds ...string) {
	t.Helper()
	dir := t.TempDir()
	for i, c := range cmds {
		if i > 0 {
			c = "cd repo && " + c
		}
		want := hostSh(t, dir, c)
		got := vmSh(t, h, c)
		if got != want {
			t.Fatalf("$ %s\nhost (exit %d):\n%s\n-- stderr:\n%s\nVM (exit %d):\n%s\n-- stderr:\n%s\nfirst difference: %s",
				c, want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr, firstDiff(want, got))
		}
	}
}

// firstDiff names the first line that differs.
func firstDiff(want, got output) string {
	for _, p := range [][2]string{{want.stdout, got.stdout}, {want.stderr, got.stderr}} {
		w, g := strings.Split(p[0], "\n"), strings.Split(p[1], "\n")
		for i := 0; i < max(len(w), len(g)); i++ {
			var wl, gl string
			if i < len(w) {
				wl = w[i]
			}
			if i < len(g) {
				gl = g[i]
			}
			if wl != gl {
				return fmt.Sprintf("line %d: host %q, VM %q", i+1, wl, gl)
			}
		}
	}
	return "exit status"
}

func TestGitHistoryMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo",
		"git status",
		"printf 'line1\\nline2\\nline3\\n' > a.txt && mkdir -p src/deep && printf 'package main\\n\\nfunc main() {\\n\\tprintln(1)\\n}\\n' > src/main.go && printf 'x\\n' > src/deep/x.txt",
		"git status && git status --short",
		"git add . && git status && git status --porcelain",
		"git commit -m 'first commit'",
		"git log && git rev-parse HEAD",
		"printf 'line1\\nline2 changed\\nline3\\nline4\\n' > a.txt && printf 'new\\n' > b.txt && rm src/deep/x.txt && printf 'package main\\n\\nfunc main() {\\n\\tprintln(2)\\n}\\n' > src/main.go",
		"git status && git status -s && git diff",
		"git add a.txt && git diff --cached && git status --short",
		"git add -A && git commit -m 'second' -m 'a body paragraph' && git log --oneline",
		"git log -n 1 --format='%H %h %T %t %P %an <%ae> %ad | %cn <%ce> %cd | %s | %b | %at %ct %ai %cI'",
		"git branch feature && git branch && git checkout feature && git branch --show-current",
		"printf 'feat\\n' >> a.txt && git commit -q -am 'feature work' && git log --format='%h %p %s'",
		"git checkout main && cat a.txt && git branch -d feature",
		"git diff main feature && git diff HEAD~1 HEAD",
		"git checkout -b topic && git branch && git checkout main && git branch -d topic && git branch -D feature",
		"echo junk > a.txt && git status --short && git checkout -- a.txt && cat a.txt && git status",
		"git rev-parse --short HEAD && git rev-parse --abbrev-ref HEAD && git rev-parse HEAD~1",
		"git commit -m 'nothing'",
		"git log --format='%H' | head -n 3",
	)
}

// A repository made by host git is read by the VM's git through a host
// directory mounted into the VM, and a commit the VM's git adds is
// accepted by host git's fsck and log.
func TestGitSharesRepositoriesWithHost(t *testing.T) {
	dir := t.TempDir()
	hostRun := func(script string) output {
		t.Helper()
		o := hostSh(t, dir, script)
		if o.code != 0 {
			t.Fatalf("host: %s: exit %d: %s%s", script, o.code, o.stdout, o.stderr)
		}
		return o
	}
	hostRun("git init -q -b trunk repo && cd repo && printf 'alpha\\nbeta\\n' > f.txt && mkdir d && echo x > d/x && " +
		"git add . && git commit -q -m 'made on the host' && git branch side && echo gamma >> f.txt && git add f.txt && git commit -q -m 'second on the host'")
	h := vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: dir}}})
	vmRun := func(script string) output {
		t.Helper()
		o := vmSh(t, h, "cd /mnt/host/repo && "+script)
		if o.code != 0 {
			t.Fatalf("VM: %s: exit %d: %s%s", script, o.code, o.stdout, o.stderr)
		}
		return o
	}
	for _, c := range []string{"git log", "git log --oneline side", "git status", "git branch", "git diff side trunk", "git rev-parse HEAD side"} {
		if got, want := vmRun(c), hostRun("cd repo && "+c); got != want {
			t.Errorf("%s on a host repository:\nVM:\n%s%s\nhost:\n%s%s", c, got.stdout, got.stderr, want.stdout, want.stderr)
		}
	}
	vmRun("echo delta >> f.txt && rm d/x && echo new > n.txt && git add -A && git commit -q -m 'made in the VM' && git checkout side")
	fsck := hostRun("cd repo && git fsck --strict && git log --format='%s|%an|%cn' trunk && git status --short && git diff trunk~1 trunk --stat")
	want := "made in the VM|Ada Lovelace|Charles Babbage\nsecond on the host|Ada Lovelace|Charles Babbage\nmade on the host|Ada Lovelace|Charles Babbage\n" +
		" d/x   | 1 -\n f.txt | 1 +\n n.txt | 1 +\n 3 files changed, 2 insertions(+), 1 deletion(-)\n"
	if fsck.stdout != want {
		t.Fatalf("host git on the VM's commit:\n%s\nstderr:\n%s\nwant:\n%s", fsck.stdout, fsck.stderr, want)
	}
	if head := hostRun("cd repo && git rev-parse --abbrev-ref HEAD").stdout; head != "side\n" {
		t.Fatalf("host sees HEAD at %q after the VM's checkout", head)
	}
}
