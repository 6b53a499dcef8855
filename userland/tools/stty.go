package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// stty follows GNU coreutils 9.1's stty (src/stty.c) on Linux: the same
// settings table, output (-a, -g, the changed settings, size, speed),
// line wrapping and messages. It works on standard input, through
// secexec's host_tty get_attr/set_attr/get_size/set_size calls.

// Linux's termios bits (asm-generic/termbits.h), which the kernel's line
// discipline and glibc use.
const (
	// c_iflag
	sIGNBRK  = 0o1
	sBRKINT  = 0o2
	sIGNPAR  = 0o4
	sPARMRK  = 0o10
	sINPCK   = 0o20
	sISTRIP  = 0o40
	sINLCR   = 0o100
	sIGNCR   = 0o200
	sICRNL   = 0o400
	sIUCLC   = 0o1000
	sIXON    = 0o2000
	sIXANY   = 0o4000
	sIXOFF   = 0o10000
	sIMAXBEL = 0o20000
	sIUTF8   = 0o40000
	// c_oflag
	sOPOST  = 0o1
	sOLCUC  = 0o2
	sONLCR  = 0o4
	sOCRNL  = 0o10
	sONOCR  = 0o20
	sONLRET = 0o40
	sOFILL  = 0o100
	sOFDEL  = 0o200
	sNLDLY  = 0o400
	sCRDLY  = 0o3000
	sTABDLY = 0o14000
	sBSDLY  = 0o20000
	sVTDLY  = 0o40000
	sFFDLY  = 0o100000
	// c_cflag
	sCBAUD   = 0o10017
	sCSIZE   = 0o60
	sCS5     = 0o0
	sCS6     = 0o20
	sCS7     = 0o40
	sCS8     = 0o60
	sCSTOPB  = 0o100
	sCREAD   = 0o200
	sPARENB  = 0o400
	sPARODD  = 0o1000
	sHUPCL   = 0o2000
	sCLOCAL  = 0o4000
	sCMSPAR  = 0o10000000000
	sCRTSCTS = 0o20000000000
	// c_lflag
	sISIG    = 0o1
	sICANON  = 0o2
	sXCASE   = 0o4
	sECHO    = 0o10
	sECHOE   = 0o20
	sECHOK   = 0o40
	sECHONL  = 0o100
	sNOFLSH  = 0o200
	sTOSTOP  = 0o400
	sECHOCTL = 0o1000
	sECHOPRT = 0o2000
	sECHOKE  = 0o4000
	sFLUSHO  = 0o10000
	sIEXTEN  = 0o100000
	sEXTPROC = 0o200000
)

// Control character indexes (Linux's).
const (
	cVINTR, cVQUIT, cVERASE, cVKILL, cVEOF, cVTIME, cVMIN, cVSWTC, cVSTART, cVSTOP, cVSUSP, cVEOL, cVREPRINT, cVDISCARD, cVWERASE, cVLNEXT, cVEOL2 = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
)

// glibcNCCS is the c_cc size of glibc's struct termios, which -g prints
// and reads; the kernel keeps the first 19.
const glibcNCCS = 32

type sttyModeType int

const (
	mControl sttyModeType = iota
	mInput
	mOutput
	mLocal
	mCombination
)

// Flags of a mode, as stty.c's.
const (
	saneSet   = 1
	saneUnset = 2
	rev       = 4
	omit      = 8
)

type sttyMode struct {
	name  string
	typ   sttyModeType
	flags int
	bits  uint32
	mask  uint32
}

