package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/secexec/secexec/userland/internal/sysmsg"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

type builtin func(s *Shell, args []string) int

var builtins map[string]builtin

func init() {
	builtins = map[string]builtin{
		":": func(*Shell, []string) int { return 0 }, "true": func(*Shell, []string) int { return 0 },
		"false": func(*Shell, []string) int { return 1 },
		"echo":  (*Shell).echo, "printf": (*Shell).printf, "cd": (*Shell).cd, "pwd": (*Shell).pwd,
		"exit": (*Shell).exitB, "return": (*Shell).returnB, "break": (*Shell).breakB, "continue": (*Shell).continueB,
		"shift": (*Shell).shift, "set": (*Shell).set, "unset": (*Shell).unset, "export": (*Shell).export,
		"readonly": (*Shell).readonlyB, "local": (*Shell).local, "declare": (*Shell).declare, "typeset": (*Shell).declare,
		"eval": (*Shell).eval, "source": (*Shell).sourceB, ".": (*Shell).sourceB, "test": (*Shell).testB, "[": (*Shell).testB,
		"read": (*Shell).read, "mapfile": (*Shell).mapfile, "readarray": (*Shell).mapfile, "trap": (*Shell).trap,
		"wait": (*Shell).wait, "kill": (*Shell).kill, "jobs": (*Shell).jobsB, "type": (*Shell).typeB, "command": (*Shell).command,
		"builtin": (*Shell).builtinB, "let": (*Shell).let, "getopts": (*Shell).getopts, "umask": (*Shell).umaskB,
		"shopt": (*Shell).shoptB, "exec": (*Shell).execB, "hash": func(*Shell, []string) int { return 0 },
		"times": (*Shell).times, "alias": func(*Shell, []string) int { return 0 }, "unalias": func(*Shell, []string) int { return 0 },
		"disown": (*Shell).disown, "caller": (*Shell).caller,
		"pushd": (*Shell).pushd, "popd": (*Shell).popd, "dirs": (*Shell).dirs,
		"fg": (*Shell).noJobControl, "bg": (*Shell).noJobControl,
		"enable": (*Shell).enable, "help": (*Shell).help,
		"ulimit": (*Shell).ulimitB,
	}
}

var specialBuiltins = []string{":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set", "shift", "source", "times", "trap", "unset"}

func isSpecialBuiltin(name string) bool { return slices.Contains(specialBuiltins, name) }

// out writes builtin output; a closed pipe ends the (sub)shell silently
// with 141, as SIGPIPE would in bash.
func (s *Shell) out(fd int, str string) bool {
	if _, err := io.WriteString(s.fds.writer(fd), str); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			s.exit(141)
			return false
		}
		name := "write"
		s.errf("%s: write error: %s", name, sysmsg.Text(err))
		return false
	}
	return true
}

// berr prints "NAME: line N: builtin: msg".
func (s *Shell) berr(name, format string, a ...any) {
	s.errf("%s: %s", name, fmt.Sprintf(format, a...))
}

func (s *Shell) echo(args []string) int {
	args = args[1:]
	newline, escapes := true, false
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	str := strings.Join(args, " ")
	if escapes {
		var stop bool
		str, stop = echoEscapes(str)
		if stop {
			newline = false
		}
	}
	if newline {
		str += "\n"
	}
	if !s.out(1, str) {
		return 1
	}
	return 0
}

// echoEscapes interprets echo -e's backslash escapes, which are printf
// %b's; \c stops output.
func echoEscapes(in string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' {
			b.WriteByte(in[i])
			continue
		}
		n, stop := writeEscape(&b, in[i:], true)
		if stop {
			return b.String(), true
		}
		i += n - 1
	}
	return b.String(), false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

