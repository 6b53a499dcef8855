package shell

import (
	"context"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// coproc runs a command asynchronously with two pipes to the shell:
// NAME[0] is a descriptor reading its output, NAME[1] one writing its
// input, NAME_PID its process (NAME is COPROC by default).
func (s *Shell) coproc(c *syntax.CoprocClause) {
	name := "COPROC"
	if c.Name != nil {
		name = c.Name.Lit()
	}
	inR, inW, err := s.sh.sys.Pipe(true)
	if err != nil {
		s.errf("pipe error: %v", errText(err))
		s.lastStatus = 1
		return
	}
	outR, outW, err := s.sh.sys.Pipe(true)
	if err != nil {
		inR.decRef()
		inW.decRef()
		s.errf("pipe error: %v", errText(err))
		s.lastStatus = 1
		return
	}
	// The coprocess's table is copied before the shell's ends are in
	// the shell's: it must not hold them, or it never sees its input end.
	sub := s.subshell()
	sub.quietSignals = true
	sub.fds.set(0, inR)
	sub.fds.set(1, outW)
	inR.decRef()
	outW.decRef()
	rfd := s.fds.freeHigh()
	s.fds.set(rfd, outR)
	outR.decRef()
	wfd := s.fds.freeHigh()
	s.fds.set(wfd, inW)
	inW.decRef()
	_ = s.env.Set(name, expand.Variable{Set: true, Kind: expand.Indexed, List: []string{strconv.Itoa(rfd), strconv.Itoa(wfd)}})
	_ = s.env.Set(name+"_PID", str(strconv.Itoa(sub.bashpid)))

	j := s.sh.addJob(sub.bashpid, "coproc "+name+" "+s.source(c.Stmt))
	sub.job = j
	sub.ctx, sub.cancel = context.WithCancel(s.ctx)
	j.cancel = sub.cancel
	done := s.goSub(sub, func(sub *Shell) { sub.stmt(c.Stmt) })
	go func() { j.finish(<-done) }()
	s.lastBg = sub.bashpid
	s.lastStatus = 0
}

// varRedirect is {name}>file and the like: the shell picks a descriptor
// from 10 up and stores its number in name; {name}>&- closes the one
// name holds. Either lasts beyond the command, as in bash.
func (s *Shell) varRedirect(rd *syntax.Redirect, name string) bool {
	word := ""
	if rd.Word != nil {
		w, err := s.literal(rd.Word)
		if err != nil {
			s.expandError(err)
			return false
		}
		word = w
	}
	if (rd.Op == syntax.DplIn || rd.Op == syntax.DplOut) && word == "-" {
		v, err := s.varText(name)
		n, aerr := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || aerr != nil || n < 0 {
			s.errf("%s: ambiguous redirect", name)
			return false
		}
		if s.fds.get(n) == nil {
			s.errf("%d: Bad file descriptor", n)
			return false
		}
		s.fds.set(n, nil)
		return true
	}
	n := 10
	for s.fds.get(n) != nil {
		n++
	}
	cp := *rd
	cp.N = &syntax.Lit{Value: strconv.Itoa(n)}
	var sv []saved
	if !s.redirect(&cp, &sv) {
		s.fds.restore(sv)
		return false
	}
	for _, x := range sv { // permanent: nothing to restore
		if x.o != nil {
			x.o.decRef()
		}
	}
	p := parseBash(name + "=" + strconv.Itoa(n))
	if p.err != nil || len(p.stmts) != 1 {
		s.errf("%s: invalid variable name for redirection", name)
		return false
	}
	ce, ok := p.stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) != 0 || len(ce.Assigns) != 1 {
		s.errf("%s: invalid variable name for redirection", name)
		return false
	}
	if err := s.assignIn(ce.Assigns[0], false); err != nil {
		s.assignError(err)
		return false
	}
	return true
}

// varText is the value of name, which may be subscripted (a[1]).
func (s *Shell) varText(name string) (string, error) {
	w, err := newParser().Document(strings.NewReader("${" + name + "}"))
	if err != nil {
		return "", err
	}
	return s.literal(w)
}
