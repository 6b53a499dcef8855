package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// maxDepth bounds nested expansions.
const maxDepth = 2000

// isSpace is GNU make's word separator set (ISSPACE).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// fields splits s into make words.
func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r < 128 && isSpace(byte(r)) })
}

func trimSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r < 128 && isSpace(byte(r)) })
}

// expand returns s with every variable and function reference replaced,
// in scope sc.
func (m *Make) expand(s string, sc *Scope) string {
	if !strings.Contains(s, "$") {
		return s
	}
	// GNU make recurses until its stack runs out; a bound turns a
	// runaway $(call) or $(eval) into an error instead of a crash.
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > maxDepth {
		m.fatalf("expansion nested too deeply (more than %d levels)", maxDepth)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '$')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i >= len(s) {
			// A lone '$' at the end expands to nothing.
			break
		}
		c := s[i]
		switch c {
		case '$':
			b.WriteByte('$')
			i++
		case '(', '{':
			closep := byte(')')
			if c == '{' {
				closep = '}'
			}
			// The end of the reference: the first closing delimiter of
			// the same kind, or the matching one when the name holds a
			// reference itself (GNU's rule).
			beg := i + 1
			end := strings.IndexByte(s[beg:], closep)
			if end < 0 {
				if m.varLoc.File != "" {
					m.loc = m.varLoc
				}
				m.fatalf("unterminated variable reference")
			}
			end += beg
			// A function call?
			if name, ok := funcName(s[beg:]); ok {
				argStart := beg + len(name)
				for argStart < len(s) && isBlank(s[argStart]) {
					argStart++
				}
				count := 0
				k := argStart
				for ; k < len(s); k++ {
					if s[k] == c {
						count++
					} else if s[k] == closep {
						count--
						if count < 0 {
							break
						}
					}
				}
				if k >= len(s) {
					m.fatalf("unterminated call to function '%s': missing '%c'", name, closep)
				}
				b.WriteString(m.callFunc(name, s[argStart:k], c, closep, sc))
				i = k + 1
				continue
			}
			inner := s[beg:end]
			next := end + 1
			if strings.IndexByte(inner, '$') >= 0 {
				count := 0
				k := beg
				for ; k < len(s); k++ {
					if s[k] == c {
						count++
					} else if s[k] == closep {
						count--
						if count < 0 {
							break
						}
					}
				}
				if count < 0 {
					inner = m.expand(s[beg:k], sc)
					next = k + 1
				}
			}
			i = next
			b.WriteString(m.reference(inner, sc))
		default:
			b.WriteString(m.varValue(string(c), sc))
			i++
		}
	}
	return b.String()
}

// reference expands the text of one $(...) that is not a function call:
// a variable name or a substitution reference.
func (m *Make) reference(inner string, sc *Scope) string {
	if colon := strings.IndexByte(inner, ':'); colon >= 0 {
		if eq := strings.IndexByte(inner[colon+1:], '='); eq >= 0 {
			name := inner[:colon]
			pat := inner[colon+1 : colon+1+eq]
			rep := inner[colon+1+eq+1:]
			val := m.varValue(name, sc)
			if val == "" {
				return ""
			}
			if !strings.Contains(pat, "%") {
				pat, rep = "%"+pat, "%"+rep
			}
			return patsubst(pat, rep, val)
		}
	}
	return m.varValue(inner, sc)
}

// varValue is the expanded value of variable name in sc.
func (m *Make) varValue(name string, sc *Scope) string {
	v := sc.lookup(name)
	if v == nil {
		if m.opts.warnUndefined {
			m.warnf("warning: undefined variable '%s'", name)
		}
		return ""
	}
	return m.valueOf(v, sc)
}

