package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// Make is one run of make: the variable and rule database, the options
// and the update state.
type Make struct {
	opts   *options
	stdout io.Writer
	stderr io.Writer
	// prog is the program name of messages: "make", or "make[N]" in a
	// sub-make.
	prog  string
	level int

	global        *Scope
	files         map[string]*File
	fileOrder     []string
	patterns      []*patternRule
	patternVars   []patternVar
	suffixes      []string
	makefiles     []string
	missing       []missingInclude
	loc           Loc
	curdir        string
	env           []string
	callDepthArgs int
	// varLoc is where the variable being expanded was defined.
	varLoc Loc
	depth  int

	exportAll     bool
	deleteOnError bool
	ignoreAll     bool
	silentAll     bool
	ignoreTargets map[string]bool
	silentTargets map[string]bool
	notParallel   bool
	oneShell      bool
	allSecondary  bool
	posix         bool
	preciousPats  []string
	secondExp     bool
	vpaths        []vpathEntry

	// Update state.
	jobs        []*job
	commands    int // recipes started, for "is up to date" messages
	stop        bool
	anyFailed   bool
	questionOut bool
	// procEnv is make's own environment, which $(shell) gets.
	procEnv []string
	run     runner
}

// runner starts commands: host_process in the VM, os/exec natively.
type runner interface {
	// start runs one recipe command (through the shell unless it is a
	// plain argv) and returns its process ID.
	start(argv []string, env []string, dir string) (int, error)
	// wait waits for any started command.
	wait() (pid, code, sig int, err error)
	// capture runs argv and returns its standard output.
	capture(argv []string, env []string, dir string) ([]byte, int, error)
}

type missingInclude struct {
	name      string
	loc       Loc
	mustExist bool
	err       error
}

// fatal is the panic value that ends make after its message was printed.
type fatal struct{ code int }

// fatalf prints a fatal error ("FILE:LINE: *** MSG.  Stop.") and ends
// make with status 2.
func (m *Make) fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if m.loc.File != "" {
		fmt.Fprintf(m.stderr, "%s:%d: *** %s.  Stop.\n", m.loc.File, m.loc.Line, msg)
	} else {
		fmt.Fprintf(m.stderr, "%s: *** %s.  Stop.\n", m.prog, msg)
	}
	panic(fatal{2})
}

// warnf prints "FILE:LINE: MSG" (or "make: MSG" without a place).
func (m *Make) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if m.loc.File != "" {
		fmt.Fprintf(m.stderr, "%s:%d: %s\n", m.loc.File, m.loc.Line, msg)
	} else {
		fmt.Fprintf(m.stderr, "%s: %s\n", m.prog, msg)
	}
}

// errorf prints "make: *** MSG" without stopping.
func (m *Make) errorf(format string, args ...any) {
	fmt.Fprintf(m.stderr, "%s: *** %s\n", m.prog, fmt.Sprintf(format, args...))
}

// message prints "make: MSG" on standard output.
func (m *Make) message(format string, args ...any) {
	fmt.Fprintf(m.stdout, "%s: %s\n", m.prog, fmt.Sprintf(format, args...))
}

func errText(err error) string { return sysmsg.Text(err) }

// setVar sets a simple variable in the global scope.
func (m *Make) setVar(name, value string, origin Origin) *Var {
	v := &Var{Name: name, Value: value, Origin: origin}
	if old := m.global.vars[name]; old != nil {
		v.Export = old.Export
	}
	m.global.vars[name] = v
	return v
}

func (m *Make) appendVar(name, word string) {
	v := m.global.vars[name]
	if v == nil {
		m.setVar(name, word, OriginFile)
		return
	}
	v.Value = joinNonEmpty(v.Value, word)
}

func (m *Make) defaultGoal() string {
	v := m.global.lookup(".DEFAULT_GOAL")
	if v == nil {
		return ""
	}
	return trimSpace(m.valueOf(v, m.global))
}

func (m *Make) setDefaultGoal(t string) { m.setVar(".DEFAULT_GOAL", t, OriginFile) }

