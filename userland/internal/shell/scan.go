package shell

// A small bash tokenizer, independent of mvdan.cc/sh's parser: bash
// reports a syntax error by the token it could not take ("near
// unexpected token `then'") and an unfinished construct by the bracket or
// quote it was looking for, and the rewrites in parse.go need the extent
// of constructs mvdan's parser refuses. It only needs to agree with bash
// on where words, operators and quoted or bracketed constructs start and
// end.

// maxScanDepth bounds the nesting the scanner follows, so that a
// pathological input cannot exhaust the stack.
const maxScanDepth = 200

// unclosed is a construct the text ends inside of.
type unclosed struct {
	// kind is what bash is looking for: ` ' " } ) ]`; arr marks an
	// array assignment's "(", which bash reports at its own line.
	kind string
	// off is where the construct opened.
	off int
	// atEOF: bash reports it at the end of the text (a command
	// substitution), not where it opened.
	atEOF bool
}

// token is one bash token of a command line.
type token struct {
	start, end int
	text       string // "newline" for a newline
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// operators bash recognises between words, longest first.
var operators = []string{
	";;&", "&>>", "<<<", "<<-",
	";;", ";&", "&&", "||", "|&", "<<", ">>", "<&", ">&", "<>", ">|", "&>",
	";", "&", "|", "(", ")", "<", ">",
}

// scanner walks bash text.
type scanner struct {
	src   string
	depth int
	open  *unclosed // set when the text ends inside a construct
}

func (sc *scanner) fail(kind string, off int, atEOF bool) int {
	if sc.open == nil {
		sc.open = &unclosed{kind: kind, off: off, atEOF: atEOF}
	}
	return len(sc.src)
}

// tokens splits src[i:] into tokens, stopping after max tokens (max < 0:
// no limit). Comments are skipped; a line continuation joins lines.
func (sc *scanner) tokens(i, max int) []token {
	var out []token
	src := sc.src
	for i < len(src) && (max < 0 || len(out) < max) {
		c := src[i]
		switch {
		case isBlank(c):
			i++
			continue
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '\n':
			out = append(out, token{i, i + 1, "newline"})
			i++
			continue
		}
		if c == '(' && i+1 < len(src) && src[i+1] == '(' {
			// An arithmetic command: one token up to its "))".
			end := sc.group(i+2, i, "))", ")")
			out = append(out, token{i, end, src[i:end]})
			if sc.open != nil {
				break
			}
			i = end
			continue
		}
		if isMeta(c) && !((c == '<' || c == '>') && i+1 < len(src) && src[i+1] == '(') {
			for _, op := range operators {
				if len(src)-i >= len(op) && src[i:i+len(op)] == op {
					out = append(out, token{i, i + len(op), op})
					i += len(op)
					break
				}
			}
			continue
		}
		end := sc.word(i)
		out = append(out, token{i, end, src[i:end]})
		if sc.open != nil {
			break
		}
		i = end
	}
	return out
}

// word returns the end of the word starting at i.
func (sc *scanner) word(i int) int {
	src := sc.src
	start := i
	for i < len(src) {
		c := src[i]
		if c == '=' && i > start && sc.isName(src[start:i]) && i+1 < len(src) && src[i+1] == '(' {
			// An array assignment, name=( ... ).
			i = sc.group(i+2, i+1, ")", "arr")
			continue
		}
		if isMeta(c) {
			if (c == '<' || c == '>') && i+1 < len(src) && src[i+1] == '(' {
				i = sc.group(i+2, i+1, ")", ")")
				continue
			}
			return i
		}
		i = sc.unit(i)
		if sc.open != nil {
			return len(src)
		}
	}
	return i
}

// isName reports whether s is a variable name, optionally subscripted.
func (sc *scanner) isName(s string) bool {
	if k := indexByte(s, '['); k > 0 && s[len(s)-1] == ']' {
		s = s[:k]
	} else if len(s) > 0 && s[len(s)-1] == '+' {
		s = s[:len(s)-1]
	}
	return validName(s)
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// unit scans one quoted string, expansion or plain byte at i and returns
// where it ends.
func (sc *scanner) unit(i int) int {
	src := sc.src
	sc.depth++
	defer func() { sc.depth-- }()
	if sc.depth > maxScanDepth {
		return sc.fail(")", i, true)
	}
	switch c := src[i]; c {
	case '\\':
		return min(i+2, len(src))
	case '\'':
		for j := i + 1; j < len(src); j++ {
			if src[j] == '\'' {
				return j + 1
			}
		}
		return sc.fail("'", i, false)
	case '"':
		return sc.dquote(i + 1)
	case '`':
		for j := i + 1; j < len(src); j++ {
			switch src[j] {
			case '\\':
				j++
			case '`':
				return j + 1
			}
		}
		return sc.fail("`", i, false)
	case '$':
		return sc.dollar(i)
	}
	return i + 1
}

// dquote scans the rest of a double-quoted string opened before i.
func (sc *scanner) dquote(i int) int {
	src := sc.src
	open := i - 1
	for i < len(src) {
		switch src[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		case '`', '$':
			i = sc.unit(i)
			if sc.open != nil {
				return len(src)
			}
		default:
			i++
		}
	}
	return sc.fail(`"`, open, false)
}

// dollar scans an expansion starting with the $ at i.
func (sc *scanner) dollar(i int) int {
	src := sc.src
	switch {
	case i+2 < len(src) && src[i+1] == '(' && src[i+2] == '(':
		return sc.group(i+3, i, "))", ")")
	case i+1 < len(src) && src[i+1] == '(':
		return sc.group(i+2, i, ")", "$(")
	case i+1 < len(src) && src[i+1] == '{':
		return sc.group(i+2, i, "}", "}")
	case i+1 < len(src) && src[i+1] == '[':
		return sc.group(i+2, i, "]", "]")
	case i+1 < len(src) && (src[i+1] == '\'' || src[i+1] == '"'):
		return sc.unit(i + 1)
	}
	return i + 1
}

// group scans to the closing delimiter of a bracketed construct whose
// body starts at i (opened at open), following nested quotes, expansions
// and parentheses. kind names it for an unclosed report: "$(" is a
// command substitution, which bash reports at the end of the text.
func (sc *scanner) group(i, open int, closer, kind string) int {
	src := sc.src
	sc.depth++
	defer func() { sc.depth-- }()
	if sc.depth > maxScanDepth {
		return sc.fail(")", open, true)
	}
	parens := 0
	for i < len(src) {
		c := src[i]
		if parens == 0 && len(src)-i >= len(closer) && src[i:i+len(closer)] == closer {
			return i + len(closer)
		}
		switch {
		case c == '(' || c == '{' && closer == "}":
			parens++
			i++
		case c == ')' || c == '}' && closer == "}":
			if parens > 0 {
				parens--
			}
			i++
		case c == '#' && closer == ")" && (i == 0 || isMeta(src[i-1])):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\\' || c == '\'' || c == '"' || c == '`' || c == '$':
			i = sc.unit(i)
			if sc.open != nil {
				return len(src)
			}
		default:
			i++
		}
	}
	switch kind {
	case "$(":
		return sc.fail(")", open, true)
	case "arr":
		return sc.fail(")", open, false)
	}
	return sc.fail(kind, open, false)
}
