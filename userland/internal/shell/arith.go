package shell

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Bash arithmetic, evaluated here rather than by mvdan.cc/sh/expand: a
// variable's value is itself an expression (c="a + b"; $((c * 2))),
// array elements are lvalues (a[i]++, m[key]+=1), numbers take bash's
// bases (0x1f, 017, 2#101), and errors read as bash's ("1 / 0: division
// by 0 (error token is "0")").

// arithError is an arithmetic evaluation error, worded as bash does.
type arithError struct {
	expr  string
	msg   string
	token string
}

func (e *arithError) Error() string {
	if e.token == "" {
		return e.expr + ": " + e.msg
	}
	return fmt.Sprintf("%s: %s (error token is \"%s\")", e.expr, e.msg, e.token)
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	_ = syntax.NewPrinter(syntax.Minify(false)).Print(&b, n)
	return strings.TrimSpace(b.String())
}

// arith evaluates an arithmetic expression of the script.
func (s *Shell) arith(x syntax.ArithmExpr) (int, error) {
	ev := &arithEval{s: s, top: x, depth: 0}
	if start, end := int(x.Pos().Offset()), int(x.End().Offset()); s.src != "" && start >= 0 && start < end && end <= len(s.src) {
		ev.src, ev.start, ev.end = s.src, start, end
	}
	v, err := ev.eval(x)
	return int(v), err
}

// arithString evaluates text as an arithmetic expression (let, declare -i,
// a variable's value, an expanded $((...)) body).
func (s *Shell) arithString(expr string) (int, error) {
	v, err := s.arithText(expr, 0)
	return int(v), err
}

func (s *Shell) arithText(expr string, depth int) (int64, error) {
	if strings.TrimSpace(expr) == "" {
		return 0, nil
	}
	if depth > 100 {
		return 0, &arithError{expr: expr, msg: "expression recursion level exceeded", token: expr}
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	x, err := p.Arithmetic(strings.NewReader(expr))
	if err != nil {
		return 0, &arithError{expr: strings.TrimSpace(expr), msg: "syntax error: invalid arithmetic operator", token: strings.TrimSpace(expr)}
	}
	ev := &arithEval{s: s, top: x, depth: depth, text: strings.TrimSpace(expr)}
	return ev.eval(x)
}

type arithEval struct {
	s     *Shell
	top   syntax.ArithmExpr
	text  string
	depth int
	// src[start:end] is the expression as written, when known: bash
	// quotes it, and the rest of it from the failing operand, in errors.
	src        string
	start, end int
}

func (ev *arithEval) exprText() string {
	if ev.text != "" {
		return ev.text
	}
	if ev.src != "" {
		return ev.src[ev.start:ev.end]
	}
	return printNode(ev.top)
}

func (ev *arithEval) fail(msg string, at syntax.Node) error {
	tok := ""
	if at != nil {
		if off := int(at.Pos().Offset()); ev.src != "" && off >= ev.start && off <= ev.end {
			tok = ev.src[off:ev.end]
		} else if ev.text != "" {
			tok = printNode(at)
		} else {
			tok = printNode(at)
		}
	}
	return &arithError{expr: ev.exprText(), msg: msg, token: tok}
}

// lvalue is a variable or array element an assignment can target.
type lvalue struct {
	name  string
	index syntax.ArithmExpr // nil for a scalar
}

func (ev *arithEval) lvalueOf(x syntax.ArithmExpr) (lvalue, bool) {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return lvalue{}, false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if validName(p.Value) {
			return lvalue{name: p.Value}, true
		}
	case *syntax.ParamExp:
		if p.Param != nil && p.Index != nil && p.Exp == nil && p.Slice == nil && p.Repl == nil && !p.Length && !p.Excl && !p.Dollar.IsValid() {
			return lvalue{name: p.Param.Value, index: p.Index}, true
		}
	}
	return lvalue{}, false
}

// get reads an lvalue's value as an integer.
func (ev *arithEval) get(lv lvalue, at syntax.Node) (int64, error) {
	v := ev.s.env.Get(lv.name)
	var str string
	set := v.IsSet()
	if lv.index == nil {
		str = ev.s.env.str(lv.name)
	} else {
		key, idx, err := ev.index(lv, v)
		if err != nil {
			return 0, err
		}
		switch v.Kind {
		case expand.Associative:
			str, set = v.Map[key]
		default:
			str = indexGet(v, idx)
			set = set && (idx < nextIndex(v))
		}
	}
	if !set && ev.s.opts.nounset {
		name := lv.name
		if lv.index != nil {
			name += "[" + printNode(lv.index) + "]"
		}
		return 0, &unboundError{name: name}
	}
	return ev.s.arithValue(str, ev.depth+1)
}

type unboundError struct{ name string }

func (e *unboundError) Error() string { return e.name + ": unbound variable" }

