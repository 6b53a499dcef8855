package term

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want []Key
	}{
		{"ab", []Key{'a', 'b'}},
		{"\x1b", []Key{Esc}},
		{"\x1b[A\x1b[B\x1b[C\x1b[D", []Key{KeyUp, KeyDown, KeyRight, KeyLeft}},
		{"\x1bOA\x1bOH\x1bOF", []Key{KeyUp, KeyHome, KeyEnd}},
		{"\x1b[5~\x1b[6~\x1b[3~\x1b[2~\x1b[1~\x1b[4~", []Key{KeyPgUp, KeyPgDn, KeyDelete, KeyInsert, KeyHome, KeyEnd}},
		// An Escape that starts no sequence is the key, and what follows
		// is typed after it (vi: <Esc>:wq).
		{"\x1b:wq\r", []Key{Esc, ':', 'w', 'q', '\r'}},
		{"x\x1bO", []Key{'x', Esc, 'O'}},
		{"\x1bOx", []Key{Esc, 'O', 'x'}},
		{"\x1b[", []Key{Esc, '['}},
		// Unknown sequences (F5, a mouse report) are dropped.
		{"\x1b[15~a\x1b[1;5Pb", []Key{'a', 'b'}},
		{"\x1bOPz", []Key{'z'}},
		{"h\xc3\xa9\xe2\x82\xac", []Key{'h', 'é', '€'}},
		{"\xff\xc3", []Key{0xff, 0xc3}},
		{"\x03\x7f", []Key{Ctrl('c'), 0x7f}},
	}
	for _, tc := range tests {
		if got := Parse([]byte(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestReaderAndSize(t *testing.T) {
	r := NewReader(strings.NewReader("a\x1b[A"))
	var got []Key
	for {
		k, err := r.ReadKey()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	if !slices.Equal(got, []Key{'a', KeyUp}) {
		t.Fatalf("keys %v", got)
	}
	t.Setenv("LINES", "30")
	t.Setenv("COLUMNS", "x")
	if rows, cols := Size(); rows != 30 || cols != 80 {
		t.Fatalf("Size() = %d, %d", rows, cols)
	}
}

// FuzzParse: any input decodes without a panic, every byte is accounted
// for, and a key is a rune or one of the special keys.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"\x1b[1;5A", "\x1b[99999999999~", "\x1bO", "\x1b[\x1b[A", "\xf0\x9f\x98", "é"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		keys := Parse(b)
		if len(keys) > len(b) {
			t.Fatalf("%d keys from %d bytes", len(keys), len(b))
		}
		for _, k := range keys {
			if k < KeyInsert || k > 0x10ffff {
				t.Fatalf("key %d from %q", k, b)
			}
		}
	})
}
