package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/secexec/secexec/userland/internal/sysmsg"
	"github.com/secexec/secexec/userland/internal/term"
)

// less and more page through files on a terminal. When standard output
// is not a terminal they copy their input like cat, with GNU less 590's
// and util-linux 2.38 more's messages (checked against them by the VM
// tests), so "cmd | less" in a script or an agent's tool call does what
// it does on Debian.

// lessFlags are the single-letter options GNU less knows, without and
// with an argument; only a few change what this pager does (N, S, F, i,
// I, p), the others are accepted and ignored.
const (
	lessFlags    = "?aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX~"
	lessArgFlags = "bhjkoOpPtTxyz#"
)

// pagerOptions are what the command line asks of the pager.
type pagerOptions struct {
	number, chop, quitIfOneScreen, ignoreCase bool
	// color (-R, -r) shows the input's colour sequences as colours.
	color bool
	// start is a command to run first: "+N" or "+/pattern" or "+G".
	start string
	files []string
}

func runLess(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o pagerOptions
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			o.files = append(o.files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a[2:], "=")
			switch name {
			case "LINE-NUMBERS", "line-numbers":
				o.number = true
			case "chop-long-lines":
				o.chop = true
			case "quit-if-one-screen":
				o.quitIfOneScreen = true
			case "ignore-case", "IGNORE-CASE":
				o.ignoreCase = true
			case "RAW-CONTROL-CHARS", "raw-control-chars":
				o.color = true
			case "no-init", "quit-at-eof", "QUIT-AT-EOF", "squeeze-blank-lines", "silent", "quiet":
			default:
				fmt.Fprintf(stderr, "There is no %s option (\"less --help\" for help)\n", name)
			}
		case strings.HasPrefix(a, "+") && len(a) > 1:
			o.start = a[1:]
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch {
				case strings.IndexByte(lessArgFlags, c) >= 0:
					val := a[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i]
					}
					if c == 'p' {
						o.start = "/" + val
					}
					j = len(a)
				case strings.IndexByte(lessFlags, c) >= 0:
					switch c {
					case 'N':
						o.number = true
					case 'S':
						o.chop = true
					case 'F':
						o.quitIfOneScreen = true
					case 'i', 'I':
						o.ignoreCase = true
					case 'R', 'r':
						o.color = true
					}
				default:
					fmt.Fprintf(stderr, "There is no -%c option (\"less --help\" for help)\n", c)
				}
			}
		default:
			o.files = append(o.files, a)
		}
	}
	// less lists each file once.
	seen := map[string]bool{}
	files := o.files[:0]
	for _, f := range o.files {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	o.files = files
	if !isTerminalWriter(stdout) {
		return lessCat(o.files, stdin, stdout)
	}
	if len(o.files) == 0 && isTerminalReader(stdin) {
		fmt.Fprintln(stderr, `Missing filename ("less --help" for help)`)
		return 1
	}
	return page(false, o, stdin, stdout, stderr)
}

func runMore(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o pagerOptions
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			o.files = append(o.files, args[i+1:]...)
			i = len(args)
		case a == "--help":
			fmt.Fprint(stdout, "\nUsage:\n more [options] <file>...\n\nDisplay the contents of a file in a terminal.\n")
			return 0
		case strings.HasPrefix(a, "--"):
			fmt.Fprintf(stderr, "more: unrecognized option '%s'\nTry 'more --help' for more information.\n", a)
			return 1
		case strings.HasPrefix(a, "+") && len(a) > 1:
			o.start = a[1:]
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch {
				case c >= '0' && c <= '9':
					j = len(a)
				case c == 'n':
					if a[j+1:] == "" {
						i++
					}
					j = len(a)
				case strings.IndexByte("dflcpsue", c) >= 0:
				default:
					fmt.Fprintf(stderr, "more: invalid option -- '%c'\nTry 'more --help' for more information.\n", c)
					return 1
				}
			}
		default:
			o.files = append(o.files, a)
		}
	}
	if !isTerminalWriter(stdout) {
		return moreCat(o.files, stdin, stdout, stderr)
	}
	if len(o.files) == 0 && isTerminalReader(stdin) {
		fmt.Fprint(stderr, "more: bad usage\nTry 'more --help' for more information.\n")
		return 1
	}
	return page(true, o, stdin, stdout, stderr)
}

