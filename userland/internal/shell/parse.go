package shell

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"mvdan.cc/sh/v3/syntax"
)

// Parsing the way bash reads a script. mvdan.cc/sh parses a whole file
// before anything runs and refuses some text bash accepts; bash reads a
// line at a time, runs what it has read, and reports a syntax error by
// the token it could not take. parseBash bridges the two:
//
//   - a construct mvdan refuses but bash runs (bash decides at run time,
//     or takes it literally) is rewritten into text mvdan accepts and the
//     whole text parsed again, a bounded number of times: ${x~} and other
//     parameter expansions become a deferred expansion that the shell
//     evaluates (or reports as a bad substitution) when it runs; an
//     associative subscript such as [README.md] or [key with space] is
//     quoted; an arithmetic expansion mvdan cannot parse becomes a
//     deferred one that fails at run time as bash's does; a bad name
//     after declare becomes a quoted word that declare rejects;
//   - on an error that remains, the statements before the line it is on
//     run first, and the error is worded as bash words it.
//
// Rewrites keep every newline where it was, so line numbers hold.

// maxRewrites bounds the rewrite-and-reparse loop (each round parses the
// whole text again); a script with more refused constructs than this
// gets mvdan's error for the rest. The text may grow to a few times its
// size at most.
const maxRewrites = 256

// deferred expansions: the rewritten text refers to the original by a
// parameter whose name carries it, hex-encoded, so that subshells,
// functions and eval need no shared table.
const (
	deferredParam = "__secexec_pe_"
	deferredArith = "__secexec_ar_"
)

// parsed is a script as bash runs it.
type parsed struct {
	// stmts are the statements that run: all of them, or those on the
	// lines before a syntax error.
	stmts []*syntax.Stmt
	// src is the text the positions refer to (after rewrites).
	src string
	err *syntaxErr
	// hdoc is the warning for a here-document the text ends inside of:
	// bash ends it there, warns, and runs it.
	hdoc *syntaxErr
	// appended is how much text closing that here-document added at the
	// end of src.
	appended int
}

// syntaxErr is a syntax error as bash reports it.
type syntaxErr struct {
	line uint // 1-based, in the parsed text
	msg  string
	// text, if set, is the line bash quotes after the message.
	text    string
	hasText bool
	// hdocAt and hdocDelim make it the warning about a here-document
	// that starts on line hdocAt and that the text ends inside of.
	hdocAt    uint
	hdocDelim string
}

func newParser() *syntax.Parser { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }

// spareParser is a parser for parseBash to reuse: made while the module
// initialises, so a process's first parse (every sh -c) finds its
// buffers allocated.
var spareParser atomic.Pointer[syntax.Parser]

func init() { spareParser.Store(newParser()) }

// parseWhole parses src with the spare parser when no one else has it.
func parseWhole(src string) (*syntax.File, error) {
	p := spareParser.Swap(nil)
	if p == nil {
		p = newParser()
	}
	f, err := p.Parse(strings.NewReader(src), "")
	spareParser.Store(p)
	return f, err
}

// parseBash parses src, rewriting what mvdan refuses and bash accepts.
func parseBash(src string) parsed {
	orig := src
	var err error
	var hdoc *syntaxErr
	appended := 0
	for i := 0; ; i++ {
		var f *syntax.File
		f, err = parseWhole(src)
		if err == nil {
			return parsed{stmts: f.Stmts, src: src, hdoc: hdoc, appended: appended}
		}
		if i == maxRewrites {
			break
		}
		if off, text, _ := errPos(err); hdoc == nil && strings.HasPrefix(text, "unclosed here-document `") {
			// The text ends inside a here-document: bash takes the
			// end of the text as its end, with a warning.
			delim := strings.TrimSuffix(strings.TrimPrefix(text, "unclosed here-document `"), "`")
			add := delim + "\n"
			if !strings.HasSuffix(src, "\n") {
				add = "\n" + add
			}
			hdoc = &syntaxErr{line: eofLine(orig) - 1, hdocAt: lineAt(src, off), hdocDelim: delim}
			src += add
			appended = len(add)
			continue
		}
		n, ok := rewrite(src, err)
		if !ok || n == src || len(n) > 4*len(orig)+1024 {
			// A rewrite hex-encodes a construct; bounding the growth
			// bounds the work on nested ones.
			break
		}
		src = n
	}
	stmts, start := goodPrefix(src)
	se := describe(orig, src, start, err)
	if !strings.Contains(se.msg, "end of file") && !strings.Contains(se.msg, "looking for") {
		// bash reads a whole line before it runs any of it, so nothing
		// on the error's line runs, even a statement the separators
		// after it made look complete ("0&;").
		for i, st := range stmts {
			if uint(st.End().Line()) >= se.line {
				stmts = stmts[:i]
				break
			}
		}
	}
	return parsed{stmts: stmts, src: src, err: se, hdoc: hdoc, appended: appended}
}

