// Package shell is secexec's bash: a POSIX shell with bash's extensions,
// written on mvdan.cc/sh's parser and word expander, that runs other
// programs through the guest's process calls (package hostproc on wasip1,
// os.StartProcess elsewhere). It aims at what agents and CI scripts rely
// on — errexit, pipefail, nounset, traps, here-documents, process
// substitution, arrays — with bash's exit statuses and bash's diagnostics
// ("bash: line 3: x: unbound variable"), checked against bash 5.2 by a
// differential corpus.
//
// mvdan.cc/sh's own interpreter is not used: it is deliberately not a bash
// clone (its diagnostics, $!, fd 3+ redirections and job control differ)
// and assumes OS threads, while a WASI module has one.
package shell

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// options are the set -o flags.
type options struct {
	errexit, nounset, pipefail, xtrace, noglob, noclobber, allexport, verbose, noexec bool
	errtrace, functrace                                                               bool
	posix                                                                             bool
}

// frame holds a function call's (or the script's) positional parameters.
type frame struct {
	arg0   string
	params []string
}

// shared is the state every subshell of one process shares.
type shared struct {
	sys     System
	running atomic.Int32 // goroutines running shell code besides the first
	mu      sync.Mutex
	jobs    []*job
	fakePID int
	// assocSeq orders associative array keys as bash's hash table
	// lists them: by bucket, the most recently inserted first within
	// one. It numbers each name\x00key insertion.
	assocSeq map[string]uint64
	seqN     uint64
	// secondsBase is when $SECONDS was 0.
	secondsBase time.Time
}

// Shell is one shell execution environment. Subshells are copies that run
// on their own goroutines.
type Shell struct {
	// Name prefixes diagnostics: "bash" for -c, the script path otherwise.
	Name string
	// CommandMode is set for -c: bash words a few endings differently.
	CommandMode bool

	sh       *shared
	env      *env
	funcs    map[string]*syntax.Stmt
	aliases  map[string]string
	opts     options
	shopt    map[string]bool
	dir      string
	fds      *fdTable
	traps    map[string]string
	frame    *frame
	readonly map[string]bool

	lastStatus    int
	pid, ppid     int
	bashpid       int
	lastBg        int
	funcStack     []string
	callLines     []uint // the line each function in funcStack was called from
	testNeg       string // "! " prefixes while tracing a negated [[ ]] test
	pipeStatus    []int
	line          uint
	lineBase      uint // added to parse positions (source, eval)
	subshellLevel int
	isSubshell    bool
	rnd           *rand.Rand

	// control flow
	exiting   bool
	exitCode  int
	breakN    int
	contN     int
	returning bool
	loopDepth int
	noErrExit int // > 0 inside conditions, && || lists and negations
	inTrap    bool
	umask     int
	// coreLimit is what ulimit -c was last set to ("" before): see ulimitB.
	coreLimit string

	sourceDepth int
	src         string            // the source text being run (for arithmetic errors)
	funcSrc     map[string]string // each function's defining source
	aborting    bool              // an expansion error unwinds to the top level
	arithAbort  bool              // ... an arithmetic one, which errexit ignores
	inEval      bool              // parsing an eval string (diagnostics say "eval")
	assocTmp    int
	assocTemps  []string
	dirStack    []string // pushd/popd
	bashSource  []string
	curCmd      *syntax.Stmt    // the simple command running, for $BASH_COMMAND
	job         *job            // the asynchronous job this shell runs, if any
	lastArg     string          // $_
	caseAttr    map[string]byte // declare -u (u), -l (l)
	optPos      int             // getopts: position in a grouped option argument
	getoptsInd  int             // getopts: the OPTIND optPos belongs to
	substStatus *int            // status of the last $(...) of the current command
	procSubsts  []int           // descriptors of live process substitutions
	intAttr     map[string]bool // declare -i
	// pendingKeys are the keys of an array literal being assigned, in
	// the order they are written (they are inserted in that order).
	pendingKeys []string
	// quietSignals: a program killed by SIGTERM here is not reported
	// ("Terminated"): bash reports it for foreground commands only, not
	// in command substitutions, background jobs or early pipeline stages.
	quietSignals bool
	// dropStdin: this shell is a pipeline stage that runs one program
	// and nothing after it, so it lets go of its standard input once the
	// program has its own (see external).
	dropStdin bool
	// exportFuncs are the functions export -f marks: children get them
	// in their environment as BASH_FUNC_name%%=() {...}, as bash passes
	// them.
	exportFuncs map[string]bool
	// parentTraps are the traps a subshell lists until it sets its own
	// (ownTraps).
	parentTraps map[string]string
	ownTraps    bool
	disabled    map[string]bool // builtins enable -n turned off

	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a shell whose standard streams are the process's, whose
// variables come from environ ("NAME=value" entries) and which runs
// programs through sys.
func New(name string, sys System, environ []string, dir string) *Shell {
	s := &Shell{
		Name:        name,
		sh:          &shared{sys: sys, fakePID: 1 << 22, secondsBase: time.Now()},
		funcs:       map[string]*syntax.Stmt{},
		aliases:     map[string]string{},
		shopt:       map[string]bool{},
		dir:         dir,
		traps:       map[string]string{},
		frame:       &frame{arg0: name},
		readonly:    map[string]bool{},
		intAttr:     map[string]bool{},
		funcSrc:     map[string]string{},
		caseAttr:    map[string]byte{},
		exportFuncs: map[string]bool{},
		umask:       0o022,
		rnd:         rand.New(rand.NewPCG(freshSeed())),
	}
	s.env = &env{sh: s, top: newScope(nil)}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if name, isFunc := strings.CutPrefix(k, "BASH_FUNC_"); isFunc && strings.HasSuffix(name, "%%") {
			s.importFunc(strings.TrimSuffix(name, "%%"), v)
			continue
		}
		if !ok || !validName(k) {
			continue
		}
		s.env.top.vars[k] = expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
	}
	s.pid = sys.Getpid()
	s.bashpid = s.pid
	s.ppid = sys.Getppid()
	if s.env.str("IFS") == "" && !s.env.Get("IFS").IsSet() {
		s.env.top.vars["IFS"] = str(" \t\n")
	}
	// The version scripts test ([[ ${BASH_VERSINFO[0]} -ge 4 ]]): the
	// bash 5.2 this shell follows.
	s.env.top.vars["BASH_VERSION"] = str("5.2.15(1)-release")
	s.env.top.vars["BASH_VERSINFO"] = expand.Variable{Set: true, ReadOnly: true, Kind: expand.Indexed,
		List: []string{"5", "2", "15", "1", "release", "wasm32-secexec-wasi"}}
	if !s.env.Get("OSTYPE").IsSet() {
		s.env.top.vars["OSTYPE"] = str("linux-gnu")
	}
	if dir != "" {
		_ = s.env.Set("PWD", expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: dir})
	}
	s.fds = newFDTable(sys)
	s.umask = getUmask()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// SetScript records the script file being run (for $BASH_SOURCE).
