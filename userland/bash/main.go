// Command bash is secexec's shell, registered as both sh and bash inside
// the sandbox: bash's language and diagnostics on package shell, compiled
// to WASI like the rest of secexec's userland.
//
//	bash [-euxv] [-o option]... [-c command [name [arg]...] | script [arg]... | -s [arg]...]
package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/secexec/secexec/userland/internal/hostproc"
	"github.com/secexec/secexec/userland/internal/shell"
	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// sigPIPE is SIGPIPE's number.
const sigPIPE = 13

const version = "GNU bash, version 5.2.15(1)-release (wasm32-secexec-wasi)\n"

func run(argv []string) int {
	name := "bash"
	if len(argv) > 0 && argv[0] != "" {
		name = argv[0]
	}
	prog := path.Base(name)
	args := argv[1:]
	type opt struct {
		flag byte
		long string
		on   bool
	}
	var opts []opt
	command, haveCommand, readStdin, interactive := "", false, false, false
	for len(args) > 0 {
		a := args[0]
		if a == "--" || a == "-" {
			args = args[1:]
			break
		}
		switch a {
		case "--version":
			fmt.Print(version)
			return 0
		case "--posix":
			opts = append(opts, opt{long: "posix", on: true})
			args = args[1:]
			continue
		case "--norc", "--noprofile", "--login", "--noediting":
			args = args[1:]
			continue
		}
		if len(a) < 2 || a[0] != '-' && a[0] != '+' {
			break
		}
		on := a[0] == '-'
		args = args[1:]
		for i := 1; i < len(a); i++ {
			switch c := a[i]; c {
			case 'c':
				haveCommand = true
			case 's':
				readStdin = true
			case 'i':
				interactive = true
			case 'l', 'r':
			case 'o':
				if len(args) == 0 {
					fmt.Fprintf(os.Stderr, "%s: -o: option requires an argument\n", name)
					return 2
				}
				opts = append(opts, opt{long: args[0], on: on})
				args = args[1:]
			default:
				opts = append(opts, opt{flag: c, on: on})
			}
		}
	}
	sys := shell.NewSystem()
	dir := os.Getenv("PWD")
	if dir == "" {
		if d, err := os.Getwd(); err == nil {
			dir = d
		} else {
			dir = "/"
		}
	}
	var src string
	diagName := prog
	arg0 := name
	switch {
	case haveCommand:
		if len(args) == 0 {
			fmt.Fprintf(os.Stderr, "%s: -c: option requires an argument\n", name)
			return 2
		}
		command, args = args[0], args[1:]
		src = command
		if len(args) > 0 {
			arg0, args = args[0], args[1:]
		}
		diagName = arg0
	case len(args) > 0 && !readStdin:
		script := args[0]
		args = args[1:]
		b, err := readScript(script, dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %s: %s\n", prog, script, sysmsg.Text(err))
			return 127
		}
		src = b
		arg0 = script
		diagName = script
	default:
		if interactive || hostproc.IsTerminal(0) && hostproc.IsTerminal(2) {
			// An interactive session (a prompt, line editing, job
			// control on the terminal) is the published shell's job for
			// now: this one runs scripts and -c.
			err := hostproc.Exec("brush", argv, os.Environ())
			fmt.Fprintf(os.Stderr, "%s: interactive shell: %s\n", prog, sysmsg.Text(err))
			return 126
		}
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %s\n", prog, sysmsg.Text(err))
			return 2
		}
		src = string(b)
	}
	// A pipeline stage that is a goroutine of this process (a function
	// or loop piped into head) must end alone when its reader is gone,
	// as bash's forked subshell does: its write fails with EPIPE and the
	// stage exits 141. SIGPIPE would end the whole shell instead, so it
	// stays blocked here; programs the shell starts begin with nothing
	// blocked.
	_ = hostproc.BlockSignal(sigPIPE)
	sh := shell.New(diagName, sys, os.Environ(), dir)
	if prog == "sh" {
		// bash invoked as sh runs in POSIX mode.
		sh.SetOption("posix", true)
	}
	sh.CommandMode = haveCommand
	sh.Stdio(os.Stdin, os.Stdout, os.Stderr)
	sh.SetArgs(arg0, args)
	if !haveCommand && !readStdin && arg0 != name {
		sh.SetScript(arg0)
	}
	for _, o := range opts {
		if o.long != "" {
			if !sh.SetOption(o.long, o.on) {
				fmt.Fprintf(os.Stderr, "%s: %s: invalid option name\n", prog, o.long)
				return 2
			}
			continue
		}
		if !sh.SetFlag(o.flag, o.on) {
			fmt.Fprintf(os.Stderr, "%s: -%c: invalid option\n", prog, o.flag)
			return 2
		}
	}
	return sh.RunSource(src)
}

func readScript(p, dir string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		p = dir + "/" + p
	}
	b, err := os.ReadFile(p)
	return string(b), err
}
