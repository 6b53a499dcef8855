package grepcore

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestTranslate(t *testing.T) {
	tests := []struct {
		name     string
		syn      Syntax
		pattern  string
		want     string // Go syntax; empty when wantErr is set
		warnings []string
		wantErr  string
	}{
		{"bre literal", Basic, "abc", "abc", nil, ""},
		{"bre group", Basic, `\(ab\)*`, `(?:(?:ab))*`, nil, ""},
		{"bre alternation", Basic, `a\|b`, `a|b`, nil, ""},
		{"bre plus question", Basic, `a\+b\?`, `(?:a)+(?:b)?`, nil, ""},
		{"bre interval", Basic, `a\{2,3\}`, `(?:a){2,3}`, nil, ""},
		{"bre interval open", Basic, `a\{,3\}`, `(?:a){0,3}`, nil, ""},
		{"bre literal ops", Basic, `a+?(){}|`, `a\+\?\(\)\{\}\|`, nil, ""},
		{"bre star at start", Basic, `*a`, `\*a`, nil, ""},
		{"bre star after group", Basic, `\(*a\)`, `(?:\*a)`, nil, ""},
		{"bre star after anchor", Basic, `^*a`, `^\*a`, nil, ""},
		{"bre plus at start", Basic, `\+a`, `\+a`, nil, ""},
		{"bre brace at start", Basic, `\{1\}`, `\{1\}`, nil, ""},
		{"bre caret mid", Basic, `a^b`, `a\^b`, nil, ""},
		{"bre dollar mid", Basic, `a$b`, `a\$b`, nil, ""},
		{"bre dollar before group end", Basic, `\(a$\)`, `(?:a$)`, nil, ""},
		{"bre caret after alt", Basic, `a\|^b`, `a|^b`, nil, ""},
		{"bre double star", Basic, `a**`, `(?:(?:a)*)*`, nil, ""},
		{"bre stray escape", Basic, `\d`, `d`, nil, ""},
		{"bre escaped specials", Basic, `\.\*\[\]\^\$\\`, `\.\*\[\]\^\$\\`, nil, ""},
		{"bre dot", Basic, `a.c`, `a(?s:.)c`, nil, ""},
		{"bre word escapes", Basic, `\w\W`, `[\p{L}\p{Nd}_][^\p{L}\p{Nd}_]`, nil, ""},
		{"bre boundaries", Basic, `\<a\>\bc\B`, `\ba\b\bc\B`, nil, ""},
		{"ere group alt", Extended, `(a|b)+`, `(?:(?:a|b))+`, nil, ""},
		{"ere star at start", Extended, `*a`, `a`, []string{"* at start of expression"}, ""},
		{"ere plus at start", Extended, `+a`, `a`, []string{"+ at start of expression"}, ""},
		{"ere interval at start", Extended, `{1}a`, `a`, []string{"{...} at start of expression"}, ""},
		{"ere star after alt", Extended, `a|*b`, `a|b`, []string{"* at start of expression"}, ""},
		{"ere lone rparen", Extended, `a)`, `a\)`, nil, ""},
		{"ere star after anchor", Extended, `$*2`, `(?:$)*2`, []string{"* at start of expression"}, ""},
		{"ere malformed interval at start", Extended, `{}a`, `\{\}a`, nil, ""},
		{"ere rparen after skipped op", Extended, `(*))`, `(?:\))`, []string{"* at start of expression"}, ""},
		{"ere skipped op unclosed group", Extended, `(*)`, "", nil, `Unmatched ( or \(`},
		{"ere invalid interval literal", Extended, `a{x`, `a\{x`, nil, ""},
		{"ere unterminated interval literal", Extended, `a{1`, `a\{1`, nil, ""},
		{"ere interval comma", Extended, `a{,}`, `(?:a){0,}`, nil, ""},
		{"ere nested repeat", Extended, `a+*`, `(?:(?:a)+)*`, nil, ""},
		{"ere empty group", Extended, `()`, `(?:)`, nil, ""},
		{"ere escaped paren", Extended, `\(`, `\(`, nil, ""},
		{"bracket basic", Basic, `[a-c]`, `[a-c]`, nil, ""},
		{"bracket rbracket first", Basic, `[]a]`, `[\]a]`, nil, ""},
		{"bracket negated rbracket", Basic, `[^]a]`, `[^\]a]`, nil, ""},
		{"bracket dash last", Basic, `[a-]`, `[a\-]`, nil, ""},
		{"bracket backslash literal", Basic, `[\n]`, `[\\n]`, nil, ""},
		{"bracket class", Basic, `[[:digit:]x]`, `[0-9x]`, nil, ""},
		{"bracket collating", Basic, `[[.a.][=b=]]`, `[ab]`, nil, ""},
		{"bracket dash range", Basic, `[--z]`, `[\--z]`, nil, ""},
		{"fixed", Fixed, `a.b*[c]`, `a\.b\*\[c\]`, nil, ""},
		{"fixed invalid utf8", Fixed, "a\xffb", `a\x{FFFD}b`, nil, ""},
		{"perl", Perl, `\d+(?i)x`, `\d+(?i)x`, nil, ""},

		{"trailing backslash", Basic, `a\`, "", nil, "Trailing backslash"},
		{"unmatched bracket", Basic, `[a`, "", nil, "Unmatched [, [^, [:, [., or [="},
		{"unmatched bracket class", Basic, `[[:alpha:]`, "", nil, "Unmatched [, [^, [:, [., or [="},
		{"unmatched lparen bre", Basic, `\(a`, "", nil, `Unmatched ( or \(`},
		{"unmatched lparen ere", Extended, `(a`, "", nil, `Unmatched ( or \(`},
		{"unmatched rparen bre", Basic, `a\)`, "", nil, `Unmatched ) or \)`},
		{"unmatched brace bre", Basic, `a\{1`, "", nil, `Unmatched \{`},
		{"bad brace bre", Basic, `a\{1,x\}`, "", nil, `Invalid content of \{\}`},
		{"bad brace ere", Extended, `a{1,2,3}`, "", nil, `Invalid content of \{\}`},
		{"empty brace ere", Extended, `a{}`, "", nil, `Invalid content of \{\}`},
		{"reversed brace", Extended, `a{2,1}`, "", nil, `Invalid content of \{\}`},
		{"brace too big", Extended, `a{99999}`, "", nil, "Regular expression too big"},
		{"bad class", Basic, `[[:foo:]]`, "", nil, "Invalid character class name"},
		{"colon class", Basic, `[:space:]`, "", nil, "character class syntax is [[:space:]], not [:space:]"},
		{"colon class after glibc error", Basic, `[:space:]\(`, "", nil, `Unmatched ( or \(`},
		{"empty bracket", Basic, `[`, "", nil, "Invalid regular expression"},
		{"empty negated bracket", Basic, `[^`, "", nil, "Invalid regular expression"},
		{"hyphen mid bracket", Basic, `[a-c-e]`, "", nil, "Invalid range end"},
		{"long class name", Basic, `[[:` + strings.Repeat("a", 40) + `:]]`, "", nil, "Unmatched [, [^, [:, [., or [="},
		{"range end", Basic, `[z-a]`, "", nil, "Invalid range end"},
		{"range from class", Basic, `[[:alpha:]-z]`, "", nil, "Invalid range end"},
		{"bad collation", Basic, `[[.space.]]`, "", nil, "Invalid collation character"},
		{"backref without group", Basic, `a\1`, "", nil, "Invalid back reference"},
		{"backref unsupported", Basic, `\(a\)\1`, "", nil, "back-references are not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := Translate(tc.pattern, tc.syn)
			if tc.wantErr != "" {
				var pe *PatternError
				if !errors.As(err, &pe) || pe.Msg != tc.wantErr {
					t.Fatalf("Translate(%q) error = %v, want %q", tc.pattern, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Translate(%q): %v", tc.pattern, err)
			}
			if got != tc.want {
				t.Errorf("Translate(%q) = %q, want %q", tc.pattern, got, tc.want)
			}
			if !slices.Equal(warnings, tc.warnings) {
				t.Errorf("warnings = %q, want %q", warnings, tc.warnings)
			}
			if _, err := regexp.Compile(got); err != nil {
				t.Errorf("output %q does not compile: %v", got, err)
			}
		})
	}
}

func TestColonClassKeepsEarlierWarnings(t *testing.T) {
	_, _, err := Translate(`?[:alpha:]`, Extended)
	var pe *PatternError
	if !errors.As(err, &pe) || pe.Msg != errColonClass.Msg || !slices.Equal(pe.Warnings, []string{"? at start of expression"}) {
		t.Fatalf("err = %#v", err)
	}
}

func TestBackrefErrorIsUnsupported(t *testing.T) {
	_, _, err := Translate(`\(a\)\1`, Basic)
	var pe *PatternError
	if !errors.As(err, &pe) || !pe.Unsupported {
		t.Fatalf("err = %#v, want an Unsupported PatternError", err)
	}
}