// sttyModes is stty.c's mode_info as compiled for Linux.
var sttyModes = []sttyMode{
	{"parenb", mControl, rev, sPARENB, 0},
	{"parodd", mControl, rev, sPARODD, 0},
	{"cmspar", mControl, rev, sCMSPAR, 0},
	{"cs5", mControl, 0, sCS5, sCSIZE},
	{"cs6", mControl, 0, sCS6, sCSIZE},
	{"cs7", mControl, 0, sCS7, sCSIZE},
	{"cs8", mControl, 0, sCS8, sCSIZE},
	{"hupcl", mControl, rev, sHUPCL, 0},
	{"hup", mControl, rev | omit, sHUPCL, 0},
	{"cstopb", mControl, rev, sCSTOPB, 0},
	{"cread", mControl, saneSet | rev, sCREAD, 0},
	{"clocal", mControl, rev, sCLOCAL, 0},
	{"crtscts", mControl, rev, sCRTSCTS, 0},

	{"ignbrk", mInput, saneUnset | rev, sIGNBRK, 0},
	{"brkint", mInput, saneSet | rev, sBRKINT, 0},
	{"ignpar", mInput, rev, sIGNPAR, 0},
	{"parmrk", mInput, rev, sPARMRK, 0},
	{"inpck", mInput, rev, sINPCK, 0},
	{"istrip", mInput, rev, sISTRIP, 0},
	{"inlcr", mInput, saneUnset | rev, sINLCR, 0},
	{"igncr", mInput, saneUnset | rev, sIGNCR, 0},
	{"icrnl", mInput, saneSet | rev, sICRNL, 0},
	{"ixon", mInput, rev, sIXON, 0},
	{"ixoff", mInput, saneUnset | rev, sIXOFF, 0},
	{"tandem", mInput, rev | omit, sIXOFF, 0},
	{"iuclc", mInput, saneUnset | rev, sIUCLC, 0},
	{"ixany", mInput, saneUnset | rev, sIXANY, 0},
	{"imaxbel", mInput, saneSet | rev, sIMAXBEL, 0},
	{"iutf8", mInput, saneUnset | rev, sIUTF8, 0},

	{"opost", mOutput, saneSet | rev, sOPOST, 0},
	{"olcuc", mOutput, saneUnset | rev, sOLCUC, 0},
	{"ocrnl", mOutput, saneUnset | rev, sOCRNL, 0},
	{"onlcr", mOutput, saneSet | rev, sONLCR, 0},
	{"onocr", mOutput, saneUnset | rev, sONOCR, 0},
	{"onlret", mOutput, saneUnset | rev, sONLRET, 0},
	{"ofill", mOutput, saneUnset | rev, sOFILL, 0},
	{"ofdel", mOutput, saneUnset | rev, sOFDEL, 0},
	{"nl1", mOutput, saneUnset, sNLDLY, sNLDLY},
	{"nl0", mOutput, saneSet, 0, sNLDLY},
	{"cr3", mOutput, saneUnset, 0o3000, sCRDLY},
	{"cr2", mOutput, saneUnset, 0o2000, sCRDLY},
	{"cr1", mOutput, saneUnset, 0o1000, sCRDLY},
	{"cr0", mOutput, saneSet, 0, sCRDLY},
	{"tab3", mOutput, saneUnset, 0o14000, sTABDLY},
	{"tab2", mOutput, saneUnset, 0o10000, sTABDLY},
	{"tab1", mOutput, saneUnset, 0o4000, sTABDLY},
	{"tab0", mOutput, saneSet, 0, sTABDLY},
	{"bs1", mOutput, saneUnset, sBSDLY, sBSDLY},
	{"bs0", mOutput, saneSet, 0, sBSDLY},
	{"vt1", mOutput, saneUnset, sVTDLY, sVTDLY},
	{"vt0", mOutput, saneSet, 0, sVTDLY},
	{"ff1", mOutput, saneUnset, sFFDLY, sFFDLY},
	{"ff0", mOutput, saneSet, 0, sFFDLY},

	{"isig", mLocal, saneSet | rev, sISIG, 0},
	{"icanon", mLocal, saneSet | rev, sICANON, 0},
	{"iexten", mLocal, saneSet | rev, sIEXTEN, 0},
	{"echo", mLocal, saneSet | rev, sECHO, 0},
	{"echoe", mLocal, saneSet | rev, sECHOE, 0},
	{"crterase", mLocal, rev | omit, sECHOE, 0},
	{"echok", mLocal, saneSet | rev, sECHOK, 0},
	{"echonl", mLocal, saneUnset | rev, sECHONL, 0},
	{"noflsh", mLocal, saneUnset | rev, sNOFLSH, 0},
	{"xcase", mLocal, saneUnset | rev, sXCASE, 0},
	{"tostop", mLocal, saneUnset | rev, sTOSTOP, 0},
	{"echoprt", mLocal, saneUnset | rev, sECHOPRT, 0},
	{"prterase", mLocal, rev | omit, sECHOPRT, 0},
	{"echoctl", mLocal, saneSet | rev, sECHOCTL, 0},
	{"ctlecho", mLocal, rev | omit, sECHOCTL, 0},
	{"echoke", mLocal, saneSet | rev, sECHOKE, 0},
	{"crtkill", mLocal, rev | omit, sECHOKE, 0},
	{"flusho", mLocal, saneUnset | rev, sFLUSHO, 0},
	{"extproc", mLocal, saneUnset | rev, sEXTPROC, 0},

	{"evenp", mCombination, rev | omit, 0, 0},
	{"parity", mCombination, rev | omit, 0, 0},
	{"oddp", mCombination, rev | omit, 0, 0},
	{"nl", mCombination, rev | omit, 0, 0},
	{"ek", mCombination, omit, 0, 0},
	{"sane", mCombination, omit, 0, 0},
	{"cooked", mCombination, rev | omit, 0, 0},
	{"raw", mCombination, rev | omit, 0, 0},
	{"pass8", mCombination, rev | omit, 0, 0},
	{"litout", mCombination, rev | omit, 0, 0},
	{"cbreak", mCombination, rev | omit, 0, 0},
	{"decctlq", mCombination, rev | omit, 0, 0},
	{"tabs", mCombination, rev | omit, 0, 0},
	{"lcase", mCombination, rev | omit, 0, 0},
	{"LCASE", mCombination, rev | omit, 0, 0},
	{"crt", mCombination, omit, 0, 0},
	{"dec", mCombination, omit, 0, 0},
}

