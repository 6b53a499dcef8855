// Command make is secexec's make: GNU make 4.3's reading of makefiles,
// expansion, rebuild decisions, messages and exit statuses, written in
// Go and compiled to WASI (GOOS=wasip1) so it runs inside the sandbox
// like every other guest program. Recipe commands run in the VM's shell
// through the agentOS host_process functions.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxRestarts bounds the re-reads after included makefiles were made.
const maxRestarts = 10

// run is make: it returns the exit status.
func run(args, env []string, stdin io.Reader, stdout, stderr io.Writer, rn runner) (code int) {
	prog := "make"
	if len(args) > 0 && args[0] != "" {
		prog = filepath.Base(args[0])
	}
	level := 0
	var cleanEnv []string
	makeflags := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKELEVEL":
			level, _ = strconv.Atoi(v)
			continue
		case "MAKEFLAGS":
			makeflags = v
			continue
		case "MFLAGS":
			continue
		}
		cleanEnv = append(cleanEnv, kv)
	}
	name := prog
	if level > 0 {
		name = fmt.Sprintf("%s[%d]", prog, level)
	}
	o := &options{jobs: 1}
	err := parseMakeflags(makeflags, o)
	if err == nil {
		err = parseArgs(args[1:], o)
	}
	var unsup *unsupportedError
	if errors.As(err, &unsup) {
		fmt.Fprintf(stderr, "%s: *** %s.  Stop.\n", name, err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", name, err)
		fmt.Fprintf(stderr, "Usage: %s [options] [target] ...\n", prog)
		return 2
	}
	if o.version {
		fmt.Fprintf(stdout, "GNU Make 4.3\nBuilt for secexec (wasip1)\n")
		return 0
	}
	if o.help {
		fmt.Fprintf(stdout, "Usage: %s [options] [target] ...\n", prog)
		return 0
	}
	if len(args) > 0 {
		o.self = args[0]
		if strings.Contains(o.self, "/") && !filepath.IsAbs(o.self) {
			// $(MAKE) must still find this program after -C.
			if wd, err := os.Getwd(); err == nil {
				o.self = filepath.Join(wd, o.self)
			}
		}
	}
	for _, d := range o.dirs {
		if err := os.Chdir(d); err != nil {
			fmt.Fprintf(stderr, "%s: *** %s: %s.  Stop.\n", name, d, errText(err))
			return 2
		}
	}
	curdir, err := os.Getwd()
	if err != nil {
		curdir = "/"
	}
	printDir := !o.noPrintDir && (o.printDir || (!o.silent && (level > 0 || len(o.dirs) > 0)))
	// Turned on implicitly, -w shows in MAKEFLAGS too.
	o.printDir = printDir
	if printDir {
		fmt.Fprintf(stdout, "%s: Entering directory '%s'\n", name, curdir)
		defer fmt.Fprintf(stdout, "%s: Leaving directory '%s'\n", name, curdir)
	}
	var m *Make
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			if m != nil {
				m.waitAll()
			}
			code = f.code
		}
	}()
	for restarts := 0; ; restarts++ {
		m = newMake(o, prog, name, level, curdir, cleanEnv, stdout, stderr, rn)
		m.procEnv = env
		m.setVar("MAKE_RESTARTS", "", OriginOverride)
		if restarts > 0 {
			m.setVar("MAKE_RESTARTS", strconv.Itoa(restarts), OriginOverride)
		}
		if !m.readAll(stdin) {
			return 2
		}
		again, ok := m.remakeMakefiles(restarts < maxRestarts)
		if !ok {
			return 2
		}
		if !again {
			break
		}
	}
	return m.build()
}

// newMake sets up the variable database of one reading of the makefiles.
func newMake(o *options, prog, name string, level int, curdir string, env []string, stdout, stderr io.Writer, rn runner) *Make {
	m := &Make{opts: o, stdout: stdout, stderr: stderr, prog: name, level: level,
		global: newScope(nil), files: map[string]*File{}, curdir: curdir, env: env, run: rn,
		ignoreTargets: map[string]bool{}, silentTargets: map[string]bool{}}
	m.suffixes = append([]string(nil), defaultSuffixes...)
	if o.noBuiltin {
		m.suffixes = nil
	}
	if !o.noBuiltinVars {
		for _, kv := range builtinVars {
			k, v, _ := strings.Cut(kv, "=")
			m.global.vars[k] = &Var{Name: k, Value: v, Recursive: true, Origin: OriginDefault}
		}
	}
	envOrigin := OriginEnvironment
	if o.envOverrides {
		envOrigin = OriginEnvOverride
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "SHELL" || k == "" {
			continue
		}
		m.global.vars[k] = &Var{Name: k, Value: v, Recursive: true, Origin: envOrigin, fromEnv: true}
	}
	makeName := o.self
	if makeName == "" {
		makeName = "make"
	}
	m.setVar("MAKE", makeName, OriginDefault)
	m.global.vars["MAKE"].Recursive = true
	m.global.vars["MAKE"].Value = "$(MAKE_COMMAND)"
	m.setVar("MAKE_COMMAND", makeName, OriginDefault)
	m.setVar("MAKE_VERSION", "4.3", OriginDefault)
	m.setVar("MAKE_HOST", "wasm32-unknown-wasi", OriginDefault)
	m.setVar("MAKELEVEL", strconv.Itoa(level), OriginEnvironment)
	m.setVar("CURDIR", curdir, OriginFile)
	m.setVar("SHELL", "/bin/sh", OriginDefault)
	m.setVar(".SHELLFLAGS", "-c", OriginDefault)
	m.setVar("MAKEFILE_LIST", "", OriginFile)
	m.setVar(".DEFAULT_GOAL", "", OriginFile)
	m.setVar(".RECIPEPREFIX", "", OriginDefault)
	m.setVar(".FEATURES", "target-specific order-only second-expansion else-if shortest-stem undefine oneshell nocomment grouped-target extra-prereqs", OriginDefault)
	m.setVar("MAKECMDGOALS", strings.Join(o.goals, " "), OriginDefault)
	m.setVar("MAKEFLAGS", o.makeflags(false), OriginFile)
	m.setVar("MFLAGS", mflags(o.makeflags(false)), OriginFile)
	m.setVar("SUFFIXES", strings.Join(m.suffixes, " "), OriginDefault)
	for _, a := range o.vars {
		asg, ok := parseAssignment(a)
		if !ok {
			continue
		}
		m.assign(asg, OriginCommandLine, m.global)
		if v := m.global.vars[trimSpace(asg.name)]; v != nil {
			v.Export = 1
		}
	}
	return m
}

