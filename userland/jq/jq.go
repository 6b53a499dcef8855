package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/itchyny/gojq"
	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// jq's exit statuses (main.c in jq 1.7). The negative ones are internal
// results that -e turns into 1 and 4.
const (
	jqOK         = 0
	jqOKNullKind = -1
	jqErrSystem  = 2
	jqErrCompile = 3
	jqOKNoOutput = -4
	jqErrUnknown = 5
)

const version = "jq-1.7.1"

// options is jq's parsed command line.
type options struct {
	nullInput, rawInput, slurp           bool
	rawOutput, rawOutput0, noNewline     bool
	ascii, seq, exitStatus, fromFile     bool
	unbuffered                           bool
	indent                               int // 0: compact
	tab                                  bool
	program                              string
	haveProgram                          bool
	files                                []string
	namedKeys                            []string // in first-definition order
	named                                map[string]any
	positional                           []any
	furtherStrings, furtherJSON, argDone bool
}

// exitError ends jq with a status after printing msg (if any) and, for
// usage mistakes, jq's pointer to --help.
type exitError struct {
	msg    string
	status int
	hint   bool
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitError{msg: fmt.Sprintf(format, args...), status: jqErrSystem, hint: true}
}

// isoptish is jq's test for an argument that is an option: "-x" with a
// letter or anything starting "--".
func isoptish(s string) bool {
	return len(s) >= 2 && s[0] == '-' && (s[1] == '-' || isAlpha(s[1]))
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseArgs follows jq 1.7's hand-written option loop: short options may
// be stacked ("-nr"), long options must be spelled out, and the first
// non-option argument is the program.
func parseArgs(args []string, readFile func(string) ([]byte, error)) (*options, error) {
	o := &options{indent: 2, named: map[string]any{}}
	setNamed := func(name string, v any) {
		if _, ok := o.named[name]; !ok {
			o.named[name] = v
			o.namedKeys = append(o.namedKeys, name)
		}
	}
	for i := 0; i < len(args); i++ {
		text := args[i]
		if o.argDone || !isoptish(text) {
			switch {
			case !o.haveProgram:
				o.program, o.haveProgram = text, true
			case o.furtherStrings:
				o.positional = append(o.positional, text)
			case o.furtherJSON:
				v, err := parseJSONText(text)
				if err != nil {
					return nil, usageErr("jq: invalid JSON text passed to --jsonargs")
				}
				o.positional = append(o.positional, v)
			default:
				o.files = append(o.files, text)
			}
			continue
		}
		if text == "--" {
			o.argDone = true
			continue
		}
		if text[1] == 'L' {
			// Module search paths: accepted; modules are not supported.
			if len(text) == 2 {
				if i+1 >= len(args) {
					return nil, usageErr("-L takes a parameter: (e.g. -L /search/path or -L/search/path)")
				}
				i++
			}
			continue
		}
		shortOpts := 0
		is := func(short byte, long string) bool {
			if text[1] == '-' {
				shortOpts = 0
				return text[2:] == long
			}
			if short != 0 && strings.IndexByte(text, short) >= 0 {
				shortOpts++
				return true
			}
			return false
		}
		long := text[1] == '-'
		needParams := func(n int, msg string) error {
			if i+n >= len(args) {
				return usageErr("%s", msg)
			}
			return nil
		}
		switch {
		case long && text == "--tab":
			o.tab = true
			continue
		case long && text == "--indent":
			if err := needParams(1, "jq: --indent takes one parameter"); err != nil {
				return nil, err
			}
			n := atoi(args[i+1])
			if n < -1 || n > 7 {
				return nil, usageErr("jq: --indent takes a number between -1 and 7")
			}
			o.tab = false
			o.indent = max(n, 0)
			i++
			continue
		case long && text == "--seq":
			o.seq = true
			continue
		case long && text == "--unbuffered":
			o.unbuffered = true
			continue
		case long && text == "--raw-output0":
			o.rawOutput, o.noNewline, o.rawOutput0 = true, true, true
			continue
		case long && text == "--args":
			o.furtherStrings, o.furtherJSON = true, false
			continue
		case long && text == "--jsonargs":
			o.furtherStrings, o.furtherJSON = false, true
			continue
		case long && text == "--arg":
			if err := needParams(2, "jq: --arg takes two parameters (e.g. --arg varname value)"); err != nil {
				return nil, err
			}
			setNamed(args[i+1], args[i+2])
			i += 2
			continue
		case long && text == "--argjson":
			if err := needParams(2, "jq: --argjson takes two parameters (e.g. --argjson varname text)"); err != nil {
				return nil, err
			}
			if _, ok := o.named[args[i+1]]; !ok {
				v, err := parseJSONText(args[i+2])
				if err != nil {
					return nil, usageErr("jq: invalid JSON text passed to --argjson")
				}
				setNamed(args[i+1], v)
			}
			i += 2
			continue
		case long && (text == "--slurpfile" || text == "--rawfile"):
			which := text[2:]
			if err := needParams(2, fmt.Sprintf("jq: --%s takes two parameters (e.g. --%s varname filename)", which, which)); err != nil {
				return nil, err
			}
			name, file := args[i+1], args[i+2]
			i += 2
			if _, ok := o.named[name]; ok {
				continue
			}
			data, err := readFile(file)
			if err != nil {
				return nil, &exitError{msg: fmt.Sprintf("jq: Bad JSON in --%s %s %s: Could not open %s: %s", which, name, file, file, sysmsg.Text(err)), status: jqErrSystem}
			}
			if which == "rawfile" {
				setNamed(name, string(data))
				continue
			}
			vals, err := parseJSONValues(data)
			if err != nil {
				return nil, &exitError{msg: fmt.Sprintf("jq: Bad JSON in --%s %s %s: %s", which, name, file, err), status: jqErrSystem}
			}
			setNamed(name, vals)
			continue
		}
		if is('s', "slurp") {
			o.slurp = true
			if shortOpts == 0 {
				continue
			}
		}
		if is('r', "raw-output") {
			o.rawOutput = true
			if shortOpts == 0 {
				continue
			}
		}
		if is('j', "join-output") {
			o.rawOutput, o.noNewline = true, true
			if shortOpts == 0 {
				continue
			}
		}
		if is('c', "compact-output") {
			o.indent, o.tab = 0, false
			if shortOpts == 0 {
				continue
			}
		}
		if is('C', "color-output") { // accepted; output is never coloured
			if shortOpts == 0 {
				continue
			}
		}
		if is('M', "monochrome-output") {
			if shortOpts == 0 {
				continue
			}
		}
		if is('a', "ascii-output") {
			o.ascii = true
			if shortOpts == 0 {
				continue
			}
		}
		if is('S', "sort-keys") { // objects are always printed sorted
			if shortOpts == 0 {
				continue
			}
		}
		if is('R', "raw-input") {
			o.rawInput = true
			if shortOpts == 0 {
				continue
			}
		}
		if is('n', "null-input") {
			o.nullInput = true
			if shortOpts == 0 {
				continue
			}
		}
		if is('f', "from-file") {
			o.fromFile = true
			if shortOpts == 0 {
				continue
			}
		}
		if is('e', "exit-status") {
			o.exitStatus = true
			if shortOpts == 0 {
				continue
			}
		}
		if is('h', "help") {
			return nil, errHelp
		}
		if is('V', "version") {
			return nil, errVersion
		}
		if len(text) != shortOpts+1 {
			return nil, usageErr("jq: Unknown option %s", text)
		}
	}
	return o, nil
}

var (
	errHelp    = errors.New("help")
	errVersion = errors.New("version")
	// errNULRawOutput0 is jq's own wording, capital letter included.
	errNULRawOutput0 = messageError("Cannot dump a string containing NUL with --raw-output0 option")
)

// messageError is an error whose text is a jq message printed verbatim.
type messageError string

func (e messageError) Error() string { return string(e) }

// atoi is C's atoi: leading blanks, a sign, digits; anything else ends it.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || n > 1<<20 {
			break
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// parseJSONText parses exactly one JSON value.
func parseJSONText(s string) (any, error) {
	vals, err := parseJSONValues([]byte(s))
	if err != nil {
		return nil, err
	}
	if len(vals) != 1 {
		return nil, errors.New("expected one value")
	}
	return vals[0], nil
}

// parseJSONValues parses a sequence of JSON values (for --slurpfile).
func parseJSONValues(data []byte) ([]any, error) {
	in := &inputs{
		sources:  []source{{name: "<data>", open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(string(data))), nil }}},
		maxValue: defaultMaxValue,
		warn:     func(error) {},
	}
	vals := []any{}
	for {
		v, ok := in.Next()
		if !ok {
			return vals, nil
		}
		if err, ok := v.(error); ok {
			return nil, err
		}
		vals = append(vals, v)
	}
}

