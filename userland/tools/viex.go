package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/secexec/secexec/userland/internal/term"
)

// Ex commands: the ":" line of vi and the commands of ex mode (ex,
// vi -e, vi -es), after vim's syntax: [range] name[!] [argument], with
// "|" between commands.

// exCommands are the command names, each with the shortest abbreviation
// vim accepts.
var exCommands = []struct{ name, abbrev string }{
	{"append", "a"}, {"change", "c"}, {"copy", "co"}, {"cquit", "cq"}, {"delete", "d"},
	{"edit", "e"}, {"file", "f"}, {"global", "g"}, {"insert", "i"}, {"join", "j"},
	{"k", "k"}, {"list", "l"}, {"mark", "ma"}, {"move", "m"}, {"normal", "norm"},
	{"nohlsearch", "noh"}, {"number", "nu"}, {"print", "p"}, {"put", "pu"}, {"quit", "q"},
	{"qall", "qa"}, {"quitall", "quita"}, {"read", "r"}, {"redo", "red"}, {"set", "se"},
	{"substitute", "s"}, {"t", "t"}, {"undo", "u"}, {"update", "up"}, {"vglobal", "v"},
	{"visual", "vi"}, {"write", "w"}, {"wq", "wq"}, {"wqall", "wqa"}, {"xit", "x"},
	{"xall", "xa"}, {"exit", "exi"}, {"yank", "y"}, {"z", "z"},
	{"next", "n"}, {"Next", "N"}, {"previous", "prev"}, {"args", "ar"}, {"wnext", "wn"},
	{"rewind", "rew"}, {"first", "fir"}, {"last", "la"},
}

// lookupCommand returns the full name of an ex command as typed.
func lookupCommand(typed string) (string, bool) {
	for _, c := range exCommands {
		if strings.HasPrefix(c.name, typed) && strings.HasPrefix(typed, c.abbrev) {
			return c.name, true
		}
	}
	return "", false
}

// exRange is a parsed range: lines are 0-based; n is how many addresses
// were given.
type exRange struct {
	first, last, n int
}

// parseAddress reads one address at s[*i:], 0-based; ok is false when
// there is none.
func (e *editor) parseAddress(s string, i *int) (int, bool, error) {
	line, ok := e.cy, false
	skipSpace(s, i)
	if *i < len(s) {
		switch c := s[*i]; {
		case c >= '0' && c <= '9':
			n := 0
			for *i < len(s) && s[*i] >= '0' && s[*i] <= '9' {
				n = min(n*10+int(s[*i]-'0'), 1<<30)
				*i++
			}
			line, ok = n-1, true
		case c == '.':
			*i++
			ok = true
		case c == '$':
			*i++
			line, ok = len(e.lines)-1, true
		case c == '\'':
			if *i+1 >= len(s) {
				return 0, false, errMarkNotSet
			}
			m, found := e.mark(rune(s[*i+1]))
			if !found {
				return 0, false, errMarkNotSet
			}
			*i += 2
			line, ok = m.y, true
		case c == '/' || c == '?':
			pat, rest := splitDelim(s[*i+1:], c)
			*i = len(s) - len(rest)
			if pat == "" {
				pat = e.lastSearch
			}
			if pat == "" {
				return 0, false, errNoPrevRE
			}
			e.lastSearch = pat
			y, err := e.searchLine(pat, line, c == '?')
			if err != nil {
				return 0, false, err
			}
			line, ok = y, true
		}
	}
	for *i < len(s) && (s[*i] == '+' || s[*i] == '-') {
		sign := 1
		if s[*i] == '-' {
			sign = -1
		}
		*i++
		n := 1
		if *i < len(s) && s[*i] >= '0' && s[*i] <= '9' {
			n = 0
			for *i < len(s) && s[*i] >= '0' && s[*i] <= '9' {
				n = min(n*10+int(s[*i]-'0'), 1<<30)
				*i++
			}
		}
		line += sign * n
		ok = true
	}
	return line, ok, nil
}