// index evaluates an lvalue's subscript: a string key for an associative
// array, an integer otherwise.
func (ev *arithEval) index(lv lvalue, v expand.Variable) (string, int, error) {
	if v.Kind == expand.Associative {
		k, err := ev.s.assocKey(lv.index)
		return k, 0, err
	}
	i, err := ev.eval(lv.index)
	if err != nil {
		return "", 0, err
	}
	if i < 0 {
		i += int64(nextIndex(v))
		if i < 0 {
			return "", 0, fmt.Errorf("%s: bad array subscript", lv.name)
		}
	}
	return "", int(i), nil
}

// set assigns an lvalue.
func (ev *arithEval) set(lv lvalue, val int64) error {
	str := strconv.FormatInt(val, 10)
	if lv.index == nil {
		return ev.s.env.Set(lv.name, expand.Variable{Set: true, Kind: expand.String, Str: str})
	}
	v := ev.s.env.Get(lv.name)
	key, idx, err := ev.index(lv, v)
	if err != nil {
		return err
	}
	if v.Kind == expand.Associative {
		m := make(map[string]string, len(v.Map)+1)
		for k, x := range v.Map {
			m[k] = x
		}
		m[key] = str
		v.Map, v.Set = m, true
		return ev.s.env.Set(lv.name, v)
	}
	return ev.s.env.Set(lv.name, indexedSet(v, idx, str))
}

// arithValue is a variable's value used in arithmetic: a number, or an
// expression evaluated in turn; empty is 0.
func (s *Shell) arithValue(str string, depth int) (int64, error) {
	str = strings.TrimSpace(str)
	if str == "" {
		return 0, nil
	}
	if n, ok, err := parseNumber(str); ok || err != nil {
		return n, err
	}
	return s.arithText(str, depth)
}

