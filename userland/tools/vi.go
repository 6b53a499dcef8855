package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/secexec/secexec/userland/internal/term"
)

// vi (also vim, view, ex) is a modal editor after vim's defaults: the
// normal-mode commands, counts and operators people and agents type, the
// ex command line, "." for simple changes, undo and redo, and ex mode
// (ex, vi -e, vi -es) reading commands from standard input, which is
// what scripts use. It draws with plain ANSI sequences.

// maxCount bounds a typed count; what a count repeats is bounded again
// by the buffer (lines, columns) or by maxText.
const maxCount = 999999999

// maxMacroRuns bounds the @ replays one typed command starts (a macro
// that calls itself).
const maxMacroRuns = 1000

// keysToRunes turns recorded keys back into the text of a register
// (special keys as the sequences a terminal sends).
func keysToRunes(keys []term.Key) []rune {
	var out []rune
	for _, k := range keys {
		switch k {
		case term.KeyUp, term.KeyDown, term.KeyRight, term.KeyLeft:
			out = append(out, 0x1b, '[', rune("ABCD"[term.KeyUp-k]))
		case term.KeyHome, term.KeyEnd:
			out = append(out, 0x1b, '[', rune("HF"[term.KeyHome-k]))
		default:
			if k >= 0 {
				out = append(out, rune(k))
			}
		}
	}
	return out
}

// maxKeyRepeat bounds the keys a count replays in insert mode when they
// are not plain text (arrows, backspace), which cost more each.
const maxKeyRepeat = 1 << 16

// key returns the next key: a pending one (a "." replay or :normal)
// first, else one from the input. With keysOnly set, running out of
// pending keys ends the command (errInterrupted).
func (e *editor) key() (term.Key, error) {
	if len(e.pending) > 0 {
		k := e.pending[0]
		e.pending = e.pending[1:]
		e.rec = append(e.rec, k)
		if e.replayLeft > 0 {
			// A "." or @ replay: q records the command, not its keys.
			e.replayLeft--
		} else if e.recording != 0 && !e.keysOnly && len(e.macro) < maxKeyRepeat {
			// Keys of :normal are not typed: vim does not record them.
			e.macro = append(e.macro, k)
		}
		return k, nil
	}
	if e.keysOnly || e.in == nil {
		return 0, errInterrupted
	}
	if e.in.Buffered() == 0 {
		e.render()
	}
	k, err := e.in.ReadKey()
	if err != nil {
		return 0, err
	}
	e.rec = append(e.rec, k)
	if e.recording != 0 && len(e.macro) < maxKeyRepeat {
		e.macro = append(e.macro, k)
	}
	return k, nil
}

// isWord reports whether r is a keyword character.
func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func isBlank(r rune) bool { return r == ' ' || r == '\t' }

// class is the word class of a character: 0 blank, 1 punctuation, 2
// keyword; with big (W, B, E) every non-blank is one class.
func class(r rune, big bool) int {
	switch {
	case isBlank(r):
		return 0
	case big || isWord(r):
		return 2
	}
	return 1
}

// charAt is the character at p; an empty line reads as a blank at
// column 0 and as the end of a word.
func (e *editor) charAt(p pos) (rune, bool) {
	l := e.lines[p.y]
	if p.x < len(l) {
		return l[p.x], true
	}
	return ' ', false
}

// next moves p one character forward across lines; ok is false at the
// end of the buffer. Each line's end (after its last character) counts
// as one position, where an empty line is a word of its own.
func (e *editor) next(p pos) (pos, bool) {
	if p.x+1 < len(e.lines[p.y]) {
		return pos{p.y, p.x + 1}, true
	}
	if p.y+1 < len(e.lines) {
		return pos{p.y + 1, 0}, true
	}
	return p, false
}

func (e *editor) prev(p pos) (pos, bool) {
	if p.x > 0 {
		return pos{p.y, min(p.x-1, max(0, len(e.lines[p.y])-1))}, true
	}
	if p.y > 0 {
		return pos{p.y - 1, max(0, len(e.lines[p.y-1])-1)}, true
	}
	return p, false
}

// clsAt is the class at p, with an empty line its own class (-1).
func (e *editor) clsAt(p pos, big bool) int {
	if len(e.lines[p.y]) == 0 {
		return -1
	}
	r, _ := e.charAt(p)
	return class(r, big)
}

// wordForward is w: the start of the next word.
func (e *editor) wordForward(p pos, big bool) pos {
	c := e.clsAt(p, big)
	startLine := p.y
	for {
		q, ok := e.next(p)
		if !ok {
			// The end of the buffer: w stops after the last character.
			return pos{p.y, len(e.lines[p.y])}
		}
		p = q
		nc := e.clsAt(p, big)
		if p.y != startLine {
			// A new line starts a word unless it begins with blanks.
			if nc == -1 || nc > 0 {
				return p
			}
			c, startLine = 0, p.y
			continue
		}
		if nc != c && nc != 0 {
			return p
		}
		if nc == 0 {
			c = 0
		}
	}
}

// wordEnd is e: the end of the next word.
func (e *editor) wordEnd(p pos, big bool) pos {
	q, ok := e.next(p)
	if !ok {
		return p
	}
	p = q
	for e.clsAt(p, big) <= 0 {
		q, ok := e.next(p)
		if !ok {
			return p
		}
		p = q
	}
	c := e.clsAt(p, big)
	for {
		q, ok := e.next(p)
		if !ok || q.y != p.y || e.clsAt(q, big) != c {
			return p
		}
		p = q
	}
}

// wordBack is b: the start of this or the previous word.
func (e *editor) wordBack(p pos, big bool) pos {
	q, ok := e.prev(p)
	if !ok {
		return pos{0, 0}
	}
	p = q
	for e.clsAt(p, big) == 0 {
		q, ok := e.prev(p)
		if !ok {
			return p
		}
		p = q
	}
	c := e.clsAt(p, big)
	if c == -1 {
		return p
	}
	for p.x > 0 {
		q := pos{p.y, p.x - 1}
		if e.clsAt(q, big) != c {
			break
		}
		p = q
	}
	return p
}

// motionResult is where a motion goes and how an operator treats it.
type motionResult struct {
	to        pos
	linewise  bool
	inclusive bool
}

