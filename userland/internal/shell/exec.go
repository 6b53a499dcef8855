package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// stopped reports whether control flow leaves the current list.
func (s *Shell) stopped() bool {
	return s.exiting || s.aborting || s.returning || s.breakN > 0 || s.contN > 0 || s.ctx.Err() != nil
}

func (s *Shell) stmts(list []*syntax.Stmt) {
	for _, st := range list {
		if s.stopped() {
			return
		}
		s.stmt(st)
	}
}

func (s *Shell) setLine(p syntax.Pos) {
	if p.IsValid() && !s.inTrap {
		s.line = p.Line() + s.lineBase
	}
}

// stmt runs one statement: background, negation, redirections, and the
// errexit and ERR-trap checks that follow a failure.
func (s *Shell) stmt(st *syntax.Stmt) {
	// Process substitutions opened while running st close with it.
	defer s.closeProcSubsts(len(s.procSubsts))
	s.setLine(st.Pos())
	if _, ok := st.Cmd.(*syntax.CallExpr); ok && !s.inTrap {
		s.curCmd = st
	}
	if st.Background {
		s.background(st)
		return
	}
	if st.Negated {
		s.noErrExit++
	}
	s.stmtNoBg(st)
	if bc, ok := st.Cmd.(*syntax.BinaryCmd); !ok || (bc.Op != syntax.Pipe && bc.Op != syntax.PipeAll) {
		if _, compound := st.Cmd.(*syntax.CallExpr); compound || st.Cmd == nil {
			s.pipeStatus = []int{s.lastStatus}
		}
	}
	if st.Negated {
		s.noErrExit--
		if s.lastStatus == 0 {
			s.lastStatus = 1
		} else {
			s.lastStatus = 0
		}
		return
	}
	if s.lastStatus != 0 && s.noErrExit == 0 && !s.exiting && !s.returning && !s.arithAbort && countsForErrexit(st.Cmd) {
		s.failed()
	}
}

// failed runs the ERR trap and applies errexit after a command failed
// where bash applies them.
func (s *Shell) failed() {
	if cmd, ok := s.traps["ERR"]; ok && !s.inTrap && cmd != "" && (len(s.funcStack) == 0 || s.opts.errtrace) {
		s.runTrap(cmd)
	}
	if s.opts.errexit && !s.exiting {
		s.exit(s.lastStatus)
	}
}

// runTrap runs a trap's command with $? and LINENO of the moment it
// fired; $? is restored afterwards unless the trap exits.
func (s *Shell) runTrap(cmd string) {
	status, line := s.lastStatus, s.line
	s.inTrap = true
	s.evalString(cmd, "trap")
	s.inTrap = false
	s.line = line
	if !s.exiting {
		s.lastStatus = status
	}
}

// countsForErrexit: compound commands report failures of their own
// statements; && and || lists only through their last command.
func countsForErrexit(c syntax.Command) bool {
	switch c := c.(type) {
	case *syntax.Block, *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl:
		return false
	case *syntax.BinaryCmd:
		return c.Op == syntax.Pipe || c.Op == syntax.PipeAll
	}
	return true
}

// exit ends the shell (or subshell) with status.
func (s *Shell) exit(status int) {
	s.exiting = true
	s.exitCode = status
	s.lastStatus = status
}

func (s *Shell) stmtNoBg(st *syntax.Stmt) {
	if len(st.Redirs) == 0 {
		s.cmd(st.Cmd)
		return
	}
	// exec with only redirections makes them permanent.
	if ce, ok := st.Cmd.(*syntax.CallExpr); ok && len(ce.Assigns) == 0 && len(ce.Args) == 1 && ce.Args[0].Lit() == "exec" {
		if sv, ok := s.redirects(st.Redirs); ok {
			s.lastStatus = 0
			// Nothing is restored: drop what the redirections
			// replaced, or a pipe they replaced stays open (a reader
			// of exec > >(tee log) would never see its end).
			for _, x := range sv {
				if x.o != nil {
					x.o.decRef()
				}
			}
		}
		return
	}
	if ce, ok := st.Cmd.(*syntax.CallExpr); ok && len(ce.Args) == 0 && len(ce.Assigns) > 0 {
		// Assignments alone: expanded and made before the redirections,
		// which then only open (or fail).
		s.call(ce)
		status := s.lastStatus
		restore, ok := s.redirects(st.Redirs)
		s.fds.restore(restore)
		if ok {
			s.lastStatus = status
		}
		return
	}
	if ce, ok := st.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
		// bash expands a simple command's words before it performs its
		// redirections: echo "$(cmd)" 2>/dev/null shows cmd's errors,
		// and an expansion error reaches the shell's stderr.
		s.substStatus = nil
		from := len(s.procSubsts)
		defer s.closeProcSubsts(from)
		args, err := s.fields(ce.Args...)
		if err != nil {
			s.expandError(err)
			return
		}
		restore, ok := s.redirects(st.Redirs)
		if ok {
			s.callArgs(ce, args)
		}
		s.fds.restore(restore)
		return
	}
	restore, ok := s.redirects(st.Redirs)
	if ok {
		s.cmd(st.Cmd)
	}
	s.fds.restore(restore)
}

