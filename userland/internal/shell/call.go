package shell

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// call runs a simple command: assignments, then a function, a builtin or
// a program.
func (s *Shell) call(ce *syntax.CallExpr) {
	s.substStatus = nil
	defer s.closeProcSubsts(len(s.procSubsts))
	if len(ce.Args) == 0 {
		for _, a := range ce.Assigns {
			if err := s.assign(a, false); err != nil {
				s.assignError(err)
				return
			}
		}
		if s.opts.xtrace {
			s.traceAssigns(ce.Assigns)
		}
		if s.substStatus != nil {
			s.lastStatus = *s.substStatus
		} else {
			s.lastStatus = 0
		}
		return
	}
	args, err := s.fields(ce.Args...)
	if err != nil {
		s.expandError(err)
		return
	}
	s.callArgs(ce, args)
}

// callArgs runs a simple command whose words expanded to args.
func (s *Shell) callArgs(ce *syntax.CallExpr, args []string) {
	if len(args) == 0 {
		// Everything expanded to nothing: only the assignments count.
		for _, a := range ce.Assigns {
			if err := s.assign(a, false); err != nil {
				s.assignError(err)
				return
			}
		}
		if s.substStatus != nil {
			s.lastStatus = *s.substStatus
		} else {
			s.lastStatus = 0
		}
		return
	}
	if s.opts.xtrace {
		s.traceAssigns(ce.Assigns)
		s.trace(args)
	}
	defer func() { s.lastArg = args[len(args)-1] }()
	if len(ce.Assigns) == 0 {
		s.run(args, nil)
		return
	}
	// Prefix assignments apply to this command only (special builtins
	// keep them, as POSIX says).
	var tmp []string
	if isSpecialBuiltin(args[0]) && s.funcs[args[0]] == nil {
		for _, a := range ce.Assigns {
			if err := s.assign(a, false); err != nil {
				s.assignError(err)
				return
			}
		}
		s.run(args, nil)
		return
	}
	saved := s.env.top
	s.env.top = newScope(saved)
	for _, a := range ce.Assigns {
		if err := s.assign(a, true); err != nil {
			s.env.top = saved
			s.assignError(err)
			return
		}
		tmp = append(tmp, a.Name.Value)
	}
	for _, name := range tmp {
		v := s.env.top.vars[name]
		v.Exported = true
		s.env.top.vars[name] = v
	}
	s.run(args, tmp)
	s.env.top = saved
}

func (s *Shell) closeProcSubsts(from int) {
	if len(s.procSubsts) <= from {
		return
	}
	for _, n := range s.procSubsts[from:] {
		s.fds.set(n, nil)
		delete(s.fds.closed, n)
	}
	s.procSubsts = s.procSubsts[:from]
}

func (s *Shell) assignError(err error) {
	var ro errReadonly
	if errors.As(err, &ro) {
		s.errf("%s", err)
		s.lastStatus = 1
		if !s.inTrap {
			// bash abandons the command it was running (a function
			// call included), as for an expansion error.
			s.abandon()
		}
		return
	}
	s.expandError(err)
}

// assign performs one NAME=value, NAME+=value, NAME[i]=value or
// NAME=(...) assignment. local puts it in the innermost scope.
func (s *Shell) assign(a *syntax.Assign, local bool) error {
	name := a.Name.Value
	set := func(v expand.Variable) error {
		if local {
			v.Exported = true
			s.noteAssocKeys(name, s.env.top.vars[name], v)
			s.env.top.vars[name] = v
			return nil
		}
		return s.env.Set(name, v)
	}
	cur := s.env.Get(name)
	if cur.ReadOnly {
		return errReadonly(name)
	}
	if a.Array != nil {
		return s.assignArray(name, a, cur, set)
	}
	val, err := s.literal(a.Value)
	if err != nil {
		return err
	}
	if a.Index != nil {
		if cur.Kind == expand.Associative {
			k, err := s.assocKey(a.Index)
			if err != nil {
				return err
			}
			m := map[string]string{}
			for kk, vv := range cur.Map {
				m[kk] = vv
			}
			if a.Append {
				val = m[k] + val
			}
			m[k] = val
			cur.Map, cur.Set = m, true
			return set(cur)
		}
		i, err := s.arith(a.Index)
		if err != nil {
			return err
		}
		if i < 0 {
			i += nextIndex(cur)
			if i < 0 {
				return fmt.Errorf("%s[%d]: bad array subscript", name, i-nextIndex(cur))
			}
		}
		if a.Append {
			val = indexGet(cur, i) + val
		}
		return set(indexedSet(cur, i, val))
	}
	if a.Append && !s.intAttr[name] {
		switch cur.Kind {
		case expand.Indexed:
			return set(indexedSet(cur, 0, indexGet(cur, 0)+val))
		case expand.Associative:
			m := map[string]string{}
			for kk, vv := range cur.Map {
				m[kk] = vv
			}
			m["0"] += val
			cur.Map = m
			return set(cur)
		}
		if cur.IsSet() {
			val = cur.Str + val
		}
	}
	if s.intAttr[name] {
		n, err := s.arithString(val)
		if err != nil {
			return err
		}
		if a.Append {
			old, err := s.arithString(cur.Str)
			if err != nil {
				return err
			}
			n += old
		}
		val = strconv.Itoa(n)
	}
	switch s.caseAttr[name] {
	case 'u':
		val = strings.ToUpper(val)
	case 'l':
		val = strings.ToLower(val)
	}
	return set(expand.Variable{Set: true, Kind: expand.String, Str: val, Exported: cur.Exported})
}

