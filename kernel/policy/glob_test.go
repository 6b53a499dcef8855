package policy

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// checkPath reports whether an allow rule with pattern admits path, through
// the public Compile/CheckFS path.
func checkPath(t *testing.T, pattern, path string) bool {
	t.Helper()
	c, err := Compile(DenyAll().AllowFS(nil, pattern))
	if err != nil {
		t.Fatalf("Compile(%q): %v", pattern, err)
	}
	return c.CheckFS(FSRead, path) == nil
}

func TestPathGlob(t *testing.T) {
	type tc struct {
		path string
		want bool
	}
	tests := []struct {
		pattern string
		cases   []tc
	}{
		{"/", []tc{{"/", true}, {"//", true}, {"/a", false}}},
		{"/a", []tc{{"/a", true}, {"/a/", true}, {"//a", true}, {"/a/b", false}, {"/ab", false}, {"/", false}, {"/A", false}}},
		{"/a/b", []tc{{"/a/b", true}, {"/a//b/", true}, {"/a", false}, {"/a/b/c", false}, {"/a/bc", false}}},
		// '*' stays inside one segment and needs a segment to match.
		{"/a/*", []tc{{"/a/b", true}, {"/a/.hidden", true}, {"/a", false}, {"/a/", false}, {"/a/b/c", false}, {"/ab", false}, {"/", false}}},
		{"/*", []tc{{"/a", true}, {"/", false}, {"/a/b", false}}},
		{"/a*", []tc{{"/a", true}, {"/abc", true}, {"/b", false}, {"/a/b", false}}},
		{"/*a", []tc{{"/a", true}, {"/bca", true}, {"/ab", false}}},
		{"/a/x*y*z", []tc{{"/a/xyz", true}, {"/a/xaybz", true}, {"/a/xyyzz", true}, {"/a/xy", false}, {"/a/x/y/z", false}, {"/a/xzy", false}}},
		{"/a/*b*", []tc{{"/a/b", true}, {"/a/abc", true}, {"/a/ac", false}}},
		// '?' is one character, never '/', and a rune not a byte.
		{"/a/?", []tc{{"/a/b", true}, {"/a/é", true}, {"/a/日", true}, {"/a/bc", false}, {"/a", false}}},
		{"/a/??", []tc{{"/a/éé", true}, {"/a/é", false}, {"/a/b/c", false}}},
		{"/a?b", []tc{{"/axb", true}, {"/a/b", false}}},
		// '**' crosses segments, matching zero or more.
		{"/**", []tc{{"/", true}, {"/a", true}, {"/a/b/c", true}, {"/.git/config", true}}},
		{"/a/**", []tc{{"/a", true}, {"/a/b", true}, {"/a/b/c/d", true}, {"/ab", false}, {"/", false}, {"/b/a", false}}},
		{"/**/b", []tc{{"/b", true}, {"/x/b", true}, {"/x/y/b", true}, {"/x/b/c", false}, {"/bb", false}, {"/", false}}},
		{"/a/**/b", []tc{{"/a/b", true}, {"/a/x/b", true}, {"/a/x/y/b", true}, {"/a/x/b/c", false}, {"/a/bb", false}, {"/a", false}, {"/b", false}}},
		{"/a/**/b/**", []tc{{"/a/b", true}, {"/a/x/b/y/z", true}, {"/a/x", false}}},
		{"/a/**/**/b", []tc{{"/a/b", true}, {"/a/x/y/b", true}, {"/a/x", false}}},
		{"/**/*.go", []tc{{"/main.go", true}, {"/a/b/main.go", true}, {"/a/main.go/x", false}, {"/a/main.goo", false}}},
		{"/*/b/**", []tc{{"/x/b", true}, {"/x/b/c/d", true}, {"/x/y/b", false}, {"/b", false}}},
		{"/a*/**", []tc{{"/abc", true}, {"/abc/d", true}, {"/b", false}, {"/b/abc", false}}},
		{"/**/node_modules/**", []tc{{"/node_modules", true}, {"/p/node_modules/x/y", true}, {"/p/node_modulesx", false}}},
		// Literal characters: dots, brackets, braces, unicode.
		{"/a.b/*.txt", []tc{{"/a.b/x.txt", true}, {"/aXb/x.txt", false}, {"/a.b/xtxt", false}, {"/a.b/.txt", true}}},
		{"/src/[id].tsx", []tc{{"/src/[id].tsx", true}, {"/src/i.tsx", false}, {"/src/d.tsx", false}}},
		{"/src/[a-z]*", []tc{{"/src/[a-z]x", true}, {"/src/b", false}}},
		{"/{a,b}", []tc{{"/{a,b}", true}, {"/a", false}}},
		{"/日本/*語", []tc{{"/日本/中語", true}, {"/日本/語", true}, {"/日本/中", false}}},
		{"/ü", []tc{{"/ü", true}, {"/u\u0308", false}}}, // bytes, no normalisation
		// Escapes.
		{`/a/\*`, []tc{{"/a/*", true}, {"/a/b", false}}},
		{`/a/\?x`, []tc{{"/a/?x", true}, {"/a/bx", false}}},
		{`/a/\\`, []tc{{`/a/\`, true}, {"/a/b", false}}},
		{`/a/x\**`, []tc{{"/a/x*", true}, {"/a/x*yz", true}, {"/a/xy", false}}},
		// Trailing slash and repeated slashes normalise.
		{"/a/b/", []tc{{"/a/b", true}, {"/a/b/c", true}, {"/a/bc", false}}},
		{"//a//b", []tc{{"/a/b", true}, {"/a/b/c", false}}},
		{"/a/**/", []tc{{"/a", true}, {"/a/b", true}}},
		// Non-canonical paths never match.
		{"/**", []tc{{"", false}, {"a", false}, {"a/b", false}, {"/a/./b", false}, {"/a/../b", false}, {"/..", false},
			{"/.", false}, {"/a/..", false}, {"/a\x00b", false}, {"/" + strings.Repeat("a", MaxPathLen), false}}},
		// Names with dots are not "." or "..".
		{"/a/*", []tc{{"/a/...", true}, {"/a/..b", true}, {"/a/.b", true}}},
	}
	for _, tt := range tests {
		for _, c := range tt.cases {
			if got := checkPath(t, tt.pattern, c.path); got != c.want {
				t.Errorf("pattern %q path %q: allowed=%v, want %v", tt.pattern, c.path, got, c.want)
			}
		}
	}
}

func TestPathPatternErrors(t *testing.T) {
	for _, p := range []string{"", "a", "a/b", "**", "*", "/a/../b", "/./a", "/a/.", "/a/**b", "/a/b**", "/a/***",
		`/a/\x`, `/a\`, "/a\x00", "/" + strings.Repeat("a", MaxPatternLen),
		"/x" + strings.Repeat("/*", maxNFASegments+1)} {
		if _, err := compilePathPattern(p); err == nil {
			t.Errorf("compilePathPattern(%q) succeeded, want error", p)
		}
	}
	// A long literal prefix does not count against the NFA bound.
	if _, err := compilePathPattern(strings.Repeat("/a", 200) + strings.Repeat("/*", maxNFASegments)); err != nil {
		t.Errorf("deep pattern: %v", err)
	}
}

// oracle builds a regular expression with the documented semantics of a
// path pattern, to check the matcher against an independent model. RE2
// runs in linear time, so it also serves on long fuzz inputs.
func oracle(pattern string) (*regexp.Regexp, error) {
	var segs []string
	for _, s := range strings.Split(pattern[1:], "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(pattern) > 1 && strings.HasSuffix(pattern, "/") {
		segs = append(segs, "**")
	}
	var b strings.Builder
	b.WriteString("^")
	for _, s := range segs {
		if s == "**" {
			b.WriteString("(?:/[^/]+)*")
			continue
		}
		b.WriteString("/")
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '*':
				b.WriteString("[^/]*")
			case '?':
				b.WriteString("[^/]")
			case '\\':
				i++
				if i == len(s) {
					return nil, fmt.Errorf("trailing backslash")
				}
				b.WriteString(regexp.QuoteMeta(s[i : i+1]))
			default:
				b.WriteString(regexp.QuoteMeta(s[i : i+1]))
			}
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// oracleSubject is the form of a canonical path the oracle matches: "" for
// the root, "/a/b" otherwise.
func oracleSubject(canon string) string {
	if canon == "" {
		return ""
	}
	return "/" + canon
}

func TestMatcherAgreesWithOracle(t *testing.T) {
	patterns := []string{"/", "/**", "/a/**", "/a/*", "/*/*", "/**/b", "/a/**/b", "/**/a/**/b/**", "/a?/*c*",
		"/*a*b*", "/a/**/*.go", "/**/**", "/x/", "/?/?/**/?", `/\*/*`, "/日/*本*"}
	paths := []string{"/", "/a", "/b", "/a/b", "/a/b/c", "/ab/c", "/a/x/b", "/x/a/y/b/z", "/ab/xcx", "/aabb",
		"/a/b/c.go", "/x", "/x/y", "/a/b/c/d/e/f/b", "/*/z", "/日/本", "/日/x本y", "/é/é/é/é"}
	for _, pat := range patterns {
		re, err := oracle(pat)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := compilePathPattern(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			canon, ok := canonPath(path)
			if !ok {
				t.Fatalf("canonPath(%q) failed", path)
			}
			if got, want := sp.match(canon), re.MatchString(oracleSubject(canon)); got != want {
				t.Errorf("pattern %q path %q: match=%v, oracle=%v", pat, path, got, want)
			}
		}
	}
}

// TestPathologicalGlob runs the inputs that make naive backtracking
// exponential; with the NFA they finish in microseconds. The test has no
// timer: an exponential matcher would simply never finish.
func TestPathologicalGlob(t *testing.T) {
	long := "/" + strings.Repeat("a/", 2000) + "b"
	stars := "/" + strings.Repeat("**/a/", 30) + "c"
	if checkPath(t, stars, long) {
		t.Errorf("%q matched", stars)
	}
	if !checkPath(t, "/"+strings.Repeat("**/a/", 30)+"b", long) {
		t.Errorf("expected match")
	}
	seg := "/" + strings.Repeat("a", 4000)
	if checkPath(t, "/"+strings.Repeat("*a", 100)+"b", seg) {
		t.Errorf("star segment matched")
	}
	if !checkPath(t, "/"+strings.Repeat("*a", 100), seg) {
		t.Errorf("star segment did not match")
	}
	// Flat domains use the same linear matcher.
	c, err := Compile(DenyAll().AllowEnv(strings.Repeat("*A", 200) + "B"))
	if err != nil {
		t.Fatal(err)
	}
	if c.CheckEnv(strings.Repeat("A", MaxTargetLen)) == nil {
		t.Errorf("env key matched")
	}
}

func TestMatchTokensRunes(t *testing.T) {
	// A star advances whole runes, so a literal never starts mid-rune.
	seg, err := compileSegment("*\xa9?")
	if err != nil {
		t.Fatal(err)
	}
	if seg.match("é") || seg.match("éx") { // "é" is c3 a9
		t.Errorf("literal matched inside a rune")
	}
	// Patterns must be valid UTF-8, which keeps the fast paths rune-safe.
	if _, err := Compile(DenyAll().AllowFS(nil, "/*\xa9")); err == nil {
		t.Errorf("invalid UTF-8 pattern compiled")
	}
	// Paths need not be valid UTF-8: an invalid byte is one character.
	if !checkPath(t, "/a/?b", "/a/\xffb") || checkPath(t, "/a/?", "/a/\xff\xfe") {
		t.Errorf("invalid UTF-8 path handling")
	}
}

// TestMatcherRandom compares the matcher with the oracle on many generated
// patterns and paths built from the characters that matter.
func TestMatcherRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	patSegs := []string{"a", "b", "*", "?", "**", "a*", "*b", "*a*", "?b", `\*`, "é", "*é?", "ab"}
	pathSegs := []string{"a", "b", "ab", "ba", "*", "é", "aé", "bb", "aab"}
	for range 20000 {
		var pat, path strings.Builder
		for range rng.IntN(6) {
			pat.WriteString("/" + patSegs[rng.IntN(len(patSegs))])
		}
		if pat.Len() == 0 || rng.IntN(8) == 0 {
			pat.WriteString("/")
		}
		for range rng.IntN(7) {
			path.WriteString("/" + pathSegs[rng.IntN(len(pathSegs))])
		}
		if path.Len() == 0 {
			path.WriteString("/")
		}
		sp, err := compilePathPattern(pat.String())
		if err != nil {
			t.Fatalf("compile %q: %v", pat.String(), err)
		}
		re, err := oracle(pat.String())
		if err != nil {
			t.Fatal(err)
		}
		canon, _ := canonPath(path.String())
		if got, want := sp.match(canon), re.MatchString(oracleSubject(canon)); got != want {
			t.Fatalf("pattern %q path %q: match=%v, oracle=%v", pat.String(), path.String(), got, want)
		}
	}
}