type sttyControl struct {
	name    string
	saneval byte
	offset  int
}

// sttyControls is stty.c's control_info on Linux; min and time last.
var sttyControls = []sttyControl{
	{"intr", 3, cVINTR}, {"quit", 28, cVQUIT}, {"erase", 127, cVERASE}, {"kill", 21, cVKILL},
	{"eof", 4, cVEOF}, {"eol", 0, cVEOL}, {"eol2", 0, cVEOL2}, {"swtch", 0, cVSWTC},
	{"start", 17, cVSTART}, {"stop", 19, cVSTOP}, {"susp", 26, cVSUSP}, {"rprnt", 18, cVREPRINT},
	{"werase", 23, cVWERASE}, {"lnext", 22, cVLNEXT}, {"flush", 15, cVDISCARD}, {"discard", 15, cVDISCARD},
	{"min", 1, cVMIN}, {"time", 0, cVTIME},
}

// sttySpeeds maps the speed names to Linux's CBAUD codes.
var sttySpeeds = []struct {
	name  string
	code  uint32
	value uint64
}{
	{"0", 0, 0}, {"50", 1, 50}, {"75", 2, 75}, {"110", 3, 110}, {"134", 4, 134}, {"134.5", 4, 134},
	{"150", 5, 150}, {"200", 6, 200}, {"300", 7, 300}, {"600", 8, 600}, {"1200", 9, 1200},
	{"1800", 10, 1800}, {"2400", 11, 2400}, {"4800", 12, 4800}, {"9600", 13, 9600}, {"19200", 14, 19200},
	{"38400", 15, 38400}, {"exta", 14, 19200}, {"extb", 15, 38400}, {"57600", 0o10001, 57600},
	{"115200", 0o10002, 115200}, {"230400", 0o10003, 230400}, {"460800", 0o10004, 460800},
	{"500000", 0o10005, 500000}, {"576000", 0o10006, 576000}, {"921600", 0o10007, 921600},
	{"1000000", 0o10010, 1000000}, {"1152000", 0o10011, 1152000}, {"1500000", 0o10012, 1500000},
	{"2000000", 0o10013, 2000000}, {"2500000", 0o10014, 2500000}, {"3000000", 0o10015, 3000000},
	{"3500000", 0o10016, 3500000}, {"4000000", 0o10017, 4000000},
}

// sttyExit is a fatal error: its message is printed and stty exits 1.
type sttyExit struct {
	msg   string
	usage bool // add "Try 'stty --help'..."
}

func (e *sttyExit) Error() string { return e.msg }

// sttyState is one run: the output, its wrapping column and position.
type sttyState struct {
	out    *bytes.Buffer
	maxCol int
	col    int
	tcsa   int // tcsetattr's action: TCSADRAIN unless -drain
	// needSet records a setting that changes the mode (not rows, cols,
	// size or speed display): the mode is then written back.
	needSet bool
	// fd is the terminal: standard input, or the -F device opened.
	fd int
	// device is its name for messages, quoted as quotef does.
	device string
}

// quote is gnulib's quote() in the locale: curly quotes in UTF-8.
func sttyQuote(s string) string {
	if sttyUTF8() {
		return "\u2018" + s + "\u2019"
	}
	return "'" + s + "'"
}

func sttyUTF8() bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := os.Getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

// sttyQuotef is gnulib's quotef: the name as a shell would need it,
// single-quoted when it holds anything but the characters a shell word
// may hold bare ("'standard input'", "/dev/pts/0").
func sttyQuotef(name string) string {
	if name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/.+-:,%@=^") == "" {
		return name
	}
	return "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
}

