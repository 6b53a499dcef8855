package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
)

// tput and clear follow ncurses 6.4's programs (progs/tput.c, clear.c):
// the same option handling, exit statuses (0 ok, 1 a false boolean or an
// absent string, 2 usage, 3 unknown terminal, 4 unknown capability, 4+n
// for n failed -S lines) and messages, with several capabilities on one
// command line each taking as many parameters as its string uses.

const tputUsage = `Usage: %s [options] [command]

Options:
  -S <<       read commands from standard input
  -T TERM     use this instead of $TERM
  -V          print curses-version
  -x          do not try to clear scrollback

Commands:
  clear       clear the screen
  init        initialize the terminal
  reset       reinitialize the terminal
  capname     unlike clear/init/reset, print value for capability "capname"
`

const clearUsage = `Usage: %s [options]

Options:
  -T TERM     use this instead of $TERM
  -V          print curses-version
  -x          do not try to clear scrollback
`

// The exit statuses of ncurses's programs.
const (
	errUsage    = 2
	errTermType = 3
	errCapName  = 4
)

// tputState is one run's terminal and output.
type tputState struct {
	prog   string
	term   *termEntry
	out    *bufio.Writer
	stderr io.Writer
	// lines and cols are the screen size as setupterm works it out.
	lines, cols int
}

func runClear(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	prog := path.Base(args[0])
	opts, operands, err := getopt(args[1:], "T:Vx", nil)
	if err != nil || len(operands) > 0 {
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", args[0], err)
		}
		fmt.Fprintf(stderr, clearUsage, prog)
		return 1
	}
	termName, haveTerm := os.LookupEnv("TERM")
	useEnv, legacy := true, false
	for _, o := range opts {
		switch o.name {
		case "T":
			termName, haveTerm, useEnv = o.arg, true, false
		case "V":
			fmt.Fprintln(stdout, ncursesVersion)
			return 0
		case "x":
			legacy = true
		}
	}
	// clear calls setupterm without an error pointer: ncurses prints its
	// own message and exits 1.
	if !haveTerm {
		fmt.Fprintln(stderr, "TERM environment variable not set.")
		return 1
	}
	e, err := loadTerm(termName)
	if err != nil {
		fmt.Fprintf(stderr, "'%s': unknown terminal type.\n", termName)
		return 1
	}
	s := newTputState(prog, e, useEnv, stdout, stderr)
	defer s.out.Flush()
	if !s.clear(legacy) {
		return 1
	}
	return 0
}

// ncursesVersion is what -V prints: the version of the ncurses whose
// behaviour this tput reproduces.
const ncursesVersion = "ncurses 6.4.20221231"

func runTput(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	prog := path.Base(args[0])
	opts, operands, err := getopt(args[1:], "ST:Vx", nil)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", args[0], err)
		fmt.Fprintf(stderr, tputUsage, prog)
		return errUsage
	}
	termName, useEnv, legacy, script := os.Getenv("TERM"), true, false, false
	for _, o := range opts {
		switch o.name {
		case "S":
			script = true
		case "T":
			termName, useEnv = o.arg, false
		case "V":
			fmt.Fprintln(stdout, ncursesVersion)
			return 0
		case "x":
			legacy = true
		}
	}
	if termName == "" {
		fmt.Fprintf(stderr, "%s: No value for $TERM and no -T specified\n", prog)
		return errUsage
	}
	e, err := loadTerm(termName)
	if err != nil {
		fmt.Fprintf(stderr, "%s: unknown terminal \"%s\"\n", prog, termName)
		return errTermType
	}
	s := newTputState(prog, e, useEnv, stdout, stderr)
	defer s.out.Flush()
	if !script {
		if len(operands) == 0 {
			fmt.Fprintf(stderr, tputUsage, prog)
			return errUsage
		}
		for len(operands) > 0 {
			code, used := s.cmd(operands, legacy)
			if code != 0 {
				return code
			}
			operands = operands[min(used, len(operands)):]
		}
		return 0
	}
	// -S: each line is a command line of its own; a failing capability
	// counts towards the status (4 + failures) and the rest still runs,
	// except an unknown capability, which ends tput at once.
	result := 0
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 8192), 1<<20)
	for sc.Scan() {
		words := strings.Fields(sc.Text())
		for len(words) > 0 {
			code, used := s.cmd(words, legacy)
			if code == errCapName && used < 0 {
				return code
			}
			if code != 0 {
				if result == 0 {
					result = 4
				}
				result++
			}
			words = words[min(max(used, 1), len(words)):]
		}
	}
	return result
}

func newTputState(prog string, e *termEntry, useEnv bool, stdout, stderr io.Writer) *tputState {
	s := &tputState{prog: prog, term: e, out: bufio.NewWriter(stdout), stderr: stderr}
	s.lines, s.cols = screenSize(e, useEnv)
	return s
}

// screenSize is ncurses's _nc_get_screensize: the entry's lines and cols,
// replaced by the terminal's window size when one of stderr, stdout and
// stdin is a terminal, then (unless -T was given) by $LINES and $COLUMNS,
// falling back to 24x80.
func screenSize(e *termEntry, useEnv bool) (lines, cols int) {
	lines, cols = numOr(e, "lines"), numOr(e, "cols")
	for _, fd := range []int{2, 1, 0} {
		if rows, c, err := termSize(fd); err == nil {
			lines, cols = rows, c
			break
		}
	}
	if useEnv {
		if v := envNum("LINES"); v > 0 {
			lines = v
		}
		if v := envNum("COLUMNS"); v > 0 {
			cols = v
		}
	}
	if lines <= 0 {
		lines = numOr(e, "lines")
	}
	if cols <= 0 {
		cols = numOr(e, "cols")
	}
	if lines <= 0 {
		lines = 24
	}
	if cols <= 0 {
		cols = 80
	}
	return lines, cols
}

