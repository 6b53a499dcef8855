package shell

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

func regexpMatch(re string, s string) bool {
	r, err := regexp.Compile(re)
	if err != nil {
		return false
	}
	return r.MatchString(s)
}

// test evaluates a [[ ]] expression.
func (s *Shell) test(x syntax.TestExpr) (bool, error) {
	switch x := x.(type) {
	case *syntax.Word:
		v, err := s.literal(x)
		s.traceTest(v)
		return v != "", err
	case *syntax.ParenTest:
		return s.test(x.X)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsNot {
			neg := s.testNeg
			s.testNeg += "! "
			ok, err := s.test(x.X)
			s.testNeg = neg
			return !ok, err
		}
		w, ok := x.X.(*syntax.Word)
		if !ok {
			return false, errors.New("unexpected test operand")
		}
		v, err := s.literal(w)
		if err != nil {
			return false, err
		}
		s.traceTest(x.Op.String() + " " + v)
		return s.unaryTest(x.Op.String(), v), nil
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.AndTest, syntax.OrTest:
			// A negation applies to the whole list, not each test.
			neg := s.testNeg
			s.testNeg = ""
			defer func() { s.testNeg = neg }()
		}
		switch x.Op {
		case syntax.AndTest:
			ok, err := s.test(x.X)
			if err != nil || !ok {
				return false, err
			}
			return s.test(x.Y)
		case syntax.OrTest:
			ok, err := s.test(x.X)
			if err != nil || ok {
				return ok, err
			}
			return s.test(x.Y)
		}
		lw, _ := x.X.(*syntax.Word)
		rw, _ := x.Y.(*syntax.Word)
		l, err := s.literal(lw)
		if err != nil {
			return false, err
		}
		if s.opts.xtrace {
			r, _ := s.literal(rw)
			s.traceTest(l + " " + x.Op.String() + " " + r)
		}
		switch x.Op {
		case syntax.TsMatchShort, syntax.TsMatch, syntax.TsNoMatch:
			pat, err := expand.Pattern(s.ecfg(), rw)
			if err != nil {
				return false, err
			}
			m := s.match(pat, l)
			if x.Op == syntax.TsNoMatch {
				return !m, nil
			}
			return m, nil
		case syntax.TsReMatch:
			re, err := s.regexWord(rw)
			if err != nil {
				return false, err
			}
			r, err := regexp.Compile(re)
			if err != nil {
				return false, &exitStatusError{status: 2}
			}
			m := r.FindStringSubmatch(l)
			if m == nil {
				_ = s.env.Set("BASH_REMATCH", expand.Variable{Set: true, Kind: expand.Indexed, List: []string{}})
				return false, nil
			}
			_ = s.env.Set("BASH_REMATCH", expand.Variable{Set: true, Kind: expand.Indexed, List: m})
			return true, nil
		}
		r, err := s.literal(rw)
		if err != nil {
			return false, err
		}
		return s.binaryTest(x.Op.String(), l, r)
	}
	return false, fmt.Errorf("unsupported test %T", x)
}

// regexWord expands the right side of =~: quoted parts match literally.
func (s *Shell) regexWord(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, p := range w.Parts {
		one := &syntax.Word{Parts: []syntax.WordPart{p}}
		v, err := s.literal(one)
		if err != nil {
			return "", err
		}
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			b.WriteString(regexp.QuoteMeta(v))
		default:
			b.WriteString(v)
		}
	}
	return b.String(), nil
}