func (s *Shell) cmd(c syntax.Command) {
	if c == nil {
		// A statement of only redirections.
		s.lastStatus = 0
		return
	}
	switch c := c.(type) {
	case *syntax.CallExpr:
		s.call(c)
	case *syntax.Block:
		s.stmts(c.Stmts)
	case *syntax.Subshell:
		sub := s.subshell()
		sub.stmts(c.Stmts)
		s.lastStatus = sub.finish()
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt:
			s.noErrExit++
			s.stmt(c.X)
			s.noErrExit--
			if s.stopped() {
				return
			}
			if (s.lastStatus == 0) == (c.Op == syntax.AndStmt) {
				s.stmt(c.Y)
			}
		default:
			s.pipeline(c)
		}
	case *syntax.IfClause:
		s.ifClause(c)
	case *syntax.WhileClause:
		s.whileClause(c)
	case *syntax.ForClause:
		s.forClause(c)
	case *syntax.CaseClause:
		s.caseClause(c)
	case *syntax.FuncDecl:
		s.funcs[c.Name.Value] = c.Body
		s.funcSrc[c.Name.Value] = s.src
		s.lastStatus = 0
	case *syntax.ArithmCmd:
		if s.opts.xtrace {
			s.traceRaw("((  " + s.srcText(c.X) + "  ))")
		}
		n, err := s.arith(c.X)
		if err != nil {
			s.exprError(err)
			return
		}
		s.lastStatus = b2i(n == 0)
	case *syntax.TestClause:
		ok, err := s.test(c.X)
		if err != nil {
			s.errf("%v", err)
			s.lastStatus = 2
			return
		}
		s.lastStatus = b2i(!ok)
	case *syntax.DeclClause:
		s.declClause(c)
	case *syntax.LetClause:
		var n int
		for _, x := range c.Exprs {
			var err error
			if n, err = s.arith(x); err != nil {
				s.exprError(err)
				return
			}
		}
		s.lastStatus = b2i(n == 0)
	case *syntax.TimeClause:
		start := time.Now()
		if c.Stmt != nil {
			s.stmt(c.Stmt)
		}
		el := time.Since(start)
		fmt.Fprintf(s.stderr(), "\nreal\t%s\nuser\t0m0.000s\nsys\t0m0.000s\n", fmtDuration(el))
	case *syntax.CoprocClause:
		s.coproc(c)
	default:
		s.errf("unsupported command %T", c)
		s.lastStatus = 2
	}
}

func fmtDuration(d time.Duration) string {
	m := int(d / time.Minute)
	sec := (d % time.Minute).Seconds()
	return fmt.Sprintf("%dm%.3fs", m, sec)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Shell) cond(list []*syntax.Stmt) bool {
	s.noErrExit++
	s.stmts(list)
	s.noErrExit--
	return s.lastStatus == 0
}

func (s *Shell) ifClause(c *syntax.IfClause) {
	for ; c != nil; c = c.Else {
		if c.Cond == nil { // else
			s.stmts(c.Then)
			return
		}
		if s.cond(c.Cond) {
			if s.stopped() {
				return
			}
			s.stmts(c.Then)
			return
		}
		if s.stopped() {
			return
		}
	}
	s.lastStatus = 0
}

// loopCtl handles break/continue after a loop body; it reports whether
// the loop ends.
func (s *Shell) loopCtl() bool {
	if s.breakN > 0 {
		s.breakN--
		return true
	}
	if s.contN > 0 {
		s.contN--
		if s.contN > 0 {
			return true
		}
	}
	return s.exiting || s.returning || s.ctx.Err() != nil
}

