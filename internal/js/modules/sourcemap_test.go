package modules

import (
	"strings"
	"testing"
)

func TestVLQRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 15, 16, -16, 31, 32, 1000, -1000, 1 << 20, -(1 << 29), maxMapValue} {
		b := encodeVLQ(nil, v)
		got, next, err := decodeVLQ(string(b), 0)
		if err != nil || got != v || next != len(b) {
			t.Errorf("%d: %q → %d (%v)", v, b, got, err)
		}
	}
	// Known encodings from the source map spec's examples.
	for s, want := range map[string]int64{"A": 0, "C": 1, "D": -1, "gB": 16, "2H": 123} {
		if got, _, err := decodeVLQ(s, 0); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", s, got, err, want)
		}
	}
}

func TestDecodeMappings(t *testing.T) {
	// Line 0: col 0 → (0,0), col 4 → (0,6); line 1 empty; line 2: col 2 →
	// (3,1) and col 8 unmapped.
	sm, err := DecodeMappings("AAAA,IAAM;;EAGL,M")
	if err != nil {
		t.Fatal(err)
	}
	if sm.Lines() != 3 {
		t.Fatalf("lines %d", sm.Lines())
	}
	for _, c := range []struct{ line, col, sl, sc int }{
		{0, 0, 0, 0}, {0, 3, 0, 0}, {0, 4, 0, 6}, {0, 100, 0, 6},
		{2, 0, 3, 1}, {2, 2, 3, 1}, {2, 9, 3, 1},
	} {
		sl, sc, ok := sm.Lookup(c.line, c.col)
		if !ok || sl != c.sl || sc != c.sc {
			t.Errorf("lookup %d:%d = %d:%d %v, want %d:%d", c.line, c.col, sl, sc, ok, c.sl, c.sc)
		}
	}
	if _, _, ok := sm.Lookup(1, 0); ok {
		t.Error("an empty line maps")
	}
	if _, _, ok := sm.Lookup(7, 0); ok {
		t.Error("a line past the end maps")
	}
	for _, bad := range []string{"A!", "AAAAAAB", "AA", "g", "AAAA,AAAAAAAA", "////////////////B", "AD"} {
		if _, err := DecodeMappings(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
	if _, err := ParseSourceMap([]byte(`{"version":2,"mappings":""}`)); err == nil {
		t.Error("version 2 accepted")
	}
}

func TestFileURL(t *testing.T) {
	for p, want := range map[string]string{
		"/w/a.mjs":        "file:///w/a.mjs",
		"/w/[eval1]":      "file:///w/[eval1]",
		"/a b/%c#d?e.mjs": "file:///a%20b/%25c%23d%3Fe.mjs",
		"/é/x.js":         "file:///%C3%A9/x.js",
		"/t\tn\n\\":       "file:///t%09n%0A%5C",
	} {
		if got := FileURL(p); got != want {
			t.Errorf("FileURL(%q) = %q, want %q", p, got, want)
		}
		back, err := FileURLToPath(FileURL(p))
		if err != nil || back != p {
			t.Errorf("round trip %q: %q %v", p, back, err)
		}
	}
}

func TestScriptsBounds(t *testing.T) {
	var s Scripts
	m := &Module{Code: "x", Map: `{"version":3,"mappings":"AAAA"}`}
	for i := 0; i < maxScripts+10; i++ {
		s.Add("/s"+itoa(i), m, 0)
	}
	if len(s.m) != maxScripts {
		t.Fatalf("%d scripts kept", len(s.m))
	}
	if s.Add("/none", &Module{Code: "x"}, 0) {
		t.Error("a script without a map was recorded")
	}
	var big Scripts
	huge := &Module{Map: strings.Repeat("A", maxScriptBytes/2+1)}
	if !big.Add("/a", huge, 0) || big.Add("/b", huge, 0) {
		t.Error("byte bound not enforced")
	}
	// A malformed map is reported once and then left alone.
	var bad Scripts
	bad.Add("/bad", &Module{Map: `{"version":3,"mappings":"!!"}`}, 0)
	if _, _, ok := bad.Map("/bad", 1, 1); ok {
		t.Error("malformed map mapped")
	}
	if _, _, ok := bad.Map("/bad", 1, 1); ok {
		t.Error("malformed map mapped")
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// FuzzDecodeMappings decodes hostile mappings: a typed error or a map,
// never a panic, and lookups anywhere stay in bounds.
func FuzzDecodeMappings(f *testing.F) {
	f.Add("AAAA,IAAM;;EAGL,M")
	f.Add(";;;AACA,SAAS;AACT")
	f.Add("gB2H,+/+/+/+/B")
	f.Add("AAAAA,CCCCC;DDDDD")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 {
			return
		}
		sm, err := DecodeMappings(s)
		if err != nil {
			return
		}
		for line := -1; line <= sm.Lines(); line++ {
			for _, col := range []int{-1, 0, 1, 7, 1 << 20} {
				if sl, sc, ok := sm.Lookup(line, col); ok && (sl < 0 || sc < 0) {
					t.Fatalf("negative position %d:%d", sl, sc)
				}
			}
		}
	})
}
