package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxNFASegments bounds the segments after a pattern's literal prefix, so
// the matcher's state set fits one uint64 (one bit per segment plus the
// accepting state).
const maxNFASegments = 63

// tokKind is one element of a compiled segment glob.
type tokKind uint8

const (
	tokLit  tokKind = iota // a literal run of bytes
	tokOne                 // '?': exactly one character (UTF-8 rune)
	tokStar                // '*': any run of characters, possibly empty
)

type token struct {
	kind tokKind
	lit  string
}

// segKind classifies a compiled segment so that the common shapes (a
// literal, "*", "lit*", "*lit") skip the general matcher.
type segKind uint8

const (
	segLit      segKind = iota // exact text
	segAny                     // "*": any segment
	segPrefix                  // "lit*"
	segSuffix                  // "*lit"
	segGlob                    // anything else without "**"
	segGlobstar                // "**" as a whole segment
)

// segment is one compiled path segment, host label, or (for flat domains
// such as env keys) the whole pattern.
type segment struct {
	kind segKind
	lit  string
	toks []token
}

// hasGlobMeta reports whether s contains an unescaped glob character. It
// does not validate escapes; compileSegment does.
func hasGlobMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?':
			return true
		case '\\':
			i++
		}
	}
	return false
}

// compileSegment compiles the glob text of one segment. The caller has
// already split on the separator and handled a whole-segment "**". Escapes:
// `\*`, `\?` and `\\` stand for the literal character; any other backslash
// is an error so that patterns stay unambiguous.
func compileSegment(text string) (segment, error) {
	if text == "" {
		return segment{}, fmt.Errorf("empty segment")
	}
	var toks []token
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, token{kind: tokLit, lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '\\':
			if i+1 >= len(text) {
				return segment{}, fmt.Errorf("trailing backslash")
			}
			i++
			switch n := text[i]; n {
			case '*', '?', '\\':
				lit.WriteByte(n)
			default:
				return segment{}, fmt.Errorf("invalid escape %q (only \\*, \\? and \\\\ are escapes)", text[i-1:i+1])
			}
		case '*':
			flush()
			if len(toks) > 0 && toks[len(toks)-1].kind == tokStar {
				return segment{}, fmt.Errorf("%q must be a whole segment", "**")
			}
			toks = append(toks, token{kind: tokStar})
		case '?':
			flush()
			toks = append(toks, token{kind: tokOne})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	switch {
	case len(toks) == 1 && toks[0].kind == tokLit:
		return segment{kind: segLit, lit: toks[0].lit}, nil
	case len(toks) == 1 && toks[0].kind == tokStar:
		return segment{kind: segAny}, nil
	case len(toks) == 2 && toks[0].kind == tokLit && toks[1].kind == tokStar:
		return segment{kind: segPrefix, lit: toks[0].lit}, nil
	case len(toks) == 2 && toks[0].kind == tokStar && toks[1].kind == tokLit:
		return segment{kind: segSuffix, lit: toks[1].lit}, nil
	}
	return segment{kind: segGlob, toks: toks}, nil
}

// match reports whether the segment matches t. A globstar never matches
// here: the segmented matcher handles it.
func (s *segment) match(t string) bool {
	switch s.kind {
	case segLit:
		return t == s.lit
	case segAny:
		return true
	case segPrefix:
		return strings.HasPrefix(t, s.lit)
	case segSuffix:
		return strings.HasSuffix(t, s.lit)
	case segGlob:
		return matchTokens(s.toks, t)
	}
	return false
}

// matchTokens matches a '*'/'?' glob against t. It remembers only the most
// recent star: a later star can absorb anything an earlier one could, so
// going back further never finds a new match. That makes the worst case
// O(len(toks) * len(t)) instead of the exponential cost of naive
// backtracking. Stars and '?' advance by whole UTF-8 runes (an invalid byte
// counts as one character), so a literal never matches mid-rune.
func matchTokens(toks []token, t string) bool {
	ti, si := 0, 0
	starTi, starSi := -1, 0
	for {
		if ti < len(toks) {
			switch tk := &toks[ti]; tk.kind {
			case tokStar:
				starTi, starSi = ti, si
				ti++
				continue
			case tokOne:
				if si < len(t) {
					_, n := utf8.DecodeRuneInString(t[si:])
					si += n
					ti++
					continue
				}
			case tokLit:
				if strings.HasPrefix(t[si:], tk.lit) {
					si += len(tk.lit)
					ti++
					continue
				}
			}
		} else if si == len(t) {
			return true
		}
		// Mismatch: let the last star swallow one more character.
		if starTi < 0 || starSi >= len(t) {
			return false
		}
		_, n := utf8.DecodeRuneInString(t[starSi:])
		starSi += n
		ti, si = starTi+1, starSi
	}
}

// patKind classifies a segmented pattern so that the shapes the CLI
// produces ("/a/b" and "/a/b/**") are a string compare.
type patKind uint8

const (
	patExact patKind = iota // all segments literal
	patTree                 // literal segments then "**": the node and its subtree
	patAll                  // "**" alone: everything
	patDeep                 // literal prefix, "**", one segment: "/src/**/*.go"
	patNFA                  // literal prefix, then a general segment list
)

// segPattern is a compiled pattern over sep-separated segments: a path
// (sep '/', the leading '/' removed) or a host name (sep '.'). The empty
// string is the sequence of zero segments (the root directory).
type segPattern struct {
	kind     patKind
	sep      byte
	lit      string    // leading literal segments joined by sep, unescaped
	litSep   string    // lit + sep
	segs     []segment // the rest of the pattern, for patNFA
	starMask uint64    // bit i set when segs[i] is "**"
	tailStar uint64    // the bit of a final "**", if any
	// tail is the trailing literal segments of segs joined by sep, and
	// sepTail is sep+tail: a cheap necessary condition checked before the
	// NFA runs ("/**/node_modules" rejects most paths by suffix alone).
	tail, sepTail string
}

// compileSegments compiles already-split segment texts (none empty).
func compileSegments(texts []string, sep byte) (segPattern, error) {
	p := segPattern{sep: sep}
	var segs []segment
	var litParts []string
	for _, t := range texts {
		if t == "**" {
			// Consecutive "**" mean the same as one; collapsing them keeps
			// the NFA small and the closure a single step.
			if len(segs) > 0 && segs[len(segs)-1].kind == segGlobstar {
				continue
			}
			segs = append(segs, segment{kind: segGlobstar})
			continue
		}
		s, err := compileSegment(t)
		if err != nil {
			return segPattern{}, err
		}
		if s.kind == segLit && len(segs) == 0 {
			litParts = append(litParts, s.lit)
			continue
		}
		segs = append(segs, s)
	}
	p.lit = strings.Join(litParts, string(sep))
	p.litSep = p.lit + string(sep)
	switch {
	case len(segs) == 0:
		p.kind = patExact
	case len(segs) == 1 && segs[0].kind == segGlobstar && len(litParts) == 0:
		p.kind = patAll
	case len(segs) == 1 && segs[0].kind == segGlobstar:
		p.kind = patTree
	case len(segs) == 2 && segs[0].kind == segGlobstar:
		// "**/X" matches when X matches the last segment: no NFA needed.
		p.kind = patDeep
		p.segs = segs
	default:
		if len(segs) > maxNFASegments {
			return segPattern{}, fmt.Errorf("more than %d segments after the literal prefix", maxNFASegments)
		}
		p.kind = patNFA
		p.segs = segs
		for i, s := range segs {
			if s.kind == segGlobstar {
				p.starMask |= 1 << i
			}
		}
		if segs[len(segs)-1].kind == segGlobstar {
			p.tailStar = 1 << (len(segs) - 1)
		}
		var tail []string
		for i := len(segs) - 1; i >= 0 && segs[i].kind == segLit; i-- {
			tail = append([]string{segs[i].lit}, tail...)
		}
		if len(tail) > 0 {
			p.tail = strings.Join(tail, string(sep))
			p.sepTail = string(sep) + p.tail
		}
	}
	return p, nil
}

// match reports whether the pattern matches s, a canonical segment list
// (no empty segments, no leading or trailing separator).
func (p *segPattern) match(s string) bool {
	switch p.kind {
	case patAll:
		return true
	case patExact:
		return s == p.lit
	case patTree:
		return s == p.lit || strings.HasPrefix(s, p.litSep)
	}
	rest := s
	if p.lit != "" {
		switch {
		case s == p.lit:
			rest = ""
		case strings.HasPrefix(s, p.litSep):
			rest = s[len(p.litSep):]
		default:
			return false
		}
	}
	if p.kind == patDeep {
		return rest != "" && p.segs[1].match(rest[strings.LastIndexByte(rest, p.sep)+1:])
	}
	if p.tail != "" && rest != p.tail && !strings.HasSuffix(rest, p.sepTail) {
		return false
	}
	return p.matchNFA(rest)
}

// closure adds the states reachable by letting a "**" match zero segments.
func (p *segPattern) closure(x uint64) uint64 {
	for {
		y := x | (x&p.starMask)<<1
		if y == x {
			return x
		}
		x = y
	}
}

// matchNFA simulates the segment NFA over rest: state i means "segs[:i]
// matched the segments consumed so far". Each segment of rest is visited
// once and tested against each live state once, so the cost is
// O(segments(rest) * len(segs)) segment matches, whatever the number of
// "**" in the pattern.
func (p *segPattern) matchNFA(rest string) bool {
	n := len(p.segs)
	final := uint64(1) << n
	state := p.closure(1)
	for rest != "" {
		if state&p.tailStar != 0 {
			return true // a trailing "**" swallows whatever is left
		}
		seg := rest
		i := strings.IndexByte(rest, p.sep)
		if i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if state = p.step(state, seg); state == 0 {
			return false
		}
	}
	return state&final != 0
}
