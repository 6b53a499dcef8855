package grepcore

import (
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "main.golang", false},
		{"*.go", "dir/main.go", true}, // no FNM_PATHNAME: '*' crosses '/'
		{"*", ".hidden", true},        // no FNM_PERIOD
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a?c", "aéc", true},
		{"[ab]x", "bx", true},
		{"[!ab]x", "bx", false},
		{"[^ab]x", "cx", true},
		{"[a-c]", "b", true},
		{"[]]", "]", true},
		{"[[:digit:]]*", "7up", true},
		{"[[:upper:]]", "a", false},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\`, `a\`, false}, // a trailing backslash matches nothing
		{"[abc", "[abc", true},
		{"[abc", "a", false},
		{"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c*", "xxaxxcxxbxx", false},
		{"", "", true},
		{"", "a", false},
		{"**", "", true},
	}
	for _, tc := range tests {
		if got := Glob(tc.pat, tc.name); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tc.pat, tc.name, got, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	type add struct {
		glob    string
		include bool
	}
	tests := []struct {
		name     string
		adds     []add
		file     string
		anchored bool
		want     bool
	}{
		{"empty", nil, "a.c", true, false},
		{"exclude match", []add{{"*.c", false}}, "a.c", true, true},
		{"exclude miss", []add{{"*.c", false}}, "a.h", true, false},
		{"include match", []add{{"*.c", true}}, "a.c", true, false},
		{"include miss", []add{{"*.c", true}}, "a.h", true, true},
		{"last match wins", []add{{"*.c", true}, {"a*", false}}, "a.c", true, true},
		{"last match wins include", []add{{"a*", false}, {"*.c", true}}, "a.c", true, false},
		{"no match first exclude", []add{{"a*", false}, {"*.c", true}}, "b.h", true, false},
		{"no match first include", []add{{"*.c", true}, {"a*", false}}, "b.h", true, true},
		{"unanchored suffix", []add{{"a.c", false}}, "dir/a.c", false, true},
		{"anchored whole", []add{{"a.c", false}}, "dir/a.c", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f Filter
			for _, a := range tc.adds {
				f.Add(a.glob, a.include)
			}
			if got := f.Excluded(tc.file, tc.anchored); got != tc.want {
				t.Errorf("Excluded(%q) = %v, want %v", tc.file, got, tc.want)
			}
		})
	}
}

// FuzzGlob checks Glob never panics, that a name always matches itself
// once quoted and that '*' matches everything.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"*.go", "a.go"}, {"[!a-c]?", "dx"}, {`\[x`, "[x"}, {"[[:alpha:]", "a"}, {"*a*b", "aab"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		if len(pat) > 200 || len(name) > 200 {
			return
		}
		_ = Glob(pat, name)
		if !Glob("*", name) {
			t.Fatalf("'*' does not match %q", name)
		}
		var q strings.Builder
		for _, r := range name {
			q.WriteByte('\\')
			q.WriteRune(r)
		}
		if strings.ToValidUTF8(name, "") == name && !Glob(q.String(), name) {
			t.Fatalf("quoted %q does not match itself", name)
		}
	})
}
