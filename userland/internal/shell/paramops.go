package shell

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Parameter expansions mvdan.cc/sh/expand does not do as bash 5.2 does:
// the @Q @E @A @a @K @k @U @u @L transformations (its @Q quotes
// differently, @A and @a miss attributes it does not know of, and it
// applies them to an array joined), ${x/pat/rep} (no /# and /% anchors,
// no & for the match, no quote removal inside double quotes), and the
// deferred expansions parse.go leaves for ${x~} and bad substitutions.
// The shell computes the values and hands expand a temporary variable
// holding them, so that quoting, splitting and joining stay expand's.

// badSubst is bash's "bad substitution" expansion error.
type badSubst struct{ text string }

func (e *badSubst) Error() string { return e.text + ": bad substitution" }

func litWord(s string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}}
}

// paramOp returns what stands for p, or nil when expand does p right.
func (s *Shell) paramOp(p *syntax.ParamExp) (syntax.WordPart, error) {
	if p.Param == nil {
		return nil, nil
	}
	if kind, text, ok := deferredText(p.Param.Value); ok {
		return s.deferredExp(kind, text)
	}
	if p.Excl && p.Names == 0 && p.Exp == nil && p.Repl == nil && p.Slice == nil {
		// ${!m[@]} of an associative array: its keys in bash's order.
		if w, ok := p.Index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
			if n, v := s.resolveName(p.Param.Value); v.Kind == expand.Associative {
				return s.tempParam(s.assocOrder(n, v.Map), true, w.Lit() == "*"), nil
			}
		}
	}
	if p.Excl || p.Length || p.Names != 0 || p.Slice != nil || p.NestedParam != nil {
		return nil, nil
	}
	if p.Index != nil && p.Exp == nil && p.Repl == nil {
		if bad := s.badSubscript(p); bad {
			if s.opts.errexit {
				// Under set -e bash fails the command instead, and
				// exits.
				s.lastStatus = 1
				s.abandon()
				return nil, &exitStatusError{status: 1}
			}
			return s.tempParam(nil, false, false), nil
		}
	}
	if p.Exp != nil && isListParam(p) {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			return s.listDefault(p)
		}
	}
	switch {
	case p.Repl != nil:
		return s.replaceOp(p)
	case p.Exp != nil && p.Exp.Op == syntax.OtherParamOps:
		switch op := p.Exp.Word.Lit(); op {
		case "Q", "E", "a", "A", "K", "k", "U", "u", "L":
			return s.transformOp(p, op)
		}
	}
	return nil, nil
}

// expandNoDrop expands a word to fields without dropping the temporary
// variables the word being expanded around it has made.
func (s *Shell) expandNoDrop(w *syntax.Word) ([]string, error) {
	w, _, err := s.substArithWord(w)
	if err != nil {
		return nil, err
	}
	return expand.Fields(s.ecfg(), w)
}

func (s *Shell) literalNoDrop(w *syntax.Word) (string, error) {
	if w == nil {
		return "", nil
	}
	w, _, err := s.substArithWord(w)
	if err != nil {
		return "", err
	}
	return expand.Literal(s.ecfg(), w)
}

// paramValues returns the values an operator on p applies to: the
// elements of ${a[@]}, ${a[*]}, $@ or $* (list; star for the joined
// forms), else the one value and whether it is set.
func (s *Shell) paramValues(p *syntax.ParamExp) (vals []string, list, star, set bool, err error) {
	cp := &syntax.ParamExp{Param: p.Param, Index: p.Index}
	switch p.Param.Value {
	case "@":
		list = true
	case "*":
		list, star = true, true
		cp.Param = &syntax.Lit{Value: "@"}
	}
	if w, ok := p.Index.(*syntax.Word); ok {
		switch w.Lit() {
		case "@":
			list = true
		case "*":
			list, star = true, true
			cp.Index = litWord("@")
		}
	}
	dq := func(pe *syntax.ParamExp) *syntax.Word {
		return &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Parts: []syntax.WordPart{pe}}}}
	}
	vals, err = s.expandNoDrop(dq(cp))
	if err != nil || list {
		return vals, list, star, true, err
	}
	probe := &syntax.ParamExp{Param: cp.Param, Index: cp.Index,
		Exp: &syntax.Expansion{Op: syntax.AlternateUnset, Word: litWord("x")}}
	isSet, err := s.expandNoDrop(dq(probe))
	set = err == nil && len(isSet) == 1 && isSet[0] == "x"
	return vals, false, false, set, err
}