// splitDelim splits s at the first delim not escaped by a backslash; the
// rest follows the delimiter.
func splitDelim(s string, delim byte) (string, string) {
	for j := 0; j < len(s); j++ {
		if s[j] == '\\' && j+1 < len(s) {
			j++
			continue
		}
		if s[j] == delim {
			return s[:j], s[j+1:]
		}
	}
	return s, ""
}

func skipSpace(s string, i *int) {
	for *i < len(s) && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == ':') {
		*i++
	}
}

// searchLine finds the next line (previous with back) after from whose
// text matches pat, wrapping around the buffer.
func (e *editor) searchLine(pat string, from int, back bool) (int, error) {
	re, err := vimRegexp(pat, e.ignoreCase, e.lastSubRep)
	if err != nil {
		return 0, err
	}
	n := len(e.lines)
	for k := 1; k <= n; k++ {
		y := ((from+k)%n + n) % n
		if back {
			y = ((from-k)%n + n) % n
		}
		if matchIndex(re, e.lines[y]) != nil {
			return y, nil
		}
	}
	return 0, viError("E486: Pattern not found: " + pat)
}

// parseRange reads the range at the start of s.
func (e *editor) parseRange(s string, i *int) (exRange, error) {
	r := exRange{first: e.cy, last: e.cy}
	skipSpace(s, i)
	if *i < len(s) && s[*i] == '%' {
		*i++
		return exRange{first: 0, last: len(e.lines) - 1, n: 2}, nil
	}
	for {
		a, ok, err := e.parseAddress(s, i)
		if err != nil {
			return r, err
		}
		if ok {
			r.first, r.last = r.last, a
			r.n++
		}
		skipSpace(s, i)
		if *i < len(s) && (s[*i] == ',' || s[*i] == ';') {
			if !ok {
				r.first, r.last = r.last, e.cy
				r.n++
			}
			if s[*i] == ';' {
				e.cy = max(0, min(r.last, len(e.lines)-1))
			}
			*i++
			if a, ok, err := e.parseAddress(s, i); err != nil {
				return r, err
			} else if ok {
				r.first, r.last = r.last, a
			} else {
				r.first = r.last
			}
			r.n++
			skipSpace(s, i)
			if *i < len(s) && (s[*i] == ',' || s[*i] == ';') {
				continue
			}
		}
		break
	}
	if r.n == 1 {
		r.first = r.last
	}
	return r, nil
}

// checkRange checks that a range's lines exist.
func (e *editor) checkRange(r exRange) error {
	if r.first < 0 || r.last < 0 || r.first >= len(e.lines) || r.last >= len(e.lines) {
		return viError("E16: Invalid range")
	}
	if r.first > r.last {
		return viError("E493: Backwards range given")
	}
	return nil
}

// exLine runs a command line (without its ":").
func (e *editor) exLine(line string) error {
	for {
		rest, err := e.exCommand(line)
		if err != nil {
			return err
		}
		if e.overLimit() {
			return errTooLong
		}
		if rest == nil || e.quit {
			return nil
		}
		line = *rest
	}
}

