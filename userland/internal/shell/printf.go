package shell

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// bashPrintf formats like bash's printf builtin: the format is reused
// while arguments remain; numeric arguments take C's forms (and 'c for a
// character's code); a bad number prints an error, counts as 0 and makes
// the status 1. It returns the output, the diagnostics and whether to
// stop (\c in %b).
type printfState struct {
	out    strings.Builder
	errs   []string
	failed bool
	stop   bool
}

func (s *Shell) formatPrintf(format string, args []string) *printfState {
	st := &printfState{}
	for {
		used := st.once(format, args)
		if st.stop || used == 0 || used >= len(args) {
			break
		}
		args = args[used:]
	}
	return st
}

// once formats format with args once and returns how many it consumed.
func (st *printfState) once(format string, args []string) int {
	ai := 0
	next := func() (string, bool) {
		if ai < len(args) {
			ai++
			return args[ai-1], true
		}
		return "", false
	}
	for i := 0; i < len(format) && !st.stop; i++ {
		c := format[i]
		if c == '\\' {
			n, stop := writeEscape(&st.out, format[i:], false)
			i += n - 1
			if stop {
				st.stop = true
			}
			continue
		}
		if c != '%' {
			st.out.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			st.out.WriteByte('%')
			i++
			continue
		}
		// %[flags][width][.precision]conv
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		flags := format[i+1 : j]
		// A width or precision: digits, or * for the next argument.
		count := func() string {
			if j < len(format) && format[j] == '*' {
				a, _ := next()
				j++
				return strconv.Itoa(int(st.number(a)))
			}
			k := j
			for j < len(format) && format[j] >= '0' && format[j] <= '9' {
				j++
			}
			return format[k:j]
		}
		width, prec := count(), ""
		hasPrec := false
		if j < len(format) && format[j] == '.' {
			hasPrec = true
			j++
			if prec = count(); prec == "" {
				prec = "0"
			}
		}
		// Length modifiers are accepted and ignored.
		for j < len(format) && strings.IndexByte("hlLjzt", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			st.errs = append(st.errs, fmt.Sprintf("`%s': missing format character", format[i:]))
			st.failed = true
			return ai
		}
		conv := format[j]
		spec := "%" + flags + width
		if hasPrec {
			spec += "." + prec
		}
		switch conv {
		case 's':
			a, _ := next()
			st.out.WriteString(fmt.Sprintf(spec+"s", a))
		case 'b':
			a, _ := next()
			var b strings.Builder
			for k := 0; k < len(a); k++ {
				if a[k] == '\\' {
					n, stop := writeEscape(&b, a[k:], true)
					k += n - 1
					if stop {
						st.stop = true
						break
					}
					continue
				}
				b.WriteByte(a[k])
			}
			st.out.WriteString(fmt.Sprintf(spec+"s", b.String()))
		case 'q':
			a, _ := next()
			st.out.WriteString(fmt.Sprintf(spec+"s", bashQuote(a)))
		case 'c':
			a, _ := next()
			ch := ""
			if a != "" {
				_, n := utf8.DecodeRuneInString(a)
				ch = a[:n]
			}
			st.out.WriteString(fmt.Sprintf(strings.Replace(spec, "0", "", 1)+"s", ch))
		case 'd', 'i':
			a, _ := next()
			st.out.WriteString(fmt.Sprintf(spec+"d", st.number(a)))
		case 'u', 'o', 'x', 'X':
			a, _ := next()
			n := st.number(a)
			verb := string(conv)
			if conv == 'u' {
				verb = "d"
			}
			if strings.Contains(flags, "#") && conv == 'o' {
				// C's %#o prefixes one 0; Go's matches.
			}
			st.out.WriteString(fmt.Sprintf(spec+verb, uint64(n)))
		case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
			a, _ := next()
			f := st.float(a)
			verb := string(conv)
			if conv == 'F' {
				verb = "f"
			}
			if conv == 'a' || conv == 'A' {
				verb = "x"
				if conv == 'A' {
					verb = "X"
				}
			}
			out := fmt.Sprintf(spec+verb, f)
			if math.IsInf(f, 0) || math.IsNaN(f) {
				out = strings.ToLower(out)
				if conv >= 'A' && conv <= 'Z' {
					out = strings.ToUpper(out)
				}
			}
			st.out.WriteString(out)
		default:
			st.errs = append(st.errs, fmt.Sprintf("%%%c: invalid format character", conv))
			st.failed = true
			return ai
		}
		i = j
	}
	return ai
}

