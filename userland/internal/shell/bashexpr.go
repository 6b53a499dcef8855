package shell

import "strings"

// A syntax checker for arithmetic expressions that follows bash's
// expr.c, for the expressions mvdan's parser refuses: bash parses
// $((...)) only when it runs it, and words the error by the token it
// stopped at ("1 +* 2: syntax error: operand expected (error token is
// "* 2")"). It only checks; evaluation stays with arith.go.

// exprChecker is a recursive-descent reader of bash's grammar.
type exprChecker struct {
	s       string
	tp      int    // where the next token starts
	lasttp  int    // where the current token starts, as bash's lasttp
	tok     string // current token: "" at the end, "num", "id", or the operator
	lastTok string
	depth   int
	err     *arithError
}

// bashArithSyntax returns bash's error for expr, or nil if bash's grammar
// takes it.
func bashArithSyntax(expr string) *arithError {
	expr = strings.TrimLeft(expr, " \t\n")
	c := &exprChecker{s: expr}
	c.next()
	c.comma()
	if c.err == nil && c.tok != "" {
		c.fail("syntax error in expression")
	}
	return c.err
}

func (c *exprChecker) fail(msg string) {
	if c.err == nil {
		c.err = &arithError{expr: c.s, msg: msg, token: c.s[min(c.lasttp, len(c.s)):]}
	}
}

// arithOps are bash's operators, longest first.
var arithOps = []string{"<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~", "=", "?", ":", ",", "(", ")"}

func (c *exprChecker) next() {
	if c.err != nil {
		c.tok = ""
		return
	}
	s := c.s
	i := c.tp
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	c.lastTok = c.tok
	if i >= len(s) {
		c.tok, c.tp = "", i
		return
	}
	c.lasttp = i
	switch ch := s[i]; {
	case isNameByte(ch, true):
		j := i
		for j < len(s) && isNameByte(s[j], false) {
			j++
		}
		if j < len(s) && s[j] == '[' {
			// A subscript runs to its bracket.
			depth := 0
			for ; j < len(s); j++ {
				if s[j] == '[' {
					depth++
				} else if s[j] == ']' {
					depth--
					if depth == 0 {
						j++
						break
					}
				}
			}
		}
		c.tok, c.tp = "id", j
	case ch >= '0' && ch <= '9':
		j := i
		for j < len(s) && (isNameByte(s[j], false) || s[j] == '#' || s[j] == '@') {
			j++
		}
		c.tok, c.tp = "num", j
	default:
		for _, op := range arithOps {
			if strings.HasPrefix(s[i:], op) {
				c.tok, c.tp = op, i+len(op)
				return
			}
		}
		c.tok, c.tp = "?bad", i+1
		c.fail("syntax error: invalid arithmetic operator")
	}
}

func (c *exprChecker) comma() {
	c.assign()
	for c.err == nil && c.tok == "," {
		c.next()
		c.assign()
	}
}

func isAssignOp(t string) bool {
	switch t {
	case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=":
		return true
	}
	return false
}

func (c *exprChecker) assign() {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxScanDepth {
		c.fail("expression recursion level exceeded")
		return
	}
	c.cond()
	if c.err == nil && isAssignOp(c.tok) {
		if c.lastTok != "id" {
			c.fail("attempted assignment to non-variable")
			return
		}
		c.next()
		c.assign()
	}
}

func (c *exprChecker) cond() {
	c.binary(0)
	if c.err != nil || c.tok != "?" {
		return
	}
	c.next()
	if c.tok == "" || c.tok == ":" {
		c.fail("expression expected")
		return
	}
	c.comma()
	if c.err != nil {
		return
	}
	if c.tok != ":" {
		c.fail("`:' expected for conditional expression")
		return
	}
	c.next()
	if c.tok == "" {
		c.fail("expression expected")
		return
	}
	c.cond()
}

// binaryLevels are bash's binary operators from the loosest binding.
var binaryLevels = [][]string{{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"},
	{"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}}

func (c *exprChecker) binary(level int) {
	if level == len(binaryLevels) {
		c.power()
		return
	}
	c.binary(level + 1)
	for c.err == nil && contains(binaryLevels[level], c.tok) {
		c.next()
		c.binary(level + 1)
	}
}

func contains(l []string, t string) bool {
	for _, x := range l {
		if x == t {
			return true
		}
	}
	return false
}

func (c *exprChecker) power() {
	c.unary()
	for c.err == nil && c.tok == "**" {
		c.next()
		c.unary()
	}
}

func (c *exprChecker) unary() {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxScanDepth {
		c.fail("expression recursion level exceeded")
		return
	}
	switch c.tok {
	case "!", "~", "-", "+":
		c.next()
		c.unary()
		return
	}
	c.operand()
}

func (c *exprChecker) operand() {
	switch c.tok {
	case "++", "--":
		c.next()
		if c.tok != "id" {
			c.fail("identifier expected after pre-increment or pre-decrement")
			return
		}
		c.next()
	case "(":
		c.next()
		c.comma()
		if c.err != nil {
			return
		}
		if c.tok != ")" {
			c.fail("missing `)'")
			return
		}
		c.next()
	case "num":
		c.next()
	case "id":
		c.next()
		if c.tok == "++" || c.tok == "--" {
			c.next()
		}
	default:
		c.fail("syntax error: operand expected")
	}
}