// motion reads and runs the motion starting with k. forOp is set when an
// operator waits for it (w and l behave a little differently then).
func (e *editor) motion(k term.Key, count int, hasCount bool, forOp term.Key) (motionResult, error) {
	cur := pos{e.cy, e.cx}
	n := max(count, 1)
	last := len(e.lines) - 1
	lineLen := len(e.lines[e.cy])
	fail := viError("")
	switch k {
	case 'h', term.KeyLeft, term.Ctrl('h'), 0x7f:
		if e.cx == 0 {
			return motionResult{}, fail
		}
		return motionResult{to: pos{e.cy, max(0, e.cx-n)}}, nil
	case 'l', term.KeyRight, ' ':
		limit := lineLen - 1
		if forOp != 0 {
			limit = lineLen
		}
		if e.cx >= limit {
			return motionResult{}, fail
		}
		return motionResult{to: pos{e.cy, min(limit, e.cx+n)}}, nil
	case 'j', term.KeyDown, term.Ctrl('n'), term.Ctrl('j'), 'k', term.KeyUp, term.Ctrl('p'):
		d := n
		if k == 'k' || k == term.KeyUp || k == term.Ctrl('p') {
			d = -n
		}
		// A count past the first or last line stops there (vim); only a
		// cursor already on it cannot move.
		if d > 0 && e.cy == last || d < 0 && e.cy == 0 {
			return motionResult{}, fail
		}
		y := max(0, min(e.cy+d, last))
		return motionResult{to: pos{y, e.colFor(y)}, linewise: true}, nil
	case '+', '\r', term.Ctrl('m'), '-', '_':
		y := e.cy + n
		if k == '-' {
			y = e.cy - n
		}
		if k == '_' {
			y = e.cy + n - 1
		}
		if y < 0 || y > last {
			return motionResult{}, fail
		}
		return motionResult{to: pos{y, e.firstNonBlank(y)}, linewise: true}, nil
	case '0', term.KeyHome:
		return motionResult{to: pos{e.cy, 0}}, nil
	case '^':
		return motionResult{to: pos{e.cy, e.firstNonBlank(e.cy)}}, nil
	case '$', term.KeyEnd:
		y := min(e.cy+n-1, last)
		e.want = -1
		return motionResult{to: pos{y, max(0, len(e.lines[y])-1)}, inclusive: true}, nil
	case '|':
		return motionResult{to: pos{e.cy, max(0, min(n-1, lineLen-1))}}, nil
	case 'w', 'W':
		p := cur
		for i := 0; i < n; i++ {
			q := e.wordForward(p, k == 'W')
			// An operator's last word stops at the end of its line.
			if forOp != 0 && i == n-1 && q.y > p.y {
				q = pos{p.y, len(e.lines[p.y])}
			}
			if q == p {
				break // the end of the buffer: a huge count stops here
			}
			p = q
		}
		return motionResult{to: p}, nil
	case 'e', 'E':
		p := cur
		for i := 0; i < n; i++ {
			q := e.wordEnd(p, k == 'E')
			if q == p {
				break
			}
			p = q
		}
		return motionResult{to: p, inclusive: true}, nil
	case 'b', 'B':
		p := cur
		for i := 0; i < n; i++ {
			q := e.wordBack(p, k == 'B')
			if q == p {
				break
			}
			p = q
		}
		return motionResult{to: p}, nil
	case 'G':
		y := last
		if hasCount {
			y = min(count, len(e.lines)) - 1
		}
		return motionResult{to: pos{y, e.firstNonBlank(y)}, linewise: true}, nil
	case 'H', 'L', 'M':
		// The screen's top may be past the end after a deletion that was
		// not drawn yet (keys that came together).
		rows, top := e.textRows(), min(e.top, last)
		bottom := min(top+rows-1, last)
		y := top + n - 1
		switch k {
		case 'L':
			y = bottom - n + 1
		case 'M':
			y = (top + bottom) / 2
		}
		y = max(top, min(y, bottom))
		return motionResult{to: pos{y, e.firstNonBlank(y)}, linewise: true}, nil
	case 'g':
		k2, err := e.key()
		if err != nil {
			return motionResult{}, err
		}
		switch k2 {
		case 'g':
			y := 0
			if hasCount {
				y = min(count, len(e.lines)) - 1
			}
			return motionResult{to: pos{y, e.firstNonBlank(y)}, linewise: true}, nil
		case '_':
			y := min(e.cy+n-1, last)
			x := len(e.lines[y]) - 1
			for x > 0 && isBlank(e.lines[y][x]) {
				x--
			}
			return motionResult{to: pos{y, max(0, x)}, inclusive: true}, nil
		case 'e', 'E':
			// ge: back to the end of the previous word.
			big := k2 == 'E'
			p := cur
			for i := 0; i < n && p != (pos{0, 0}); i++ {
				c, startY := e.clsAt(p, big), p.y
				q, ok := e.prev(p)
				for ok && q.y == startY && c > 0 && e.clsAt(q, big) == c {
					p = q
					q, ok = e.prev(p)
				}
				if !ok {
					p = pos{0, 0}
					break
				}
				p = q
				for e.clsAt(p, big) == 0 {
					q, ok := e.prev(p)
					if !ok {
						break
					}
					p = q
				}
			}
			return motionResult{to: p, inclusive: true}, nil
		}
		return motionResult{}, fail
	case 'f', 'F', 't', 'T':
		c, err := e.key()
		if err != nil {
			return motionResult{}, err
		}
		if c == term.Esc {
			return motionResult{}, fail
		}
		e.lastFind = [2]rune{rune(k), rune(c)}
		return e.find(rune(k), rune(c), n, false)
	case ';', ',':
		if e.lastFind[0] == 0 {
			return motionResult{}, fail
		}
		cmd := e.lastFind[0]
		if k == ',' {
			cmd = map[rune]rune{'f': 'F', 'F': 'f', 't': 'T', 'T': 't'}[cmd]
		}
		return e.find(cmd, e.lastFind[1], n, true)
	case '%':
		if hasCount {
			y := min((count*len(e.lines)+99)/100, len(e.lines)) - 1
			return motionResult{to: pos{max(y, 0), e.firstNonBlank(max(y, 0))}, linewise: true}, nil
		}
		p, ok := e.matchPair()
		if !ok {
			return motionResult{}, fail
		}
		return motionResult{to: p, inclusive: true}, nil
	case '{', '}':
		y := e.cy
		for i := 0; i < n; i++ {
			before := y
			if k == '}' {
				for y < last && len(e.lines[y]) == 0 {
					y++
				}
				for y < last && len(e.lines[y]) > 0 {
					y++
				}
			} else {
				for y > 0 && len(e.lines[y]) == 0 {
					y--
				}
				for y > 0 && len(e.lines[y]) > 0 {
					y--
				}
			}
			if y == before {
				break
			}
		}
		x := 0
		if k == '}' && y == last && len(e.lines[y]) > 0 {
			x = len(e.lines[y]) - 1
			if forOp != 0 {
				return motionResult{to: pos{y, x}, inclusive: true}, nil
			}
		}
		return motionResult{to: pos{y, x}}, nil
	case 'n', 'N', '*', '#', '/', '?':
		return e.searchMotion(k, n)
	case '\'', '`':
		c, err := e.key()
		if err != nil {
			return motionResult{}, err
		}
		m, ok := e.mark(rune(c))
		if !ok {
			return motionResult{}, errMarkNotSet
		}
		if k == '\'' {
			return motionResult{to: pos{m.y, e.firstNonBlank(m.y)}, linewise: true}, nil
		}
		return motionResult{to: pos{m.y, min(m.x, max(0, len(e.lines[m.y])-1))}}, nil
	}
	return motionResult{}, fail
}

// mark returns mark c's position.
func (e *editor) mark(c rune) (pos, bool) {
	if c == '\'' || c == '`' {
		if m, ok := e.marks['\'']; ok {
			return m, true
		}
		return pos{0, 0}, true
	}
	m, ok := e.marks[c]
	if ok && m.y >= len(e.lines) {
		return pos{}, false
	}
	return m, ok
}

// colFor is the character j and k land on in line y: the one at the
// screen column they aim for, or the last before it.
func (e *editor) colFor(y int) int {
	if e.want < 0 {
		return max(0, len(e.lines[y])-1)
	}
	_, starts := e.display(e.lines[y])
	x := 0
	for x+1 < len(e.lines[y]) && starts[x+1] <= e.want {
		x++
	}
	return x
}

// find is f, F, t and T.
func (e *editor) find(cmd, c rune, n int, repeat bool) (motionResult, error) {
	l := e.lines[e.cy]
	x := e.cx
	for i := 0; i < n; i++ {
		switch cmd {
		case 'f', 't':
			start := x + 1
			if cmd == 't' && repeat && i == 0 {
				start = x + 2
			}
			j := start
			for j < len(l) && l[j] != c {
				j++
			}
			if j >= len(l) {
				return motionResult{}, viError("")
			}
			x = j
		case 'F', 'T':
			start := x - 1
			if cmd == 'T' && repeat && i == 0 {
				start = x - 2
			}
			j := start
			for j >= 0 && l[j] != c {
				j--
			}
			if j < 0 {
				return motionResult{}, viError("")
			}
			x = j
		}
	}
	switch cmd {
	case 't':
		x--
	case 'T':
		x++
	}
	return motionResult{to: pos{e.cy, x}, inclusive: cmd == 'f' || cmd == 't'}, nil
}

// matchPair is %: the bracket matching the one at or after the cursor.
func (e *editor) matchPair() (pos, bool) {
	l := e.lines[e.cy]
	x := e.cx
	for x < len(l) && !strings.ContainsRune("(){}[]", l[x]) {
		x++
	}
	if x >= len(l) {
		return pos{}, false
	}
	open, close := l[x], l[x]
	dir := 1
	switch open {
	case '(':
		close = ')'
	case '[':
		close = ']'
	case '{':
		close = '}'
	case ')':
		close, dir = '(', -1
	case ']':
		close, dir = '[', -1
	case '}':
		close, dir = '{', -1
	}
	depth := 0
	p := pos{e.cy, x}
	for {
		r, ok := e.charAt(p)
		if ok && r == open {
			depth++
		} else if ok && r == close {
			depth--
			if depth == 0 {
				return p, true
			}
		}
		var more bool
		if dir > 0 {
			p, more = e.next(p)
		} else {
			p, more = e.prev(p)
		}
		if !more {
			return pos{}, false
		}
	}
}