// isTerminalWriter reports whether w is this process's standard output
// and a terminal.
func isTerminalWriter(w io.Writer) bool { return w == io.Writer(os.Stdout) && term.IsTerminal(1) }

// isTerminalReader reports whether r is this process's standard input
// and a terminal.
func isTerminalReader(r io.Reader) bool { return r == io.Reader(os.Stdin) && term.IsTerminal(0) }

// lessCat is GNU less with its output not a terminal: each file (or
// standard input) copied, a file it cannot show reported on standard
// output in its place, and status 0.
func lessCat(files []string, stdin io.Reader, stdout io.Writer) int {
	if len(files) == 0 {
		_, _ = io.Copy(stdout, stdin)
		return 0
	}
	for _, name := range files {
		if name == "-" {
			_, _ = io.Copy(stdout, stdin)
			continue
		}
		f, err := openPaged(name)
		if err != nil {
			var dir isDirError
			if errors.As(err, &dir) {
				fmt.Fprintf(stdout, "%s is a directory\n", name)
			} else {
				fmt.Fprintf(stdout, "%s: %s\n", name, sysmsg.Text(err))
			}
			continue
		}
		_, _ = io.Copy(stdout, f)
		f.Close()
	}
	return 0
}

// moreCat is util-linux more with its output not a terminal: standard
// input first when it is not a terminal, then each file under a
// "::::::::::::::" header when there is more than one input.
func moreCat(files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	inputs := len(files)
	if !isTerminalReader(stdin) {
		inputs++
		_, _ = io.Copy(stdout, stdin)
	}
	for _, name := range files {
		f, err := openPaged(name)
		if err != nil {
			var dir isDirError
			if errors.As(err, &dir) {
				fmt.Fprintf(stdout, "\n*** %s: directory ***\n\n", name)
			} else {
				fmt.Fprintf(stderr, "more: cannot open %s: %s\n", name, sysmsg.Text(err))
			}
			continue
		}
		if inputs > 1 {
			fmt.Fprintf(stdout, "::::::::::::::\n%s\n::::::::::::::\n", name)
		}
		_, _ = io.Copy(stdout, f)
		f.Close()
	}
	return 0
}

// isDirError is the error of opening a directory to page it.
type isDirError struct{ name string }

func (e isDirError) Error() string { return e.name + " is a directory" }

// openPaged opens a file to show; a directory is an isDirError.
func openPaged(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, isDirError{name}
	}
	return f, nil
}

// page runs the interactive pager on the terminal.
func page(more bool, o pagerOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	tty, data, err := openTerminal(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", pagerName(more), err)
		return 1
	}
	defer tty.restore()
	var in io.Reader = stdin
	if data != nil {
		in = data
	}
	rows, cols := windowSize()
	out := bufio.NewWriterSize(stdout, 64<<10)
	p := newPager(more, o, in, term.NewReader(tty), out, rows, cols)
	code := p.run()
	_ = out.Flush()
	return code
}

func pagerName(more bool) string {
	if more {
		return "more"
	}
	return "less"
}

// doc is one input being paged: its lines so far, read on demand.
type doc struct {
	name string
	r    *bufio.Reader
	c    io.Closer
	// lines hold the text without the newline; ends[i] is the byte
	// offset just after line i.
	lines []string
	ends  []int64
	eof   bool
	// size is a regular file's size (more's percentage), else 0.
	size int64
}

// ensure reads until line n exists or the input ends; it reports whether
// line n exists.
func (d *doc) ensure(n int) bool {
	for len(d.lines) <= n && !d.eof {
		s, err := d.r.ReadString('\n')
		if len(s) > 0 {
			d.lines = append(d.lines, strings.TrimSuffix(s, "\n"))
			var end int64
			if len(d.ends) > 0 {
				end = d.ends[len(d.ends)-1]
			}
			d.ends = append(d.ends, end+int64(len(s)))
		}
		if err != nil {
			d.eof = true
			if d.c != nil {
				d.c.Close()
			}
		}
	}
	return n < len(d.lines)
}