func (s *Shell) whileClause(c *syntax.WhileClause) {
	s.loopDepth++
	defer func() { s.loopDepth-- }()
	status := 0
	for {
		ok := s.cond(c.Cond)
		if s.stopped() {
			if s.loopCtl() {
				break
			}
			continue
		}
		if ok == c.Until {
			break
		}
		s.stmts(c.Do)
		status = s.lastStatus
		if s.stopped() && s.loopCtl() {
			break
		}
	}
	if !s.exiting && !s.returning {
		s.lastStatus = status
	}
}

func (s *Shell) forClause(c *syntax.ForClause) {
	s.loopDepth++
	defer func() { s.loopDepth-- }()
	status := 0
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		var items []string
		if l.InPos.IsValid() {
			var err error
			if items, err = s.fields(l.Items...); err != nil {
				s.expandError(err)
				return
			}
		} else {
			items = slices.Clone(s.frame.params)
		}
		header := ""
		if s.opts.xtrace {
			// bash traces the loop's header as written, each round.
			ws := make([]string, len(l.Items))
			for i, w := range l.Items {
				ws[i] = printNode(w)
			}
			header = "for " + l.Name.Value + " in " + strings.Join(ws, " ")
		}
		for _, it := range items {
			if header != "" {
				s.traceRaw(header)
			}
			if err := s.env.setStr(l.Name.Value, it); err != nil {
				s.errf("%v", err)
				s.lastStatus = 1
				return
			}
			s.stmts(c.Do)
			status = s.lastStatus
			if s.stopped() && s.loopCtl() {
				break
			}
		}
	case *syntax.CStyleLoop:
		if l.Init != nil {
			if _, err := s.arith(l.Init); err != nil {
				s.exprError(err)
				return
			}
		}
		for {
			if l.Cond != nil {
				n, err := s.arith(l.Cond)
				if err != nil {
					s.exprError(err)
					return
				}
				if n == 0 {
					break
				}
			}
			s.stmts(c.Do)
			status = s.lastStatus
			if s.stopped() && s.loopCtl() {
				break
			}
			if l.Post != nil {
				if _, err := s.arith(l.Post); err != nil {
					s.exprError(err)
					return
				}
			}
		}
	}
	if !s.exiting && !s.returning {
		s.lastStatus = status
	}
}

func (s *Shell) caseClause(c *syntax.CaseClause) {
	if s.opts.xtrace {
		s.traceRaw("case " + printNode(c.Word) + " in")
	}
	word, err := s.literal(c.Word)
	if err != nil {
		s.expandError(err)
		return
	}
	s.lastStatus = 0
	matched := false
	for i := 0; i < len(c.Items); i++ {
		ci := c.Items[i]
		if !matched {
			for _, p := range ci.Patterns {
				pat, err := expand.Pattern(s.ecfg(), p)
				if err != nil {
					s.expandError(err)
					return
				}
				if s.match(pat, word) {
					matched = true
					break
				}
			}
		}
		if !matched {
			continue
		}
		s.stmts(ci.Stmts)
		switch ci.Op {
		case syntax.Break:
			return
		case syntax.Fallthrough: // ;&
			continue
		case syntax.Resume: // ;;&
			matched = false
		}
		if s.stopped() {
			return
		}
	}
}

// subshell returns a copy of the environment that changes nothing of s.
func (s *Shell) subshell() *Shell {
	c := s.shallowSubshell()
	c.env.top = s.env.top.clone()
	c.funcs = maps.Clone(s.funcs)
	c.aliases = maps.Clone(s.aliases)
	c.shopt = maps.Clone(s.shopt)
	c.readonly = maps.Clone(s.readonly)
	c.intAttr = maps.Clone(s.intAttr)
	c.funcSrc = maps.Clone(s.funcSrc)
	c.caseAttr = maps.Clone(s.caseAttr)
	c.exportFuncs = maps.Clone(s.exportFuncs)
	c.disabled = maps.Clone(s.disabled)
	if !s.isSubshell || s.ownTraps {
		c.parentTraps = maps.Clone(s.traps)
	}
	if c.traps == nil {
		c.traps = map[string]string{}
	}
	c.frame = &frame{arg0: s.frame.arg0, params: slices.Clone(s.frame.params)}
	c.funcStack = slices.Clone(s.funcStack)
	c.callLines = slices.Clone(s.callLines)
	return c
}

