//go:build linux

package server

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const hardenTestEnv = "SECEXEC_HARDEN_TEST"

// hardenChild runs in a child test process: it hardens itself and checks
// that denied calls fail with EPERM while ordinary ones work.
func hardenChild() int {
	if err := Harden(2); err != nil {
		fmt.Println("harden:", err)
		return 1
	}
	bad := 0
	check := func(name string, err error, want error) {
		if !errors.Is(err, want) {
			fmt.Printf("%s: %v, want %v\n", name, err, want)
			bad++
		}
	}
	filtered := auditArch != 0
	if filtered {
		check("ptrace", unix.PtraceAttach(os.Getppid()), unix.EPERM)
		check("unshare", unix.Unshare(unix.CLONE_NEWUSER), unix.EPERM)
		check("mount", unix.Mount("none", "/tmp", "tmpfs", 0, ""), unix.EPERM)
		check("execve", unix.Exec("/bin/true", []string{"true"}, nil), unix.EPERM)
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, 0, 0)
		check("io_uring_setup", e, unix.EPERM)
	}
	if _, err := os.ReadFile("/proc/self/status"); err != nil {
		fmt.Println("read:", err)
		bad++
	}
	st, _ := os.ReadFile("/proc/self/status")
	if !strings.Contains(string(st), "NoNewPrivs:\t1") || (filtered && !strings.Contains(string(st), "Seccomp:\t2")) {
		fmt.Println("status lacks NoNewPrivs/Seccomp")
		bad++
	}
	if bad > 0 {
		return 1
	}
	fmt.Println("ok")
	return 0
}

func TestHardenFilter(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hardenTestEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("hardened child: %v\n%s", err, out)
	}
}