// searchMotion is n, N, *, #, / and ?.
func (e *editor) searchMotion(k term.Key, n int) (motionResult, error) {
	back := e.lastSearchBack
	switch k {
	case '/', '?':
		pat, ok, err := e.readCmdline(string(rune(k)))
		if err != nil {
			return motionResult{}, err
		}
		if !ok {
			return motionResult{}, viError("")
		}
		if pat != "" {
			e.lastSearch = pat
		}
		e.lastSearchBack = k == '?'
		back = e.lastSearchBack
	case 'N':
		back = !back
	case '*', '#':
		l := e.lines[e.cy]
		x := e.cx
		for x < len(l) && !isWord(l[x]) {
			x++
		}
		if x >= len(l) {
			return motionResult{}, viError("E348: No string under cursor")
		}
		s := x
		for s > 0 && isWord(l[s-1]) {
			s--
		}
		end := x
		for end < len(l) && isWord(l[end]) {
			end++
		}
		e.lastSearch = `\<` + string(l[s:end]) + `\>`
		e.lastSearchBack = k == '#'
		back = e.lastSearchBack
		if !back {
			// Search from the word's start so the word itself is skipped.
			e.cx = s
		}
	}
	if e.lastSearch == "" {
		return motionResult{}, errNoPrevRE
	}
	re, err := vimRegexp(e.lastSearch, e.ignoreCase, e.lastSubRep)
	if err != nil {
		return motionResult{}, err
	}
	p := pos{e.cy, e.cx}
	q, wrapped, ok := e.searchFrom(re, p, back)
	if !ok {
		return motionResult{}, viError("E486: Pattern not found: " + e.lastSearch)
	}
	p = q
	if n > 1 {
		// A count steps through the list of all matches (cycling past
		// the end), one scan of the buffer however big the count.
		var all []pos
		for y, l := range e.lines {
			for _, m := range submatchRunes(re, l, -1) {
				all = append(all, pos{y, m[0]})
			}
		}
		k := 0
		for k < len(all) && all[k] != p {
			k++
		}
		if k < len(all) {
			step := (n - 1) % len(all)
			if back {
				step = -step
			}
			next := ((k+step)%len(all) + len(all)) % len(all)
			wrapped = wrapped || (back && next > k) || (!back && next < k)
			p = all[next]
		}
	}
	if wrapped {
		if back {
			e.msgf("search hit TOP, continuing at BOTTOM")
		} else {
			e.msgf("search hit BOTTOM, continuing at TOP")
		}
	} else if !e.silent {
		dir := "/"
		if back {
			dir = "?"
		}
		e.msg = dir + e.lastSearch
	}
	return motionResult{to: p}, nil
}

// searchFrom finds the next match after p (before p when back),
// wrapping around the end of the buffer.
func (e *editor) searchFrom(re *regexp.Regexp, p pos, back bool) (pos, bool, bool) {
	n := len(e.lines)
	for k := 0; k <= n; k++ {
		var y int
		if back {
			y = ((p.y-k)%n + n) % n
		} else {
			y = (p.y + k) % n
		}
		wrapped := back && p.y-k < 0 || !back && p.y+k >= n
		var starts []int
		for _, m := range submatchRunes(re, e.lines[y], -1) {
			starts = append(starts, m[0])
		}
		if back {
			for i := len(starts) - 1; i >= 0; i-- {
				if k > 0 || starts[i] < p.x {
					if k == n && starts[i] < p.x {
						continue
					}
					return pos{y, starts[i]}, wrapped, true
				}
			}
		} else {
			for _, x := range starts {
				if k > 0 || x > p.x {
					if k == n && x > p.x {
						continue
					}
					return pos{y, x}, wrapped, true
				}
			}
		}
	}
	return pos{}, false, false
}

// textRows is the rows for text (the last one is the status row).
func (e *editor) textRows() int { return max(1, e.rows-1) }

// normalCommand reads and runs one normal-mode command.
func (e *editor) normalCommand() error {
	e.rec = e.rec[:0]
	e.snapped = false
	k, err := e.key()
	if err != nil {
		return err
	}
	if len(e.pending) == 0 {
		e.macroRuns = 0
	}
	k, count, hasCount, err := e.prefix(k)
	if err != nil {
		return err
	}
	changed, err := e.command(k, count, hasCount)
	if !keepsColumn(k) {
		e.clampCursor()
		e.want = e.vcol()
	}
	if e.overLimit() {
		if !e.keysOnly {
			e.revertIfTooBig()
		}
		return errTooLong
	}
	if changed && err != errInterrupted {
		// Remember the change without its count, for ".".
		keys := append([]term.Key(nil), e.rec...)
		for len(keys) > 0 && keys[0] >= '0' && keys[0] <= '9' {
			keys = keys[1:]
		}
		e.lastChange = keys
		e.lastCount = count
	}
	if err != nil {
		if _, ok := err.(viError); ok {
			// A failing command ends the macro that ran it, as in vim.
			e.pending = e.pending[min(e.replayLeft, len(e.pending)):]
			e.replayLeft = 0
			// An empty message is a beep (a motion that cannot move), which
			// vim does not count as an error.
			if err.Error() != "" {
				e.fail(err)
			}
			return nil
		}
		return err
	}
	return nil
}