// errPos returns a parse error's offset and text.
func errPos(err error) (int, string, bool) {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return int(pe.Pos.Offset()), pe.Text, pe.Incomplete
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return int(le.Pos.Offset()), le.Feature, false
	}
	return -1, err.Error(), false
}

// goodPrefix returns the statements on the lines before the failing one,
// and the offset where the failing statement starts.
func goodPrefix(src string) ([]*syntax.Stmt, int) {
	var all []*syntax.Stmt
	// The loop never stops early: mvdan's Stmts, which does on an error,
	// can yield again after that and panic.
	failed := false
	for st, err := range newParser().StmtsSeq(strings.NewReader(src)) {
		if err != nil {
			failed = true
		}
		if st != nil && !failed {
			all = append(all, st)
		}
	}
	start := 0
	if n := len(all); n > 0 {
		start = stmtEnd(src, all[n-1])
	}
	start = skipSeparators(src, start)
	line := lineAt(src, start)
	var run []*syntax.Stmt
	for _, st := range all {
		if stmtEnd(src, st) > start || lineAt(src, stmtEnd(src, st)-1) >= line {
			break
		}
		run = append(run, st)
	}
	return run, start
}

// stmtEnd is where st's text ends, here-document bodies included.
func stmtEnd(src string, st *syntax.Stmt) int {
	end := int(st.End().Offset())
	syntax.Walk(st, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if !ok || r.Hdoc == nil || !r.Hdoc.End().IsValid() {
			return true
		}
		// The body ends where its delimiter line starts: skip that line.
		e := int(r.Hdoc.End().Offset())
		if k := strings.IndexByte(src[min(e, len(src)):], '\n'); k >= 0 {
			e += k + 1
		} else {
			e = len(src)
		}
		end = max(end, e)
		return true
	})
	return min(end, len(src))
}

