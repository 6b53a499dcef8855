package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// command is one shell command of a recipe, after expansion.
type command struct {
	text      string
	loc       Loc
	silent    bool
	ignore    bool
	recursive bool // '+' or a $(MAKE) reference: runs under -n too
}

// job runs one target's recipe, a command at a time.
type job struct {
	f       *File
	cmds    []command
	next    int
	pid     int
	cur     command
	mtime   int64 // the target's time before the recipe, for deletion
	existed bool
	env     []string
	failed  bool
}

// signalNames are the descriptions GNU make prints for a command killed
// by a signal.
var signalNames = map[int]string{1: "Hangup", 2: "Interrupt", 3: "Quit", 6: "Aborted", 9: "Killed",
	11: "Segmentation fault", 13: "Broken pipe", 14: "Alarm clock", 15: "Terminated"}

// autoScope is the scope of a recipe: the automatic variables over the
// target's scope.
func (m *Make) autoScope(f *File, deps, oo []string) *Scope {
	sc := newScope(f.scope)
	set := func(name, val string) {
		sc.vars[name] = &Var{Name: name, Value: val, Origin: OriginAutomatic}
	}
	first := ""
	if len(deps) > 0 {
		first = m.shown(deps[0])
	}
	var newer, uniq, all []string
	seen := map[string]bool{}
	for _, d := range deps {
		all = append(all, m.shown(d))
		if seen[d] {
			continue
		}
		seen[d] = true
		uniq = append(uniq, m.shown(d))
		if m.newer(m.file(d), f) {
			newer = append(newer, m.shown(d))
		}
	}
	var ouniq []string
	oseen := map[string]bool{}
	for _, d := range oo {
		if !oseen[d] && !seen[d] {
			oseen[d] = true
			ouniq = append(ouniq, m.shown(d))
		}
	}
	stem := f.Stem
	if stem == "" && !f.fromImplicit {
		for _, s := range m.suffixes {
			if strings.HasSuffix(f.Name, s) && len(f.Name) > len(s) {
				stem = f.Name[:len(f.Name)-len(s)]
				break
			}
		}
	}
	vals := map[string]string{
		"@": m.shown(f.Name), "<": first, "^": strings.Join(uniq, " "), "+": strings.Join(all, " "),
		"?": strings.Join(newer, " "), "*": stem, "|": strings.Join(ouniq, " "),
	}
	for k, v := range vals {
		set(k, v)
		var ds, fs []string
		for _, w := range fields(v) {
			i := strings.LastIndexByte(w, '/')
			switch {
			case i < 0:
				ds = append(ds, ".")
				fs = append(fs, w)
			case i == 0:
				ds = append(ds, "/")
				fs = append(fs, w[1:])
			default:
				ds = append(ds, w[:i])
				fs = append(fs, w[i+1:])
			}
		}
		set(k+"D", strings.Join(ds, " "))
		set(k+"F", strings.Join(fs, " "))
	}
	return sc
}

// prefixFlags strips the leading '@', '-', '+' and blanks of a recipe
// line and returns the flags they set.
func prefixFlags(s string) (rest string, silent, ignore, recursive bool) {
	for len(s) > 0 {
		switch s[0] {
		case '@':
			silent = true
		case '-':
			ignore = true
		case '+':
			recursive = true
		case ' ', '\t':
		default:
			return s, silent, ignore, recursive
		}
		s = s[1:]
	}
	return s, silent, ignore, recursive
}

// refersToMake reports whether a recipe line names $(MAKE) or ${MAKE}:
// such lines run even under -n.
func refersToMake(s string) bool {
	return strings.Contains(s, "$(MAKE)") || strings.Contains(s, "${MAKE}")
}