// command runs normal-mode command k; changed says whether it changed
// the buffer in a way "." repeats.
func (e *editor) command(k term.Key, count int, hasCount bool) (changed bool, err error) {
	n := max(count, 1)
	switch k {
	case term.Esc:
		return false, nil
	case ':':
		line, ok, err := e.readCmdline(":")
		if err != nil || !ok {
			return false, err
		}
		if hasCount {
			line = fmt.Sprintf(".,.+%d", count-1) + line
		}
		e.lastEx = line
		e.snapped = false
		if err := e.exLine(line); err != nil {
			e.fail(err)
		}
		e.clampCursor()
		if e.overLimit() {
			return false, errTooLong
		}
		return false, nil
	case 'i', 'a', 'I', 'A', 'o', 'O', term.KeyInsert:
		switch k {
		case 'a':
			if len(e.lines[e.cy]) > 0 {
				e.cx++
			}
		case 'I':
			e.cx = e.firstNonBlank(e.cy)
			if len(e.lines[e.cy]) > 0 && isBlank(e.lines[e.cy][e.cx]) {
				e.cx = len(e.lines[e.cy])
			}
		case 'A':
			e.cx = len(e.lines[e.cy])
		case 'o', 'O':
			at := e.cy + 1
			if k == 'O' {
				at = e.cy
			}
			indent := e.indentOf(e.cy)
			if e.noLines {
				e.change()
				e.noLines = false
				at = min(at, 1)
				if k == 'O' {
					at = 0
				}
				if at == 0 {
					e.setLines([][]rune{indent, {}})
				} else {
					e.setLines([][]rune{{}, indent})
				}
			} else {
				e.insertLines(at, [][]rune{indent})
			}
			e.cy, e.cx = at, len(indent)
			return true, e.insert(n, k)
		}
		return true, e.insert(n, k)
	case 'R':
		return true, e.replaceMode()
	case 'x', term.KeyDelete, 'X', 'D', 'C', 's', 'S', 'Y':
		op, motionKey := term.Key('d'), term.Key('l')
		switch k {
		case 'X':
			motionKey = 'h'
		case 'D':
			motionKey = '$'
		case 'C':
			op, motionKey = 'c', '$'
		case 's':
			op = 'c'
		case 'S':
			op, motionKey = 'c', 'c'
		case 'Y':
			op, motionKey = 'y', 'y'
		}
		if (k == 'x' || k == term.KeyDelete || k == 's') && len(e.lines[e.cy]) == 0 {
			if k == 's' {
				return true, e.insert(1, 'i')
			}
			return false, viError("")
		}
		return op != 'y', e.operator(op, motionKey, count, hasCount)
	case 'd', 'c', 'y', '>', '<', '!', '=':
		if k == '!' || k == '=' {
			return false, viError("")
		}
		m, err := e.key()
		if err != nil {
			return false, err
		}
		// A count may also come between the operator and its motion.
		c2, has2 := 0, false
		for (m >= '1' && m <= '9') || (m == '0' && has2) {
			c2 = min(c2*10+int(m-'0'), maxCount)
			has2 = true
			if m, err = e.key(); err != nil {
				return false, err
			}
		}
		if has2 {
			count = min(max(count, 1)*c2, maxCount)
			hasCount = true
		}
		return k != 'y', e.operator(k, m, count, hasCount)
	case 'p', 'P':
		return true, e.put(k == 'P', n)
	case 'r':
		c, err := e.key()
		if err != nil || c == term.Esc {
			return false, err
		}
		l := e.lines[e.cy]
		if e.cx+n > len(l) {
			return false, viError("")
		}
		if c == '\r' {
			e.setLine(e.cy, cat(l[:e.cx]))
			e.insertLines(e.cy+1, [][]rune{cat(l[e.cx+n:])})
			e.cy, e.cx = e.cy+1, 0
			return true, nil
		}
		nl := cat(l)
		for i := 0; i < n; i++ {
			nl[e.cx+i] = rune(c)
		}
		e.setLine(e.cy, nl)
		e.cx += n - 1
		return true, nil
	case 'J':
		last := e.cy + max(n, 2) - 1
		if e.cy+1 >= len(e.lines) {
			return false, viError("")
		}
		e.join(e.cy, min(last, len(e.lines)-1), true)
		return true, nil
	case '~':
		l := cat(e.lines[e.cy])
		if len(l) == 0 {
			return false, nil
		}
		end := min(e.cx+n, len(l))
		for i := e.cx; i < end; i++ {
			if unicode.IsUpper(l[i]) {
				l[i] = unicode.ToLower(l[i])
			} else {
				l[i] = unicode.ToUpper(l[i])
			}
		}
		e.setLine(e.cy, l)
		e.cx = min(end, len(l)-1)
		return true, nil
	case 'u':
		e.doUndo(n)
		e.clampCursor()
		return false, nil
	case term.Ctrl('r'):
		e.doRedo(n)
		e.clampCursor()
		return false, nil
	case '.':
		if len(e.lastChange) == 0 {
			return false, nil
		}
		keys := e.lastChange
		if hasCount {
			keys = append(term.Parse([]byte(strconv.Itoa(count))), keys...)
		} else if e.lastCount > 0 {
			keys = append(term.Parse([]byte(strconv.Itoa(e.lastCount))), keys...)
		}
		saved := e.lastChange
		e.pending = append(append([]term.Key(nil), keys...), e.pending...)
		e.replayLeft += len(keys)
		pendingBefore := len(e.pending) - len(keys)
		for len(e.pending) > pendingBefore && !e.quit {
			before := len(e.pending)
			if _, err := e.commandFromPending(); err != nil {
				// What is left of a failed replay must not run as typed.
				dropped := max(0, len(e.pending)-pendingBefore)
				e.pending = e.pending[dropped:]
				e.replayLeft = max(0, e.replayLeft-dropped)
				e.lastChange = saved
				return false, err
			}
			if len(e.pending) >= before {
				break
			}
		}
		// "." keeps repeating with the count it was last given.
		e.lastChange = saved
		if hasCount {
			e.lastCount = count
		}
		return false, nil
	case 'Z':
		k2, err := e.key()
		if err != nil {
			return false, err
		}
		switch k2 {
		case 'Z':
			return false, e.exLine("x")
		case 'Q':
			return false, e.exLine("q!")
		}
		return false, viError("")
	case 'q':
		if e.recording != 0 {
			// The q that stops the recording is not part of it.
			keys := e.macro[:max(0, len(e.macro)-1)]
			e.regName = e.recording
			e.recording = 0
			e.store(false, register{text: [][]rune{keysToRunes(keys)}})
			e.msg = ""
			return false, nil
		}
		c, err := e.key()
		if err != nil {
			return false, err
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false, viError("")
		}
		e.recording, e.macro = rune(c), nil
		e.msgf("recording @%c", c)
		return false, nil
	case '@':
		c, err := e.key()
		if err != nil {
			return false, err
		}
		if c == '@' {
			c = term.Key(e.lastMacro)
		}
		if c == ':' {
			return false, e.exLine(e.lastEx)
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '"') {
			return false, viError("")
		}
		e.lastMacro = rune(c)
		e.regName = rune(c)
		r := e.load0()
		var keys []term.Key
		for i, l := range r.text {
			if i > 0 || r.linewise {
				keys = append(keys, '\r')
			}
			keys = append(keys, term.Parse([]byte(fromRunes(l)))...)
		}
		if r.linewise {
			keys = append(keys[1:], '\r')
		}
		if len(keys) == 0 {
			return false, viError("")
		}
		// Keys replayed cost a command each (and a command may cost a
		// pass over the buffer): bound them, not just the text.
		if e.macroRuns++; e.macroRuns > maxMacroRuns || len(keys)*n > maxKeyRepeat {
			e.pending, e.replayLeft = nil, 0
			return false, viError("E169: Command too recursive")
		}
		var all []term.Key
		for i := 0; i < n; i++ {
			all = append(all, keys...)
		}
		e.pending = append(all, e.pending...)
		e.replayLeft += len(all)
		return false, nil
	case 'm':
		c, err := e.key()
		if err != nil {
			return false, err
		}
		if c < 'a' || c > 'z' {
			return false, viError("")
		}
		e.marks[rune(c)] = pos{e.cy, e.cx}
		return false, nil
	case '&':
		return true, e.exLine("s")
	case term.Ctrl('g'):
		e.fileInfo()
		return false, nil
	case term.Ctrl('l'):
		return false, nil
	case term.Ctrl('f'), term.Ctrl('b'), term.Ctrl('d'), term.Ctrl('u'), term.Ctrl('e'), term.Ctrl('y'), term.KeyPgDn, term.KeyPgUp:
		e.scroll(k, count)
		return false, nil
	case 'v', 'V':
		return e.visual(k)
	}
	m, err := e.motion(k, count, hasCount, 0)
	if err != nil {
		return false, err
	}
	if m.to.y != e.cy && (k == 'G' || k == 'g' || k == 'n' || k == 'N' || k == '/' || k == '?' || k == '*' || k == '#' || k == '%' || k == '\'' || k == '`') {
		e.marks['\''] = pos{e.cy, e.cx}
	}
	e.cy, e.cx = m.to.y, m.to.x
	e.clampCursor()
	return false, nil
}

// keepsColumn reports whether command k moves up or down keeping the
// column j and k aim for (or, for $, the end of the line).
func keepsColumn(k term.Key) bool {
	switch k {
	case 'j', 'k', term.KeyUp, term.KeyDown, term.Ctrl('n'), term.Ctrl('p'), term.Ctrl('j'), '$', term.KeyEnd:
		return true
	}
	return false
}

// vcol is the cursor's screen column in its line (where its character
// starts: a tab counts its width), which j and k keep.
func (e *editor) vcol() int {
	_, starts := e.display(e.lines[e.cy])
	return starts[min(e.cx, len(starts)-1)]
}

// commandFromPending runs one command from the pending keys (a "."
// replay), keeping the record of the change being replayed intact.
func (e *editor) commandFromPending() (bool, error) {
	rec := e.rec
	defer func() { e.rec = rec }()
	e.rec = nil
	k, err := e.key()
	if err != nil {
		return false, err
	}
	k, count, hasCount, err := e.prefix(k)
	if err != nil {
		return false, err
	}
	return e.command(k, count, hasCount)
}

// prefix reads what may come before a command's key k: a register ("x)
// and a count, in either order; it returns the command's key.
func (e *editor) prefix(k term.Key) (term.Key, int, bool, error) {
	e.regName = 0
	count, hasCount := 0, false
	for {
		var err error
		switch {
		case k == '"':
			r, err := e.key()
			if err != nil {
				return 0, 0, false, err
			}
			e.regName = rune(r)
		case k >= '1' && k <= '9' || k == '0' && hasCount:
			count = min(count*10+int(k-'0'), maxCount)
			hasCount = true
		default:
			return k, count, hasCount, nil
		}
		if k, err = e.key(); err != nil {
			return 0, 0, false, err
		}
	}
}

// indentOf is the indent a new line gets after line y.
func (e *editor) indentOf(y int) []rune {
	if !e.autoindent {
		return nil
	}
	l := e.lines[y]
	i := 0
	for i < len(l) && isBlank(l[i]) {
		i++
	}
	return cat(l[:i])
}

// operator applies d, c, y, > or < over the motion that starts with key
// m (or the lines, for dd, cc, yy, >>, <<).
func (e *editor) operator(op, m term.Key, count int, hasCount bool) error {
	n := max(count, 1)
	var from, to pos
	linewise, inclusive := false, false
	if m == op || (op == 'c' && m == 'c') {
		last := min(e.cy+n-1, len(e.lines)-1)
		from, to, linewise = pos{e.cy, 0}, pos{last, 0}, true
	} else {
		if op == 'c' && (m == 'w' || m == 'W') {
			// cw on a word changes to its end, not to the next word.
			if r, ok := e.charAt(pos{e.cy, e.cx}); ok && !isBlank(r) {
				p := pos{e.cy, e.cx}
				for i := 0; i < n; i++ {
					q := p
					if i > 0 || e.cx+1 < len(e.lines[e.cy]) && e.clsAt(pos{e.cy, e.cx + 1}, m == 'W') == e.clsAt(p, m == 'W') {
						q = e.wordEnd(p, m == 'W')
					}
					p = q
				}
				return e.applyOp(op, pos{e.cy, e.cx}, p, false, true)
			}
		}
		if m == 'i' || m == 'a' {
			obj, err := e.key()
			if err != nil {
				return err
			}
			from, to, lines, ok := e.textObject(m == 'a', obj)
			if !ok {
				return viError("")
			}
			if lines {
				return e.applyOp(op, from, to, true, false)
			}
			if to.before(from) {
				// An empty inside (i( on "()"): change inserts there.
				if op == 'c' {
					e.cy, e.cx = from.y, from.x
					return e.insert(1, 'i')
				}
				return nil
			}
			return e.applyOp(op, from, to, false, true)
		}
		res, err := e.motion(m, count, hasCount, op)
		if err != nil {
			return err
		}
		from, to, linewise, inclusive = pos{e.cy, e.cx}, res.to, res.linewise, res.inclusive
		if to.before(from) {
			from, to = to, from
		}
		// An exclusive motion that ends at the start of a line ends at
		// the end of the line before (":help exclusive").
		if !linewise && !inclusive && to.x == 0 && to.y > from.y && m != '}' {
			to = pos{to.y - 1, max(0, len(e.lines[to.y-1])-1)}
			inclusive = len(e.lines[to.y]) > 0
			if from.x <= e.firstNonBlank(from.y) {
				linewise = true
			}
		}
	}
	return e.applyOp(op, from, to, linewise, inclusive)
}

