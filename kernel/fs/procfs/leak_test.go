package procfs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/vfs"
)

// dumpEnv makes the test binary print dump(newFake()) and exit, so a
// second host process (with another pid and environment) can be compared.
const dumpEnv = "SECEXEC_PROCFS_DUMP"

func TestMain(m *testing.M) {
	if os.Getenv(dumpEnv) == "1" {
		os.Stdout.Write(dump(New(newFake())))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// dump renders everything a guest can see in /proc, as root: every path
// with its type and mode, every file's content, every link's target.
func dump(fs *FS) []byte {
	ctx := as(1)
	var out []string
	var walk func(path string, ino vfs.Inode)
	walk = func(path string, ino vfs.Inode) {
		st, err := ino.Stat(ctx)
		if err != nil {
			out = append(out, path+" stat error "+err.Error())
			return
		}
		entry := fmt.Sprintf("%s %o %d:%d %d", path, st.Mode, st.UID, st.GID, st.Size)
		switch st.Type() {
		case vfs.TypeRegular:
			s, err := readAll(ctx, ino)
			entry += fmt.Sprintf(" %q %v", s, err)
		case vfs.TypeSymlink:
			s, err := ino.Readlink(ctx)
			entry += fmt.Sprintf(" -> %q %v", s, err)
		case vfs.TypeDir:
			var cookie uint64
			for {
				ents, err := ino.ReadDir(ctx, cookie, 3)
				if err != nil || len(ents) == 0 {
					break
				}
				for _, e := range ents {
					if c, err := ino.Lookup(ctx, e.Name); err == nil {
						walk(path+"/"+e.Name, c)
					}
				}
				cookie = ents[len(ents)-1].Next
			}
		}
		out = append(out, entry)
	}
	root, _ := fs.Root(ctx)
	walk("/proc", root)
	slices.Sort(out)
	return []byte(strings.Join(out, "\n") + "\n")
}

// tokens splits s at the characters that separate values in /proc files,
// keeping '.', '-' and '_' inside tokens so host names and numbers stay
// whole.
func tokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '-' || r == '_')
	}) {
		out[f] = true
	}
	return out
}

// fakeInputs is every string and number the fake kernel feeds procfs.
// A host value that also occurs here would be a coincidence, not a leak.
func fakeInputs() string {
	k := newFake()
	parts := []string{k.hostname, fmt.Sprint(k.mounts, k.total, k.free, k.uptime, k.boot)}
	for _, p := range k.procs {
		parts = append(parts, fmt.Sprintf("%q %q %s %s %+v", p.cmdline, p.environ, p.cwd, p.exe, p.status))
		for _, f := range p.fds {
			parts = append(parts, f.Path())
		}
	}
	return strings.Join(parts, "\n")
}

// TestNoHostLeak reads everything under /proc and checks that no host
// fact shows through.
func TestNoHostLeak(t *testing.T) {
	probe := make([]byte, 12)
	_, _ = rand.Read(probe)
	t.Setenv("SECEXEC_PROCFS_PROBE", "probe-"+hex.EncodeToString(probe))
	d := string(dump(New(newFake())))
	toks := tokens(d)
	inputs := fakeInputs()
	if len(toks) < 100 {
		t.Fatalf("dump too small to mean anything: %d tokens", len(toks))
	}

	// The host's pid, environment and paths: dumps made by two host
	// processes with different pids and environments must be identical.
	// A plain search for the pid's digits would be unsound (a size or a
	// time can contain them by chance); a difference cannot be chance.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), dumpEnv+"=1", "SECEXEC_PROCFS_PROBE=other-"+hex.EncodeToString(probe),
		"HOME=/elsewhere", "PATH=/nowhere", "HOSTNAME=another")
	cmd.Dir = os.TempDir()
	child, err := cmd.Output()
	if err != nil {
		t.Fatalf("child dump: %v", err)
	}
	if cmd.Process.Pid == os.Getpid() {
		t.Fatal("child has the parent's pid")
	}
	if !bytes.Equal(child, []byte(d)) {
		t.Errorf("/proc differs between host processes:\nparent:\n%s\nchild:\n%s", d, child)
	}

	// The host's name, as a whole token (a substring test would trip on a
	// short name such as "a").
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{host}
	if short, _, ok := strings.Cut(host, "."); ok {
		names = append(names, short)
	}
	for _, h := range names {
		if h != "" && toks[h] && !tokens(inputs)[h] {
			t.Errorf("host name %q appears in /proc", h)
		}
	}

	// Host environment values and paths, as substrings where they are long
	// enough to be distinctive.
	var secrets []string
	for _, kv := range os.Environ() {
		if _, v, ok := strings.Cut(kv, "="); ok {
			secrets = append(secrets, v)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		secrets = append(secrets, wd)
	}
	secrets = append(secrets, exe, os.TempDir())
	for _, s := range secrets {
		if len(s) >= 6 && strings.Contains(d, s) && !strings.Contains(inputs, s) {
			t.Errorf("host value %q appears in /proc", s)
		}
	}
	if strings.Contains(d, "probe-") {
		t.Error("the probe variable leaked")
	}

	// The host's kernel, CPU and memory, where the host shows them.
	hostFacts := map[string]string{}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		hostFacts["kernel release"] = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				hostFacts["cpu model"] = strings.TrimSpace(v)
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				hostFacts["memory"] = f[1]
			}
		}
	}
	for what, v := range hostFacts {
		if v == "" {
			continue
		}
		if strings.Contains(inputs, v) {
			continue
		}
		if _, err := strconv.Atoi(v); err == nil && toks[v] || err != nil && strings.Contains(d, v) {
			t.Errorf("host %s %q appears in /proc", what, v)
		}
	}
}

// The dump walks every file a guest can reach; make sure it really does.
func TestDumpCoversTree(t *testing.T) {
	d := string(dump(New(newFake())))
	for _, p := range []string{"/proc/meminfo ", "/proc/42/environ ", "/proc/42/fd/1 ", "/proc/self ", "/proc/sys/kernel/hostname ", "/proc/1/cwd "} {
		if !strings.Contains(d, "\n"+p) && !strings.HasPrefix(d, p) {
			t.Errorf("dump misses %s", p)
		}
	}
	if strings.Contains(d, "error") {
		t.Errorf("dump hit errors:\n%s", d)
	}
}
