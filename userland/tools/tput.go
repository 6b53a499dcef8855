package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
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
	// ttyFD is the terminal tput found (stderr, stdout, stdin, then
	// /dev/tty for init and reset), -1 for none; saved is its mode then.
	ttyFD int
	saved termios
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
	// init and reset need the terminal's modes: without a terminal on
	// stderr, stdout, stdin or /dev/tty, ncurses's tput gives up.
	if len(operands) > 0 && (operands[0] == "init" || operands[0] == "reset") {
		if code, msg := tputNeedTTY(); code != 0 {
			fmt.Fprintf(stderr, "%s: terminal attributes: %s\n\n", prog, msg)
			return code
		}
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
	s := &tputState{prog: prog, term: e, out: bufio.NewWriter(stdout), stderr: stderr, ttyFD: -1}
	for _, fd := range []int{2, 1, 0} {
		if t, err := termGetAttr(fd); err == nil {
			s.ttyFD, s.saved = fd, t
			break
		}
	}
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

// baud is the output speed of the terminal tput found, 0 without one:
// what ncurses pads delays for.
func (s *tputState) baud() int {
	if s.ttyFD < 0 {
		return 0
	}
	return int(sttyBaudValue(s.saved.Cflag & sCBAUD))
}

// clear writes the clear-screen string and, unless legacy, E3 (clear the
// scrollback), reporting false when the terminal cannot clear.
func (s *tputState) clear(legacy bool) bool {
	cl, ok := s.term.strs["clear"]
	if !ok {
		return false
	}
	affcnt := max(s.lines, 1)
	s.out.WriteString(padded(cl, s.term, s.baud(), affcnt))
	if e3, ok := s.term.strs["E3"]; ok && !legacy {
		s.out.WriteString(padded(e3, s.term, s.baud(), affcnt))
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
		s.initReset(name == "reset")
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

// tputNeedTTY is ncurses's save_tty_settings with need_tty: a terminal
// among stderr, stdout and stdin, else /dev/tty; without one it returns
// tput's exit status (4 + errno) and strerror's text.
func tputNeedTTY() (int, string) {
	for _, fd := range []int{2, 1, 0} {
		if _, err := termGetAttr(fd); err == nil {
			return 0, ""
		}
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		n, msg := linuxErrno(err)
		return 4 + n, msg
	}
	defer f.Close()
	if _, err := termGetAttr(int(f.Fd())); err != nil {
		n, msg := linuxErrno(err)
		return 4 + n, msg
	}
	return 0, ""
}

// linuxErrno gives an error's Linux errno and strerror text, for the
// exit statuses ncurses derives from them.
func linuxErrno(err error) (int, string) {
	for _, e := range []struct {
		errno syscall.Errno
		n     int
		msg   string
	}{
		{syscall.ENOENT, 2, "No such file or directory"},
		{syscall.EIO, 5, "Input/output error"},
		{syscall.ENXIO, 6, "No such device or address"},
		{syscall.EACCES, 13, "Permission denied"},
		{syscall.ENOTTY, 25, "Inappropriate ioctl for device"},
	} {
		if errors.Is(err, e.errno) {
			return e.n, e.msg
		}
	}
	return 1, "Operation not permitted"
}

// Linux termios bits tput init and reset change (asm-generic/termbits.h).
const (
	tIGNBRK, tBRKINT, tIGNPAR, tPARMRK, tINPCK, tISTRIP, tINLCR, tIGNCR, tICRNL, tIUCLC, tIXON, tIXANY, tIXOFF, tIMAXBEL = 0o1, 0o2, 0o4, 0o10, 0o20, 0o40, 0o100, 0o200, 0o400, 0o1000, 0o2000, 0o4000, 0o10000, 0o20000
	tOPOST, tOLCUC, tONLCR, tOCRNL, tONOCR, tONLRET, tOFILL, tOFDEL                                                      = 0o1, 0o2, 0o4, 0o10, 0o20, 0o40, 0o100, 0o200
	tNLDLY, tCRDLY, tTABDLY, tBSDLY, tVTDLY, tFFDLY, tTAB3                                                               = 0o400, 0o3000, 0o14000, 0o20000, 0o40000, 0o100000, 0o14000
	tCSIZE, tCSTOPB, tCREAD, tPARENB, tPARODD, tCLOCAL, tCS8                                                             = 0o60, 0o100, 0o200, 0o400, 0o1000, 0o4000, 0o60
	tISIG, tICANON, tXCASE, tECHO, tECHOE, tECHOK, tECHONL, tNOFLSH, tTOSTOP, tECHOCTL, tECHOKE                          = 0o1, 0o2, 0o4, 0o10, 0o20, 0o40, 0o100, 0o200, 0o400, 0o1000, 0o4000
)

// initReset is ncurses's tput init and reset (tput.c, reset_cmd.c):
// reset first puts the terminal's modes back to sane ones; both set the
// window size when the terminal has none, restore disabled erase,
// interrupt and kill characters, turn on CR-NL conversions and echo,
// send the init strings, and leave the terminal in the resulting mode.
// While the strings go out, output post-processing is off, as ncurses's
// send_init_strings leaves it (it masks c_oflag with TAB3|ONLCR|OCRNL|
// ONLRET, OPOST falling out).
func (s *tputState) initReset(reset bool) {
	if s.ttyFD < 0 {
		s.initStrings(reset)
		return
	}
	fd := s.ttyFD
	settings, old := s.saved, s.saved
	if reset {
		if cur, err := termGetAttr(fd); err == nil {
			settings = cur
		}
		resetTTYSettings(&settings)
		_ = termSetAttr(fd, 1, settings)
	}
	if rows, cols, err := termSize(fd); err == nil {
		switch {
		case rows == 0 && cols == 0 && s.lines > 0 && s.cols > 0:
			_ = termSetSize(fd, s.lines, s.cols)
		case rows > 0 && cols > 0:
			s.lines, s.cols = rows, cols
		}
	}
	s.setControlChars(&settings)
	s.setConversions(&settings)
	if mask := uint32(tTAB3 | tONLCR | tOCRNL | tONLRET); old.Oflag&mask != 0 {
		old.Oflag &= mask
		_ = termSetAttr(fd, 1, old)
	}
	if s.initStrings(reset) {
		s.out.Flush()
	}
	if old != settings {
		_ = termSetAttr(fd, 1, settings)
	}
}

// resetTTYSettings is reset_tty_settings: the control characters that
// are disabled get their defaults, and the modes a sane terminal has.
func resetTTYSettings(t *termios) {
	for _, c := range []struct {
		i int
		v byte
	}{{cVDISCARD, 0o17}, {cVEOF, 4}, {cVERASE, 0o177}, {cVINTR, 3}, {cVKILL, 0o25}, {cVLNEXT, 0o26},
		{cVQUIT, 0o34}, {cVREPRINT, 0o22}, {cVSTART, 0o21}, {cVSTOP, 0o23}, {cVSUSP, 0o32}, {cVWERASE, 0o27}} {
		if t.Cc[c.i] == 0 {
			t.Cc[c.i] = c.v
		}
	}
	t.Iflag &^= tIGNBRK | tPARMRK | tINPCK | tISTRIP | tINLCR | tIGNCR | tIUCLC | tIXANY | tIXOFF
	t.Iflag |= tBRKINT | tIGNPAR | tICRNL | tIXON | tIMAXBEL
	t.Oflag &^= tOLCUC | tOCRNL | tONOCR | tONLRET | tOFILL | tOFDEL | tNLDLY | tCRDLY | tTABDLY | tBSDLY | tVTDLY | tFFDLY
	t.Oflag |= tOPOST | tONLCR
	t.Cflag &^= tCSIZE | tCSTOPB | tPARENB | tPARODD | tCLOCAL
	t.Cflag |= tCS8 | tCREAD
	t.Lflag &^= tECHONL | tNOFLSH | tTOSTOP | tXCASE
	t.Lflag |= tISIG | tICANON | tECHO | tECHOE | tECHOK | tECHOCTL | tECHOKE
}

// setControlChars is set_control_chars: a disabled erase, interrupt or
// kill character gets its default (erase: the backspace key on an
// overstriking terminal whose key is one byte, else DEL).
func (s *tputState) setControlChars(t *termios) {
	if t.Cc[cVERASE] == 0 {
		t.Cc[cVERASE] = 0o177
		if kbs, ok := s.term.strs["kbs"]; ok && s.term.bools["os"] && len(kbs) == 1 {
			t.Cc[cVERASE] = kbs[0]
		}
	}
	if t.Cc[cVINTR] == 0 {
		t.Cc[cVINTR] = 3
	}
	if t.Cc[cVKILL] == 0 {
		t.Cc[cVKILL] = 0o25
	}
}

// setConversions is set_conversions: CR-NL mapping both ways and echo,
// unless the terminal's newline is a bare NL.
func (s *tputState) setConversions(t *termios) {
	t.Oflag |= tONLCR
	t.Iflag |= tICRNL
	t.Lflag |= tECHO
	if s.term.strs["nel"] == "\n" {
		t.Oflag &^= tONLCR
		t.Iflag &^= tICRNL
	}
	t.Lflag |= tECHOE | tECHOK
}

// initStrings writes what ncurses's send_init_strings sends for init
// (is1, is2, the margins, the tab stops, the init file, is3) or reset
// (rs1, rs2, rs3 where the entry has them), reporting whether it wrote
// anything.
func (s *tputState) initStrings(reset bool) bool {
	pick := func(init, rst string) (string, bool) {
		if reset {
			if v, ok := s.term.strs[rst]; ok {
				return v, true
			}
		}
		v, ok := s.term.strs[init]
		return v, ok
	}
	sent := false
	send := func(v string, ok bool) {
		if ok {
			s.out.WriteString(padded(v, s.term, s.baud(), 0))
			sent = true
		}
	}
	leftMargin := func() {
		if cr, ok := s.term.strs["cr"]; ok {
			s.out.WriteString(padded(cr, s.term, s.baud(), 0))
		} else {
			s.out.WriteByte('\r')
		}
		sent = true
	}
	send(pick("is1", "rs1"))
	send(pick("is2", "rs2"))
	str := func(name string) (string, bool) { v, ok := s.term.strs[name]; return v, ok }
	if v, ok := str("mgc"); ok {
		send(v, true)
	} else if v, ok := str("smglr"); ok {
		send(tparm(v, []any{0, s.cols - 1}), true)
	} else if l, ok := str("smglp"); ok {
		if r, ok := str("smgrp"); ok {
			send(tparm(l, []any{0}), true)
			send(tparm(r, []any{s.cols - 1}), true)
		}
	} else if l, ok := str("smgl"); ok {
		if r, ok := str("smgr"); ok {
			leftMargin()
			send(l, true)
			if cuf, ok := str("cuf"); ok {
				send(tparm(cuf, []any{s.cols - 1}), true)
			} else {
				s.out.WriteString(strings.Repeat(" ", max(s.cols-1, 0)))
				sent = sent || s.cols > 1
			}
			send(r, true)
			leftMargin()
		}
	}
	it, hasIt := s.term.nums["it"]
	hts, hasHts := str("hts")
	tbc, hasTbc := str("tbc")
	if hasIt && it != 8 && hasHts && hasTbc {
		leftMargin()
		send(tbc, true)
		if it > 1 {
			it = min(it, s.cols)
			for c := it; c < s.cols; c += it {
				fmt.Fprintf(s.out, "%*s", it, " ")
				send(hts, true)
			}
			leftMargin()
		}
	}
	if file, ok := pick("if", "rf"); ok {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			s.out.Write(b)
			sent = true
		}
	}
	send(pick("is3", "rs3"))
	return sent
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