func (s *Shell) SetScript(path string) { s.bashSource = []string{path} }

// SetArgs sets $0 and the positional parameters.
func (s *Shell) SetArgs(arg0 string, params []string) {
	s.frame = &frame{arg0: arg0, params: params}
}

// SetOption sets a set -o option by its long name, or reports false.
func (s *Shell) SetOption(name string, on bool) bool {
	p := s.optPtr(name)
	if p == nil {
		return false
	}
	*p = on
	return true
}

// SetFlag sets a single-letter set option (e, u, x ...), or reports false.
func (s *Shell) SetFlag(c byte, on bool) bool {
	for _, o := range optTable {
		if o.flag == c {
			*s.optPtr(o.name) = on
			return true
		}
	}
	return false
}

var optTable = []struct {
	name string
	flag byte
}{
	{"allexport", 'a'}, {"errexit", 'e'}, {"errtrace", 'E'}, {"functrace", 'T'}, {"noclobber", 'C'}, {"noexec", 'n'}, {"noglob", 'f'},
	{"nounset", 'u'}, {"pipefail", 0}, {"posix", 0}, {"verbose", 'v'}, {"xtrace", 'x'},
}

func (s *Shell) optPtr(name string) *bool {
	switch name {
	case "allexport":
		return &s.opts.allexport
	case "errexit":
		return &s.opts.errexit
	case "errtrace":
		return &s.opts.errtrace
	case "functrace":
		return &s.opts.functrace
	case "noclobber":
		return &s.opts.noclobber
	case "noexec":
		return &s.opts.noexec
	case "noglob":
		return &s.opts.noglob
	case "nounset":
		return &s.opts.nounset
	case "pipefail":
		return &s.opts.pipefail
	case "posix":
		return &s.opts.posix
	case "verbose":
		return &s.opts.verbose
	case "xtrace":
		return &s.opts.xtrace
	}
	return nil
}

func (s *Shell) optFlags() string {
	var b strings.Builder
	for _, o := range optTable {
		if o.flag != 0 && *s.optPtr(o.name) {
			b.WriteByte(o.flag)
		}
	}
	b.WriteString("hB")
	if s.frame != nil && s.Name != "" {
		b.WriteByte('c')
	}
	return b.String()
}

