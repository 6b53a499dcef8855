package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/secexec/secexec/userland/internal/grepcore"
	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// Option identifiers for long options without a short form; short options
// use their letter.
const (
	optBinaryFiles = 256 + iota
	optColor
	optExcludeDir
	optExclude
	optExcludeFrom
	optGroupSep
	optInclude
	optLineBuffered
	optLabel
	optNoIgnoreCase
	optHelp
)

type argKind int

const (
	noArg argKind = iota
	reqArg
	optArg
)

type longOpt struct {
	name string
	kind argKind
	id   int
}

// longOpts is GNU grep 3.8's table, in its order: getopt's ambiguity
// message lists candidates in table order.
var longOpts = []longOpt{
	{"basic-regexp", noArg, 'G'},
	{"extended-regexp", noArg, 'E'},
	{"fixed-regexp", noArg, 'F'},
	{"fixed-strings", noArg, 'F'},
	{"perl-regexp", noArg, 'P'},
	{"after-context", reqArg, 'A'},
	{"before-context", reqArg, 'B'},
	{"binary-files", reqArg, optBinaryFiles},
	{"byte-offset", noArg, 'b'},
	{"context", reqArg, 'C'},
	{"color", optArg, optColor},
	{"colour", optArg, optColor},
	{"count", noArg, 'c'},
	{"devices", reqArg, 'D'},
	{"directories", reqArg, 'd'},
	{"exclude", reqArg, optExclude},
	{"exclude-from", reqArg, optExcludeFrom},
	{"exclude-dir", reqArg, optExcludeDir},
	{"file", reqArg, 'f'},
	{"files-with-matches", noArg, 'l'},
	{"files-without-match", noArg, 'L'},
	{"group-separator", reqArg, optGroupSep},
	{"help", noArg, optHelp},
	{"include", reqArg, optInclude},
	{"ignore-case", noArg, 'i'},
	{"no-ignore-case", noArg, optNoIgnoreCase},
	{"initial-tab", noArg, 'T'},
	{"label", reqArg, optLabel},
	{"line-buffered", noArg, optLineBuffered},
	{"line-number", noArg, 'n'},
	{"line-regexp", noArg, 'x'},
	{"max-count", reqArg, 'm'},
	{"no-filename", noArg, 'h'},
	{"no-group-separator", noArg, optGroupSep},
	{"no-messages", noArg, 's'},
	{"null", noArg, 'Z'},
	{"null-data", noArg, 'z'},
	{"only-matching", noArg, 'o'},
	{"quiet", noArg, 'q'},
	{"recursive", noArg, 'r'},
	{"dereference-recursive", noArg, 'R'},
	{"regexp", reqArg, 'e'},
	{"invert-match", noArg, 'v'},
	{"silent", noArg, 'q'},
	{"text", noArg, 'a'},
	{"binary", noArg, 'U'},
	{"version", noArg, 'V'},
	{"with-filename", noArg, 'H'},
	{"word-regexp", noArg, 'w'},
}

// shortOpts is GNU grep's getopt string: a letter followed by ':' takes an
// argument.
const shortOpts = "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz"

type binaryMode int

const (
	binaryBinary binaryMode = iota
	binaryText
	binaryWithoutMatch
)

type dirMode int

const (
	dirRead dirMode = iota
	dirRecurse
	dirSkip
)

type devMode int

const (
	devReadCommandLine devMode = iota
	devRead
	devSkip
)

type listMode int

const (
	listNone listMode = iota
	listMatching
	listNonMatching
)