// mflags is MFLAGS: MAKEFLAGS with a dash on its first word.
func mflags(s string) string {
	if s == "" || strings.HasPrefix(s, "-") {
		return s
	}
	return "-" + s
}

// builtinVars are the GNU make default variables a makefile commonly
// relies on.
var builtinVars = []string{
	"AR=ar", "ARFLAGS=rv", "AS=as", "CC=cc", "CXX=g++", "CPP=$(CC) -E", "FC=f77", "LD=ld",
	"LEX=lex", "YACC=yacc", "RM=rm -f", "MAKEINFO=makeinfo", "TEX=tex", "OUTPUT_OPTION=-o $@",
	"COMPILE.c=$(CC) $(CFLAGS) $(CPPFLAGS) $(TARGET_ARCH) -c", "LINK.o=$(CC) $(LDFLAGS) $(TARGET_ARCH)",
	"LINK.c=$(CC) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) $(TARGET_ARCH)",
}

// readAll reads the makefiles: -f ones, or the first of GNUmakefile,
// makefile and Makefile.
func (m *Make) readAll(stdin io.Reader) bool {
	for _, e := range m.opts.evals {
		m.eval("--eval", e, m.global)
		m.loc = Loc{}
	}
	names := m.opts.makefiles
	if len(names) == 0 {
		for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} {
			if _, err := os.Stat(n); err == nil {
				names = []string{n}
				break
			}
		}
	}
	for _, n := range names {
		var err error
		if n == "-" {
			b, rerr := io.ReadAll(stdin)
			if rerr != nil {
				err = rerr
			} else {
				m.makefiles = append(m.makefiles, n)
				m.appendVar("MAKEFILE_LIST", n)
				m.eval(n, string(b), m.global)
			}
		} else {
			err = m.readMakefile(n, false, Loc{})
		}
		m.loc = Loc{}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				m.missing = append(m.missing, missingInclude{name: n, mustExist: true, err: err})
				continue
			}
			m.stderrf("%s: %s: %s\n", m.prog, n, errText(err))
			return false
		}
	}
	m.setVar("SUFFIXES", strings.Join(m.suffixes, " "), OriginDefault)
	m.suffixRules()
	// A makefile may add switches to MAKEFLAGS (MAKEFLAGS += -s).
	if v := m.global.lookup("MAKEFLAGS"); v != nil {
		if val := m.valueOf(v, m.global); val != m.opts.makeflags(false) {
			goals := m.opts.goals
			if err := parseMakeflags(val, m.opts); err != nil {
				m.stderrf("%s: %s\n", m.prog, err)
			}
			m.opts.goals = goals
		}
	}
	m.setVar("MAKEFLAGS", m.opts.makeflags(true), OriginFile)
	return true
}

