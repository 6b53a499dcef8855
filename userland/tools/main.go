// Command tools is one WASI module for many small everyday commands: xxd,
// hexdump, file, tree, zip, unzip, bzip2 (bunzip2, bzcat), xz (unxz,
// xzcat), patch, ps, uname, hostname, tput, clear, stty, and the pagers less and more and
// the editor vi (vim, view, ex). Like busybox it picks the tool from the
// base name of argv[0] ("xxd" or "/bin/xxd"); "tools NAME ARGS..." runs NAME too. Each
// tool follows the output, messages and exit statuses of the Debian
// program of the same name for the options it supports.
package main

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// tool is one command: it gets its arguments (argv[0] included) and the
// standard streams, and returns the exit status.
type tool func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// tools maps each command name to its implementation; the names must be
// the module's aliases in wasmbuild.Aliases (a test checks it).
var tools = map[string]tool{
	"xxd":      runXxd,
	"hexdump":  runHexdump,
	"file":     runFile,
	"tree":     runTree,
	"zip":      runZip,
	"unzip":    runUnzip,
	"bzip2":    runBzip2,
	"bunzip2":  runBzip2,
	"bzcat":    runBzip2,
	"xz":       runXz,
	"unxz":     runXz,
	"xzcat":    runXz,
	"patch":    runPatch,
	"tput":     runTput,
	"clear":    runClear,
	"ps":       runPs,
	"stty":     runStty,
	"less":     runLess,
	"more":     runMore,
	"vi":       runVi,
	"vim":      runVi,
	"view":     runVi,
	"ex":       runVi,
	"uname":    runUname,
	"hostname": runHostname,
}

// message is an error worded (and capitalised) as the imitated program
// words it, printed as it is.
type message string

func (m message) Error() string { return string(m) }

// dispatch runs the tool named by args[0]'s base name, or by args[1] when
// the module is run as "tools".
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "tools"
	if len(args) > 0 {
		name = path.Base(args[0])
	}
	if name == "tools" && len(args) > 1 {
		args = args[1:]
		name = path.Base(args[0])
	}
	if t, ok := tools[name]; ok {
		return t(args, stdin, stdout, stderr)
	}
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(stderr, "tools: unknown command %q; commands: %s\n", name, strings.Join(names, " "))
	return 127
}