func (m *Make) valueOf(v *Var, sc *Scope) string {
	if !v.Recursive && !v.appendTo {
		return v.Value
	}
	if v.expanding {
		// GNU names this variable's place, or for one without (a
		// command-line variable) the innermost variable being expanded
		// that has one (its expanding_var).
		switch {
		case v.loc.File != "":
			m.loc = v.loc
		case m.varLoc.File != "":
			m.loc = m.varLoc
		}
		m.fatalf("Recursive variable '%s' references itself (eventually)", v.Name)
	}
	v.expanding = true
	saved, savedLoc := m.varLoc, m.loc
	// The flag is cleared even when the expansion ends make.
	defer func() { v.expanding = false; m.varLoc, m.loc = saved, savedLoc }()
	if m.loc.File == "" {
		// Outside any makefile line (a recipe's environment, say),
		// messages name the variable's own place, as GNU's do.
		m.loc = v.loc
	}
	if v.loc.File != "" {
		// Syntax errors inside a variable name where it was defined
		// (GNU's expanding_var); $(warning) and $(error) name where
		// make is reading or running.
		m.varLoc = v.loc
	}
	base := ""
	if v.appendTo {
		// GNU's variable_append: the outer value first (expanded here,
		// with this variable still marked), a blank if that is not
		// empty, then this part.
		base = m.outerValue(v, sc)
	}
	val := v.Value
	if v.Recursive {
		val = m.expand(v.Value, sc)
	}
	if base != "" {
		return base + " " + val
	}
	return val
}

// outerValue is the value of v's name in the scopes beyond the one that
// holds v (for a target-specific '+='), expanded in sc as GNU's
// variable_append does: references in it see the target's variables.
func (m *Make) outerValue(v *Var, sc *Scope) string {
	for c := sc; c != nil; c = c.parent {
		if c.vars[v.Name] != v {
			continue
		}
		if c.parent == nil {
			return ""
		}
		ov := c.parent.lookup(v.Name)
		if ov == nil {
			return ""
		}
		val := ov.Value
		if ov.Recursive {
			val = m.expand(ov.Value, sc)
		}
		if ov.appendTo {
			if base := m.outerValue(ov, sc); base != "" {
				return base + " " + val
			}
		}
		return val
	}
	return ""
}

var functions = map[string][2]int{ // minimum and maximum (0: any) arguments
	"subst": {3, 3}, "patsubst": {3, 3}, "strip": {1, 1}, "findstring": {2, 2},
	"filter": {2, 2}, "filter-out": {2, 2}, "sort": {1, 1}, "word": {2, 2}, "words": {1, 1},
	"wordlist": {3, 3}, "firstword": {1, 1}, "lastword": {1, 1}, "dir": {1, 1}, "notdir": {1, 1},
	"suffix": {1, 1}, "basename": {1, 1}, "addsuffix": {2, 2}, "addprefix": {2, 2}, "join": {2, 2},
	"wildcard": {1, 1}, "realpath": {1, 1}, "abspath": {1, 1}, "if": {2, 3}, "or": {1, 0}, "and": {1, 0},
	"foreach": {3, 3}, "call": {1, 0}, "value": {1, 1}, "eval": {1, 1}, "origin": {1, 1}, "flavor": {1, 1},
	"shell": {1, 1}, "error": {0, 1}, "warning": {0, 1}, "info": {0, 1}, "file": {1, 2},
	"guile": {0, 1},
}

// funcName reports whether s starts with a function name followed by
// a blank (GNU's test for a call rather than a variable reference).
func funcName(s string) (string, bool) {
	k := 0
	for k < len(s) && (s[k] >= 'a' && s[k] <= 'z' || s[k] == '-') {
		k++
	}
	if k == 0 || k >= len(s) || !isBlank(s[k]) {
		return "", false
	}
	if _, ok := functions[s[:k]]; !ok {
		return "", false
	}
	return s[:k], true
}

// splitArgs splits a function's raw arguments at top-level commas, the
// last argument taking the rest when max is reached.
func splitArgs(s string, openp, closep byte, max int) []string {
	var out []string
	count := 0
	start := 0
	for k := 0; k < len(s); k++ {
		switch s[k] {
		case openp:
			count++
		case closep:
			count--
		case ',':
			if count == 0 && (max == 0 || len(out) < max-1) {
				out = append(out, s[start:k])
				start = k + 1
			}
		}
	}
	return append(out, s[start:])
}