func runStty(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	st := &sttyState{out: &bytes.Buffer{}, tcsa: 1, device: sttyQuotef("standard input")}
	code := st.run(args[1:])
	stdout.Write(st.out.Bytes())
	return code.report(stderr)
}

// sttyResult is an exit status with its message, if any.
type sttyResult struct {
	err error
}

func (r sttyResult) report(stderr io.Writer) int {
	if r.err == nil {
		return 0
	}
	var e *sttyExit
	if errors.As(r.err, &e) {
		fmt.Fprintf(stderr, "stty: %s\n", e.msg)
		if e.usage {
			fmt.Fprintf(stderr, "Try 'stty --help' for more information.\n")
		}
	} else {
		fmt.Fprintf(stderr, "stty: %v\n", r.err)
	}
	return 1
}

// errnoText is strerror's wording for the errors a terminal call gives.
func errnoText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		switch en {
		case syscall.ENOTTY:
			return "Inappropriate ioctl for device"
		case syscall.EBADF:
			return "Bad file descriptor"
		case syscall.EINVAL:
			return "Invalid argument"
		case syscall.EINTR:
			return "Interrupted system call"
		case syscall.EIO:
			return "Input/output error"
		case syscall.ENOENT:
			return "No such file or directory"
		case syscall.EACCES:
			return "Permission denied"
		case syscall.ENXIO:
			return "No such device or address"
		case syscall.EISDIR:
			return "Is a directory"
		}
	}
	return err.Error()
}

func (st *sttyState) die(err error) sttyResult {
	return sttyResult{&sttyExit{msg: st.device + ": " + errnoText(err)}}
}

func (st *sttyState) run(args []string) sttyResult {
	verbose, recoverable := false, false
	var settings []string
	file, haveFile := "", false
	setFile := func(name string) error {
		if haveFile {
			return &sttyExit{msg: "only one device may be specified"}
		}
		file, haveFile = name, true
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--all":
			verbose = true
		case a == "--save":
			recoverable = true
		case strings.HasPrefix(a, "--file="):
			if err := setFile(a[len("--file="):]); err != nil {
				return sttyResult{err}
			}
		case a == "--file" || a == "-F":
			if i+1 >= len(args) {
				// getopt's complaint is silenced: the word is then
				// taken for a setting, and an invalid one.
				settings = append(settings, a)
				continue
			}
			i++
			if err := setFile(args[i]); err != nil {
				return sttyResult{err}
			}
		case strings.HasPrefix(a, "-F"):
			if err := setFile(a[2:]); err != nil {
				return sttyResult{err}
			}
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "ag") == "":
			for _, c := range a[1:] {
				if c == 'a' {
					verbose = true
				} else {
					recoverable = true
				}
			}
		default:
			settings = append(settings, a)
		}
	}
	noargs := true
	for _, s := range settings {
		if s != "drain" && s != "-drain" {
			noargs = false
		}
	}
	if verbose && recoverable {
		return sttyResult{&sttyExit{msg: "the options for verbose and stty-readable output styles are\nmutually exclusive"}}
	}
	if !noargs && (verbose || recoverable) {
		return sttyResult{&sttyExit{msg: "when specifying an output style, modes may not be set"}}
	}
	if !noargs && !verbose && !recoverable {
		var check termios
		if err := st.apply(true, settings, &check); err != nil {
			return sttyResult{err}
		}
	}
	if haveFile {
		// GNU stty reopens stdin on the device; using the descriptor
		// the open gives is the same to the terminal.
		st.device = sttyQuotef(file)
		f, err := os.Open(file)
		if err != nil {
			return st.die(err)
		}
		defer f.Close()
		st.fd = int(f.Fd())
	}
	mode, err := termGetAttr(st.fd)
	if err != nil {
		return st.die(err)
	}
	if verbose || recoverable || noargs {
		st.maxCol = sttyScreenColumns()
		st.col = 0
		switch {
		case verbose:
			if err := st.displayAll(&mode); err != nil {
				return sttyResult{err}
			}
		case recoverable:
			st.displayRecoverable(&mode)
		default:
			st.displayChanged(&mode)
		}
		return sttyResult{}
	}
	st.needSet = false
	if err := st.apply(false, settings, &mode); err != nil {
		return sttyResult{err}
	}
	if st.needSet {
		if err := termSetAttr(st.fd, st.tcsa, mode); err != nil {
			return st.die(err)
		}
		got, err := termGetAttr(st.fd)
		if err != nil {
			return st.die(err)
		}
		if got != mode {
			return sttyResult{&sttyExit{msg: st.device + ": unable to perform all requested operations"}}
		}
	}
	return sttyResult{}
}

