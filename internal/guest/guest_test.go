package guest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/guest"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/policy"
)

// testCache is shared by test runs so the userland is fetched and
// compiled once per machine.
func testCache(t *testing.T) (software, cache string) {
	t.Helper()
	root := filepath.Join(os.TempDir(), "secexec-test-cache")
	return filepath.Join(os.TempDir(), "secexec-test-software"), root
}

// newHost is a VM on a runtime over the shared test caches (set up on
// first use), both closed when the test ends.
func newHost(t *testing.T) *vmhost.Host {
	t.Helper()
	ctx := context.Background()
	sw, cache := testCache(t)
	rt, err := guest.New(ctx, guest.Config{SoftwareDir: sw, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(ctx) })
	h, err := vmhost.New(ctx, vmhost.Config{Policy: policy.AllowAll(), Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(ctx) })
	return h
}

func TestShellNodeAndOwnCommands(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/user"}
	for _, tc := range []struct{ cmd, want string }{
		{"echo hello | wc -c", "6\n"},
		{"printf 'b\\na\\nb\\n' | sort | uniq -c", "      1 a\n      2 b\n"},
		{"echo '{\"n\": 42}' | jq .n", "42\n"},
		{"printf 'x\\nfoo\\n' > /tmp/f && grep -n foo /tmp/f", "2:foo\n"},
		{"node -e 'console.log(1+1)'", "2\n"},
		{"node -e \"process.stdout.write(require('child_process').execSync('echo via-sh').toString())\"", "via-sh\n"},
	} {
		var out, errb bytes.Buffer
		exit, err := h.Run(ctx, vmhost.RunSpec{Argv: []string{"sh", "-c", tc.cmd}, Env: env, Stdout: &out, Stderr: &errb})
		if err != nil {
			t.Fatalf("%s: %v", tc.cmd, err)
		}
		if exit.Code != 0 || out.String() != tc.want {
			t.Errorf("%s: exit %d stdout %q stderr %q, want %q", tc.cmd, exit.Code, out.String(), errb.String(), tc.want)
		}
	}
}

// docs/userland.md names every command on a VM's PATH, so the page cannot
// fall behind the userland.
func TestUserlandDocListsEveryCommand(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	var out, errb bytes.Buffer
	exit, err := h.Run(ctx, vmhost.RunSpec{Argv: []string{"ls", "-1", "/usr/bin", "/bin", "/usr/local/bin"},
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Stdout: &out, Stderr: &errb})
	if err != nil || exit.Code != 0 {
		t.Fatalf("ls: %v exit %+v stderr %q", err, exit, errb.String())
	}
	doc, err := os.ReadFile("../../docs/userland.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range strings.Fields(out.String()) {
		if strings.HasSuffix(name, ":") {
			continue // ls's directory headings
		}
		n++
		if !bytes.Contains(doc, []byte("`"+name+"`")) {
			t.Errorf("docs/userland.md does not list %s", name)
		}
	}
	if n < 150 {
		t.Fatalf("only %d commands on PATH: %q", n, out.String())
	}
}

// Time zones work in the guest as on the host: CPython's zoneinfo, a Go
// program's local time under TZ (jq), and the zone files themselves, each
// compared with the host's python3 and its zoneinfo on the same input.
func TestTimeZones(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	py := `from zoneinfo import ZoneInfo; import datetime
for z in ("America/New_York", "Europe/Paris", "Asia/Kolkata", "Australia/Lord_Howe"):
    for m in (1, 7):
        d = datetime.datetime(2024, m, 1, 12, tzinfo=ZoneInfo(z))
        print(z, d.isoformat(), d.tzname())`
	host, err := exec.Command("python3", "-c", py).Output()
	if err != nil {
		t.Fatalf("host python3 (the reference): %v", err)
	}
	run := func(env []string, argv ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		exit, err := h.Run(ctx, vmhost.RunSpec{Argv: argv, Env: append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...), Stdout: &out, Stderr: &errb})
		if err != nil || exit.Code != 0 {
			t.Fatalf("%q: %v exit %+v stderr %q", argv, err, exit, errb.String())
		}
		return out.String()
	}
	if got := run(nil, "python3", "-c", py); got != string(host) {
		t.Errorf("zoneinfo in the VM:\n%s\nhost:\n%s", got, host)
	}
	for tz, want := range map[string]string{"Asia/Tokyo": "09 JST\n", ":Europe/Paris": "01 CET\n", "": "00 UTC\n"} {
		if got := run([]string{"TZ=" + tz}, "jq", "-rn", `0|strflocaltime("%H %Z")`); got != want {
			t.Errorf("TZ=%s jq: %q, want %q", tz, got, want)
		}
	}
}