// jq is one jq invocation.
type jq struct {
	o      *options
	out    *bufio.Writer
	ew     *errWriter
	stderr io.Writer
	stdin  io.Reader
	enc    encoder
	in     *inputs

	maxValue int64
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// run is jq: args[0] is the program name. It returns jq's exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runLimited(args, stdin, stdout, stderr, defaultMaxValue)
}

// runLimited is run with a custom bound on input value size, for tests.
func runLimited(args []string, stdin io.Reader, stdout, stderr io.Writer, maxValue int64) int {
	ew := &errWriter{w: stdout}
	j := &jq{out: bufio.NewWriterSize(ew, 64<<10), ew: ew, stderr: stderr, stdin: stdin, maxValue: maxValue}
	status := j.main(args[1:])
	if err := j.out.Flush(); err != nil && !errors.Is(err, syscall.EPIPE) {
		fmt.Fprintf(stderr, "jq: error: writing output failed: %s\n", sysmsg.Text(err))
		status = jqErrSystem
	} else if err != nil {
		status = jqErrSystem
	}
	return status
}

func (j *jq) errorf(format string, args ...any) {
	_ = j.out.Flush()
	fmt.Fprintf(j.stderr, format, args...)
}

func (j *jq) main(args []string) int {
	o, err := parseArgs(args, os.ReadFile)
	switch {
	case errors.Is(err, errHelp):
		j.out.WriteString(helpText)
		return 0
	case errors.Is(err, errVersion):
		j.out.WriteString(version + "\n")
		return 0
	case err != nil:
		var ee *exitError
		if errors.As(err, &ee) {
			j.errorf("%s\n", ee.msg)
			if ee.hint {
				j.errorf("Use jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://jqlang.github.io/jq\n")
			}
			return ee.status
		}
		j.errorf("jq: error: %s\n", err)
		return jqErrSystem
	}
	j.o = o
	j.enc = encoder{indent: o.indent, tab: o.tab, ascii: o.ascii}

	program := "."
	if o.haveProgram {
		program = o.program
	}
	if o.fromFile {
		data, err := os.ReadFile(program)
		if err != nil {
			j.errorf("jq: Could not open %s: %s\n", program, sysmsg.Text(err))
			return jqErrSystem
		}
		program = skipShebang(string(data))
	}

	code, status := j.compile(program)
	if code == nil {
		return status
	}

	j.in = &inputs{raw: o.rawInput, maxValue: j.maxValue, warn: func(err error) { j.errorf("jq: error: %s\n", err) }}
	files := o.files
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, f := range files {
		if f == "-" {
			stdin := j.stdin
			j.in.sources = append(j.in.sources, source{name: "<stdin>", open: func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }})
			continue
		}
		name := f
		j.in.sources = append(j.in.sources, source{name: name, open: func() (io.ReadCloser, error) { return os.Open(name) }})
	}
	defer j.in.Close()

	ret := jqOKNoOutput
	lastResult := -1 // -1 no result, 0 false or null, 1 other
	values := j.variableValues()
	switch {
	case o.nullInput:
		ret, _ = j.process(code, nil, values)
	case o.slurp:
		v, err := j.in.slurp()
		if err != nil {
			j.errorf("jq: parse error: %s\n", err)
			ret = jqErrUnknown
			break
		}
		ret, _ = j.process(code, v, values)
		if ret <= 0 && ret != jqOKNoOutput {
			lastResult = boolInt(ret != jqOKNullKind)
		}
	default:
		for {
			v, ok := j.in.Next()
			if !ok {
				break
			}
			if err, isErr := v.(error); isErr {
				j.errorf("jq: parse error: %s\n", err)
				ret = jqErrUnknown
				break
			}
			var halted bool
			ret, halted = j.process(code, v, values)
			if ret <= 0 && ret != jqOKNoOutput {
				lastResult = boolInt(ret != jqOKNullKind)
			}
			if halted || j.ew.err != nil {
				break
			}
		}
	}
	if j.in.failed {
		ret = jqErrSystem
	}
	if j.ew.err != nil {
		return jqErrSystem
	}
	if o.exitStatus {
		if ret != jqOKNoOutput {
			return abs(ret)
		}
		switch lastResult {
		case -1:
			return abs(jqOKNoOutput)
		case 0:
			return abs(jqOKNullKind)
		}
		return jqOK
	}
	return max(ret, 0)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// skipShebang drops a leading "#!" line from a -f program, as jq does.