// textObject finds the text object iw, aw, iW, aW, i( a( ib i{ iB i[
// i< i" i' i` (and their a forms) around the cursor, inclusive.
func (e *editor) textObject(around bool, obj term.Key) (from, to pos, linewise, ok bool) {
	l := e.lines[e.cy]
	switch obj {
	case 'w', 'W':
		if len(l) == 0 {
			return pos{}, pos{}, false, false
		}
		big := obj == 'W'
		x := min(e.cx, len(l)-1)
		c := class(l[x], big)
		s, t := x, x
		for s > 0 && class(l[s-1], big) == c {
			s--
		}
		for t+1 < len(l) && class(l[t+1], big) == c {
			t++
		}
		if around && c != 0 {
			if t+1 < len(l) && isBlank(l[t+1]) {
				for t+1 < len(l) && isBlank(l[t+1]) {
					t++
				}
			} else {
				for s > 0 && isBlank(l[s-1]) {
					s--
				}
			}
		} else if around {
			for t+1 < len(l) && class(l[t+1], big) == class(l[min(t+1, len(l)-1)], big) && !isBlank(l[t+1]) {
				t++
			}
		}
		return pos{e.cy, s}, pos{e.cy, t}, false, true
	case '"', '\'', '`':
		var qs []int
		for i, r := range l {
			if r == rune(obj) && (i == 0 || l[i-1] != '\\') {
				qs = append(qs, i)
			}
		}
		for k := 0; k+1 < len(qs); k += 2 {
			if e.cx <= qs[k+1] {
				a, b := qs[k], qs[k+1]
				if around {
					for b+1 < len(l) && isBlank(l[b+1]) {
						b++
					}
					return pos{e.cy, a}, pos{e.cy, b}, false, true
				}
				return pos{e.cy, a + 1}, pos{e.cy, b - 1}, false, true
			}
		}
		return pos{}, pos{}, false, false
	}
	open, close := rune(0), rune(0)
	switch obj {
	case '(', ')', 'b':
		open, close = '(', ')'
	case '{', '}', 'B':
		open, close = '{', '}'
	case '[', ']':
		open, close = '[', ']'
	case '<', '>':
		open, close = '<', '>'
	default:
		return pos{}, pos{}, false, false
	}
	// Back to the unmatched opening bracket, then on to its match.
	p, depth := pos{e.cy, e.cx}, 0
	if r, ok := e.charAt(p); ok && r == close {
		depth = 1
	}
	for {
		r, ok := e.charAt(p)
		if ok && r == close && (p != pos{e.cy, e.cx}) {
			depth++
		} else if ok && r == open {
			if depth == 0 {
				break
			}
			depth--
		}
		q, more := e.prev(p)
		if !more || q == p {
			return pos{}, pos{}, false, false
		}
		p = q
	}
	start, q := p, p
	depth = 0
	for {
		r, ok := e.charAt(q)
		if ok && r == open {
			depth++
		} else if ok && r == close {
			depth--
			if depth == 0 {
				break
			}
		}
		n, more := e.next(q)
		if !more {
			return pos{}, pos{}, false, false
		}
		q = n
	}
	if around {
		return start, q, false, true
	}
	if start.x == len(e.lines[start.y])-1 && q.y > start.y+1 && q.x <= e.firstNonBlank(q.y) {
		// The brackets stand at a line's end and start: the lines between.
		return pos{start.y + 1, 0}, pos{q.y - 1, 0}, true, true
	}
	from, _ = e.next(start)
	to, _ = e.prev(q)
	if !from.before(q) {
		return from, pos{from.y, from.x - 1}, false, true
	}
	return from, to, false, true
}

// applyOp runs operator op on the text from..to.
func (e *editor) applyOp(op term.Key, from, to pos, linewise, inclusive bool) error {
	if linewise {
		e.store(op == 'y', register{text: cloneLines(e.lines[from.y : to.y+1]), linewise: true})
		switch op {
		case 'y':
			if to.y-from.y+1 > 2 {
				e.msgf("%d lines yanked", to.y-from.y+1)
			}
			e.cy = from.y
			e.clampCursor()
		case 'd':
			e.deleteLines(from.y, to.y)
			e.cy = min(from.y, len(e.lines)-1)
			e.cx = e.firstNonBlank(e.cy)
			if n := to.y - from.y + 1; n > 2 {
				e.msgf("%d fewer lines", n)
			}
			if e.noLines {
				// vim reports it as an error (ex -s exits 1).
				e.fail(errNoLines)
			}
		case 'c':
			indent := e.indentOf(from.y)
			e.deleteLines(from.y, to.y)
			if e.noLines {
				e.setLines([][]rune{indent})
				e.noLines = false
			} else {
				e.insertLines(from.y, [][]rune{indent})
			}
			e.cy, e.cx = from.y, len(indent)
			return e.insert(1, 'i')
		case '>', '<':
			for y := from.y; y <= to.y; y++ {
				e.shiftLine(y, map[term.Key]int{'>': 1, '<': -1}[op])
			}
			e.cy = from.y
			e.cx = e.firstNonBlank(e.cy)
		}
		return nil
	}
	if op == '>' || op == '<' {
		return e.applyOp(op, from, to, true, false)
	}
	end := to.x
	if inclusive {
		end++
	}
	end = min(end, len(e.lines[to.y]))
	var text [][]rune
	if from.y == to.y {
		text = [][]rune{cat(e.lines[from.y][min(from.x, end):end])}
	} else {
		text = append(text, cat(e.lines[from.y][min(from.x, len(e.lines[from.y])):]))
		text = append(text, cloneLines(e.lines[from.y+1:to.y])...)
		text = append(text, cat(e.lines[to.y][:end]))
	}
	e.store(op == 'y', register{text: text})
	if op == 'y' {
		e.cy, e.cx = from.y, from.x
		e.clampCursor()
		return nil
	}
	first := e.lines[from.y]
	joined := cat(first[:min(from.x, len(first))], e.lines[to.y][end:])
	if to.y > from.y {
		e.deleteLines(from.y+1, to.y)
	}
	e.setLine(from.y, joined)
	e.cy, e.cx = from.y, from.x
	if op == 'c' {
		return e.insert(1, 'i')
	}
	e.clampCursor()
	return nil
}

// shiftLine indents line y by dir shiftwidths (outdents when negative).
func (e *editor) shiftLine(y, dir int) {
	l := e.lines[y]
	if len(l) == 0 {
		return
	}
	i, width := 0, 0
	for i < len(l) && isBlank(l[i]) {
		if l[i] == '\t' {
			width += e.tabstop - width%e.tabstop
		} else {
			width++
		}
		i++
	}
	width = max(0, width+dir*e.shiftwidth)
	var indent []rune
	if e.expandtab {
		indent = []rune(strings.Repeat(" ", width))
	} else {
		indent = []rune(strings.Repeat("\t", width/e.tabstop) + strings.Repeat(" ", width%e.tabstop))
	}
	e.setLine(y, cat(indent, l[i:]))
}

// join joins lines first..last into one; with spaces, as J does (one
// space between, leading blanks of the joined lines removed).
func (e *editor) join(first, last int, spaces bool) {
	last = min(last, len(e.lines)-1)
	if last <= first {
		return
	}
	out := cat(e.lines[first])
	col := 0
	for y := first + 1; y <= last; y++ {
		l := e.lines[y]
		if spaces {
			i := 0
			for i < len(l) && isBlank(l[i]) {
				i++
			}
			l = l[i:]
			for len(out) > 0 && isBlank(out[len(out)-1]) && len(l) > 0 {
				out = out[:len(out)-1]
			}
			col = len(out)
			if len(l) > 0 && len(out) > 0 && l[0] != ')' {
				out = append(out, ' ')
			}
		} else {
			col = len(out)
		}
		out = cat(out, l)
	}
	e.deleteLines(first+1, last)
	e.setLine(first, out)
	e.cy, e.cx = first, col
	e.clampCursor()
}