func (s *Shell) printf(args []string) int {
	args = args[1:]
	varName := ""
	if len(args) >= 2 && args[0] == "-v" {
		varName = args[1]
		args = args[2:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		s.berr("printf", "usage: printf [-v var] format [arguments]")
		return 2
	}
	st := s.formatPrintf(args[0], args[1:])
	for _, e := range st.errs {
		s.berr("printf", "%s", e)
	}
	status := 0
	if st.failed {
		status = 1
	}
	var b strings.Builder
	b.WriteString(st.out.String())
	if varName != "" {
		if err := s.setVarRef(varName, b.String()); err != nil {
			s.berr("printf", "`%s': not a valid identifier", varName)
			return 2
		}
		return status
	}
	if !s.out(1, b.String()) {
		return 1
	}
	return status
}

// setVarRef assigns NAME or NAME[idx].
func (s *Shell) setVarRef(ref, val string) error {
	name, idx, hasIdx := strings.Cut(ref, "[")
	if !validName(name) {
		return errors.New("invalid name")
	}
	if hasIdx {
		idx = strings.TrimSuffix(idx, "]")
		cur := s.env.Get(name)
		if cur.Kind == expand.Associative {
			m := map[string]string{}
			for k, v := range cur.Map {
				m[k] = v
			}
			m[idx] = val
			cur.Map = m
			return s.env.Set(name, cur)
		}
		i, err := s.arithString(idx)
		if err != nil {
			return err
		}
		return s.env.Set(name, indexedSet(cur, i, val))
	}
	return s.env.setStr(name, val)
}

func (s *Shell) cd(args []string) int {
	args = args[1:]
	for len(args) > 0 && (args[0] == "-L" || args[0] == "-P" || args[0] == "--") {
		args = args[1:]
	}
	var dir string
	printDir := false
	switch {
	case len(args) == 0:
		dir = s.env.str("HOME")
		if dir == "" {
			s.berr("cd", "HOME not set")
			return 1
		}
	case len(args) > 1:
		s.berr("cd", "too many arguments")
		return 1
	case args[0] == "-":
		dir = s.env.str("OLDPWD")
		if dir == "" {
			s.berr("cd", "OLDPWD not set")
			return 1
		}
		printDir = true
	default:
		dir = args[0]
	}
	target := s.abs(dir)
	fi, err := os.Stat(target)
	if err != nil {
		s.berr("cd", "%s: %s", dir, errText(err))
		return 1
	}
	if !fi.IsDir() {
		s.berr("cd", "%s: Not a directory", dir)
		return 1
	}
	old := s.dir
	s.dir = target
	_ = s.env.Set("OLDPWD", expand.Variable{Set: true, Kind: expand.String, Str: old, Exported: true})
	_ = s.env.Set("PWD", expand.Variable{Set: true, Kind: expand.String, Str: target, Exported: true})
	if printDir {
		s.out(1, target+"\n")
	}
	return 0
}

func (s *Shell) pwd(args []string) int {
	s.out(1, s.dir+"\n")
	return 0
}

func (s *Shell) exitB(args []string) int {
	code := s.lastStatus
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			s.berr("exit", "%s: numeric argument required", args[1])
			code = 2
		} else {
			code = n & 0xff
		}
	}
	s.exit(code)
	return code
}

func (s *Shell) returnB(args []string) int {
	code := s.lastStatus
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			s.berr("return", "%s: numeric argument required", args[1])
			code = 2
		} else {
			code = n & 0xff
		}
	}
	if len(s.funcStack) == 0 && s.sourceDepth == 0 {
		s.berr("return", "can only `return' from a function or sourced script")
		return 2
	}
	s.returning = true
	return code
}

func (s *Shell) loopN(name string, args []string) (int, bool) {
	n := 1
	if len(args) > 1 {
		v, err := strconv.Atoi(args[1])
		if err != nil {
			s.berr(name, "%s: numeric argument required", args[1])
			return 0, false
		}
		if v < 1 {
			s.berr(name, "%s: loop count out of range", args[1])
			return 0, false
		}
		n = v
	}
	if s.loopDepth == 0 {
		s.berr(name, "only meaningful in a `for', `while', or `until' loop")
		return 0, true
	}
	return min(n, s.loopDepth), true
}

func (s *Shell) breakB(args []string) int {
	n, ok := s.loopN("break", args)
	if !ok {
		return 1
	}
	s.breakN = n
	return 0
}

func (s *Shell) continueB(args []string) int {
	n, ok := s.loopN("continue", args)
	if !ok {
		return 1
	}
	if n > 0 {
		s.breakN = n - 1
		s.contN = 1
		if n > 1 {
			s.breakN, s.contN = 0, n
		}
	}
	return 0
}

