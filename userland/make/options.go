package main

import (
	"fmt"
	"strconv"
	"strings"
)

// options are make's command-line switches.
type options struct {
	makefiles     []string
	dirs          []string
	dryRun        bool
	silent        bool
	keepGoing     bool
	ignoreErrors  bool
	alwaysMake    bool
	jobs          int // 0: unlimited
	jobsSet       bool
	question      bool
	envOverrides  bool
	printDir      bool
	noPrintDir    bool
	noBuiltin     bool
	noBuiltinVars bool
	version       bool
	help          bool
	vars          []string
	goals         []string
	includeDirs   []string
	evals         []string
	// self is how make was invoked (argv[0]), for $(MAKE).
	self          string
	warnUndefined bool
	touch         bool
}

// unsupported are the switches GNU make has and this make refuses,
// rather than run with a different meaning: long name by letter.
var unsupported = map[byte]string{'p': "print-data-base", 'o': "old-file", 'W': "what-if",
	'O': "output-sync", 'd': "debug", 'L': "check-symlink-times"}

// unsupportedError is a switch this make does not have.
type unsupportedError struct{ opt string }

// Error is the message after "make: *** ".
func (e *unsupportedError) Error() string {
	return fmt.Sprintf("option '%s' is not supported by this make", e.opt)
}

// usageError is a command-line error, reported as GNU make does.
type usageError struct{ msg string }

// Error is the message after "make: ".
func (e *usageError) Error() string { return e.msg }