// exCommand runs the first command of line; rest is what follows a "|".
func (e *editor) exCommand(line string) (rest *string, err error) {
	i := 0
	skipSpace(line, &i)
	if i < len(line) && line[i] == '"' {
		return nil, nil
	}
	if strings.TrimSpace(line[i:]) == "" {
		if e.exMode && !e.silent {
			if e.cy+1 >= len(e.lines) {
				return nil, viError("E501: At end-of-file")
			}
			e.cy++
			e.printLines(e.cy, e.cy, false, false)
		}
		return nil, nil
	}
	r, err := e.parseRange(line, &i)
	if err != nil {
		return nil, err
	}
	skipSpace(line, &i)
	// The name: letters, or one of the one-character commands.
	j := i
	for j < len(line) && unicode.IsLetter(rune(line[j])) {
		j++
	}
	typed := line[i:j]
	if typed == "" && i < len(line) && strings.IndexByte("&=<>#!~", line[i]) >= 0 {
		j = i + 1
		for line[i] == '<' || line[i] == '>' {
			if j < len(line) && line[j] == line[i] {
				j++
				continue
			}
			break
		}
		typed = line[i:j]
	}
	// "s" and "g" take a delimiter right after the name: :s/a/b/, :g/x/d,
	// and any letters after a one-letter name are its flags ("sg").
	if len(typed) > 1 && (typed[0] == 's' || typed[0] == 'g' || typed[0] == 'v') {
		if _, ok := lookupCommand(typed); !ok {
			j = i + 1
			typed = typed[:1]
		}
	}
	if typed == "" {
		if i < len(line) && line[i] == '|' {
			s := line[i+1:]
			rest = &s
		} else if i < len(line) {
			return nil, viError("E492: Not an editor command: " + strings.TrimSpace(line))
		}
		if r.n == 0 {
			return rest, nil
		}
		if r.last < 0 || r.last >= len(e.lines) {
			if r.last >= len(e.lines) && !e.exMode {
				r.last = len(e.lines) - 1
			} else {
				return nil, errInvalidRng
			}
		}
		e.cy = r.last
		e.cx = e.firstNonBlank(e.cy)
		return rest, nil
	}
	name := typed
	switch typed[0] {
	case '&', '=', '<', '>', '#', '!', '~':
	default:
		var ok bool
		if name, ok = lookupCommand(typed); !ok {
			return nil, viError("E492: Not an editor command: " + strings.TrimSpace(line))
		}
	}
	i = j
	bang := false
	if i < len(line) && line[i] == '!' && name != "!" {
		bang = true
		i++
	}
	arg := line[i:]
	// Commands whose argument runs to the end of the line; the others end
	// at an unescaped "|".
	switch name {
	case "global", "vglobal", "normal", "!":
	default:
		if k := barIndex(arg, name == "substitute" || name == "&" || name == "~"); k >= 0 {
			s := arg[k+1:]
			rest = &s
			arg = arg[:k]
		}
	}
	arg = strings.TrimLeft(arg, " \t")
	return rest, e.runEx(name, r, bang, arg)
}

// barIndex finds the "|" that ends a command's argument (not one escaped
// with a backslash).
func barIndex(s string, pattern bool) int {
	for k := 0; k < len(s); k++ {
		if s[k] == '\\' && k+1 < len(s) {
			if pattern || s[k+1] == '|' {
				k++
			}
			continue
		}
		if s[k] == '|' {
			return k
		}
	}
	return -1
}

// count reads a count argument ("d 3"): the range becomes count lines
// from its last line.
func (e *editor) countArg(r exRange, arg string) (exRange, string, error) {
	arg = strings.TrimSpace(arg)
	k := 0
	for k < len(arg) && arg[k] >= '0' && arg[k] <= '9' {
		k++
	}
	if k == 0 {
		return r, arg, nil
	}
	n, _ := strconv.Atoi(arg[:min(k, 9)])
	if n == 0 {
		return r, "", viError("E939: Positive count required")
	}
	r.first = r.last
	r.last = min(r.first+n-1, len(e.lines)-1)
	return r, strings.TrimSpace(arg[k:]), nil
}