// shallowSubshell is a subshell that shares s's variables, functions,
// options and positional parameters instead of copying them: enough for
// a command that reads them and changes none (see lightStage), and the
// start of every subshell. It has its own descriptors, status, PID and
// traps.
func (s *Shell) shallowSubshell() *Shell {
	c := *s
	c.env = &env{sh: &c, top: s.env.top}
	c.procSubsts = nil
	c.ownTraps = false
	c.parentTraps = s.parentTraps
	c.traps = nil
	for k, v := range s.traps {
		if v == "" { // ignored signals stay ignored
			if c.traps == nil {
				c.traps = map[string]string{}
			}
			c.traps[k] = v
		}
	}
	c.fds = s.fds.clone()
	c.isSubshell = true
	c.subshellLevel++
	c.bashpid = s.sh.newPID()
	c.exiting, c.returning, c.breakN, c.contN = false, false, 0, 0
	c.inTrap = false
	return &c
}

// simpleStage returns pipeline stage st's command when it is a simple
// command of plain words (no expansion, assignment or here-document)
// that names no function or alias, and the command's name.
func (s *Shell) simpleStage(st *syntax.Stmt) (*syntax.CallExpr, string, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Assigns) > 0 || st.Coprocess || st.Background {
		return nil, "", false
	}
	for _, w := range call.Args {
		if _, ok := plainWord(w); !ok {
			return nil, "", false
		}
	}
	for _, r := range st.Redirs {
		if r.Hdoc != nil || r.Word == nil || r.N != nil && !validFDNumber(r.N.Value) {
			return nil, "", false
		}
		if _, ok := plainWord(r.Word); !ok {
			return nil, "", false
		}
	}
	name := call.Args[0].Lit()
	if _, ok := s.funcs[name]; ok {
		return nil, "", false
	}
	if _, ok := s.aliases[name]; ok {
		return nil, "", false
	}
	return call, name, true
}

// lightStage reports whether pipeline stage st can run on a shallow
// subshell while the other stages run: a simple command (simpleStage)
// that runs a program or a builtin that only reads the shell's state.
// Copying the variable table and every map for it would cost more,
// compiled to WebAssembly, than the rest of `echo hello | wc`. It shares
// s's maps only while nothing writes them, so not when the last stage
// runs in s itself (lastpipe).
func (s *Shell) lightStage(st *syntax.Stmt) bool {
	call, name, ok := s.simpleStage(st)
	if !ok || s.shopt["lastpipe"] {
		return false
	}
	if builtins[name] == nil || s.disabled[name] {
		return true // a program
	}
	switch name {
	case "echo", "true", "false", ":", "pwd", "test", "[":
		return true
	case "printf":
		// printf -v assigns.
		return len(call.Args) < 2 || call.Args[1].Lit() != "-v"
	}
	return false
}

// pipeBuf is the least a pipe holds before a write blocks (PIPE_BUF).
const pipeBuf = 4096

// writesOnly reports whether pipeline stage st reads nothing and writes
// less than pipeBuf bytes, all to its standard output: the builtin echo
// of plain words (no escapes to expand), true, false or :. Into a new,
// empty pipe such a stage never blocks, whether or not its reader has
// started, so it can run to its end before the other stages start (on a
// shallow subshell: nothing runs alongside it).
func (s *Shell) writesOnly(st *syntax.Stmt) bool {
	call, name, ok := s.simpleStage(st)
	if !ok || len(st.Redirs) > 0 || builtins[name] == nil || s.disabled[name] {
		return false
	}
	switch name {
	case "true", "false", ":":
		return true
	case "echo":
		n := 0
		for _, w := range call.Args[1:] {
			n += len(w.Lit()) + 1
		}
		return n+1 < pipeBuf
	}
	return false
}

// validFDNumber reports whether n is a redirection's plain descriptor
// number ({var} names assign a variable).
func validFDNumber(n string) bool {
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return n != ""
}

func (sh *shared) newPID() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.fakePID++
	return sh.fakePID
}

// finish ends a subshell: its EXIT trap, its descriptors, its status.
func (s *Shell) finish() int {
	if !s.exiting {
		s.exitCode = s.lastStatus
	}
	s.runExitTrap()
	s.fds.closeAll()
	return s.exitCode
}

// goSub runs f on a subshell in a new goroutine and returns a channel
// with its status.
func (s *Shell) goSub(sub *Shell, f func(*Shell)) <-chan int {
	done := make(chan int, 1)
	s.sh.running.Add(1)
	go func() {
		defer s.sh.running.Add(-1)
		f(sub)
		done <- sub.finish()
	}()
	return done
}