func (s *Shell) shift(args []string) int {
	n := 1
	if len(args) > 1 {
		v, err := strconv.Atoi(args[1])
		if err != nil {
			s.berr("shift", "%s: numeric argument required", args[1])
			return 1
		}
		n = v
	}
	if n > len(s.frame.params) || n < 0 {
		return 1
	}
	s.frame.params = s.frame.params[n:]
	return 0
}

func (s *Shell) set(args []string) int {
	args = args[1:]
	if len(args) == 0 {
		s.env.Each(func(name string, v expand.Variable) bool {
			if v.IsSet() && v.Kind == expand.String {
				s.out(1, name+"="+shellQuote(v.Str)+"\n")
			}
			return true
		})
		return 0
	}
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			args = args[1:]
			s.frame.params = slices.Clone(args)
			return 0
		}
		if a == "-" {
			args = args[1:]
			s.opts.xtrace, s.opts.verbose = false, false
			s.frame.params = slices.Clone(args)
			return 0
		}
		if len(a) < 2 || a[0] != '-' && a[0] != '+' {
			break
		}
		on := a[0] == '-'
		args = args[1:]
		for i := 1; i < len(a); i++ {
			c := a[i]
			if c == 'o' {
				if len(args) == 0 {
					s.printOpts(on)
					return 0
				}
				if !s.SetOption(args[0], on) {
					s.berr("set", "%s: invalid option name", args[0])
					return 2
				}
				args = args[1:]
				continue
			}
			if !s.SetFlag(c, on) {
				s.berr("set", "%c%c: invalid option", a[0], c)
				s.out(2, "set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]\n")
				return 2
			}
		}
	}
	if len(args) > 0 {
		s.frame.params = slices.Clone(args)
	}
	return 0
}

func (s *Shell) printOpts(long bool) {
	names := []string{"allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall", "histexpand", "history", "ignoreeof", "interactive-comments", "keyword", "monitor", "noclobber", "noexec", "noglob", "nolog", "notify", "nounset", "onecmd", "physical", "pipefail", "posix", "privileged", "verbose", "vi", "xtrace"}
	for _, n := range names {
		on := false
		switch n {
		case "braceexpand", "hashall", "interactive-comments":
			on = true
		default:
			if p := s.optPtr(n); p != nil {
				on = *p
			}
		}
		if long {
			st := "off"
			if on {
				st = "on"
			}
			s.out(1, fmt.Sprintf("%-15s\t%s\n", n, st))
		} else {
			c := "+"
			if on {
				c = "-"
			}
			s.out(1, "set "+c+"o "+n+"\n")
		}
	}
}

func shellQuote(v string) string {
	if v == "" {
		return "''"
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./=:,+@%", c)) {
			return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
	}
	return v
}

func (s *Shell) unset(args []string) int {
	args = args[1:]
	funcs, vars := false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-f":
			funcs = true
		case "-v":
			vars = true
		case "-n":
		case "--":
		default:
			s.berr("unset", "%s: invalid option", args[0])
			return 2
		}
		args = args[1:]
	}
	status := 0
	for _, name := range args {
		if funcs && !vars {
			delete(s.funcs, name)
			delete(s.exportFuncs, name)
			continue
		}
		base, idx, hasIdx := strings.Cut(name, "[")
		if !validName(base) {
			s.berr("unset", "`%s': not a valid identifier", name)
			status = 1
			continue
		}
		v := s.env.Get(base)
		if v.ReadOnly {
			s.berr("unset", "%s: cannot unset: readonly variable", base)
			status = 1
			continue
		}
		if hasIdx {
			idx = strings.TrimSuffix(idx, "]")
			switch v.Kind {
			case expand.Associative:
				m := map[string]string{}
				for k, x := range v.Map {
					if k != idx {
						m[k] = x
					}
				}
				v.Map = m
				_ = s.env.Set(base, v)
			case expand.Indexed:
				i, err := s.arithString(idx)
				if err == nil {
					_ = s.env.Set(base, indexedUnset(v, i))
				}
			}
			continue
		}
		if !v.Declared() && !vars {
			delete(s.funcs, name)
		}
		_, sc := s.env.lookup(base)
		if sc != nil {
			if sc.parent != nil {
				// An unset local stays local: it hides the outer one.
				sc.vars[base] = expand.Variable{Local: true}
			} else {
				delete(sc.vars, base)
			}
		}
	}
	return status
}