// wrapf prints one item, on a new line when it would pass the screen's
// width, else after a space.
func (st *sttyState) wrapf(format string, args ...any) {
	buf := fmt.Sprintf(format, args...)
	if st.col > 0 {
		if st.maxCol-st.col < len(buf) {
			st.out.WriteByte('\n')
			st.col = 0
		} else {
			st.out.WriteByte(' ')
			st.col++
		}
	}
	st.out.WriteString(buf)
	st.col += len(buf)
}

// sttyScreenColumns is the width stty wraps at: stdout's window width,
// else $COLUMNS, else 80.
func sttyScreenColumns() int {
	if _, cols, err := termSize(1); err == nil && cols > 0 {
		return cols
	}
	if v := os.Getenv("COLUMNS"); v != "" {
		if n, err := strconv.ParseInt(v, 0, 64); err == nil && n > 0 && n <= 1<<31-1 {
			return int(n)
		}
	}
	return 80
}

func modeFlag(t sttyModeType, m *termios) *uint32 {
	switch t {
	case mControl:
		return &m.Cflag
	case mInput:
		return &m.Iflag
	case mOutput:
		return &m.Oflag
	case mLocal:
		return &m.Lflag
	}
	return nil
}

// cc reads control character i, as glibc's 32-entry c_cc holds it.
func (t *termios) cc(i int) byte {
	if i < nccs {
		return t.Cc[i]
	}
	return 0
}

func (st *sttyState) displaySpeed(m *termios, fancy bool) {
	v := sttyBaudValue(m.Cflag & sCBAUD)
	if fancy {
		st.wrapf("speed %d baud;", v)
	} else {
		st.wrapf("%d\n", v)
		st.col = 0
	}
}

func sttyBaudValue(code uint32) uint64 {
	for _, s := range sttySpeeds {
		if s.code == code {
			return s.value
		}
	}
	return 0
}

func (st *sttyState) displayWindowSize(fancy bool) error {
	rows, cols, err := termSize(st.fd)
	if err != nil {
		if !errors.Is(err, syscall.EINVAL) {
			return &sttyExit{msg: st.device + ": " + errnoText(err)}
		}
		if !fancy {
			return &sttyExit{msg: st.device + ": no size information for this device"}
		}
		return nil
	}
	if fancy {
		st.wrapf("rows %d; columns %d;", rows, cols)
	} else {
		st.wrapf("%d %d\n", rows, cols)
		st.col = 0
	}
	return nil
}

// sttyVisible is how stty shows a control character.
func sttyVisible(ch byte) string {
	switch {
	case ch == 0:
		return "<undef>"
	case ch < 32:
		return "^" + string(rune(ch+64))
	case ch < 127:
		return string(rune(ch))
	case ch == 127:
		return "^?"
	case ch >= 128+32 && ch < 128+127:
		return "M-" + string(rune(ch-128))
	case ch == 255:
		return "M-^?"
	}
	return "M-^" + string(rune(ch-128+64))
}

func (st *sttyState) displayAll(m *termios) error {
	st.displaySpeed(m, true)
	if err := st.displayWindowSize(true); err != nil {
		return err
	}
	st.wrapf("line = %d;", m.Line)
	st.out.WriteByte('\n')
	st.col = 0
	for _, c := range sttyControls {
		if c.name == "min" {
			break
		}
		if c.name == "flush" {
			continue
		}
		st.wrapf("%s = %s;", c.name, sttyVisible(m.cc(c.offset)))
	}
	st.wrapf("min = %d; time = %d;", m.cc(cVMIN), m.cc(cVTIME))
	if st.col != 0 {
		st.out.WriteByte('\n')
	}
	st.col = 0
	prev := mControl
	for _, md := range sttyModes {
		if md.flags&omit != 0 {
			continue
		}
		if md.typ != prev {
			st.out.WriteByte('\n')
			st.col = 0
			prev = md.typ
		}
		bits := modeFlag(md.typ, m)
		mask := md.mask
		if mask == 0 {
			mask = md.bits
		}
		if *bits&mask == md.bits {
			st.wrapf("%s", md.name)
		} else if md.flags&rev != 0 {
			st.wrapf("-%s", md.name)
		}
	}
	st.out.WriteByte('\n')
	st.col = 0
	return nil
}

