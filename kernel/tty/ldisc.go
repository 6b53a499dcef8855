// Package tty is the terminal layer of the secexec kernel: a Linux-style
// line discipline (canonical and raw input, echo, the signal characters,
// output post-processing, window size) and a Terminal that puts it
// between a master side (the host's end of a PTY) and a slave side (the
// guest's terminal), with bounded buffers and blocking I/O.
//
// LineDiscipline is pure state with no locking and no blocking, so it can
// be unit-tested and fuzzed byte by byte; Terminal adds the locking,
// waiter queues and hang-up rules. Sessions, process groups and signal
// delivery belong to the kernel, which plugs in through Terminal's
// callbacks.
package tty

import "unicode/utf8"

// Termios flag bits, with Linux's values (asm-generic/termbits.h), so a
// runtime that exposes tcgetattr passes them through unchanged.
const (
	// Iflag
	ICRNL = 0o400 // map CR to NL on input
	INLCR = 0o100 // map NL to CR on input
	IGNCR = 0o200 // ignore CR on input
	// Cflag: stored and reported, not acted on (a pseudo-terminal has no
	// line speed or framing).
	B38400 = 0o17  // the speed a pseudo-terminal reports
	CSIZE  = 0o60  // the character size bits
	CS8    = 0o60  // 8-bit characters
	PARENB = 0o400 // parity
	CREAD  = 0o200 // enable the receiver
	// Oflag
	OPOST = 0o1 // post-process output
	ONLCR = 0o4 // map NL to CR-NL on output
	// Lflag
	ISIG    = 0o1      // generate signals for INTR, QUIT and SUSP
	ICANON  = 0o2      // canonical (line-by-line) input
	ECHO    = 0o10     // echo input
	ECHOE   = 0o20     // ERASE erases the character on the screen
	ECHOK   = 0o40     // KILL erases the line on the screen
	ECHONL  = 0o100    // echo NL even without ECHO
	NOFLSH  = 0o200    // do not flush input on a signal character
	ECHOCTL = 0o1000   // echo control characters as ^X
	ECHOKE  = 0o4000   // with ECHOK and ECHOE, KILL erases the line on the screen
	IEXTEN  = 0o100000 // extended input processing (WERASE)
)

// Indexes of the control characters in Termios.Cc, with Linux's values.
const (
	VINTR    = 0
	VQUIT    = 1
	VERASE   = 2
	VKILL    = 3
	VEOF     = 4
	VTIME    = 5
	VMIN     = 6
	VSWTC    = 7
	VSTART   = 8
	VSTOP    = 9
	VSUSP    = 10
	VEOL     = 11
	VREPRINT = 12
	VDISCARD = 13
	VWERASE  = 14
	VLNEXT   = 15
	VEOL2    = 16
	NCCS     = 19
)

// Termios is the terminal's mode: Linux's struct termios (the flag
// words, the line discipline number and the control characters). The
// line discipline acts on the bits named above; the others are kept and
// reported as they were set, as tcsetattr(3) callers expect.
type Termios struct {
	Iflag, Oflag, Cflag, Lflag uint32
	Line                       byte
	Cc                         [NCCS]byte
}

// DefaultTermios is the mode of a fresh terminal, a Linux pty's:
// canonical input with echo and signals, CR mapped to NL on input and NL
// to CR-NL on output, and the usual control characters (^C, ^\, DEL,
// ^U, ^D, ^Z, ^W). It lacks Linux's IXON: the line discipline has no
// output flow control, so it does not claim any.
func DefaultTermios() Termios {
	t := Termios{
		Iflag: ICRNL,
		Oflag: OPOST | ONLCR,
		Cflag: B38400 | CS8 | CREAD,
		Lflag: ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
	}
	// Linux's INIT_C_CC; the line discipline uses intr, quit, erase,
	// kill, eof, susp and werase, the rest are there for stty to show.
	t.Cc[VINTR] = 0x03
	t.Cc[VQUIT] = 0x1c
	t.Cc[VERASE] = 0x7f
	t.Cc[VKILL] = 0x15
	t.Cc[VEOF] = 0x04
	t.Cc[VMIN] = 1
	t.Cc[VSTART] = 0x11
	t.Cc[VSTOP] = 0x13
	t.Cc[VSUSP] = 0x1a
	t.Cc[VREPRINT] = 0x12
	t.Cc[VDISCARD] = 0x0f
	t.Cc[VWERASE] = 0x17
	t.Cc[VLNEXT] = 0x16
	return t
}