func (s *Shell) unaryTest(op, v string) bool {
	st := func(follow bool) (os.FileInfo, bool) {
		if v == "" {
			return nil, false
		}
		var fi os.FileInfo
		var err error
		if follow {
			fi, err = os.Stat(s.abs(v))
		} else {
			fi, err = os.Lstat(s.abs(v))
		}
		return fi, err == nil
	}
	switch op {
	case "-z":
		return v == ""
	case "-n":
		return v != ""
	case "-e", "-a":
		_, ok := st(true)
		return ok
	case "-f":
		fi, ok := st(true)
		return ok && fi.Mode().IsRegular()
	case "-d":
		fi, ok := st(true)
		return ok && fi.IsDir()
	case "-L", "-h":
		fi, ok := st(false)
		return ok && fi.Mode()&os.ModeSymlink != 0
	case "-s":
		fi, ok := st(true)
		return ok && fi.Size() > 0
	case "-r", "-w":
		_, ok := st(true)
		return ok
	case "-x":
		fi, ok := st(true)
		return ok && (fi.IsDir() || fi.Mode()&0o111 != 0)
	case "-p":
		fi, ok := st(true)
		return ok && fi.Mode()&os.ModeNamedPipe != 0
	case "-S":
		fi, ok := st(true)
		return ok && fi.Mode()&os.ModeSocket != 0
	case "-b":
		fi, ok := st(true)
		return ok && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0
	case "-c":
		fi, ok := st(true)
		return ok && fi.Mode()&os.ModeCharDevice != 0
	case "-g":
		fi, ok := st(true)
		return ok && fi.Mode()&os.ModeSetgid != 0
	case "-u":
		fi, ok := st(true)
		return ok && fi.Mode()&os.ModeSetuid != 0
	case "-k":
		fi, ok := st(true)
		return ok && fi.Mode()&os.ModeSticky != 0
	case "-O", "-G":
		_, ok := st(true)
		return ok
	case "-t":
		return false
	case "-v":
		name, idx, hasIdx := strings.Cut(v, "[")
		vr := s.env.Get(name)
		if !hasIdx {
			return vr.IsSet()
		}
		idx = strings.TrimSuffix(idx, "]")
		if vr.Kind == expand.Associative {
			_, ok := vr.Map[idx]
			return ok
		}
		i, err := s.arithString(idx)
		if err != nil {
			return false
		}
		if vr.Indexes == nil {
			return i >= 0 && i < len(vr.List)
		}
		for _, x := range vr.Indexes {
			if x == i {
				return true
			}
		}
		return false
	case "-o":
		p := s.optPtr(v)
		return p != nil && *p
	}
	return false
}

func (s *Shell) binaryTest(op, l, r string) (bool, error) {
	switch op {
	case "=", "==":
		return l == r, nil
	case "!=":
		return l != r, nil
	case "<":
		return l < r, nil
	case ">":
		return l > r, nil
	case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
		a, err := s.testInt(l)
		if err != nil {
			return false, err
		}
		b, err := s.testInt(r)
		if err != nil {
			return false, err
		}
		switch op {
		case "-eq":
			return a == b, nil
		case "-ne":
			return a != b, nil
		case "-lt":
			return a < b, nil
		case "-le":
			return a <= b, nil
		case "-gt":
			return a > b, nil
		}
		return a >= b, nil
	case "-nt", "-ot":
		a, errA := os.Stat(s.abs(l))
		b, errB := os.Stat(s.abs(r))
		if op == "-nt" {
			return errA == nil && (errB != nil || a.ModTime().After(b.ModTime())), nil
		}
		return errB == nil && (errA != nil || a.ModTime().Before(b.ModTime())), nil
	case "-ef":
		a, errA := os.Stat(s.abs(l))
		b, errB := os.Stat(s.abs(r))
		return errA == nil && errB == nil && os.SameFile(a, b), nil
	}
	return false, fmt.Errorf("%s: binary operator expected", op)
}

// testInt evaluates an integer operand of [[ ]] (an arithmetic
// expression there).
func (s *Shell) testInt(v string) (int, error) {
	return s.arithString(v)
}

// testB is the test and [ builtins (POSIX rules by argument count).
func (s *Shell) testB(args []string) int {
	name := args[0]
	args = args[1:]
	if name == "[" {
		if len(args) == 0 || args[len(args)-1] != "]" {
			s.berr("[", "missing `]'")
			return 2
		}
		args = args[:len(args)-1]
	}
	t := &testParser{s: s, args: args, name: name}
	ok, err := t.expr()
	if err == nil && t.pos < len(args) {
		err = fmt.Errorf("%s: unexpected argument", args[t.pos])
		if t.pos > 0 {
			err = fmt.Errorf("too many arguments")
		}
	}
	if err != nil {
		s.berr(name, "%s", err)
		return 2
	}
	return b2i(!ok)
}

type testParser struct {
	s    *Shell
	args []string
	pos  int
	name string
}

func (t *testParser) peek() (string, bool) {
	if t.pos < len(t.args) {
		return t.args[t.pos], true
	}
	return "", false
}