// runEx runs one parsed command.
func (e *editor) runEx(name string, r exRange, bang bool, arg string) error {
	// Default ranges.
	whole := func() {
		if r.n == 0 {
			r.first, r.last = 0, len(e.lines)-1
		}
	}
	switch name {
	case "write", "wq", "xit", "exit", "update", "global", "vglobal", "=":
		whole()
	}
	if r.n > 0 {
		zeroOK := (name == "append" || name == "read" || name == "put" || name == "=") && r.last == -1 && r.first >= -1
		if err := e.checkRange(r); err != nil && !zeroOK {
			if !(e.noLines && r.first <= 0 && r.last <= 0) {
				return err
			}
		}
	}
	if e.noLines {
		switch name {
		case "print", "number", "#", "list", "z", "join", ">", "<", "substitute", "&", "~", "yank", "copy", "t", "move":
			// An empty buffer has no line 1 to act on.
			return errInvalidRng
		}
	}
	switch name {
	case "print", "number", "#", "list", "z":
		r, rest, err := e.countArg(r, arg)
		if err != nil {
			return err
		}
		if rest != "" && strings.Trim(rest, "#lp") != "" {
			return errTrailing
		}
		e.printLines(r.first, r.last, name == "number" || name == "#" || strings.Contains(rest, "#"), name == "list" || strings.Contains(rest, "l"))
		e.cy = r.last
		e.cx = e.firstNonBlank(e.cy)
	case "=":
		n := len(e.lines)
		if e.noLines {
			n = 0
		}
		if r.n > 0 {
			n = r.last + 1
		}
		e.msgf("%d", n)
	case "delete", "yank":
		r, rest, err := e.countArg(r, arg)
		if err != nil {
			return err
		}
		if rest != "" && !(len(rest) == 1 && (unicode.IsLetter(rune(rest[0])) || rest[0] == '_')) {
			return errTrailing
		}
		if rest != "" {
			e.regName = rune(rest[0])
		}
		e.store(name == "yank", register{text: cloneLines(e.lines[r.first : r.last+1]), linewise: true})
		if name == "delete" {
			if e.noLines {
				return errNoLines
			}
			e.deleteLines(r.first, r.last)
			e.cy = min(r.first, len(e.lines)-1)
			e.cx = e.firstNonBlank(e.cy)
			if e.noLines {
				return errNoLines
			}
		}
	case "put":
		at := r.last + 1
		if bang {
			at = r.last
		}
		if e.noLines {
			at = 0
		}
		if a := strings.TrimSpace(arg); len(a) == 1 {
			e.regName = rune(a[0])
		}
		text := e.load0().text
		if len(text) == 0 {
			return viError("E353: Nothing in register \"")
		}
		e.insertLines(at, cloneLines(text))
		e.cy = at + len(text) - 1
		e.cx = e.firstNonBlank(e.cy)
	case "append", "insert", "change":
		var text [][]rune
		for e.exMode {
			l, ok := e.readExLine()
			if !ok || l == "." {
				break
			}
			text = append(text, toRunes(l))
		}
		at := r.last + 1
		switch name {
		case "insert":
			at = r.last
		case "change":
			e.deleteLines(r.first, r.last)
			at = r.first
		}
		if e.noLines {
			at = 0
		}
		if r.n > 0 && r.last < 0 && name == "append" {
			at = 0
		}
		if len(text) > 0 {
			e.insertLines(min(at, len(e.lines)), text)
			e.cy = min(at, len(e.lines)-1) + len(text) - 1
		} else {
			e.cy = max(0, min(at-1, len(e.lines)-1))
		}
		e.cy = min(e.cy, len(e.lines)-1)
		e.cx = e.firstNonBlank(e.cy)
	case "join":
		r, rest, err := e.countArg(r, arg)
		if err != nil {
			return err
		}
		if rest != "" {
			return errTrailing
		}
		if r.n < 2 && r.first == r.last {
			r.last = r.first + 1
		}
		if r.last >= len(e.lines) {
			if r.n == 0 {
				return nil
			}
			r.last = len(e.lines) - 1
		}
		e.join(r.first, r.last, !bang)
	case "move", "copy", "t":
		dest := 0
		i := 0
		d, ok, err := e.parseAddress(arg, &i)
		if err != nil {
			return err
		}
		if !ok || strings.TrimSpace(arg[i:]) != "" {
			return viError("E14: Invalid address")
		}
		dest = d
		if dest < -1 || dest >= len(e.lines) {
			return viError("E16: Invalid range")
		}
		block := cloneLines(e.lines[r.first : r.last+1])
		if name == "move" {
			if dest >= r.first && dest < r.last {
				return viError("E134: Cannot move a range of lines into itself")
			}
			if dest >= r.first && dest <= r.last {
				return nil
			}
			e.deleteLines(r.first, r.last)
			if dest > r.last {
				dest -= len(block)
			}
		}
		e.insertLines(dest+1, block)
		e.cy = dest + len(block)
		e.cx = e.firstNonBlank(e.cy)
	case ">", "<", ">>", "<<", ">>>", "<<<":
		r, _, err := e.countArg(r, arg)
		if err != nil {
			return err
		}
		for y := r.first; y <= r.last; y++ {
			e.shiftLine(y, len(name)*map[byte]int{'>': 1, '<': -1}[name[0]])
		}
		e.cy = r.last
		e.cx = e.firstNonBlank(e.cy)
	case "substitute", "&", "~":
		if name != "substitute" {
			arg = "&" + arg
			if name == "~" {
				arg = "~" + arg[1:]
			}
		}
		return e.substitute(r, arg)
	case "global", "vglobal":
		return e.global(r, arg, name == "vglobal" || bang)
	case "normal":
		return e.normalEx(r, arg)
	case "k", "mark":
		arg = strings.TrimSpace(arg)
		if len(arg) != 1 || !unicode.IsLower(rune(arg[0])) {
			return viError("E191: Argument must be a letter or forward/backward quote")
		}
		e.marks[rune(arg[0])] = pos{r.last, 0}
	case "undo":
		e.doUndo(1)
	case "redo":
		e.doRedo(1)
	case "set":
		return e.set(arg)
	case "nohlsearch", "visual":
		if name == "visual" && e.exMode && !e.silent {
			e.exMode = false
		}
	case "file":
		e.fileInfo()
	case "edit":
		if arg == "" {
			if !bang {
				if e.modified {
					return errNoWrite
				}
				return nil
			}
			arg = e.file
			if arg == "" {
				return errNoFileName
			}
		}
		if e.modified && !bang {
			return errNoWrite
		}
		return e.load(arg)
	case "read":
		if arg == "" {
			arg = e.file
		}
		b, err := readRegular(arg)
		if err != nil {
			return viError("E484: Can't open file " + arg)
		}
		tmp := newEditor()
		tmp.setText(string(b))
		if tmp.noLines {
			return nil
		}
		at := r.last + 1
		if r.n > 0 && r.last < 0 {
			at = 0
		}
		e.insertLines(min(at, len(e.lines)), tmp.lines)
		e.cy = min(at, len(e.lines)-1)
		e.cx = e.firstNonBlank(e.cy)
	case "write", "update", "wq", "xit", "exit":
		if name == "update" && !e.modified {
			return nil
		}
		if (name == "xit" || name == "exit") && !e.modified {
			e.quit = true
			return nil
		}
		add := false
		if strings.HasPrefix(arg, ">>") {
			add = true
			arg = strings.TrimSpace(arg[2:])
		}
		if strings.HasPrefix(arg, "!") {
			return viError("E484: shell commands are not available")
		}
		target := arg
		if target == "" {
			target = e.file
		}
		if target == "" {
			return errNoFileName
		}
		if e.file == "" {
			e.file = target
		}
		if e.readonly && !bang && target == e.file {
			return viError("E45: 'readonly' option is set (add ! to override)")
		}
		msg, err := e.write(target, r.first, r.last, add)
		if err != nil {
			return err
		}
		e.msgf("%s", msg)
		if target == e.file && r.first == 0 && r.last == len(e.lines)-1 {
			e.modified = false
		}
		if name != "write" && name != "update" {
			e.quit = true
		}
	case "quit", "qall", "quitall", "wqall", "xall":
		if name == "wqall" || name == "xall" {
			if e.modified {
				if err := e.runEx("write", exRange{0, len(e.lines) - 1, 2}, bang, ""); err != nil {
					return err
				}
			}
			e.quit = true
			return nil
		}
		if e.modified && !bang {
			return errNoWrite
		}
		if left := len(e.args) - 1 - e.argi; left > 0 && !bang && !e.warnedArgs && !e.hadLast && name == "quit" {
			// Once, as vim, while the last file was never edited.
			e.warnedArgs = true
			return viError(fmt.Sprintf("E173: %d more file%s to edit", left, map[bool]string{true: "s", false: ""}[left > 1]))
		}
		e.quit = true
	case "cquit":
		e.quit, e.exitCode = true, 1
	case "next", "Next", "previous", "rewind", "first", "last", "wnext":
		if name == "wnext" {
			if err := e.runEx("write", exRange{0, len(e.lines) - 1, 2}, bang, ""); err != nil {
				return err
			}
		}
		to := e.argi + 1
		switch name {
		case "Next", "previous":
			to = e.argi - 1
		case "rewind", "first":
			to = 0
		case "last":
			to = len(e.args) - 1
		}
		if to >= len(e.args) {
			return viError("E165: Cannot go beyond last file")
		}
		if to < 0 {
			return viError("E164: Cannot go before first file")
		}
		if e.modified && !bang {
			return errNoWrite
		}
		e.argi = to
		e.hadLast = e.hadLast || to == len(e.args)-1
		return e.load(e.args[to])
	case "args":
		var b strings.Builder
		for i, a := range e.args {
			if i > 0 {
				b.WriteByte(' ')
			}
			if i == e.argi {
				b.WriteString("[" + a + "]")
			} else {
				b.WriteString(a)
			}
		}
		e.msgf("%s", b.String())
	case "!":
		return viError("E484: shell commands are not available")
	}
	return nil
}