// put is p and P.
func (e *editor) put(before bool, n int) error {
	r := e.load0()
	if len(r.text) == 0 {
		return viError("E353: Nothing in register \"")
	}
	size := 0
	for _, l := range r.text {
		size += len(l) + lineCost
	}
	if size*n > maxText {
		return errTooLong
	}
	if r.linewise {
		var ls [][]rune
		for i := 0; i < n; i++ {
			ls = append(ls, r.text...)
		}
		at := e.cy + 1
		if before || e.noLines {
			at = e.cy
		}
		if e.noLines {
			at = 0
		}
		e.insertLines(at, cloneLines(ls))
		e.cy = at
		e.cx = e.firstNonBlank(e.cy)
		return nil
	}
	l := e.lines[e.cy]
	x := e.cx
	if !before && len(l) > 0 {
		x++
	}
	x = min(x, len(l))
	if len(r.text) == 1 {
		var ins []rune
		for i := 0; i < n; i++ {
			ins = append(ins, r.text[0]...)
		}
		e.setLine(e.cy, cat(l[:x], ins, l[x:]))
		e.cx = x + len(ins) - 1
		e.clampCursor()
		return nil
	}
	var parts [][]rune
	for i := 0; i < n; i++ {
		if i == 0 {
			parts = cloneLines(r.text)
			continue
		}
		lastPart := parts[len(parts)-1]
		parts[len(parts)-1] = cat(lastPart, r.text[0])
		parts = append(parts, cloneLines(r.text[1:])...)
	}
	first := cat(l[:x], parts[0])
	lastLine := cat(parts[len(parts)-1], l[x:])
	mid := parts[1 : len(parts)-1]
	e.setLine(e.cy, first)
	e.insertLines(e.cy+1, append(cloneLines(mid), lastLine))
	e.cx = x
	e.clampCursor()
	return nil
}

// insert runs insert mode until Escape; the text typed is inserted n
// times in all (3ihi<Esc> gives "hihihi").
func (e *editor) insert(n int, how term.Key) error {
	e.mode, e.inserting = "-- INSERT --", true
	defer func() { e.mode, e.inserting = "", false }()
	var typed []term.Key
	for {
		k, err := e.key()
		if err == errInterrupted {
			k, err = term.Esc, nil
		}
		if err != nil {
			return err
		}
		if k == term.Esc || k == term.Ctrl('c') {
			break
		}
		typed = append(typed, k)
		if k == term.Ctrl('v') {
			k2, err := e.key()
			if err != nil {
				break
			}
			typed = append(typed, k2)
			e.insertRune(rune(k2))
			continue
		}
		e.insertKey(k)
	}
	if n > 1 && len(typed) > 0 {
		if text, ok := e.plainText(typed); ok {
			// Plain text repeats as one insertion, not key by key.
			cost := len(text) + lineCost*strings.Count(string(text), "\n")
			if how == 'o' || how == 'O' {
				cost += lineCost
			}
			if cost*(n-1) > maxText {
				e.exitInsert()
				return errTooLong
			}
			var rep []rune
			for i := 1; i < n; i++ {
				if how == 'o' || how == 'O' {
					rep = append(rep, '\n')
				}
				rep = append(rep, text...)
			}
			e.insertText(rep)
			e.exitInsert()
			return nil
		}
		if len(typed)*(n-1) > maxKeyRepeat {
			e.exitInsert()
			return errTooLong
		}
		for i := 1; i < n; i++ {
			if how == 'o' || how == 'O' {
				at := e.cy + 1
				e.insertLines(at, [][]rune{e.indentOf(e.cy)})
				e.cy, e.cx = at, len(e.lines[at])
			}
			for j := 0; j < len(typed); j++ {
				if typed[j] == term.Ctrl('v') && j+1 < len(typed) {
					j++
					e.insertRune(rune(typed[j]))
					continue
				}
				e.insertKey(typed[j])
			}
		}
	}
	e.exitInsert()
	return nil
}

// plainText is typed keys as the text they insert, when they are only
// characters, tabs and line breaks (without autoindent).
func (e *editor) plainText(typed []term.Key) ([]rune, bool) {
	out := make([]rune, 0, len(typed))
	for _, k := range typed {
		switch {
		case k == '\r' || k == '\n':
			if e.autoindent {
				return nil, false
			}
			out = append(out, '\n')
		case k == '\t' && !e.expandtab:
			out = append(out, '\t')
		case k >= 0x20 && k != 0x7f:
			out = append(out, rune(k))
		default:
			return nil, false
		}
	}
	return out, true
}

// insertText inserts text (with line breaks) at the cursor, which ends
// after it.
func (e *editor) insertText(text []rune) {
	l := e.lines[e.cy]
	x := min(e.cx, len(l))
	parts := splitRunes(text, '\n')
	if len(parts) == 1 {
		e.setLine(e.cy, cat(l[:x], parts[0], l[x:]))
		e.cx = x + len(parts[0])
		return
	}
	last := parts[len(parts)-1]
	e.setLine(e.cy, cat(l[:x], parts[0]))
	rest := append(cloneLines(parts[1:len(parts)-1]), cat(last, l[x:]))
	e.insertLines(e.cy+1, rest)
	e.cy += len(parts) - 1
	e.cx = len(last)
}

func (e *editor) exitInsert() {
	e.inserting = false
	if e.cx > 0 {
		e.cx--
	}
	e.clampCursor()
}

func (e *editor) insertRune(r rune) {
	l := e.lines[e.cy]
	x := min(e.cx, len(l))
	e.setLine(e.cy, cat(l[:x], []rune{r}, l[x:]))
	e.cx = x + 1
}

// insertKey is one key typed in insert mode.
func (e *editor) insertKey(k term.Key) {
	l := e.lines[e.cy]
	x := min(e.cx, len(l))
	switch k {
	case '\r', '\n':
		indent := e.indentOf(e.cy)
		e.setLine(e.cy, cat(l[:x]))
		e.insertLines(e.cy+1, [][]rune{cat(indent, l[x:])})
		e.cy, e.cx = e.cy+1, len(indent)
	case 0x7f, term.Ctrl('h'):
		if x > 0 {
			e.setLine(e.cy, cat(l[:x-1], l[x:]))
			e.cx = x - 1
		} else if e.cy > 0 {
			prev := e.lines[e.cy-1]
			e.deleteLines(e.cy, e.cy)
			e.cy--
			e.setLine(e.cy, cat(prev, l))
			e.cx = len(prev)
		}
	case term.Ctrl('w'):
		s := x
		for s > 0 && isBlank(l[s-1]) {
			s--
		}
		if s > 0 {
			c := class(l[s-1], false)
			for s > 0 && class(l[s-1], false) == c {
				s--
			}
		}
		e.setLine(e.cy, cat(l[:s], l[x:]))
		e.cx = s
	case term.Ctrl('u'):
		e.setLine(e.cy, cat(l[x:]))
		e.cx = 0
	case '\t':
		if e.expandtab {
			for i := 0; i < e.tabstop-x%e.tabstop; i++ {
				e.insertRune(' ')
			}
			return
		}
		e.insertRune('\t')
	case term.KeyLeft:
		e.cx = max(0, x-1)
	case term.KeyRight:
		e.cx = min(len(l), x+1)
	case term.KeyUp:
		if e.cy > 0 {
			e.cy--
			e.cx = min(x, len(e.lines[e.cy]))
		}
	case term.KeyDown:
		if e.cy+1 < len(e.lines) {
			e.cy++
			e.cx = min(x, len(e.lines[e.cy]))
		}
	case term.KeyHome:
		e.cx = 0
	case term.KeyEnd:
		e.cx = len(l)
	case term.KeyDelete:
		if x < len(l) {
			e.setLine(e.cy, cat(l[:x], l[x+1:]))
		}
	default:
		if k >= 0 {
			e.insertRune(rune(k))
		}
	}
}

// replaceMode is R: typed characters replace those under the cursor.
func (e *editor) replaceMode() error {
	e.mode, e.inserting = "-- REPLACE --", true
	defer func() { e.mode, e.inserting = "", false }()
	for {
		k, err := e.key()
		if err == errInterrupted {
			break
		}
		if err != nil {
			return err
		}
		if k == term.Esc || k == term.Ctrl('c') {
			break
		}
		l := e.lines[e.cy]
		switch {
		case k == '\r' || k == 0x7f || k == term.Ctrl('h') || k < 0:
			if k == 0x7f || k == term.Ctrl('h') {
				e.cx = max(0, e.cx-1)
			} else {
				e.insertKey(k)
			}
		case e.cx < len(l):
			nl := cat(l)
			nl[e.cx] = rune(k)
			e.setLine(e.cy, nl)
			e.cx++
		default:
			e.insertRune(rune(k))
		}
	}
	e.exitInsert()
	return nil
}