func (d *doc) all() {
	for !d.eof {
		d.ensure(len(d.lines) + 4096)
	}
}

// pager is the interactive state of less or more.
type pager struct {
	more bool
	o    pagerOptions
	in   io.Reader
	keys *term.Reader
	out  *bufio.Writer
	// rows and cols are the window; the last row is the prompt.
	rows, cols int
	names      []string
	cur        int
	d          *doc
	// top is the first line on the screen; shift the columns cut off on
	// the left (with -S).
	top, shift int
	re         *regexp.Regexp
	back       bool
	msg        string
	// fresh is set until the first command after a file is opened, when
	// less shows the file's name in the prompt.
	fresh bool
}

func newPager(more bool, o pagerOptions, in io.Reader, keys *term.Reader, out *bufio.Writer, rows, cols int) *pager {
	p := &pager{more: more, o: o, in: in, keys: keys, out: out, rows: max(rows, 2), cols: max(cols, 10)}
	p.names = o.files
	if len(p.names) == 0 {
		p.names = []string{"-"}
	}
	return p
}

// open opens file i and reports whether it could.
func (p *pager) open(i int) bool {
	name := p.names[i]
	var d *doc
	if name == "-" {
		d = &doc{name: "", r: bufio.NewReaderSize(p.in, 64<<10)}
	} else {
		f, err := openPaged(name)
		if err != nil {
			var dir isDirError
			if errors.As(err, &dir) {
				p.msg = name + " is a directory"
			} else {
				p.msg = name + ": " + sysmsg.Text(err)
			}
			return false
		}
		d = &doc{name: name, r: bufio.NewReaderSize(f, 64<<10), c: f}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			d.size = fi.Size()
		}
	}
	p.cur, p.d, p.top, p.shift, p.fresh = i, d, 0, 0, true
	return true
}

// textRows is the number of rows for text.
func (p *pager) textRows() int { return p.rows - 1 }

// width is the columns for text after the line number.
func (p *pager) width() int {
	if p.o.number {
		return max(p.cols-8, 1)
	}
	return p.cols
}

// expand turns a line into what the screen shows: tabs to spaces,
// control characters as ^X, invalid bytes as <XX>.
func expand(s string) []rune {
	cells, _, _ := expandSGR(s, false)
	return cells
}

// expandSGR is expand that, with color (less -R), keeps the SGR colour
// sequences (ESC [ ... m) out of the cells: pre[i] holds those before
// cell i and tail those after the last, so they take no room.
func expandSGR(s string, color bool) (cells []rune, pre []string, tail string) {
	cells = make([]rune, 0, len(s))
	var pending strings.Builder
	add := func(rs ...rune) {
		for _, r := range rs {
			if color {
				pre = append(pre, pending.String())
				pending.Reset()
			}
			cells = append(cells, r)
		}
	}
	for i := 0; i < len(s); {
		if color && s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				pending.WriteString(s[i : j+1])
				i = j + 1
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			add([]rune(fmt.Sprintf("<%02X>", s[i]))...)
		case r == '\t':
			for {
				add(' ')
				if len(cells)%8 == 0 {
					break
				}
			}
		case r == '\r' && i+n == len(s):
			// A CR-LF line end shows as a plain line end, as in less.
		case r < 0x20 || r == 0x7f:
			add('^', r^0x40)
		default:
			add(r)
		}
		i += n
	}
	return cells, pre, pending.String()
}

// height is how many rows line n takes.
func (p *pager) height(n int) int {
	if p.o.chop {
		return 1
	}
	w := p.width()
	cells, _, _ := expandSGR(p.d.lines[n], p.o.color)
	return max(1, (len(cells)+w-1)/w)
}

// maxTop is the last useful top line: the one that puts the end of the
// input on the last text row. It reads the whole input.
func (p *pager) maxTop() int {
	p.d.all()
	h, n := 0, len(p.d.lines)
	for n > 0 {
		h += p.height(n - 1)
		if h > p.textRows() {
			break
		}
		n--
	}
	return n
}

// atEnd reports whether the screen shows the end of the input.
func (p *pager) atEnd() bool {
	h, n := 0, p.top
	for p.d.ensure(n) {
		h += p.height(n)
		if h > p.textRows() {
			return false
		}
		n++
	}
	return true
}