// skipSeparators skips blanks, newlines, ; & and comments.
func skipSeparators(src string, i int) int {
	for i < len(src) {
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&':
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// lineAt is the 1-based line of offset i.
func lineAt(src string, i int) uint {
	i = max(0, min(i, len(src)))
	return uint(strings.Count(src[:i], "\n")) + 1
}

// lineText is line n of src, without its newline.
func lineText(src string, n uint) string {
	for ; n > 1; n-- {
		k := strings.IndexByte(src, '\n')
		if k < 0 {
			return ""
		}
		src = src[k+1:]
	}
	if k := strings.IndexByte(src, '\n'); k >= 0 {
		src = src[:k]
	}
	return src
}

// eofLine is the line bash reports an unexpected end of file at: the one
// after the last, counting a final line without a newline.
func eofLine(src string) uint {
	n := uint(strings.Count(src, "\n"))
	if src != "" && !strings.HasSuffix(src, "\n") {
		n++
	}
	return n + 1
}

// describe words a parse error as bash does. start is where the failing
// statement starts; orig is the text before rewrites (for quoting lines).
func describe(orig, src string, start int, err error) *syntaxErr {
	off, text, incomplete := errPos(err)
	if incomplete || off >= len(src) {
		sc := &scanner{src: src}
		sc.tokens(start, -1)
		if u := sc.open; u != nil {
			line := lineAt(src, u.off)
			if u.atEOF {
				line = eofLine(orig)
			}
			return &syntaxErr{line: line, msg: "unexpected EOF while looking for matching `" + u.kind + "'"}
		}
		return &syntaxErr{line: eofLine(orig), msg: "syntax error: unexpected end of file"}
	}
	sc := &scanner{src: src}
	sc.tokens(start, -1)
	tok, ok := unexpectedToken(src, start)
	if u := sc.open; u != nil && (!ok || tok.end >= len(src)) {
		// The text ends inside a quote or bracket: bash reads to the
		// end looking for its match.
		line := lineAt(src, u.off)
		if u.atEOF {
			line = eofLine(orig)
		}
		return &syntaxErr{line: line, msg: "unexpected EOF while looking for matching `" + u.kind + "'"}
	}
	if ok && off > tok.start && off < tok.end {
		// The error is inside a word: in a command substitution, bash
		// reports the token there.
		if r, found := enclosing(src[:tok.end], off, "$(", ")", "$("); found && r[0] >= tok.start {
			if t, ok := unexpectedToken(src[:r[1]-1], r[0]+2); ok {
				tok = t
			}
		}
	}
	if !ok {
		if off < 0 {
			return &syntaxErr{line: lineAt(src, start), msg: "syntax error: " + text}
		}
		sc := &scanner{src: src}
		toks := sc.tokens(off, 1)
		if len(toks) == 0 {
			return &syntaxErr{line: eofLine(orig), msg: "syntax error: unexpected end of file"}
		}
		tok = toks[0]
	}
	line := lineAt(src, tok.start)
	return &syntaxErr{line: line, msg: "syntax error near unexpected token `" + tok.text + "'",
		text: lineText(orig, line), hasText: true}
}

// unexpectedToken finds the token bash stops at in the statement that
// starts at start: the first one that makes the text so far an error
// rather than valid or unfinished. The shortest failing prefix is found
// by bisection over token ends.
func unexpectedToken(src string, start int) (token, bool) {
	sc := &scanner{src: src}
	toks := sc.tokens(start, -1)
	fails := func(k int) bool {
		_, err := newParser().Parse(strings.NewReader(src[start:toks[k].end]), "")
		return err != nil && !syntax.IsIncomplete(err)
	}
	lo, hi := 0, len(toks)-1
	if hi < 0 || !fails(hi) {
		return token{}, false
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return toks[lo], true
}

// rewrite turns the construct err is about into text mvdan accepts, or
// reports false.
func rewrite(src string, err error) (string, bool) {
	off, text, _ := errPos(err)
	if off < 0 || off > len(src) {
		return "", false
	}
	switch {
	case strings.HasPrefix(text, "not a valid parameter expansion operator"),
		strings.HasPrefix(text, "invalid @ expansion operator"),
		strings.HasPrefix(text, "cannot combine multiple parameter expansion operators"),
		strings.HasSuffix(text, "cannot be followed by a word"),
		text == "invalid parameter name", text == "invalid nested parameter expansion",
		text == "@ expansion operator requires a literal":
		return rewriteParam(src, off)
	case text == "invalid var name":
		return quoteWord(src, off)
	case isArithErr(text):
		idx, iok := enclosingIndex(src, off)
		ar, aok := enclosing(src, off, "$((", "))", ")")
		switch {
		case iok && (!aok || idx[0] > ar[0]):
			if lit, ok := enclosing(src, idx[0], "=(", ")", "arr"); ok {
				// Quote every key of the array literal at once: a
				// literal with a hundred file names is one rewrite.
				return quoteKeys(src, lit[0]+2, lit[1]-1), true
			}
			return quoteIndex(src, idx), true
		case aok:
			return replaceDeferred(src, ar, deferredArith, "")
		}
	}
	return "", false
}

func isArithErr(text string) bool {
	for _, s := range []string{"arithmetic", "must follow an expression", "must be followed by an expression",
		"floating point", "ternary operator missing", "must follow a name", "must be followed by a literal",
		"unsigned expressions"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// rewriteParam defers the ${...} around off.
func rewriteParam(src string, off int) (string, bool) {
	r, ok := enclosing(src, off, "${", "}", "}")
	if !ok {
		return "", false
	}
	body := src[r[0]:r[1]]
	sub := ""
	switch {
	case strings.Contains(body, "[@]") || strings.HasPrefix(body, "${@"):
		sub = "[@]"
	case strings.Contains(body, "[*]") || strings.HasPrefix(body, "${*"):
		sub = "[*]"
	}
	return replaceDeferred(src, r, deferredParam, sub)
}

// replaceDeferred replaces src[r[0]:r[1]] (one line) with a parameter
// expansion naming it.
func replaceDeferred(src string, r [2]int, prefix, sub string) (string, bool) {
	body := src[r[0]:r[1]]
	if strings.Contains(body, "\n") {
		return "", false
	}
	return src[:r[0]] + "${" + prefix + hex.EncodeToString([]byte(body)) + sub + "}" + src[r[1]:], true
}

// deferredText decodes a deferred expansion's parameter name.
func deferredText(name string) (kind, text string, ok bool) {
	for _, p := range []string{deferredParam, deferredArith} {
		if h, found := strings.CutPrefix(name, p); found {
			b, err := hex.DecodeString(h)
			return p, string(b), err == nil
		}
	}
	return "", "", false
}

// enclosing finds the innermost open...close construct around off: the
// nearest opener before it whose end (found by the scanner) lies beyond.
func enclosing(src string, off int, open, closer, kind string) ([2]int, bool) {
	lo := max(0, off-1<<16)
	hi := min(off+len(open), len(src))
	for tries := 0; tries < 32 && hi > lo; tries++ {
		k := strings.LastIndex(src[lo:hi], open)
		if k < 0 {
			break
		}
		k += lo
		sc := &scanner{src: src}
		end := sc.group(k+len(open), k, closer, kind)
		if sc.open == nil && end > off {
			return [2]int{k, end}, true
		}
		hi = k + len(open) - 1
	}
	return [2]int{}, false
}

// enclosingIndex finds the subscript [...] around off: of name[...] or
// ${name[...]}, or an array literal's [...]=, on one line; it returns the
// brackets' range if its text may be quoted as it is.
func enclosingIndex(src string, off int) ([2]int, bool) {
	depth := 0
	i := min(off, len(src)-1)
	for ; i >= 0 && src[i] != '\n'; i-- {
		switch src[i] {
		case ']':
			if i != off {
				depth++
			}
		case '[':
			if depth > 0 {
				depth--
				continue
			}
			goto found
		}
	}
	return [2]int{}, false
found:
	if i == 0 {
		return [2]int{}, false
	}
	if p := src[i-1]; !isNameByte(p, false) && p != '(' && p != ' ' && p != '\t' {
		return [2]int{}, false
	}
	sc := &scanner{src: src}
	end := sc.group(i+1, i, "]", "]")
	if sc.open != nil || end <= off {
		return [2]int{}, false
	}
	if !quotable(src[i+1 : end-1]) {
		return [2]int{}, false
	}
	return [2]int{i, end}, true
}

// quoteIndex quotes the text of the subscript src[r[0]:r[1]].
func quoteIndex(src string, r [2]int) string {
	return src[:r[0]+1] + `"` + src[r[0]+1:r[1]-1] + `"` + src[r[1]-1:]
}

// quoteKeys quotes the subscripts of the [key]=value elements of the
// array literal body src[start:end] that may be quoted as they are.
func quoteKeys(src string, start, end int) string {
	var b strings.Builder
	b.WriteString(src[:start])
	i := start
	for i < end {
		if c := src[i]; c == ' ' || c == '\t' || c == '\n' {
			b.WriteByte(c)
			i++
			continue
		}
		sc := &scanner{src: src[:end]}
		if src[i] == '[' {
			close := sc.group(i+1, i, "]", "]")
			assign := close < end && src[close] == '=' || close+1 < end && src[close:close+2] == "+="
			if sc.open == nil && assign {
				if quotable(src[i+1 : close-1]) {
					b.WriteString(`["` + src[i+1:close-1] + `"]`)
				} else {
					b.WriteString(src[i:close])
				}
				i = close
			}
			sc = &scanner{src: src[:end]}
		}
		w := sc.word(i)
		if sc.open != nil || w <= i {
			w = end
		}
		b.WriteString(src[i:w])
		i = w
	}
	b.WriteString(src[end:])
	return b.String()
}

// quotable: a subscript is quoted as it is when double quotes keep its
// meaning.
func quotable(inner string) bool {
	return inner != "" && inner != "@" && inner != "*" && !strings.ContainsAny(inner, "\"'`\\\n")
}

// quoteWord quotes the word at off, so that it is an argument rather
// than an assignment.
func quoteWord(src string, off int) (string, bool) {
	sc := &scanner{src: src}
	end := sc.word(off)
	if sc.open != nil || end <= off {
		return "", false
	}
	w := src[off:end]
	switch {
	case !strings.ContainsAny(w, "\"\\`"):
		return src[:off] + `"` + w + `"` + src[end:], true
	case !strings.ContainsAny(w, "'$"):
		return src[:off] + "'" + w + "'" + src[end:], true
	}
	return "", false
}

// runParsed runs what p holds with run, bash's warning about a
// here-document the text ended inside of coming before the statement it
// is in, and the syntax error (if any) after the statements before it.
func (s *Shell) runParsed(p parsed, run func([]*syntax.Stmt)) {
	stmts := p.stmts
	if p.hdoc != nil && p.err == nil && len(stmts) > 0 {
		run(stmts[:len(stmts)-1])
		if s.stopped() {
			return
		}
		s.reportSyntax(p.hdoc)
		run(stmts[len(stmts)-1:])
		return
	}
	run(stmts)
	if p.hdoc != nil && !s.stopped() {
		s.reportSyntax(p.hdoc)
	}
}

// reportSyntax prints a syntax error as bash does.
func (s *Shell) reportSyntax(e *syntaxErr) {
	where := s.Name
	if s.CommandMode && s.sourceDepth == 0 && !s.inEval {
		where += ": -c"
	}
	if s.inEval {
		where += ": eval"
	}
	line := e.line + s.lineBase
	msg := e.msg
	if e.hdocDelim != "" {
		msg = fmt.Sprintf("warning: here-document at line %d delimited by end-of-file (wanted `%s')", e.hdocAt+s.lineBase, e.hdocDelim)
	}
	fmt.Fprintf(s.stderr(), "%s: line %d: %s\n", where, line, msg)
	if e.hasText {
		fmt.Fprintf(s.stderr(), "%s: line %d: `%s'\n", where, line, e.text)
	}
}
