package security_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/secexec/secexec"
)

// statfsOf is what the guest's node says of a path (fs.statfsSync).
type statfsOf struct {
	Type   uint64 `json:"type"`
	Bsize  uint64 `json:"bsize"`
	Blocks uint64 `json:"blocks"`
	Bfree  uint64 `json:"bfree"`
	Bavail uint64 `json:"bavail"`
}

func guestStatfs(t *testing.T, vm *secexec.VM, path string) statfsOf {
	t.Helper()
	r := node(t, vm, fmt.Sprintf(`console.log(JSON.stringify(require('fs').statfsSync(%q)))`, path))
	var s statfsOf
	if err := json.Unmarshal(bytes.TrimSpace(r.Stdout), &s); err != nil {
		t.Fatalf("statfs %s: %v: %q %q", path, err, r.Stdout, trunc(r.Stderr))
	}
	return s
}

// dfKB is what the guest's df says of a path: its size and available
// space in KiB.
func dfKB(t *testing.T, vm *secexec.VM, path string) (size, avail uint64) {
	t.Helper()
	r := run(t, vm, []string{"df", "-k", path}, nil)
	lines := strings.Split(strings.TrimSpace(string(r.Stdout)), "\n")
	if r.ExitCode != 0 || len(lines) < 2 {
		t.Fatalf("df %s: exit %d %q %q", path, r.ExitCode, r.Stdout, trunc(r.Stderr))
	}
	f := strings.Fields(lines[len(lines)-1])
	if len(f) < 4 {
		t.Fatalf("df %s: %q", path, r.Stdout)
	}
	size, err1 := strconv.ParseUint(f[1], 10, 64)
	avail, err2 := strconv.ParseUint(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("df %s: %q", path, r.Stdout)
	}
	return size, avail
}

// Finding 11: df and statfs of host mounts (the node tools at
// /usr/lib/node_modules and every --mount) showed the host disk's size and
// live free space. They are synthetic now: a read-only mount is 0 blocks,
// a writable one its quota (or a fixed capacity), and node agrees with df.
func TestHostStatfsIsSynthetic(t *testing.T) {
	dir := t.TempDir()
	const quota = 64 << 20
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Mounts: []secexec.Mount{
		{Path: "/mnt/rw", HostDir: dir, MaxBytes: quota},
		{Path: "/mnt/ro", HostDir: dir, ReadOnly: true},
	}})
	var host syscall.Statfs_t
	if err := syscall.Statfs(dir, &host); err != nil {
		t.Fatal(err)
	}
	hostKB := func(blocks uint64) uint64 { return blocks * uint64(host.Bsize) / 1024 }
	for _, p := range []string{"/mnt/rw", "/mnt/ro", "/usr/lib/node_modules"} {
		s := guestStatfs(t, vm, p)
		size, avail := dfKB(t, vm, p)
		if s.Blocks == host.Blocks || (s.Bavail != 0 && s.Bavail == host.Bavail) ||
			size == hostKB(host.Blocks) || (avail != 0 && avail == hostKB(host.Bavail)) {
			t.Errorf("%s shows the host disk: statfs %+v, df %d/%d KiB; host %d/%d blocks", p, s, size, avail, host.Blocks, host.Bavail)
		}
		if size != s.Blocks*s.Bsize/1024 || avail != s.Bavail*s.Bsize/1024 {
			t.Errorf("%s: df says %d/%d KiB, node %+v", p, size, avail, s)
		}
	}
	if s := guestStatfs(t, vm, "/usr/lib/node_modules"); s.Blocks != 0 || s.Bavail != 0 {
		t.Errorf("read-only node tools: %+v, want 0 blocks", s)
	}
	// A writable mount's numbers are its quota and what the guest wrote.
	sh(t, vm, "head -c 1048576 /dev/zero > /mnt/rw/f")
	s := guestStatfs(t, vm, "/mnt/rw")
	if s.Blocks*s.Bsize != quota || s.Bavail*s.Bsize != quota-1<<20 {
		t.Errorf("writable mount with a 64 MiB quota after 1 MiB: %+v", s)
	}
	usable(t, vm)
}