// forward scrolls n lines down, not past the end.
func (p *pager) forward(n int) {
	if n <= 0 {
		return
	}
	// Read only what the move needs: a stream may never end.
	target := p.top + n
	if p.d.ensure(target + p.textRows()) {
		p.top = target
		return
	}
	p.top = min(target, max(p.maxTop(), p.top))
}

func (p *pager) backward(n int) { p.top = max(0, p.top-max(n, 0)) }

// gotoLine puts line n (0-based) at the top.
func (p *pager) gotoLine(n int) {
	p.top = 0
	p.forward(n)
}

// draw paints the screen and the prompt.
func (p *pager) draw() {
	// No SIGWINCH handler in WASI: ask the terminal its size each time.
	rows, cols := windowSize()
	p.rows, p.cols = max(rows, 2), max(cols, 10)
	w := p.width()
	row := 0
	for n := p.top; row < p.textRows() && p.d.ensure(n); n++ {
		text, pre, tail := expandSGR(p.d.lines[n], p.o.color)
		// Each row is a range [a, b) of the line's cells.
		var segs [][2]int
		if p.o.chop {
			a := min(p.shift, len(text))
			segs = [][2]int{{a, min(len(text), a+w)}}
		} else {
			a := 0
			for len(text)-a > w {
				segs = append(segs, [2]int{a, a + w})
				a += w
			}
			segs = append(segs, [2]int{a, len(text)})
		}
		for i, seg := range segs {
			if row >= p.textRows() {
				break
			}
			fmt.Fprintf(p.out, "\x1b[%d;1H\x1b[2K", row+1)
			if p.o.number {
				if i == 0 {
					fmt.Fprintf(p.out, "%7d ", n+1)
				} else {
					p.out.WriteString("        ")
				}
			}
			if p.o.color {
				// The colours set before the row's first cell carry over.
				for _, sgr := range pre[:seg[0]] {
					p.out.WriteString(sgr)
				}
				for k := seg[0]; k < seg[1]; k++ {
					p.out.WriteString(pre[k])
					p.out.WriteRune(text[k])
				}
				if seg[1] == len(text) {
					p.out.WriteString(tail)
				}
				p.out.WriteString("\x1b[m")
			} else {
				p.out.WriteString(string(text[seg[0]:seg[1]]))
			}
			row++
		}
	}
	for ; row < p.textRows(); row++ {
		fmt.Fprintf(p.out, "\x1b[%d;1H\x1b[2K", row+1)
		if !p.more {
			p.out.WriteString("~")
		}
	}
	// The prompt stays within the row: a terminal would wrap and scroll.
	prompt := []rune(p.prompt())
	prompt = prompt[:min(len(prompt), p.cols-1)]
	fmt.Fprintf(p.out, "\x1b[%d;1H\x1b[2K\x1b[7m%s\x1b[m", p.rows, string(prompt))
	_ = p.out.Flush()
}

// prompt is the last row's text.
func (p *pager) prompt() string {
	if p.msg != "" {
		m := p.msg
		p.msg = ""
		return m
	}
	if p.more {
		last := p.lastShown()
		if p.d.size > 0 && last > 0 {
			return fmt.Sprintf("--More--(%d%%)", min(100, p.d.ends[last-1]*100/p.d.size))
		}
		return "--More--"
	}
	var parts []string
	if p.fresh && p.d.name != "" {
		if len(p.names) > 1 {
			parts = append(parts, fmt.Sprintf("%s (file %d of %d)", p.d.name, p.cur+1, len(p.names)))
		} else {
			parts = append(parts, p.d.name)
		}
	}
	if p.atEnd() && p.d.eof {
		if p.cur+1 < len(p.names) {
			parts = append(parts, "(END) - Next: "+p.names[p.cur+1])
		} else {
			parts = append(parts, "(END)")
		}
	}
	if len(parts) == 0 {
		return ":"
	}
	return strings.Join(parts, " ")
}

// lastShown is the number of the line after the last one on the screen.
func (p *pager) lastShown() int {
	last := p.top
	for h := 0; p.d.ensure(last); last++ {
		h += p.height(last)
		if h > p.textRows() {
			break
		}
	}
	return last
}