// maxShown bounds the printed lines vi keeps for its "Press ENTER"
// screen (the last rows are what a terminal would show anyway).
const maxShown = 1000

// maxDepth bounds nested :normal commands.
const maxDepth = 100

// readExLine reads the next line of ex input (for :append and friends).
func (e *editor) readExLine() (string, bool) {
	if e.exInput == nil {
		return "", false
	}
	return e.exInput()
}

func cloneLines(ls [][]rune) [][]rune { return append([][]rune(nil), ls...) }

// printLines writes lines for :p, :nu and :l: to standard output in ex
// mode, as the message in vi.
func (e *editor) printLines(first, last int, number, list bool) {
	number = number || e.number
	for y := first; y <= last && y < len(e.lines); y++ {
		s := fromRunes(e.lines[y])
		if !list {
			cells, _ := e.display(e.lines[y])
			if e.list {
				cells = cells[:len(cells)-1]
			}
			s = string(cells)
		}
		if list {
			var b strings.Builder
			for _, r := range s {
				switch {
				case r == '\t':
					b.WriteString("^I")
				case r < 0x20:
					b.WriteString("^" + string(r+0x40))
				default:
					b.WriteRune(r)
				}
			}
			s = b.String() + "$"
		}
		if number {
			s = fmt.Sprintf("%7d %s", y+1, s)
		}
		if e.exMode {
			fmt.Fprintln(e.out, s)
		} else if len(e.shown) < maxShown {
			e.shown = append(e.shown, s)
		}
	}
}