// splitCommands splits an expanded recipe line at newlines that are not
// escaped by a backslash: each piece is a command of its own.
func splitCommands(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && !(i > 0 && s[i-1] == '\\') {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// expandRecipe expands every line of a recipe (GNU expands them all
// before the first runs).
func (m *Make) expandRecipe(f *File, lines []recipeLine, sc *Scope) []command {
	silentT := m.silentAll || m.silentTargets[f.Name] || m.opts.silent
	ignoreT := m.ignoreAll || m.ignoreTargets[f.Name] || m.opts.ignoreErrors
	saved := m.loc
	defer func() { m.loc = saved }()
	if m.oneShell && len(lines) > 0 {
		var parts []string
		_, s0, i0, r0 := prefixFlags(lines[0].text)
		rec := r0
		for i, l := range lines {
			m.loc = l.loc
			if refersToMake(l.text) {
				rec = true
			}
			e := m.expand(l.text, sc)
			if i == 0 {
				var s1, i1, r1 bool
				e, s1, i1, r1 = prefixFlags(e)
				s0, i0, rec = s0 || s1, i0 || i1, rec || r1
			} else {
				e = stripOneShellPrefix(e)
			}
			parts = append(parts, e)
		}
		text := strings.Join(parts, "\n")
		return []command{{text: text, loc: lines[0].loc, silent: s0 || silentT, ignore: i0 || ignoreT, recursive: rec}}
	}
	var cmds []command
	for _, l := range lines {
		m.loc = l.loc
		_, s0, i0, r0 := prefixFlags(l.text)
		rec := r0 || refersToMake(l.text)
		e := m.expand(l.text, sc)
		for _, piece := range splitCommands(e) {
			t, s1, i1, r1 := prefixFlags(piece)
			cmds = append(cmds, command{text: t, loc: l.loc, silent: s0 || s1 || silentT,
				ignore: i0 || i1 || ignoreT, recursive: rec || r1})
		}
	}
	return cmds
}

// stripOneShellPrefix removes the prefix characters of a .ONESHELL
// recipe's later lines, as GNU make does for a POSIX shell.
func stripOneShellPrefix(s string) string {
	return strings.TrimLeft(s, " \t@-+")
}

// startRecipe expands f's recipe and starts it. With one job slot it
// runs to the end before returning.
func (m *Make) startRecipe(f *File, lines []recipeLine, deps, oo []string) status {
	if m.opts.question {
		// -q: only commands that recurse run; the answer is "not up to
		// date".
		sc := m.autoScope(f, deps, oo)
		cmds := m.expandRecipe(f, lines, sc)
		any := false
		for _, c := range cmds {
			if c.recursive {
				any = true
			}
		}
		if !any {
			m.questionOut = true
			f.state, f.changed = stateDone, true
			return stDone
		}
	}
	// A target found by the directory search is remade here.
	f.vpath, f.noVpath = "", true
	if m.opts.touch && !m.opts.question {
		return m.touch(f)
	}
	sc := m.autoScope(f, deps, oo)
	j := &job{f: f, cmds: m.expandRecipe(f, lines, sc)}
	j.existed, j.mtime = f.exists, f.mtime
	f.state = stateRunning
	if f.Intermediate {
		f.madeIntermediate = true
	}
	// Wait for a free job slot; a failure meanwhile (without -k)
	// means nothing new starts.
	for m.slots() > 0 && len(m.jobs) >= m.slots() {
		m.reap()
	}
	if m.stop && !m.opts.keepGoing {
		f.state, f.failed = stateDone, true
		return stFailed
	}
	j.env = m.environ(sc)
	if m.advance(j) {
		m.finish(j)
	} else {
		m.jobs = append(m.jobs, j)
	}
	if m.slots() == 1 || m.notParallel {
		for f.state == stateRunning {
			m.reap()
		}
	}
	switch {
	case f.state == stateRunning:
		return stPending
	case f.failed:
		return stFailed
	}
	return stDone
}

// touch is -t: mark f up to date by its time instead of its recipe.
func (m *Make) touch(f *File) status {
	f.state = stateDone
	if f.Phony {
		return stDone
	}
	if !m.opts.silent {
		m.stdoutf("touch %s\n", f.Name)
	}
	m.commands++
	f.changed = true
	if m.opts.dryRun {
		return stDone
	}
	fh, err := os.OpenFile(f.Name, os.O_WRONLY|os.O_CREATE, 0o666)
	if err == nil {
		err = fh.Close()
	}
	if err == nil {
		now := time.Now()
		err = os.Chtimes(f.Name, now, now)
	}
	if err != nil {
		m.stderrf("%s: *** touch: %s: %s\n", m.prog, f.Name, errText(err))
		f.failed = true
		m.anyFailed = true
		return stFailed
	}
	m.stat(f)
	return stDone
}

// slots is the number of jobs that may run at once (0: no limit).
func (m *Make) slots() int {
	if m.notParallel {
		return 1
	}
	return m.opts.jobs
}

// advance starts j's next command; it reports true when the recipe has
// ended (every command done, or one failed).
func (m *Make) advance(j *job) bool {
	for j.next < len(j.cmds) {
		c := j.cmds[j.next]
		j.next++
		if trimSpace(c.text) == "" {
			continue
		}
		if !c.silent || m.opts.dryRun {
			m.stdoutf("%s\n", c.text)
		}
		m.commands++
		if (m.opts.dryRun || m.opts.question) && !c.recursive {
			continue
		}
		argv := m.commandArgv(c.text)
		pid, err := m.run.start(argv, j.env, m.curdir)
		if err != nil {
			// The program could not be started: what GNU make's child
			// reports before it exits with status 127.
			m.stderrf("%s: %s: %s\n", m.prog, argv[0], errText(err))
			if m.commandFailed(j, c, 127, 0) {
				return true
			}
			continue
		}
		j.pid, j.cur = pid, c
		return false
	}
	return true
}

// commandFailed reports a failed command and says whether the recipe
// stops there.
func (m *Make) commandFailed(j *job, c command, code, sig int) bool {
	what := fmt.Sprintf("Error %d", code)
	if sig != 0 {
		what = signalNames[sig]
		if what == "" {
			what = fmt.Sprintf("Signal %d", sig)
		}
	}
	if c.ignore {
		if m.opts.silent {
			// GNU make's -s hides ignored errors too.
			return false
		}
		m.stderrf("%s: [%s:%d: %s] %s (ignored)\n", m.prog, c.loc.File, c.loc.Line, j.f.Name, what)
		return false
	}
	m.stderrf("%s: *** [%s:%d: %s] %s\n", m.prog, c.loc.File, c.loc.Line, j.f.Name, what)
	j.failed = true
	return true
}

// reap waits for one running command and moves its job on.
func (m *Make) reap() {
	if len(m.jobs) == 0 {
		return
	}
	pid, code, sig, err := m.run.wait()
	if err != nil {
		m.stderrf("%s: wait: %s\n", m.prog, errText(err))
		// Nothing can be waited for: end every job as failed.
		for _, j := range m.jobs {
			j.failed = true
			m.finish(j)
		}
		m.jobs = nil
		return
	}
	for i, j := range m.jobs {
		if j.pid != pid {
			continue
		}
		done := false
		if code != 0 || sig != 0 {
			done = m.commandFailed(j, j.cur, code, sig)
		}
		// A running recipe goes on to its end even after another one
		// failed (GNU waits for it).
		if !done {
			done = m.advance(j)
		}
		if done {
			m.jobs = append(m.jobs[:i], m.jobs[i+1:]...)
			m.finish(j)
		}
		return
	}
}

// finish records the end of a recipe.
func (m *Make) finish(j *job) {
	f := j.f
	if j.failed {
		f.state, f.failed = stateDone, true
		m.anyFailed = true
		if !m.opts.keepGoing {
			m.stop = true
		}
		m.deleteOnErr(j)
		return
	}
	f.state, f.changed = stateDone, true
	m.stat(f)
	if len(f.group) > 0 {
		for _, g := range f.group {
			gf := m.file(g)
			if gf != f && gf.state != stateDone {
				gf.state, gf.changed = stateDone, true
				m.stat(gf)
			}
		}
	}
	if len(f.Double) > 0 && f.dcIdx < len(f.Double) {
		// More double-colon rules to go.
		f.state = stateNew
	}
}

// deleteOnErr removes a target its failed recipe changed, under
// .DELETE_ON_ERROR.
func (m *Make) deleteOnErr(j *job) {
	f := j.f
	if !m.deleteOnError || f.Phony || f.Precious || m.opts.dryRun {
		return
	}
	fi, err := os.Stat(f.Name)
	if err != nil || fi.IsDir() {
		return
	}
	if j.existed && fi.ModTime().UnixNano() == j.mtime {
		return
	}
	m.stderrf("%s: *** Deleting file '%s'\n", m.prog, f.Name)
	if err := os.Remove(f.Name); err != nil {
		m.stderrf("%s: unlink: %s: %s\n", m.prog, f.Name, errText(err))
	}
}

func (m *Make) stdoutf(format string, args ...any) { fmt.Fprintf(m.stdout, format, args...) }
func (m *Make) stderrf(format string, args ...any) { fmt.Fprintf(m.stderr, format, args...) }

// shellFunc is $(shell CMD): its standard output with the final
// newlines removed and the others turned into spaces.
func (m *Make) shellFunc(cmd string) string {
	// GNU make 4.3 gives $(shell) its own environment, not a recipe's.
	env := m.procEnv
	// Like a recipe line: run directly when the shell would only split
	// words (so a missing program reads as GNU's "make: x: No such file
	// or directory").
	argv := m.commandArgv(shellLine(cmd))
	out, code, err := m.run.capture(argv, env, m.curdir)
	if err != nil {
		m.stderrf("%s: %s: %s\n", m.prog, argv[0], errText(err))
		code = 127
	}
	m.setVar(".SHELLSTATUS", fmt.Sprint(code), OriginOverride)
	s := strings.TrimRight(string(out), "\n")
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// shellLine is a $(shell) command as GNU make 4.3 hands it to the shell:
// its newlines (and backslash-newlines) separate words outside quotes
// and disappear inside them, as GNU's escaping and re-splitting of the
// line leaves them.
func shellLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte(' ')
			i++
		case quote == 0 && c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
		case c == '\n':
			if quote == 0 {
				b.WriteByte(' ')
			}
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
			b.WriteByte(c)
		case c == quote:
			quote = 0
			b.WriteByte(c)
		case quote == '"' && c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// shellArgv is the argv that runs cmd with $(SHELL) $(.SHELLFLAGS).
func (m *Make) shellArgv(cmd string) []string {
	sh := trimSpace(m.varValue("SHELL", m.global))
	if sh == "" {
		sh = "/bin/sh"
	}
	flags := fields(m.varValue(".SHELLFLAGS", m.global))
	argv := append([]string{sh}, flags...)
	return append(argv, cmd)
}

// commandArgv is how a recipe command runs: directly when the default
// shell would only split it into words, as GNU make does.
func (m *Make) commandArgv(cmd string) []string {
	if sh := m.global.lookup("SHELL"); sh != nil && sh.Value == "/bin/sh" && !m.oneShell {
		if f := m.varValue(".SHELLFLAGS", m.global); f != "-c" && f != "-ec" {
			return m.shellArgv(cmd)
		}
		if argv, ok := directArgv(cmd); ok {
			return argv
		}
	}
	return m.shellArgv(cmd)
}