func indexGet(v expand.Variable, i int) string {
	if v.Kind == expand.String && i == 0 {
		return v.Str
	}
	if v.Kind != expand.Indexed {
		return ""
	}
	if v.Indexes == nil {
		if i < len(v.List) {
			return v.List[i]
		}
		return ""
	}
	for j, x := range v.Indexes {
		if x == i {
			return v.List[j]
		}
	}
	return ""
}

func (s *Shell) assocKey(x syntax.ArithmExpr) (string, error) {
	if w, ok := x.(*syntax.Word); ok {
		return s.literal(w)
	}
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, x)
	return b.String(), nil
}

func (s *Shell) assignArray(name string, a *syntax.Assign, cur expand.Variable, set func(expand.Variable) error) error {
	if cur.Kind == expand.Associative {
		m := map[string]string{}
		if a.Append {
			for k, v := range cur.Map {
				m[k] = v
			}
		}
		for _, el := range a.Array.Elems {
			if el.Index == nil {
				// a=(k v k v) style is bash 5.1+; pairs.
				continue
			}
			k, err := s.assocKey(el.Index)
			if err != nil {
				return err
			}
			v, err := s.literal(el.Value)
			if err != nil {
				return err
			}
			m[k] = v
			s.pendingKeys = append(s.pendingKeys, k)
		}
		cur.Map, cur.Set = m, true
		defer func() { s.pendingKeys = s.pendingKeys[:0] }()
		return set(cur)
	}
	v := expand.Variable{Kind: expand.Indexed, Set: true, Exported: cur.Exported}
	next := 0
	if a.Append {
		switch {
		case cur.Kind == expand.Indexed:
			v = cur
			v.Set = true
			next = nextIndex(v)
		case cur.Kind == expand.String && cur.Set:
			v.List = []string{cur.Str}
			next = 1
		}
	}
	for _, el := range a.Array.Elems {
		if el.Index != nil {
			i, err := s.arith(el.Index)
			if err != nil {
				return err
			}
			val, err := s.literal(el.Value)
			if err != nil {
				return err
			}
			v = indexedSet(v, i, val)
			next = i + 1
			continue
		}
		vals, err := s.fields(el.Value)
		if err != nil {
			return err
		}
		for _, val := range vals {
			v = indexedSet(v, next, val)
			next++
		}
	}
	if v.List == nil {
		v.List = []string{}
	}
	return set(v)
}

// run dispatches an expanded command line.
func (s *Shell) run(args []string, tmpVars []string) {
	name := args[0]
	if body := s.funcs[name]; body != nil {
		s.callFunc(name, body, args[1:])
		return
	}
	if b := builtins[name]; b != nil && !s.disabled[name] {
		s.lastStatus = b(s, args)
		return
	}
	s.external(args)
}

func (s *Shell) callFunc(name string, body *syntax.Stmt, params []string) {
	if len(s.funcStack) >= 1000 {
		s.errf("%s: maximum function nesting level exceeded (1000)", name)
		s.lastStatus = 1
		s.exit(1)
		return
	}
	oldFrame := s.frame
	s.frame = &frame{arg0: oldFrame.arg0, params: params}
	s.funcStack = append(s.funcStack, name)
	s.callLines = append(s.callLines, s.line)
	oldTop := s.env.top
	s.env.top = newScope(oldTop)
	line, src := s.line, s.src
	s.src = s.funcSrc[name]
	s.stmt(body)
	s.src = src
	if cmd, ok := s.traps["RETURN"]; ok && cmd != "" && !s.inTrap {
		s.runTrap(cmd)
	}
	s.env.top = oldTop
	s.funcStack = s.funcStack[:len(s.funcStack)-1]
	s.callLines = s.callLines[:len(s.callLines)-1]
	s.frame = oldFrame
	s.line = line
	if s.returning {
		s.returning = false
	}
}

// external runs a program and waits for it.
func (s *Shell) external(args []string) {
	env := s.env.environ()
	fds := s.childFDs()
	var closed []int
	for n := range s.fds.closed {
		closed = append(closed, n)
	}
	pid, err := s.sh.sys.Spawn(args[0], args, env, s.dir, fds, closed)
	if err != nil {
		s.spawnError(args, err)
		return
	}
	if o := s.fds.files[0]; s.dropStdin && o != nil && !o.std {
		// As a forked bash would: the program's writer upstream must
		// see EPIPE once the program is gone, not a pipe this stage,
		// which reads nothing more, keeps open (`while :; do echo;
		// done | head -n 1` would fill the pipe before ending).
		delete(s.fds.files, 0)
		o.decRef()
	}
	if j := s.job; j != nil {
		if sig := j.addKid(pid); sig != 0 {
			// Killed while starting it.
			_ = s.sh.sys.Kill(pid, sig)
		}
		defer j.dropKid(pid)
	}
	st := s.waitPID(pid)
	s.lastStatus = st.Status()
	if st.Signal == 15 && !s.quietSignals {
		// bash words SIGTERM alone, without the line, pid and command
		// it gives other signals.
		fmt.Fprintln(s.stderr(), "Terminated")
	}
}