// readLine reads a line of input on the prompt row after prefix; ok is
// false when it was cancelled (Escape, ^C, ^G, or backspace past the
// start).
func (p *pager) readLine(prefix string) (string, bool) {
	var buf []rune
	for {
		fmt.Fprintf(p.out, "\x1b[%d;1H\x1b[2K%s%s", p.rows, prefix, string(buf))
		_ = p.out.Flush()
		k, err := p.keys.ReadKey()
		if err != nil {
			return "", false
		}
		switch {
		case k == '\r' || k == '\n':
			return string(buf), true
		case k == term.Esc || k == term.Ctrl('c') || k == term.Ctrl('g'):
			return "", false
		case k == 0x7f || k == term.Ctrl('h'):
			if len(buf) == 0 {
				return "", false
			}
			buf = buf[:len(buf)-1]
		case k == term.Ctrl('u'):
			buf = buf[:0]
		case k >= 0x20 || k == '\t':
			if len(buf) < 4096 {
				buf = append(buf, rune(k))
			}
		}
	}
}

// search finds the next line matching the pattern from the top line in
// the search's direction (reversed if reverse) and puts it at the top.
func (p *pager) search(reverse bool, count int) {
	if p.re == nil {
		p.msg = "No previous regular expression"
		return
	}
	back := p.back != reverse
	n := p.top
	for c := 0; c < max(count, 1); c++ {
		found := false
		for {
			if back {
				n--
				if n < 0 {
					break
				}
			} else {
				n++
				if !p.d.ensure(n) {
					break
				}
			}
			if p.re.MatchString(p.d.lines[n]) {
				found = true
				break
			}
		}
		if !found {
			p.msg = "Pattern not found"
			return
		}
	}
	p.gotoLine(n)
}

// setPattern compiles a search pattern; an empty one keeps the last.
func (p *pager) setPattern(pat string, back bool) bool {
	p.back = back
	if pat == "" {
		return p.re != nil
	}
	if p.o.ignoreCase && strings.ToLower(pat) == pat {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		p.msg = "Invalid pattern"
		return false
	}
	p.re = re
	return true
}

// nextFile moves by delta files, skipping those that cannot be opened;
// it reports whether it moved.
func (p *pager) nextFile(delta int) bool {
	for i := p.cur + delta; i >= 0 && i < len(p.names); i += delta {
		msg := p.msg
		if p.open(i) {
			if msg != "" && p.msg == "" {
				p.msg = msg
			}
			return true
		}
	}
	return false
}