// options is the parsed command line.
type options struct {
	syntax      grepcore.Syntax
	syntaxSet   bool
	keys        []string // patterns in order, before splitting at newlines
	haveKeys    bool     // some -e or -f was given
	icase       bool
	words       bool
	lines       bool
	invert      bool
	count       bool
	list        listMode
	quiet       bool
	suppress    bool
	only        bool
	lineNumber  bool
	byteOffset  bool
	alignTabs   bool
	filenameOpt int // -1 for -h, 1 for -H, 0 for neither
	maxCount    int64
	after       int64
	before      int64
	context     int64
	dirs        dirMode
	recursiveAt bool // -r, -R or -d recurse was given
	deref       bool // -R
	devices     devMode
	binary      binaryMode
	nullName    bool // -Z
	nullData    bool // -z
	label       string
	hasLabel    bool
	groupSep    string
	hasGroupSep bool
	lineBuf     bool
	include     grepcore.Filter
	excludeDir  grepcore.Filter
	showHelp    bool
	showVersion bool
	operands    []string
}

// usageError is a bad command line: print the message (if any) and the
// "Try 'grep --help'" hint, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// fatalError ends grep with status 2 and the message, without the hint.
type fatalError struct {
	msg    string
	status int
}

func (e *fatalError) Error() string { return e.msg }

func fatalf(format string, args ...any) error {
	return &fatalError{msg: fmt.Sprintf(format, args...), status: 2}
}

// parseArgs parses args (without the program name) like GNU getopt_long
// with argument permutation: options may follow operands until "--".
func parseArgs(args []string, stdin io.Reader, warn func(string)) (*options, error) {
	o := &options{
		maxCount: math.MaxInt64,
		after:    -1,
		before:   -1,
		context:  -1,
		groupSep: "--", hasGroupSep: true,
	}
	var digits []byte // a run of -NUM digits within one argument
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			o.operands = append(o.operands, args[i+1:]...)
			break
		}
		if strings.HasPrefix(arg, "--") {
			name, value, hasValue := strings.Cut(arg[2:], "=")
			lo, err := lookupLong(name, arg)
			if err != nil {
				return nil, err
			}
			switch lo.kind {
			case noArg:
				if hasValue {
					return nil, &usageError{fmt.Sprintf("option '--%s' doesn't allow an argument", lo.name)}
				}
			case reqArg:
				if !hasValue {
					if i+1 >= len(args) {
						return nil, &usageError{fmt.Sprintf("option '--%s' requires an argument", lo.name)}
					}
					i++
					value = args[i]
				}
			}
			if lo.id == optGroupSep && lo.name == "no-group-separator" {
				o.hasGroupSep = false
				continue
			}
			if err := o.apply(lo.id, value, hasValue || lo.kind == reqArg, stdin, warn); err != nil {
				return nil, err
			}
			continue
		}
		if len(arg) < 2 || arg[0] != '-' {
			o.operands = append(o.operands, arg)
			continue
		}
		digits = digits[:0]
		for j := 1; j < len(arg); j++ {
			c := arg[j]
			if c >= '0' && c <= '9' {
				// -NUM is --context=NUM; consecutive digits form one number.
				if len(digits) == 1 && digits[0] == '0' {
					digits = digits[:0]
				}
				digits = append(digits, c)
				if err := contextArg(string(digits), &o.context); err != nil {
					return nil, err
				}
				continue
			}
			digits = digits[:0]
			k := strings.IndexByte(shortOpts, c)
			if k < 0 || c == ':' {
				return nil, &usageError{fmt.Sprintf("invalid option -- '%c'", c)}
			}
			if k+1 < len(shortOpts) && shortOpts[k+1] == ':' {
				var value string
				if j+1 < len(arg) {
					value = arg[j+1:]
				} else {
					if i+1 >= len(args) {
						return nil, &usageError{fmt.Sprintf("option requires an argument -- '%c'", c)}
					}
					i++
					value = args[i]
				}
				if err := o.apply(int(c), value, true, stdin, warn); err != nil {
					return nil, err
				}
				break
			}
			if err := o.apply(int(c), "", false, stdin, warn); err != nil {
				return nil, err
			}
		}
	}
	if o.after < 0 {
		o.after = o.context
	}
	if o.before < 0 {
		o.before = o.context
	}
	return o, nil
}