// tempParam stores vals in a temporary variable and returns its
// expansion: ${t[@]} or ${t[*]} for a list, else ${t}.
func (s *Shell) tempParam(vals []string, list, star bool) *syntax.ParamExp {
	s.assocTmp++
	name := "__secexec_assoc_" + strconv.Itoa(s.assocTmp)
	pe := &syntax.ParamExp{Param: &syntax.Lit{Value: name}}
	if list {
		// A non-nil list: expand takes a nil one for an unset variable,
		// which "${t[@]}" turns into one empty field.
		s.env.global().vars[name] = expand.Variable{Set: true, Kind: expand.Indexed, List: append([]string{}, vals...)}
		idx := "@"
		if star {
			idx = "*"
		}
		pe.Index = litWord(idx)
	} else {
		v := ""
		if len(vals) > 0 {
			v = vals[0]
		}
		s.env.global().vars[name] = str(v)
	}
	s.assocTemps = append(s.assocTemps, name)
	return pe
}

// resolveName follows a nameref.
func (s *Shell) resolveName(name string) (string, expand.Variable) {
	v, _ := s.env.lookup(name)
	for i := 0; i < 8 && v.Kind == expand.NameRef; i++ {
		name = v.Str
		v, _ = s.env.lookup(name)
	}
	return name, v
}

// attrFlags is ${x@a}: bash's attribute letters, in bash's order.
func (s *Shell) attrFlags(name string) string {
	name, v := s.resolveName(name)
	var b strings.Builder
	switch v.Kind {
	case expand.Indexed:
		b.WriteByte('a')
	case expand.Associative:
		b.WriteByte('A')
	}
	if s.intAttr[name] {
		b.WriteByte('i')
	}
	if v.ReadOnly || s.readonly[name] {
		b.WriteByte('r')
	}
	if v.Exported {
		b.WriteByte('x')
	}
	switch s.caseAttr[name] {
	case 'l':
		b.WriteByte('l')
	case 'u':
		b.WriteByte('u')
	}
	return b.String()
}

func (s *Shell) transformOp(p *syntax.ParamExp, op string) (syntax.WordPart, error) {
	vals, list, star, set, err := s.paramValues(p)
	if err != nil {
		return nil, err
	}
	name := p.Param.Value
	if !list && !set {
		return s.tempParam(nil, false, false), nil
	}
	each := func(f func(string) string) {
		for i, v := range vals {
			vals[i] = f(v)
		}
	}
	switch op {
	case "Q":
		each(quoteQ)
	case "E":
		each(ansiCDecode)
	case "U":
		each(strings.ToUpper)
	case "L":
		each(strings.ToLower)
	case "u":
		each(func(v string) string {
			r, n := utf8.DecodeRuneInString(v)
			if n == 0 {
				return v
			}
			return string(unicode.ToUpper(r)) + v[n:]
		})
	case "a":
		if name == "@" || name == "*" {
			each(func(string) string { return "" })
			break
		}
		f := s.attrFlags(name)
		each(func(string) string { return f })
	case "A":
		if name == "@" {
			// bash gives "set", "--" and the quoted values as words.
			each(quoteQ)
			return s.tempParam(append([]string{"set", "--"}, vals...), true, false), nil
		}
		if list && len(vals) == 0 {
			if _, v := s.resolveName(name); v.Kind != expand.Indexed && v.Kind != expand.Associative {
				return s.tempParam(nil, false, false), nil
			}
		}
		return s.tempParam([]string{s.assignText(p, vals, list)}, false, false), nil
	case "K", "k":
		n, v := s.resolveName(name)
		if !list || name == "@" || name == "*" || v.Kind != expand.Indexed && v.Kind != expand.Associative {
			each(quoteQ)
			break
		}
		var pairs []string
		switch v.Kind {
		case expand.Indexed:
			for i, x := range v.List {
				idx := i
				if v.Indexes != nil {
					idx = v.Indexes[i]
				}
				pairs = append(pairs, strconv.Itoa(idx), x)
			}
		case expand.Associative:
			for _, k := range s.assocOrder(n, v.Map) {
				pairs = append(pairs, k, v.Map[k])
			}
		}
		if op == "k" {
			return s.tempParam(pairs, true, star), nil
		}
		var b strings.Builder
		for i := 0; i < len(pairs); i += 2 {
			if i > 0 {
				b.WriteByte(' ')
			}
			k := pairs[i]
			if v.Kind == expand.Associative {
				k = assocKeyQuote(k)
			}
			b.WriteString(k + " " + quoteValue(pairs[i+1]))
		}
		if v.Kind == expand.Associative && len(pairs) > 0 {
			b.WriteByte(' ') // as bash 5.2 prints it
		}
		return s.tempParam([]string{b.String()}, false, false), nil
	}
	return s.tempParam(vals, list, star), nil
}