// MakeRaw turns off input and output processing, echo, canonical mode and
// signals, as cfmakeraw(3) does.
func (t *Termios) MakeRaw() {
	t.Iflag &^= ICRNL | INLCR | IGNCR
	t.Oflag &^= OPOST
	t.Lflag &^= ECHO | ECHONL | ICANON | ISIG | IEXTEN
}

// Raw reports whether canonical mode is off.
func (t Termios) Raw() bool { return t.Lflag&ICANON == 0 }

// Winsize is a terminal's size in characters.
type Winsize struct {
	Rows, Cols uint16
}

// Signal is a signal the line discipline raises; the values are Linux's.
type Signal int

// Signals of the line discipline.
const (
	SIGINT   Signal = 2
	SIGQUIT  Signal = 3
	SIGTSTP  Signal = 20
	SIGWINCH Signal = 28
)

// Default buffer bounds: Linux's N_TTY_BUF_SIZE for input (a canonical
// line is at most 4095 bytes plus its newline), and a generous output
// queue for the master to drain.
const (
	DefaultInputMax  = 4096
	DefaultOutputMax = 64 << 10
)

// LineDiscipline is the state of a terminal's line discipline. The zero
// value is not ready; use NewLineDiscipline. It is not safe for
// concurrent use.
type LineDiscipline struct {
	t  Termios
	ws Winsize

	// chunks are the input the slave may read. In canonical mode each is
	// one line (with its newline, if one ended it) and a read never
	// crosses two; an empty chunk is an end of file (^D on an empty
	// line). In raw mode they are just bytes.
	chunks [][]byte
	inLen  int
	edit   []byte // the canonical line being edited
	out    []byte // bytes for the master to read: echo and output

	inMax, outMax int
}

// NewLineDiscipline returns a line discipline with DefaultTermios and
// the given buffer bounds (zero or less means the defaults).
func NewLineDiscipline(inMax, outMax int) *LineDiscipline {
	if inMax <= 0 {
		inMax = DefaultInputMax
	}
	if outMax <= 0 {
		outMax = DefaultOutputMax
	}
	return &LineDiscipline{t: DefaultTermios(), inMax: inMax, outMax: outMax}
}

// Termios returns the current mode.
func (l *LineDiscipline) Termios() Termios { return l.t }

// SetTermios changes the mode. Leaving canonical mode makes the line
// under edit readable at once; entering it keeps pending raw input as one
// readable chunk, as Linux does.
func (l *LineDiscipline) SetTermios(t Termios) {
	if l.t.Lflag&ICANON != 0 && t.Lflag&ICANON == 0 && len(l.edit) > 0 {
		l.push(l.edit)
		l.edit = nil
	}
	l.t = t
}

// FlushInput discards the input not yet read, edited and readable
// (tcflush(TCIFLUSH), tcsetattr's TCSAFLUSH).
func (l *LineDiscipline) FlushInput() { l.flushInput() }

// Winsize returns the window size.
func (l *LineDiscipline) Winsize() Winsize { return l.ws }

// SetWinsize changes the window size and reports whether it changed (the
// caller then raises SIGWINCH).
func (l *LineDiscipline) SetWinsize(ws Winsize) bool {
	if ws == l.ws {
		return false
	}
	l.ws = ws
	return true
}

// canPush reports whether a line of n bytes fits the input bound; the
// number of lines counts too, so end-of-file marks (empty lines) cannot
// pile up without bound.
func (l *LineDiscipline) canPush(n int) bool {
	return l.inLen+n <= l.inMax && len(l.chunks) < l.inMax
}