// parseArgs parses make's arguments (after the program name).
func parseArgs(args []string, o *options) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, r := range args[i+1:] {
				o.addOperand(r)
			}
			return nil
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			need := func() (string, error) {
				if hasVal {
					return val, nil
				}
				if i+1 >= len(args) {
					return "", &usageError{fmt.Sprintf("option '--%s' requires an argument", name)}
				}
				i++
				return args[i], nil
			}
			switch name {
			case "file", "makefile":
				v, err := need()
				if err != nil {
					return err
				}
				o.makefiles = append(o.makefiles, v)
			case "directory":
				v, err := need()
				if err != nil {
					return err
				}
				o.dirs = append(o.dirs, v)
			case "just-print", "dry-run", "recon":
				o.dryRun = true
			case "silent", "quiet":
				o.silent = true
			case "keep-going":
				o.keepGoing = true
			case "no-keep-going", "stop":
				o.keepGoing = false
			case "ignore-errors":
				o.ignoreErrors = true
			case "always-make":
				o.alwaysMake = true
			case "question":
				o.question = true
			case "environment-overrides":
				o.envOverrides = true
			case "print-directory":
				o.printDir = true
			case "no-print-directory":
				o.noPrintDir = true
			case "no-builtin-rules":
				o.noBuiltin = true
			case "no-builtin-variables":
				o.noBuiltinVars, o.noBuiltin = true, true
			case "version":
				o.version = true
			case "help":
				o.help = true
			case "jobs":
				o.jobs, o.jobsSet = 0, true
				if hasVal {
					n, err := strconv.Atoi(val)
					if err != nil || n < 1 {
						return &usageError{"the '-j' option requires a positive integer argument"}
					}
					o.jobs = n
				}
			case "include-dir":
				v, err := need()
				if err != nil {
					return err
				}
				o.includeDirs = append(o.includeDirs, v)
			case "jobserver-auth", "jobserver-fds":
			case "warn-undefined-variables":
				o.warnUndefined = true
			case "no-silent":
				o.silent = false
			case "eval":
				v, err := need()
				if err != nil {
					return err
				}
				o.evals = append(o.evals, v)
			case "touch":
				o.touch = true
			case "print-data-base", "old-file", "assume-old", "what-if", "new-file", "assume-new",
				"output-sync", "debug", "trace", "check-symlink-times":
				return &unsupportedError{"--" + name}
			default:
				return &usageError{fmt.Sprintf("unrecognized option '%s'", a)}
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			o.addOperand(a)
			continue
		}
		for k := 1; k < len(a); k++ {
			c := a[k]
			arg := func() (string, error) {
				if k+1 < len(a) {
					v := a[k+1:]
					k = len(a)
					return v, nil
				}
				if i+1 >= len(args) {
					return "", &usageError{fmt.Sprintf("option requires an argument -- '%c'", c)}
				}
				i++
				k = len(a)
				return args[i], nil
			}
			switch c {
			case 'f':
				v, err := arg()
				if err != nil {
					return err
				}
				o.makefiles = append(o.makefiles, v)
			case 'C':
				v, err := arg()
				if err != nil {
					return err
				}
				o.dirs = append(o.dirs, v)
			case 'I':
				v, err := arg()
				if err != nil {
					return err
				}
				o.includeDirs = append(o.includeDirs, v)
			case 'n':
				o.dryRun = true
			case 's':
				o.silent = true
			case 'k':
				o.keepGoing = true
			case 'S':
				o.keepGoing = false
			case 'i':
				o.ignoreErrors = true
			case 'B':
				o.alwaysMake = true
			case 'q':
				o.question = true
			case 'e':
				o.envOverrides = true
			case 'w':
				o.printDir = true
			case 'r':
				o.noBuiltin = true
			case 'R':
				o.noBuiltinVars, o.noBuiltin = true, true
			case 'v':
				o.version = true
			case 'h':
				o.help = true
			case 'j':
				// An optional number: in this word, or the next
				// argument when that is a number.
				num := a[k+1:]
				if num == "" && i+1 < len(args) && isDigits(args[i+1]) {
					i++
					num = args[i]
				}
				k = len(a)
				o.jobs, o.jobsSet = 0, true
				if num != "" {
					n, err := strconv.Atoi(num)
					if err != nil || n < 1 {
						return &usageError{"the '-j' option requires a positive integer argument"}
					}
					o.jobs = n
				}
			case 'l':
				if k+1 < len(a) {
					k = len(a)
				} else if i+1 < len(args) && isDigits(args[i+1]) {
					i++
				}
			case 'E':
				v, err := arg()
				if err != nil {
					return err
				}
				o.evals = append(o.evals, v)
			case 'm', 'b':
			case 't':
				o.touch = true
			case 'p', 'o', 'W', 'O', 'd', 'L':
				return &unsupportedError{fmt.Sprintf("-%c (--%s)", c, unsupported[c])}
			default:
				return &usageError{fmt.Sprintf("invalid option -- '%c'", c)}
			}
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (o *options) addOperand(a string) {
	if i := strings.IndexByte(a, '='); i > 0 {
		if _, _, _, ok := parseVarDef(a); ok {
			o.vars = append(o.vars, a)
			return
		}
	}
	o.goals = append(o.goals, a)
}

// flagLetters are the single-letter switches in the order GNU make
// writes them into MAKEFLAGS.
func (o *options) flagLetters() string {
	var b strings.Builder
	for _, f := range []struct {
		c  byte
		on bool
	}{{'B', o.alwaysMake}, {'e', o.envOverrides}, {'i', o.ignoreErrors}, {'k', o.keepGoing},
		{'n', o.dryRun}, {'q', o.question}, {'r', o.noBuiltin}, {'R', o.noBuiltinVars}, {'s', o.silent}, {'t', o.touch}, {'w', o.printDir}} {
		if f.on {
			b.WriteByte(f.c)
		}
	}
	return b.String()
}

// makeflags is the value of MAKEFLAGS as a makefile sees it.
func (o *options) makeflags(withVars bool) string {
	s := o.flagLetters()
	add := func(w string) {
		if s != "" {
			s += " "
		}
		s += w
	}
	if o.jobs != 1 || o.jobsSet {
		if o.jobs == 0 {
			add("-j")
		} else {
			add("-j" + strconv.Itoa(o.jobs))
		}
	}
	if o.noPrintDir {
		add("--no-print-directory")
	}
	if o.warnUndefined {
		add("--warn-undefined-variables")
	}
	if withVars && len(o.vars) > 0 {
		add("--")
		for i := len(o.vars) - 1; i >= 0; i-- {
			s += " " + strings.ReplaceAll(o.vars[i], " ", "\\ ")
		}
	}
	return s
}

// parseMakeflags applies the MAKEFLAGS of the environment (a parent
// make's switches and command-line variables).
func parseMakeflags(s string, o *options) error {
	words := splitEscaped(s)
	if len(words) == 0 {
		return nil
	}
	var args []string
	for i, w := range words {
		if w == "--" {
			o.vars = append(o.vars, words[i+1:]...)
			break
		}
		if i == 0 && !strings.HasPrefix(w, "-") {
			w = "-" + w
		}
		if strings.HasPrefix(w, "--jobserver") {
			continue
		}
		args = append(args, w)
	}
	saved := o.goals
	err := parseArgs(args, o)
	o.goals = saved
	return err
}

// splitEscaped splits at blanks not escaped by a backslash.
func splitEscaped(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			cur.WriteByte(s[i+1])
			i++
			in = true
			continue
		}
		if isBlank(c) {
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
			continue
		}
		cur.WriteByte(c)
		in = true
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// makeflagsForChild is the MAKEFLAGS a recipe's environment gets.
func (m *Make) makeflagsForChild(sc *Scope) string {
	return m.opts.makeflags(true)
}