func (s *Shell) spawnError(args []string, err error) {
	name := args[0]
	switch {
	case errors.Is(err, ErrNotFound):
		if strings.Contains(name, "/") {
			s.errf("%s: No such file or directory", name)
		} else {
			s.errf("%s: command not found", name)
		}
		s.lastStatus = 127
	case errors.Is(err, ErrNoExec):
		// A file the kernel cannot run is a script for this shell.
		pid, err2 := s.sh.sys.Spawn("bash", append([]string{"bash"}, args...), s.env.environ(), s.dir, s.childFDs(), nil)
		if err2 != nil {
			s.errf("%s: cannot execute binary file: Exec format error", name)
			s.lastStatus = 126
			return
		}
		s.lastStatus = s.waitPID(pid).Status()
	case errors.Is(err, ErrPermission):
		s.errf("%s: Permission denied", name)
		s.lastStatus = 126
	case errors.Is(err, ErrIsDir):
		s.errf("%s: Is a directory", name)
		s.lastStatus = 126
	default:
		s.errf("%s: %s", name, errText(err))
		s.lastStatus = 126
	}
}

func (s *Shell) childFDs() map[int]*ofile {
	fds := map[int]*ofile{}
	for n, o := range s.fds.files {
		if o.std && o.fd == n {
			continue
		}
		fds[n] = o
	}
	return fds
}

// waitPID waits for a child. The only running goroutine may block in the
// host; with others running (pipeline stages, substitutions, jobs) it
// polls, so they keep the one WebAssembly thread. It first only yields:
// a stage like `echo hello |` finishes as soon as it gets the thread,
// without a round trip through the host's poll for a sleep; if the others
// are waiting themselves, it sleeps, longer each time.
func (s *Shell) waitPID(pid int) ExitStatus {
	if s.sh.running.Load() != 0 {
		// The child has only just started: let the other goroutines
		// (`echo hello |`) run before asking the host about it.
		runtime.Gosched()
	}
	delay := 20 * time.Microsecond
	for i := 0; ; i++ {
		block := s.sh.running.Load() == 0
		done, st, err := s.sh.sys.Wait(pid, block)
		if err != nil {
			return ExitStatus{Code: 127}
		}
		if done {
			return st
		}
		if i < 4 {
			runtime.Gosched()
			continue
		}
		time.Sleep(delay)
		delay = min(delay*2, 2*time.Millisecond)
	}
}

func (s *Shell) trace(args []string) {
	ps4 := s.env.str("PS4")
	if !s.env.Get("PS4").IsSet() {
		ps4 = "+ "
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(ps4[:min(1, len(ps4))], s.subshellLevel))
	b.WriteString(ps4)
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(traceQuote(a))
	}
	b.WriteByte('\n')
	fmt.Fprint(s.stderr(), b.String())
}

func (s *Shell) traceAssigns(as []*syntax.Assign) {
	for _, a := range as {
		op := "="
		if a.Append {
			op = "+="
		}
		if a.Array != nil {
			// An array literal shows as written.
			s.traceRaw(a.Name.Value + op + s.srcText(a.Array))
			continue
		}
		if a.Value == nil {
			continue
		}
		v, err := s.literal(a.Value)
		if err != nil {
			continue
		}
		name := a.Name.Value
		if a.Index != nil {
			name += "[" + s.srcText(a.Index) + "]"
		}
		s.traceRaw(name + op + traceQuote(v))
	}
}

// traceRaw prints an xtrace line as it is (PS4 first).
func (s *Shell) traceRaw(text string) {
	ps4 := s.env.str("PS4")
	if !s.env.Get("PS4").IsSet() {
		ps4 = "+ "
	}
	fmt.Fprint(s.stderr(), strings.Repeat(ps4[:min(1, len(ps4))], s.subshellLevel)+ps4+text+"\n")
}

// srcText is a node's text as written, when the source is known.
func (s *Shell) srcText(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if s.src != "" && start >= 0 && start <= end && end <= len(s.src) {
		return strings.TrimSpace(s.src[start:end])
	}
	return printNode(n)
}

// traceQuote quotes a word as bash's xtrace does: single quotes when it
// holds anything special.
func traceQuote(a string) string {
	if a == "" {
		return "''"
	}
	special := false
	for _, c := range a {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./=:,+@%^", c)) {
			special = true
			break
		}
	}
	if !special {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// abandon gives up the rest of the input line after an error bash treats
// as fatal to it (a readonly assignment, failglob, a bad subscript under
// set -e); with set -e the shell exits, whatever list the command is in.
func (s *Shell) abandon() {
	s.aborting = true
	if s.opts.errexit && !s.exiting {
		s.exit(1)
	}
}
