//go:build !wasip1

package main

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// uname against GNU uname: the same fields, order, spacing, unknowns and
// errors, once each side's own identity is replaced by placeholders.
func TestUnameMatchesGNU(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	str := func(b []byte) string { return unix.ByteSliceToString(b) }
	host, _ := os.Hostname()
	// The version before the release and the node name: the VM's
	// version contains its default node name.
	pairs := []string{
		str(u.Version[:]), "VERSION", "#1 SMP secexec", "VERSION",
		str(u.Release[:]), "RELEASE", "6.1.0-secexec", "RELEASE",
		str(u.Machine[:]), "MACHINE", unameMachine, "MACHINE",
	}
	node := func(s string) string {
		// Node names are whole fields of uname -a, or whole lines.
		out := []string{}
		for _, line := range strings.Split(s, "\n") {
			f := strings.Split(line, " ")
			for i := range f {
				if f[i] == host || f[i] == "secexec" {
					f[i] = "NODE"
				}
			}
			out = append(out, strings.Join(f, " "))
		}
		return strings.Join(out, "\n")
	}
	norm := func(s string) string { return node(strings.NewReplacer(pairs...).Replace(s)) }
	var cases []diffCase
	for _, script := range []string{
		"uname", "uname -s", "uname -n", "uname -r", "uname -v", "uname -m", "uname -p", "uname -i", "uname -o",
		"uname -a", "uname --all", "uname -mns", "uname -o -s", "uname --kernel-name --machine", "uname -snrvmpio",
		"uname -x", "uname foo",
	} {
		cases = append(cases, diffCase{script: script, stderr: true, normalize: norm})
	}
	runCasesWith(t, []string{"uname"}, cases)
}

// hostname and uname -n print the VM's configured name, as /etc/hostname
// and /proc (which node's os.hostname() reads) do; setting it is refused.
func TestHostnameIsTheVMs(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{Hostname: "box.example.com"})
	for script, want := range map[string]string{
		"hostname":         "box.example.com\n",
		"hostname -s":      "box\n",
		"hostname --short": "box\n",
		"hostname -f":      "box.example.com\n",
		"hostname -d":      "example.com\n",
		"uname -n":         "box.example.com\n",
		`[ "$(hostname)" = "$(cat /etc/hostname)" ] && [ "$(uname -n)" = "$(cat /proc/sys/kernel/hostname)" ] && echo same`: "same\n",
	} {
		r := vmtest.Run(t, h, "", nil, "sh", "-c", script)
		if r.Stdout != want || r.Exit.Code != 0 {
			t.Errorf("%s: %q (exit %d, %q), want %q", script, r.Stdout, r.Exit.Code, r.Stderr, want)
		}
	}
	r := vmtest.Run(t, h, "", nil, "hostname", "other")
	if r.Exit.Code != 1 || r.Stderr != "hostname: you must be root to change the host name\n" {
		t.Errorf("setting the name: exit %d, %q", r.Exit.Code, r.Stderr)
	}
}