func (m *Make) callFunc(name, raw string, openp, closep byte, sc *Scope) string {
	lim := functions[name]
	args := splitArgs(raw, openp, closep, lim[1])
	if len(args) < lim[0] && !(lim[0] == 1 && len(args) == 1) {
		m.fatalf("insufficient number of arguments (%d) to function '%s'", len(args), name)
	}
	x := func(i int) string { return m.expand(args[i], sc) }
	switch name {
	// GNU strips the blanks around a condition before expanding it, and
	// a condition is true when its expansion is not empty (blanks
	// count); or and and give the expansion unstripped.
	case "if":
		if m.expand(trimSpace(args[0]), sc) != "" {
			return x(1)
		}
		if len(args) > 2 {
			return x(2)
		}
		return ""
	case "or":
		for _, a := range args {
			if v := m.expand(trimSpace(a), sc); v != "" {
				return v
			}
		}
		return ""
	case "and":
		v := ""
		for _, a := range args {
			if v = m.expand(trimSpace(a), sc); v == "" {
				return ""
			}
		}
		return v
	case "foreach":
		vname := trimSpace(x(0))
		words := fields(x(1))
		inner := newScope(sc)
		v := &Var{Name: vname, Origin: OriginAutomatic}
		inner.vars[vname] = v
		out := make([]string, 0, len(words))
		for _, w := range words {
			v.Value = w
			out = append(out, m.expand(args[2], inner))
		}
		return strings.Join(out, " ")
	case "call":
		return m.call(args, sc)
	case "value":
		v := sc.lookup(trimSpace(x(0)))
		if v == nil {
			return ""
		}
		return v.Value
	case "eval":
		m.evalText(x(0), sc)
		return ""
	case "origin":
		v := sc.lookup(x(0))
		if v == nil {
			return "undefined"
		}
		return v.Origin.String()
	case "flavor":
		v := sc.lookup(x(0))
		switch {
		case v == nil:
			return "undefined"
		case v.Recursive:
			return "recursive"
		}
		return "simple"
	case "shell":
		return m.shellFunc(x(0))
	case "error":
		m.fatalf("%s", x(0))
	case "warning":
		m.warnf("%s", x(0))
		return ""
	case "info":
		fmt.Fprintf(m.stdout, "%s\n", x(0))
		return ""
	case "file":
		return m.fileFunc(args, sc)
	case "guile":
		return ""
	}
	a := make([]string, len(args))
	for i := range args {
		a[i] = x(i)
	}
	return textFunc(m, name, a)
}

