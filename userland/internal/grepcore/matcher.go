package grepcore

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options configures a Matcher.
type Options struct {
	Syntax     Syntax
	IgnoreCase bool // -i
	Words      bool // -w: the match must be a whole word
	Lines      bool // -x: the match must be the whole line
}

// Matcher finds matches in single lines (without their terminator) the way
// GNU grep's EGexecute does: leftmost-longest for POSIX syntaxes, and the
// same retry loop for -w, so -o output and word matching agree with GNU
// grep byte for byte.
//
// A Matcher is safe for concurrent use.
type Matcher struct {
	lineRe  *regexp.Regexp // -x: the patterns anchored at both ends
	re      *regexp.Regexp // the patterns, unanchored
	ctx     *regexp.Regexp // "." then the patterns: a search that starts mid-line sees the previous rune
	anch    *regexp.Regexp // anchored at the start, end anchors disabled: GNU's re_match with not_eol
	anchCtx *regexp.Regexp // anch with one rune of leading context
	// exact and exactCtx are anch and anchCtx that must also end where
	// the text ends.
	exact    *regexp.Regexp
	exactCtx *regexp.Regexp

	words bool // run the -w retry loop
	// wholeLineWord is GNU's -x -w combination, whose -o output includes
	// the line terminator (a quirk scripts may depend on).
	wholeLineWord bool

	// Warnings are GNU grep's non-fatal diagnostics for the patterns, such
	// as "* at start of expression", in pattern order.
	Warnings []string
}

// Compile builds a Matcher for a list of patterns (an empty list matches
// nothing; an empty pattern matches every line). Each pattern must be free
// of newlines: grep splits pattern arguments at newlines beforehand.
func Compile(patterns []string, opt Options) (*Matcher, error) {
	m := &Matcher{
		words:         opt.Words && !opt.Lines,
		wholeLineWord: opt.Words && opt.Lines,
	}
	var body strings.Builder
	if len(patterns) == 0 {
		body.WriteString(`[^\x00-\x{10FFFF}]`)
	}
	for i, p := range patterns {
		tr, warnings, err := Translate(p, opt.Syntax)
		if err != nil {
			return nil, err
		}
		m.Warnings = append(m.Warnings, warnings...)
		if i > 0 {
			body.WriteByte('|')
		}
		if len(patterns) > 1 {
			body.WriteString("(?:" + tr + ")")
		} else {
			body.WriteString(tr)
		}
	}
	b := body.String()
	prefix := ""
	if opt.IgnoreCase {
		prefix = "(?i)"
	}
	longest := opt.Syntax != Perl
	var err error
	if opt.Lines {
		if m.lineRe, err = compile(prefix+`^(?:`+b+`)$`, longest); err != nil {
			return nil, err
		}
	}
	if m.re, err = compile(prefix+b, longest); err != nil {
		return nil, err
	}
	if m.ctx, err = compile(prefix+`(?s:.)(?:`+b+`)`, longest); err != nil {
		return nil, err
	}
	if m.words {
		noEOL, err := withoutEndAnchors(b)
		if err != nil {
			return nil, err
		}
		if m.anch, err = compile(prefix+`\A(?:`+noEOL+`)`, longest); err != nil {
			return nil, err
		}
		if m.anchCtx, err = compile(prefix+`\A(?s:.)(?:`+noEOL+`)`, longest); err != nil {
			return nil, err
		}
		if m.exact, err = compile(prefix+`\A(?:`+noEOL+`)\z`, longest); err != nil {
			return nil, err
		}
		if m.exactCtx, err = compile(prefix+`\A(?s:.)(?:`+noEOL+`)\z`, longest); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func compile(expr string, longest bool) (*regexp.Regexp, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, goError(err)
	}
	if longest {
		re.Longest()
	}
	return re, nil
}

// goError maps a Go regexp error to GNU's wording where one exists.
func goError(err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrLarge, syntax.ErrNestingDepth, syntax.ErrInvalidRepeatSize:
			return errTooBig
		}
	}
	return &PatternError{Msg: err.Error()}
}

// withoutEndAnchors returns expr with every end-of-text assertion replaced
// by one that never matches: regex's not_eol flag, which GNU sets when it
// retries a shorter -w match on a truncated line.
func withoutEndAnchors(expr string) (string, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", goError(err)
	}
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		if r.Op == syntax.OpEndText || r.Op == syntax.OpEndLine {
			r.Op = syntax.OpNoMatch
		}
		for _, s := range r.Sub {
			walk(s)
		}
	}
	walk(re)
	return re.String(), nil
}

// Match reports whether line contains a match (a whole-word one with -w,
// the whole line with -x).
func (m *Matcher) Match(line []byte) bool {
	switch {
	case m.lineRe != nil:
		return m.lineRe.Match(line)
	case m.words:
		_, _, ok := m.wordSearch(line, 0)
		return ok
	}
	return m.re.Match(line)
}

// Find returns the leftmost-longest match that starts at or after from,
// judged with the whole line as context (so ^ and \b see the text before
// from), as GNU grep's -o loop does. Like GNU grep, Find ignores -x (-o
// only runs on lines Match selected, where the leftmost-longest match is
// the whole line, or on -v context lines, where GNU prints partial
// matches). end may be len(line)+1, meaning the match includes the line
// terminator: GNU grep's -o -x -w quirk.
func (m *Matcher) Find(line []byte, from int) (start, end int, ok bool) {
	switch {
	case m.words:
		return m.wordSearch(line, from)
	case m.wholeLineWord:
		if from == 0 && m.lineRe.Match(line) {
			return 0, len(line) + 1, true
		}
		return 0, 0, false
	}
	return m.searchFrom(line, from)
}