// pipeline runs a | b | c: every stage in a subshell, concurrently.
func (s *Shell) pipeline(c *syntax.BinaryCmd) {
	var stages []*syntax.Stmt
	var all []bool // |& after stage i
	var flatten func(st *syntax.Stmt)
	flatten = func(st *syntax.Stmt) {
		if bc, ok := st.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) && !st.Negated && !st.Background && len(st.Redirs) == 0 {
			flatten(bc.X)
			all[len(all)-1] = bc.Op == syntax.PipeAll
			flatten(bc.Y)
			return
		}
		stages = append(stages, st)
		all = append(all, false)
	}
	flatten(c.X)
	all[len(all)-1] = c.Op == syntax.PipeAll
	flatten(c.Y)

	n := len(stages)
	subs := make([]*Shell, n)
	// Stages that run to their end before the others start (with |&
	// their trace output would share the pipe too).
	early := make([]bool, n)
	for i := range n - 1 {
		early[i] = !all[i] && s.writesOnly(stages[i])
	}
	for i := range subs {
		if early[i] || s.lightStage(stages[i]) {
			subs[i] = s.shallowSubshell()
		} else {
			subs[i] = s.subshell()
		}
		// bash reports a signal only for a pipeline's last command.
		subs[i].quietSignals = i < n-1
		subs[i].dropStdin = len(stages[i].Redirs) == 0 && s.runsOneProgram(stages[i])
	}
	for i := 0; i < n-1; i++ {
		// After an early stage the pipe holds all its writer will
		// write and then its end: no one waits on it, and blocking
		// ends spare the host calls that switch a child's end to
		// blocking mode and back.
		r, w, err := s.sh.sys.Pipe(!early[i])
		if err != nil {
			s.errf("pipe error: %v", errText(err))
			s.lastStatus = 1
			for _, sub := range subs {
				sub.fds.closeAll()
			}
			return
		}
		subs[i].fds.set(1, w)
		if all[i] {
			subs[i].fds.set(2, w)
		}
		subs[i+1].fds.set(0, r)
		r.decRef()
		w.decRef()
	}
	status := make([]int, n)
	chans := make([]<-chan int, n-1)
	for i := 0; i < n-1; i++ {
		st := stages[i]
		if early[i] {
			// Its output fits in the empty pipe: it runs to the end
			// now, without a goroutine, and the next stage starts
			// with its input waiting.
			subs[i].stmt(st)
			status[i] = subs[i].finish()
			continue
		}
		chans[i] = s.goSub(subs[i], func(sub *Shell) { sub.stmt(st) })
	}
	if s.shopt["lastpipe"] {
		// The last stage runs in this shell.
		last := subs[n-1]
		sv := s.fds.swap(0, last.fds.get(0))
		last.fds.closeAll()
		s.stmt(stages[n-1])
		s.fds.restore([]saved{sv})
		status[n-1] = s.lastStatus
	} else {
		last := subs[n-1]
		last.stmt(stages[n-1])
		status[n-1] = last.finish()
	}
	for i, ch := range chans {
		if ch != nil {
			status[i] = <-ch
		}
	}
	s.pipeStatus = status
	s.lastStatus = status[n-1]
	if s.opts.pipefail {
		for i := n - 1; i >= 0; i-- {
			if status[i] != 0 {
				s.lastStatus = status[i]
				break
			}
		}
	}
}

// background runs st as an asynchronous job.
func (s *Shell) background(st *syntax.Stmt) {
	sub := s.subshell()
	sub.quietSignals = true
	// An asynchronous command's stdin is /dev/null when job control is off.
	if o, err := s.sh.sys.Open(os.DevNull, os.O_RDONLY, 0); err == nil {
		if _, redirected := firstStdinRedirect(st); !redirected {
			sub.fds.set(0, o)
		}
		o.decRef()
	}
	cp := *st
	cp.Background = false
	j := s.sh.addJob(sub.bashpid, s.source(st))
	sub.job = j
	sub.ctx, sub.cancel = context.WithCancel(s.ctx)
	j.cancel = sub.cancel
	done := s.goSub(sub, func(sub *Shell) { sub.stmt(&cp) })
	go func() {
		j.finish(<-done)
	}()
	// bash forks: the job's program exists before the next command
	// runs (`sleep 9 & ps` lists the sleep). The job's goroutine gets
	// the one WebAssembly thread until it first blocks, which is after
	// its first spawn.
	runtime.Gosched()
	s.lastBg = sub.bashpid
	if s.runsOneProgram(&cp) {
		// bash's child execs the program: $! is the program's PID, which
		// ps, kill and wait know it by.
		j.mu.Lock()
		if len(j.kids) == 1 {
			j.pid = j.kids[0]
			s.lastBg = j.pid
		}
		j.mu.Unlock()
	}
	s.lastStatus = 0
}