// textFunc runs the functions that only transform text.
func textFunc(m *Make, name string, a []string) string {
	switch name {
	case "subst":
		if a[0] == "" {
			return a[2] + a[1]
		}
		return strings.ReplaceAll(a[2], a[0], a[1])
	case "patsubst":
		return patsubst(a[0], a[1], a[2])
	case "strip":
		return strings.Join(fields(a[0]), " ")
	case "findstring":
		if strings.Contains(a[1], a[0]) {
			return a[0]
		}
		return ""
	case "filter", "filter-out":
		pats := fields(a[0])
		var out []string
		for _, w := range fields(a[1]) {
			hit := false
			for _, p := range pats {
				if _, ok := matchPattern(p, w); ok {
					hit = true
					break
				}
			}
			if hit == (name == "filter") {
				out = append(out, w)
			}
		}
		return strings.Join(out, " ")
	case "sort":
		w := fields(a[0])
		sort.Strings(w)
		out := w[:0]
		for i, s := range w {
			if i == 0 || s != w[i-1] {
				out = append(out, s)
			}
		}
		return strings.Join(out, " ")
	case "word":
		n := m.numArg(a[0], "first", "word")
		if n == 0 {
			m.fatalf("first argument to 'word' function must be greater than 0")
		}
		w := fields(a[1])
		if n > len(w) {
			return ""
		}
		return w[n-1]
	case "words":
		return strconv.Itoa(len(fields(a[0])))
	case "wordlist":
		s := m.numArg(a[0], "first", "wordlist")
		e := m.numArg(a[1], "second", "wordlist")
		if s == 0 {
			m.fatalf("invalid first argument to 'wordlist' function: '%d'", s)
		}
		// GNU gives the text from word s to word e as it is, blanks
		// between them included.
		spans := wordSpans(a[2])
		if e > len(spans) {
			e = len(spans)
		}
		if s > e {
			return ""
		}
		return a[2][spans[s-1][0]:spans[e-1][1]]
	case "firstword":
		if w := fields(a[0]); len(w) > 0 {
			return w[0]
		}
		return ""
	case "lastword":
		if w := fields(a[0]); len(w) > 0 {
			return w[len(w)-1]
		}
		return ""
	case "dir", "notdir", "suffix", "basename":
		var out []string
		for _, w := range fields(a[0]) {
			slash := strings.LastIndexByte(w, '/')
			switch name {
			case "dir":
				if slash < 0 {
					out = append(out, "./")
				} else {
					out = append(out, w[:slash+1])
				}
			case "notdir":
				out = append(out, w[slash+1:])
			case "suffix":
				if dot := strings.LastIndexByte(w, '.'); dot > slash {
					out = append(out, w[dot:])
				}
			case "basename":
				if dot := strings.LastIndexByte(w, '.'); dot > slash {
					out = append(out, w[:dot])
				} else {
					out = append(out, w)
				}
			}
		}
		return strings.Join(out, " ")
	case "addsuffix", "addprefix":
		var out []string
		for _, w := range fields(a[1]) {
			if name == "addsuffix" {
				out = append(out, w+a[0])
			} else {
				out = append(out, a[0]+w)
			}
		}
		return strings.Join(out, " ")
	case "join":
		x, y := fields(a[0]), fields(a[1])
		n := len(x)
		if len(y) > n {
			n = len(y)
		}
		out := make([]string, n)
		for i := range out {
			if i < len(x) {
				out[i] = x[i]
			}
			if i < len(y) {
				out[i] += y[i]
			}
		}
		return strings.Join(out, " ")
	case "wildcard":
		var out []string
		for _, p := range fields(a[0]) {
			out = append(out, glob(p)...)
		}
		return strings.Join(out, " ")
	case "realpath", "abspath":
		var out []string
		for _, w := range fields(a[0]) {
			p := w
			if !filepath.IsAbs(p) {
				p = filepath.Join(m.curdir, p)
			}
			p = filepath.Clean(p)
			if name == "realpath" {
				r, err := filepath.EvalSymlinks(p)
				if err != nil {
					continue
				}
				p = r
			}
			out = append(out, p)
		}
		return strings.Join(out, " ")
	}
	return ""
}