func (e *editor) fileInfo() {
	name := e.file
	if name == "" {
		name = "[No Name]"
	}
	mod := ""
	if e.modified {
		mod = " [Modified]"
	}
	if e.noLines {
		e.msgf("%q%s --No lines in buffer--", name, mod)
		return
	}
	e.msgf("%q%s %d lines --%d%%--", name, mod, len(e.lines), (e.cy+1)*100/len(e.lines))
}

// set handles :set.
func (e *editor) set(arg string) error {
	for _, opt := range strings.Fields(arg) {
		name, val, hasVal := strings.Cut(opt, "=")
		on := true
		if strings.HasPrefix(name, "no") && !hasVal {
			name, on = name[2:], false
		}
		toggle := strings.HasSuffix(name, "!")
		name = strings.TrimSuffix(strings.TrimPrefix(name, "inv"), "!")
		if strings.HasPrefix(opt, "inv") {
			toggle = true
		}
		var flag *bool
		var num *int
		switch name {
		case "number", "nu":
			flag = &e.number
		case "ignorecase", "ic":
			flag = &e.ignoreCase
		case "autoindent", "ai":
			flag = &e.autoindent
		case "expandtab", "et":
			flag = &e.expandtab
		case "list":
			flag = &e.list
		case "readonly", "ro":
			flag = &e.readonly
		case "tabstop", "ts":
			num = &e.tabstop
		case "shiftwidth", "sw":
			num = &e.shiftwidth
		case "hlsearch", "hls", "incsearch", "is", "ruler", "ru", "showmode", "smd", "wrap", "wrapscan", "ws",
			"smartcase", "scs", "compatible", "cp", "showcmd", "sc", "magic", "paste", "relativenumber", "rnu",
			"fileformat", "ff", "encoding", "enc", "syntax", "syn", "filetype", "ft", "background", "bg",
			"softtabstop", "sts", "textwidth", "tw", "undolevels", "ul", "mouse", "laststatus", "ls", "fixeol", "eol", "cindent", "cin", "smartindent", "si", "modeline", "ml", "backup", "bk", "swapfile", "swf", "writebackup", "wb", "all":
			continue
		default:
			return viError("E518: Unknown option: " + opt)
		}
		switch {
		case flag != nil && hasVal:
			return viError("E474: Invalid argument: " + opt)
		case flag != nil && toggle:
			*flag = !*flag
		case flag != nil:
			*flag = on
		case num != nil && hasVal:
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 || n > 1000 {
				return viError("E487: Argument must be positive: " + opt)
			}
			*num = n
		case num != nil:
			e.msgf("  %s=%d", name, *num)
		}
	}
	return nil
}

