package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A printer of functions in bash's layout (declare -f, type): bash
// prints a function from its parse tree, one command a line, four spaces
// an indentation level, ";" after each command of a list but the last of
// a function, words as they were written. Constructs it does not know
// (here-documents, coprocesses...) make it give up, and the caller
// prints mvdan's way.

type funcPrinter struct {
	src    string // the text the function was defined in
	b      strings.Builder
	indent int
	ok     bool
}

// bashFuncText prints name's body as bash does, or reports false.
func bashFuncText(name string, body *syntax.Stmt, src string) (string, bool) {
	p := &funcPrinter{src: src, ok: true}
	p.b.WriteString(name + " () \n")
	blk, isBlock := body.Cmd.(*syntax.Block)
	if !isBlock || len(body.Redirs) > 0 || body.Negated || body.Background {
		return "", false
	}
	p.b.WriteString("{ ")
	p.indent++
	p.list(blk.Stmts, false)
	p.indent--
	p.b.WriteString("\n}")
	return p.b.String(), p.ok
}

func (p *funcPrinter) newline(s string) {
	p.b.WriteString("\n" + strings.Repeat("    ", p.indent) + s)
}

// semicolon ends a list as bash's semicolon() does: not after & or a
// newline.
func (p *funcPrinter) semicolon() {
	s := p.b.String()
	if strings.HasSuffix(s, "&") || strings.HasSuffix(s, "\n") {
		return
	}
	p.b.WriteString(";")
}

// list prints statements one a line; inline keeps the first on the
// current line (after "if ", "while ").
func (p *funcPrinter) list(stmts []*syntax.Stmt, inline bool) {
	for i, st := range stmts {
		switch {
		case i > 0 && strings.HasSuffix(p.b.String(), "&"):
			// After an asynchronous command bash goes on on its line.
			p.b.WriteString(" ")
		case i > 0:
			p.b.WriteString(";")
			p.newline("")
		case !inline:
			p.newline("")
		}
		p.stmt(st)
	}
}

func (p *funcPrinter) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if p.src != "" && start >= 0 && start <= end && end <= len(p.src) && n.Pos().IsValid() && n.End().IsValid() {
		return p.src[start:end]
	}
	return printNode(n)
}

func (p *funcPrinter) stmt(st *syntax.Stmt) {
	if st.Negated {
		p.b.WriteString("! ")
	}
	p.cmd(st.Cmd)
	for _, r := range st.Redirs {
		if r.Hdoc != nil {
			p.ok = false
			return
		}
		p.b.WriteString(" ")
		if r.N != nil {
			p.b.WriteString(r.N.Value)
		}
		op := r.Op.String()
		p.b.WriteString(op)
		if r.Op == syntax.DplIn || r.Op == syntax.DplOut {
			p.b.WriteString(p.text(r.Word))
		} else {
			p.b.WriteString(" " + p.text(r.Word))
		}
	}
	if st.Background {
		p.b.WriteString(" &")
	}
}

func (p *funcPrinter) words(ws []*syntax.Word) string {
	l := make([]string, len(ws))
	for i, w := range ws {
		l[i] = p.text(w)
	}
	return strings.Join(l, " ")
}

func (p *funcPrinter) cmd(c syntax.Command) {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		var parts []string
		for _, a := range c.Assigns {
			parts = append(parts, p.text(a))
		}
		if len(c.Args) > 0 {
			parts = append(parts, p.words(c.Args))
		}
		p.b.WriteString(strings.Join(parts, " "))
	case *syntax.DeclClause, *syntax.TestClause, *syntax.LetClause:
		p.b.WriteString(p.text(c))
	case *syntax.ArithmCmd:
		p.b.WriteString("(( " + strings.TrimSpace(p.text(c.X)) + " ))")
	case *syntax.BinaryCmd:
		p.stmt(c.X)
		p.b.WriteString(" " + c.Op.String() + " ")
		p.stmt(c.Y)
	case *syntax.Block:
		p.b.WriteString("{ ")
		p.indent++
		p.list(c.Stmts, false)
		p.indent--
		p.newline("}")
	case *syntax.Subshell:
		p.b.WriteString("( ")
		p.list(c.Stmts, true)
		p.b.WriteString(" )")
	case *syntax.IfClause:
		p.ifClause(c, "if ")
	case *syntax.WhileClause:
		kw := "while "
		if c.Until {
			kw = "until "
		}
		p.b.WriteString(kw)
		p.list(c.Cond, true)
		p.semicolon()
		p.b.WriteString(" do")
		p.indent++
		p.list(c.Do, false)
		p.semicolon()
		p.indent--
		p.newline("done")
	case *syntax.ForClause:
		wi, ok := c.Loop.(*syntax.WordIter)
		if !ok {
			p.ok = false
			return
		}
		p.b.WriteString("for " + wi.Name.Value)
		if wi.InPos.IsValid() {
			p.b.WriteString(" in " + p.words(wi.Items))
		} else {
			p.b.WriteString(` in "$@"`)
		}
		p.b.WriteString(";")
		p.newline("do")
		p.indent++
		p.list(c.Do, false)
		p.semicolon()
		p.indent--
		p.newline("done")
	case *syntax.CaseClause:
		p.b.WriteString("case " + p.text(c.Word) + " in ")
		p.indent++
		for _, it := range c.Items {
			pats := make([]string, len(it.Patterns))
			for i, w := range it.Patterns {
				pats[i] = p.text(w)
			}
			p.newline(strings.Join(pats, " | ") + ")")
			p.indent++
			p.list(it.Stmts, false)
			p.indent--
			p.newline(it.Op.String())
		}
		p.indent--
		p.newline("esac")
	default:
		p.ok = false
	}
}

func (p *funcPrinter) ifClause(c *syntax.IfClause, kw string) {
	p.b.WriteString(kw)
	p.list(c.Cond, true)
	p.semicolon()
	p.b.WriteString(" then")
	p.indent++
	p.list(c.Then, false)
	p.semicolon()
	p.indent--
	switch e := c.Else; {
	case e == nil:
	case len(e.Cond) > 0:
		// bash keeps no elif: it prints an if inside the else.
		p.newline("else")
		p.indent++
		p.newline("")
		p.ifClause(e, "if ")
		p.semicolon()
		p.indent--
	default:
		p.newline("else")
		p.indent++
		p.list(e.Then, false)
		p.semicolon()
		p.indent--
	}
	p.newline("fi")
}