// runsOneProgram reports whether st is a simple command that runs a
// program: no function, builtin or keyword, no pipeline or list.
func (s *Shell) runsOneProgram(st *syntax.Stmt) bool {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || st.Negated || st.Coprocess {
		return false
	}
	name := call.Args[0].Lit()
	if name == "" {
		return false
	}
	if _, ok := s.funcs[name]; ok {
		return false
	}
	if _, ok := s.aliases[name]; ok {
		return false
	}
	if b := builtins[name]; b != nil && !s.disabled[name] {
		return false
	}
	return true
}

func firstStdinRedirect(st *syntax.Stmt) (int, bool) {
	for _, r := range st.Redirs {
		if r.Op == syntax.RdrIn || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc || r.Op == syntax.DplIn {
			if r.N == nil || r.N.Value == "0" {
				return 0, true
			}
		}
	}
	return 0, false
}

// source prints a statement back as text (for jobs).
func (s *Shell) source(st *syntax.Stmt) string {
	var b bytes.Buffer
	_ = syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, st.Cmd)
	return b.String()
}

// ecfg is the expander's configuration for the shell's current state.
func (s *Shell) ecfg() *expand.Config {
	return &expand.Config{
		Env:       s.env,
		CmdSubst:  s.cmdSubst,
		ProcSubst: s.procSubst,
		ReadDir2:  s.readDir,
		GlobStar:  s.shopt["globstar"],
		DotGlob:   s.shopt["dotglob"],
		NullGlob:  s.shopt["nullglob"],
		NoUnset:   s.opts.nounset,
		ExtGlob:   true,
	}
}

func (s *Shell) readDir(path string) ([]fs.DirEntry, error) {
	if s.opts.noglob {
		return nil, fs.ErrNotExist
	}
	return os.ReadDir(path)
}

// fields expands words into fields, one word at a time so that the side
// effects of one ($((i++)), ${x:=v}) are seen by the next.
func (s *Shell) fields(words ...*syntax.Word) ([]string, error) {
	var cfg *expand.Config
	out := make([]string, 0, len(words))
	for _, w := range words {
		if lit, ok := plainWord(w); ok {
			// Most words are plain text; the expander's set-up costs
			// more than the whole command in WebAssembly.
			out = append(out, lit)
			continue
		}
		if cfg == nil {
			cfg = s.ecfg()
			if s.opts.noglob {
				cfg.ReadDir2 = nil
			}
		}
		if !s.opts.posix {
			w = s.tildeAfterAssign(w)
		}
		w, _, err := s.substArithWord(w)
		if err != nil {
			return nil, err
		}
		failGlob := s.shopt["failglob"] && cfg.ReadDir2 != nil && hasGlob(w)
		if failGlob {
			cfg.NullGlob = true
		}
		f, err := expand.Fields(cfg, w)
		cfg.NullGlob = s.shopt["nullglob"]
		s.dropAssocViews()
		if err != nil {
			return nil, err
		}
		if failGlob && len(f) == 0 {
			// shopt -s failglob: a pattern that matches nothing fails
			// the command.
			return nil, &noMatch{printNode(w)}
		}
		out = append(out, f...)
	}
	return out, nil
}

// plainWord returns w's text when expanding it can only give that text
// as one field: a single literal with no character that quoting,
// globbing, brace or tilde expansion would act on.
func plainWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || lit.Value == "" {
		return "", false
	}
	for i := 0; i < len(lit.Value); i++ {
		switch c := lit.Value[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == '/' || c == ',' || c == ':' || c == '=' || c == '%' || c == '+' || c == '@':
		default:
			return "", false
		}
	}
	return lit.Value, true
}

func (s *Shell) literal(w *syntax.Word) (string, error) {
	if w == nil {
		return "", nil
	}
	w, _, err := s.substArithWord(w)
	if err != nil {
		return "", err
	}
	str, err := expand.Literal(s.ecfg(), w)
	s.dropAssocViews()
	return str, err
}