// assign performs a variable assignment in scope sc.
func (m *Make) assign(a assignment, origin Origin, sc *Scope) {
	name := trimSpace(m.expand(a.name, sc))
	if name == "" {
		m.fatalf("empty variable name")
	}
	if a.override {
		origin = OriginOverride
	}
	// An immediate value is computed even when the assignment then
	// loses to a command-line or override value (GNU expands first).
	var now string
	switch a.op {
	case ":=", "::=":
		now = m.expand(a.value, sc)
	case "!=":
		now = m.shellFunc(m.expand(a.value, sc))
	}
	old := sc.vars[name]
	if old != nil && old.Origin > origin && old.Origin != OriginAutomatic {
		if a.export != 0 {
			old.Export = a.export
		}
		return
	}
	if old != nil && origin == OriginFile && old.Origin == OriginEnvironment && m.opts.envOverrides {
		return
	}
	v := &Var{Name: name, Origin: origin, Export: a.export, loc: m.loc}
	if old != nil {
		v.fromEnv = old.fromEnv
		if a.export == 0 {
			v.Export = old.Export
		}
	}
	switch a.op {
	case "=":
		v.Recursive, v.Value = true, a.value
	case ":=", "::=":
		v.Value = now
	case "?=":
		if old != nil {
			if a.export != 0 {
				old.Export = a.export
			}
			return
		}
		v.Recursive, v.Value = true, a.value
	case "!=":
		v.Recursive, v.Value = true, now
	case "+=":
		if old == nil {
			v.Recursive, v.Value = true, a.value
			break
		}
		added := a.value
		if !old.Recursive {
			added = m.expand(a.value, sc)
		}
		if added == "" {
			// Nothing added: GNU leaves the variable as it was, origin
			// included.
			if a.export != 0 {
				old.Export = a.export
			}
			return
		}
		v.Recursive = old.Recursive
		v.Value = joinNonEmpty(old.Value, added)
		if origin < old.Origin {
			v.Origin = old.Origin
		}
	}
	sc.vars[name] = v
}

func (m *Make) undefine(a assignment) {
	name := trimSpace(m.expand(a.name, m.global))
	origin := OriginFile
	if a.override {
		origin = OriginOverride
	}
	if old := m.global.vars[name]; old != nil && old.Origin > origin {
		return
	}
	delete(m.global.vars, name)
}

// exported reports whether variable v goes into recipes' environments.
func (m *Make) exported(v *Var) bool {
	switch {
	case v.Export > 0:
		return true
	case v.Export < 0:
		return false
	case v.Origin == OriginEnvironment || v.Origin == OriginEnvOverride || v.Origin == OriginCommandLine || v.fromEnv:
		return true
	case m.exportAll:
		return validEnvName(v.Name) && v.Origin != OriginDefault && v.Origin != OriginAutomatic
	}
	return false
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// environ is the environment of a recipe run in scope sc.
func (m *Make) environ(sc *Scope) []string {
	// The environment is made of the exported variables (every
	// environment variable became one); SHELL keeps the value make was
	// given, as GNU make does.
	out := map[string]string{}
	for _, kv := range m.env {
		if k, v, _ := strings.Cut(kv, "="); k == "SHELL" {
			out[k] = v
		}
	}
	for _, name := range sc.names() {
		v := sc.lookup(name)
		if v == nil || v.Origin == OriginAutomatic || name == "MAKEFLAGS" || name == "MAKELEVEL" {
			continue
		}
		if m.exported(v) {
			out[name] = m.valueOf(v, sc)
		}
	}
	out["MAKEFLAGS"] = m.makeflagsForChild(sc)
	out["MAKELEVEL"] = fmt.Sprint(m.level + 1)
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, len(keys))
	for i, k := range keys {
		env[i] = k + "=" + out[k]
	}
	return env
}

// fileFunc is $(file OP NAME[,TEXT]).
func (m *Make) fileFunc(args []string, sc *Scope) string {
	spec := trimSpace(m.expand(args[0], sc))
	switch {
	case strings.HasPrefix(spec, ">"):
		flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		spec = spec[1:]
		if strings.HasPrefix(spec, ">") {
			flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			spec = spec[1:]
		}
		name := trimSpace(spec)
		if name == "" {
			m.fatalf("file: missing filename")
		}
		f, err := os.OpenFile(name, flag, 0o666)
		if err != nil {
			m.fatalf("open: %s: %s", name, errText(err))
		}
		defer f.Close()
		if len(args) > 1 {
			text := m.expand(args[1], sc)
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			if _, err := io.WriteString(f, text); err != nil {
				m.fatalf("write: %s: %s", name, errText(err))
			}
		}
		return ""
	case strings.HasPrefix(spec, "<"):
		name := trimSpace(spec[1:])
		if len(args) > 1 {
			m.fatalf("file: too many arguments")
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(b), "\n")
	}
	m.fatalf("file: invalid file operation: %s", spec)
	return ""
}