// assignText is ${x@A}: an assignment or declare command that recreates
// the parameter.
func (s *Shell) assignText(p *syntax.ParamExp, vals []string, list bool) string {
	name := p.Param.Value
	if name == "@" || name == "*" {
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = quoteQ(v)
		}
		return strings.TrimSpace("set -- " + strings.Join(q, " "))
	}
	n, v := s.resolveName(name)
	flags := s.attrFlags(name)
	if list && (v.Kind == expand.Indexed || v.Kind == expand.Associative) {
		return s.declareLine(n, v)
	}
	val := ""
	if len(vals) > 0 {
		val = vals[0]
	}
	if flags == "" {
		return n + "=" + quoteQ(val)
	}
	return "declare -" + flags + " " + n + "=" + quoteQ(val)
}

// ansiCShouldQuote: bash quotes a value $'...' when it holds a character
// that does not print.
func ansiCShouldQuote(v string) bool {
	for _, r := range v {
		if r == utf8.RuneError || !unicode.IsGraphic(r) && r != ' ' {
			return true
		}
	}
	return false
}

// ansiCQuote quotes v as $'...'.
func ansiCQuote(v string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == '\a':
			b.WriteString(`\a`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\v':
			b.WriteString(`\v`)
		case r == 0x1b:
			b.WriteString(`\E`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r == utf8.RuneError || !unicode.IsGraphic(r) && r != ' ':
			for _, c := range []byte(v[i : i+n]) {
				fmt.Fprintf(&b, `\%03o`, c)
			}
		default:
			b.WriteString(v[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// quoteQ is ${x@Q}: single quotes, or $'...' for what does not print.
func quoteQ(v string) string {
	switch {
	case v == "":
		return "''"
	case ansiCShouldQuote(v):
		return ansiCQuote(v)
	case v == "'":
		return `\'`
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// ansiCDecode is ${x@E}: the backslash escapes of $'...'.
func ansiCDecode(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = v[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for ; j < len(v) && j < i+3 && v[j] >= '0' && v[j] <= '7'; j++ {
				n = n*8 + int(v[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, j := 0, i+1
			for ; j < len(v) && j < i+1+max && isHex(v[j]); j++ {
				n = n*16 + hexVal(v[j])
			}
			switch {
			case j == i+1:
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == 'x':
				b.WriteByte(byte(n))
			default:
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i] & 0x1f)
			} else {
				b.WriteString(`\c`)
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// replaceOp is ${x/pat/rep}, ${x//pat/rep}, ${x/#pat/rep} and
// ${x/%pat/rep}, with bash 5.2's & (patsub_replacement) for the match.
func (s *Shell) replaceOp(p *syntax.ParamExp) (syntax.WordPart, error) {
	vals, list, star, set, err := s.paramValues(p)
	if err != nil {
		return nil, err
	}
	if !list && !set {
		return s.tempParam(nil, false, false), nil
	}
	orig := p.Repl.Orig
	anchor := byte(0)
	if orig != nil && len(orig.Parts) > 0 {
		if l, ok := orig.Parts[0].(*syntax.Lit); ok && (strings.HasPrefix(l.Value, "#") || strings.HasPrefix(l.Value, "%")) {
			anchor = l.Value[0]
			parts := append([]syntax.WordPart{&syntax.Lit{Value: l.Value[1:]}}, orig.Parts[1:]...)
			orig = &syntax.Word{Parts: parts}
		}
	}
	pat := ""
	if orig != nil {
		w, _, err := s.substArithWord(orig)
		if err != nil {
			return nil, err
		}
		if pat, err = expand.Pattern(s.ecfg(), w); err != nil {
			return nil, err
		}
	}
	if pat == "" && anchor == 0 {
		return s.tempParam(vals, list, star), nil
	}
	segs, err := s.replacement(p.Repl.With)
	if err != nil {
		return nil, err
	}
	expr, err := pattern.Regexp(pat, 0)
	if err != nil {
		return s.tempParam(vals, list, star), nil
	}
	var rx *regexp.Regexp
	switch anchor {
	case '#':
		rx, err = regexp.Compile(`^(?:` + expr + `)`)
	case '%':
		rx, err = regexp.Compile(`^(?:` + expr + `)$`)
	default:
		rx, err = regexp.Compile(`(?:` + expr + `)`)
	}
	if err != nil {
		return s.tempParam(vals, list, star), nil
	}
	rx.Longest()
	for i, v := range vals {
		vals[i] = substitute(v, rx, anchor, p.Repl.All, segs)
	}
	return s.tempParam(vals, list, star), nil
}

// replSeg is part of a replacement: quoted text is literal, unquoted
// text has & stand for the match.
type replSeg struct {
	text   string
	quoted bool
}

// replacement expands the replacement word: a backslash quotes the next
// character (inside double quotes too, as bash does there).
func (s *Shell) replacement(w *syntax.Word) ([]replSeg, error) {
	if w == nil {
		return nil, nil
	}
	var segs []replSeg
	for _, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			v := part.Value
			var b strings.Builder
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' && i+1 < len(v) {
					segs = append(segs, replSeg{b.String(), false}, replSeg{v[i+1 : i+2], true})
					b.Reset()
					i++
					continue
				}
				b.WriteByte(v[i])
			}
			segs = append(segs, replSeg{b.String(), false})
		default:
			_, quoted := part.(*syntax.SglQuoted)
			if _, dq := part.(*syntax.DblQuoted); dq {
				quoted = true
			}
			t, err := s.literalNoDrop(&syntax.Word{Parts: []syntax.WordPart{part}})
			if err != nil {
				return nil, err
			}
			segs = append(segs, replSeg{t, quoted})
		}
	}
	return segs, nil
}

func buildReplacement(segs []replSeg, match string) string {
	var b strings.Builder
	for _, sg := range segs {
		if sg.quoted {
			b.WriteString(sg.text)
		} else {
			b.WriteString(strings.ReplaceAll(sg.text, "&", match))
		}
	}
	return b.String()
}

// substitute replaces matches of rx in v: the longest at the leftmost
// place, every one for all, or only at the start (#) or end (%).
func substitute(v string, rx *regexp.Regexp, anchor byte, all bool, segs []replSeg) string {
	switch anchor {
	case '#':
		loc := rx.FindStringIndex(v)
		if loc == nil {
			return v
		}
		return buildReplacement(segs, v[:loc[1]]) + v[loc[1]:]
	case '%':
		for i := 0; i <= len(v); i++ {
			if i > 0 && i < len(v) && !utf8.RuneStart(v[i]) {
				continue
			}
			if rx.MatchString(v[i:]) {
				return v[:i] + buildReplacement(segs, v[i:])
			}
		}
		return v
	}
	var b strings.Builder
	pos := 0
	for pos <= len(v) {
		loc := rx.FindStringIndex(v[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		b.WriteString(v[pos:start])
		if end == start {
			// An empty match replaces nothing: bash moves on a character.
			if start >= len(v) {
				pos = len(v)
				break
			}
			_, n := utf8.DecodeRuneInString(v[start:])
			b.WriteString(v[start : start+n])
			pos = start + n
			if !all {
				break
			}
			continue
		}
		b.WriteString(buildReplacement(segs, v[start:end]))
		pos = end
		if !all {
			break
		}
	}
	b.WriteString(v[min(pos, len(v)):])
	return b.String()
}

// deferredExp evaluates an expansion parse.go deferred.
func (s *Shell) deferredExp(kind, text string) (syntax.WordPart, error) {
	if kind == deferredArith {
		return s.deferredArith(text)
	}
	// ${name~pat} and ${name~~pat} toggle case; anything else mvdan
	// refused is a bad substitution to bash as well.
	body := strings.TrimSuffix(strings.TrimPrefix(text, "${"), "}")
	k := strings.IndexByte(body, '~')
	if k <= 0 {
		return nil, &badSubst{text}
	}
	target, op := body[:k], body[k+1:]
	all := strings.HasPrefix(op, "~")
	if all {
		op = op[1:]
	}
	f, err := newParser().Parse(strings.NewReader("${"+target+"}"), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, &badSubst{text}
	}
	ce, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) != 1 || len(ce.Args[0].Parts) != 1 {
		return nil, &badSubst{text}
	}
	pe, ok := ce.Args[0].Parts[0].(*syntax.ParamExp)
	if !ok || pe.Excl || pe.Length || pe.Exp != nil || pe.Repl != nil || pe.Slice != nil {
		return nil, &badSubst{text}
	}
	vals, list, star, _, err := s.paramValues(pe)
	if err != nil {
		return nil, err
	}
	var rx *regexp.Regexp
	if op != "" {
		w, err := newParser().Document(strings.NewReader(op))
		if err != nil {
			return nil, &badSubst{text}
		}
		pat, err := expand.Pattern(s.ecfg(), w)
		if err != nil {
			return nil, err
		}
		expr, err := pattern.Regexp(pat, pattern.EntireString)
		if err == nil {
			rx, _ = regexp.Compile(expr)
		}
	}
	for i, v := range vals {
		rs := []rune(v)
		for j, r := range rs {
			if j > 0 && !all {
				break
			}
			if rx != nil && !rx.MatchString(string(r)) {
				continue
			}
			switch {
			case unicode.IsUpper(r):
				rs[j] = unicode.ToLower(r)
			case unicode.IsLower(r):
				rs[j] = unicode.ToUpper(r)
			}
		}
		vals[i] = string(rs)
	}
	return s.tempParam(vals, list, star), nil
}

// deferredArith is an arithmetic expansion mvdan's parser refused: bash
// parses $((...)) only when it runs it, after expanding its text.
func (s *Shell) deferredArith(text string) (syntax.WordPart, error) {
	body := strings.TrimSuffix(strings.TrimPrefix(text, "$(("), "))")
	w, err := newParser().Document(strings.NewReader(body))
	if err != nil {
		return nil, &arithError{expr: strings.TrimSpace(body), msg: "syntax error: invalid arithmetic operator", token: strings.TrimSpace(body)}
	}
	expr, err := s.literalNoDrop(w)
	if err != nil {
		return nil, err
	}
	if e := bashArithSyntax(expr); e != nil {
		return nil, e
	}
	v, err := s.arithString(expr)
	if err != nil {
		return nil, err
	}
	return &syntax.SglQuoted{Value: strconv.Itoa(v)}, nil
}

// plainIndex reports a subscript that evaluating twice changes nothing:
// a number or a name, maybe negated.
func plainIndex(x syntax.ArithmExpr) bool {
	if u, ok := x.(*syntax.UnaryArithm); ok && (u.Op == syntax.Minus || u.Op == syntax.Plus) && !u.Post {
		x = u.X
	}
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	if pe, ok := w.Parts[0].(*syntax.ParamExp); ok {
		return pe.Param != nil && pe.Index == nil && pe.Exp == nil && pe.Repl == nil && pe.Slice == nil && !pe.Excl && !pe.Length
	}
	l := w.Lit()
	return l != "" && (validName(l) || strings.Trim(l, "0123456789") == "")
}

// badSubscript reports ${a[i]} with i negative beyond the array's start:
// bash prints "a: bad array subscript" and expands it to nothing, and the
// command runs (mvdan.cc/sh/expand fails the command instead).
func (s *Shell) badSubscript(p *syntax.ParamExp) bool {
	v := s.env.Get(p.Param.Value)
	if v.Kind != expand.Indexed {
		return false
	}
	if w, ok := p.Index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
		return false
	}
	if !plainIndex(p.Index) {
		return false
	}
	i, err := s.arith(p.Index)
	if err != nil || i >= 0 || i+nextIndex(v) >= 0 {
		return false
	}
	s.errf("%s: bad array subscript", p.Param.Value)
	return true
}

// isListParam reports ${a[@]}, ${a[*]}, $@ and $* forms.
func isListParam(p *syntax.ParamExp) bool {
	if p.Param.Value == "@" || p.Param.Value == "*" {
		return true
	}
	w, ok := p.Index.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// listDefault is ${a[@]-w}, ${a[@]:-w}, ${a[@]+w} and ${a[@]:+w}: an
// array with no elements is unset to them, one whose only element is
// empty is null (mvdan.cc/sh/expand counts a declared empty array as set
// and loses a quoted default).
func (s *Shell) listDefault(p *syntax.ParamExp) (syntax.WordPart, error) {
	vals, list, star, _, err := s.paramValues(p)
	if err != nil {
		return nil, err
	}
	unset := len(vals) == 0
	null := unset || len(vals) == 1 && vals[0] == ""
	var useWord bool
	switch p.Exp.Op {
	case syntax.DefaultUnset:
		useWord = unset
	case syntax.DefaultUnsetOrNull:
		useWord = null
	case syntax.AlternateUnset:
		useWord = !unset
	case syntax.AlternateUnsetOrNull:
		useWord = !null
	}
	if useWord {
		w, err := s.literalNoDrop(p.Exp.Word)
		if err != nil {
			return nil, err
		}
		return s.tempParam([]string{w}, false, false), nil
	}
	if p.Exp.Op == syntax.AlternateUnset || p.Exp.Op == syntax.AlternateUnsetOrNull {
		// Nothing, as "$@" with no parameters: no field even quoted.
		return s.tempParam(nil, list, star), nil
	}
	return s.tempParam(vals, list, star), nil
}