func (s *Shell) shellopts() string {
	names := []string{"braceexpand"}
	for _, o := range optTable {
		if *s.optPtr(o.name) {
			names = append(names, o.name)
		}
	}
	names = append(names, "hashall", "interactive-comments")
	// bash lists them sorted.
	sortStrings(names)
	return strings.Join(names, ":")
}

func (s *Shell) random() int { return s.rnd.IntN(32768) }

// Status is the shell's exit status after Run.
func (s *Shell) Status() int { return s.exitCode }

// RunSource parses and runs src as the script, then runs the EXIT trap,
// and returns the exit status. As bash reads a script a line at a time,
// the lines before a syntax error run; the error then prints bash's
// message and ends the script with status 2.
func (s *Shell) RunSource(src string) int {
	p := parseBash(src)
	s.src = p.src
	s.runParsed(p, s.topLevel)
	switch {
	case p.err != nil && !s.exiting:
		s.reportSyntax(p.err)
		s.exit(2)
	case !s.exiting:
		s.exitCode = s.lastStatus
	}
	s.runExitTrap()
	s.fds.closeAll()
	return s.exitCode
}

// topLevel runs a script's statements. An expansion error (an arithmetic
// error in $((...)), say) abandons the rest of its input line in a script
// and the whole command string with -c, as bash does.
func (s *Shell) topLevel(list []*syntax.Stmt) {
	skipLine := uint(0)
	for _, st := range list {
		if s.exiting || s.ctx.Err() != nil {
			return
		}
		if skipLine != 0 && st.Pos().Line() == skipLine {
			continue
		}
		skipLine = 0
		s.stmt(st)
		if s.aborting {
			s.aborting, s.arithAbort = false, false
			s.breakN, s.contN, s.returning = 0, 0, false
			if s.CommandMode {
				s.exit(1)
				return
			}
			s.lastStatus = 1
			skipLine = st.End().Line()
		}
	}
}

func (s *Shell) runExitTrap() {
	cmd, ok := s.traps["EXIT"]
	if !ok || s.isSubshell && !s.ownsTraps() {
		return
	}
	delete(s.traps, "EXIT")
	code := s.exitCode
	s.lastStatus = code
	s.exiting = false
	s.inTrap = true
	s.evalString(cmd, "trap")
	s.inTrap = false
	if !s.exiting {
		s.exitCode = code
	}
	s.exiting = true
}

// ownsTraps: a subshell resets traps, but one it sets itself are its own.
func (s *Shell) ownsTraps() bool { return true }

// errf prints a bash diagnostic: "NAME: line N: msg".
func (s *Shell) errf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintf(s.stderr(), "%s: line %d: %s\n", s.Name, s.line, msg)
}

func (s *Shell) stderr() io.Writer { return s.fds.writer(2) }

func sortStrings(l []string) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j] < l[j-1]; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// Stdio wires the process's standard streams as fds 0-2.
func (s *Shell) Stdio(in, out, errw *os.File) { s.fds.setStd(in, out, errw) }

// freshSeed seeds $RANDOM from the host's random_get when the shell
// starts. The Go runtime's own generator (math/rand's top-level
// functions) is seeded once, during the module's initialisation, and the
// engine starts later instances of the shell from a snapshot of an
// initialised one: every such shell would draw the same $RANDOM.
func freshSeed() (uint64, uint64) {
	var b [16]byte
	if _, err := crand.Read(b[:]); err != nil {
		return rand.Uint64(), rand.Uint64()
	}
	return binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
}

// importFunc defines a function a parent shell exported (export -f):
// bash passes it as BASH_FUNC_name%%=() { body }.
func (s *Shell) importFunc(name, def string) {
	if !validName(name) && !strings.ContainsAny(name, "-.:") || !strings.HasPrefix(def, "() ") {
		return
	}
	p := parseBash(name + " " + def)
	if p.err != nil || len(p.stmts) != 1 {
		return
	}
	fd, ok := p.stmts[0].Cmd.(*syntax.FuncDecl)
	if !ok || fd.Name.Value != name {
		return
	}
	s.funcs[name] = fd.Body
	s.funcSrc[name] = p.src
	s.exportFuncs[name] = true
}

// funcEnv is an exported function as the environment carries it.
func (s *Shell) funcEnv(name string) (string, bool) {
	body := s.funcs[name]
	if body == nil {
		return "", false
	}
	var b strings.Builder
	_ = syntax.NewPrinter(syntax.Indent(4)).Print(&b, body)
	return "BASH_FUNC_" + name + "%%=() " + strings.TrimRight(b.String(), "\n"), true
}