// lookupLong resolves an exact or unambiguous abbreviated long option.
func lookupLong(name, arg string) (longOpt, error) {
	var found *longOpt
	var ambiguous []string
	for i := range longOpts {
		lo := &longOpts[i]
		if lo.name == name {
			return *lo, nil
		}
		if !strings.HasPrefix(lo.name, name) {
			continue
		}
		if found == nil {
			found = lo
			continue
		}
		if found.kind != lo.kind || found.id != lo.id {
			if ambiguous == nil {
				ambiguous = []string{found.name}
			}
			ambiguous = append(ambiguous, lo.name)
		}
	}
	if ambiguous != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "option '%s' is ambiguous; possibilities:", strings.SplitN(arg, "=", 2)[0])
		for _, n := range ambiguous {
			fmt.Fprintf(&b, " '--%s'", n)
		}
		return longOpt{}, &usageError{b.String()}
	}
	if found == nil || name == "" {
		return longOpt{}, &usageError{fmt.Sprintf("unrecognized option '%s'", arg)}
	}
	return *found, nil
}

func (o *options) setSyntax(s grepcore.Syntax) error {
	if o.syntaxSet && o.syntax != s {
		return fatalf("conflicting matchers specified")
	}
	o.syntax, o.syntaxSet = s, true
	return nil
}

// apply records one option. value is its argument, if it takes one.
func (o *options) apply(id int, value string, hasValue bool, stdin io.Reader, warn func(string)) error {
	switch id {
	case 'A':
		return contextArg(value, &o.after)
	case 'B':
		return contextArg(value, &o.before)
	case 'C':
		return contextArg(value, &o.context)
	case 'D':
		switch value {
		case "read":
			o.devices = devRead
		case "skip":
			o.devices = devSkip
		default:
			return fatalf("unknown devices method")
		}
	case 'E':
		return o.setSyntax(grepcore.Extended)
	case 'F':
		return o.setSyntax(grepcore.Fixed)
	case 'G':
		return o.setSyntax(grepcore.Basic)
	case 'P':
		return o.setSyntax(grepcore.Perl)
	case 'X':
		m := map[string]grepcore.Syntax{"grep": grepcore.Basic, "egrep": grepcore.Extended, "fgrep": grepcore.Fixed, "perl": grepcore.Perl}
		s, ok := m[value]
		if !ok {
			return fatalf("invalid matcher %s", value)
		}
		return o.setSyntax(s)
	case 'H':
		o.filenameOpt = 1
	case 'h':
		o.filenameOpt = -1
	case 'I':
		o.binary = binaryWithoutMatch
	case 'a':
		o.binary = binaryText
	case 'T':
		o.alignTabs = true
	case 'U':
		// O_BINARY only matters on DOS-like systems.
	case 'u':
		warn("warning: --unix-byte-offsets (-u) is obsolete")
	case 'V':
		o.showVersion = true
	case 'b':
		o.byteOffset = true
	case 'c':
		o.count = true
	case 'd':
		d, err := argMatch(value, "--directories", []string{"read", "recurse", "skip"})
		if err != nil {
			return err
		}
		o.dirs = dirMode(d)
		if o.dirs == dirRecurse {
			o.recursiveAt = true
		}
	case 'e':
		o.keys = append(o.keys, value)
		o.haveKeys = true
	case 'f':
		data, err := readPatternFile(value, stdin)
		if err != nil {
			return err
		}
		if data != "" {
			// A file's patterns end at its last newline; one more is
			// implied if missing.
			data = strings.TrimSuffix(data, "\n")
			o.keys = append(o.keys, data)
		}
		o.haveKeys = true
	case 'i', 'y':
		o.icase = true
	case optNoIgnoreCase:
		o.icase = false
	case 'L':
		o.list = listNonMatching
	case 'l':
		o.list = listMatching
	case 'm':
		n, err := parseIntArg(value)
		if err != nil {
			return fatalf("invalid max count")
		}
		o.maxCount = n
	case 'n':
		o.lineNumber = true
	case 'o':
		o.only = true
	case 'q':
		o.quiet = true
	case 'R':
		o.deref = true
		o.dirs = dirRecurse
		o.recursiveAt = true
	case 'r':
		o.dirs = dirRecurse
		o.recursiveAt = true
	case 's':
		o.suppress = true
	case 'v':
		o.invert = true
	case 'w':
		o.words = true
	case 'x':
		o.lines = true
	case 'Z':
		o.nullName = true
	case 'z':
		o.nullData = true
	case optBinaryFiles:
		switch value {
		case "binary":
			o.binary = binaryBinary
		case "text":
			o.binary = binaryText
		case "without-match":
			o.binary = binaryWithoutMatch
		default:
			return fatalf("unknown binary-files type")
		}
	case optColor:
		// Output is never coloured; the argument is still validated.
		if hasValue {
			switch strings.ToLower(value) {
			case "always", "yes", "force", "never", "no", "none", "auto", "tty", "if-tty":
			default:
				o.showHelp = true
			}
		}
	case optExclude, optInclude:
		o.include.Add(value, id == optInclude)
	case optExcludeFrom:
		data, err := readPatternFile(value, stdin)
		if err != nil {
			return err
		}
		for _, g := range strings.Split(data, "\n") {
			if g != "" {
				o.include.Add(g, false)
			}
		}
	case optExcludeDir:
		o.excludeDir.Add(stripTrailingSlashes(value), false)
	case optGroupSep:
		o.groupSep, o.hasGroupSep = value, true
	case optLineBuffered:
		o.lineBuf = true
	case optLabel:
		o.label, o.hasLabel = value, true
	case optHelp:
		o.showHelp = true
	default:
		return &usageError{}
	}
	return nil
}

