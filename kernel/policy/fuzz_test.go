package policy

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: any bytes either fail with a *ParseError or parse into a
// policy that marshals, re-parses to the same bytes and the same decisions.
// Seeds: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		p2, err := Parse(b)
		if err != nil {
			t.Fatalf("re-Parse(%s): %v", b, err)
		}
		b2, err := json.Marshal(p2)
		if err != nil || string(b2) != string(b) {
			t.Fatalf("round trip changed:\n%s\n%s", b, b2)
		}
		c1, err1 := Compile(p)
		c2, err2 := Compile(p2)
		if err1 != nil || err2 != nil {
			t.Fatalf("Compile after Parse: %v %v", err1, err2)
		}
		for _, probe := range probes(p) {
			if d1, d2 := decision(probe(c1)), decision(probe(c2)); d1 != d2 {
				t.Fatalf("decisions differ: %d vs %d", d1, d2)
			}
		}
	})
}

// decision condenses a check result: -2 allowed, else the deciding rule.
func decision(err error) int {
	if err == nil {
		return -2
	}
	var de *DeniedError
	if !errors.As(err, &de) {
		panic("check returned " + err.Error())
	}
	return de.Rule
}

// probes derives checks from a policy's own patterns, so the fuzzer
// exercises paths that can actually match.
func probes(p *Policy) []func(*Checker) error {
	concrete := strings.NewReplacer("**", "x/y", "*", "z", "?", "q", `\`, "")
	var out []func(*Checker) error
	for _, r := range p.FS {
		for _, s := range r.Paths {
			for _, path := range []string{s, concrete.Replace(s)} {
				out = append(out, func(c *Checker) error { return c.CheckFS(FSRead, path) },
					func(c *Checker) error { return c.CheckFS(FSMount, path) })
			}
		}
	}
	for _, r := range p.Net {
		for _, s := range r.Hosts {
			host := concrete.Replace(s)
			if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
				host = host[:i]
			}
			out = append(out, func(c *Checker) error { return c.CheckNet(NetConnect, host, 443) },
				func(c *Checker) error { return c.CheckNet(NetDNS, host, 0) })
		}
	}
	for _, r := range p.Exec {
		for _, s := range r.Commands {
			cmd := concrete.Replace(s)
			out = append(out, func(c *Checker) error { return c.CheckExec(cmd) })
		}
	}
	for _, r := range p.Env {
		for _, s := range r.Keys {
			key := concrete.Replace(s)
			out = append(out, func(c *Checker) error { return c.CheckEnv(key) })
		}
	}
	for _, r := range p.Tools {
		for _, s := range r.Names {
			name := concrete.Replace(s)
			out = append(out, func(c *Checker) error { return c.CheckTool(name) })
		}
	}
	return out
}

// FuzzMatch: any pattern and path, as a path glob and as a flat glob: no
// panic, linear time, and agreement with a regular-expression model of the
// documented semantics. Seeds: testdata/fuzz/FuzzMatch.
func FuzzMatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, path string) {
		c, err := Compile(DenyAll().AllowFS(nil, pattern))
		if err != nil && !errors.Is(err, ErrInvalidPolicy) {
			t.Fatalf("Compile error %T %v", err, err)
		}
		sp, err := compilePathPattern(pattern)
		if (err == nil) != (c != nil) {
			t.Fatalf("compilePathPattern and Compile disagree on %q", pattern)
		}
		if err == nil {
			allowed := c.CheckFS(FSRead, path) == nil
			canon, ok := canonPath(path)
			if !ok {
				if allowed {
					t.Fatalf("non-canonical path %q allowed by %q", path, pattern)
				}
			} else if utf8.ValidString(path) {
				got := sp.match(canon)
				if got != allowed {
					t.Fatalf("matcher and checker disagree")
				}
				if re, err := oracle(pattern); err == nil && got != re.MatchString(oracleSubject(canon)) {
					t.Fatalf("pattern %q path %q: match=%v, oracle disagrees (%s)", pattern, path, got, re)
				}
			}
		}
		seg, err := compileFlatPattern(pattern)
		if err == nil && utf8.ValidString(path) {
			re := flatOracle(pattern)
			if got, want := seg.match(path), re.MatchString(path); got != want {
				t.Fatalf("flat pattern %q key %q: match=%v, oracle=%v", pattern, path, got, want)
			}
		}
	})
}

// flatOracle is the regular-expression model of a flat (env, tool, exec
// name) pattern.
func flatOracle(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			i++
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// FuzzNet: any pattern, host and port: no panic; "*" admits exactly the
// well-formed hosts; a deny rule with the pattern overrides "*" exactly
// where the pattern matches. Seeds: testdata/fuzz/FuzzNet.
func FuzzNet(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, host string, port int) {
		np, perr := compileNetPattern(pattern)
		target, hostOK := canonHost(host)
		portOK := port >= 0 && port <= 65535
		star := mustCompile(t, DenyAll().AllowNet("*"))
		if got := star.CheckNet(NetConnect, host, port) == nil; got != (hostOK && portOK) {
			t.Fatalf("allow * on %q:%d: allowed=%v, well-formed=%v", host, port, got, hostOK && portOK)
		}
		if perr != nil {
			return
		}
		c, err := Compile(DenyAll().AllowNet("*").DenyNet(pattern))
		if err != nil {
			if checkPattern(pattern) == nil {
				t.Fatalf("pattern %q compiles alone but not in a policy: %v", pattern, err)
			}
			return
		}
		want := hostOK && portOK && !(np.portLo <= port && port <= np.portHi && np.matchHost(&target))
		if got := c.CheckNet(NetConnect, host, port) == nil; got != want {
			t.Fatalf("pattern %q host %q port %d: allowed=%v, want %v", pattern, host, port, got, want)
		}
		if hostOK && target.name != "" && strings.ToLower(target.name) != target.name {
			t.Fatalf("canonical name %q not lower-case", target.name)
		}
	})
}