// expandError reports a failed expansion as bash does: a fatal error in
// a non-interactive shell for unset variables, status 1 otherwise.
func (s *Shell) expandError(err error) {
	var ue expand.UnsetParameterError
	if errors.As(err, &ue) {
		name := paramName(ue.Node)
		if name != "" && (name[0] >= '0' && name[0] <= '9' || name == "@" || name == "*") {
			name = "$" + name
		}
		switch {
		case ue.Message == "unbound variable" || strings.HasSuffix(ue.Message, "unbound variable"):
			s.errf("%s: unbound variable", name)
		case ue.Message == "" && ue.Node.Exp != nil && ue.Node.Exp.Op == syntax.ErrorUnsetOrNull:
			s.errf("%s: parameter null or not set", name)
		case ue.Message == "":
			s.errf("%s: parameter not set", name)
		default:
			s.errf("%s: %s", name, ue.Message)
		}
		s.unsetExit()
		return
	}
	var ub *unboundError
	if errors.As(err, &ub) {
		s.errf("%s", ub)
		s.unsetExit()
		return
	}
	var ae *arithError
	if errors.As(err, &ae) {
		s.errf("%s", ae)
		s.lastStatus = 1
		// An arithmetic error in an expansion abandons the command
		// (see topLevel), and bash 5.2 applies neither errexit nor the
		// ERR trap to it.
		if !s.inTrap {
			s.aborting = true
			s.arithAbort = true
		}
		return
	}
	var nm *noMatch
	if errors.As(err, &nm) {
		// As an arithmetic error: the rest of the line is abandoned.
		s.errf("%s", nm)
		s.lastStatus = 1
		if !s.inTrap {
			s.abandon()
		}
		return
	}
	var se *exitStatusError
	if errors.As(err, &se) {
		s.lastStatus = se.status
		return
	}
	msg := err.Error()
	s.errf("%s", msg)
	s.lastStatus = 1
}

func paramName(pe *syntax.ParamExp) string {
	if pe == nil || pe.Param == nil {
		return ""
	}
	name := pe.Param.Value
	if pe.Index != nil {
		var b bytes.Buffer
		_ = syntax.NewPrinter().Print(&b, pe.Index)
		name += "[" + b.String() + "]"
	}
	return name
}

type exitStatusError struct{ status int }

func (e *exitStatusError) Error() string { return "exit status " + strconv.Itoa(e.status) }

// unsetExit ends the shell after an unset-parameter error: bash ends a
// -c command string with 127 and a script with 1 (a trap goes on).
func (s *Shell) unsetExit() {
	s.lastStatus = 1
	if s.inTrap {
		return
	}
	code := 1
	if s.CommandMode && !s.isSubshell {
		code = 127
	}
	s.exit(code)
}

// exprError reports an arithmetic error: bash prints the expression.
func (s *Shell) exprError(err error) {
	var ae *arithError
	if errors.As(err, &ae) {
		s.errf("%s", ae)
		s.lastStatus = 1
		return
	}
	s.expandError(err)
}

// cmdSubst runs $(...) in a subshell and writes its output to w.
func (s *Shell) cmdSubst(w io.Writer, cs *syntax.CmdSubst) error {
	if len(cs.Stmts) == 1 {
		// $(< file) reads the file without running anything.
		st := cs.Stmts[0]
		if st.Cmd == nil && len(st.Redirs) == 1 && st.Redirs[0].Op == syntax.RdrIn && st.Redirs[0].N == nil && !st.Negated && !st.Background {
			name, err := s.literal(st.Redirs[0].Word)
			if err != nil {
				return err
			}
			o, ok := s.openRedir(name, os.O_RDONLY, false)
			if !ok {
				s.lastStatus = 1
				return nil
			}
			_, cerr := io.Copy(w, o.f)
			o.decRef()
			s.lastStatus = 0
			return cerr
		}
	}
	sub := s.subshell()
	sub.quietSignals = true
	if !s.opts.posix && !s.shopt["inherit_errexit"] {
		sub.opts.errexit = false
	}
	r, pw, err := s.sh.sys.Pipe(true)
	if err != nil {
		return err
	}
	sub.fds.set(1, pw)
	pw.decRef()
	done := s.goSub(sub, func(sub *Shell) { sub.stmts(cs.Stmts) })
	_, cerr := io.Copy(w, r.f)
	r.decRef()
	status := <-done
	s.lastStatus = status
	s.substStatus = &status
	return cerr
}