func (st *sttyState) displayChanged(m *termios) {
	st.displaySpeed(m, true)
	st.wrapf("line = %d;", m.Line)
	st.out.WriteByte('\n')
	st.col = 0
	empty := true
	for _, c := range sttyControls {
		if c.name == "min" {
			break
		}
		if m.cc(c.offset) == c.saneval || c.name == "flush" {
			continue
		}
		empty = false
		st.wrapf("%s = %s;", c.name, sttyVisible(m.cc(c.offset)))
	}
	if m.Lflag&sICANON == 0 {
		st.wrapf("min = %d; time = %d;\n", m.cc(cVMIN), m.cc(cVTIME))
	} else if !empty {
		st.out.WriteByte('\n')
	}
	st.col = 0
	empty = true
	prev := mControl
	for _, md := range sttyModes {
		if md.flags&omit != 0 {
			continue
		}
		if md.typ != prev {
			if !empty {
				st.out.WriteByte('\n')
				st.col = 0
				empty = true
			}
			prev = md.typ
		}
		bits := modeFlag(md.typ, m)
		mask := md.mask
		if mask == 0 {
			mask = md.bits
		}
		if *bits&mask == md.bits {
			if md.flags&saneUnset != 0 {
				st.wrapf("%s", md.name)
				empty = false
			}
		} else if md.flags&(saneSet|rev) == saneSet|rev {
			st.wrapf("-%s", md.name)
			empty = false
		}
	}
	if !empty {
		st.out.WriteByte('\n')
	}
	st.col = 0
}

func (st *sttyState) displayRecoverable(m *termios) {
	fmt.Fprintf(st.out, "%x:%x:%x:%x", m.Iflag, m.Oflag, m.Cflag, m.Lflag)
	for i := range glibcNCCS {
		fmt.Fprintf(st.out, ":%x", m.cc(i))
	}
	st.out.WriteByte('\n')
}

// recoverMode parses -g's output: four flag words and 32 control
// characters in hex, separated by ':'.
func recoverMode(arg string, m *termios) bool {
	f := strings.Split(arg, ":")
	if len(f) != 4+glibcNCCS {
		return false
	}
	var flags [4]uint32
	for i := range 4 {
		v, ok := parseCUlong(f[i], 32)
		if !ok {
			return false
		}
		flags[i] = uint32(v)
	}
	var cc [glibcNCCS]byte
	for i := range glibcNCCS {
		v, ok := parseCUlong(f[4+i], 8)
		if !ok {
			return false
		}
		cc[i] = byte(v)
	}
	m.Iflag, m.Oflag, m.Cflag, m.Lflag = flags[0], flags[1], flags[2], flags[3]
	copy(m.Cc[:], cc[:nccs])
	return true
}

// parseCUlong is strtoul(s, &p, 16) that must use all of s and fit in
// bits.
func parseCUlong(s string, bits int) (uint64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	t = strings.TrimPrefix(t, "+")
	if len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
	}
	if t == "" {
		return 0, false
	}
	v, err := strconv.ParseUint(t, 16, bits)
	return v, err == nil
}

// apply runs the settings over m (checking only, when check is set: then
// nothing is displayed or changed in the terminal).
func (st *sttyState) apply(check bool, settings []string, m *termios) error {
	for k := 0; k < len(settings); k++ {
		arg := settings[k]
		reversed := false
		if strings.HasPrefix(arg, "-") {
			arg = arg[1:]
			reversed = true
		}
		if arg == "drain" {
			st.tcsa = 1
			if reversed {
				st.tcsa = 0
			}
			continue
		}
		matched := false
		for _, md := range sttyModes {
			if md.name == arg {
				matched = setMode(md, reversed, m)
				st.needSet = true
				break
			}
		}
		if !matched && reversed {
			return &sttyExit{msg: "invalid argument " + sttyQuote(settings[k]), usage: true}
		}
		if matched {
			continue
		}
		needArg := func() (string, error) {
			if k == len(settings)-1 {
				return "", &sttyExit{msg: "missing argument to " + sttyQuote(arg), usage: true}
			}
			k++
			return settings[k], nil
		}
		if c, ok := sttyControlByName(arg); ok {
			v, err := needArg()
			if err != nil {
				return err
			}
			if err := setControlChar(c, v, m); err != nil {
				return err
			}
			st.needSet = true
			continue
		}
		switch arg {
		case "ispeed", "ospeed":
			v, err := needArg()
			if err != nil {
				return err
			}
			if check {
				continue
			}
			if err := setSpeed(v, m); err != nil {
				return err
			}
			st.needSet = true
		case "rows", "cols", "columns":
			v, err := needArg()
			if err != nil {
				return err
			}
			if check {
				continue
			}
			n, err := sttyInteger(v, 1<<31-1)
			if err != nil {
				return err
			}
			if err := st.setWindowSize(arg == "rows", int(n)); err != nil {
				return err
			}
		case "size":
			if check {
				continue
			}
			st.maxCol = sttyScreenColumns()
			st.col = 0
			if err := st.displayWindowSize(false); err != nil {
				return err
			}
		case "line":
			v, err := needArg()
			if err != nil {
				return err
			}
			n, err := sttyInteger(v, 1<<64-1)
			if err != nil {
				return err
			}
			m.Line = byte(n)
			st.needSet = true
		case "speed":
			if check {
				continue
			}
			st.maxCol = sttyScreenColumns()
			st.displaySpeed(m, false)
		default:
			if _, ok := sttyBaudCode(arg); ok {
				if check {
					continue
				}
				_ = setSpeed(arg, m)
				st.needSet = true
				continue
			}
			if !recoverMode(arg, m) {
				return &sttyExit{msg: "invalid argument " + sttyQuote(arg), usage: true}
			}
			st.needSet = true
		}
	}
	return nil
}