func (s *Shell) export(args []string) int {
	return s.declareLike("export", args[1:], "x")
}

func (s *Shell) readonlyB(args []string) int {
	return s.declareLike("readonly", args[1:], "r")
}

func (s *Shell) local(args []string) int {
	if len(s.funcStack) == 0 {
		s.berr("local", "can only be used in a function")
		return 1
	}
	return s.declareLike("local", args[1:], "L")
}

func (s *Shell) declare(args []string) int {
	flags := ""
	if len(s.funcStack) > 0 {
		flags = "L"
	}
	return s.declareLike(args[0], args[1:], flags)
}

// declareLike implements declare, typeset, local, export and readonly
// for arguments that reached it as words (the parser usually gives a
// DeclClause instead; see declClause).
func (s *Shell) declareLike(name string, args []string, base string) int {
	var words []declWord
	for _, a := range args {
		words = append(words, declWord{text: a})
	}
	return s.declareWords(name, base, words)
}

func (s *Shell) eval(args []string) int {
	src := strings.Join(args[1:], " ")
	s.evalString(src, "eval")
	return s.lastStatus
}

// evalString parses and runs src in the current shell: the lines before
// a syntax error run, then the error gives status 2.
func (s *Shell) evalString(src, what string) {
	p := parseBash(src)
	base, oldSrc := s.lineBase, s.src
	evalBase := s.line - 1
	if c := s.curCmd; what == "eval" && c != nil && c.End().Line() > c.Pos().Line() {
		// bash numbers the lines of the string from the last line of
		// a multi-line eval command.
		evalBase += c.End().Line() - c.Pos().Line()
	}
	s.lineBase = evalBase
	s.src = p.src
	if len(p.stmts) == 0 {
		s.lastStatus = 0
	}
	s.runParsed(p, s.stmts)
	if p.err != nil && !s.stopped() {
		s.lineBase = evalBase
		s.inEval = what == "eval"
		s.reportSyntax(p.err)
		s.inEval = false
		s.lastStatus = 2
	}
	s.lineBase, s.src = base, oldSrc
}

func (s *Shell) sourceB(args []string) int {
	if len(args) < 2 {
		s.berr(args[0], "filename argument required")
		s.out(2, args[0]+": usage: "+args[0]+" filename [arguments]\n")
		return 2
	}
	file := args[1]
	path := file
	if !strings.Contains(file, "/") {
		found := ""
		for _, d := range strings.Split(s.env.str("PATH"), ":") {
			if d == "" {
				continue
			}
			p := s.abs(d + "/" + file)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				found = p
				break
			}
		}
		if found != "" {
			path = found
		}
	}
	var b []byte
	var err error
	if strings.HasPrefix(path, "/dev/fd/") || path == "/dev/stdin" {
		o, ok := s.openRedir(path, os.O_RDONLY, false)
		if !ok {
			return 1
		}
		b, err = io.ReadAll(o.f)
		o.decRef()
	} else {
		b, err = os.ReadFile(s.abs(path))
	}
	if err != nil {
		s.errf("%s: %s", file, errText(err))
		if s.opts.posix {
			// POSIX: a special builtin's error ends a non-interactive shell.
			s.exit(1)
		}
		return 1
	}
	p := parseBash(string(b))
	oldFrame := s.frame
	if len(args) > 2 {
		s.frame = &frame{arg0: oldFrame.arg0, params: args[2:]}
	}
	oldName, oldBase, oldLine, oldSrc := s.Name, s.lineBase, s.line, s.src
	s.Name, s.lineBase, s.src = file, 0, p.src
	s.sourceDepth++
	fdepth := len(s.funcStack)
	s.bashSource = append(s.bashSource, file)
	s.lastStatus = 0
	s.runParsed(p, s.stmts)
	if p.err != nil && !s.stopped() {
		s.reportSyntax(p.err)
		s.lastStatus = 2
	}
	s.bashSource = s.bashSource[:len(s.bashSource)-1]
	s.sourceDepth--
	s.Name, s.lineBase, s.line, s.src = oldName, oldBase, oldLine, oldSrc
	if len(args) > 2 {
		s.frame = oldFrame
	}
	if s.returning && len(s.funcStack) == fdepth {
		// return in the sourced file ends the source, not a caller.
		s.returning = false
	}
	return s.lastStatus
}