// push appends readable input.
func (l *LineDiscipline) push(b []byte) {
	l.chunks = append(l.chunks, b)
	l.inLen += len(b)
}

// Readable reports whether a slave read would return at once: input is
// waiting, or an end of file is.
func (l *LineDiscipline) Readable() bool { return len(l.chunks) > 0 }

// InputRoom reports whether the master may write more input without it
// being held back.
func (l *LineDiscipline) InputRoom() bool { return l.inLen+len(l.edit) < l.inMax }

// Pending returns the bytes waiting for the master to read.
func (l *LineDiscipline) Pending() int { return len(l.out) }

// OutputRoom reports whether the slave may write more output.
func (l *LineDiscipline) OutputRoom() bool { return len(l.out) < l.outMax }

// echo queues bytes for the master as echo. Echo that does not fit is
// dropped rather than held: the typist must never block on an unread
// screen.
func (l *LineDiscipline) echo(b ...byte) {
	for _, c := range b {
		crlf := c == '\n' && l.t.Oflag&(OPOST|ONLCR) == OPOST|ONLCR
		if len(l.out) >= l.outMax || crlf && len(l.out)+2 > l.outMax {
			return
		}
		if crlf {
			l.out = append(l.out, '\r')
		}
		l.out = append(l.out, c)
	}
}

// echoChar echoes one input character, control characters as ^X.
func (l *LineDiscipline) echoChar(c byte) {
	if l.t.Lflag&ECHO == 0 {
		return
	}
	if l.t.Lflag&ECHOCTL != 0 && (c < 0x20 && c != '\t' && c != '\n' || c == 0x7f) {
		l.echo('^', c^0x40)
		return
	}
	l.echo(c)
}

// Input processes bytes the master wrote (typed keys). It returns how many
// it took, which is fewer than len(p) only in raw mode when the input
// buffer is full (the writer then waits for the slave to read), and the
// signals the keys raised, in order.
func (l *LineDiscipline) Input(p []byte) (int, []Signal) {
	var sigs []Signal
	for i, c := range p {
		if l.t.Iflag&IGNCR != 0 && c == '\r' {
			continue
		}
		switch {
		case c == '\r' && l.t.Iflag&ICRNL != 0:
			c = '\n'
		case c == '\n' && l.t.Iflag&INLCR != 0:
			c = '\r'
		}
		cc := &l.t.Cc
		if l.t.Lflag&ISIG != 0 && c != 0 {
			var s Signal
			switch c {
			case cc[VINTR]:
				s = SIGINT
			case cc[VQUIT]:
				s = SIGQUIT
			case cc[VSUSP]:
				s = SIGTSTP
			}
			if s != 0 {
				if l.t.Lflag&NOFLSH == 0 {
					l.flushInput()
				}
				l.echoChar(c)
				sigs = append(sigs, s)
				continue
			}
		}
		if l.t.Lflag&ICANON == 0 {
			if l.inLen >= l.inMax {
				return i, sigs
			}
			if n := len(l.chunks); n > 0 {
				l.chunks[n-1] = append(l.chunks[n-1], c)
				l.inLen++
			} else {
				l.push([]byte{c})
			}
			l.echoChar(c)
			continue
		}
		l.canonical(c)
	}
	return len(p), sigs
}