// wordSpans returns the start and end offsets of each word of s.
func wordSpans(s string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			if start >= 0 {
				out = append(out, [2]int{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

func (m *Make) numArg(s, which, fn string) int {
	t := trimSpace(s)
	n, err := strconv.Atoi(t)
	if err != nil || t == "" || strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-") {
		m.fatalf("non-numeric %s argument to '%s' function: '%s'", which, fn, t)
	}
	if n < 0 {
		if fn == "word" {
			m.fatalf("first argument to 'word' function must be greater than 0")
		}
		m.fatalf("invalid %s argument to '%s' function: '%d'", which, fn, n)
	}
	return n
}

// call runs $(call NAME,ARGS...): NAME's value expanded with $(0) the
// name and $(1)... the arguments.
func (m *Make) call(args []string, sc *Scope) string {
	name := trimSpace(m.expand(args[0], sc))
	if name == "" {
		return ""
	}
	vals := make([]string, len(args))
	vals[0] = name
	for i := 1; i < len(args); i++ {
		vals[i] = m.expand(args[i], sc)
	}
	if _, ok := functions[name]; ok {
		// $(call info,x) calls the function itself.
		return textOrSide(m, name, vals[1:], sc)
	}
	v := sc.lookup(name)
	if v == nil {
		if m.opts.warnUndefined {
			m.warnf("warning: undefined variable '%s'", name)
		}
		return ""
	}
	inner := newScope(sc)
	n := len(vals)
	if m.callDepthArgs > n {
		n = m.callDepthArgs
	}
	for i := 0; i < n; i++ {
		val := ""
		if i < len(vals) {
			val = vals[i]
		}
		k := strconv.Itoa(i)
		inner.vars[k] = &Var{Name: k, Value: val, Origin: OriginAutomatic}
	}
	saved := m.callDepthArgs
	m.callDepthArgs = n
	defer func() { m.callDepthArgs = saved }()
	if !v.Recursive {
		return v.Value
	}
	// A called variable may call itself (GNU lifts the self-reference
	// check for $(call)); the depth bound stops a runaway.
	return m.expand(v.Value, inner)
}

// textOrSide runs a built-in function on already-expanded arguments
// (what $(call FUNC,...) does).
func textOrSide(m *Make, name string, a []string, sc *Scope) string {
	lim := functions[name]
	if len(a) < lim[0] {
		m.fatalf("insufficient number of arguments (%d) to function '%s'", len(a), name)
	}
	esc := make([]string, len(a))
	for i, s := range a {
		esc[i] = strings.ReplaceAll(s, "$", "$$")
	}
	return m.callFunc(name, strings.Join(esc, ","), '(', ')', sc)
}

// patsubst replaces words of text matching pat (one '%' wildcard) with
// rep, the '%' of rep standing for the stem.
func patsubst(pat, rep, text string) string {
	words := fields(text)
	pp := findPercent(pat)
	rp := findPercent(rep)
	p := unescapePercent(pat)
	r := unescapePercent(rep)
	for i, w := range words {
		if pp < 0 {
			if w == p {
				words[i] = r
			}
			continue
		}
		pre, suf := p[:pp], p[pp+1:]
		if len(w) >= len(pre)+len(suf) && strings.HasPrefix(w, pre) && strings.HasSuffix(w, suf) {
			stem := w[len(pre) : len(w)-len(suf)]
			if rp < 0 {
				words[i] = r
			} else {
				words[i] = r[:rp] + stem + r[rp+1:]
			}
		}
	}
	return strings.Join(words, " ")
}

// findPercent is the index of the first unescaped '%' in the unescaped
// form of s, or -1.
func findPercent(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '%' || s[i+1] == '\\') {
			// A backslash escapes a '%' (and backslashes before one).
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j < len(s) && s[j] == '%' {
				bs := j - i
				n += bs / 2
				if bs%2 == 0 {
					return n
				}
				n++
				i = j
				continue
			}
		}
		if s[i] == '%' {
			return n
		}
		n++
	}
	return -1
}

// unescapePercent removes the backslashes that quote '%' characters.
func unescapePercent(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j < len(s) && s[j] == '%' {
				b.WriteString(strings.Repeat("\\", (j-i)/2))
				if (j-i)%2 == 1 {
					b.WriteByte('%')
					i = j
				} else {
					i = j - 1
				}
				continue
			}
			b.WriteString(s[i:j])
			i = j - 1
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// matchPattern matches word against a pattern with at most one '%' and
// returns the stem.
func matchPattern(pat, word string) (string, bool) {
	pp := findPercent(pat)
	p := unescapePercent(pat)
	if pp < 0 {
		return "", p == word
	}
	pre, suf := p[:pp], p[pp+1:]
	if len(word) >= len(pre)+len(suf) && strings.HasPrefix(word, pre) && strings.HasSuffix(word, suf) {
		return word[len(pre) : len(word)-len(suf)], true
	}
	return "", false
}

// glob expands one shell wildcard pattern as GNU make's glob does:
// sorted, dot files only for a pattern component starting with '.', a
// word without wildcards only if the file exists.
func glob(p string) []string {
	if !strings.ContainsAny(p, "*?[") {
		if _, err := os.Lstat(unquoteGlob(p)); err == nil {
			return []string{unquoteGlob(p)}
		}
		return nil
	}
	matches, err := filepath.Glob(p)
	if err != nil {
		return nil
	}
	var out []string
	for _, mt := range matches {
		if hiddenMismatch(p, mt) {
			continue
		}
		out = append(out, mt)
	}
	sort.Strings(out)
	return out
}

func unquoteGlob(p string) string {
	if !strings.Contains(p, "\\") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// hiddenMismatch reports whether a match has a dot-file component where
// the pattern's component does not start with a literal dot.
func hiddenMismatch(pat, match string) bool {
	pc := strings.Split(pat, "/")
	mc := strings.Split(match, "/")
	if len(pc) != len(mc) {
		return false
	}
	for i := range pc {
		if strings.HasPrefix(mc[i], ".") && !strings.HasPrefix(pc[i], ".") {
			return true
		}
	}
	return false
}