func (s *Shell) let(args []string) int {
	if len(args) < 2 {
		s.berr("let", "expression expected")
		return 1
	}
	n := 0
	for _, a := range args[1:] {
		v, err := s.arithString(a)
		if err != nil {
			s.berr("let", "%s", err)
			return 1
		}
		n = v
	}
	return b2i(n == 0)
}

func (s *Shell) umaskB(args []string) int {
	args = args[1:]
	symbolic, reuse := false, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		for _, c := range args[0][1:] {
			switch c {
			case 'S':
				symbolic = true
			case 'p':
				reuse = true
			default:
				s.berr("umask", "-%c: invalid option", c)
				return 2
			}
		}
		args = args[1:]
	}
	if len(args) == 0 {
		switch {
		case symbolic:
			perm := func(shift int) string {
				m := (^s.umask >> shift) & 7
				out := ""
				for i, c := range "rwx" {
					if m&(4>>i) != 0 {
						out += string(c)
					}
				}
				return out
			}
			s.out(1, "u="+perm(6)+",g="+perm(3)+",o="+perm(0)+"\n")
		case reuse:
			s.out(1, fmt.Sprintf("umask %04o\n", s.umask))
		default:
			s.out(1, fmt.Sprintf("%04o\n", s.umask))
		}
		return 0
	}
	args = append([]string{"umask"}, args...)
	n, err := strconv.ParseUint(args[1], 8, 32)
	if err != nil {
		s.berr("umask", "%s: octal number out of range", args[1])
		return 1
	}
	s.umask = int(n) & 0o777
	setUmask(s.umask)
	return 0
}

func (s *Shell) shoptB(args []string) int {
	args = args[1:]
	mode := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		mode += args[0][1:]
		args = args[1:]
	}
	status := 0
	for _, a := range args {
		var on bool
		if strings.Contains(mode, "o") {
			p := s.optPtr(a)
			if p == nil {
				s.berr("shopt", "%s: invalid option name", a)
				status = 1
				continue
			}
			if strings.Contains(mode, "s") {
				*p = true
			} else if strings.Contains(mode, "u") {
				*p = false
			}
			on = *p
		} else {
			switch {
			case strings.Contains(mode, "s"):
				s.shopt[a] = true
			case strings.Contains(mode, "u"):
				s.shopt[a] = false
			}
			on = s.shopt[a]
		}
		if strings.Contains(mode, "s") || strings.Contains(mode, "u") {
			continue
		}
		if !on {
			status = 1
		}
		if strings.Contains(mode, "q") {
			continue
		}
		switch {
		case strings.Contains(mode, "p") && strings.Contains(mode, "o"):
			c := "+"
			if on {
				c = "-"
			}
			s.out(1, "set "+c+"o "+a+"\n")
		case strings.Contains(mode, "p"):
			c := "-u"
			if on {
				c = "-s"
			}
			s.out(1, "shopt "+c+" "+a+"\n")
		default:
			st := "off"
			if on {
				st = "on"
			}
			s.out(1, fmt.Sprintf("%-15s\t%s\n", a, st))
		}
	}
	return status
}

func (s *Shell) execB(args []string) int {
	args = args[1:]
	if len(args) == 0 {
		return 0
	}
	// The shell stays a process of its own: run the program, then exit
	// with its status, which is what the caller can observe.
	s.external(args)
	s.exit(s.lastStatus)
	return s.lastStatus
}

func (s *Shell) times(args []string) int {
	s.out(1, "0m0.000s 0m0.000s\n0m0.000s 0m0.000s\n")
	return 0
}

// caller prints where the current function (or the one N frames up)
// was called from: "LINE FILE", or with N "LINE FUNCTION FILE".
func (s *Shell) caller(args []string) int {
	n, withFunc := 0, false
	if len(args) > 1 {
		v, err := strconv.Atoi(args[1])
		if err != nil || v < 0 {
			s.berr("caller", "%s: invalid number", args[1])
			return 2
		}
		n, withFunc = v, true
	}
	depth := len(s.callLines)
	if depth == 0 && !withFunc && len(s.bashSource) > 0 {
		// A script's top level: bash 5.2 answers with its own frame.
		s.out(1, "0 NULL\n")
		return 0
	}
	if n >= depth {
		return 1
	}
	line := s.callLines[depth-1-n]
	fn := "main"
	if k := len(s.funcStack) - 2 - n; k >= 0 {
		fn = s.funcStack[k]
	}
	file := s.frame.arg0
	if len(s.bashSource) > 0 {
		file = s.bashSource[len(s.bashSource)-1]
	}
	if withFunc {
		s.out(1, fmt.Sprintf("%d %s %s\n", line, fn, file))
	} else {
		s.out(1, fmt.Sprintf("%d %s\n", line, file))
	}
	return 0
}