// remakeMakefiles brings the makefiles that were read, and the missing
// included ones, up to date when the makefiles have rules for them, as
// GNU make does before it looks at the goals. It reports whether one was
// remade (make must read everything again), and false when a required
// makefile cannot be had.
func (m *Make) remakeMakefiles(mayRestart bool) (again, ok bool) {
	m.loc = Loc{}
	// Recipes that make makefiles run even under -n and -q.
	dry, q := m.opts.dryRun, m.opts.question
	m.opts.dryRun, m.opts.question = false, false
	defer func() { m.opts.dryRun, m.opts.question = dry, q }()
	missing := map[string]missingInclude{}
	var names []string
	for _, n := range m.makefiles {
		if n != "-" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, mi := range m.missing {
		missing[mi.name] = mi
		if !slices.Contains(names, mi.name) {
			names = append(names, mi.name)
		}
	}
	made := false
	for _, n := range names {
		f := m.file(n)
		mi, isMissing := missing[n]
		canMake := f.hasRule() && (f.HasRecipe || len(f.Double) > 0 || len(f.Deps) > 0)
		if !canMake && !f.hasRule() {
			canMake = m.implicitForMakefile(f)
		}
		if len(f.Double) > 0 && len(f.Deps) == 0 && !isMissing {
			// A double-colon rule without prerequisites would remake
			// the makefile forever.
			canMake = false
		}
		if !canMake {
			if isMissing && mi.mustExist {
				m.missingMakefile(mi)
				m.errorf("No rule to make target '%s'.  Stop.", mi.name)
				return false, false
			}
			continue
		}
		// A failure is reported only for a makefile that must exist,
		// after the missing-file line.
		saved := m.stderr
		var buf bytes.Buffer
		m.stderr = &buf
		before := m.commands
		for m.update(f, m.global, "") == stPending {
			m.reap()
		}
		m.waitAll()
		m.stderr = saved
		if f.failed {
			if isMissing && !mi.mustExist {
				m.stop, m.anyFailed = false, false
				continue
			}
			if isMissing {
				m.missingMakefile(mi)
			}
			_, _ = saved.Write(buf.Bytes())
			return false, false
		}
		_, _ = saved.Write(buf.Bytes())
		if _, err := os.Stat(n); err != nil {
			if isMissing && mi.mustExist {
				m.missingMakefile(mi)
				return false, false
			}
			continue
		}
		if m.commands != before || isMissing {
			made = true
		}
	}
	return made && mayRestart, true
}

// missingMakefile prints GNU's line for a makefile that is not there.
func (m *Make) missingMakefile(mi missingInclude) {
	if mi.loc.File != "" {
		m.stderrf("%s:%d: %s: %s\n", mi.loc.File, mi.loc.Line, mi.name, errText(mi.err))
	} else {
		m.stderrf("%s: %s: %s\n", m.prog, mi.name, errText(mi.err))
	}
}

// implicitForMakefile looks for a pattern rule that makes a makefile;
// GNU leaves match-anything rules out here.
func (m *Make) implicitForMakefile(f *File) bool {
	saved := m.patterns
	var keep []*patternRule
	for _, r := range m.patterns {
		anything := false
		for _, t := range r.targets {
			if t == "%" {
				anything = true
			}
		}
		if !anything {
			keep = append(keep, r)
		}
	}
	m.patterns = keep
	defer func() { m.patterns = saved }()
	f.implicitOK = true
	return m.implicit(f, 0)
}

// build updates the goals and returns make's exit status.
func (m *Make) build() int {
	goals := m.opts.goals
	if len(goals) == 0 {
		if g := m.defaultGoal(); g != "" {
			goals = fields(g)
		}
	}
	if len(goals) == 0 {
		if len(m.makefiles) == 0 {
			m.errorf("No targets specified and no makefile found.  Stop.")
		} else {
			m.errorf("No targets.  Stop.")
		}
		return 2
	}
	gfs := make([]*File, len(goals))
	for i, g := range goals {
		gfs[i] = m.file(g)
		gfs[i].goal = true
	}
	start := make([]int, len(goals))
	reported := make([]bool, len(goals))
	for i := range gfs {
		start[i] = -1
	}
	for {
		pending := false
		for i, f := range gfs {
			if reported[i] {
				continue
			}
			if start[i] < 0 {
				start[i] = m.commands
			}
			st := m.update(f, m.global, "")
			if m.stop && !m.opts.keepGoing {
				break
			}
			if st == stPending {
				pending = true
				if m.slots() == 1 {
					break
				}
				continue
			}
			reported[i] = true
			m.goalMessage(f, st, m.commands != start[i])
		}
		if m.stop && !m.opts.keepGoing {
			break
		}
		if !pending {
			break
		}
		m.reap()
	}
	m.waitAll()
	m.deleteIntermediates()
	switch {
	case m.anyFailed || m.stop:
		return 2
	case m.questionOut:
		return 1
	}
	return 0
}

// goalMessage prints what happened to a goal that needed nothing, or
// failed under -k.
func (m *Make) goalMessage(f *File, st status, changed bool) {
	if st == stFailed {
		if m.opts.keepGoing && f.depFailed {
			n := 1
			if len(f.Double) > 0 && f.dcFailed > 1 {
				n = f.dcFailed
			}
			for ; n > 0; n-- {
				m.stderrf("%s: Target '%s' not remade because of errors.\n", m.prog, f.Name)
			}
		}
		return
	}
	if changed || m.opts.question || m.opts.silent {
		return
	}
	if f.Phony || !f.HasRecipe && len(f.Double) == 0 {
		m.message("Nothing to be done for '%s'.", f.Name)
	} else {
		m.message("'%s' is up to date.", f.Name)
	}
}

// waitAll waits for every running job, after a failure.
func (m *Make) waitAll() {
	if len(m.jobs) > 0 && m.stop {
		m.stderrf("%s: *** Waiting for unfinished jobs....\n", m.prog)
	}
	for len(m.jobs) > 0 {
		m.reap()
	}
}
