package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// cliConfig holds "git -c name=value" settings for this run, keyed by the
// canonical name (section and key lower case, subsection as given). They
// take precedence over every configuration file, as in git.
var cliConfig = map[string]string{}

// gitDirFlag and workTreeFlag are --git-dir and --work-tree (or GIT_DIR
// and GIT_WORK_TREE): when set, openRepo uses them instead of searching
// upwards for .git.
var gitDirFlag, workTreeFlag string

// canonicalKey lower-cases a configuration name's section and key.
func canonicalKey(k string) (string, bool) {
	first, last := strings.IndexByte(k, '.'), strings.LastIndexByte(k, '.')
	if first <= 0 || last == len(k)-1 {
		return "", false
	}
	return strings.ToLower(k[:first]) + k[first:last+1] + strings.ToLower(k[last+1:]), true
}

// globalOptions consumes the options before the command name. done says
// the run is over (an error, --version or --help) with the given status.
func globalOptions(args []string, stdout, stderr io.Writer) (rest []string, code int, done bool) {
	missing := func(what, opt string) ([]string, int, bool) {
		fmt.Fprintf(stderr, "%s '%s' option\n%s", what, opt, globalUsage)
		return nil, 129, true
	}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		val, hasVal := "", false
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
			a, val, hasVal = name, v, true
		}
		takeValue := func() bool {
			if hasVal {
				args = args[1:]
				return true
			}
			if len(args) < 2 {
				return false
			}
			val = args[1]
			args = args[2:]
			return true
		}
		switch a {
		case "--version", "-v":
			fmt.Fprintln(stdout, "git version 2.39.5 (secexec, go-git)")
			return nil, 0, true
		case "-h", "--help":
			fmt.Fprint(stdout, usage)
			return nil, 0, true
		case "-C":
			if !takeValue() {
				return missing("no directory given for", "-C")
			}
			if val == "" {
				continue
			}
			if err := os.Chdir(val); err != nil {
				fmt.Fprintf(stderr, "fatal: cannot change to '%s': %v\n", val, errText(err))
				return nil, 128, true
			}
		case "-c":
			if !takeValue() {
				fmt.Fprintf(stderr, "-c expects a configuration string\n%s", globalUsage)
				return nil, 129, true
			}
			k, v, _ := strings.Cut(val, "=")
			ck, ok := canonicalKey(k)
			if !ok {
				fmt.Fprintf(stderr, "error: key does not contain a section: %s\nfatal: unable to parse command-line config\n", k)
				return nil, 128, true
			}
			cliConfig[ck] = v
		case "--git-dir", "--work-tree":
			if !takeValue() {
				return missing("no directory given for", a)
			}
			abs, err := filepath.Abs(val)
			if err != nil {
				fmt.Fprintf(stderr, "fatal: %s\n", errText(err))
				return nil, 128, true
			}
			if a == "--git-dir" {
				gitDirFlag = abs
			} else {
				workTreeFlag = abs
			}
		case "--no-pager", "-P", "-p", "--paginate", "--no-replace-objects", "--literal-pathspecs":
			// There is no pager in the VM: output always goes straight
			// to stdout, which is what --no-pager asks for.
			args = args[1:]
		default:
			fmt.Fprintf(stderr, "unknown option: %s\n%s", args[0], globalUsage)
			return nil, 129, true
		}
	}
	return args, 0, false
}