// hostsName returns a name of the host's /etc/hosts other than localhost.
func hostsName(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		for _, n := range fields[min(1, len(fields)):] {
			if !strings.Contains(n, "localhost") && !strings.HasPrefix(n, "ip6-") {
				return n
			}
		}
	}
	t.Fatal("/etc/hosts names no host but localhost: this test needs one (add e.g. '127.0.0.1 hostsonly.test')")
	return ""
}

// Finding 11: with every network permission, guests resolved the names of
// the host's /etc/hosts. Guest DNS asks only the nameservers now; the
// VM's own localhost still resolves, and so does the npm registry.
func TestGuestDNSIgnoresHostsFile(t *testing.T) {
	name := hostsName(t)
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	r := node(t, vm, fmt.Sprintf(`
const dns = require('dns');
const look = (n) => new Promise((res) => dns.lookup(n, { all: true }, (e, a) => res(e ? e.code : a.map((x) => x.address).join(','))));
(async () => { console.log(JSON.stringify([await look(%q), await look('localhost')])); })();`, name))
	var got []string
	if err := json.Unmarshal(bytes.TrimSpace(r.Stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("node: %v %q %q", err, r.Stdout, trunc(r.Stderr))
	}
	if got[0] != "ENOTFOUND" {
		t.Errorf("node resolved %s of the host's /etc/hosts: %s", name, got[0])
	}
	if !strings.Contains(got[1], "127.0.0.1") {
		t.Errorf("localhost: %s, want the VM's loopback", got[1])
	}
	// Names DNS knows still resolve (the registry npm uses).
	r = node(t, vm, `require('dns').lookup('registry.npmjs.org', (e, a) => console.log(e ? e.code : 'ok'))`)
	if strings.TrimSpace(string(r.Stdout)) != "ok" {
		t.Errorf("registry.npmjs.org: %q %q", r.Stdout, trunc(r.Stderr))
	}
	usable(t, vm)
}

// hostLinks lists the symlinks under dir whose target leaves dir.
func hostLinks(t *testing.T, dir string) []string {
	t.Helper()
	var bad []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			return err
		}
		target, _ := os.Readlink(p)
		abs := filepath.Join(filepath.Dir(p), target)
		if filepath.IsAbs(target) || (abs != dir && !strings.HasPrefix(abs, dir+"/")) {
			bad = append(bad, p+" -> "+target)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// Finding 12: a guest planted real host symlinks to any target
// (/etc/shadow) in a writable mount, for host tools to follow later.
// Symlinks leaving the mount are refused (EPERM), moves that would make
// one leave it are EXDEV (mv then copies, and the copy's link is refused),
// and the host directory holds no such link afterwards.
func TestHostMountSymlinkEscape(t *testing.T) {
	dir := t.TempDir()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Mounts: []secexec.Mount{{Path: "/mnt/h", HostDir: dir}}})
	for _, cmd := range []string{
		"ln -s /etc/shadow /mnt/h/shadow",
		"ln -s ../../x /mnt/h/up",
		"mkdir -p /mnt/h/a/b && ln -s ../../../etc/passwd /mnt/h/a/b/deep",
		"ln -s a/../../x /mnt/h/through",
	} {
		if r := sh(t, vm, cmd); r.ExitCode == 0 {
			t.Errorf("%s: succeeded", cmd)
		}
	}
	r := node(t, vm, `
const fs = require('fs');
for (const [t, p] of [['/etc/shadow', '/mnt/h/n1'], ['../../../..', '/mnt/h/n2'], ['../../x', '/mnt/h/a/n3']]) {
  try { fs.symlinkSync(t, p); console.log('made', p); } catch (e) { console.log(e.code); }
}`)
	if got := strings.Fields(string(r.Stdout)); strings.Join(got, " ") != "EPERM EPERM EPERM" {
		t.Errorf("node symlinkSync: %q %q", r.Stdout, trunc(r.Stderr))
	}
	// Links inside the mount still work, and moving one where it would
	// leave the mount does not.
	if r := sh(t, vm, "ln -s ../../t /mnt/h/a/b/ok && ln -s a/b /mnt/h/ab && cat /mnt/h/ab/ok 2>/dev/null; echo made"); !strings.Contains(string(r.Stdout), "made") {
		t.Errorf("links inside the mount: %q %q", r.Stdout, r.Stderr)
	}
	sh(t, vm, "mv /mnt/h/a/b/ok /mnt/h/ok; mv /mnt/h/a/b /mnt/h/b2")
	if bad := hostLinks(t, dir); len(bad) > 0 {
		t.Errorf("host symlinks leaving the mount: %q", bad)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a", "b", "ok")); err != nil {
		t.Errorf("the link inside the mount: %v", err)
	}
	usable(t, vm)
}