func skipShebang(p string) string {
	if !strings.HasPrefix(p, "#!") {
		return p
	}
	if i := strings.IndexByte(p, '\n'); i >= 0 {
		return p[i+1:]
	}
	return ""
}

// compile parses and compiles the program; on failure it reports the
// error as jq does and returns exit status 3.
func (j *jq) compile(program string) (*gojq.Code, int) {
	query, err := gojq.Parse(program)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			line, text := lineOf(program, pe.Offset)
			j.errorf("jq: error: syntax error, %s at <top-level>, line %d:\n%s\njq: 1 compile error\n", err, line, text)
		} else {
			j.errorf("jq: error: %s\njq: 1 compile error\n", err)
		}
		return nil, jqErrCompile
	}
	names := make([]string, 0, len(j.o.namedKeys)+1)
	for _, k := range j.o.namedKeys {
		names = append(names, "$"+k)
	}
	names = append(names, "$ARGS")
	code, err := gojq.Compile(query,
		gojq.WithVariables(names),
		gojq.WithEnvironLoader(os.Environ),
		gojq.WithInputIter(inputIter{j}),
		gojq.WithFunction("input_filename", 0, 0, func(any, []any) any {
			if j.in == nil || j.in.name == "" {
				return nil
			}
			return j.in.name
		}),
		gojq.WithFunction("input_line_number", 0, 0, func(any, []any) any {
			if j.in == nil {
				return 0
			}
			return j.in.line
		}),
		gojq.WithFunction("debug", 0, 0, func(v any, _ []any) any {
			w := bufio.NewWriter(j.stderr)
			e := encoder{ascii: j.o.ascii}
			w.WriteString(`["DEBUG:",`)
			e.encode(w, v)
			w.WriteString("]\n")
			_ = j.out.Flush()
			_ = w.Flush()
			return v
		}),
		gojq.WithFunction("stderr", 0, 0, func(v any, _ []any) any {
			_ = j.out.Flush()
			j.writeMessage(v, false)
			return v
		}),
	)
	if err != nil {
		j.errorf("jq: error: %s\njq: 1 compile error\n", err)
		return nil, jqErrCompile
	}
	return code, 0
}

