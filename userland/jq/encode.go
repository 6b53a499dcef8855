package main

import (
	"bufio"
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
)

// maxPrintDepth bounds how deep the encoder recurses; deeper values print
// a marker instead, as jq does, so a hostile value cannot exhaust the stack.
const maxPrintDepth = 10000

// encoder writes values the way jq 1.7's jv_dump_term does: two-space
// indentation by default, "key": value with one space, empty containers as
// [] and {}, numbers in jq's shortest round-trip format.
type encoder struct {
	indent int  // spaces per level; 0 is compact output
	tab    bool // indent with one tab per level
	ascii  bool // escape every non-ASCII character (-a)
	buf    []byte
}

func (e *encoder) pretty() bool { return e.tab || e.indent > 0 }

// encode writes v to w.
func (e *encoder) encode(w *bufio.Writer, v any) {
	e.value(w, v, 0)
}

func (e *encoder) newline(w *bufio.Writer, level int) {
	w.WriteByte('\n')
	if e.tab {
		for range level {
			w.WriteByte('\t')
		}
		return
	}
	for range level * e.indent {
		w.WriteByte(' ')
	}
}

func (e *encoder) value(w *bufio.Writer, v any, level int) {
	switch v := v.(type) {
	case nil:
		w.WriteString("null")
	case bool:
		if v {
			w.WriteString("true")
		} else {
			w.WriteString("false")
		}
	case int:
		e.buf = strconv.AppendInt(e.buf[:0], int64(v), 10)
		w.Write(e.buf)
	case float64:
		e.buf = appendNumber(e.buf[:0], v)
		w.Write(e.buf)
	case *big.Int:
		e.buf = v.Append(e.buf[:0], 10)
		w.Write(e.buf)
	case json.Number:
		// An input literal passed through unchanged keeps its spelling,
		// as jq 1.7 preserves number literals.
		w.WriteString(string(v))
	case string:
		e.buf = appendString(e.buf[:0], v, e.ascii)
		w.Write(e.buf)
	case []any:
		if len(v) == 0 {
			w.WriteString("[]")
			return
		}
		if level >= maxPrintDepth {
			w.WriteString("<skipped: too deep>")
			return
		}
		w.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				w.WriteByte(',')
			}
			if e.pretty() {
				e.newline(w, level+1)
			}
			e.value(w, x, level+1)
		}
		if e.pretty() {
			e.newline(w, level)
		}
		w.WriteByte(']')
	case map[string]any:
		if len(v) == 0 {
			w.WriteString("{}")
			return
		}
		if level >= maxPrintDepth {
			w.WriteString("<skipped: too deep>")
			return
		}
		// gojq objects are Go maps, so key order is not kept; sorting
		// makes output deterministic (as with jq -S).
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.WriteByte(',')
			}
			if e.pretty() {
				e.newline(w, level+1)
			}
			e.buf = appendString(e.buf[:0], k, e.ascii)
			w.Write(e.buf)
			w.WriteByte(':')
			if e.pretty() {
				w.WriteByte(' ')
			}
			e.value(w, v[k], level+1)
		}
		if e.pretty() {
			e.newline(w, level)
		}
		w.WriteByte('}')
	default:
		// gojq only produces the types above; anything else is a bug in
		// a custom function, reported as jq reports invalid values.
		w.WriteString("null")
	}
}

// appendNumber formats f like jq's jvp_dtoa_fmt: the shortest digits that
// round-trip, plain notation unless the exponent is below -4 or above the
// digit count plus 15, exponents with a sign and at least two digits. NaN
// prints as null and infinities as the largest finite double.
func appendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "null"...)
	case math.IsInf(f, 1):
		f = math.MaxFloat64
	case math.IsInf(f, -1):
		f = -math.MaxFloat64
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	// 'e' with precision -1 gives d[.ddd]e±XX with the shortest digits.
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	epos := slices.Index(s, 'e')
	exp, _ := strconv.Atoi(string(s[epos+1:]))
	digits := make([]byte, 0, 17)
	for _, c := range s[:epos] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	decpt := exp + 1
	switch {
	case decpt <= -4 || decpt > len(digits)+15:
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		e := decpt - 1
		if e < 0 {
			b = append(b, '-')
			e = -e
		} else {
			b = append(b, '+')
		}
		if e < 10 {
			b = append(b, '0')
		}
		b = strconv.AppendInt(b, int64(e), 10)
	case decpt <= 0:
		b = append(b, '0', '.')
		for ; decpt < 0; decpt++ {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		for i, d := range digits {
			if i == decpt {
				b = append(b, '.')
			}
			b = append(b, d)
		}
		for i := len(digits); i < decpt; i++ {
			b = append(b, '0')
		}
	}
	return b
}

// appendString quotes s like jq: \" \\ \b \t \r \n \f, other control
// characters and DEL as \u00xx, everything else raw unless ascii is set.
// Bytes that are not UTF-8 become U+FFFD, as jq would have read them.
func appendString(b []byte, s string, ascii bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c >= 0x20 && c < 0x7f:
				b = append(b, c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !ascii {
			b = utf8.AppendRune(b, r) // RuneError for invalid bytes is U+FFFD
			continue
		}
		if r > 0xffff {
			r -= 0x10000
			hi, lo := 0xd800|(r>>10)&0x3ff, 0xdc00|r&0x3ff
			b = append(b, '\\', 'u', hex[hi>>12], hex[hi>>8&0xf], hex[hi>>4&0xf], hex[hi&0xf])
			b = append(b, '\\', 'u', hex[lo>>12], hex[lo>>8&0xf], hex[lo>>4&0xf], hex[lo&0xf])
			continue
		}
		b = append(b, '\\', 'u', hex[r>>12], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	return append(b, '"')
}