// procSubst runs <(...) or >(...) asynchronously and returns the
// /dev/fd path the command reads or writes.
func (s *Shell) procSubst(ps *syntax.ProcSubst) (string, error) {
	r, w, err := s.sh.sys.Pipe(true)
	if err != nil {
		return "", err
	}
	sub := s.subshell()
	sub.quietSignals = true
	var keep *ofile
	if ps.Op == syntax.CmdIn {
		sub.fds.set(1, w)
		keep = r
	} else {
		sub.fds.set(0, r)
		keep = w
	}
	n := s.fds.freeHigh()
	s.fds.set(n, keep)
	r.decRef()
	w.decRef()
	s.procSubsts = append(s.procSubsts, n)
	// wait waits for process substitutions too, as bash does.
	j := s.sh.addJob(sub.bashpid, "")
	j.hidden = true
	sub.job = j
	done := s.goSub(sub, func(sub *Shell) { sub.stmts(ps.Stmts) })
	go func() { j.finish(<-done) }()
	// $! is the substitution's process, as in bash (exec > >(tee log);
	// pid=$!; ...; wait $pid).
	s.lastBg = sub.bashpid
	return "/dev/fd/" + strconv.Itoa(n), nil
}

// freeHigh returns a free shell descriptor number from 63 down, as bash
// picks for process substitutions.
func (t *fdTable) freeHigh() int {
	for n := 63; n > 9; n-- {
		if t.files[n] == nil {
			return n
		}
	}
	for n := 64; ; n++ {
		if t.files[n] == nil {
			return n
		}
	}
}

// abs makes p absolute against the shell's directory.
func (s *Shell) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, p)
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return sysText(err)
}

// tildeAfterAssign expands the tildes of a word that reads like an
// assignment (name=~/p, name=~/a:~/b) where it is an argument: bash does
// outside POSIX mode (echo --prefix=~/x stays as it is: not a name).
func (s *Shell) tildeAfterAssign(w *syntax.Word) *syntax.Word {
	if w == nil || len(w.Parts) == 0 {
		return w
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return w
	}
	v := lit.Value
	eq := strings.IndexByte(v, '=')
	if eq <= 0 || !strings.Contains(v[eq:], "~") {
		return w
	}
	name := v[:eq]
	if k := strings.IndexByte(name, '['); k > 0 && strings.HasSuffix(name, "]") {
		name = name[:k]
	}
	if !validName(name) {
		return w
	}
	var parts []syntax.WordPart
	rest := v[eq+1:]
	done := v[:eq+1]
	changed := false
	for {
		// rest starts a segment: after = or after a :.
		if strings.HasPrefix(rest, "~") {
			end := strings.IndexAny(rest, "/:")
			if end < 0 {
				end = len(rest)
			}
			if end == len(rest) && len(w.Parts) > 1 {
				// The prefix runs on into a quoted or expanded part:
				// not a plain tilde-prefix.
				end = -1
			}
			if end >= 0 {
				if dir, ok := s.tildePrefix(rest[1:end]); ok {
					parts = append(parts, &syntax.Lit{Value: done}, &syntax.SglQuoted{Value: dir})
					done, rest, changed = "", rest[end:], true
				}
			}
		}
		k := strings.IndexByte(rest, ':')
		if k < 0 {
			break
		}
		done += rest[:k+1]
		rest = rest[k+1:]
	}
	if !changed {
		return w
	}
	parts = append(parts, &syntax.Lit{Value: done + rest})
	return &syntax.Word{Parts: append(parts, w.Parts[1:]...)}
}

// tildePrefix is what ~user stands for: the user's home for "", $PWD for +,
// $OLDPWD for -; other users are not known in the sandbox.
func (s *Shell) tildePrefix(user string) (string, bool) {
	var v expand.Variable
	switch user {
	case "":
		v = s.env.Get("HOME")
	case "+":
		v = s.env.Get("PWD")
	case "-":
		v = s.env.Get("OLDPWD")
	default:
		return "", false
	}
	return v.String(), v.IsSet()
}

// noMatch is failglob's error.
type noMatch struct{ pattern string }

func (e *noMatch) Error() string { return "no match: " + e.pattern }

// hasGlob reports whether w has an unquoted pattern character.
func hasGlob(w *syntax.Word) bool {
	var lits strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			lits.WriteString(l.Value)
		}
	}
	return pattern.HasMeta(lits.String(), 0)
}