// lineOf returns the 1-based line number of offset in s and that line.
func lineOf(s string, offset int) (int, string) {
	offset = min(max(offset, 0), len(s))
	line := 1 + strings.Count(s[:offset], "\n")
	start := strings.LastIndexByte(s[:offset], '\n') + 1
	end := strings.IndexByte(s[offset:], '\n')
	if end < 0 {
		return line, s[start:]
	}
	return line, s[start : offset+end]
}

// inputIter is the program's view of the inputs (input, inputs).
type inputIter struct{ j *jq }

func (it inputIter) Next() (any, bool) {
	if it.j.in == nil {
		return nil, false
	}
	return it.j.in.Next()
}

// variableValues lists the values of the named arguments and $ARGS, in the
// order compile declared them.
func (j *jq) variableValues() []any {
	named := make(map[string]any, len(j.o.named))
	values := make([]any, 0, len(j.o.namedKeys)+1)
	for _, k := range j.o.namedKeys {
		named[k] = j.o.named[k]
		values = append(values, j.o.named[k])
	}
	positional := j.o.positional
	if positional == nil {
		positional = []any{}
	}
	return append(values, map[string]any{"positional": positional, "named": named})
}

// process runs the program on one input and prints its results, like
// jq's process(): the status is that of the last result, 5 after an
// uncaught error, or the halt status.
func (j *jq) process(code *gojq.Code, v any, values []any) (ret int, halted bool) {
	ret = jqOKNoOutput
	iter := code.RunWithContext(context.Background(), v, values...)
	for {
		r, ok := iter.Next()
		if !ok {
			return ret, false
		}
		if err, ok := r.(error); ok {
			var he *gojq.HaltError
			if errors.As(err, &he) {
				return j.halt(he), true
			}
			j.reportError(err)
			return jqErrUnknown, false
		}
		if s, ok := r.(string); ok && j.o.rawOutput {
			switch {
			case j.o.ascii:
				j.out.Write(appendString(nil, s, true))
			case j.o.rawOutput0 && strings.IndexByte(s, 0) >= 0:
				j.reportError(errNULRawOutput0)
				return jqErrUnknown, false
			default:
				j.out.WriteString(s)
			}
			ret = jqOK
		} else {
			ret = jqOK
			if r == nil || r == false {
				ret = jqOKNullKind
			}
			if j.o.seq {
				j.out.WriteByte(0x1e)
			}
			j.enc.encode(j.out, r)
		}
		if !j.o.noNewline {
			j.out.WriteByte('\n')
		}
		if j.o.rawOutput0 {
			j.out.WriteByte(0)
		}
		if j.o.unbuffered {
			_ = j.out.Flush()
		}
		if j.ew.err != nil {
			return jqErrSystem, true
		}
	}
}

