package main

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// decodeAll decodes a stream of JSON values with numbers kept as text.
func decodeAll(t *testing.T, data []byte) ([]any, bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var vals []any
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			return vals, err.Error() == "EOF"
		}
		vals = append(vals, v)
	}
}

// FuzzInput feeds hostile input to the decoder, the line tracking and the
// encoder: jq must not panic, must exit 0 or 5 (or 2 for I/O), and "jq -c ."
// must print back exactly the values it read.
func FuzzInput(f *testing.F) {
	f.Add(uint8(0), []byte(`{"a":[1,2.50,"x\u00e9"],"b":null} 3 "s"`))
	f.Add(uint8(1), []byte("line1\nline2\r\n\xff"))
	f.Add(uint8(2), []byte("[1,\n2]\n{\"a\":\n1e400}"))
	f.Add(uint8(3), []byte(`[[[[]]]] {} ""`))
	f.Fuzz(func(t *testing.T, mode uint8, input []byte) {
		if len(input) > 1<<16 {
			return
		}
		args := [][]string{
			{"jq", "-c", "."},
			{"jq", "-R", "."},
			{"jq", "-sc", "."},
			{"jq", "--tab", "-a", "."},
		}[mode%4]
		var out, errb bytes.Buffer
		code := runLimited(args, bytes.NewReader(input), &out, &errb, 1<<20)
		if code != 0 && code != 5 {
			t.Fatalf("exit %d: %q", code, errb.String())
		}
		if mode%4 != 0 || code != 0 {
			return
		}
		want, ok := decodeAll(t, input)
		if !ok {
			t.Fatalf("jq accepted input Go rejects: %q", input)
		}
		got, ok := decodeAll(t, out.Bytes())
		if !ok {
			t.Fatalf("output is not JSON: %q", out.String())
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("round trip changed values:\n in: %q\nout: %q", input, out.String())
		}
	})
}

// normalize turns json.Numbers into float64 so "1e400" and the printed
// maximum double compare by value.
func normalize(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return string(v)
		}
		return f
	case []any:
		for i := range v {
			v[i] = normalize(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = normalize(v[k])
		}
	}
	return v
}

// FuzzAppendNumber checks jq's number format always reads back as the
// same double.
func FuzzAppendNumber(f *testing.F) {
	for _, x := range []float64{0, 1, -1.5, 1e17, 1e-5, 123456789012345678, 5e-324, math.MaxFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		s := string(appendNumber(nil, x))
		if math.IsNaN(x) {
			if s != "null" {
				t.Fatalf("NaN printed as %q", s)
			}
			return
		}
		if math.IsInf(x, 0) {
			x = math.Copysign(math.MaxFloat64, x)
		}
		got, err := strconv.ParseFloat(s, 64)
		if err != nil || got != x || math.Signbit(got) != math.Signbit(x) {
			t.Fatalf("%v printed as %q reads back as %v (%v)", x, s, got, err)
		}
	})
}

// FuzzArgs throws arbitrary command lines at the option parser.
func FuzzArgs(f *testing.F) {
	f.Add("-n\x00--arg\x00a\x00b\x00$a")
	f.Add("-rcS\x00--indent\x007\x00.\x00--\x00-")
	f.Add("--slurpfile\x00x\x00/nonexistent\x00.")
	f.Fuzz(func(t *testing.T, joined string) {
		if len(joined) > 512 {
			return
		}
		args := append([]string{"jq", "-n"}, strings.Split(joined, "\x00")...)
		for _, a := range args {
			// Keep programs cheap: no generators that could run long.
			if strings.Contains(a, "range") || strings.Contains(a, "repeat") || strings.Contains(a, "recurse") ||
				strings.Contains(a, "while") || strings.Contains(a, "until") || strings.Contains(a, "def") ||
				strings.Contains(a, "input") || strings.Contains(a, "limit") || strings.Contains(a, "*") {
				return
			}
		}
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errb)
		switch code {
		case 0, 1, 2, 3, 4, 5:
		default:
			if !strings.Contains(strings.Join(args, " "), "halt") {
				t.Fatalf("exit %d", code)
			}
		}
	})
}