// canonical handles one input byte in canonical mode.
func (l *LineDiscipline) canonical(c byte) {
	cc := &l.t.Cc
	lf := l.t.Lflag
	switch {
	case c == cc[VERASE] && c != 0:
		if n := eraseLen(l.edit); n > 0 {
			l.edit = l.edit[:len(l.edit)-n]
			l.rubout(1)
		}
	case c == cc[VWERASE] && c != 0 && lf&IEXTEN != 0:
		n := 0
		for len(l.edit) > 0 && isSpace(l.edit[len(l.edit)-1]) {
			l.edit, n = l.edit[:len(l.edit)-1], n+1
		}
		for len(l.edit) > 0 && !isSpace(l.edit[len(l.edit)-1]) {
			l.edit = l.edit[:len(l.edit)-eraseLen(l.edit)]
			n++
		}
		l.rubout(n)
	case c == cc[VKILL] && c != 0:
		n := utf8.RuneCount(l.edit)
		l.edit = l.edit[:0]
		// As Linux's n_tty: the line is rubbed out only with ECHOK,
		// ECHOKE and ECHOE; otherwise KILL is echoed, then a newline
		// with ECHOK.
		if lf&ECHOK != 0 && lf&ECHOKE != 0 && lf&ECHOE != 0 {
			l.rubout(n)
		} else {
			l.echoChar(c)
			if lf&ECHOK != 0 && lf&ECHO != 0 {
				l.echo('\n')
			}
		}
	case c == cc[VEOF] && c != 0:
		// The line so far becomes readable without the EOF character; on
		// an empty line that is a read of 0 bytes: end of file.
		if l.canPush(len(l.edit)) {
			l.push(l.edit)
			l.edit = nil
		}
	case c == '\n':
		// With the buffer full of unread lines even a newline waits: the
		// typist sees nothing happen, as on Linux.
		if !l.canPush(len(l.edit) + 1) {
			return
		}
		if lf&ECHO != 0 || lf&ECHONL != 0 {
			l.echo('\n')
		}
		l.push(append(l.edit, '\n'))
		l.edit = nil
	default:
		// A full line takes no more characters but a newline, as Linux
		// keeps the last byte of its buffer for one.
		if len(l.edit) >= l.inMax-1 || l.inLen+len(l.edit) >= l.inMax-1 {
			return
		}
		l.edit = append(l.edit, c)
		l.echoChar(c)
	}
}

// rubout erases n characters on the screen when echo does.
func (l *LineDiscipline) rubout(n int) {
	if l.t.Lflag&ECHO == 0 {
		return
	}
	for range n {
		if l.t.Lflag&ECHOE != 0 {
			l.echo('\b', ' ', '\b')
		} else {
			l.echoChar(l.t.Cc[VERASE])
		}
	}
}

// eraseLen is the byte length of the last character of b: a whole UTF-8
// sequence, so erasing never leaves half a character behind.
func eraseLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	_, n := utf8.DecodeLastRune(b)
	return max(n, 1)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// flushInput discards all input, edited and readable.
func (l *LineDiscipline) flushInput() {
	l.chunks = nil
	l.inLen = 0
	l.edit = nil
}

// Read copies readable input into p. It returns the count and whether
// there was anything to read; (0, true) is an end of file.
func (l *LineDiscipline) Read(p []byte) (int, bool) {
	if len(l.chunks) == 0 {
		return 0, false
	}
	if l.t.Lflag&ICANON != 0 {
		// One line per read.
		c := l.chunks[0]
		n := copy(p, c)
		if n == len(c) {
			l.chunks[0] = nil
			l.chunks = l.chunks[1:]
		} else {
			l.chunks[0] = c[n:]
		}
		l.inLen -= n
		return n, true
	}
	n := 0
	for n < len(p) && len(l.chunks) > 0 {
		c := l.chunks[0]
		m := copy(p[n:], c)
		n += m
		l.inLen -= m
		if m == len(c) {
			l.chunks[0] = nil
			l.chunks = l.chunks[1:]
		} else {
			l.chunks[0] = c[m:]
		}
	}
	return n, true
}

// Output processes bytes the slave wrote (program output) into the
// master's queue and returns how many it took: fewer than len(p) when
// the queue is full.
func (l *LineDiscipline) Output(p []byte) int {
	post := l.t.Oflag&(OPOST|ONLCR) == OPOST|ONLCR
	for i, c := range p {
		need := 1
		if post && c == '\n' {
			need = 2
		}
		if len(l.out)+need > l.outMax {
			return i
		}
		if need == 2 {
			l.out = append(l.out, '\r')
		}
		l.out = append(l.out, c)
	}
	return len(p)
}

// TakeOutput copies queued output into p for the master and returns the
// count.
func (l *LineDiscipline) TakeOutput(p []byte) int {
	n := copy(p, l.out)
	l.out = l.out[:copy(l.out, l.out[n:])]
	return n
}