// parseNumber reads a bash integer constant: decimal, 0x hex, 0 octal,
// BASE#digits. ok is false when str is not a constant at all.
func parseNumber(str string) (int64, bool, error) {
	if str == "" || !(str[0] >= '0' && str[0] <= '9') {
		return 0, false, nil
	}
	base := int64(10)
	digits := str
	switch {
	case strings.Contains(str, "#"):
		b, rest, _ := strings.Cut(str, "#")
		n, err := strconv.Atoi(b)
		if err != nil || n < 2 || n > 64 {
			return 0, true, &arithError{expr: str, msg: "invalid arithmetic base", token: str}
		}
		base, digits = int64(n), rest
	case len(str) > 1 && (str[1] == 'x' || str[1] == 'X') && str[0] == '0':
		base, digits = 16, str[2:]
	case len(str) > 1 && str[0] == '0':
		base, digits = 8, str[1:]
	}
	var v int64
	for _, c := range digits {
		var d int64
		switch {
		case c >= '0' && c <= '9':
			d = int64(c - '0')
		case c >= 'a' && c <= 'z':
			d = int64(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			if base <= 36 {
				d = int64(c-'A') + 10
			} else {
				d = int64(c-'A') + 36
			}
		case c == '@':
			d = 62
		case c == '_':
			d = 63
		default:
			return 0, true, &arithError{expr: str, msg: "invalid number", token: str}
		}
		if d >= base {
			return 0, true, &arithError{expr: str, msg: "value too great for base", token: str}
		}
		v = v*base + d
	}
	return v, true, nil
}

func (ev *arithEval) eval(x syntax.ArithmExpr) (int64, error) {
	switch x := x.(type) {
	case *syntax.Word:
		if lv, ok := ev.lvalueOf(x); ok {
			return ev.get(lv, x)
		}
		if l, ok := x.Parts[0].(*syntax.Lit); ok && len(x.Parts) == 1 {
			n, isNum, err := parseNumber(l.Value)
			if err != nil {
				var ae *arithError
				if errors.As(err, &ae) {
					ae.expr = ev.exprText()
				}
				return 0, err
			}
			if isNum {
				return n, nil
			}
		}
		str, err := ev.s.literal(x)
		if err != nil {
			return 0, err
		}
		return ev.s.arithValue(str, ev.depth+1)
	case *syntax.ParenArithm:
		return ev.eval(x.X)
	case *syntax.UnaryArithm:
		switch x.Op {
		case syntax.Inc, syntax.Dec:
			lv, ok := ev.lvalueOf(x.X)
			if !ok {
				return 0, ev.fail("syntax error: operand expected", x.X)
			}
			old, err := ev.get(lv, x.X)
			if err != nil {
				return 0, err
			}
			nv := old + 1
			if x.Op == syntax.Dec {
				nv = old - 1
			}
			if err := ev.set(lv, nv); err != nil {
				return 0, err
			}
			if x.Post {
				return old, nil
			}
			return nv, nil
		}
		v, err := ev.eval(x.X)
		if err != nil {
			return 0, err
		}
		switch x.Op {
		case syntax.Not:
			return b2i64(v == 0), nil
		case syntax.BitNegation:
			return ^v, nil
		case syntax.Plus:
			return v, nil
		case syntax.Minus:
			return -v, nil
		}
		return 0, ev.fail("syntax error: invalid arithmetic operator", x)
	case *syntax.BinaryArithm:
		return ev.binary(x)
	}
	return 0, ev.fail("syntax error: invalid arithmetic expression", x)
}

func b2i64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (ev *arithEval) binary(x *syntax.BinaryArithm) (int64, error) {
	switch x.Op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn, syntax.PowAssgn:
		lv, ok := ev.lvalueOf(x.X)
		if !ok {
			return 0, ev.fail("attempted assignment to non-variable", x.X)
		}
		r, err := ev.eval(x.Y)
		if err != nil {
			return 0, err
		}
		v := r
		if x.Op != syntax.Assgn {
			l, err := ev.get(lv, x.X)
			if err != nil {
				return 0, err
			}
			op := map[syntax.BinAritOperator]syntax.BinAritOperator{
				syntax.AddAssgn: syntax.Add, syntax.SubAssgn: syntax.Sub, syntax.MulAssgn: syntax.Mul,
				syntax.QuoAssgn: syntax.Quo, syntax.RemAssgn: syntax.Rem, syntax.AndAssgn: syntax.And,
				syntax.OrAssgn: syntax.Or, syntax.XorAssgn: syntax.Xor, syntax.ShlAssgn: syntax.Shl,
				syntax.ShrAssgn: syntax.Shr, syntax.PowAssgn: syntax.Pow,
			}[x.Op]
			if v, err = ev.apply(op, l, r, x.Y); err != nil {
				return 0, err
			}
		}
		return v, ev.set(lv, v)
	case syntax.TernQuest:
		c, err := ev.eval(x.X)
		if err != nil {
			return 0, err
		}
		alt, ok := x.Y.(*syntax.BinaryArithm)
		if !ok || alt.Op != syntax.TernColon {
			return 0, ev.fail("`:' expected for conditional expression", x.Y)
		}
		if c != 0 {
			return ev.eval(alt.X)
		}
		return ev.eval(alt.Y)
	case syntax.AndArit, syntax.OrArit:
		l, err := ev.eval(x.X)
		if err != nil {
			return 0, err
		}
		if x.Op == syntax.AndArit && l == 0 {
			return 0, nil
		}
		if x.Op == syntax.OrArit && l != 0 {
			return 1, nil
		}
		r, err := ev.eval(x.Y)
		if err != nil {
			return 0, err
		}
		return b2i64(r != 0), nil
	case syntax.Comma:
		if _, err := ev.eval(x.X); err != nil {
			return 0, err
		}
		return ev.eval(x.Y)
	}
	l, err := ev.eval(x.X)
	if err != nil {
		return 0, err
	}
	r, err := ev.eval(x.Y)
	if err != nil {
		return 0, err
	}
	return ev.apply(x.Op, l, r, x.Y)
}

func (ev *arithEval) apply(op syntax.BinAritOperator, l, r int64, right syntax.Node) (int64, error) {
	switch op {
	case syntax.Add:
		return l + r, nil
	case syntax.Sub:
		return l - r, nil
	case syntax.Mul:
		return l * r, nil
	case syntax.Quo, syntax.Rem:
		if r == 0 {
			return 0, ev.fail("division by 0", right)
		}
		if l == -1<<63 && r == -1 {
			if op == syntax.Quo {
				return l, nil
			}
			return 0, nil
		}
		if op == syntax.Quo {
			return l / r, nil
		}
		return l % r, nil
	case syntax.Pow:
		if r < 0 {
			return 0, ev.fail("exponent less than 0", right)
		}
		v := int64(1)
		for ; r > 0; r-- {
			v *= l
		}
		return v, nil
	case syntax.Eql:
		return b2i64(l == r), nil
	case syntax.Neq:
		return b2i64(l != r), nil
	case syntax.Lss:
		return b2i64(l < r), nil
	case syntax.Gtr:
		return b2i64(l > r), nil
	case syntax.Leq:
		return b2i64(l <= r), nil
	case syntax.Geq:
		return b2i64(l >= r), nil
	case syntax.And:
		return l & r, nil
	case syntax.Or:
		return l | r, nil
	case syntax.Xor:
		return l ^ r, nil
	case syntax.Shl:
		return l << uint64(r&63), nil
	case syntax.Shr:
		return l >> uint64(r&63), nil
	case syntax.XorBool:
		return b2i64((l != 0) != (r != 0)), nil
	}
	return 0, ev.fail("syntax error: invalid arithmetic operator", right)
}