func (t *testParser) expr() (bool, error) {
	// POSIX: decide by count for up to 4 arguments.
	n := len(t.args) - t.pos
	switch n {
	case 0:
		return false, nil
	case 1:
		t.pos++
		return t.args[t.pos-1] != "", nil
	case 2:
		if t.args[t.pos] == "!" {
			t.pos += 2
			return t.args[t.pos-1] == "", nil
		}
		if isUnaryOp(t.args[t.pos]) {
			op, v := t.args[t.pos], t.args[t.pos+1]
			t.pos += 2
			return t.s.unaryTest(op, v), nil
		}
		return false, fmt.Errorf("%s: unary operator expected", t.args[t.pos])
	case 3:
		if isBinaryOp(t.args[t.pos+1]) {
			l, op, r := t.args[t.pos], t.args[t.pos+1], t.args[t.pos+2]
			t.pos += 3
			return t.binary(l, op, r)
		}
		if t.args[t.pos] == "!" {
			t.pos++
			ok, err := t.expr()
			return !ok, err
		}
		if t.args[t.pos] == "(" && t.args[t.pos+2] == ")" {
			t.pos += 3
			return t.args[t.pos-2] != "", nil
		}
	}
	return t.or()
}

func (t *testParser) binary(l, op, r string) (bool, error) {
	switch op {
	case "-a":
		return l != "" && r != "", nil
	case "-o":
		return l != "" || r != "", nil
	case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
		if _, err := strconv.Atoi(strings.TrimSpace(l)); err != nil {
			return false, fmt.Errorf("%s: integer expression expected", l)
		}
		if _, err := strconv.Atoi(strings.TrimSpace(r)); err != nil {
			return false, fmt.Errorf("%s: integer expression expected", r)
		}
	}
	return t.s.binaryTest(op, strings.TrimSpace(l), strings.TrimSpace(r))
}

func (t *testParser) or() (bool, error) {
	ok, err := t.and()
	for err == nil {
		a, more := t.peek()
		if !more || a != "-o" {
			break
		}
		t.pos++
		r, e := t.and()
		ok, err = ok || r, e
	}
	return ok, err
}

func (t *testParser) and() (bool, error) {
	ok, err := t.not()
	for err == nil {
		a, more := t.peek()
		if !more || a != "-a" {
			break
		}
		t.pos++
		r, e := t.not()
		ok, err = ok && r, e
	}
	return ok, err
}

func (t *testParser) not() (bool, error) {
	if a, ok := t.peek(); ok && a == "!" {
		t.pos++
		v, err := t.not()
		return !v, err
	}
	return t.primary()
}

func (t *testParser) primary() (bool, error) {
	a, ok := t.peek()
	if !ok {
		return false, fmt.Errorf("argument expected")
	}
	if a == "(" {
		t.pos++
		v, err := t.or()
		if err != nil {
			return false, err
		}
		if c, ok := t.peek(); !ok || c != ")" {
			return false, fmt.Errorf("`)' expected")
		}
		t.pos++
		return v, nil
	}
	if isUnaryOp(a) && t.pos+1 < len(t.args) {
		t.pos += 2
		return t.s.unaryTest(a, t.args[t.pos-1]), nil
	}
	if t.pos+2 < len(t.args)+0 && t.pos+2 <= len(t.args)-1 && isBinaryOp(t.args[t.pos+1]) {
		l, op, r := t.args[t.pos], t.args[t.pos+1], t.args[t.pos+2]
		t.pos += 3
		return t.binary(l, op, r)
	}
	t.pos++
	return a != "", nil
}

func isUnaryOp(a string) bool {
	switch a {
	case "-z", "-n", "-e", "-f", "-d", "-L", "-h", "-s", "-r", "-w", "-x", "-p", "-S", "-b", "-c", "-g", "-u", "-k", "-O", "-G", "-t", "-v", "-a", "-o":
		return true
	}
	return false
}

func isBinaryOp(a string) bool {
	switch a {
	case "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "-a", "-o":
		return true
	}
	return false
}

var _ = time.Now

// traceTest traces one test of [[ ]] as bash does, operands expanded.
func (s *Shell) traceTest(text string) {
	if s.opts.xtrace {
		s.traceRaw("[[ " + s.testNeg + text + " ]]")
	}
}
