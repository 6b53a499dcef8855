package security_test

import (
	"bytes"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/secexec/secexec"
)

// hostSecrets are values of the host that no guest may learn: the
// variable's value, the host name, the host's kernel release, the
// directories of this test and of a host mount, the test binary's path,
// the host user's name.
func hostSecrets(t *testing.T, mountDir string) []string {
	t.Helper()
	secrets := []string{"s3cr3t-host-env-value", mountDir}
	if h, err := os.Hostname(); err == nil && len(h) > 3 {
		secrets = append(secrets, h)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		secrets = append(secrets, strings.TrimSpace(string(b)))
	}
	if wd, err := os.Getwd(); err == nil {
		secrets = append(secrets, wd)
	}
	if exe, err := os.Executable(); err == nil {
		secrets = append(secrets, exe, filepath.Base(exe))
	}
	if u, err := user.Current(); err == nil && len(u.Username) > 3 && u.Username != "user" && u.Username != "root" {
		secrets = append(secrets, "/"+u.Username)
	}
	return secrets
}

// Nothing a guest can read — /proc, os and process APIs, uname, error
// messages and stacks, including those of a host mount — shows a host
// value (invariant 1).
func TestHostValuesDoNotLeak(t *testing.T) {
	t.Setenv("SECEXEC_LEAK_PROBE", "s3cr3t-host-env-value")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Mounts: []secexec.Mount{{Path: "/mnt/host", HostDir: dir}}})
	var out bytes.Buffer
	for _, argv := range [][]string{
		{"sh", "-c", `for f in /proc/self/environ /proc/self/cmdline /proc/self/status /proc/self/stat /proc/self/mountinfo /proc/mounts /proc/self/mounts /proc/version /proc/cpuinfo /proc/meminfo /proc/uptime /proc/loadavg /proc/1/cmdline /proc/1/environ /proc/sys/kernel/hostname /proc/sys/kernel/osrelease /etc/hostname /etc/hosts /etc/passwd /etc/resolv.conf; do echo "== $f"; cat $f; done; readlink /proc/self/exe /proc/self/cwd /proc/1/exe /proc/self/fd/0 /proc/self/fd/1; uname -a; hostname; id; env; pwd; ls -la /proc/self/fd /mnt/host; cat /mnt/host/missing; cat /mnt/host/dangling; cd /mnt/host/f; ls /mnt/host/f/x; echo x > /mnt/host/f/y`},
		{"node", "-e", `
const os = require('os'), fs = require('fs'), out = [];
const tryit = f => { try { out.push(JSON.stringify(f())) } catch (e) { out.push(String(e.message) + ' ' + e.stack) } };
tryit(() => [os.hostname(), os.release(), os.version(), os.type(), os.arch(), os.machine(), os.homedir(), os.tmpdir(), os.userInfo(), os.cpus().length, os.networkInterfaces(), os.loadavg(), os.uptime(), os.totalmem(), os.constants.signals.SIGKILL]);
tryit(() => [process.pid, process.ppid, process.execPath, process.argv, process.argv0, process.cwd(), process.title, process.env, process.config, process.versions, process.release, process.features, process.getuid(), process.memoryUsage(), process.resourceUsage(), process.report && process.report.getReport()]);
for (const p of ['/mnt/host/missing', '/mnt/host/dangling', '/mnt/host/f/x', '/proc/self/exe', '/proc/1/root/etc']) { tryit(() => fs.readFileSync(p, 'utf8')); tryit(() => fs.realpathSync(p)); tryit(() => fs.readlinkSync(p)) }
tryit(() => fs.readdirSync('/mnt/host', { withFileTypes: true }));
tryit(() => fs.statSync('/mnt/host/f'));
tryit(() => require('/mnt/host/missing'));
tryit(() => require('child_process').execSync('cat /mnt/host/missing', { stdio: 'pipe' }));
console.log(out.join('\n'));`},
	} {
		r := run(t, vm, argv, nil)
		out.Write(r.Stdout)
		out.Write(r.Stderr)
	}
	text := out.String()
	if len(text) < 2000 {
		t.Fatalf("the probes printed too little to judge: %q", text)
	}
	for _, s := range hostSecrets(t, dir) {
		if i := strings.Index(text, s); i >= 0 {
			t.Errorf("host value %q leaked: ...%s...", s, text[max(0, i-200):min(len(text), i+len(s)+100)])
		}
	}
	// Host pids: this process's and the engine's (pids this large are
	// never a guest's).
	for _, pid := range append(childPIDs(t), os.Getpid()) {
		if pid < 1000 {
			continue
		}
		if loc := regexp.MustCompile(`\b` + strconv.Itoa(pid) + `\b`).FindStringIndex(text); loc != nil {
			t.Errorf("host pid %d leaked: ...%s...", pid, text[max(0, loc[0]-200):min(len(text), loc[1]+100)])
		}
	}
}

// childPIDs returns the pids of this process's children (the engine
// processes it started), from each thread's children list.
func childPIDs(t *testing.T) []int {
	t.Helper()
	files, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(w); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	if len(pids) == 0 {
		t.Fatal("no engine process found among this process's children")
	}
	return pids
}
