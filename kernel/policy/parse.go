package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/secexec/secexec/kernel/errno"
)

// Limits on a policy, so that parsing and compiling it is bounded.
const (
	MaxPolicyBytes     = 1 << 20 // a JSON document
	MaxRules           = 1024    // rules per domain
	MaxPatternsPerRule = 256     // patterns (or ops) in one rule
	MaxPatternLen      = 4096    // bytes in one pattern
)

// ErrInvalidPolicy is the sentinel every *ParseError matches.
var ErrInvalidPolicy = errors.New("invalid policy")

// ParseError reports why a policy was rejected by Parse or Compile. It
// matches ErrInvalidPolicy and errno.EINVAL with errors.Is.
type ParseError struct {
	// Where locates the fault, e.g. "fs[2].paths[0]" or "offset 17"; it
	// is empty when the document as a whole is at fault.
	Where  string
	Reason string
}

// Error reads like "invalid policy: fs[2].paths[0]: ...".
func (e *ParseError) Error() string {
	if e.Where == "" {
		return "invalid policy: " + e.Reason
	}
	return "invalid policy: " + e.Where + ": " + e.Reason
}

// Unwrap returns ErrInvalidPolicy and errno.EINVAL.
func (e *ParseError) Unwrap() []error { return []error{ErrInvalidPolicy, errno.EINVAL} }

func parseErr(where, format string, args ...any) *ParseError {
	return &ParseError{Where: where, Reason: fmt.Sprintf(format, args...)}
}

// The exact JSON keys of each object; anything else, a key in another
// case, or a repeated key is rejected. encoding/json alone would accept
// "FS" for "fs" and let a second "fs" silently override the first, so a
// reviewer could read a different policy than the one enforced.
var (
	topKeys  = []string{"fs", "net", "exec", "env", "tools"}
	ruleKeys = map[string][]string{
		"fs":    {"effect", "ops", "paths"},
		"net":   {"effect", "ops", "hosts"},
		"exec":  {"effect", "commands"},
		"env":   {"effect", "keys"},
		"tools": {"effect", "names"},
	}
)