// Finding 12: --fs-bytes did not bound host mounts (a 1 TiB sparse file).
// A mount's byte quota counts apparent size: a sparse 1 TiB file by
// ftruncate or by a write at 1 TiB, and a large write, fail with ENOSPC.
func TestHostMountQuota(t *testing.T) {
	dir := t.TempDir()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Mounts: []secexec.Mount{{Path: "/mnt/q", HostDir: dir, MaxBytes: 1 << 20}}})
	r := node(t, vm, `
const fs = require('fs');
const fd = fs.openSync('/mnt/q/sparse', 'w');
const tries = { truncate: () => fs.ftruncateSync(fd, 2 ** 40), seekWrite: () => fs.writeSync(fd, 'x', 2 ** 40 - 1),
  big: () => fs.writeFileSync('/mnt/q/big', Buffer.alloc(2 << 20)) };
for (const [k, f] of Object.entries(tries)) { try { f(); console.log(k, 'ok'); } catch (e) { console.log(k, e.code); } }`)
	if got := strings.TrimSpace(string(r.Stdout)); got != "truncate ENOSPC\nseekWrite ENOSPC\nbig ENOSPC" {
		t.Errorf("node: %q %q", r.Stdout, trunc(r.Stderr))
	}
	if r := sh(t, vm, "truncate -s 1T /mnt/q/t"); r.ExitCode == 0 {
		t.Error("truncate -s 1T succeeded")
	}
	if r := sh(t, vm, "head -c 3000000 /dev/zero > /mnt/q/zeros"); r.ExitCode == 0 || !strings.Contains(string(r.Stderr), "space") {
		t.Errorf("3 MB into a 1 MiB quota: exit %d %q", r.ExitCode, r.Stderr)
	}
	var total int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		return nil
	})
	if total > 1<<20 {
		t.Errorf("the host directory holds %d bytes, over the 1 MiB quota", total)
	}
	// Space comes back when the guest removes its files.
	if r := sh(t, vm, "rm -f /mnt/q/*; head -c 500000 /dev/zero > /mnt/q/again && echo ok"); !strings.Contains(string(r.Stdout), "ok") {
		t.Errorf("writing after removal: %q %q", r.Stdout, r.Stderr)
	}
	usable(t, vm)
}

// Finding 13: the engine token was passed in the environment and only
// unset, so /proc/PID/environ of every engine showed it. It comes through
// a pipe now: no engine process of this test binary has a token variable.
func TestEngineEnvironHasNoToken(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	run(t, vm, []string{"true"}, nil)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	engines := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The parent pid is the second field after the ")" of the name.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatalf("reading a child's environ (this test needs root; engines are not dumpable): %v", err)
		}
		if !bytes.Contains(env, []byte("SECEXEC_ENGINE=")) {
			continue
		}
		engines++
		for _, kv := range strings.Split(string(env), "\x00") {
			if k, _, _ := strings.Cut(kv, "="); strings.Contains(strings.ToUpper(k), "TOKEN") {
				t.Errorf("engine %d has %s in its environment", pid, k)
			}
		}
	}
	if engines == 0 {
		t.Fatal("found no engine process of this test")
	}
	usable(t, vm)
}
