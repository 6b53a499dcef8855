package main

import (
	"fmt"
	"strings"
)

// tparm expands a parameterised terminfo string as ncurses 6.4's tparm
// does (ncurses/tinfo/lib_tparm.c). It is secexec's own rather than
// xo/terminfo's Printf because terminfo's stack machine holds plain ints:
// comparisons push 0 or 1, %t tests any non-zero number, %' pushes a
// character code, and %c of 0 writes 0200; a typed stack gets sgr,
// conditional colours and character arithmetic wrong.
//
// params are the up to nine parameters: an int, or a string for the
// positions analyzeParams marks as strings.
func tparm(s string, params []any) string {
	nParsed, nPopped, isStr := analyzeParams(s)
	var p [9]any
	for i := range p {
		if i < len(params) && params[i] != nil {
			p[i] = params[i]
		} else if isStr[i] {
			p[i] = ""
		} else {
			p[i] = 0
		}
	}
	var st tpStack
	termcap := false
	if nPopped == 0 {
		// A termcap-style string (no %p) pops its parameters in order.
		termcap = true
		for i := nParsed - 1; i >= 0; i-- {
			st.push(p[i])
		}
	}
	var out strings.Builder
	var static, dynamic [26]int
	incremented := false
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			out.WriteByte(s[i])
			continue
		}
		format, j := parseFormat(s, i+1)
		i = j
		if i >= len(s) {
			break
		}
		switch s[i] {
		case '%':
			out.WriteByte('%')
		case 'd':
			fmt.Fprintf(&out, format, st.npop())
		case 'o', 'x', 'X':
			// C prints an int through %o and %x as unsigned.
			fmt.Fprintf(&out, format, uint32(st.npop()))
		case 'c':
			c := byte(st.npop())
			if c == 0 {
				c = 0o200
			}
			out.WriteByte(c)
		case 'l':
			st.push(len(st.spop()))
		case 's':
			fmt.Fprintf(&out, format, st.spop())
		case 'p':
			i++
			if i < len(s) && s[i] >= '1' && s[i] <= '9' {
				st.push(p[s[i]-'1'])
			}
		case 'P':
			i++
			if i < len(s) {
				switch c := s[i]; {
				case c >= 'A' && c <= 'Z':
					static[c-'A'] = st.npop()
				case c >= 'a' && c <= 'z':
					dynamic[c-'a'] = st.npop()
				}
			}
		case 'g':
			i++
			if i < len(s) {
				switch c := s[i]; {
				case c >= 'A' && c <= 'Z':
					st.push(static[c-'A'])
				case c >= 'a' && c <= 'z':
					st.push(dynamic[c-'a'])
				}
			}
		case '\'':
			i++
			if i < len(s) {
				st.push(int(s[i]))
			}
			i++
		case '{':
			n := 0
			i++
			for i < len(s) && isDigit(s[i]) {
				n = n*10 + int(s[i]-'0')
				i++
			}
			st.push(n)
		case '+', '-', '*', '/', 'm', 'A', 'O', '&', '|', '^', '=', '<', '>':
			y, x := st.npop(), st.npop()
			st.push(binop(s[i], x, y))
		case '!':
			st.push(b2i(st.npop() == 0))
		case '~':
			st.push(^st.npop())
		case 'i':
			if !incremented {
				incremented = true
				for k := 0; k < 2; k++ {
					if n, ok := p[k].(int); ok {
						p[k] = n + 1
						if termcap && k < len(st.v) {
							st.v[k] = n + 1
						}
					}
				}
			}
		case 't':
			if st.npop() == 0 {
				i = skipCond(s, i+1, true)
			}
		case 'e':
			i = skipCond(s, i+1, false)
		}
	}
	return out.String()
}

// skipCond moves past the rest of a %? branch: from i, to the %e (when
// elseOK) or %; that closes it at its level. It returns the index of that
// code's letter, so the caller's loop steps past it.
func skipCond(s string, i int, elseOK bool) int {
	level := 0
	for i < len(s) {
		if s[i] == '%' {
			i++
			if i >= len(s) {
				break
			}
			switch {
			case s[i] == '?':
				level++
			case s[i] == ';':
				if level == 0 {
					return i
				}
				level--
			case s[i] == 'e' && elseOK && level == 0:
				return i
			}
		}
		i++
	}
	return i
}

func binop(op byte, x, y int) int {
	x32, y32 := int32(x), int32(y)
	var r int32
	switch op {
	case '+':
		r = x32 + y32
	case '-':
		r = x32 - y32
	case '*':
		r = x32 * y32
	case '/':
		if y32 != 0 && !(x32 == -1<<31 && y32 == -1) {
			r = x32 / y32
		}
	case 'm':
		if y32 != 0 && !(x32 == -1<<31 && y32 == -1) {
			r = x32 % y32
		}
	case 'A':
		r = int32(b2i(x32 != 0 && y32 != 0))
	case 'O':
		r = int32(b2i(x32 != 0 || y32 != 0))
	case '&':
		r = x32 & y32
	case '|':
		r = x32 | y32
	case '^':
		r = x32 ^ y32
	case '=':
		r = int32(b2i(x32 == y32))
	case '<':
		r = int32(b2i(x32 < y32))
	case '>':
		r = int32(b2i(x32 > y32))
	}
	return int(r)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tpStack is tparm's stack: numbers and strings, 20 deep as ncurses's
// (pushes beyond are dropped); popping the wrong kind or an empty stack
// gives 0 or "".
type tpStack struct{ v []any }

const tpStackSize = 20

func (s *tpStack) push(x any) {
	if len(s.v) < tpStackSize {
		s.v = append(s.v, x)
	}
}

func (s *tpStack) pop() any {
	if len(s.v) == 0 {
		return nil
	}
	x := s.v[len(s.v)-1]
	s.v = s.v[:len(s.v)-1]
	return x
}

func (s *tpStack) npop() int {
	n, _ := s.pop().(int)
	return int(int32(n))
}

func (s *tpStack) spop() string {
	str, _ := s.pop().(string)
	return str
}

// maxFormatWidth is ncurses's limit on a width or precision: a larger
// one drops the format's flags.
const maxFormatWidth = 10000

// parseFormat reads the flags, width and precision after a '%' as
// ncurses's parse_format does and returns a Go format for the code at the
// returned index (which may be past the end of s).
func parseFormat(s string, i int) (string, int) {
	var f strings.Builder
	f.WriteByte('%')
	allowMinus, dot, bad := false, false, false
	value := 0
	for i < len(s) {
		c := s[i]
		switch {
		case strings.IndexByte("cdoxXs", c) >= 0:
			f.WriteByte(c)
			if bad {
				return "%" + string(c), i
			}
			return f.String(), i
		case c == '.':
			f.WriteByte(c)
			if dot {
				bad = true
			}
			dot = true
			value = 0
			i++
		case c == '#' || c == ' ':
			f.WriteByte(c)
			i++
		case c == ':':
			allowMinus = true
			i++
		case c == '-' && allowMinus:
			f.WriteByte(c)
			i++
		case isDigit(c):
			value = value*10 + int(c-'0')
			if value > maxFormatWidth {
				bad = true
				value = maxFormatWidth
			}
			f.WriteByte(c)
			i++
		default:
			return "%d", i
		}
	}
	return "%d", i
}
