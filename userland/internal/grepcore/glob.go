package grepcore

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Glob reports whether name matches the shell pattern pat as fnmatch(3)
// does with no flags, which is how GNU grep applies --include, --exclude
// and --exclude-dir: '*' and '?' also match '/' and a leading '.', '[...]'
// is a bracket expression ('!' or '^' negates) and '\' quotes the next
// character. It runs in O(len(pat) * len(name)) time.
func Glob(pat, name string) bool {
	// Classic two-cursor matcher: remember the last '*' and the name
	// position it was tried at, and on a mismatch let it absorb one more
	// rune. Because '*' matches anything, one backtrack point suffices.
	p, n := 0, 0
	starP, starN := -1, 0
	for n < len(name) {
		if p < len(pat) {
			switch pat[p] {
			case '*':
				starP, starN = p, n
				p++
				continue
			case '?':
				_, size := utf8.DecodeRuneInString(name[n:])
				p++
				n += size
				continue
			case '[':
				r, size := utf8.DecodeRuneInString(name[n:])
				if matched, next, ok := globBracket(pat, p, r); ok {
					if matched {
						p = next
						n += size
						continue
					}
				} else if name[n] == '[' {
					// An unterminated '[' is an ordinary character.
					p++
					n++
					continue
				}
			case '\\':
				if p+1 < len(pat) {
					_, psize := utf8.DecodeRuneInString(pat[p+1:])
					_, nsize := utf8.DecodeRuneInString(name[n:])
					if pat[p+1:p+1+psize] == name[n:n+nsize] {
						p += 1 + psize
						n += nsize
						continue
					}
				}
				// A trailing backslash matches nothing, as in glibc.
			default:
				_, psize := utf8.DecodeRuneInString(pat[p:])
				_, nsize := utf8.DecodeRuneInString(name[n:])
				if pat[p:p+psize] == name[n:n+nsize] {
					p += psize
					n += nsize
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, size := utf8.DecodeRuneInString(name[starN:])
		starN += size
		p, n = starP+1, starN
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}

// globBracket matches r against the bracket expression at pat[p] ('[').
// ok is false if the expression is unterminated.
func globBracket(pat string, p int, r rune) (matched bool, next int, ok bool) {
	i := p + 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	first := true
	readChar := func() (rune, bool) {
		if i >= len(pat) {
			return 0, false
		}
		if pat[i] == '\\' && i+1 < len(pat) {
			i++
		}
		c, size := utf8.DecodeRuneInString(pat[i:])
		i += size
		return c, true
	}
	for {
		if i >= len(pat) {
			return false, 0, false
		}
		if pat[i] == ']' && !first {
			i++
			break
		}
		first = false
		if strings.HasPrefix(pat[i:], "[:") {
			end := strings.Index(pat[i+2:], ":]")
			if end >= 0 {
				name := pat[i+2 : i+2+end]
				i += 2 + end + 2
				if classMatch(name, r) {
					matched = true
				}
				continue
			}
		}
		lo, okc := readChar()
		if !okc {
			return false, 0, false
		}
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			i++
			if hi, okc = readChar(); !okc {
				return false, 0, false
			}
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return matched != negate, i, true
}

// classMatch reports whether r is in the POSIX class name, with the
// same (UTF-8 locale) meaning as the regexp translation.
func classMatch(name string, r rune) bool {
	graph := unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) ||
		unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.Is(unicode.Co, r)
	switch name {
	case "alpha":
		return unicode.IsLetter(r)
	case "alnum":
		return unicode.IsLetter(r) || unicode.Is(unicode.Nd, r)
	case "upper":
		return unicode.IsUpper(r)
	case "lower":
		return unicode.IsLower(r)
	case "digit":
		return r >= '0' && r <= '9'
	case "xdigit":
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
	case "space":
		return strings.ContainsRune("\t\n\v\f\r \u1680\u2028\u2029\u205f\u3000", r) || r >= 0x2000 && r <= 0x200a && r != 0x2007
	case "blank":
		return strings.ContainsRune("\t \u1680\u205f\u3000", r) || r >= 0x2000 && r <= 0x200a && r != 0x2007
	case "cntrl":
		return r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029
	case "punct":
		return unicode.IsPunct(r) || unicode.IsSymbol(r)
	case "graph":
		return graph
	case "print":
		return graph || unicode.Is(unicode.Zs, r)
	}
	return false
}

// Filter holds --include/--exclude (or --exclude-dir) globs in the order
// given and decides like gnulib's excluded_file_name: the last glob that
// matches wins; when none matches, a name is excluded only if the first
// glob given was an --include.
type Filter struct {
	rules []rule
}

type rule struct {
	glob    string
	include bool
}

// Add appends a glob; include marks an --include glob.
func (f *Filter) Add(glob string, include bool) {
	f.rules = append(f.rules, rule{glob: glob, include: include})
}

// Empty reports whether no glob was added.
func (f *Filter) Empty() bool { return f == nil || len(f.rules) == 0 }

// Excluded reports whether name is filtered out. An anchored match (used
// for names found while recursing) must match the whole name; otherwise
// (names given on the command line) any suffix after a '/' may match.
func (f *Filter) Excluded(name string, anchored bool) bool {
	if f.Empty() {
		return false
	}
	for i := len(f.rules) - 1; i >= 0; i-- {
		if matchName(f.rules[i].glob, name, anchored) {
			return !f.rules[i].include
		}
	}
	return f.rules[0].include
}

func matchName(glob, name string, anchored bool) bool {
	if Glob(glob, name) {
		return true
	}
	if anchored {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' && i+1 < len(name) && name[i+1] != '/' && Glob(glob, name[i+1:]) {
			return true
		}
	}
	return false
}