func numOr(e *termEntry, name string) int {
	if v, ok := e.nums[name]; ok {
		return v
	}
	return -1
}

// envNum is ncurses's _nc_getenv_num: a whole decimal number, else -1.
func envNum(name string) int {
	v, err := strconv.Atoi(os.Getenv(name))
	if err != nil || v < 0 {
		return -1
	}
	return v
}

// clear writes the clear-screen string and, unless legacy, E3 (clear the
// scrollback), reporting false when the terminal cannot clear.
func (s *tputState) clear(legacy bool) bool {
	cl, ok := s.term.strs["clear"]
	if !ok {
		return false
	}
	s.out.WriteString(stripPadding(cl))
	if e3, ok := s.term.strs["E3"]; ok && !legacy {
		s.out.WriteString(stripPadding(e3))
	}
	return true
}

// cmd runs the capability args[0] with its parameters and returns the
// exit status and how many words it used; used is -1 when the capability
// is unknown (which ends tput, as ncurses's quit() does).
func (s *tputState) cmd(args []string, legacy bool) (code, used int) {
	name := args[0]
	switch name {
	case "longname":
		s.out.WriteString(s.term.longname())
		return 0, 1
	case "clear":
		if !s.clear(legacy) {
			return errUsage, 1
		}
		return 0, 1
	case "init", "reset":
		// The init and reset strings need the terminal's modes too;
		// what tput prints for them is the entry's init strings.
		for _, c := range []string{"is1", "is2", "is3"} {
			if name == "reset" {
				if r, ok := s.term.strs["r"+c[2:]]; ok {
					s.out.WriteString(stripPadding(r))
					continue
				}
			}
			if v, ok := s.term.strs[c]; ok {
				s.out.WriteString(stripPadding(v))
			}
		}
		return 0, 1
	}
	if v, ok := s.term.bools[name]; ok || stdBools[name] {
		if v {
			return 0, 1
		}
		return 1, 1
	}
	if _, ok := s.term.nums[name]; ok || stdNums[name] {
		v := numOr(s.term, name)
		switch name {
		case "lines":
			v = s.lines
		case "cols":
			v = s.cols
		}
		fmt.Fprintf(s.out, "%d\n", v)
		return 0, 1
	}
	str, ok := s.term.strs[name]
	if !ok && !stdStrs[name] {
		// stdout is flushed at exit, after this message, as C's stdio
		// does with a buffered stdout and an unbuffered stderr.
		fmt.Fprintf(s.stderr, "%s: unknown terminfo capability '%s'\n", s.prog, name)
		return errCapName, -1
	}
	if !ok {
		return 1, 1
	}
	used = 1
	if len(args) > 1 {
		parsed, popped, isStr := analyzeParams(str)
		params := make([]any, 9)
		for k := 1; k <= 9; k++ {
			if k >= len(args) {
				params[k-1] = 0
				continue
			}
			if isStr[k-1] {
				params[k-1] = args[k]
			} else {
				params[k-1] = strtol(args[k])
			}
		}
		str = tparm(str, params)
		used += max(parsed, popped)
	}
	s.out.WriteString(stripPadding(str))
	return 0, used
}

// strtol is C's strtol(s, &end, 0) where a number with anything after it
// counts as 0, as tput reads its numeric parameters.
func strtol(s string) int {
	v, err := strconv.ParseInt(strings.TrimLeft(s, " \t\n\v\f\r"), 0, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			if strings.HasPrefix(strings.TrimSpace(s), "-") {
				return int(int32(-1 << 31))
			}
			return int(^uint32(0) >> 1)
		}
		return 0
	}
	return int(v)
}

// analyzeParams is ncurses's _nc_tparm_analyze: how many parameters a
// capability's string pops implicitly, termcap style (at most 2), the
// highest %pN it names, and which parameters it uses as strings (%s or
// %l right after their %pN).
func analyzeParams(s string) (parsed, popped int, isStr [9]bool) {
	lastpop, number, level, popcount := -1, 0, -1, 0
	bump := func() {
		if level < 0 && number < 2 {
			number++
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		i = skipFormat(s, i+1)
		if i >= len(s) {
			break
		}
		switch s[i] {
		case 'd', 'o', 'x', 'X', 'c':
			if lastpop <= 0 {
				bump()
			}
			level--
			lastpop = -1
		case 'l', 's':
			if lastpop > 0 {
				level--
				isStr[lastpop-1] = true
			}
			bump()
		case 'p':
			i++
			if i < len(s) {
				if d := int(s[i]) - '0'; d >= 0 && d <= 9 {
					level++
					lastpop = d
					popcount = max(popcount, d)
				}
			}
		case 'P':
			i++
		case 'g':
			level++
			i++
		case '\'':
			level++
			i += 2
			lastpop = -1
		case '{':
			level++
			i++
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			i--
		case '+', '-', '*', '/', 'm', 'A', 'O', '&', '|', '^', '=', '<', '>':
			bump()
			level--
			lastpop = -1
		case '!', '~':
			bump()
			lastpop = -1
		}
	}
	return number, popcount, isStr
}

// skipFormat skips a printf-style format's flags, width and precision
// after a '%' (ncurses's parse_format) and returns the index of the code.
func skipFormat(s string, i int) int {
	allowMinus := false
	for i < len(s) {
		switch c := s[i]; {
		case strings.IndexByte("cdoxXs", c) >= 0:
			return i
		case c == '.' || c == '#' || c == ' ' || isDigit(c):
			i++
		case c == ':':
			allowMinus = true
			i++
		case c == '-' && allowMinus:
			i++
		default:
			return i
		}
	}
	return i
}