// substitute runs :s; arg is what follows the name.
func (e *editor) substitute(r exRange, arg string) error {
	pat, rep, flags := e.lastSubPat, e.lastSubRep, ""
	if arg != "" && !strings.ContainsRune("&cegiInp#lr0123456789 ~", rune(arg[0])) {
		delim := arg[0]
		if unicode.IsLetter(rune(delim)) || unicode.IsDigit(rune(delim)) || delim == '\\' || delim == '"' || delim == '|' {
			return viError("E146: Regular expressions can't be delimited by letters")
		}
		var rest string
		pat, rest = splitDelim(arg[1:], delim)
		rep, flags = splitDelim(rest, delim)
		if !strings.Contains(rest, string(delim)) {
			flags = ""
		}
		if pat == "" {
			pat = e.lastSearch
		}
		if rep == "~" {
			rep = e.lastSubRep
		}
	} else {
		flags = arg
		if strings.HasPrefix(flags, "&") {
			flags = e.lastSubFlags + flags[1:]
		}
		if strings.HasPrefix(flags, "~") {
			pat = e.lastSearch
			flags = flags[1:]
		}
	}
	if pat == "" {
		return errNoPrevRE
	}
	// Flags, then an optional count.
	k := 0
	for k < len(flags) && strings.IndexByte("&cegiInp#lr", flags[k]) >= 0 {
		k++
	}
	fl, countStr := flags[:k], strings.TrimSpace(flags[k:])
	if countStr != "" {
		n, err := strconv.Atoi(countStr[:min(len(countStr), 9)])
		if err != nil || n <= 0 {
			return errTrailing
		}
		r.first = r.last
		r.last = min(r.first+n-1, len(e.lines)-1)
	}
	e.lastSubPat, e.lastSubRep, e.lastSubFlags, e.lastSearch = pat, rep, fl, pat
	icase := e.ignoreCase
	if strings.Contains(fl, "i") {
		icase = true
	}
	if strings.Contains(fl, "I") {
		icase = false
	}
	re, err := vimRegexp(pat, icase, e.lastSubRep)
	if err != nil {
		return err
	}
	global := strings.Contains(fl, "g")
	subs, linesChanged, lastY := 0, 0, -1
	added := 0
	for y := r.first; y <= r.last+added && y < len(e.lines); y++ {
		line := e.lines[y]
		var out []rune
		from, changed := 0, false
		// One scan of the line finds every match (Go, like vim, drops an
		// empty match right after a match), so a long line costs linear
		// time however many matches it has.
		limit := 1
		if global {
			limit = -1
		}
		for _, m := range submatchRunes(re, line, limit) {
			if m[0] == m[1] && changed && m[0] >= len(line) {
				// As vim: no empty match at the end of a line that had one.
				break
			}
			out = append(out, line[from:m[0]]...)
			out = append(out, expandReplacement(rep, line, m, e.lastSubRep)...)
			if len(out) > maxText {
				return errTooLong
			}
			subs++
			changed = true
			from = m[1]
		}
		if !changed {
			continue
		}
		if from < len(line) {
			out = append(out, line[from:]...)
		}
		linesChanged++
		if strings.Contains(fl, "n") {
			continue
		}
		parts := splitRunes(out, '\n')
		e.setLine(y, parts[0])
		if len(parts) > 1 {
			e.insertLines(y+1, parts[1:])
			y += len(parts) - 1
			added += len(parts) - 1
		}
		lastY = y
	}
	if subs == 0 {
		if strings.Contains(fl, "e") {
			return nil
		}
		return viError("E486: Pattern not found: " + pat)
	}
	if strings.Contains(fl, "n") {
		e.msgf("%d matches on %d lines", subs, linesChanged)
		return nil
	}
	e.cy = lastY
	e.cx = e.firstNonBlank(e.cy)
	if linesChanged > 2 && e.gmarks == nil {
		e.msgf("%d substitutions on %d lines", subs, linesChanged)
	}
	if strings.ContainsAny(fl, "p#l") {
		e.printLines(e.cy, e.cy, strings.Contains(fl, "#"), strings.Contains(fl, "l"))
	}
	return nil
}