// halt handles halt and halt_error: print the message (a string as is,
// anything else as compact JSON and a newline) and take the exit status.
func (j *jq) halt(he *gojq.HaltError) int {
	_ = j.out.Flush()
	if v := he.Value(); v != nil {
		j.writeMessage(v, true)
	}
	return he.ExitCode()
}

// writeMessage writes v to stderr: strings raw, other values as compact
// JSON, followed by a newline if newline is set and v is not a string.
func (j *jq) writeMessage(v any, newline bool) {
	w := bufio.NewWriter(j.stderr)
	if s, ok := v.(string); ok {
		w.WriteString(s)
	} else {
		(&encoder{}).encode(w, v)
		if newline {
			w.WriteByte('\n')
		}
	}
	_ = w.Flush()
}

// reportError prints an uncaught error as "jq: error (at FILE:LINE): MSG".
func (j *jq) reportError(err error) {
	loc := j.in.location()
	var msg string
	var ve gojq.ValueError
	if errors.As(err, &ve) {
		if s, ok := ve.Value().(string); ok {
			msg = s
		} else {
			var b strings.Builder
			w := bufio.NewWriter(&b)
			(&encoder{}).encode(w, ve.Value())
			w.Flush()
			j.errorf("jq: error (at %s) (not a string): %s\n", loc, b.String())
			return
		}
	} else {
		msg = err.Error()
	}
	j.errorf("jq: error (at %s): %s\n", loc, msg)
}
