package grepcore

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Syntax selects how a pattern is read, like grep's -G, -E, -F and -P.
type Syntax int

const (
	// Basic is a POSIX basic regular expression with GNU extensions (-G).
	Basic Syntax = iota
	// Extended is a POSIX extended regular expression with GNU extensions (-E).
	Extended
	// Fixed is a literal string (-F).
	Fixed
	// Perl is Go's RE2 syntax, the closest thing to PCRE without
	// backtracking (-P).
	Perl
)

// dupMax is RE_DUP_MAX in glibc: the largest count an interval accepts.
const dupMax = 0x7fff

// goRepeatMax is the largest repeat count Go's regexp accepts.
const goRepeatMax = 1000

// PatternError is a pattern that GNU grep would reject. Msg is GNU grep's
// own wording (glibc's regerror text), so callers can print it verbatim.
type PatternError struct {
	Msg string
	// Warnings are diagnostics GNU grep prints before this error.
	Warnings []string
	// Unsupported marks valid GNU syntax this implementation cannot run,
	// such as back-references, rather than a malformed pattern.
	Unsupported bool
}

func (e *PatternError) Error() string { return e.Msg }

// The messages glibc's regcomp and GNU dfa use; kept byte-identical so
// scripts that compare stderr see what GNU grep prints.
var (
	errTrailingBackslash = &PatternError{Msg: "Trailing backslash"}
	errUnmatchedBracket  = &PatternError{Msg: "Unmatched [, [^, [:, [., or [="}
	errUnmatchedLParen   = &PatternError{Msg: `Unmatched ( or \(`}
	errUnmatchedRParen   = &PatternError{Msg: `Unmatched ) or \)`}
	errUnmatchedBrace    = &PatternError{Msg: `Unmatched \{`}
	errBadBrace          = &PatternError{Msg: `Invalid content of \{\}`}
	errTooBig            = &PatternError{Msg: "Regular expression too big"}
	errRangeEnd          = &PatternError{Msg: "Invalid range end"}
	errClassName         = &PatternError{Msg: "Invalid character class name"}
	errCollation         = &PatternError{Msg: "Invalid collation character"}
	errBackref           = &PatternError{Msg: "Invalid back reference"}
	errColonClass        = &PatternError{Msg: "character class syntax is [[:space:]], not [:space:]"}
	errBackrefSupport    = &PatternError{Msg: "back-references are not supported", Unsupported: true}
	errBadPattern        = &PatternError{Msg: "Invalid regular expression"}
)

// Translate rewrites one grep pattern (no newlines) into Go regexp syntax
// with the same meaning. Warnings are the diagnostics GNU grep prints
// without failing, such as "* at start of expression". Fixed and Perl
// patterns are quoted or passed through.
func Translate(pattern string, syn Syntax) (string, []string, error) {
	switch syn {
	case Fixed:
		return quoteLiteral(pattern), nil, nil
	case Perl:
		if !utf8.ValidString(pattern) {
			return "", nil, &PatternError{Msg: "invalid UTF-8 in pattern"}
		}
		return pattern, nil, nil
	case Basic, Extended:
		t := translator{src: pattern, ere: syn == Extended, lastAtom: -1, laststart: true, lasttok: tokStart}
		if err := t.run(); err != nil {
			if err == t.colonErr && len(t.warnings) > 0 {
				return "", nil, &PatternError{Msg: err.(*PatternError).Msg, Warnings: t.warnings}
			}
			return "", nil, err
		}
		return string(t.out), t.warnings, nil
	}
	return "", nil, fmt.Errorf("grepcore: unknown syntax %d", syn)
}

// quoteLiteral quotes s for Go's regexp. Bytes that are not UTF-8 become
// U+FFFD, which is how Go's matcher sees such bytes in the input too.
func quoteLiteral(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		writeLiteral(&b, r)
	}
	return b.String()
}