// visual is v and V: move, then an operator acts on the selection.
func (e *editor) visual(k term.Key) (bool, error) {
	anchor := pos{e.cy, e.cx}
	lines := k == 'V'
	e.mode = "-- VISUAL --"
	if lines {
		e.mode = "-- VISUAL LINE --"
	}
	defer func() { e.mode = "" }()
	for {
		c, err := e.key()
		if err != nil {
			return false, err
		}
		count, hasCount := 0, false
		for (c >= '1' && c <= '9') || (c == '0' && hasCount) {
			count = min(count*10+int(c-'0'), maxCount)
			hasCount = true
			if c, err = e.key(); err != nil {
				return false, err
			}
		}
		from, to := anchor, pos{e.cy, e.cx}
		if to.before(from) {
			from, to = to, from
		}
		switch c {
		case term.Esc, term.Ctrl('c'):
			return false, nil
		case 'v', 'V':
			if (c == 'V') == lines {
				return false, nil
			}
			lines = c == 'V'
			continue
		case 'o':
			anchor, e.cy, e.cx = pos{e.cy, e.cx}, anchor.y, anchor.x
			continue
		case 'd', 'x', 'y', 'c', '>', '<', 'D', 'X', 'Y', 'C', 'S', 'R', 's':
			op := map[term.Key]term.Key{'d': 'd', 'x': 'd', 'y': 'y', 'c': 'c', 's': 'c', '>': '>', '<': '<', 'D': 'd', 'X': 'd', 'Y': 'y', 'C': 'c', 'S': 'c', 'R': 'c'}[c]
			linewise := lines || strings.ContainsRune("DXYCSR", rune(c))
			if linewise && e.noLines && op == 'd' {
				return false, nil
			}
			if !linewise && to.x >= len(e.lines[to.y]) && to.y+1 < len(e.lines) {
				// The selection ends on a line break: it goes too.
				return op != 'y', e.applyOp(op, from, pos{to.y + 1, 0}, false, false)
			}
			return op != 'y', e.applyOp(op, from, to, linewise, true)
		case 'J':
			e.join(from.y, max(to.y, from.y+1), true)
			return true, nil
		case '~', 'u', 'U':
			for y := from.y; y <= to.y; y++ {
				l := cat(e.lines[y])
				x0, x1 := 0, len(l)
				if !lines {
					if y == from.y {
						x0 = from.x
					}
					if y == to.y {
						x1 = min(len(l), to.x+1)
					}
				}
				for i := x0; i < x1; i++ {
					switch c {
					case 'u':
						l[i] = unicode.ToLower(l[i])
					case 'U':
						l[i] = unicode.ToUpper(l[i])
					default:
						if unicode.IsUpper(l[i]) {
							l[i] = unicode.ToLower(l[i])
						} else {
							l[i] = unicode.ToUpper(l[i])
						}
					}
				}
				e.setLine(y, l)
			}
			e.cy, e.cx = from.y, from.x
			e.clampCursor()
			return true, nil
		case ':':
			line, ok, err := e.readCmdline(":'<,'>")
			if err != nil || !ok {
				return false, err
			}
			e.marks['<'], e.marks['>'] = from, to
			e.snapped = false
			if err := e.exLine("'<,'>" + line); err != nil {
				e.fail(err)
			}
			e.clampCursor()
			return false, nil
		}
		m, err := e.motion(c, count, hasCount, 0)
		if err != nil {
			if err.Error() == "" {
				continue
			}
			return false, err
		}
		e.cy, e.cx = m.to.y, m.to.x
		e.clampCursor()
	}
}

// scroll is ^F, ^B, ^D, ^U, ^E and ^Y.
func (e *editor) scroll(k term.Key, count int) {
	rows := e.textRows()
	last := len(e.lines) - 1
	switch k {
	case term.Ctrl('f'), term.KeyPgDn:
		e.top = min(last, e.top+max(count, 1)*max(1, rows-2))
		e.cy = max(e.cy, e.top)
	case term.Ctrl('b'), term.KeyPgUp:
		e.top = max(0, e.top-max(count, 1)*max(1, rows-2))
		e.cy = min(e.cy, e.top+rows-1)
	case term.Ctrl('d'), term.Ctrl('u'):
		half := max(1, rows/2)
		if count > 0 {
			half = count
		}
		if k == term.Ctrl('d') {
			if e.cy == last {
				return
			}
			e.top = min(max(0, last-rows+1), e.top+half)
			e.cy = min(last, e.cy+half)
		} else {
			e.top = max(0, e.top-half)
			e.cy = max(0, e.cy-half)
		}
	case term.Ctrl('e'):
		e.top = min(last, e.top+max(count, 1))
		e.cy = max(e.cy, e.top)
	case term.Ctrl('y'):
		e.top = max(0, e.top-max(count, 1))
		e.cy = min(e.cy, e.top+rows-1)
	}
	e.cy = max(0, min(e.cy, last))
	e.cx = e.firstNonBlank(e.cy)
}

// readCmdline reads a command line (after ":", "/" or "?") on the
// status row; ok is false when it was cancelled.
func (e *editor) readCmdline(prompt string) (string, bool, error) {
	var buf []rune
	for {
		e.cmdline = prompt + string(buf)
		k, err := e.key()
		e.cmdline = ""
		if err == errInterrupted {
			return string(buf), true, nil
		}
		if err != nil {
			return "", false, err
		}
		switch {
		case k == '\r' || k == '\n':
			return string(buf), true, nil
		case k == term.Esc || k == term.Ctrl('c'):
			return "", false, nil
		case k == 0x7f || k == term.Ctrl('h'):
			if len(buf) == 0 {
				return "", false, nil
			}
			buf = buf[:len(buf)-1]
		case k == term.Ctrl('u'):
			buf = buf[:0]
		case k == term.Ctrl('w'):
			i := len(buf)
			for i > 0 && isBlank(buf[i-1]) {
				i--
			}
			for i > 0 && !isBlank(buf[i-1]) {
				i--
			}
			buf = buf[:i]
		case k == term.Ctrl('v'):
			if k2, err := e.key(); err == nil && k2 >= 0 {
				buf = append(buf, rune(k2))
			}
		case k >= 0x20 || k == '\t':
			if len(buf) < 1<<16 {
				buf = append(buf, rune(k))
			}
		}
	}
}

// display is how a line looks: tabs expanded, control characters as ^X;
// starts[i] is the cell where rune i starts (one more entry for the end).
func (e *editor) display(l []rune) (cells []rune, starts []int) {
	starts = make([]int, 0, len(l)+1)
	for _, r := range l {
		starts = append(starts, len(cells))
		switch {
		case r == '\t' && !e.list:
			for {
				cells = append(cells, ' ')
				if len(cells)%e.tabstop == 0 {
					break
				}
			}
		case r >= rawBase && r <= rawBase+0xff:
			cells = append(cells, []rune(fmt.Sprintf("<%02x>", r-rawBase))...)
		case r < 0x20 || r == 0x7f:
			cells = append(cells, '^', r^0x40)
		default:
			cells = append(cells, r)
		}
	}
	starts = append(starts, len(cells))
	if e.list {
		cells = append(cells, '$')
	}
	return cells, starts
}

// numberWidth is the width of the line-number column (0 without :set
// nu).
func (e *editor) numberWidth() int {
	if !e.number {
		return 0
	}
	return max(3, len(strconv.Itoa(len(e.lines)))) + 1
}

func (e *editor) lineHeight(y int) int {
	w := max(1, e.cols-e.numberWidth())
	cells, _ := e.display(e.lines[y])
	return max(1, (len(cells)+w-1)/w)
}