func sttyControlByName(name string) (sttyControl, bool) {
	for _, c := range sttyControls {
		if c.name == name {
			return c, true
		}
	}
	return sttyControl{}, false
}

func sttyBaudCode(name string) (uint32, bool) {
	for _, s := range sttySpeeds {
		if s.name == name {
			return s.code, true
		}
	}
	return 0, false
}

func setSpeed(name string, m *termios) error {
	code, ok := sttyBaudCode(name)
	if !ok {
		return &sttyExit{msg: "invalid argument " + sttyQuote(name), usage: true}
	}
	m.Cflag = m.Cflag&^sCBAUD | code
	return nil
}

// sttyInteger is coreutils's integer_arg: a C integer (decimal, 0x hex,
// 0 octal) with an optional b (x512) or B (x1024) suffix, at most max.
func sttyInteger(s string, max uint64) (uint64, error) {
	bad := &sttyExit{msg: "invalid integer argument: " + sttyQuote(s)}
	mult := uint64(1)
	t := s
	switch {
	case strings.HasSuffix(t, "b"):
		mult, t = 512, t[:len(t)-1]
	case strings.HasSuffix(t, "B"):
		mult, t = 1024, t[:len(t)-1]
	}
	if t == "" || strings.HasPrefix(t, "-") {
		return 0, bad
	}
	v, err := strconv.ParseUint(t, 0, 64)
	if err != nil {
		if len(t) > 1 && t[0] == '0' && t[1] != 'x' && t[1] != 'X' {
			v, err = strconv.ParseUint(t[1:], 8, 64)
		}
		if err != nil {
			return 0, bad
		}
	}
	if v > max/mult {
		return 0, &sttyExit{msg: "invalid integer argument: " + sttyQuote(s) + ": Numerical result out of range"}
	}
	return v * mult, nil
}

func setControlChar(c sttyControl, arg string, m *termios) error {
	var v uint64
	switch {
	case c.name == "min" || c.name == "time":
		n, err := sttyInteger(arg, 255)
		if err != nil {
			return err
		}
		v = n
	case len(arg) <= 1:
		if arg != "" {
			v = uint64(arg[0])
		}
	case arg == "^-" || arg == "undef":
		v = 0
	case arg[0] == '^':
		if arg[1] == '?' {
			v = 127
		} else {
			v = uint64(arg[1] &^ 0o140)
		}
	default:
		n, err := sttyInteger(arg, 255)
		if err != nil {
			return err
		}
		v = n
	}
	if c.offset < nccs {
		m.Cc[c.offset] = byte(v)
	}
	return nil
}