func writeLiteral(b *strings.Builder, r rune) {
	switch {
	case r == utf8.RuneError:
		b.WriteString(`\x{FFFD}`)
	case r < 0x80 && strings.ContainsRune(`\.+*?()|[]{}^$`, r):
		b.WriteByte('\\')
		b.WriteRune(r)
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x{%X}`, r)
	default:
		b.WriteRune(r)
	}
}

// writeClassChar writes r for use inside a Go character class.
func writeClassChar(b *strings.Builder, r rune) {
	switch {
	case r == utf8.RuneError:
		b.WriteString(`\x{FFFD}`)
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x{%X}`, r)
	case r < 0x80 && !isAlnumASCII(r) && r != ' ':
		b.WriteByte('\\')
		b.WriteRune(r)
	default:
		b.WriteRune(r)
	}
}

func isAlnumASCII(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

type tokKind int

const (
	tokStart tokKind = iota
	tokLParen
	tokOr
	tokOther
)

type group struct {
	outStart int
}

// translator is a single-pass rewriter modelled on GNU dfa.c's lexer and
// glibc's regcomp: it tracks the same context ("laststart", the previous
// token) that decides whether *, ^, $ and \{ are operators or literals.
type translator struct {
	src       string
	pos       int
	ere       bool
	out       []byte
	warnings  []string
	lastAtom  int  // start in out of the last repeatable item, -1 if none
	laststart bool // only zero-width items since the start, ( or |
	lasttok   tokKind
	groups    []group
	closed    int // number of closed groups, for back-reference checks
	// colonErr is GNU dfa's "[:space:]" error. dfa only parses patterns
	// glibc accepted, so it is reported after any glibc error, along with
	// the first colonWarnings warnings (those dfa printed before it).
	colonErr      *PatternError
	colonWarnings int
	// skipped is set when a repetition operator applied to nothing was
	// dropped; afterSkip is its value before the current token.
	skipped, afterSkip bool
}

func (t *translator) emitAtom(s string) {
	t.lastAtom = len(t.out)
	t.out = append(t.out, s...)
	t.laststart = false
	t.lasttok = tokOther
}

// emitZeroWidth writes an assertion. It may be repeated (GNU allows
// "^*" in ERE), but it does not end the "start of expression" context.
func (t *translator) emitZeroWidth(s string) {
	t.lastAtom = len(t.out)
	t.out = append(t.out, s...)
	t.lasttok = tokOther
}

func (t *translator) emitLiteral(r rune) {
	var b strings.Builder
	writeLiteral(&b, r)
	t.emitAtom(b.String())
}

// repeat applies a repetition operator to the last item. A repeated item
// is always wrapped in a group first: POSIX allows "a**" and "a{2}{3}",
// which Go rejects as nested repetition.
func (t *translator) repeat(op, name string) {
	if t.laststart {
		// GNU dfa warns, then applies the operator to what precedes it:
		// an anchor ("$*" is "($)*") or, at the very start, nothing.
		t.warnings = append(t.warnings, name+" at start of expression")
	}
	if t.lastAtom < 0 {
		t.skipped = true
		return
	}
	atom := string(t.out[t.lastAtom:])
	t.out = append(t.out[:t.lastAtom], "(?:"...)
	t.out = append(t.out, atom...)
	t.out = append(t.out, ')')
	t.out = append(t.out, op...)
	t.lasttok = tokOther
}

func (t *translator) run() error {
	for t.pos < len(t.src) {
		t.afterSkip, t.skipped = t.skipped, false
		c := t.src[t.pos]
		switch c {
		case '\\':
			if t.pos+1 >= len(t.src) {
				return errTrailingBackslash
			}
			r, size := utf8.DecodeRuneInString(t.src[t.pos+1:])
			t.pos += 1 + size
			if err := t.escape(r); err != nil {
				return err
			}
			continue
		case '[':
			if err := t.bracket(); err != nil {
				return err
			}
			continue
		case '.':
			t.pos++
			t.emitAtom(`(?s:.)`)
			continue
		case '*':
			t.pos++
			if t.laststart && !t.ere {
				t.emitLiteral('*')
			} else {
				t.repeat("*", "*")
			}
			continue
		case '^':
			t.pos++
			if t.ere || t.lasttok != tokOther {
				t.emitZeroWidth(`^`)
			} else {
				t.emitLiteral('^')
			}
			continue
		case '$':
			t.pos++
			if t.ere || t.dollarIsAnchor() {
				t.emitZeroWidth(`$`)
			} else {
				t.emitLiteral('$')
			}
			continue
		}
		if t.ere {
			handled, err := t.ereOperator(c)
			if err != nil {
				return err
			}
			if handled {
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(t.src[t.pos:])
		t.pos += size
		t.emitLiteral(r)
	}
	if len(t.groups) > 0 {
		return errUnmatchedLParen
	}
	if t.colonErr != nil {
		t.warnings = t.warnings[:t.colonWarnings]
		return t.colonErr
	}
	return nil
}

// dollarIsAnchor reports whether a BRE '$' just consumed is an anchor: at
// the end of the pattern or before \) or \|.
func (t *translator) dollarIsAnchor() bool {
	rest := t.src[t.pos:]
	return rest == "" || strings.HasPrefix(rest, `\)`) || strings.HasPrefix(rest, `\|`)
}

func (t *translator) ereOperator(c byte) (bool, error) {
	switch c {
	case '+', '?':
		t.pos++
		t.repeat(string(c), string(c))
		return true, nil
	case '{':
		start := t.pos
		t.pos++
		op, ok, err := t.interval(false)
		if err != nil && t.laststart && err != errTooBig {
			// glibc skips an interval with nothing before it and GNU dfa
			// reads a malformed one literally: no error either way.
			ok, err = false, nil
		}
		if err != nil {
			return true, err
		}
		if !ok {
			// RE_INVALID_INTERVAL_ORD: an invalid interval is a literal '{'.
			t.pos = start + 1
			t.emitLiteral('{')
			return true, nil
		}
		t.repeat(op, "{...}")
		return true, nil
	case '(':
		t.pos++
		t.openGroup()
		return true, nil
	case ')':
		t.pos++
		// glibc reads a ')' right after an operator it skipped (as in
		// "(*)") as an ordinary character.
		if len(t.groups) == 0 || t.afterSkip {
			// RE_UNMATCHED_RIGHT_PAREN_ORD: a lone ')' is literal.
			t.emitLiteral(')')
			return true, nil
		}
		t.closeGroup()
		return true, nil
	case '|':
		t.pos++
		t.alternate()
		return true, nil
	}
	return false, nil
}

func (t *translator) openGroup() {
	t.groups = append(t.groups, group{outStart: len(t.out)})
	t.out = append(t.out, "(?:"...)
	t.laststart = true
	t.lasttok = tokLParen
	t.lastAtom = -1
}

func (t *translator) closeGroup() {
	g := t.groups[len(t.groups)-1]
	t.groups = t.groups[:len(t.groups)-1]
	t.out = append(t.out, ')')
	t.lastAtom = g.outStart
	t.laststart = false
	t.lasttok = tokOther
	t.closed++
}

func (t *translator) alternate() {
	t.out = append(t.out, '|')
	t.laststart = true
	t.lasttok = tokOr
	t.lastAtom = -1
}

func (t *translator) escape(r rune) error {
	if !t.ere {
		switch r {
		case '(':
			t.openGroup()
			return nil
		case ')':
			if len(t.groups) == 0 {
				return errUnmatchedRParen
			}
			t.closeGroup()
			return nil
		case '|':
			t.alternate()
			return nil
		case '{':
			if t.laststart {
				t.emitLiteral('{')
				return nil
			}
			op, _, err := t.interval(true)
			if err != nil {
				return err
			}
			t.repeat(op, "{...}")
			return nil
		case '+', '?':
			if t.laststart {
				t.emitLiteral(r)
				return nil
			}
			t.repeat(string(r), string(r))
			return nil
		}
	}
	switch r {
	case '<', '>', 'b':
		// Go has no start/end-of-word assertions; \b agrees with them
		// wherever the neighbouring pattern character is a word character,
		// which is how they are used in practice.
		t.emitZeroWidth(`\b`)
	case 'B':
		t.emitZeroWidth(`\B`)
	case '`':
		t.emitZeroWidth(`\A`)
	case '\'':
		t.emitZeroWidth(`\z`)
	case 'w':
		t.emitAtom(`[\p{L}\p{Nd}_]`)
	case 'W':
		t.emitAtom(`[^\p{L}\p{Nd}_]`)
	case 's':
		t.emitAtom(`[` + spaceClass + `]`)
	case 'S':
		t.emitAtom(`[^` + spaceClass + `]`)
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if int(r-'0') > t.closed {
			return errBackref
		}
		return errBackrefSupport
	default:
		t.emitLiteral(r)
	}
	return nil
}

// interval parses the body of an interval after "{" (ERE) or "\{" (BRE),
// following glibc's parse_dup_op and fetch_number. ok is false when an ERE
// interval is malformed and the '{' should be taken literally.
func (t *translator) interval(bre bool) (op string, ok bool, err error) {
	const (
		none    = -1
		invalid = -2
	)
	// next reads one token: a digit, ',', the closing brace, other, or end.
	type tok int
	const (
		tDigit tok = iota
		tComma
		tClose
		tOther
		tEnd
	)
	next := func() (tok, byte) {
		if t.pos >= len(t.src) {
			return tEnd, 0
		}
		c := t.src[t.pos]
		if bre && c == '\\' {
			if t.pos+1 < len(t.src) && t.src[t.pos+1] == '}' {
				t.pos += 2
				return tClose, 0
			}
			// Any other escape is a non-digit token of one or two bytes.
			t.pos += 2
			if t.pos > len(t.src) {
				t.pos = len(t.src)
			}
			return tOther, 0
		}
		_, size := utf8.DecodeRuneInString(t.src[t.pos:])
		t.pos += size
		switch {
		case !bre && c == '}':
			return tClose, 0
		case c == ',':
			return tComma, 0
		case c >= '0' && c <= '9':
			return tDigit, c
		}
		return tOther, 0
	}
	var last tok
	fetch := func() int {
		num := none
		for {
			k, c := next()
			last = k
			if k == tEnd {
				return invalid
			}
			if k == tClose || k == tComma {
				return num
			}
			switch {
			case k != tDigit || num == invalid:
				num = invalid
			case num == none:
				num = int(c - '0')
			default:
				num = min(dupMax+1, num*10+int(c-'0'))
			}
		}
	}
	lo := fetch()
	hi := none
	if lo == none {
		if last != tComma {
			return "", false, errBadBrace
		}
		lo = 0
	}
	if lo != invalid {
		switch last {
		case tClose:
			hi = lo
		case tComma:
			hi = fetch()
		default:
			hi = invalid
		}
	}
	if lo == invalid || hi == invalid {
		if !bre {
			return "", false, nil
		}
		if last == tEnd {
			return "", false, errUnmatchedBrace
		}
		return "", false, errBadBrace
	}
	if (hi != none && lo > hi) || last != tClose {
		return "", false, errBadBrace
	}
	top := hi
	if top == none {
		top = lo
	}
	if top > dupMax {
		return "", false, errTooBig
	}
	if top > goRepeatMax {
		// Valid for GNU, but beyond what Go's regexp compiles.
		return "", false, errTooBig
	}
	switch {
	case hi == none:
		return "{" + strconv.Itoa(lo) + ",}", true, nil
	case hi == lo:
		return "{" + strconv.Itoa(lo) + "}", true, nil
	}
	return "{" + strconv.Itoa(lo) + "," + strconv.Itoa(hi) + "}", true, nil
}

// Character classes as GNU grep sees them in a UTF-8 locale, written for
// the inside of a Go bracket expression.
const spaceClass = `\t\n\v\f\r \x{1680}\x{2000}-\x{2006}\x{2008}-\x{200A}\x{2028}\x{2029}\x{205F}\x{3000}`

var posixClasses = map[string]string{
	"alpha":  `\p{L}`,
	"alnum":  `\p{L}\p{Nd}`,
	"upper":  `\p{Lu}`,
	"lower":  `\p{Ll}`,
	"digit":  `0-9`,
	"xdigit": `0-9A-Fa-f`,
	"space":  spaceClass,
	"blank":  `\t \x{1680}\x{2000}-\x{2006}\x{2008}-\x{200A}\x{205F}\x{3000}`,
	"cntrl":  `\x00-\x1F\x7F-\x{9F}\x{2028}\x{2029}`,
	"punct":  `\p{P}\p{S}`,
	"graph":  `\p{L}\p{M}\p{N}\p{P}\p{S}\p{Co}`,
	"print":  `\p{L}\p{M}\p{N}\p{P}\p{S}\p{Co}\p{Zs}`,
}

// bracketNameMax is glibc's BRACKET_NAME_BUF_SIZE: longer [:names:] are
// reported as an unmatched bracket.
const bracketNameMax = 32

// bracketElem is one element of a bracket expression.
type bracketElem struct {
	kind byte   // 'c' character, ':' class, '=' equivalence, '.' collating
	r    rune   // the character ('c', and single-character '=' and '.')
	name string // the name between the delimiters
}

// bracket translates a POSIX bracket expression starting at t.pos ('['),
// following glibc's parse_bracket_exp so malformed expressions fail with
// the same message. Inside it a backslash is an ordinary character, ']'
// first is literal and [:class:], [=c=] and [.c.] are recognised.
func (t *translator) bracket() error {
	src := t.src
	p := t.pos + 1
	var b strings.Builder
	b.WriteByte('[')
	if p >= len(src) {
		return errBadPattern
	}
	if src[p] == '^' {
		b.WriteByte('^')
		p++
		if p >= len(src) {
			return errBadPattern
		}
	}
	contentStart := p
	// element parses one element at p. acceptHyphen allows a '-' that
	// is not last (only as the first element or a range end).
	element := func(first, acceptHyphen bool) (bracketElem, error) {
		c := src[p]
		if c == '[' && p+1 < len(src) && strings.IndexByte(".=:", src[p+1]) >= 0 {
			delim := src[p+1]
			p += 2
			nameStart := p
			for i := 0; ; i++ {
				if i >= bracketNameMax || p+1 >= len(src) {
					return bracketElem{}, errUnmatchedBracket
				}
				if src[p] == delim && src[p+1] == ']' {
					break
				}
				p++
			}
			name := src[nameStart:p]
			p += 2
			e := bracketElem{kind: delim, name: name}
			if r, size := utf8.DecodeRuneInString(name); name != "" && size == len(name) {
				e.r = r
			} else {
				e.r = -1
			}
			return e, nil
		}
		if c == '-' && !acceptHyphen && !first {
			if p+1 >= len(src) || src[p+1] != ']' {
				return bracketElem{}, errRangeEnd
			}
		}
		r, size := utf8.DecodeRuneInString(src[p:])
		p += size
		return bracketElem{kind: 'c', r: r}, nil
	}
	first := true
	for {
		start, err := element(first, first)
		if err != nil {
			return err
		}
		if start.kind == 'c' || start.kind == '.' {
			if p >= len(src) {
				return errUnmatchedBracket
			}
			if src[p] == '-' {
				if p+1 >= len(src) {
					return errUnmatchedBracket
				}
				if src[p+1] != ']' {
					p++
					end, err := element(false, true)
					if err != nil {
						return err
					}
					if end.kind == ':' || end.kind == '=' {
						return errRangeEnd
					}
					if start.r < 0 || end.r < 0 {
						return errCollation
					}
					if end.r < start.r {
						return errRangeEnd
					}
					writeClassChar(&b, start.r)
					b.WriteByte('-')
					writeClassChar(&b, end.r)
					goto next
				}
			}
		}
		switch start.kind {
		case ':':
			cls, ok := posixClasses[start.name]
			if !ok {
				return errClassName
			}
			b.WriteString(cls)
		case '=', '.':
			if start.r < 0 {
				return errCollation
			}
			writeClassChar(&b, start.r)
		default:
			writeClassChar(&b, start.r)
		}
	next:
		if p >= len(src) {
			return errUnmatchedBracket
		}
		if src[p] == ']' {
			content := src[contentStart:p]
			p++
			// GNU dfa (which runs only when glibc accepted the whole
			// pattern) rejects a likely typo for [[:space:]].
			if t.colonErr == nil && len(content) >= 2 && content[0] == ':' && content[len(content)-1] == ':' {
				t.colonErr = errColonClass
				t.colonWarnings = len(t.warnings)
			}
			break
		}
		first = false
	}
	b.WriteByte(']')
	t.pos = p
	t.emitAtom(b.String())
	return nil
}