// render draws the screen (nothing in ex mode).
func (e *editor) render() {
	if e.screen == nil || e.exMode {
		return
	}
	if e.resize {
		// No SIGWINCH handler in WASI: ask the terminal its size at
		// every redraw instead.
		e.rows, e.cols = windowSize()
		e.rows, e.cols = max(e.rows, 2), max(e.cols, 10)
	}
	e.clampCursor()
	rows := e.textRows()
	// As vim: a cursor that went off the screen by up to half of it
	// scrolls the text that far; one that went further is centred.
	if e.cy < e.top {
		if e.top-e.cy > rows/2 {
			e.top = max(0, e.cy-rows/2)
		} else {
			e.top = e.cy
		}
	}
	if e.cy-e.top >= rows {
		// Every line takes a row at least: no need to look further up.
		if e.cy-e.top-rows+1 > rows/2 {
			e.top = max(0, e.cy-rows/2)
		} else {
			e.top = e.cy - rows + 1
		}
	}
	for {
		h := 0
		for y := e.top; y <= e.cy; y++ {
			h += e.lineHeight(y)
		}
		if h <= rows || e.top >= e.cy {
			break
		}
		e.top++
	}
	nw := e.numberWidth()
	w := max(1, e.cols-nw)
	var b strings.Builder
	b.WriteString("\x1b[?25l")
	row := 0
	curRow, curCol := 0, 0
	for y := e.top; y < len(e.lines) && row < rows; y++ {
		cells, starts := e.display(e.lines[y])
		if y == e.cy {
			x := min(e.cx, len(e.lines[y]))
			c := starts[x]
			if e.mode == "" && x < len(e.lines[y]) {
				// Normal mode sits on a character's last cell (a tab's end).
				c = starts[x+1] - 1
			}
			curRow, curCol = row+c/w, nw+c%w
		}
		for seg := 0; seg == 0 || seg*w < len(cells); seg++ {
			if row >= rows {
				break
			}
			fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K", row+1)
			if nw > 0 {
				if seg == 0 {
					fmt.Fprintf(&b, "%*d ", nw-1, y+1)
				} else {
					b.WriteString(strings.Repeat(" ", nw))
				}
			}
			b.WriteString(string(cells[seg*w : min(len(cells), (seg+1)*w)]))
			row++
		}
	}
	for ; row < rows; row++ {
		fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K~", row+1)
	}
	status := e.cmdline
	if status == "" {
		status = e.msg
		if e.mode != "" {
			status = e.mode
		}
	}
	st := []rune(status)
	st = st[:min(len(st), max(0, e.cols-1))]
	fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K%s", e.rows, string(st))
	if e.cmdline != "" {
		curRow, curCol = e.rows-1, len(st)
	}
	fmt.Fprintf(&b, "\x1b[%d;%dH\x1b[?25h", min(curRow, e.rows-1)+1, min(curCol, e.cols-1)+1)
	_, _ = io.WriteString(e.screen, b.String())
	if f, ok := e.screen.(*bufio.Writer); ok {
		_ = f.Flush()
	}
}

// showPrinted draws the printed lines at the bottom of the screen, the
// text scrolled up above them, as vim's "hit-enter" screen; it reports
// whether it did (one line goes on the status row instead).
func (e *editor) showPrinted() bool {
	if len(e.shown) == 1 {
		e.msg = e.shown[0]
		e.shown = nil
		return false
	}
	e.render()
	lines := append(append([]string(nil), e.shown...), "Press ENTER or type command to continue")
	if len(lines) > e.rows {
		lines = lines[len(lines)-e.rows:]
	}
	var b strings.Builder
	first := e.rows - len(lines)
	for i, l := range lines {
		r := []rune(l)
		fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K%s", first+i+1, string(r[:min(len(r), e.cols-1)]))
	}
	_, _ = io.WriteString(e.screen, b.String())
	if f, ok := e.screen.(*bufio.Writer); ok {
		_ = f.Flush()
	}
	return true
}

// runVi is vi, vim, view and ex.
func runVi(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "vi"
	if len(args) > 0 {
		name = baseName(args[0])
	}
	e := newEditor()
	exMode, silent := name == "ex", false
	var files, cmds []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a == "-c" && i+1 < len(args):
			i++
			cmds = append(cmds, args[i])
		case strings.HasPrefix(a, "+"):
			c := a[1:]
			if c == "" {
				c = "$"
			}
			cmds = append(cmds, c)
		case a == "-e":
			exMode = true
		case a == "-s" || a == "-es" || a == "-se":
			silent = true
			exMode = exMode || a != "-s"
		case a == "-R":
			e.readonly = true
		case a == "-n" || a == "-N" || a == "-X" || a == "-u" || a == "-i" || a == "--noplugin" || a == "-Z" || a == "-E" || a == "--clean" || a == "-V":
			if (a == "-u" || a == "-i") && i+1 < len(args) {
				i++
			}
			if a == "-E" {
				exMode = true
			}
		case a == "--version":
			fmt.Fprintln(stdout, "VIM - Vi IMproved (secexec's vi: a subset of vim in Go)")
			return 0
		case a == "-h" || a == "--help":
			fmt.Fprintf(stdout, "Usage: %s [arguments] [file ..]\n\n  -e\tEx mode\n  -s\tSilent (with -e)\n  -c cmd\tRun cmd after loading the file\n  +N\tStart at line N\n  -R\tRead-only\n", name)
			return 0
		case strings.HasPrefix(a, "-") && len(a) > 1:
			fmt.Fprintf(stderr, "VIM - Vi IMproved\n\nUnknown option argument: \"%s\"\nMore info with: \"vim -h\"\n", a)
			return 1
		default:
			files = append(files, a)
		}
	}
	if name == "view" {
		e.readonly = true
	}
	if len(files) > 0 {
		e.args, e.hadLast = files, len(files) == 1
		if err := e.load(files[0]); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if exMode {
		return e.runExMode(silent, cmds, stdin, stdout)
	}
	return e.runVisual(cmds, stdin, stdout, stderr)
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// runExMode reads ex commands from in, one per line, until :q or the
// end of the input; with silent (-s) only printing commands write.
// The status is 1 if a command failed, as vim's.
func (e *editor) runExMode(silent bool, cmds []string, in io.Reader, out io.Writer) int {
	e.exMode, e.silent, e.msg = true, silent, ""
	w := bufio.NewWriter(out)
	defer w.Flush()
	e.out = w
	if !e.noLines {
		e.cy = len(e.lines) - 1
	}
	r := bufio.NewReaderSize(in, 64<<10)
	e.exInput = func() (string, bool) {
		l, err := r.ReadString('\n')
		if err != nil && l == "" {
			return "", false
		}
		return strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r"), true
	}
	run := func(line string) {
		e.snapped = false
		e.msg = ""
		if err := e.exLine(line); err != nil {
			e.fail(err)
		}
		e.revertIfTooBig()
		e.clampCursor()
		e.want = e.vcol()
		if !silent && e.msg != "" {
			fmt.Fprintln(w, e.msg)
		}
		e.msg = ""
		if !e.noLines {
			e.clampCursor()
		}
	}
	for _, c := range cmds {
		if run(c); e.quit {
			break
		}
	}
	for !e.quit {
		if !silent {
			fmt.Fprint(w, ":")
		}
		_ = w.Flush()
		line, ok := e.exInput()
		if !ok {
			break
		}
		run(line)
		if !e.exMode && !e.quit {
			// :visual has nowhere to go without a terminal: stay in ex.
			e.exMode = true
		}
	}
	if e.errors && e.exitCode == 0 {
		return 1
	}
	return e.exitCode
}

// runVisual runs the full-screen editor. Keys come from the terminal in
// raw mode, or, when standard input is not a terminal, from its bytes
// (as vim reads them, so "printf 'ihi\x1b:wq\n' | vi f" works).
func (e *editor) runVisual(cmds []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var keys io.Reader = stdin
	if isTerminalReader(stdin) {
		tty, err := makeRaw()
		if err != nil {
			fmt.Fprintf(stderr, "vi: %v\n", err)
			return 1
		}
		defer tty.restore()
		keys = tty
		e.resize = true
	}
	e.rows, e.cols = windowSize()
	e.rows, e.cols = max(e.rows, 2), max(e.cols, 10)
	w := bufio.NewWriterSize(stdout, 64<<10)
	e.screen = w
	e.out = io.Discard
	e.in = term.NewReader(keys)
	_, _ = w.WriteString("\x1b[?1049h\x1b[H\x1b[2J")
	defer func() {
		_, _ = w.WriteString("\x1b[?1049l")
		_ = w.Flush()
	}()
	for _, c := range cmds {
		e.snapped = false
		if err := e.exLine(c); err != nil {
			e.fail(err)
		}
		e.clampCursor()
		e.want = e.vcol()
	}
	for !e.quit {
		if len(e.shown) > 0 && len(e.pending) == 0 && e.showPrinted() {
			// Lines that :p printed stay until a key: Enter, space or
			// Escape dismisses them, another key is also the next command.
			k, err := e.in.ReadKey()
			e.shown = nil
			if err != nil {
				break
			}
			if k != '\r' && k != ' ' && k != term.Esc {
				e.pending = append(e.pending, k)
			}
		}
		if err := e.normalCommand(); err == errTooLong {
			continue
		} else if err != nil {
			if err == errInterrupted || err == io.EOF {
				// The input ended: like vim, leave without saving.
				break
			}
			fmt.Fprintf(stderr, "vi: %v\n", err)
			return 1
		}
		e.clampCursor()
	}
	return e.exitCode
}