func stripTrailingSlashes(s string) string {
	for len(s) > 1 && strings.HasSuffix(s, "/") {
		s = s[:len(s)-1]
	}
	return s
}

// maxPatternFile bounds what -f and --exclude-from read, so a hostile
// pattern source cannot exhaust memory before matching even starts.
const maxPatternFile = 64 << 20

func readPatternFile(name string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", fatalf("%s: %s", name, sysmsg.Text(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPatternFile+1))
	if err != nil {
		return "", fatalf("%s: %s", name, sysmsg.Text(err))
	}
	if len(data) > maxPatternFile {
		return "", fatalf("memory exhausted")
	}
	return string(data), nil
}

// parseIntArg parses a decimal count like xstrtoimax: leading blanks and a
// sign are allowed, overflow saturates.
func parseIntArg(s string) (int64, error) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-") {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, errors.New("invalid number")
	}
	for _, c := range []byte(t) {
		if c < '0' || c > '9' {
			return 0, errors.New("invalid number")
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		n = math.MaxInt64
	}
	if neg {
		n = -n
	}
	return n, nil
}

func contextArg(s string, out *int64) error {
	n, err := parseIntArg(s)
	if err != nil || n < 0 {
		return fatalf("%s: invalid context length argument", s)
	}
	*out = n
	return nil
}

// argMatch resolves an argument against valid values, accepting an
// unambiguous prefix, like gnulib's XARGMATCH.
func argMatch(value, option string, valid []string) (int, error) {
	found := -1
	for i, v := range valid {
		if v == value {
			return i, nil
		}
		if value != "" && strings.HasPrefix(v, value) {
			if found >= 0 {
				found = -2
			} else if found == -1 {
				found = i
			}
		}
	}
	if found >= 0 {
		return found, nil
	}
	var b strings.Builder
	kind := "invalid"
	if found == -2 {
		kind = "ambiguous"
	}
	fmt.Fprintf(&b, "%s argument ‘%s’ for ‘%s’\nValid arguments are:", kind, value, option)
	for _, v := range valid {
		fmt.Fprintf(&b, "\n  - ‘%s’", v)
	}
	return 0, &usageError{b.String()}
}