// assocView rewrites ${m[@]} and ${m[*]} (with any operator) of an
// associative array to the same expansion of a temporary indexed array
// of its values in key order: mvdan.cc/sh/expand treats such an array as
// one string there.
func (s *Shell) assocView(p *syntax.ParamExp) *syntax.ParamExp {
	if p.Param == nil || p.Excl || p.Index == nil {
		return nil
	}
	idx, ok := p.Index.(*syntax.Word)
	if !ok || (idx.Lit() != "@" && idx.Lit() != "*") {
		return nil
	}
	v := s.env.Get(p.Param.Value)
	if v.Kind != expand.Associative {
		return nil
	}
	keys := s.assocOrder(p.Param.Value, v.Map)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = v.Map[k]
	}
	s.assocTmp++
	name := "__secexec_assoc_" + strconv.Itoa(s.assocTmp)
	s.env.global().vars[name] = expand.Variable{Set: true, Kind: expand.Indexed, List: vals}
	s.assocTemps = append(s.assocTemps, name)
	cp := *p
	cp.Param = &syntax.Lit{Value: name}
	return &cp
}

// checkUnsetElement applies set -u to ${a[i]}, which mvdan.cc/sh/expand
// lets through: an element that does not exist is an unbound variable.
func (s *Shell) checkUnsetElement(p *syntax.ParamExp) error {
	if !s.opts.nounset || p.Param == nil || p.Index == nil || p.Excl || p.Names != 0 {
		return nil
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull,
			syntax.AssignUnset, syntax.AssignUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			return nil
		}
	}
	if w, ok := p.Index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
		return nil
	}
	v := s.env.Get(p.Param.Value)
	present := false
	switch v.Kind {
	case expand.Associative:
		k, err := s.assocKey(p.Index)
		if err != nil {
			return err
		}
		_, present = v.Map[k]
	case expand.Indexed:
		i, err := s.arith(p.Index)
		if err != nil {
			return err
		}
		if i < 0 {
			i += nextIndex(v)
		}
		if v.Indexes == nil {
			present = i >= 0 && i < len(v.List)
		} else {
			present = slices.Contains(v.Indexes, i)
		}
	default:
		i, err := s.arith(p.Index)
		if err != nil {
			return err
		}
		present = v.IsSet() && i == 0
	}
	if present {
		return nil
	}
	return &unboundError{name: p.Param.Value + "[" + printNode(p.Index) + "]"}
}

// linenoVar is the name $LINENO is rewritten to, answered by env.special.
const linenoVar = "__secexec_LINENO"

// dropAssocViews removes the temporaries of assocView.
func (s *Shell) dropAssocViews() {
	g := s.env.global()
	for _, n := range s.assocTemps {
		delete(g.vars, n)
	}
	s.assocTemps = s.assocTemps[:0]
}

func (s *Shell) substArithWord(w *syntax.Word) (*syntax.Word, bool, error) {
	if w == nil {
		return nil, false, nil
	}
	parts, changed, err := s.substArithParts(w.Parts)
	if err != nil || !changed {
		return w, false, err
	}
	return &syntax.Word{Parts: parts}, true, nil
}

func (s *Shell) substArithParts(parts []syntax.WordPart) ([]syntax.WordPart, bool, error) {
	var out []syntax.WordPart
	for i, p := range parts {
		var np syntax.WordPart
		switch p := p.(type) {
		case *syntax.ArithmExp:
			v, err := s.arith(p.X)
			if err != nil {
				return nil, false, err
			}
			// Quoted, so that a negative number is not a pattern or
			// split; its digits need neither.
			np = &syntax.SglQuoted{Value: strconv.Itoa(v)}
		case *syntax.ParamExp:
			if err := s.checkUnsetElement(p); err != nil {
				return nil, false, err
			}
			op, err := s.paramOp(p)
			if err != nil {
				return nil, false, err
			}
			if op != nil {
				np = op
			} else if v := s.assocView(p); v != nil {
				np = v
			} else if p.Param != nil && p.Param.Value == "LINENO" {
				// expand answers $LINENO from the word's own position,
				// which in an eval or a trap is a line of that string.
				cp := *p
				cp.Param = &syntax.Lit{Value: linenoVar}
				np = &cp
			}
		case *syntax.DblQuoted:
			inner, changed, err := s.substArithParts(p.Parts)
			if err != nil {
				return nil, false, err
			}
			if changed {
				np = &syntax.DblQuoted{Parts: inner, Dollar: p.Dollar}
			}
		}
		if np != nil && out == nil {
			out = append(make([]syntax.WordPart, 0, len(parts)), parts[:i]...)
		}
		if out != nil {
			if np == nil {
				np = p
			}
			out = append(out, np)
		}
	}
	if out == nil {
		return parts, false, nil
	}
	return out, true, nil
}
