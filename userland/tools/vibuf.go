package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/secexec/secexec/userland/internal/term"
)

// vi's buffer holds lines as rune slices that are never changed in
// place, so an undo step is a cheap copy of the slice of lines. Bytes
// that are not UTF-8 become runes in a private range (rawBase+byte) and
// are written back as they were: editing a file never changes bytes the
// user did not touch.

// rawBase is where invalid bytes are kept as runes: the last 256 code
// points of plane 16's private use area.
const rawBase = 0x10FF00

// maxText bounds what one command may add to the buffer (a count times
// a text, in characters, a line costing lineCost): "999999999p" is
// refused instead of exhausting memory or time.
const maxText = 4 << 20

// lineCost is what a line counts for against maxText: its slice header
// and allocation cost more than a character.
const lineCost = 32

// maxUndoLines bounds the line references all undo steps hold together.
const maxUndoLines = 4 << 20

func toRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r >= rawBase && r <= rawBase+0xff {
			r = rawBase + rune(s[i])
		}
		out = append(out, r)
		i += n
	}
	return out
}

func fromRunes(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		if r >= rawBase && r <= rawBase+0xff {
			b.WriteByte(byte(r - rawBase))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cat returns a new slice holding the parts one after another.
func cat(parts ...[]rune) []rune {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]rune, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// viError is an error message as vim words it ("E37: ...").
type viError string

func (e viError) Error() string { return string(e) }

var (
	errNoWrite     = viError("E37: No write since last change (add ! to override)")
	errNoFileName  = viError("E32: No file name")
	errNoPrevRE    = viError("E35: No previous regular expression")
	errInvalidRng  = viError("E16: Invalid range")
	errNoLines     = viError("--No lines in buffer--")
	errTooLong     = viError("E1240: Resulting text too long")
	errMarkNotSet  = viError("E20: Mark not set")
	errTrailing    = viError("E488: Trailing characters")
	errInterrupted = errors.New("interrupted")
)

// store saves yanked (yank) or deleted text in the unnamed register and
// the register the command names: "_ keeps nothing, an upper-case name
// appends, a yank also goes to "0.
func (e *editor) store(yank bool, r register) {
	name := e.regName
	e.regName = 0
	if name == '_' {
		return
	}
	if e.regs == nil {
		e.regs = map[rune]register{}
	}
	if name >= 'A' && name <= 'Z' {
		lower := name - 'A' + 'a'
		old := e.regs[lower]
		if old.linewise || r.linewise || len(old.text) == 0 {
			r = register{text: append(cloneLines(old.text), r.text...), linewise: old.linewise || r.linewise}
		} else {
			joined := cloneLines(old.text)
			joined[len(joined)-1] = cat(joined[len(joined)-1], r.text[0])
			r = register{text: append(joined, r.text[1:]...)}
		}
		name = lower
	}
	e.reg = r
	if yank {
		e.regs['0'] = r
	}
	if name >= 'a' && name <= 'z' || name >= '0' && name <= '9' {
		e.regs[name] = r
	}
}

// load0 returns the register the command names, else the unnamed one.
func (e *editor) load0() register {
	name := e.regName
	e.regName = 0
	switch {
	case name == 0 || name == '"' || name == '+' || name == '*':
		return e.reg
	case name >= 'A' && name <= 'Z':
		name = name - 'A' + 'a'
	}
	return e.regs[name]
}

// undoStep is one undo step.
type undoStep struct {
	lines    [][]rune
	noLines  bool
	cy, cx   int
	modified bool
}

// register is yanked or deleted text: whole lines, or characters (a
// multi-line piece has several parts).
type register struct {
	text     [][]rune
	linewise bool
}

type pos struct{ y, x int }

func (a pos) before(b pos) bool { return a.y < b.y || a.y == b.y && a.x < b.x }

// editor is the state of vi (and ex).
type editor struct {
	lines [][]rune
	// noLines marks a buffer with no lines at all (an empty file), which
	// still shows one empty line; it writes as zero bytes.
	noLines bool
	cy, cx  int
	// want is the column j and k aim for; -1 is the end of the line.
	want     int
	top      int
	rows     int
	cols     int
	file     string
	modified bool

	undo, redo []undoStep
	snapped    bool
	reg        register
	marks      map[rune]pos
	// regs are the named registers ("a to "z, "0 the last yank); regName
	// is the one the current command names ("x prefix), 0 for none.
	regs    map[rune]register
	regName rune
	// recording is the register q is recording into (0: none), macro
	// the keys so far; macroRuns counts @ replays within one typed
	// command, so "@a" inside register a ends.
	recording rune
	macro     []term.Key
	macroRuns int
	// replayLeft is how many of the pending keys (at their front) a "."
	// or @ replay put there.
	replayLeft int
	// depth is how deep :normal commands nest.
	depth int
	// args are the files named on the command line, argi the one being
	// edited (:n and :N move); warnedArgs is set once :q said that some
	// were not edited.
	args       []string
	argi       int
	warnedArgs bool
	hadLast    bool
	// resize re-reads the window size at every redraw (on a terminal).
	resize bool
	// shown holds the lines :p and friends printed in vi, which the
	// screen shows above a "Press ENTER" prompt.
	shown []string

	lastSearch     string
	lastSearchBack bool
	lastSubPat     string
	lastSubRep     string
	lastSubFlags   string
	lastFind       [2]rune // command (f F t T) and character
	lastMacro      rune    // the register @@ replays
	lastEx         string  // the command line @: repeats

	number, ignoreCase, autoindent, expandtab, list, readonly bool
	tabstop, shiftwidth                                       int

	msg      string
	exMode   bool // ex (-e): commands from the input, line by line
	silent   bool // -s: no messages
	errors   bool // an error happened (ex -s exits 1)
	quit     bool
	exitCode int

	// Key input: pending keys (a "." replay, :normal) come first.
	in      *term.Reader
	pending []term.Key
	rec     []term.Key
	// lastChange is the keys of the last change, for ".".
	lastChange []term.Key

	// exInput reads the next line of ex input; keysOnly ends a command
	// when the pending keys run out (:normal).
	exInput  func() (string, bool)
	keysOnly bool
	// lastCount is the count of the last change, which "." reuses.
	lastCount int
	// cmdline is the command line being typed, shown on the status row.
	cmdline string

	screen io.Writer // nil in ex mode
	out    io.Writer // ex's printing commands write here
	// gmarks marks the lines :g still has to visit.
	gmarks  []bool
	deleted int
	mode    string // "-- INSERT --" and the like, for the status row
	// inserting is set in insert and replace mode.
	inserting bool
	// writeFile, when set, replaces writing files (the fuzz tests must
	// not write where an input names).
	writeFile func(name, text string, add bool) error
	// size is the buffer's size as maxText counts it (characters, and
	// lineCost a line); limit bounds it (maxBuffer unless a test sets
	// less).
	size, limit int
}

func newEditor() *editor {
	return &editor{lines: [][]rune{{}}, noLines: true, marks: map[rune]pos{}, tabstop: 8, shiftwidth: 8, rows: 24, cols: 80, size: lineCost, limit: maxBuffer}
}

// maxBuffer bounds the buffer (in maxText's units): edits that would
// grow it past this are undone with errTooLong, so that repeated
// doubling (":%s/$/\r/g" again and again) ends in a message.
const maxBuffer = 64 << 20

// setLines replaces all the lines and recounts the size.
func (e *editor) setLines(ls [][]rune) {
	e.lines = ls
	e.size = 0
	for _, l := range ls {
		e.size += len(l) + lineCost
	}
}

// overLimit reports whether the buffer grew past its limit.
func (e *editor) overLimit() bool { return e.size > e.limit }

// revertIfTooBig undoes the current command's change when it made the
// buffer too big; it reports whether it did.
func (e *editor) revertIfTooBig() bool {
	if !e.overLimit() || len(e.undo) == 0 || !e.snapped {
		return false
	}
	s := e.undo[len(e.undo)-1]
	e.undo = e.undo[:len(e.undo)-1]
	e.restore(s)
	e.fail(errTooLong)
	return true
}

// load reads name into the buffer; a missing file is a new, empty one.
func (e *editor) load(name string) error {
	e.file = name
	e.setLines([][]rune{{}})
	e.noLines, e.cy, e.cx, e.top, e.modified = true, 0, 0, 0, false
	e.undo, e.redo = nil, nil
	e.marks = map[rune]pos{}
	b, err := readRegular(name)
	if errors.Is(err, errNotRegular) {
		e.msgf("%q is not a file", name)
		return nil
	}
	if errors.Is(err, os.ErrNotExist) {
		e.msgf("%q [New]", name)
		return nil
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && strings.Contains(err.Error(), "is a directory") {
			e.msgf("%q is a directory", name)
			return nil
		}
		e.msgf("%q [Permission Denied]", name)
		return nil
	}
	e.setText(string(b))
	e.msgf("%q %dL, %dB", name, e.lineCount(), len(b))
	return nil
}

// errNotRegular refuses to read a device or a directory as text: a
// read of /dev/zero would never end.
var errNotRegular = errors.New("not a regular file")

// readRegular reads a regular file.
func readRegular(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	return os.ReadFile(name)
}

// setText replaces the buffer with text.
func (e *editor) setText(s string) {
	if s == "" {
		e.setLines([][]rune{{}})
		e.noLines = true
		return
	}
	s = strings.TrimSuffix(s, "\n")
	parts := strings.Split(s, "\n")
	ls := make([][]rune, len(parts))
	for i, p := range parts {
		ls[i] = toRunes(p)
	}
	e.setLines(ls)
	e.noLines = false
}

// lineCount is the number of lines as files count them.
func (e *editor) lineCount() int {
	if e.noLines {
		return 0
	}
	return len(e.lines)
}

// text is the buffer's lines first..last as file bytes.
func (e *editor) text(first, last int) string {
	if e.noLines {
		return ""
	}
	var b strings.Builder
	for _, l := range e.lines[first : last+1] {
		b.WriteString(fromRunes(l))
		b.WriteByte('\n')
	}
	return b.String()
}

func (e *editor) msgf(format string, args ...any) {
	if e.silent {
		return
	}
	e.msg = fmt.Sprintf(format, args...)
}

// fail records an error message.
func (e *editor) fail(err error) {
	e.errors = true
	if !e.silent {
		e.msg = err.Error()
	}
}

// change is called before every modification: the first one of a
// command saves the undo step.
func (e *editor) change() {
	defer func() { e.modified = true }()
	if e.snapped {
		return
	}
	e.snapped = true
	e.undo = append(e.undo, undoStep{lines: append([][]rune(nil), e.lines...), noLines: e.noLines, cy: e.cy, cx: e.cx, modified: e.modified})
	e.redo = nil
	total := 0
	for _, s := range e.undo {
		total += len(s.lines)
	}
	for len(e.undo) > 1 && total > maxUndoLines {
		total -= len(e.undo[0].lines)
		e.undo = e.undo[1:]
	}
}

func (e *editor) restore(s undoStep) undoStep {
	cur := undoStep{lines: e.lines, noLines: e.noLines, cy: e.cy, cx: e.cx, modified: e.modified}
	e.setLines(s.lines)
	e.noLines, e.cy, e.cx, e.modified = s.noLines, s.cy, s.cx, s.modified
	e.clampCursor()
	return cur
}

func (e *editor) doUndo(n int) {
	if len(e.undo) == 0 {
		e.msgf("Already at oldest change")
		return
	}
	for ; n > 0 && len(e.undo) > 0; n-- {
		s := e.undo[len(e.undo)-1]
		e.undo = e.undo[:len(e.undo)-1]
		e.redo = append(e.redo, e.restore(s))
	}
	e.msgf("%d changes; before #%d", 1, len(e.undo)+1)
}

func (e *editor) doRedo(n int) {
	if len(e.redo) == 0 {
		e.msgf("Already at newest change")
		return
	}
	for ; n > 0 && len(e.redo) > 0; n-- {
		s := e.redo[len(e.redo)-1]
		e.redo = e.redo[:len(e.redo)-1]
		e.undo = append(e.undo, e.restore(s))
	}
	e.msgf("%d changes; after #%d", 1, len(e.undo))
}

// setLine replaces line y.
func (e *editor) setLine(y int, l []rune) {
	e.change()
	e.size += len(l) - len(e.lines[y])
	e.lines[y] = l
	e.noLines = false
}

// insertLines puts ls before line at.
func (e *editor) insertLines(at int, ls [][]rune) {
	if len(ls) == 0 {
		return
	}
	e.change()
	if e.noLines {
		// The one empty line of an empty buffer is not a line.
		e.setLines(append([][]rune(nil), ls...))
		e.noLines = false
		if e.gmarks != nil {
			e.gmarks = make([]bool, len(e.lines))
		}
		return
	}
	nl := make([][]rune, 0, len(e.lines)+len(ls))
	nl = append(append(append(nl, e.lines[:at]...), ls...), e.lines[at:]...)
	e.lines = nl
	for _, l := range ls {
		e.size += len(l) + lineCost
	}
	if e.gmarks != nil {
		gm := make([]bool, 0, len(nl))
		gm = append(append(append(gm, e.gmarks[:at]...), make([]bool, len(ls))...), e.gmarks[at:]...)
		e.gmarks = gm
	}
	for k, m := range e.marks {
		if m.y >= at {
			e.marks[k] = pos{m.y + len(ls), m.x}
		}
	}
}

// deleteLines removes lines first..last; an empty buffer keeps one empty
// line (and noLines).
func (e *editor) deleteLines(first, last int) {
	e.change()
	n := last - first + 1
	e.deleted += n
	for _, l := range e.lines[first : last+1] {
		e.size -= len(l) + lineCost
	}
	nl := make([][]rune, 0, len(e.lines)-n)
	nl = append(append(nl, e.lines[:first]...), e.lines[last+1:]...)
	if e.gmarks != nil {
		e.gmarks = append(append([]bool(nil), e.gmarks[:first]...), e.gmarks[last+1:]...)
	}
	for k, m := range e.marks {
		switch {
		case m.y > last:
			e.marks[k] = pos{m.y - n, m.x}
		case m.y >= first:
			delete(e.marks, k)
		}
	}
	if len(nl) == 0 {
		nl, e.noLines = [][]rune{{}}, true
		e.size = lineCost
		if e.gmarks != nil {
			e.gmarks = []bool{false}
		}
	}
	e.lines = nl
}

// clampCursor keeps the cursor on a character (after the last one in
// insert and replace mode).
func (e *editor) clampCursor() {
	e.cy = max(0, min(e.cy, len(e.lines)-1))
	end := len(e.lines[e.cy]) - 1
	if e.inserting {
		end++
	}
	e.cx = max(0, min(e.cx, end))
}

// firstNonBlank is the column of line y's first non-blank character.
func (e *editor) firstNonBlank(y int) int {
	l := e.lines[y]
	for i, r := range l {
		if r != ' ' && r != '\t' {
			return i
		}
	}
	return max(0, len(l)-1)
}

// write writes lines first..last to name (appending with add); it
// returns vim's message.
func (e *editor) write(name string, first, last int, add bool) (string, error) {
	_, statErr := os.Stat(name)
	isNew := errors.Is(statErr, os.ErrNotExist)
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if add {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	text := e.text(first, last)
	if e.writeFile != nil {
		if err := e.writeFile(name, text, add); err != nil {
			return "", err
		}
	} else {
		f, err := os.OpenFile(name, flags, 0o644)
		if err != nil {
			return "", viError("E212: Can't open file for writing")
		}
		if _, err := io.WriteString(f, text); err != nil {
			f.Close()
			return "", viError(fmt.Sprintf("E514: Write error (file system full?): %v", err))
		}
		if err := f.Close(); err != nil {
			return "", viError(fmt.Sprintf("E514: Write error (file system full?): %v", err))
		}
	}
	n := last - first + 1
	if e.noLines {
		n = 0
	}
	newTag := ""
	if isNew {
		newTag = " [New]"
	}
	if add {
		return fmt.Sprintf("%q %dL, %dB appended", name, n, len(text)), nil
	}
	return fmt.Sprintf("%q%s %dL, %dB written", name, newTag, n, len(text)), nil
}

// vimRegexp compiles a vim pattern (the default 'magic' syntax) as a Go
// regular expression. lastRep is the previous substitute string, which
// "~" stands for.
func vimRegexp(pat string, ignoreCase bool, lastRep string) (*regexp.Regexp, error) {
	var b strings.Builder
	icase := ignoreCase
	rs := []rune(pat)
	// atStart is true where ^ is an anchor and * a literal.
	atStart := true
	veryMagic := false
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		start := atStart
		atStart = false
		if veryMagic {
			// In \v patterns ( ) | + ? = { < > are special bare and
			// literal with a backslash: swap them into magic syntax.
			if strings.ContainsRune("()|+?={<>@%", r) {
				rs = append(rs[:i:i], append([]rune{'\\', r}, rs[i+1:]...)...)
				r = '\\'
			} else if r == '\\' && i+1 < len(rs) && strings.ContainsRune("()|+?={<>@%", rs[i+1]) {
				b.WriteString(regexp.QuoteMeta(string(rs[i+1])))
				i++
				continue
			}
		}
		switch r {
		case '\\':
			if i+1 >= len(rs) {
				b.WriteString(`\\`)
				continue
			}
			i++
			switch c := rs[i]; c {
			case '(':
				b.WriteString("(")
				atStart = true
			case ')':
				b.WriteString(")")
			case '|':
				b.WriteString("|")
				atStart = true
			case '+', '?', '=':
				if c == '=' {
					c = '?'
				}
				b.WriteRune(c)
			case '{':
				j := i + 1
				for j < len(rs) && rs[j] != '}' {
					j++
				}
				if j >= len(rs) {
					return nil, viError("E60: Too many complex \\{...}s")
				}
				inner := strings.TrimSuffix(string(rs[i+1:j]), `\`)
				lazy := strings.HasPrefix(inner, "-")
				inner = strings.TrimPrefix(inner, "-")
				if inner == "" {
					b.WriteString("*")
				} else {
					if strings.HasPrefix(inner, ",") {
						inner = "0" + inner
					}
					b.WriteString("{" + inner + "}")
				}
				if lazy {
					b.WriteString("?")
				}
				i = j
			case '<', '>':
				b.WriteString(`\b`)
			case 's', 'S', 'd', 'D', 'w', 'W':
				b.WriteString(`\` + string(c))
			case 'a':
				b.WriteString(`[A-Za-z]`)
			case 'l':
				b.WriteString(`[a-z]`)
			case 'u':
				b.WriteString(`[A-Z]`)
			case 'x':
				b.WriteString(`[0-9A-Fa-f]`)
			case 'n':
				b.WriteString(`\n`)
			case 't':
				b.WriteString(`\t`)
			case 'e':
				b.WriteString(`\x1b`)
			case 'r':
				b.WriteString(`\r`)
			case 'v':
				veryMagic = true
				atStart = start
			case 'm', 'M', 'V':
				veryMagic = false
				atStart = start
			case 'c':
				icase = true
			case 'C':
				icase = false
			default:
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
		case '^':
			if start {
				b.WriteString("^")
				atStart = true
			} else {
				b.WriteString(`\^`)
			}
		case '$':
			end := i+1 == len(rs) || i+2 < len(rs) && rs[i+1] == '\\' && (rs[i+2] == '|' || rs[i+2] == ')')
			if end {
				b.WriteString("$")
			} else {
				b.WriteString(`\$`)
			}
		case '*':
			if start {
				b.WriteString(`\*`)
			} else {
				b.WriteString("*")
			}
		case '.':
			b.WriteString(".")
		case '~':
			b.WriteString(regexp.QuoteMeta(lastRep))
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '^' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			var cls strings.Builder
			cls.WriteString("[")
			k := i + 1
			if rs[k] == '^' {
				cls.WriteString("^")
				k++
			}
			for ; k < j; k++ {
				c := rs[k]
				switch {
				case c == '\\' && k+1 < j:
					k++
					switch rs[k] {
					case 'n':
						cls.WriteString(`\n`)
					case 't':
						cls.WriteString(`\t`)
					case 'e':
						cls.WriteString(`\x1b`)
					default:
						cls.WriteString(`\` + string(rs[k]))
					}
				case c == '[' && k+1 < j && rs[k+1] == ':':
					end := strings.Index(string(rs[k:j]), ":]")
					if end < 0 {
						cls.WriteString(`\[`)
						continue
					}
					cls.WriteString(string(rs[k : k+end+2]))
					k += end + 1
				case c == '[' || c == ']' && k > i+1:
					cls.WriteString(`\` + string(c))
				default:
					cls.WriteRune(c)
				}
			}
			cls.WriteString("]")
			b.WriteString(cls.String())
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	expr := b.String()
	if icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, viError("E383: Invalid search string: " + pat)
	}
	return re, nil
}

// expandReplacement builds the replacement of one match: & and \0 the
// match, \1..\9 groups, \r (and \n) a line break, \t a tab, ~ the
// previous replacement, \u \l \U \L \E case changes.
func expandReplacement(rep string, line []rune, m []int, lastRep string) []rune {
	var out []rune
	caseOne, caseAll := rune(0), rune(0)
	add := func(rs ...rune) {
		for _, r := range rs {
			switch caseOne {
			case 'u':
				r = []rune(strings.ToUpper(string(r)))[0]
			case 'l':
				r = []rune(strings.ToLower(string(r)))[0]
			default:
				switch caseAll {
				case 'U':
					r = []rune(strings.ToUpper(string(r)))[0]
				case 'L':
					r = []rune(strings.ToLower(string(r)))[0]
				}
			}
			caseOne = 0
			out = append(out, r)
		}
	}
	group := func(g int) []rune {
		if 2*g+1 >= len(m) || m[2*g] < 0 {
			return nil
		}
		return line[m[2*g]:m[2*g+1]]
	}
	rs := []rune(rep)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '&':
			add(group(0)...)
		case r == '~':
			add([]rune(lastRep)...)
		case r == '\\' && i+1 < len(rs):
			i++
			switch c := rs[i]; {
			case c >= '0' && c <= '9':
				add(group(int(c - '0'))...)
			case c == 'r' || c == 'n':
				out = append(out, '\n')
			case c == 't':
				add('\t')
			case c == 'u' || c == 'l':
				caseOne = c
			case c == 'U' || c == 'L':
				caseAll = c
			case c == 'E' || c == 'e':
				caseAll = 0
			default:
				add(c)
			}
		case r == '\r':
			out = append(out, '\n')
		default:
			add(r)
		}
	}
	return out
}

// matchIndex finds re in line; it returns rune offsets of the match and
// its groups, or nil.
func matchIndex(re *regexp.Regexp, line []rune) []int {
	ms := submatchRunes(re, line, 1)
	if len(ms) == 0 {
		return nil
	}
	return ms[0]
}

// submatchRunes finds up to n matches of re in line (all for n < 0), as
// rune offsets of each match and its groups (-1 for a group that did not
// take part).
func submatchRunes(re *regexp.Regexp, line []rune, n int) [][]int {
	// Raw bytes are runes of their own (rawBase+b), so string(line) is
	// valid UTF-8 whose offsets convert to rune offsets exactly.
	s := string(line)
	locs := re.FindAllStringSubmatchIndex(s, n)
	if len(locs) == 0 {
		return nil
	}
	// One pass converts every byte offset (they come in order per group
	// only, so a map from byte to rune offset serves them all).
	toRune := make(map[int]int, 2*len(locs))
	for _, loc := range locs {
		for _, b := range loc {
			if b >= 0 {
				toRune[b] = 0
			}
		}
	}
	ri := 0
	for bi := range s {
		if _, ok := toRune[bi]; ok {
			toRune[bi] = ri
		}
		ri++
	}
	if _, ok := toRune[len(s)]; ok {
		toRune[len(s)] = ri
	}
	out := make([][]int, len(locs))
	for i, loc := range locs {
		m := make([]int, len(loc))
		for j, b := range loc {
			if b < 0 {
				m[j] = -1
			} else {
				m[j] = toRune[b]
			}
		}
		out[i] = m
	}
	return out
}