// run pages until the user quits; it returns the exit status.
func (p *pager) run() int {
	opened := false
	for i := range p.names {
		if p.open(i) {
			opened = true
			break
		}
	}
	if !opened {
		_, _ = fmt.Fprintf(p.out, "%s\r\n", p.msg)
		return 1
	}
	if !p.more {
		p.out.WriteString("\x1b[?1049h")
		defer func() { p.out.WriteString("\x1b[?1049l") }()
	}
	switch s := p.o.start; {
	case s == "G":
		p.top = p.maxTop()
	case strings.HasPrefix(s, "/"):
		if p.setPattern(s[1:], false) {
			p.top = -1
			p.search(false, 1)
			p.top = max(p.top, 0)
		}
	case s != "":
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			p.gotoLine(n - 1)
		}
	}
	if (p.more || p.o.quitIfOneScreen) && p.cur == len(p.names)-1 && p.top == 0 && p.atEnd() {
		// The whole input fits: show it and quit, as more and less -F do.
		p.drawPlain()
		return 0
	}
	count := 0
	for {
		p.draw()
		k, err := p.keys.ReadKey()
		if err != nil {
			return 0
		}
		if k >= '0' && k <= '9' {
			if count < 1e8 {
				count = count*10 + int(k-'0')
			}
			continue
		}
		n := count
		count = 0
		p.fresh = false
		page := p.textRows()
		if n > 0 {
			page = n
		}
		switch k {
		case 'q', 'Q':
			p.finish()
			return 0
		case 'Z':
			if k2, _ := p.keys.ReadKey(); k2 == 'Z' {
				p.finish()
				return 0
			}
		case ' ', 'f', term.Ctrl('f'), term.Ctrl('v'), term.KeyPgDn, 'z':
			if p.more && p.atEnd() {
				if !p.nextFile(1) {
					p.finish()
					return 0
				}
				continue
			}
			p.forward(page)
		case 'b', term.Ctrl('b'), term.KeyPgUp, 'w':
			p.backward(page)
		case 'd', term.Ctrl('d'):
			p.forward(max(n, p.textRows()/2))
		case 'u', term.Ctrl('u'):
			p.backward(max(n, p.textRows()/2))
		case 'j', 'e', term.Ctrl('e'), term.Ctrl('n'), '\r', '\n', term.KeyDown:
			if p.more && p.atEnd() && (k == '\r' || k == '\n') {
				if !p.nextFile(1) {
					p.finish()
					return 0
				}
				continue
			}
			p.forward(max(n, 1))
		case 'k', 'y', term.Ctrl('y'), term.Ctrl('p'), term.Ctrl('k'), term.KeyUp:
			p.backward(max(n, 1))
		case 'g', '<', term.KeyHome:
			p.gotoLine(max(n, 1) - 1)
		case 'G', '>', term.KeyEnd:
			if n > 0 {
				p.gotoLine(n - 1)
			} else {
				p.top = p.maxTop()
			}
		case 'p', '%':
			p.d.all()
			p.gotoLine(len(p.d.lines) * min(n, 100) / 100)
		case term.KeyRight:
			p.shift += max(n, p.cols/2)
		case term.KeyLeft:
			p.shift = max(0, p.shift-max(n, p.cols/2))
		case '/', '?':
			pat, ok := p.readLine(string(rune(k)))
			if ok && p.setPattern(pat, k == '?') {
				p.search(false, n)
			}
		case 'n':
			p.search(false, n)
		case 'N':
			p.search(true, n)
		case '=', term.Ctrl('g'):
			last := p.lastShown()
			name := p.d.name
			if name == "" {
				name = "Standard input"
			}
			p.msg = fmt.Sprintf("%s lines %d-%d", name, p.top+1, last)
		case '-':
			switch k2, _ := p.keys.ReadKey(); k2 {
			case 'N':
				p.o.number = !p.o.number
				p.msg = map[bool]string{true: "Line numbers", false: "Don't use line numbers"}[p.o.number]
			case 'S':
				p.o.chop = !p.o.chop
				p.msg = map[bool]string{true: "Chop long lines", false: "Fold long lines"}[p.o.chop]
			}
		case ':':
			k2, _ := p.keys.ReadKey()
			switch k2 {
			case 'n':
				if !p.nextFile(1) {
					p.msg = "No next file"
				}
			case 'p':
				if !p.nextFile(-1) {
					p.msg = "No previous file"
				}
			case 'x':
				p.cur = -1
				p.nextFile(1)
			case 'q', 'Q':
				p.finish()
				return 0
			}
		case 'r', term.Ctrl('l'), term.Ctrl('r'):
			// Every key redraws; these do only that.
		case 'h', 'H':
			p.msg = "Keys: SPACE/b page, j/k line, d/u half page, g/G ends, /? search, n/N again, :n/:p file, q quit"
		}
	}
}

// drawPlain writes the whole (short) input as lines, as more does when
// it fits on the screen.
func (p *pager) drawPlain() {
	for n := 0; p.d.ensure(n); n++ {
		if p.o.number {
			fmt.Fprintf(p.out, "%7d ", n+1)
		}
		if p.o.color {
			text, pre, tail := expandSGR(p.d.lines[n], true)
			for k, r := range text {
				p.out.WriteString(pre[k])
				p.out.WriteRune(r)
			}
			p.out.WriteString(tail + "\x1b[m")
		} else {
			p.out.WriteString(string(expand(p.d.lines[n])))
		}
		p.out.WriteString("\r\n")
	}
	_ = p.out.Flush()
}

// finish leaves the terminal tidy: more's text stays on the screen with
// the prompt row cleared.
func (p *pager) finish() {
	if p.more {
		fmt.Fprintf(p.out, "\x1b[%d;1H\x1b[2K", p.rows)
	}
}