func (s *Shell) typeB(args []string) int {
	status := 0
	short := false
	var names []string
	for _, a := range args[1:] {
		if a == "-t" {
			short = true
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		names = append(names, a)
	}
	for _, n := range names {
		kind, text := s.describe(n)
		if kind == "" {
			if !short {
				s.errf("type: %s: not found", n)
			}
			status = 1
			continue
		}
		if short {
			s.out(1, kind+"\n")
		} else {
			s.out(1, text+"\n")
		}
	}
	return status
}

func (s *Shell) describe(n string) (kind, text string) {
	if isKeyword(n) {
		return "keyword", n + " is a shell keyword"
	}
	if body := s.funcs[n]; body != nil {
		if text, ok := bashFuncText(n, body, s.funcSrc[n]); ok {
			return "function", n + " is a function\n" + text
		}
		var b strings.Builder
		_ = syntax.NewPrinter(syntax.Indent(4)).Print(&b, &syntax.FuncDecl{Name: &syntax.Lit{Value: n}, Body: body, Parens: true})
		return "function", n + " is a function\n" + strings.TrimRight(b.String(), "\n")
	}
	if builtins[n] != nil {
		return "builtin", n + " is a shell builtin"
	}
	if p := s.lookPath(n); p != "" {
		return "file", n + " is " + p
	}
	return "", ""
}

func isKeyword(n string) bool {
	switch n {
	case "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc":
		return true
	}
	return false
}

func (s *Shell) lookPath(n string) string {
	if strings.Contains(n, "/") {
		if fi, err := os.Stat(s.abs(n)); err == nil && !fi.IsDir() {
			return n
		}
		return ""
	}
	for _, d := range strings.Split(s.env.str("PATH"), ":") {
		if d == "" {
			continue
		}
		p := d + "/" + n
		if fi, err := os.Stat(s.abs(p)); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func (s *Shell) command(args []string) int {
	args = args[1:]
	v, V := false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		switch args[0] {
		case "-v":
			v = true
		case "-V":
			V = true
		case "-p", "--":
		default:
			s.berr("command", "%s: invalid option", args[0])
			return 2
		}
		if args[0] == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return 0
	}
	if v || V {
		status := 0
		for _, n := range args {
			kind, text := s.describe(n)
			switch {
			case kind == "":
				if V {
					s.errf("command: %s: not found", n)
				}
				status = 1
			case V:
				s.out(1, text+"\n")
			case kind == "file":
				s.out(1, s.lookPath(n)+"\n")
			default:
				s.out(1, n+"\n")
			}
		}
		return status
	}
	if b := builtins[args[0]]; b != nil {
		return b(s, args)
	}
	s.external(args)
	return s.lastStatus
}

func (s *Shell) builtinB(args []string) int {
	if len(args) < 2 {
		return 0
	}
	b := builtins[args[1]]
	if b == nil {
		s.berr("builtin", "%s: not a shell builtin", args[1])
		return 1
	}
	return b(s, args[1:])
}

// readLine reads bytes up to delim from r, one byte at a time so that
// nothing past the line is consumed (the rest belongs to later readers
// of a shared descriptor).
func readLine(r io.Reader, delim byte, max int) (string, bool, error) {
	var b []byte
	var buf [1]byte
	for max < 0 || len(b) < max {
		n, err := r.Read(buf[:])
		if n == 1 {
			if buf[0] == delim {
				return string(b), true, nil
			}
			b = append(b, buf[0])
			continue
		}
		if err != nil {
			if err == io.EOF {
				return string(b), false, nil
			}
			return string(b), false, err
		}
	}
	return string(b), true, nil
}

var _ = bufio.NewReader