func splitRunes(rs []rune, sep rune) [][]rune {
	var out [][]rune
	start := 0
	for i, r := range rs {
		if r == sep {
			out = append(out, append([]rune(nil), rs[start:i]...))
			start = i + 1
		}
	}
	return append(out, append([]rune(nil), rs[start:]...))
}

// global runs :g/pat/cmd (:v with invert) on each line that matches.
func (e *editor) global(r exRange, arg string, invert bool) error {
	if e.gmarks != nil {
		return viError("E147: Cannot do :global recursive")
	}
	if arg == "" {
		return viError("E35: No previous regular expression")
	}
	delim := arg[0]
	pat, cmd := splitDelim(arg[1:], delim)
	if pat == "" {
		pat = e.lastSearch
	}
	if pat == "" {
		return errNoPrevRE
	}
	e.lastSearch = pat
	re, err := vimRegexp(pat, e.ignoreCase, e.lastSubRep)
	if err != nil {
		return err
	}
	if strings.TrimSpace(cmd) == "" {
		cmd = "p"
	}
	e.gmarks = make([]bool, len(e.lines))
	found := false
	for y := r.first; y <= r.last; y++ {
		if (matchIndex(re, e.lines[y]) != nil) != invert {
			e.gmarks[y] = true
			found = true
		}
	}
	defer func() { e.gmarks = nil }()
	if !found {
		if invert {
			e.msgf("Pattern found in every line: %s", pat)
			return nil
		}
		return viError("Pattern not found: " + pat)
	}
	var firstErr error
	for y := 0; y < len(e.gmarks) && !e.quit; y++ {
		if !e.gmarks[y] {
			continue
		}
		e.gmarks[y] = false
		e.cy, e.cx = y, 0
		e.deleted = 0
		if err := e.exLine(cmd); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if err == errInterrupted || err == errTooLong {
				return err
			}
		}
		if e.overLimit() {
			return errTooLong
		}
		// Lines before y may be gone: look again from where y went.
		y = max(-1, y-e.deleted-1)
	}
	if firstErr == errNoLines {
		return firstErr
	}
	return firstErr
}

// normalEx runs :normal: the keys as vi commands on each line of the
// range (or where the cursor is).
func (e *editor) normalEx(r exRange, keys string) error {
	if r.n == 0 {
		return e.runKeys(keys)
	}
	for y := r.first; y <= r.last && y < len(e.lines); y++ {
		e.cy, e.cx, e.want = y, 0, 0
		if err := e.runKeys(keys); err != nil {
			return err
		}
	}
	return nil
}

// runKeys runs keys as normal-mode commands until they are used up; an
// unfinished insert ends as if by Escape.
func (e *editor) runKeys(keys string) error {
	// :normal can run :normal (directly or from a register): bound the
	// nesting as vim does ('maxmapdepth').
	if e.depth >= maxDepth {
		return viError("E169: Command too recursive")
	}
	e.depth++
	defer func() { e.depth-- }()
	saved, savedOnly, savedReplay := e.pending, e.keysOnly, e.replayLeft
	e.pending, e.keysOnly, e.replayLeft = term.Parse([]byte(keys)), true, 0
	defer func() { e.pending, e.keysOnly, e.replayLeft = saved, savedOnly, savedReplay }()
	for len(e.pending) > 0 && !e.quit {
		if err := e.normalCommand(); err != nil && err != errInterrupted {
			return err
		}
		if e.overLimit() {
			return errTooLong
		}
	}
	return nil
}
