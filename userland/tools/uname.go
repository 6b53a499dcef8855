package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// The VM's identity as its kernel tells it in /proc/sys/kernel, which
// node's os module reads too: uname and hostname must agree with both
// (the published coreutils print a name of their own build instead).
// The machine is node's os.machine() of the VM.
const unameMachine = "x86_64"

// kernelFile reads one of /proc/sys/kernel's files, without its newline.
func kernelFile(name, fallback string) string {
	b, err := os.ReadFile("/proc/sys/kernel/" + name)
	if err != nil {
		return fallback
	}
	return strings.TrimRight(string(b), "\n")
}

// runUname is GNU uname: -s (the default), -n, -r, -v, -m, -p, -i, -o
// and -a, printed in that order whatever the order asked; -a leaves out
// -p and -i, which are unknown.
func runUname(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, operands, err := getopt(args[1:], "asnrvmpio", []string{"all", "kernel-name", "nodename", "kernel-release",
		"kernel-version", "machine", "processor", "hardware-platform", "operating-system", "help", "version"})
	if err != nil {
		fmt.Fprintf(stderr, "uname: %s\nTry 'uname --help' for more information.\n", err)
		return 1
	}
	if len(operands) > 0 {
		fmt.Fprintf(stderr, "uname: extra operand ‘%s’\nTry 'uname --help' for more information.\n", operands[0])
		return 1
	}
	const (
		fKernel = 1 << iota
		fNode
		fRelease
		fVersion
		fMachine
		fProcessor
		fPlatform
		fOS
	)
	var want int
	for _, o := range opts {
		switch o.name {
		case "a", "all":
			want |= fKernel | fNode | fRelease | fVersion | fMachine | fOS
		case "s", "kernel-name":
			want |= fKernel
		case "n", "nodename":
			want |= fNode
		case "r", "kernel-release":
			want |= fRelease
		case "v", "kernel-version":
			want |= fVersion
		case "m", "machine":
			want |= fMachine
		case "p", "processor":
			want |= fProcessor
		case "i", "hardware-platform":
			want |= fPlatform
		case "o", "operating-system":
			want |= fOS
		case "help":
			fmt.Fprint(stdout, "Usage: uname [OPTION]...\nPrint certain system information.  With no OPTION, same as -s.\n")
			return 0
		case "version":
			fmt.Fprint(stdout, "uname (secexec)\n")
			return 0
		}
	}
	if want == 0 {
		want = fKernel
	}
	var fields []string
	for _, f := range []struct {
		bit   int
		value func() string
	}{
		{fKernel, func() string { return kernelFile("ostype", "Linux") }},
		{fNode, func() string { return kernelFile("hostname", "localhost") }},
		{fRelease, func() string { return kernelFile("osrelease", "unknown") }},
		{fVersion, func() string { return kernelFile("version", "unknown") }},
		{fMachine, func() string { return unameMachine }},
		{fProcessor, func() string { return "unknown" }},
		{fPlatform, func() string { return "unknown" }},
		{fOS, func() string { return "GNU/Linux" }},
	} {
		if want&f.bit != 0 {
			fields = append(fields, f.value())
		}
	}
	fmt.Fprintln(stdout, strings.Join(fields, " "))
	return 0
}

// runHostname is net-tools hostname for reading the name: plain, -s
// (up to the first dot), -f (the VM resolves no domain: the name itself)
// and -d (what follows the first dot). Setting the name is refused as
// for any user who is not root.
func runHostname(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, operands, err := getopt(args[1:], "sfdF:b", []string{"short", "fqdn", "long", "domain", "file=", "boot"})
	if err != nil {
		fmt.Fprintf(stderr, "hostname: %s\n", err)
		return 64
	}
	name := kernelFile("hostname", "localhost")
	show := name
	for _, o := range opts {
		switch o.name {
		case "s", "short":
			show, _, _ = strings.Cut(name, ".")
		case "f", "fqdn", "long":
			show = name
		case "d", "domain":
			_, show, _ = strings.Cut(name, ".")
		case "F", "file", "b", "boot":
			operands = append(operands, o.arg)
		}
	}
	if len(operands) > 0 {
		fmt.Fprintln(stderr, "hostname: you must be root to change the host name")
		return 1
	}
	fmt.Fprintln(stdout, show)
	return 0
}
