package grepcore

import (
	"regexp"
	"strings"
	"testing"
)

// allMatches runs the -o loop the way grep's prline does.
func allMatches(m *Matcher, line string) []string {
	var out []string
	b := []byte(line)
	for cur := 0; cur <= len(b); {
		s, e, ok := m.Find(b, cur)
		if !ok {
			break
		}
		if e == s {
			cur = s + 1
			continue
		}
		out = append(out, line[s:min(e, len(line))])
		cur = e
	}
	return out
}

func TestMatcher(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		opt      Options
		line     string
		match    bool
		only     []string // -o output
	}{
		{"leftmost longest", []string{"a|ab"}, Options{Syntax: Extended}, "xab", true, []string{"ab"}},
		{"perl leftmost first", []string{"a|ab"}, Options{Syntax: Perl}, "xab", true, []string{"a"}},
		{"several patterns", []string{"foo", "ba."}, Options{Syntax: Basic}, "bar foo baz", true, []string{"bar", "foo", "baz"}},
		{"empty pattern", []string{""}, Options{}, "abc", true, nil},
		{"no patterns", nil, Options{}, "abc", false, nil},
		{"ignore case", []string{"FOO"}, Options{IgnoreCase: true}, "a Foo", true, []string{"Foo"}},
		{"ignore case class", []string{"[[:upper:]]x"}, Options{IgnoreCase: true}, "ax", true, []string{"ax"}},
		{"words", []string{"foo"}, Options{Words: true}, "foobar foo_x foo", true, []string{"foo"}},
		{"words none", []string{"foo"}, Options{Words: true}, "foobar xfoo", false, nil},
		{"words shorter retry", []string{"foo|foobar"}, Options{Syntax: Extended, Words: true}, "foobarx foo", true, []string{"foo"}},
		{"words punctuation", []string{"-foo-"}, Options{Syntax: Fixed, Words: true}, "a -foo- b", true, []string{"-foo-"}},
		{"words trailing nonword", []string{"a-"}, Options{Words: true}, "a-b", false, nil},
		{"words empty pattern", []string{""}, Options{Words: true}, "a b", false, nil},
		{"words empty pattern ok", []string{""}, Options{Words: true}, "a  b", true, nil},
		{"words unicode", []string{"été"}, Options{Words: true}, "xété été", true, []string{"été"}},
		{"lines", []string{"foo.*"}, Options{Lines: true}, "foo bar", true, []string{"foo bar"}},
		{"lines partial", []string{"foo"}, Options{Lines: true}, "foo bar", false, nil},
		{"lines and words quirk", []string{"foo"}, Options{Lines: true, Words: true}, "foo", true, []string{"foo"}},
		{"boundary context", []string{`\bfoo`}, Options{}, "foofoo foo", true, []string{"foo", "foo"}},
		{"anchor context", []string{"^a"}, Options{}, "aaa", true, []string{"a"}},
		{"empty matches step", []string{"b*"}, Options{}, "abcbb", true, []string{"b", "bb"}},
		{"invalid utf8 line", []string{"b"}, Options{}, "a\xffb", true, []string{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Compile(tc.patterns, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Match([]byte(tc.line)); got != tc.match {
				t.Errorf("Match(%q) = %v, want %v", tc.line, got, tc.match)
			}
			if !tc.match {
				return
			}
			got := allMatches(m, tc.line)
			if strings.Join(got, "\x00") != strings.Join(tc.only, "\x00") {
				t.Errorf("-o matches = %q, want %q", got, tc.only)
			}
		})
	}
}

func TestWholeLineWordIncludesTerminator(t *testing.T) {
	// GNU grep -o -x -w prints the line and an extra newline; Find
	// reports that as an end one past the line.
	m, err := Compile([]string{"foo"}, Options{Lines: true, Words: true})
	if err != nil {
		t.Fatal(err)
	}
	s, e, ok := m.Find([]byte("foo"), 0)
	if !ok || s != 0 || e != 4 {
		t.Fatalf("Find = %d, %d, %v; want 0, 4, true", s, e, ok)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, p := range []string{`a\{1`, `[`, `\(`} {
		if _, err := Compile([]string{"ok", p}, Options{}); err == nil {
			t.Errorf("Compile(%q) succeeded", p)
		}
	}
	if _, err := Compile([]string{"(?=x)"}, Options{Syntax: Perl}); err == nil {
		t.Error("Perl look-ahead compiled; Go's RE2 cannot run it")
	}
}

func TestWithoutEndAnchors(t *testing.T) {
	got, err := withoutEndAnchors(`a$|b\z|c`)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\A(?:` + got + `)`)
	for _, s := range []string{"a", "b"} {
		if re.MatchString(s) {
			t.Errorf("%q matched %q although end anchors are disabled", got, s)
		}
	}
	if !re.MatchString("c") {
		t.Errorf("%q does not match c", got)
	}
}

// FuzzTranslate feeds arbitrary patterns through the BRE/ERE translator
// and the matcher: no panics, only PatternErrors, and every reported match
// lies inside the line.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{`a\{1,2\}`, `\(a\|b\)*c`, `[[:alpha:]-]`, `a{,3}|(b)`, `*a`, `[]a-]`, `\<x\>`, `a\`, `[[.a.]]`, "é[é-ü]"} {
		f.Add(s, uint8(0), "abc é x")
	}
	f.Fuzz(func(t *testing.T, pattern string, mode uint8, line string) {
		if len(pattern) > 256 || len(line) > 1024 || strings.Contains(pattern, "\n") {
			return
		}
		opt := Options{
			Syntax:     Syntax(mode % 4),
			IgnoreCase: mode&4 != 0,
			Words:      mode&8 != 0,
			Lines:      mode&16 != 0,
		}
		m, err := Compile([]string{pattern}, opt)
		if err != nil {
			if _, ok := err.(*PatternError); !ok {
				t.Fatalf("Compile(%q) error %T %v, want *PatternError", pattern, err, err)
			}
			return
		}
		b := []byte(line)
		_ = m.Match(b)
		for cur, steps := 0, 0; cur <= len(b) && steps <= len(b)+1; steps++ {
			s, e, ok := m.Find(b, cur)
			if !ok {
				break
			}
			if s < cur || e < s || e > len(b)+1 {
				t.Fatalf("Find(%q, %d) = %d, %d out of range", line, cur, s, e)
			}
			if e == s {
				cur = s + 1
			} else {
				cur = e
			}
		}
	})
}