// searchFrom is the leftmost-longest match starting at or after pos.
func (m *Matcher) searchFrom(line []byte, pos int) (int, int, bool) {
	if pos > len(line) {
		return 0, 0, false
	}
	if pos == 0 {
		loc := m.re.FindIndex(line)
		if loc == nil {
			return 0, 0, false
		}
		return loc[0], loc[1], true
	}
	// Start one rune early and let "." consume it, so assertions at pos
	// see the real previous character.
	_, w := utf8.DecodeLastRune(line[:pos])
	q := pos - w
	loc := m.ctx.FindIndex(line[q:])
	if loc == nil {
		return 0, 0, false
	}
	_, w2 := utf8.DecodeRune(line[q+loc[0]:])
	return q + loc[0] + w2, q + loc[1], true
}

// longestAt is the length of the longest match anchored at s that ends by
// limit, where end anchors do not match at limit; -1 if none.
func (m *Matcher) longestAt(line []byte, s, limit int) int {
	if limit < s || limit > len(line) {
		return -1
	}
	// glibc never matches part of a character, so neither may a retry
	// on a line cut in the middle of one.
	for limit > s && splitsRune(line, limit) {
		limit--
	}
	if s == 0 {
		loc := m.anch.FindIndex(line[:limit])
		if loc == nil {
			return -1
		}
		return loc[1]
	}
	_, w := utf8.DecodeLastRune(line[:s])
	q := s - w
	loc := m.anchCtx.FindIndex(line[q:limit])
	if loc == nil {
		return -1
	}
	if _, w2 := utf8.DecodeRune(line[q:]); q+w2 != s {
		return -1
	}
	return q + loc[1] - s
}

// matchesExactly reports whether the patterns (end anchors disabled) match
// line[s:e] exactly, seeing the rune before s as context.
func (m *Matcher) matchesExactly(line []byte, s, e int) bool {
	if splitsRune(line, e) {
		return false
	}
	if s == 0 {
		return m.exact.Match(line[:e])
	}
	_, w := utf8.DecodeLastRune(line[:s])
	q := s - w
	if _, w2 := utf8.DecodeRune(line[q:]); q+w2 != s {
		return false
	}
	return m.exactCtx.Match(line[q:e])
}

// wordSearch gives the result of GNU grep's -w loop (EGexecute): take the
// leftmost-longest match; if it is not delimited by non-word characters,
// retry ever shorter matches at the same start, then look further on. ptr
// is where the search starts.
//
// GNU's loop costs a regexp run per retry, cubic in the line length for
// patterns like "x*". This one reaches the same answer with less work: a
// start after a word character can never succeed, so it is skipped
// without retries, and for ptr == 0 the retries only test ends that are
// followed by a non-word character. For ptr > 0 GNU measures its retry
// limit from ptr rather than from the line start (which changes what -o
// prints), so that case keeps the literal loop.
func (m *Matcher) wordSearch(line []byte, ptr int) (int, int, bool) {
	match, e, ok := m.searchFrom(line, ptr)
	if !ok {
		return 0, 0, false
	}
	n := e - match
	for {
		if !wordcharPrev(line, match) {
			if !wordcharNext(line, match+n) {
				return match, match + n, true
			}
			if ptr == 0 {
				for end := match + n - 1; end > match; end-- {
					if !wordcharNext(line, end) && m.matchesExactly(line, match, end) {
						return match, end, true
					}
				}
			} else {
				for n > 0 {
					n--
					shorter := m.longestAt(line, match, match+n-ptr)
					if shorter <= 0 {
						break
					}
					n = shorter
					if !wordcharNext(line, match+n) {
						return match, match + n, true
					}
				}
			}
		}
		// Look further on, skipping starts that follow a word character.
		if match >= len(line) {
			return 0, 0, false
		}
		p := match + 1
		for p <= len(line) && wordcharPrev(line, p) {
			p++
		}
		if p > len(line) {
			return 0, 0, false
		}
		s, e, ok := m.searchFrom(line, p)
		if !ok {
			return 0, 0, false
		}
		match, n = s, e-s
	}
}

// splitsRune reports whether offset i falls inside a valid multi-byte
// UTF-8 sequence.
func splitsRune(line []byte, i int) bool {
	if i <= 0 || i >= len(line) || utf8.RuneStart(line[i]) {
		return false
	}
	for k := i - 1; k >= 0 && k >= i-utf8.UTFMax+1; k-- {
		if utf8.RuneStart(line[k]) {
			r, w := utf8.DecodeRune(line[k:])
			return r != utf8.RuneError && k+w > i
		}
	}
	return false
}

// isWordRune reports whether r is a word constituent for -w:
// a letter, a digit or an underscore.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func wordcharPrev(line []byte, i int) bool {
	if i <= 0 {
		return false
	}
	r, size := utf8.DecodeLastRune(line[:i])
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	return isWordRune(r)
}

func wordcharNext(line []byte, i int) bool {
	if i >= len(line) {
		return false
	}
	r, size := utf8.DecodeRune(line[i:])
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	return isWordRune(r)
}