// setMode applies one mode; false when it cannot be reversed.
func setMode(md sttyMode, reversed bool, m *termios) bool {
	if reversed && md.flags&rev == 0 {
		return false
	}
	bits := modeFlag(md.typ, m)
	if bits != nil {
		if reversed {
			*bits = *bits &^ md.mask &^ md.bits
		} else {
			*bits = *bits&^md.mask | md.bits
		}
		return true
	}
	switch md.name {
	case "evenp", "parity":
		if reversed {
			m.Cflag = m.Cflag&^sPARENB&^sCSIZE | sCS8
		} else {
			m.Cflag = m.Cflag&^sPARODD&^sCSIZE | sPARENB | sCS7
		}
	case "oddp":
		if reversed {
			m.Cflag = m.Cflag&^sPARENB&^sCSIZE | sCS8
		} else {
			m.Cflag = m.Cflag&^sCSIZE | sCS7 | sPARODD | sPARENB
		}
	case "nl":
		if reversed {
			m.Iflag = (m.Iflag | sICRNL) &^ sINLCR &^ sIGNCR
			m.Oflag = (m.Oflag | sONLCR) &^ sOCRNL &^ sONLRET
		} else {
			m.Iflag &^= sICRNL
			m.Oflag &^= sONLCR
		}
	case "ek":
		m.Cc[cVERASE] = 127
		m.Cc[cVKILL] = 21
	case "sane":
		sttySane(m)
	case "cbreak":
		if reversed {
			m.Lflag |= sICANON
		} else {
			m.Lflag &^= sICANON
		}
	case "pass8":
		if reversed {
			m.Cflag = m.Cflag&^sCSIZE | sCS7 | sPARENB
			m.Iflag |= sISTRIP
		} else {
			m.Cflag = m.Cflag&^sPARENB&^sCSIZE | sCS8
			m.Iflag &^= sISTRIP
		}
	case "litout":
		if reversed {
			m.Cflag = m.Cflag&^sCSIZE | sCS7 | sPARENB
			m.Iflag |= sISTRIP
			m.Oflag |= sOPOST
		} else {
			m.Cflag = m.Cflag&^sPARENB&^sCSIZE | sCS8
			m.Iflag &^= sISTRIP
			m.Oflag &^= sOPOST
		}
	case "raw", "cooked":
		if md.name == "raw" && reversed || md.name == "cooked" && !reversed {
			m.Iflag |= sBRKINT | sIGNPAR | sISTRIP | sICRNL | sIXON
			m.Oflag |= sOPOST
			m.Lflag |= sISIG | sICANON
		} else {
			m.Iflag = 0
			m.Oflag &^= sOPOST
			m.Lflag &^= sISIG | sICANON | sXCASE
			m.Cc[cVMIN] = 1
			m.Cc[cVTIME] = 0
		}
	case "decctlq":
		if reversed {
			m.Iflag |= sIXANY
		} else {
			m.Iflag &^= sIXANY
		}
	case "tabs":
		if reversed {
			m.Oflag = m.Oflag&^sTABDLY | 0o14000
		} else {
			m.Oflag &^= sTABDLY
		}
	case "lcase", "LCASE":
		if reversed {
			m.Lflag &^= sXCASE
			m.Iflag &^= sIUCLC
			m.Oflag &^= sOLCUC
		} else {
			m.Lflag |= sXCASE
			m.Iflag |= sIUCLC
			m.Oflag |= sOLCUC
		}
	case "crt":
		m.Lflag |= sECHOE | sECHOCTL | sECHOKE
	case "dec":
		m.Cc[cVINTR] = 3
		m.Cc[cVERASE] = 127
		m.Cc[cVKILL] = 21
		m.Lflag |= sECHOE | sECHOCTL | sECHOKE
		m.Iflag &^= sIXANY
	}
	return true
}

// sttySane is stty sane: every control character to its default, every
// mode marked sane set or unset.
func sttySane(m *termios) {
	for _, c := range sttyControls {
		if c.offset < nccs {
			m.Cc[c.offset] = c.saneval
		}
	}
	for _, md := range sttyModes {
		bits := modeFlag(md.typ, m)
		switch {
		case md.flags&saneSet != 0:
			*bits = *bits&^md.mask | md.bits
		case md.flags&saneUnset != 0:
			*bits = *bits &^ md.mask &^ md.bits
		}
	}
}

// setWindowSize changes the terminal's rows or columns.
func (st *sttyState) setWindowSize(isRows bool, n int) error {
	rows, cols, err := termSize(st.fd)
	if err != nil {
		if !errors.Is(err, syscall.EINVAL) {
			return &sttyExit{msg: st.device + ": " + errnoText(err)}
		}
		rows, cols = 0, 0
	}
	if isRows {
		rows = n
	} else {
		cols = n
	}
	// struct winsize holds unsigned shorts: larger values wrap, as the
	// ioctl's would.
	if err := termSetSize(st.fd, int(uint16(rows)), int(uint16(cols))); err != nil {
		return &sttyExit{msg: st.device + ": " + errnoText(err)}
	}
	return nil
}