// Parse decodes a JSON policy strictly and validates every rule: unknown,
// repeated or mis-cased keys, unknown ops or effects, empty, malformed or
// over-long patterns, too many rules, invalid UTF-8 and trailing data are
// all errors of type *ParseError.
func Parse(data []byte) (*Policy, error) {
	if len(data) > MaxPolicyBytes {
		return nil, parseErr("", "document larger than %d bytes", MaxPolicyBytes)
	}
	if !utf8.Valid(data) {
		return nil, parseErr("", "document is not valid UTF-8")
	}
	if err := checkKeys(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		return nil, parseErr("", "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := Compile(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// checkKeys walks the token stream to enforce the document's shape: one
// object, exact and unique keys, nesting no deeper than the schema, and
// nothing after the object. Value types are left to json.Decoder.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	at := func() string { return fmt.Sprintf("offset %d", dec.InputOffset()) }
	tok, err := dec.Token()
	if err != nil {
		return parseErr(at(), "%s", syntaxReason(err))
	}
	if tok != json.Delim('{') {
		return parseErr("", "a policy must be a JSON object")
	}
	var seen []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return parseErr(at(), "%s", syntaxReason(err))
		}
		key := tok.(string) // inside an object, Token yields keys as strings
		if !slices.Contains(topKeys, key) {
			return parseErr(key, "unknown key (want one of %s)", strings.Join(topKeys, ", "))
		}
		if slices.Contains(seen, key) {
			return parseErr(key, "repeated key")
		}
		seen = append(seen, key)
		if err := checkDomain(dec, key, at); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return parseErr(at(), "%s", syntaxReason(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return parseErr(at(), "data after the policy object")
	}
	return nil
}

// checkDomain checks the value of one domain key: null or an array of
// rule objects.
func checkDomain(dec *json.Decoder, domain string, at func() string) error {
	tok, err := dec.Token()
	if err != nil {
		return parseErr(at(), "%s", syntaxReason(err))
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return parseErr(domain, "must be an array of rules")
	}
	for i := 0; dec.More(); i++ {
		where := fmt.Sprintf("%s[%d]", domain, i)
		tok, err := dec.Token()
		if err != nil {
			return parseErr(at(), "%s", syntaxReason(err))
		}
		if tok != json.Delim('{') {
			return parseErr(where, "a rule must be an object")
		}
		var seen []string
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return parseErr(at(), "%s", syntaxReason(err))
			}
			key := tok.(string)
			if !slices.Contains(ruleKeys[domain], key) {
				return parseErr(where+"."+key, "unknown key (want one of %s)", strings.Join(ruleKeys[domain], ", "))
			}
			if slices.Contains(seen, key) {
				return parseErr(where+"."+key, "repeated key")
			}
			seen = append(seen, key)
			if err := checkFlatValue(dec, where+"."+key, at); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // '}'
			return parseErr(at(), "%s", syntaxReason(err))
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return parseErr(at(), "%s", syntaxReason(err))
	}
	return nil
}

// checkFlatValue consumes a rule field's value: a scalar or an array of
// scalars. Nested objects or arrays are not part of the schema.
func checkFlatValue(dec *json.Decoder, where string, at func() string) error {
	tok, err := dec.Token()
	if err != nil {
		return parseErr(at(), "%s", syntaxReason(err))
	}
	if d, ok := tok.(json.Delim); ok {
		if d != '[' {
			return parseErr(where, "unexpected object")
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return parseErr(at(), "%s", syntaxReason(err))
			}
			if _, ok := tok.(json.Delim); ok {
				return parseErr(where, "unexpected nested value")
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return parseErr(at(), "%s", syntaxReason(err))
		}
	}
	return nil
}

func syntaxReason(err error) string {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return "unexpected end of document"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Validate reports whether p would compile, as a *ParseError.
func (p *Policy) Validate() error {
	_, err := Compile(p)
	return err
}

// Compile validates p and precompiles its patterns into a Checker. A nil
// policy compiles to a Checker that denies everything. Later changes to p
// do not affect the Checker.
func Compile(p *Policy) (*Checker, error) {
	c := &Checker{}
	if p == nil {
		return c, nil
	}
	if err := compileFS(c, p.FS); err != nil {
		return nil, err
	}
	if err := compileNet(c, p.Net); err != nil {
		return nil, err
	}
	if err := compileExec(c, p.Exec); err != nil {
		return nil, err
	}
	var err error
	if c.env, err = compileFlat("env", "keys", ruleSlice(p.Env, func(r EnvRule) (Effect, []string) { return r.Effect, r.Keys }), compileEnvPattern); err != nil {
		return nil, err
	}
	if c.tool, err = compileFlat("tools", "names", ruleSlice(p.Tools, func(r ToolRule) (Effect, []string) { return r.Effect, r.Names }), compileToolPattern); err != nil {
		return nil, err
	}
	return c, nil
}

type flatInput struct {
	effect   Effect
	patterns []string
}

func ruleSlice[R any](rules []R, f func(R) (Effect, []string)) []flatInput {
	out := make([]flatInput, len(rules))
	for i, r := range rules {
		out[i].effect, out[i].patterns = f(r)
	}
	return out
}

func compileEffect(where string, e Effect) (bool, error) {
	switch e {
	case Allow:
		return true, nil
	case Deny:
		return false, nil
	case "":
		return false, parseErr(where+".effect", "missing (want allow or deny)")
	}
	return false, parseErr(where+".effect", "unknown effect %q (want allow or deny)", string(e))
}

func checkCounts(domain string, rules int) error {
	if rules > MaxRules {
		return parseErr(domain, "more than %d rules", MaxRules)
	}
	return nil
}

func checkPatterns(where string, patterns []string) error {
	if len(patterns) == 0 {
		return parseErr(where, "at least one pattern is required")
	}
	if len(patterns) > MaxPatternsPerRule {
		return parseErr(where, "more than %d patterns", MaxPatternsPerRule)
	}
	return nil
}

// checkPattern applies the checks common to every pattern.
func checkPattern(s string) error {
	switch {
	case s == "":
		return errors.New("empty pattern")
	case len(s) > MaxPatternLen:
		return fmt.Errorf("pattern longer than %d bytes", MaxPatternLen)
	case strings.IndexByte(s, 0) >= 0:
		return errors.New("pattern contains a NUL byte")
	case !utf8.ValidString(s):
		// Valid UTF-8 never starts a literal on a continuation byte, so the
		// prefix/suffix fast paths agree with rune-wise '*' and '?'.
		return errors.New("pattern is not valid UTF-8")
	}
	return nil
}

func compileFS(c *Checker, rules []FSRule) error {
	if err := checkCounts("fs", len(rules)); err != nil {
		return err
	}
	for i, r := range rules {
		where := fmt.Sprintf("fs[%d]", i)
		allow, err := compileEffect(where, r.Effect)
		if err != nil {
			return err
		}
		var mask uint32
		if len(r.Ops) > MaxPatternsPerRule {
			return parseErr(where+".ops", "more than %d ops", MaxPatternsPerRule)
		}
		for j, op := range r.Ops {
			if op == FSAll {
				mask = 1<<numFSOps - 1
				continue
			}
			k, ok := fsOpIndex(op)
			if !ok {
				return parseErr(fmt.Sprintf("%s.ops[%d]", where, j), "unknown fs op %q", string(op))
			}
			mask |= 1 << k
		}
		if len(r.Ops) == 0 {
			mask = 1<<numFSOps - 1
		}
		if err := checkPatterns(where+".paths", r.Paths); err != nil {
			return err
		}
		rule := pathRule{idx: i, allow: allow, pats: make([]segPattern, len(r.Paths))}
		for j, s := range r.Paths {
			if rule.pats[j], err = compilePathPattern(s); err != nil {
				return parseErr(fmt.Sprintf("%s.paths[%d]", where, j), "pattern %q: %v", s, err)
			}
		}
		for k := range numFSOps {
			if mask&(1<<k) != 0 {
				c.fs[k] = append(c.fs[k], rule)
			}
		}
	}
	for k := range c.fs {
		slices.Reverse(c.fs[k])
	}
	return nil
}

// compilePathPattern compiles an absolute path pattern. Repeated slashes
// collapse; a trailing slash means the directory and everything beneath it
// ("/a/" is "/a/**"), because a deny rule written "/etc/" that covered only
// /etc itself would be a trap.
func compilePathPattern(s string) (segPattern, error) {
	if err := checkPattern(s); err != nil {
		return segPattern{}, err
	}
	if s[0] != '/' {
		return segPattern{}, errors.New("path patterns must be absolute (start with /)")
	}
	var segs []string
	for _, t := range strings.Split(s[1:], "/") {
		switch t {
		case "":
			continue
		case ".", "..":
			return segPattern{}, fmt.Errorf("%q segments are not allowed", t)
		}
		segs = append(segs, t)
	}
	if len(s) > 1 && s[len(s)-1] == '/' {
		segs = append(segs, "**")
	}
	return compileSegments(segs, '/')
}

func compileNet(c *Checker, rules []NetRule) error {
	if err := checkCounts("net", len(rules)); err != nil {
		return err
	}
	for i, r := range rules {
		where := fmt.Sprintf("net[%d]", i)
		allow, err := compileEffect(where, r.Effect)
		if err != nil {
			return err
		}
		if len(r.Ops) > MaxPatternsPerRule {
			return parseErr(where+".ops", "more than %d ops", MaxPatternsPerRule)
		}
		var mask uint32
		for j, op := range r.Ops {
			if op == NetAll {
				mask = 1<<numNetOps - 1
				continue
			}
			k, ok := netOpIndex(op)
			if !ok {
				return parseErr(fmt.Sprintf("%s.ops[%d]", where, j), "unknown net op %q", string(op))
			}
			mask |= 1 << k
		}
		if len(r.Ops) == 0 {
			mask = 1<<numNetOps - 1
		}
		if err := checkPatterns(where+".hosts", r.Hosts); err != nil {
			return err
		}
		rule := netRule{idx: i, allow: allow, pats: make([]netPattern, len(r.Hosts))}
		for j, s := range r.Hosts {
			err := checkPattern(s)
			if err == nil {
				rule.pats[j], err = compileNetPattern(s)
			}
			if err != nil {
				return parseErr(fmt.Sprintf("%s.hosts[%d]", where, j), "pattern %q: %v", s, err)
			}
		}
		for k := range numNetOps {
			if mask&(1<<k) != 0 {
				c.net[k] = append(c.net[k], rule)
			}
		}
	}
	for k := range c.net {
		slices.Reverse(c.net[k])
	}
	return nil
}

func compileExec(c *Checker, rules []ExecRule) error {
	if err := checkCounts("exec", len(rules)); err != nil {
		return err
	}
	for i, r := range rules {
		where := fmt.Sprintf("exec[%d]", i)
		allow, err := compileEffect(where, r.Effect)
		if err != nil {
			return err
		}
		if err := checkPatterns(where+".commands", r.Commands); err != nil {
			return err
		}
		rule := execRule{idx: i, allow: allow, pats: make([]execPattern, len(r.Commands))}
		for j, s := range r.Commands {
			if rule.pats[j], err = compileExecPattern(s); err != nil {
				return parseErr(fmt.Sprintf("%s.commands[%d]", where, j), "pattern %q: %v", s, err)
			}
		}
		c.exec = append(c.exec, rule)
	}
	slices.Reverse(c.exec)
	return nil
}

func compileExecPattern(s string) (execPattern, error) {
	if err := checkPattern(s); err != nil {
		return execPattern{}, err
	}
	if s[0] == '/' {
		p, err := compilePathPattern(s)
		return execPattern{isPath: true, path: p}, err
	}
	if strings.IndexByte(s, '/') >= 0 {
		return execPattern{}, errors.New("a command pattern is a name (no /) or an absolute path")
	}
	if s == "**" {
		return execPattern{}, errors.New(`"**" only matches path segments; use * for any name`)
	}
	seg, err := compileSegment(s)
	return execPattern{name: seg}, err
}

func compileEnvPattern(s string) (segment, error) {
	if strings.IndexByte(s, '=') >= 0 {
		return segment{}, errors.New("env key patterns cannot contain '='")
	}
	return compileFlatPattern(s)
}

func compileToolPattern(s string) (segment, error) { return compileFlatPattern(s) }

// compileFlatPattern compiles a pattern over a string with no separator:
// '*' matches any run of characters. "**" is rejected so that nobody
// mistakes it for something wider than '*'.
func compileFlatPattern(s string) (segment, error) {
	if err := checkPattern(s); err != nil {
		return segment{}, err
	}
	if s == "**" {
		return segment{}, errors.New(`"**" only matches path segments; use * to match anything`)
	}
	return compileSegment(s)
}

func compileFlat(domain, field string, rules []flatInput, compile func(string) (segment, error)) ([]flatRule, error) {
	if err := checkCounts(domain, len(rules)); err != nil {
		return nil, err
	}
	var out []flatRule
	for i, r := range rules {
		where := fmt.Sprintf("%s[%d]", domain, i)
		allow, err := compileEffect(where, r.effect)
		if err != nil {
			return nil, err
		}
		if err := checkPatterns(where+"."+field, r.patterns); err != nil {
			return nil, err
		}
		rule := flatRule{idx: i, allow: allow, pats: make([]segment, len(r.patterns))}
		for j, s := range r.patterns {
			if rule.pats[j], err = compile(s); err != nil {
				return nil, parseErr(fmt.Sprintf("%s.%s[%d]", where, field, j), "pattern %q: %v", s, err)
			}
		}
		out = append(out, rule)
	}
	slices.Reverse(out)
	return out, nil
}