// number converts a numeric argument as bash's printf does.
func (st *printfState) number(a string) int64 {
	t := strings.TrimLeft(a, " \t\n")
	if t == "" {
		return 0
	}
	if t[0] == '\'' || t[0] == '"' {
		if len(t) == 1 {
			return 0
		}
		r, _ := utf8.DecodeRuneInString(t[1:])
		return int64(r)
	}
	neg := false
	body := t
	if body[0] == '-' || body[0] == '+' {
		neg = body[0] == '-'
		body = body[1:]
	}
	base := 10
	digits := body
	switch {
	case strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X"):
		base, digits = 16, body[2:]
	case len(body) > 1 && body[0] == '0':
		base, digits = 8, body[1:]
	}
	end := 0
	for end < len(digits) && digitVal(digits[end]) < base {
		end++
	}
	v, _ := strconv.ParseUint(digits[:end], base, 64)
	if end == 0 && base != 8 || end < len(digits) {
		st.errs = append(st.errs, fmt.Sprintf("%s: invalid number", a))
		st.failed = true
		if end == 0 && base != 8 {
			return 0
		}
	}
	n := int64(v)
	if neg {
		n = -n
	}
	return n
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

func (st *printfState) float(a string) float64 {
	t := strings.TrimSpace(a)
	if t == "" {
		return 0
	}
	if t[0] == '\'' || t[0] == '"' {
		if len(t) == 1 {
			return 0
		}
		r, _ := utf8.DecodeRuneInString(t[1:])
		return float64(r)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		// Take the longest numeric prefix, as strtod does.
		for k := len(t) - 1; k > 0; k-- {
			if g, err2 := strconv.ParseFloat(t[:k], 64); err2 == nil {
				f = g
				break
			}
		}
		st.errs = append(st.errs, fmt.Sprintf("%s: invalid number", a))
		st.failed = true
	}
	return f
}

// writeEscape writes the backslash escape at the start of s and returns
// its length; inB selects %b's rules (\0NNN octal, \c stops).
func writeEscape(b *strings.Builder, s string, inB bool) (int, bool) {
	if len(s) < 2 {
		b.WriteByte('\\')
		return 1, false
	}
	switch c := s[1]; c {
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 'c':
		if inB {
			return 2, true
		}
		b.WriteString(`\c`)
	case 'e', 'E':
		b.WriteByte(0x1b)
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case '\\':
		b.WriteByte('\\')
	case '"':
		if inB {
			b.WriteString(`\"`)
		} else {
			b.WriteByte('"')
		}
	case '\'':
		if inB {
			b.WriteString(`\'`)
		} else {
			b.WriteByte('\'')
		}
	case '?':
		if inB {
			b.WriteString(`\?`)
		} else {
			b.WriteByte('?')
		}
	case 'x':
		n, k := 0, 2
		for ; k < len(s) && k < 4 && isHex(s[k]); k++ {
			n = n*16 + hexVal(s[k])
		}
		if k == 2 {
			b.WriteString(`\x`)
			return 2, false
		}
		b.WriteByte(byte(n))
		return k, false
	case 'u', 'U':
		max := 6
		if c == 'U' {
			max = 10
		}
		n, k := 0, 2
		for ; k < len(s) && k < max && isHex(s[k]); k++ {
			n = n*16 + hexVal(s[k])
		}
		if k == 2 {
			b.WriteString(s[:2])
			return 2, false
		}
		b.WriteRune(rune(n))
		return k, false
	default:
		if c >= '0' && c <= '7' {
			start, limit := 1, 4
			if inB && c == '0' {
				start, limit = 2, 5
			}
			n, k := 0, start
			for ; k < len(s) && k < limit && s[k] >= '0' && s[k] <= '7'; k++ {
				n = n*8 + int(s[k]-'0')
			}
			b.WriteByte(byte(n))
			return k, false
		}
		b.WriteByte('\\')
		b.WriteByte(c)
	}
	return 2, false
}

// bashQuote quotes a word as printf %q and ${x@Q}-like output of bash:
// backslashes for plain specials, $'...' when control characters occur.
func bashQuote(a string) string {
	if a == "" {
		return "''"
	}
	ctl := false
	for _, r := range a {
		if r < 0x20 || r == 0x7f {
			ctl = true
		}
	}
	if ctl {
		var b strings.Builder
		b.WriteString("$'")
		for _, r := range a {
			switch r {
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			case '\r':
				b.WriteString(`\r`)
			case 0x1b:
				b.WriteString(`\E`)
			case '\a':
				b.WriteString(`\a`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\v':
				b.WriteString(`\v`)
			case '\'':
				b.WriteString(`\'`)
			case '\\':
				b.WriteString(`\\`)
			default:
				if r < 0x20 || r == 0x7f {
					fmt.Fprintf(&b, `\%03o`, r)
				} else {
					b.WriteRune(r)
				}
			}
		}
		b.WriteByte('\'')
		return b.String()
	}
	var b strings.Builder
	for i, r := range a {
		if strings.ContainsRune(" \t|&;()<>!{}*?[]$`'\"\\#=~^,", r) && !(r == '~' && i > 0) && !(r == '=' || r == ',') {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
